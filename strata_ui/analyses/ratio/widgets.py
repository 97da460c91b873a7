"""Widgets of the calibration-ratio analysis (Miao & Li 2022) for the Estimator, Compare and
Release pages (see :mod:`strata_ui.analyses`).

- :func:`render_estimator`: the columns, public bounds, noise and interval settings, then a
  preview of every group's ratio with its interval and a comparison of two groups;
- :func:`render_compare`: coverage, width and interval score over simulated releases, and the
  paper's Table 1 preset;
- :func:`current_plan`: the :class:`~dpcore.analyses.ratio.RatioPlan` the Release page commits.

Choices live in :class:`RatioSettings` (via :func:`strata_ui.state.get_settings`); the budget
(ε or ρ) comes from the Budget page and the interval level is shared with the Release page
(``AppState.release_level``). Numerics live in :mod:`dpcore.analyses.ratio`, figures in
:mod:`strata_ui.analyses.ratio.charts`; everything slow is cached with ``st.cache_data`` on primitives and
a seed.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from dpcore.accounting import ZCDP, Budget, PureDP
from dpcore.analyses.ratio.budget import release_arguments, release_cost
from dpcore.analyses.ratio.groups import GroupRatioSums, bootstrap_group_sums, group_ratio_sums
from dpcore.analyses.ratio.plan import RatioPlan
from dpcore.analyses.ratio.preview import (
    ALL_GROUPS,
    RatioResult,
    estimate_ratios,
    simulate_ratio_intervals,
)
from dpcore.analyses.ratio.study import load_table1, ratio_study, table1_comparison
from dpcore.analyses.ratio.sums import RatioBounds
from strata_ui import constants, pipeline
from strata_ui.analyses.ratio import charts
from strata_ui.data import kind_of
from strata_ui.state import AppState, get_dataset, get_settings, get_state

PREVIEW_BANNER = "Preview — uses the confidential data; not a release."
LEVELS = (0.8, 0.9, 0.95, 0.99)
DELTAS = (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9)
NO_WEIGHTS = "(no weights)"
EPSILON_SWEEP = (0.1, 0.2, 0.5, 1.0, 2.0, 4.0)
RHO_SWEEP = (0.001, 0.005, 0.02, 0.1, 0.5, 2.0)
REPLICATES_MIN, REPLICATES_MAX, REPLICATES_STEP = 100, 2000, 100
B_MIN, B_MAX = 50, 1000
TABLE1_REPS, TABLE1_B = 1000, 200
TABLE_ROW_PX = 35  # height of one st.dataframe row
SWEEP_MC_DRAWS_MAX = 10_000_000  # Monte Carlo draws per sweep point before its line is left out

MECHANISM_LABELS = {
    "gaussian": "Gaussian, classic (paper eq. 5)",
    "gaussian_analytic": "Gaussian, analytic (Balle & Wang)",
    "laplace": "Laplace (pure ε-DP)",
}
MECHANISM_HELP = {
    "gaussian": "Normal noise sized by the paper's formula; gives (ε, δ)-DP.",
    "gaussian_analytic": "Normal noise sized by an exact formula, a little less noise for the "
    "same (ε, δ).",
    "laplace": "Laplace noise; gives pure ε-DP with no δ, but heavier tails.",
}
COMPOSITION_LABELS = {
    "basic": "Basic: ε/m and δ/m per sum (the paper's)",
    "zcdp": "zCDP: one ρ split over the sums (documented improvement)",
}
METHOD_LABELS = {
    "none": "No correction",
    "monte_carlo": "Monte Carlo correction",
    "analytical": "Analytical correction",
}
METHOD_HELP = {
    "none": "Ignores the DP noise, so intervals are too narrow when the noise matters (§2.4.1).",
    "monte_carlo": "Adds the noise's effect by re-noising the released sums B times (§2.4.2).",
    "analytical": "Adds the noise's known variance to the formula; no simulation (§2.4.3).",
}
SCALE_LABELS = {"ratio": "Ratio scale", "log": "Log scale"}
SCALE_HELP = {
    "ratio": "Symmetric interval around the ratio, cut at 0 (eq. 1).",
    "log": "Interval built for log r and mapped back: never below 0, skewed for small groups (§2.3).",
}


@dataclass
class RatioSettings:
    """The ratio analysis' choices in this session (defaults fit the demo data)."""

    s_column: str | None = "score"
    y_column: str | None = "income_over_50k"
    w_column: str | None = None
    s_bound: float | None = 1.0
    y_bound: float | None = 1.0
    w_bound: float | None = 3.0
    binary_y: bool = True
    mechanism: str = "gaussian"
    composition: str = "basic"
    delta: float = 1e-6
    method: str = "analytical"
    B: int = 200
    scale: str = "ratio"
    preview_seed: int = 0
    show_exact: bool = True
    compare_a: str | None = None
    compare_b: str | None = None
    replicates: int = 1000
    bootstrap: bool = False
    sweep_group: str = ALL_GROUPS
    show_table1: bool = False
    table1_zcdp: bool = False


@dataclass(frozen=True)
class RatioConfig:
    """Validated choices: what the estimator, the simulations and the plan are run with."""

    s_column: str
    y_column: str
    w_column: str | None
    bounds: RatioBounds
    binary_y: bool
    budget: Budget
    epsilon: float
    delta: float | None
    mechanism: str
    composition: str
    method: str
    scale: str
    level: float
    B: int

    @property
    def release(self) -> dict:
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "mechanism": self.mechanism,
            "composition": self.composition,
        }

    @property
    def columns(self) -> dict:
        return {
            "s_column": self.s_column,
            "y_column": self.y_column,
            "w_column": self.w_column,
            "bounds": self.bounds,
            "binary_y": self.binary_y,
        }


