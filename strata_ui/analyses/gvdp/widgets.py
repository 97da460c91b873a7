"""Widgets of the general estimator with valid confidence intervals (GVDP; Covington, He, Honaker
& Kamath): the Estimator-page settings and previews, the Compare-page coverage study, and the
release plan for the Release page (see :mod:`strata_ui.analyses`).

Numerics live in :mod:`dpcore.analyses.gvdp`; figures in :mod:`strata_ui.analyses.gvdp.charts`. Every cached
computation is keyed on primitives (dataset fingerprint, frozen settings, a seed).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from dpcore.accounting import ZCDP
from dpcore.analyses.gvdp.data import GvdpData, prepare_data
from dpcore.analyses.gvdp.diagnostics import (
    blb_diagnostic,
    coverage_frame,
    coverage_on_data,
    coverage_synthetic,
    k_ladder,
    synthetic_coefficients,
    synthetic_description,
)
from dpcore.analyses.gvdp.estimator import nonprivate_ci
from dpcore.analyses.gvdp.groups import (
    DP,
    NON_PRIVATE,
    STRATEGIES,
    RunSettings,
    comparison_frame,
    groups_frame,
    nonprivate,
    run_groups,
    run_population,
)
from dpcore.analyses.gvdp.model import BOUNDS_MODES, MODELS, GvdpBoundsSpec, GvdpModel
from dpcore.analyses.gvdp.plan import GvdpPlan
from dpcore.grouping import GroupingSpec
from strata_ui import pipeline
from strata_ui.analyses.gvdp import charts
from strata_ui.state import AppState, get_dataset, get_settings, get_state

PREVIEW_LABEL = "Preview — uses the confidential data; not a release"
PREVIEW_ICON = ":material/visibility:"
ERROR_ICON = ":material/error:"

MODEL_HELP = {
    "mean": "The average of one numeric column.",
    "ols": "A straight-line fit y = b₀ + b₁x₁ + …: each coefficient is the change in y per unit "
    "of its covariate, others held fixed.",
    "logistic": "A fit of a 0/1 outcome: each coefficient is the change in the log-odds of y = 1 "
    "per unit of its covariate, others held fixed.",
}
DEFAULT_K = {"mean": 1000, "ols": 250, "logistic": 250}
DEFAULT_REPLICATIONS = {"mean": 50, "ols": 40, "logistic": 10}
REPLICATIONS_RANGE = (5, 500)
FACTOR_OPTIONS = (1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0)
BETA_OPTIONS = (0.001, 0.005, 0.01, 0.03, 0.05, 0.1)
SOURCES = {
    "data": "The current data (fresh noise and subsets)",
    "synthetic": "Synthetic data with a known truth",
}

# Public bounds for the demo's columns, from outside knowledge (see BOUNDS_REASONS):
# (low, high, per-row spread σ) for each (model, outcome, coefficient).
DEMO_BOX: dict[tuple[str, str, str], tuple[float, float, float]] = {
    ("mean", "hours_per_week", "hours_per_week"): (0.0, 100.0, 50.0),
    ("mean", "age", "age"): (0.0, 120.0, 60.0),
    ("mean", "income_over_50k", "income_over_50k"): (0.0, 1.0, 0.5),
    ("mean", "score", "score"): (0.0, 1.0, 0.5),
    ("ols", "hours_per_week", "intercept"): (-100.0, 200.0, 200.0),
    ("ols", "hours_per_week", "age"): (-5.0, 5.0, 5.0),
    ("ols", "hours_per_week", "income_over_50k"): (-100.0, 100.0, 100.0),
    ("logistic", "income_over_50k", "intercept"): (-20.0, 20.0, 100.0),
    ("logistic", "income_over_50k", "age"): (-1.0, 1.0, 2.0),
    ("logistic", "income_over_50k", "hours_per_week"): (-1.0, 1.0, 2.0),
}
GENERIC_BOX = (-1000.0, 1000.0, 1000.0)
# (guess, guessed per-row spread σ): rough public figures, e.g. from an earlier survey.
DEMO_GUESS: dict[tuple[str, str, str], tuple[float, float]] = {
    ("mean", "hours_per_week", "hours_per_week"): (40.0, 15.0),
    ("mean", "age", "age"): (40.0, 15.0),
    ("ols", "hours_per_week", "intercept"): (40.0, 40.0),
    ("ols", "hours_per_week", "age"): (0.1, 1.0),
    ("ols", "hours_per_week", "income_over_50k"): (5.0, 30.0),
    ("logistic", "income_over_50k", "intercept"): (-5.0, 10.0),
    ("logistic", "income_over_50k", "age"): (0.05, 0.2),
    ("logistic", "income_over_50k", "hours_per_week"): (0.05, 0.2),
}
GENERIC_GUESS = (1.0, 10.0)
BOUNDS_REASONS = {
    "mean": "Demo defaults: weekly hours lie in [0, 100] by definition, so their mean does too, "
    "and no column in [L, U] has a standard deviation above (U − L)/2 = 50.",
    "ols": "Demo defaults from public facts: hours lie in [0, 100] and ages in [17, 90], so the "
    "intercept lies well within [−100, 200], a slope beyond ±5 hours per year of age or ±100 "
    "hours for a 0/1 covariate is impossible, and the spreads are generous multiples of the "
    "hours' largest possible standard deviation (50).",
    "logistic": "Demo defaults: log-odds beyond ±20 mean probabilities below 2 in a billion, and "
    "a change of ±1 in log-odds per year of age or per weekly hour is far beyond anything "
    "plausible; the spreads are deliberately loose.",
}


@dataclass
class GvdpSettings:
    """This session's choices for the general estimator (defaults work on the demo data)."""

    model: str = "mean"
    outcome: dict[str, str] = field(
        default_factory=lambda: {
            "mean": "hours_per_week",
            "ols": "hours_per_week",
            "logistic": "income_over_50k",
        }
    )
    covariates: dict[str, list[str]] = field(
        default_factory=lambda: {
            "ols": ["age", "income_over_50k"],
            "logistic": ["age", "hours_per_week"],
        }
    )
    strategy: str = "stratified"
    k: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_K))
    bounds_mode: str = "box"
    box: dict[tuple[str, str, str], tuple[float, float, float]] = field(default_factory=dict)
    guess: dict[tuple[str, str, str], tuple[float, float]] = field(default_factory=dict)
    factor: float = 100.0
    resamples: int = 10
    steps: int = 5
    beta: float = 0.03
    mean_fraction: float = 0.5
    group_coefficient: str | None = None
    diagnostic_coefficient: str | None = None
    coverage_source: str = "data"
    replications: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_REPLICATIONS))
    synthetic_factor: float = 100.0


def get_gvdp_settings() -> GvdpSettings:
    return get_settings(GvdpSettings)


def column_key(kind: str, what: str) -> str:
    """Widget key of a column picker; tied to the dataset so a new upload starts afresh."""
    return f"gvdp.{kind}.{what}.{get_state().dataset_fingerprint}"


# ---- from settings to dpcore objects ------------------------------------------------------------


def _is_numeric(series: pd.Series) -> bool:
    dtype = series.dtype
    return pd.api.types.is_bool_dtype(dtype) or (
        pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype)
    )


def current_model(settings: GvdpSettings) -> GvdpModel:
    """The model chosen on the Estimator page; ``ValueError`` says what to fix."""
    kind = settings.model
    outcome = settings.outcome.get(kind)
    if not outcome:
        raise ValueError("Choose the column to estimate on the Estimator page.")
    covariates = tuple(settings.covariates.get(kind, ())) if kind != "mean" else ()
    return GvdpModel(kind, outcome, covariates)


def box_defaults(kind: str, outcome: str, coefficient: str) -> tuple[float, float, float]:
    return DEMO_BOX.get((kind, outcome, coefficient), GENERIC_BOX)


def guess_defaults(kind: str, outcome: str, coefficient: str) -> tuple[float, float]:
    return DEMO_GUESS.get((kind, outcome, coefficient), GENERIC_GUESS)


def current_bounds(settings: GvdpSettings, model: GvdpModel) -> GvdpBoundsSpec:
    """The public bounds typed on the Estimator page (defaults where nothing was typed)."""
    keys = [(model.kind, model.outcome, c) for c in model.coefficients]
    if settings.bounds_mode == "box":
        rows = [settings.box.get(key, box_defaults(*key)) for key in keys]
        return GvdpBoundsSpec(
            "box", model.coefficients, spread=tuple(r[2] for r in rows),
            low=tuple(r[0] for r in rows), high=tuple(r[1] for r in rows),
        )  # fmt: skip
    rows = [settings.guess.get(key, guess_defaults(*key)) for key in keys]
    return GvdpBoundsSpec(
        "guess", model.coefficients, spread=tuple(r[1] for r in rows),
        guess=tuple(r[0] for r in rows), factor=settings.factor,
    )  # fmt: skip


def budget_rho(state: AppState) -> tuple[float, str]:
    """ρ for GVDP from the Budget page, and one sentence saying where it comes from."""
    if state.budget_kind == "zcdp":
        return state.rho, f"ρ = {state.rho:g} (zCDP), set on the Budget page."
    rho = state.epsilon**2 / 2
    return rho, (
        f"ρ = ε²/2 = {rho:g} from your ε = {state.epsilon:g} on the Budget page. GVDP adds "
        "Gaussian noise, so it meets ρ-zCDP and never pure ε-DP; since ε-DP implies "
        "ε²/2-zCDP, this ρ costs the ledger exactly what an ε-DP release would. Switch the "
        "Budget page to ρ to set it directly."
    )