class RatioSettingsError(ValueError):
    """The settings cannot be used; ``problems`` lists (severity, message) pairs to show."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__(" ".join(message for _, message in problems))


# ---- validation ---------------------------------------------------------------------------------


def numeric_columns(frame: pd.DataFrame) -> list[str]:
    """Columns of numbers (0/1 and true/false included) that can be a score, label or weight."""
    return [str(c) for c in frame.columns if kind_of(frame[c]) != "text"
            and kind_of(frame[c]) != "category"]  # fmt: skip


ROLE_NAMES = {"s_column": "score", "y_column": "label", "w_column": "weight"}


def _column_problem(frame: pd.DataFrame, role: str, column: str | None) -> tuple[str, str] | None:
    name = ROLE_NAMES[role]
    if column is None:
        return "info", f"Choose the {name} column."
    if column not in frame.columns:
        return "info", f"Choose the {name} column: `{column}` is not in the data in use."
    kind = kind_of(frame[column])
    if kind in ("text", "category"):
        return (
            "error",
            f"The {name} column `{column}` is not numeric (its values are {kind}). Choose a "
            f"column of numbers for the {name}.",
        )
    return None


def _bound_problem(name: str, value: float | None, at_least_one: bool, hint: str) -> str | None:
    bad = value is None or not math.isfinite(value) or (value < 1 if at_least_one else value <= 0)
    if not bad:
        return None
    shown = "nothing" if value is None else f"{value:g}"
    relation = "at least 1" if at_least_one else "above 0"
    return f"The upper bound of the {name} must be a finite number {relation}, got {shown}. {hint}"


@st.cache_data(max_entries=64, show_spinner=False)
def _label_is_binary(_frame: pd.DataFrame, fingerprint: str, column: str) -> bool:
    """Whether every number in ``column`` is 0 or 1, once per data set and column."""
    return _is_binary(_frame, column)


def _is_binary(frame: pd.DataFrame, column: str) -> bool:
    values = pd.to_numeric(frame[column], errors="coerce").dropna()
    return bool(values.isin([0, 1]).all())


def check_settings(
    settings: RatioSettings, frame: pd.DataFrame, fingerprint: str | None = None
) -> list[tuple[str, str]]:
    """Everything wrong with the columns and bounds, as (severity, message) pairs.

    Reads the data only to check that the label is 0/1 when it is declared binary; the message
    never shows a value from the data. With ``frame``'s ``fingerprint`` the check is cached
    (it scans the whole column), otherwise it is done every call.
    """
    problems = []
    roles = {"s_column": settings.s_column, "y_column": settings.y_column}
    if settings.w_column is not None:
        roles["w_column"] = settings.w_column
    for role, column in roles.items():
        problem = _column_problem(frame, role, column)
        if problem:
            problems.append(problem)
    chosen = [c for c in roles.values() if c is not None]
    if len(set(chosen)) < len(chosen):
        problems.append(
            ("error", "The score, label and weight must be different columns. Choose another "
                      "column for one of them.")
        )  # fmt: skip
    hints = {
        "score": "Type the largest score anyone could have, known without looking at the data "
        "(1 for a probability).",
        "label": "Type the largest label anyone could have (1 for a yes/no outcome).",
        "weight": "Type the largest weight in the survey design (e.g. 3). Weights are clipped to "
        "[0, u_w], so a bound below 1 would shrink even a weight of 1.",
    }
    bounds = [("score", settings.s_bound, False)]
    if not settings.binary_y:
        bounds.append(("label", settings.y_bound, False))
    if settings.w_column is not None:
        bounds.append(("weight", settings.w_bound, True))
    for name, value, at_least_one in bounds:
        message = _bound_problem(name, value, at_least_one, hints[name])
        if message:
            problems.append(("error", message))
    y = settings.y_column
    if settings.binary_y and y is not None and not any(p[0] == "error" for p in problems):
        if y in frame.columns and _column_problem(frame, "y_column", y) is None:
            binary = (
                _is_binary(frame, y)
                if fingerprint is None
                else _label_is_binary(frame, fingerprint, y)
            )
            if not binary:
                problems.append(
                    (
                        "error",
                        f"The label column `{y}` has values other than 0 and 1, but “Label is "
                        "binary (0/1)” is ticked. Untick it and type the label's upper bound, or "
                        "choose a 0/1 column.",
                    )
                )
    return problems


def state_budget(state: AppState) -> Budget:
    """The per-release budget of the Budget page: ε (pure DP) or ρ (zCDP)."""
    return PureDP(state.epsilon) if state.budget_kind == "pure" else ZCDP(state.rho)


def resolve(
    state: AppState, settings: RatioSettings, frame: pd.DataFrame, budget: Budget | None = None
) -> RatioConfig:
    """The validated configuration, or :class:`RatioSettingsError` listing what to fix."""
    problems = check_settings(settings, frame, state.dataset_fingerprint)
    if problems:
        raise RatioSettingsError(problems)
    return _configure(state, settings, budget)


def _configure(state: AppState, settings: RatioSettings, budget: Budget | None) -> RatioConfig:
    """The configuration of settings that :func:`check_settings` accepted, at ``budget`` (the
    Budget page's when ``None``); :class:`RatioSettingsError` when the budget does not fit."""
    weighted = settings.w_column is not None
    bounds = RatioBounds(
        float(settings.s_bound),
        1.0 if settings.binary_y else float(settings.y_bound),
        float(settings.w_bound) if weighted else 1.0,
    )
    budget = state_budget(state) if budget is None else budget
    try:
        arguments = release_arguments(
            budget, mechanism=settings.mechanism, composition=settings.composition,
            delta=settings.delta, bounds=bounds, weighted=weighted, binary_y=settings.binary_y,
        )  # fmt: skip
        release_cost(bounds=bounds, weighted=weighted, binary_y=settings.binary_y, **arguments)
    except (ValueError, TypeError) as exc:
        raise RatioSettingsError([("error", budget_message(exc, budget))]) from exc
    return RatioConfig(
        s_column=settings.s_column,
        y_column=settings.y_column,
        w_column=settings.w_column,
        bounds=bounds,
        binary_y=settings.binary_y,
        budget=budget,
        method=settings.method,
        scale=settings.scale,
        level=state.release_level,
        B=int(settings.B),
        **arguments,
    )


def budget_message(exc: Exception, budget: Budget) -> str:
    """A budget error in words: what cannot be done and how to fix it."""
    text = str(exc)
    if "classic Gaussian" in text:
        return (
            f"The budget {budget} is too large for the classic Gaussian formula (paper eq. 5), "
            "which needs ε/m < 1 for each of the m released sums. Choose “Gaussian, analytic”, "
            "switch the accounting to zCDP, or lower ε on the Budget page."
        )
    if "gaussian_analytic" in text:
        return (
            "The analytic Gaussian formula splits an (ε, δ) budget, but the Budget page is set to "
            "ρ-zCDP. Choose “Gaussian, classic” (its σ then comes from ρ directly) or Laplace, or "
            "switch the Budget page to ε."
        )
    return f"These settings cannot be used with the budget {budget}: {text}"


# ---- cached computations ------------------------------------------------------------------------


@st.cache_data(max_entries=32, show_spinner="Summing each group's scores and labels…")
def _group_sums(
    _frame: pd.DataFrame, _grouping, grouping_key: tuple, columns: tuple
) -> GroupRatioSums:
    s, y, w, bounds, binary = columns
    return group_ratio_sums(
        _frame, _grouping, s_column=s, y_column=y, w_column=w, bounds=bounds, binary_y=binary
    )


def _columns_key(config: RatioConfig) -> tuple:
    return (config.s_column, config.y_column, config.w_column, config.bounds, config.binary_y)


def current_sums(state: AppState, config: RatioConfig) -> tuple[GroupRatioSums, tuple]:
    """The groups' exact sums (cached) and their cache key."""
    key = (pipeline.grouping_key(state), _columns_key(config))
    grouping = pipeline.current_grouping(state)
    return _group_sums(get_dataset(), grouping, key[0], key[1]), key


@st.cache_data(max_entries=64, show_spinner=False)
def _preview(
    _sums: GroupRatioSums, sums_key: tuple, release: tuple, interval: tuple, seed: int
) -> RatioResult:
    method, scale, level, B = interval
    return estimate_ratios(
        _sums, **dict(release), method=method, scale=scale, level=level, B=B, rng=seed
    )


@st.cache_data(max_entries=8, show_spinner="Resampling the rows of every group…")
def _bootstrap(
    _frame: pd.DataFrame, _grouping, sums_key: tuple, columns: tuple, replicates: int, seed: int
):
    s, y, w, bounds, binary = columns
    return bootstrap_group_sums(
        _frame, _grouping, s_column=s, y_column=y, w_column=w, bounds=bounds, binary_y=binary,
        replicates=replicates, rng=seed,
    )  # fmt: skip


@st.cache_data(max_entries=512, show_spinner=False)
def _simulate(
    _sums: GroupRatioSums,
    _resampled,
    sums_key: tuple,
    release: tuple,
    methods: tuple,
    interval: tuple,
    replicates: int,
    bootstrap: bool,
    seed: int,
) -> pd.DataFrame:
    scale, level, B = interval
    return simulate_ratio_intervals(
        _sums, **dict(release), methods=methods, scale=scale, level=level, B=B,
        replicates=replicates, resampled=_resampled if bootstrap else None, rng=seed,
    )  # fmt: skip


@st.cache_data(max_entries=8, show_spinner="Running the paper's simulation (16 settings)…")
def _table1(seed: int, zcdp: bool) -> pd.DataFrame:
    study = ratio_study(
        composition=("basic", "zcdp") if zcdp else "basic", reps=TABLE1_REPS, B=TABLE1_B,
        rng=seed,
    )  # fmt: skip
    return table1_comparison(study, load_table1())


# ---- Estimator page -----------------------------------------------------------------------------


def _choose_column(
    label: str, role: str, settings: RatioSettings, options: list[str], help_text: str
) -> None:
    stored = getattr(settings, role)
    choices = [NO_WEIGHTS, *options] if role == "w_column" else options
    current = NO_WEIGHTS if (role == "w_column" and stored is None) else stored
    chosen = st.selectbox(
        label,
        choices,
        index=choices.index(current) if current in choices else None,
        placeholder="Choose a column",
        key=f"ratio.{role}",
        help=help_text,
    )
    if chosen is not None:  # keep an unusable stored choice so its error stays on screen
        setattr(settings, role, None if chosen == NO_WEIGHTS else chosen)


def _render_columns(settings: RatioSettings, frame: pd.DataFrame) -> None:
    st.subheader("Columns")
    options = numeric_columns(frame)
    s_col, y_col, w_col = st.columns(3)
    with s_col:
        _choose_column("Score s", "s_column", settings, options,
                       "What the model predicts, e.g. a predicted probability.")  # fmt: skip
        st.caption("The model's prediction for each person (e.g. a probability between 0 and 1).")
    with y_col:
        _choose_column("Label y", "y_column", settings, options,
                       "What actually happened, e.g. 1 if income is over 50K.")  # fmt: skip
        st.caption("The observed outcome the score tries to predict.")
    with w_col:
        _choose_column("Weight w (optional)", "w_column", settings, options,
                       "A survey weight per row; leave at no weights if every row counts once.")  # fmt: skip
        st.caption("How many people each row stands for; most data have no weights.")


def _render_bounds(settings: RatioSettings) -> None:
    st.subheader("Public bounds")
    st.markdown(
        "Values are clipped to **[0, upper bound]** before summing (the lower bounds are 0, as "
        "in the paper). Type bounds you know **without looking at the data** — bounds read off the "
        "data would leak the largest values. Larger bounds mean more noise."
    )
    s_col, y_col, w_col = st.columns(3)
    with s_col:
        settings.s_bound = st.number_input(
            "Upper bound of the score u_s", value=settings.s_bound, key="ratio.s_bound",
            help="The largest score anyone could have; 1 for a probability.",
        )  # fmt: skip
        st.caption("Scores above it count as the bound.")
    with y_col:
        settings.binary_y = st.checkbox(
            "Label is binary (0/1)", value=settings.binary_y, key="ratio.binary_y",
            help="Tick if the label is always 0 or 1; then one fewer sum is released.",
        )  # fmt: skip
        if settings.binary_y:
            st.number_input("Upper bound of the label u_y", value=1.0, disabled=True,
                            key="ratio.y_bound.binary")  # fmt: skip
            st.caption("A 0/1 label needs no bound: it is 1.")
        else:
            settings.y_bound = st.number_input(
                "Upper bound of the label u_y", value=settings.y_bound, key="ratio.y_bound",
                help="The largest label anyone could have.",
            )  # fmt: skip
            st.caption("Labels above it count as the bound.")
    with w_col:
        if settings.w_column is None:
            st.number_input("Upper bound of the weight u_w", value=1.0, disabled=True,
                            key="ratio.w_bound.none")  # fmt: skip
            st.caption("Without weights every row has weight 1.")
        else:
            settings.w_bound = st.number_input(
                "Upper bound of the weight u_w", value=settings.w_bound, key="ratio.w_bound",
                help="The largest weight in the survey design; it scales every sum's noise.",
            )  # fmt: skip
            st.caption("Weights above it count as the bound; at least 1.")


def _render_noise(settings: RatioSettings, state: AppState) -> None:
    st.subheader("Noise")
    pure = state.budget_kind == "pure"
    mechanisms = list(MECHANISM_LABELS) if pure else ["gaussian", "laplace"]
    if settings.mechanism not in mechanisms:
        settings.mechanism = "gaussian"
    mech_col, comp_col, delta_col = st.columns(3)
    with mech_col:
        settings.mechanism = st.radio(
            "Mechanism", mechanisms, index=mechanisms.index(settings.mechanism),
            format_func=MECHANISM_LABELS.__getitem__, key=f"ratio.mechanism.{state.budget_kind}",
            help="The kind of random noise added to each sum.",
        )  # fmt: skip
        st.caption(MECHANISM_HELP[settings.mechanism])
    gaussian = settings.mechanism != "laplace"
    with comp_col:
        if pure and settings.mechanism == "gaussian":
            options = list(COMPOSITION_LABELS)
            settings.composition = st.radio(
                "Accounting", options, index=options.index(settings.composition),
                format_func=COMPOSITION_LABELS.__getitem__, key="ratio.composition",
                help="How the budget is shared among the released sums.",
            )  # fmt: skip
            st.caption(
                "Same (ε, δ) guarantee either way; zCDP adds less noise. The table below the "
                "preview and the width chart on the Compare page show both."
            )
        elif not pure and gaussian:
            st.markdown("**Accounting:** zCDP")
            st.caption("With a ρ budget the noise comes from ρ directly: σ = Δ/√(2ρ/m) per sum.")
        elif gaussian:
            st.markdown("**Accounting:** basic")
            st.caption("zCDP accounting sizes σ from ρ directly; choose the classic Gaussian to "
                       "use it.")  # fmt: skip
        else:
            st.markdown("**Accounting:** basic (ε/m per sum)")
            st.caption("Laplace noise is pure ε-DP; its costs add up simply.")
    with delta_col:
        if pure and gaussian:
            settings.delta = st.select_slider(
                "δ (chance the guarantee fails)", options=DELTAS, value=settings.delta,
                format_func=lambda d: f"{d:.0e}", key="ratio.delta",
                help="Gaussian noise allows a tiny probability δ of a larger privacy loss.",
            )  # fmt: skip
            st.caption("Keep it far below 1/rows; the paper uses 1e-6.")
        elif gaussian:
            st.markdown("**δ:** not needed")
            st.caption("A ρ-zCDP budget has no δ; the ledger converts when needed.")
        else:
            st.markdown("**δ:** 0")
            st.caption("Laplace noise needs no δ.")
    _budget_caption(state, settings)


def _budget_caption(state: AppState, settings: RatioSettings) -> None:
    if state.budget_kind == "pure":
        budget = f"ε = {state.epsilon:g}"
        if settings.mechanism == "laplace":
            guarantee = "pure ε-DP, as the Budget page says"
        else:
            guarantee = (
                f"(ε = {state.epsilon:g}, δ = {settings.delta:.0e})-DP — Gaussian noise cannot "
                "meet pure ε-DP, so δ is added"
            )
    else:
        budget = f"ρ = {state.rho:g}"
        guarantee = (
            "ρ-zCDP"
            if settings.mechanism != "laplace"
            else f"pure ε-DP at ε = √(2ρ) = {(2 * state.rho) ** 0.5:.3g}, which is ρ-zCDP"
        )
    st.caption(
        f"Budget per release: **{budget}** from the Budget page; this release is {guarantee}. "
        "Each group is released separately; groups are disjoint, so all of them cost one "
        "group's budget, and the all-groups ratio adds the noisy group sums (no extra cost)."
    )


def _render_interval(settings: RatioSettings, state: AppState) -> None:
    st.subheader("Confidence interval")
    method_col, scale_col, level_col = st.columns(3)
    with method_col:
        methods = list(METHOD_LABELS)
        settings.method = st.radio(
            "Interval method", methods, index=methods.index(settings.method),
            format_func=METHOD_LABELS.__getitem__, key="ratio.method",
            help="How the interval accounts for the DP noise.",
        )  # fmt: skip
        st.caption(METHOD_HELP[settings.method])
        if settings.method == "monte_carlo":
            settings.B = st.slider(
                "Monte Carlo draws B", min_value=B_MIN, max_value=B_MAX, value=int(settings.B),
                step=50, key="ratio.B", help="More draws make the correction steadier but slower.",
            )  # fmt: skip
            st.caption("The paper uses B = 200.")
    with scale_col:
        scales = list(SCALE_LABELS)
        settings.scale = st.radio(
            "Scale", scales, index=scales.index(settings.scale),
            format_func=SCALE_LABELS.__getitem__, key="ratio.scale",
            help="Whether the interval is built for the ratio or for its logarithm.",
        )  # fmt: skip
        st.caption(SCALE_HELP[settings.scale])
    with level_col:
        level = state.release_level if state.release_level in LEVELS else 0.95
        state.release_level = st.select_slider(
            "Confidence level", options=LEVELS, value=level, format_func=lambda v: f"{v:.0%}",
            key="ratio.level", help="How often the interval should contain the true ratio.",
        )  # fmt: skip
        st.caption("Shared with the Release page.")


def _show_problems(problems: list[tuple[str, str]]) -> None:
    for severity, message in problems:
        if severity == "error":
            st.error(message, icon=":material/error:")
        else:
            st.info(message, icon=":material/info:")


def _show_sums_messages(sums: GroupRatioSums) -> None:
    for message in sums.messages():
        st.warning(message, icon=":material/warning:")


def _axis_title(config: RatioConfig) -> str:
    return charts.ratio_axis_title(config.s_column, config.y_column, config.w_column)


def render_estimator() -> None:
    """The ratio's settings, then a preview of its group intervals and a two-group comparison."""
    state, settings, frame = get_state(), get_settings(RatioSettings), get_dataset()
    st.markdown(
        "The **calibration ratio** of a group is Σ score / Σ label over its rows: 1 means the "
        "scores add up to the observed outcomes, above 1 the model over-predicts and below 1 it "
        "under-predicts. Each group's sums get DP noise, and the confidence interval accounts "
        "for it (Miao & Li 2022)."
    )
    _render_columns(settings, frame)
    _render_bounds(settings)
    _render_noise(settings, state)
    _render_interval(settings, state)
    try:
        config = resolve(state, settings, frame)
        sums, sums_key = current_sums(state, config)
    except RatioSettingsError as exc:
        _show_problems(exc.problems)
        return
    except (ValueError, TypeError) as exc:
        st.error(str(exc), icon=":material/error:")
        return
    _show_sums_messages(sums)
    _render_noise_table(config, state)
    _render_preview(settings, config, sums, sums_key)


def _render_noise_table(config: RatioConfig, state: AppState) -> None:
    weighted = config.w_column is not None
    rows = []
    compositions = ["basic", "zcdp"] if config.mechanism == "gaussian" else [config.composition]
    if state.budget_kind != "pure":
        compositions = [config.composition]
    for composition in compositions:
        arguments = {**config.release, "composition": composition}
        try:
            cost, _, scales = release_cost(
                bounds=config.bounds, weighted=weighted, binary_y=config.binary_y, **arguments
            )
        except ValueError:
            continue
        sigma = scales["ws"]
        symbol = "b" if config.mechanism == "laplace" else "σ"
        rows.append(
            {
                "Accounting": COMPOSITION_LABELS[composition].split(":")[0]
                + (" (in use)" if composition == config.composition else ""),
                f"Noise {symbol} on Σws and Σwy": sigma,
                "Sums released": len(scales),
                "Charged to the ledger": str(cost),
            }
        )
    with st.expander("Noise per released sum and what the ledger is charged",
                     icon=":material/calculate:", expanded=False):  # fmt: skip
        st.dataframe(charts.noise_table(rows), hide_index=True)
        st.caption(
            "The ledger adds up ρ-zCDP. Gaussian noise of standard deviation σ on a sum that one "
            "person can change by at most Δ costs ρ = Δ²/(2σ²) whatever formula chose σ (Bun & "
            "Steinke 2016, Prop. 1.6), so a release is charged exactly that, summed over its "
            "sums. Basic composition meets the same (ε, δ) with more noise and a smaller ρ; zCDP "
            "spends more ρ for less noise. Laplace is pure ε-DP, charged as ρ = ε²/2."
        )


def _result_frame(result: RatioResult, sums: GroupRatioSums) -> pd.DataFrame:
    frame = result.frame()
    frame["rows"] = [*sums.rows.tolist(), int(sums.rows.sum())]
    frame["exact"] = [*sums.truth.tolist(), sums.global_truth]
    return frame


def _render_preview(
    settings: RatioSettings, config: RatioConfig, sums: GroupRatioSums, sums_key: tuple
) -> None:
    st.subheader("Preview: calibration ratio per group")
    st.info(
        f"{PREVIEW_BANNER} One simulated release with the settings above (numpy noise; a real "
        "release on the Release page draws fresh noise with OpenDP).",
        icon=":material/visibility:",
    )
    redraw_col, exact_col, _ = st.columns([1, 1, 2])
    with redraw_col:
        if st.button("Draw new noise", key="ratio.redraw", icon=":material/casino:",
                     help="Simulate another release: same data and settings, new noise."):  # fmt: skip
            settings.preview_seed += 1
        st.caption(f"Noise draw #{settings.preview_seed}.")
    with exact_col:
        settings.show_exact = st.toggle(
            "Show the exact ratios", value=settings.show_exact, key="ratio.show_exact",
            help="The confidential ratio of the clipped data, to see how close the release is.",
        )  # fmt: skip
        st.caption("Confidential: never published.")
    interval = (config.method, config.scale, config.level, config.B)
    result = _preview(
        sums, sums_key, tuple(config.release.items()), interval, settings.preview_seed
    )
    frame = _result_frame(result, sums)
    st.plotly_chart(
        charts.preview_figure(
            frame, level=config.level, x_title=_axis_title(config), show_exact=settings.show_exact
        ),
        key="ratio.chart.preview",
    )
    st.markdown(charts.preview_summary(frame, level=config.level))
    table = charts.preview_table(frame)
    if not settings.show_exact:
        table = table.drop(columns=["Exact ratio (confidential)"])
    st.dataframe(
        table,
        hide_index=True,
        height=TABLE_ROW_PX * (len(table) + 1) + 3,  # every group and the total, no scrolling
        column_config={
            "Rows": st.column_config.NumberColumn(format="localized"),
            **{
                name: st.column_config.NumberColumn(format="%.4g")
                for name in (
                    "Exact ratio (confidential)",
                    "DP estimate",
                    "CI low",
                    "CI high",
                    "Width",
                )
            },
        },
        key="ratio.table.preview",
    )
    st.caption(
        "A group has no interval when its noisy sums make the ratio undefined (e.g. the noisy "
        "Σ label is 0 or below) — typical of small groups at small budgets. Its row says why."
    )
    _render_pairwise(settings, config, result)


def _render_pairwise(settings: RatioSettings, config: RatioConfig, result: RatioResult) -> None:
    st.subheader("Compare two groups")
    st.markdown(
        "Is one group's calibration different from another's? A z-test on the difference of "
        "their ratios (§2.4); the groups are disjoint, so their releases are independent."
    )
    labels = list(result.labels)
    if len(labels) < 2:
        st.info("There is only one group: choose more strata on the Strata page to compare.",
                icon=":material/info:")  # fmt: skip
        return
    if settings.compare_a not in labels:
        settings.compare_a = labels[0]
    if settings.compare_b not in labels or settings.compare_b == settings.compare_a:
        settings.compare_b = next(label for label in labels if label != settings.compare_a)
    a_col, b_col = st.columns(2)
    with a_col:
        settings.compare_a = st.selectbox(
            "Group A", labels, index=labels.index(settings.compare_a), key="ratio.compare_a",
            help="The first group of the comparison.",
        )  # fmt: skip
    with b_col:
        others = [label for label in labels if label != settings.compare_a]
        if settings.compare_b not in others:
            settings.compare_b = others[0]
        settings.compare_b = st.selectbox(
            "Group B", others, index=others.index(settings.compare_b), key="ratio.compare_b",
            help="The second group; it must differ from group A.",
        )  # fmt: skip
    comparison = result.compare(labels.index(settings.compare_a), labels.index(settings.compare_b))
    sentence = charts.comparison_sentence(
        comparison, settings.compare_a, settings.compare_b, scale=config.scale
    )
    if comparison.flag is None:
        st.markdown(sentence)
        st.dataframe(
            charts.comparison_table(comparison, settings.compare_a, settings.compare_b),
            hide_index=True,
            column_config={
                name: st.column_config.NumberColumn(format="%.4g")
                for name in ("Difference A − B", "CI low", "CI high", "z", "p-value")
            },
            key="ratio.table.compare",
        )
    else:
        st.warning(sentence, icon=":material/warning:")
    scale_note = " of log ratios" if config.scale == "log" else ""
    st.caption(
        f"Preview from one simulated release. The difference{scale_note} uses each group's own "
        "interval method; p < 1 − level means the groups differ at that level."
    )


# ---- Compare page -------------------------------------------------------------------------------


def _budget_slider(state: AppState) -> tuple[str, float]:
    if state.budget_kind == "pure":
        options, symbol = constants.EPSILON_OPTIONS, "ε"
        current = min(options, key=lambda o: abs(o - state.epsilon) / o)
    else:
        options, symbol = constants.RHO_OPTIONS, "ρ"
        current = min(options, key=lambda o: abs(o - state.rho) / o)
    chosen = st.select_slider(
        f"{symbol} per release (log scale)", options=options, value=current,
        format_func=lambda v: f"{v:g}", key=f"compare.ratio.budget.{state.budget_kind}",
        help="The same budget as on the Budget page: smaller means more privacy and more noise.",
    )  # fmt: skip
    if state.budget_kind == "pure":
        state.epsilon = chosen
    else:
        state.rho = chosen
    st.caption("Move it and the charts are redrawn. Switch ε/ρ on the Budget page.")
    return symbol, chosen


def _sweep_budgets(state: AppState, current: float) -> list[tuple[float, Budget]]:
    grid = EPSILON_SWEEP if state.budget_kind == "pure" else RHO_SWEEP
    values = sorted({*grid, current})
    make = PureDP if state.budget_kind == "pure" else ZCDP
    return [(value, make(value)) for value in values]


def _describe(config: RatioConfig, state: AppState) -> str:
    weight = f", weighted by `{config.w_column}`" if config.w_column else ""
    accounting = "zCDP" if config.composition == "zcdp" else "basic"
    return (
        f"Calibration ratio Σ`{config.s_column}` / Σ`{config.y_column}`{weight} by "
        f"**{' × '.join(state.strata_columns)}**, {MECHANISM_LABELS[config.mechanism]} with "
        f"{accounting} accounting, {config.scale} scale, {config.level:.0%} intervals. Change "
        "these on the Strata and Estimator pages."
    )


def render_compare() -> None:
    """Coverage, width and interval score over simulated releases, and the Table 1 preset."""
    state, settings, frame = get_state(), get_settings(RatioSettings), get_dataset()
    st.markdown(
        "How good are the ratio's confidence intervals with this much noise? Each view simulates "
        "many releases of the current data and checks every interval method against the exact "
        "(confidential) ratio of the clipped data."
    )
    budget_col, reps_col, seed_col = st.columns(3)
    with budget_col:
        symbol, chosen = _budget_slider(state)
    with reps_col:
        settings.replicates = st.slider(
            "Simulated releases", min_value=REPLICATES_MIN, max_value=REPLICATES_MAX,
            value=int(settings.replicates), step=REPLICATES_STEP, key="compare.ratio.replicates",
            help="More releases give steadier coverage estimates but take longer.",
        )  # fmt: skip
        st.caption("The band on the coverage chart narrows as this grows.")
    with seed_col:
        state.seed = int(
            st.number_input(
                "Random seed", min_value=0, value=int(state.seed), step=1,
                key="compare.ratio.seed",
                help="The same seed gives the same simulated noise, so results can be reproduced.",
            )
        )  # fmt: skip
        st.caption("Change it to check a difference is not a fluke.")
    settings.bootstrap = st.checkbox(
        "Also resample the rows (bootstrap)", value=settings.bootstrap,
        key="compare.ratio.bootstrap",
        help="Each simulated release also redraws each group's rows with replacement.",
    )  # fmt: skip
    st.caption(
        "Off: only the DP noise varies, so intervals that also allow for sampling variation "
        "cover more often than the nominal level. On: rows are resampled within each group too, "
        "the situation the intervals are designed for."
    )
    try:
        config = resolve(state, settings, frame)
        sums, sums_key = current_sums(state, config)
    except RatioSettingsError as exc:
        _show_problems(exc.problems)
        st.info("Fix the settings on the Estimator page to see the simulations.",
                icon=":material/info:")  # fmt: skip
        _render_table1(settings)
        return
    except (ValueError, TypeError) as exc:
        st.error(str(exc), icon=":material/error:")
        return
    st.caption(_describe(config, state))
    started = time.perf_counter()
    resampled = None
    if settings.bootstrap:
        resampled = _bootstrap(
            frame, pipeline.current_grouping(state), sums_key, _columns_key(config),
            settings.replicates, state.seed,
        )  # fmt: skip
    run = _runner(sums, resampled, sums_key, settings, state)
    # The width sweep varies only the DP noise: width hardly depends on resampling the rows, and
    # its points stay cached when the bootstrap is switched on.
    sweep_run = _runner(sums, None, sums_key, settings, state)
    current = run(config, ("none", "monte_carlo", "analytical"))
    _render_coverage(current, config, settings)
    _render_width(state, settings, config, current, sweep_run, symbol, chosen)
    _render_score(current, symbol, chosen)
    st.caption(
        f"Simulations took {time.perf_counter() - started:.2f} s (repeat visits are cached)."
    )
    _render_table1(settings)


def _runner(sums, resampled, sums_key, settings, state):
    """A cached simulation of ``sums`` for a configuration and methods (bootstrap when
    ``resampled`` is given)."""

    def run(cfg: RatioConfig, methods: tuple[str, ...]) -> pd.DataFrame:
        return _simulate(
            sums, resampled, sums_key, tuple(cfg.release.items()), methods,
            (cfg.scale, cfg.level, cfg.B), settings.replicates, resampled is not None,
            state.seed,
        )  # fmt: skip

    return run


def _render_coverage(current: pd.DataFrame, config: RatioConfig, settings: RatioSettings) -> None:
    st.subheader("1. Coverage: how often the interval contains the exact ratio")
    mode = "noise and rows resampled" if settings.bootstrap else "DP noise only"
    st.plotly_chart(
        charts.coverage_figure(
            current,
            level=config.level,
            title=f"Coverage per group over {settings.replicates:,} simulated releases ({mode})",
        ),
        key="ratio.chart.coverage",
    )
    st.markdown(charts.coverage_summary(current, level=config.level))
    st.caption(
        "A calibrated method sits inside the shaded band around the nominal level (where "
        f"{settings.replicates:,} releases of a method with exactly nominal coverage land 95% of "
        "the time). Releases whose noisy sums leave the ratio undefined count as misses, as in "
        "the paper."
    )


def _render_width(
    state: AppState,
    settings: RatioSettings,
    config: RatioConfig,
    current: pd.DataFrame,
    run,
    symbol: str,
    chosen: float,
) -> None:
    st.subheader(f"2. Interval width as {symbol} grows")
    groups = [ALL_GROUPS, *(g for g in dict.fromkeys(current["group"]) if g != ALL_GROUPS)]
    if settings.sweep_group not in groups:
        settings.sweep_group = ALL_GROUPS
    settings.sweep_group = st.selectbox(
        "Group", groups, index=groups.index(settings.sweep_group), key="compare.ratio.group",
        help="Whose interval width to follow as the budget grows.",
    )  # fmt: skip
    frames = []
    pure_gaussian = state.budget_kind == "pure" and config.mechanism == "gaussian"
    # Many groups × releases × draws: the Monte Carlo line (which the analytical one tracks
    # closely, paper Table 1) is left out of the sweep to keep the page quick.
    draws = settings.replicates * len(groups) * config.B
    with_mc = draws <= SWEEP_MC_DRAWS_MAX
    methods = ("none", "monte_carlo", "analytical") if with_mc else ("none", "analytical")
    for value, budget in _sweep_budgets(state, chosen):
        try:
            point = _config_for(state, settings, budget)
        except RatioSettingsError:
            continue  # e.g. the classic Gaussian cannot run at this ε: leave the point out
        frames.append(run(point, methods).assign(budget=value, composition=point.composition))
        if pure_gaussian:
            other = "zcdp" if point.composition == "basic" else "basic"
            try:
                alternative = _config_for(state, settings, budget, composition=other)
            except RatioSettingsError:
                continue
            frames.append(run(alternative, ("analytical",)).assign(
                budget=value, composition=other))  # fmt: skip
    sweep = pd.concat(frames, ignore_index=True)
    st.plotly_chart(
        charts.width_figure(sweep, symbol=symbol, group=settings.sweep_group, current=chosen),
        key="ratio.chart.width",
    )
    st.markdown(charts.width_summary(sweep, symbol=symbol, group=settings.sweep_group))
    note = (
        " Dashed: the analytical interval with the other accounting, at the same (ε, δ) "
        "guarantee — zCDP adds less noise per sum than the paper's basic composition."
        if pure_gaussian
        else ""
    )
    if not with_mc:
        note += (
            f" The Monte Carlo correction is left out here ({len(groups) - 1:,} groups make it "
            "slow); it tracks the analytical one closely."
        )
    st.caption(
        "DP noise only; median over the simulated releases that form an interval (the paper's "
        "tables report means, which a few releases with a noisy denominator near 0 can "
        "dominate)." + note
    )


def _config_for(
    state: AppState, settings: RatioSettings, budget: Budget, composition: str | None = None
) -> RatioConfig:
    """The configuration at another budget (and accounting), for the width sweep.

    The columns and bounds were checked by the page's :func:`resolve` on this rerun; only the
    budget and the accounting change here, so the data is not read again.
    """
    if composition is not None:
        settings = dataclasses.replace(settings, composition=composition)
    return _configure(state, settings, budget)


def _render_score(current: pd.DataFrame, symbol: str, chosen: float) -> None:
    st.subheader("3. Interval score: width plus a penalty for missing")
    st.plotly_chart(
        charts.score_figure(
            current, title=f"Median interval score per group at {symbol} = {chosen:g}"
        ),
        key="ratio.chart.score",
    )
    st.markdown(charts.score_summary(current))
    st.caption(
        "The interval score (Gneiting & Raftery 2007, eq. 43) is the width plus 2/α times how "
        "far the exact ratio falls outside: it rewards narrow intervals that still cover. "
        "Median over the releases that form an interval; the paper's tables report means, which "
        "for small groups a few releases with a noisy denominator near 0 dominate."
    )


def _render_table1(settings: RatioSettings) -> None:
    st.subheader("4. Reproduce the paper's Table 1")
    st.markdown(
        "Miao & Li's simulation: s ~ Beta(2, 2), y ~ Bernoulli(s/1.1), so the true ratio is 1.1; "
        "n = 5,000 and 10,000 rows, unweighted and weighted (w ~ Exp(1) clipped to [1/3, 3]), "
        "ε = 0.2 to 4 with the classic Gaussian, δ = 1e-6 split evenly over the sums, "
        f"{TABLE1_REPS:,} replicates, B = {TABLE1_B}, 95% intervals on the ratio scale."
    )
    run_col, zcdp_col = st.columns([1, 2])
    with run_col:
        if st.button("Reproduce the paper's Table 1", key="ratio.table1.run",
                     icon=":material/table_chart:", type="primary"):  # fmt: skip
            settings.show_table1 = True
    with zcdp_col:
        settings.table1_zcdp = st.checkbox(
            "Also run the zCDP accounting", value=settings.table1_zcdp, key="ratio.table1.zcdp",
            help="Adds rows with the paper's suggested improvement; the paper has no numbers "
            "for them.",
        )  # fmt: skip
    if not settings.show_table1:
        st.caption("Takes about a second; uses the seed above. Simulated data only.")
        return
    seed = get_state().seed
    started = time.perf_counter()
    comparison = _table1(seed, settings.table1_zcdp)
    took = time.perf_counter() - started
    st.plotly_chart(charts.table1_figure(comparison), key="ratio.chart.table1")
    st.markdown(charts.table1_summary(comparison))
    st.dataframe(
        charts.table1_display(comparison),
        hide_index=True,
        column_config={
            name: st.column_config.NumberColumn(format="%.3f")
            for name in charts.table1_display(comparison.head(1)).columns
            if "(" in name and "Degenerate" not in name
        },
        key="ratio.table.table1",
    )
    st.caption(
        f"Our run: seed {seed}, {took:.2f} s. Where we differ from the paper: we use common "
        "random numbers (each n and weighting's data are simulated once and reused for every ε "
        "and method) and one seed, so our numbers differ from the paper's by Monte Carlo error "
        "(about ±1.4 points of coverage at 1,000 replicates). Releases whose noisy sums make the "
        "ratio undefined count as misses and are left out of the width and score, as NaNs are "
        "in the paper's code. The weighted ε = 0.2 widths and scores are means dominated by a "
        "few releases with a noisy denominator near 0, so they change a lot from run to run."
    )


# ---- Release page -------------------------------------------------------------------------------


def current_plan() -> RatioPlan:
    """The ratio release the session would commit, or ``ValueError`` saying what to fix."""
    state, settings, frame = get_state(), get_settings(RatioSettings), get_dataset()
    try:
        config = resolve(state, settings, frame)
    except RatioSettingsError as exc:
        raise ValueError(f"{exc} Fix it on the Estimator page.") from None
    sums, _ = current_sums(state, config)
    return RatioPlan(
        sums=sums, header=pipeline.plan_header(state, config.budget),
        mechanism=settings.mechanism, composition=settings.composition, delta=settings.delta,
        method=config.method, scale=config.scale, B=config.B,
    )  # fmt: skip