def current_settings(settings: GvdpSettings, state: AppState, model: GvdpModel) -> RunSettings:
    rho, _ = budget_rho(state)
    return RunSettings(
        k=int(settings.k.get(model.kind, DEFAULT_K[model.kind])), rho=rho,
        resamples=settings.resamples, steps=settings.steps, beta=settings.beta,
        mean_fraction=settings.mean_fraction, level=state.release_level,
    )  # fmt: skip


def _spec_and_data(state: AppState, model: GvdpModel) -> tuple[GroupingSpec, GvdpData]:
    spec = pipeline.grouping_spec(state)
    grouping = pipeline.current_grouping(state)
    data = _prepared(get_dataset(), state.dataset_fingerprint, spec, model, grouping)
    return spec, data


def current_plan() -> GvdpPlan:
    """The GVDP release the session would commit; ``ValueError`` says what to fix."""
    state, settings = get_state(), get_gvdp_settings()
    model = current_model(settings)
    spec, data = _spec_and_data(state, model)
    run = current_settings(settings, state, model)
    return GvdpPlan(
        data=data, header=pipeline.plan_header(state, ZCDP(run.rho)), model=model,
        bounds=current_bounds(settings, model), k=run.k, strategy=settings.strategy,
        resamples=run.resamples, steps=run.steps, beta=run.beta, mean_fraction=run.mean_fraction,
    )  # fmt: skip


# ---- cached computations (keyed on primitives and a seed) ---------------------------------------


@st.cache_data(max_entries=16, show_spinner="Preparing the model's rows…")
def _prepared(_frame, fingerprint: str, spec: GroupingSpec, model: GvdpModel, _grouping):
    """The model's rows per group (``fingerprint`` and ``spec`` stand for the frame and groups)."""
    return prepare_data(_frame, model, _grouping)


def _key(state: AppState, spec: GroupingSpec, model: GvdpModel) -> tuple:
    return (state.dataset_fingerprint, spec, model)


@st.cache_data(max_entries=32, show_spinner="Running GVDP on the confidential data (preview)…")
def _population_preview(_data: GvdpData, key: tuple, bounds, settings, seed: int) -> pd.DataFrame:
    result = run_population(_data, bounds, settings, rng=seed)
    reference = nonprivate_ci(_data.population, _data.model.estimator, settings.level)
    return comparison_frame(_data.model, result, reference)


@st.cache_data(max_entries=32, show_spinner="Running GVDP in every group (preview)…")
def _groups_preview(_data: GvdpData, key: tuple, bounds, settings, seed: int) -> pd.DataFrame:
    grouped = run_groups(_data, bounds, settings, rng=seed)
    return groups_frame(_data.model, grouped, nonprivate(_data, settings.level), _data.group_rows)


@st.cache_data(max_entries=16, show_spinner="Drawing the bag of little bootstraps at several k…")
def _diagnostic(_data: GvdpData, key: tuple, bounds, settings, ks: tuple[int, ...], seed: int):
    result = blb_diagnostic(_data, bounds, settings, ks, rng=seed)
    reference = nonprivate_ci(_data.population, _data.model.estimator, settings.level)
    return result.frame, result.failed, reference.estimate.tolist(), reference.variance.tolist()


@st.cache_data(max_entries=32, show_spinner="Replicating GVDP on the current data…")
def _coverage_current(_data: GvdpData, key: tuple, bounds, settings, replications: int, seed: int):
    coverage = coverage_on_data(_data, bounds, settings, replications=replications, rng=seed)
    return coverage_frame(coverage, _data.model.coefficients)


@st.cache_data(max_entries=32, show_spinner="Replicating GVDP on synthetic samples…")
def _coverage_synthetic(
    kind: str, n: int, coefficients: tuple[str, ...], settings, factor: float,
    replications: int, seed: int,
):  # fmt: skip
    coverage = coverage_synthetic(
        kind, n, len(coefficients), settings, factor=factor, replications=replications, rng=seed
    )
    return coverage_frame(coverage, coefficients)


# ---- Estimator page -----------------------------------------------------------------------------


def render_estimator() -> None:
    """The model, k, public bounds and budget, then previews and the k diagnostic."""
    state, settings = get_state(), get_gvdp_settings()
    st.markdown(
        "GVDP (Covington, He, Honaker & Kamath) gives an **unbiased** private estimate and a "
        "**valid confidence interval** for a mean or regression coefficients. It splits the rows "
        "into k subsets, bootstraps the estimator on each (the *bag of little bootstraps*), and "
        "privately averages the k subset results with CoinPress, which starts from loose public "
        "bounds and tightens them step by step — so nothing is clipped and nothing is biased."
    )
    model = _render_model(settings)
    if model is None:
        return
    try:
        spec, data = _spec_and_data(state, model)
    except (ValueError, TypeError) as exc:
        st.error(f"{exc}", icon=ERROR_ICON)
        return
    for message in data.messages():
        st.caption(f":material/info: {message}")
    _render_strategy(settings, spec)
    k_ok = _render_k(settings, model, data)
    bounds = _render_bounds(settings, model, data)
    run = _render_budget(settings, state, model)
    if not k_ok or bounds is None:
        st.info("Fix the settings above to see the preview.", icon=":material/info:")
        return
    key = _key(state, spec, model)
    _render_preview(settings, state, model, data, bounds, run, key)
    _render_k_diagnostic(settings, state, model, data, bounds, run, key)


def _render_model(settings: GvdpSettings) -> GvdpModel | None:
    st.subheader("1. Model")
    frame = get_dataset()
    kinds = list(MODELS)
    settings.model = st.radio(
        "Model",
        kinds,
        index=kinds.index(settings.model),
        format_func=MODELS.__getitem__,
        horizontal=True,
        key="gvdp.model",
        help="GVDP works for any estimator that can be bootstrapped; these three are built in.",
    )
    kind = settings.model
    st.caption(MODEL_HELP[kind])
    columns = [str(c) for c in frame.columns]
    numeric = {c for c in columns if _is_numeric(frame[c])}

    def label(column: str) -> str:
        return column if column in numeric else f"{column} (text — not usable)"

    current = settings.outcome.get(kind)
    if current not in columns:
        current = next((c for c in columns if c in numeric), columns[0])
    settings.outcome[kind] = st.selectbox(
        "Column to average" if kind == "mean" else "Outcome y",
        columns,
        index=columns.index(current),
        format_func=label,
        key=column_key(kind, "outcome"),
        help="Only numeric columns can be used; text columns are listed but refused.",
    )
    if kind == "mean":
        st.caption("One number per row; the estimate is their average over the rows.")
    elif kind == "ols":
        st.caption("The numeric column the regression explains.")
    else:
        st.caption("A column holding only 0 and 1, e.g. income_over_50k.")
    if kind != "mean":
        chosen = [c for c in settings.covariates.get(kind, []) if c in columns]
        settings.covariates[kind] = st.multiselect(
            "Covariates x₁, x₂, …",
            columns,
            default=chosen,
            format_func=label,
            key=column_key(kind, "covariates"),
            help="The explanatory columns; an intercept is added automatically.",
        )
        st.caption(
            "An intercept is always included. Each covariate adds one coefficient, and GVDP needs "
            "5 rows per coefficient in every subset."
        )
    st.caption(
        "Missing values: a row with a missing or infinite value in any of the model's columns is "
        "dropped (the number dropped is shown)."
    )
    try:
        return current_model(settings)
    except (ValueError, TypeError) as exc:
        st.error(f"{exc}", icon=ERROR_ICON)
        return None


def _render_strategy(settings: GvdpSettings, spec: GroupingSpec) -> None:
    st.subheader("2. Groups")
    options = list(STRATEGIES)
    settings.strategy = st.radio(
        "What the release holds",
        options,
        index=options.index(settings.strategy),
        format_func=lambda s: STRATEGIES[s].capitalize(),
        horizontal=True,
        key="gvdp.strategy",
        help="Groups come from the Strata page. The preview below shows both choices.",
    )
    by = " × ".join(spec.by)
    if settings.strategy == "stratified":
        st.caption(
            f"GVDP runs in every {by} group with the whole ρ — the groups are disjoint, so this "
            "costs one group's ρ (parallel composition) — and the group estimates are "
            "recombined with the public shares at no extra cost."
        )
    else:
        st.caption(f"One GVDP run on all rows, ignoring the {by} groups; it costs ρ.")


def _render_k(settings: GvdpSettings, model: GvdpModel, data: GvdpData) -> bool:
    st.subheader("3. Subsets k")
    kind = model.kind
    most = max(1, data.rows // model.min_rows)
    settings.k[kind] = int(
        st.number_input(
            "k: number of subsets",
            min_value=1,
            value=int(settings.k.get(kind, DEFAULT_K[kind])),
            step=50,
            key=f"gvdp.k.{kind}",
            help="More subsets mean less privacy noise but smaller subsets for the bootstrap.",
        )
    )
    k = settings.k[kind]
    st.caption(
        f"The N = {data.rows:,} rows are split into k subsets of b = N // k rows "
        f"(at most k = {most:,} here: GVDP needs {model.min_rows} rows per subset). Every group "
        "uses the same subset size b, so a group of n rows gets n // b subsets."
    )
    with st.expander("How to choose k (paper §3 and App. G.4)", icon=":material/help:"):
        st.markdown(
            "- **Larger k, less noise.** The k subset results are averaged privately, so the "
            "privacy noise shrinks like 1/k.\n"
            "- **Smaller k, better bootstrap.** Each subset has b = N/k rows. GVDP's guarantees "
            "assume the bootstrap on b rows mimics the estimator's sampling distribution on N rows; "
            "with too few rows it does not (a logistic fit, for one, is biased on small samples).\n"
            "- **The paper's advice:** take the largest k for which the subsets' estimates still "
            "look like the sampling distribution. Try it on similar *public* data: start small "
            "and raise k until the subset estimates start to look different. The paper uses "
            "k = 250–1,000 for 10,000–100,000 rows.\n"
            "- The number of rows N is treated as public (paper §2.2), so k may depend on it at "
            "no privacy cost.\n\n"
            "The diagnostic at the bottom of this page shows the subsets at several k."
        )
    # The resamples slider sits further down; read its newest value so the check is current.
    resamples = int(st.session_state.get("gvdp.resamples", settings.resamples))
    try:
        data.check_k(k, resamples)
    except ValueError as exc:
        st.error(f"{exc}", icon=ERROR_ICON)
        return False
    st.caption(f"With k = {k:,}: subsets of b = {data.rows // k:,} rows.")
    return True


def _number(label: str, value: float, key: str, help: str) -> float:
    return float(st.number_input(label, value=float(value), key=key, format="%g", help=help))


def _render_bounds(
    settings: GvdpSettings, model: GvdpModel, data: GvdpData
) -> GvdpBoundsSpec | None:
    st.subheader("4. Public bounds")
    st.markdown(
        "CoinPress starts from public bounds on the estimate and on its sampling variance "
        "(paper Assumptions 2.6–2.7). They must come from **outside knowledge** — a codebook, "
        "an earlier study, theory — never from these data. They may be very loose: GVDP "
        "tightens them privately, and looser bounds cost a little precision, never bias."
    )
    modes = list(BOUNDS_MODES)
    settings.bounds_mode = st.radio(
        "How to state the bounds",
        modes,
        index=modes.index(settings.bounds_mode),
        format_func=BOUNDS_MODES.__getitem__,
        horizontal=True,
        key="gvdp.bounds_mode",
        help="Both give the same kind of bounds; choose the one your knowledge fits.",
    )
    kind, outcome = model.kind, model.outcome

    def name(coefficient: str) -> str:
        if kind == "mean":
            return f"mean of {coefficient}"
        return coefficient if coefficient == "intercept" else f"coefficient of {coefficient}"

    if settings.bounds_mode == "box":
        st.caption(
            "For each coefficient: a range it surely lies in, and a spread bound σ — its "
            "standard error on n rows is at most σ/√n. For a column known to lie in [L, U], "
            "σ = (U − L)/2 is always safe."
        )
        if kind in BOUNDS_REASONS and (kind, outcome, model.coefficients[0]) in DEMO_BOX:
            st.caption(BOUNDS_REASONS[kind])
        for coefficient in model.coefficients:
            key = (kind, outcome, coefficient)
            low, high, spread = settings.box.get(key, box_defaults(*key))
            st.markdown(
                f"**{coefficient}** — {charts.coefficient_unit(kind, outcome, coefficient)}"
            )
            low_col, high_col, spread_col = st.columns(3)
            prefix = f"gvdp.box.{kind}.{outcome}.{coefficient}"
            with low_col:
                low = _number(f"Lowest plausible {name(coefficient)}", low, f"{prefix}.low",
                              "A value the coefficient cannot be below, known beforehand.")  # fmt: skip
            with high_col:
                high = _number(f"Highest plausible {name(coefficient)}", high, f"{prefix}.high",
                               "A value the coefficient cannot be above, known beforehand.")  # fmt: skip
            with spread_col:
                spread = _number(f"Spread bound σ for the {name(coefficient)}", spread, f"{prefix}.spread",
                                 "Its standard error on n rows is at most σ/√n.")  # fmt: skip
            settings.box[key] = (low, high, spread)
            if spread > 0:
                st.caption(
                    f"With all N = {data.rows:,} rows this allows a standard error up to "
                    f"{spread / data.rows**0.5:.3g}."
                )
        if all((kind, outcome, c) not in DEMO_BOX for c in model.coefficients):
            st.caption(
                ":material/warning: These are placeholder ranges: replace them with what is "
                "publicly known about your columns."
            )
    else:
        st.caption(
            "For each coefficient: a rough public guess of its value and of its spread σ "
            "(standard error ≈ σ/√n), e.g. from an earlier survey. The safety factor c widens "
            "them: the estimate is assumed within c × the guess's size of 0, and the variance "
            "below c × the guessed one. The paper's experiments use c ≈ 100."
        )
        for coefficient in model.coefficients:
            key = (kind, outcome, coefficient)
            guess, spread = settings.guess.get(key, guess_defaults(*key))
            st.markdown(
                f"**{coefficient}** — {charts.coefficient_unit(kind, outcome, coefficient)}"
            )
            guess_col, spread_col = st.columns(2)
            prefix = f"gvdp.guess.{kind}.{outcome}.{coefficient}"
            with guess_col:
                guess = _number(f"Public guess of the {name(coefficient)}", guess, f"{prefix}.value",
                                "Any rough figure from outside these data.")  # fmt: skip
            with spread_col:
                spread = _number(f"Guessed spread σ for the {name(coefficient)}", spread,
                                 f"{prefix}.spread", "Standard error ≈ σ/√n, roughly.")  # fmt: skip
            settings.guess[key] = (guess, spread)
        settings.factor = st.select_slider(
            "Safety factor c",
            options=FACTOR_OPTIONS,
            value=min(FACTOR_OPTIONS, key=lambda v: abs(v - settings.factor)),
            format_func=lambda v: f"{v:g}×",
            key="gvdp.factor",
            help="How far off the guesses may be. Larger is safer and costs a little precision.",
        )
        st.caption(
            "The bounds hold only if the truth is within this factor of your guesses; a factor "
            "that is too small can bias the estimate (check coverage on the Compare page)."
        )
    try:
        return current_bounds(settings, model)
    except (ValueError, TypeError) as exc:
        st.error(f"Public bounds: {exc}", icon=ERROR_ICON)
        return None


def _render_budget(settings: GvdpSettings, state: AppState, model: GvdpModel) -> RunSettings:
    st.subheader("5. Budget")
    _, sentence = budget_rho(state)
    st.markdown(sentence)
    with st.expander("Advanced settings", icon=":material/tune:"):
        settings.resamples = st.slider(
            "Bootstrap resamples r per subset", min_value=2, max_value=50,
            value=int(settings.resamples), key="gvdp.resamples",
            help="How many times each subset is resampled to estimate the variance.",
        )  # fmt: skip
        st.caption("More resamples steady the variance estimate but take longer (paper: 10).")
        settings.steps = st.slider(
            "CoinPress steps t", min_value=1, max_value=10, value=int(settings.steps),
            key="gvdp.steps", help="How many times the public bounds are tightened.",
        )  # fmt: skip
        st.caption("Each step spends a share of ρ; the paper uses t = 5.")
        settings.beta = st.select_slider(
            "Failure probability β", options=BETA_OPTIONS,
            value=min(BETA_OPTIONS, key=lambda v: abs(v - settings.beta)),
            format_func=lambda v: f"{v:g}", key="gvdp.beta",
            help="The chance that CoinPress clips a point and the guarantees fail.",
        )  # fmt: skip
        st.caption("Smaller β makes CoinPress's balls wider, so the noise grows slightly.")
        settings.mean_fraction = st.slider(
            "Share of ρ for the estimate", min_value=0.1, max_value=0.9,
            value=float(settings.mean_fraction), step=0.05, key="gvdp.mean_fraction",
            help="The rest of ρ estimates the variance that sets the interval's width.",
        )  # fmt: skip
        st.caption("Half and half, as in the paper, suits most uses.")
    return current_settings(settings, state, model)


def _pivot(frame: pd.DataFrame) -> pd.DataFrame:
    """A compare frame as one row per coefficient with DP and non-private columns."""
    wide = frame.pivot(index="coefficient", columns="method", values=["estimate", "low", "high"])
    out = pd.DataFrame(
        {
            "DP estimate": wide[("estimate", DP)],
            "DP low": wide[("low", DP)],
            "DP high": wide[("high", DP)],
            "Non-private estimate": wide[("estimate", NON_PRIVATE)],
            "Non-private low": wide[("low", NON_PRIVATE)],
            "Non-private high": wide[("high", NON_PRIVATE)],
        }
    )
    out["Width ratio (DP ÷ non-private)"] = (out["DP high"] - out["DP low"]) / (
        out["Non-private high"] - out["Non-private low"]
    )
    return out.reindex(list(dict.fromkeys(frame["coefficient"]))).reset_index()


def _render_preview(settings, state, model, data, bounds, run, key) -> None:
    st.subheader("6. Preview")
    st.info(PREVIEW_LABEL, icon=PREVIEW_ICON)
    st.caption(
        f"Simulated noise with seed {state.seed} (the Compare page's seed); a release draws "
        "OpenDP noise instead. The non-private estimate uses a robust (sandwich) standard error."
    )
    try:
        started = time.perf_counter()
        frame = _population_preview(data, key, bounds, run, state.seed)
        elapsed = time.perf_counter() - started
    except (ValueError, TypeError) as exc:
        st.error(f"{exc}", icon=ERROR_ICON)
        return
    st.markdown(f"**Whole population** ({data.rows:,} rows, k = {run.k:,})")
    st.plotly_chart(
        charts.comparison_figure(frame, kind=model.kind, outcome=model.outcome, level=run.level),
        key="gvdp.chart.comparison",
    )
    st.markdown(charts.comparison_summary(frame))
    st.dataframe(_pivot(frame), hide_index=True, key="gvdp.table.comparison")
    st.caption(f"Computed in {elapsed:.2f} s (cached: the same settings redraw at once).")

    st.markdown(f"**Per group** (groups from the Strata page, each with the whole ρ = {run.rho:g})")
    problem = data.group_problem(run.k, run.resamples)
    if problem is not None:
        st.warning(f"Per-group estimates are not available: {problem}", icon=":material/warning:")
        return
    try:
        groups = _groups_preview(data, key, bounds, run, state.seed)
    except (ValueError, TypeError) as exc:
        st.warning(f"Per-group estimates are not available: {exc}", icon=":material/warning:")
        return
    coefficients = list(model.coefficients)
    if settings.group_coefficient not in coefficients:
        settings.group_coefficient = coefficients[-1]
    if len(coefficients) > 1:
        settings.group_coefficient = st.selectbox(
            "Coefficient to show per group", coefficients,
            index=coefficients.index(settings.group_coefficient), key="gvdp.group_coefficient",
            help="Coefficients have different units, so one is drawn at a time.",
        )  # fmt: skip
        st.caption("The charts below redraw for the chosen coefficient.")
    coefficient = settings.group_coefficient
    unit = charts.coefficient_unit(model.kind, model.outcome, coefficient)
    units = charts.coefficient_units(model.kind, model.outcome, coefficient)
    y_range = None
    if bounds.mode == "box":
        j = coefficients.index(coefficient)
        y_range = (bounds.low[j], bounds.high[j])
    st.plotly_chart(
        charts.group_figure(groups, coefficient, unit=unit, level=run.level, y_range=y_range),
        key="gvdp.chart.groups",
    )
    st.markdown(charts.group_estimates_summary(groups, coefficient, level=run.level))
    if y_range is not None:
        st.caption(
            "The axis spans the public range of the coefficient; intervals that run past it are "
            "cut at the edge and estimates beyond it are drawn as triangles (hover for values)."
        )
    st.plotly_chart(
        charts.group_width_figure(groups, coefficient, unit=units), key="gvdp.chart.widths"
    )
    st.markdown(charts.group_summary(groups, coefficient))
    with st.expander("Table of the group estimates", icon=":material/table:"):
        st.dataframe(groups[groups["coefficient"] == coefficient], hide_index=True)
    if model.kind != "mean":
        st.caption(
            "“All” is the share-weighted average of the group coefficients. For a regression this "
            "differs from the whole-population coefficient when groups differ."
        )


def _render_k_diagnostic(settings, state, model, data, bounds, run, key) -> None:
    st.subheader("7. Choosing k: the subsets at several k")
    st.info(
        "Non-private curator diagnostic: the subset estimates below are computed from the "
        "confidential data without noise, so never publish them, and prefer to choose k on "
        "public or holdout data: a k tuned on the confidential data depends on it.",
        icon=PREVIEW_ICON,
    )
    st.markdown(
        "Each subset's bootstrap gives an estimate and a standard error. As k grows, the "
        "estimates spread more (each uses fewer rows) — that is expected. Warning signs are a "
        "**centre that drifts away** from the full-data estimate (bias on small subsets) or "
        "**standard errors that drift** from the full-data standard error: then k is too large."
    )
    ks = k_ladder(run.k, data.rows, model.d)
    try:
        started = time.perf_counter()
        frame, failed, estimate, variance = _diagnostic(data, key, bounds, run, ks, state.seed)
        elapsed = time.perf_counter() - started
    except (ValueError, TypeError) as exc:
        st.error(f"{exc}", icon=ERROR_ICON)
        return
    if frame.empty:
        st.warning("The bootstrap could not run at any k tried.", icon=":material/warning:")
        return
    coefficients = list(model.coefficients)
    if settings.diagnostic_coefficient not in coefficients:
        settings.diagnostic_coefficient = coefficients[-1]
    if len(coefficients) > 1:
        settings.diagnostic_coefficient = st.selectbox(
            "Coefficient to diagnose", coefficients,
            index=coefficients.index(settings.diagnostic_coefficient),
            key="gvdp.diagnostic_coefficient", help="One coefficient is drawn at a time.",
        )  # fmt: skip
        st.caption("Check each coefficient: the most fragile one limits k.")
    coefficient = settings.diagnostic_coefficient
    j = coefficients.index(coefficient)
    reference = {"reference_estimate": estimate[j], "reference_se": variance[j] ** 0.5}
    st.plotly_chart(
        charts.k_diagnostic_figure(
            frame, coefficient, chosen_k=run.k,
            unit=charts.coefficient_units(model.kind, model.outcome, coefficient), **reference,
        ),
        key="gvdp.chart.k",
    )  # fmt: skip
    st.markdown(
        charts.k_diagnostic_summary(frame, coefficient, chosen_k=run.k, failed=failed, **reference)
    )
    st.caption(f"k tried: {', '.join(f'{k:,}' for k in ks)}; computed in {elapsed:.2f} s.")


def _coverage_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The coverage frame for people: percentages and plain column names (the nominal level and
    the band are the same for every row and are stated in the summary)."""
    table = frame[["coefficient", "coverage", "low", "high", "mean_width"]].copy()
    table[["coverage", "low", "high"]] = (100 * table[["coverage", "low", "high"]]).round(1)
    return table.rename(
        columns={
            "coverage": "covered (%)", "low": "covered, 95% low (%)",
            "high": "covered, 95% high (%)", "mean_width": "mean interval width",
        }
    )  # fmt: skip


# ---- Compare page -------------------------------------------------------------------------------


def render_compare() -> None:
    """Coverage of the DP intervals over R replications, on the data or synthetic samples."""
    state, settings = get_state(), get_gvdp_settings()
    st.subheader("Do the intervals cover as often as they claim?")
    st.markdown(
        "A 95% interval should contain the truth in 95% of releases. Here GVDP is rerun R times "
        "and we count how often its intervals contain the truth. Nothing here spends budget."
    )
    try:
        model = current_model(settings)
        spec, data = _spec_and_data(state, model)
        bounds = current_bounds(settings, model)
        run = current_settings(settings, state, model)
        data.check_k(run.k, run.resamples)
    except (ValueError, TypeError) as exc:
        st.error(f"{exc} Fix it on the Estimator page.", icon=ERROR_ICON)
        return
    _, sentence = budget_rho(state)
    st.caption(
        f"{MODELS[model.kind]}: **{model.formula}**, k = {run.k:,}, "
        f"{BOUNDS_MODES[bounds.mode].lower()}. {sentence} Change these on the Estimator and "
        "Budget pages."
    )
    sources = list(SOURCES)
    settings.coverage_source = st.radio(
        "Replicate on",
        sources,
        index=sources.index(settings.coverage_source),
        format_func=SOURCES.__getitem__,
        horizontal=True,
        key="gvdp.coverage.source",
        help="The current data test for bias; synthetic data test the intervals' calibration.",
    )
    if settings.coverage_source == "data":
        st.caption(
            "Each replication redraws GVDP's subsets, bootstrap resamples and noise on the same "
            "confidential rows; the truth is the ordinary (non-private) estimate on all rows. "
            "Since the interval also allows for sampling error it should cover that estimate *at "
            "least* 95% of the time; falling below the band signals bias — subsets too small for "
            "the estimator (lower k) or bounds that clip."
        )
    else:
        st.caption(
            "Each replication draws a fresh synthetic sample of the same size from a model whose "
            "true coefficients are known, and runs GVDP with bounds c times looser than the "
            "tightest (the paper's §3 experiment). This checks calibration: coverage should sit "
            "inside the band. Bounds here come from the known synthetic truth, which is allowed "
            "only because these data are not anyone's."
        )
    reps_col, seed_col = st.columns(2)
    kind = model.kind
    with reps_col:
        settings.replications[kind] = st.slider(
            "Replications R", min_value=REPLICATIONS_RANGE[0], max_value=REPLICATIONS_RANGE[1],
            value=int(settings.replications.get(kind, DEFAULT_REPLICATIONS[kind])), step=5,
            key=f"gvdp.coverage.replications.{kind}",
            help="More replications give a narrower band but take longer.",
        )  # fmt: skip
        st.caption("Each replication reruns the whole bootstrap; logistic fits are the slowest.")
    with seed_col:
        state.seed = int(
            st.number_input(
                "Random seed",
                min_value=0,
                value=int(state.seed),
                step=1,
                key="gvdp.coverage.seed",
                help="The same seed gives the same replications.",
            )  # fmt: skip
        )
        st.caption("Change it to check that a result is not a fluke of one simulation.")
    replications = settings.replications[kind]
    try:
        started = time.perf_counter()
        if settings.coverage_source == "data":
            frame = _coverage_current(data, _key(state, spec, model), bounds, run, replications,
                                      state.seed)  # fmt: skip
            truth = "the full-data non-private estimate"
        else:
            settings.synthetic_factor = st.select_slider(
                "Bounds looser than the truth by", options=FACTOR_OPTIONS,
                value=min(FACTOR_OPTIONS, key=lambda v: abs(v - settings.synthetic_factor)),
                format_func=lambda v: f"{v:g}×", key="gvdp.coverage.factor",
                help="The paper uses about 100× (§3) and 10,000× (App. F.3).",
            )  # fmt: skip
            st.caption("GVDP is built to stay valid even when this factor is large.")
            names = synthetic_coefficients(kind, model.d)
            st.caption(
                f"Synthetic model ({data.rows:,} rows, like your data): "
                f"{synthetic_description(kind, model.d)}."
            )
            frame = _coverage_synthetic(kind, data.rows, names, run, settings.synthetic_factor,
                                        replications, state.seed)  # fmt: skip
            truth = "the true synthetic coefficients"
        elapsed = time.perf_counter() - started
    except (ValueError, TypeError) as exc:
        st.error(f"{exc}", icon=ERROR_ICON)
        return
    where = "current data" if settings.coverage_source == "data" else "synthetic data"
    st.plotly_chart(
        charts.coverage_figure(
            frame, title=f"Coverage of the {run.level:.0%} GVDP intervals on the {where}, "
            f"R = {replications:,}",
        ),
        key="gvdp.chart.coverage",
    )  # fmt: skip
    st.markdown(charts.coverage_summary(frame, truth))
    st.dataframe(_coverage_table(frame), hide_index=True)
    st.caption(
        f"Computed in {elapsed:.2f} s for R = {replications:,} (cached: returning to these "
        "settings is instant)."
    )
