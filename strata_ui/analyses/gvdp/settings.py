"""GVDP's settings widgets on the Estimator page: the model and its columns, what the release
holds, the subsets k, the public bounds and the budget (sections 1–5).

Every choice is a field of dpcore's frozen :class:`~dpcore.analyses.gvdp.GvdpSettings`. Choices
kept per model kind (outcome, covariates, k) or per coefficient (bounds) are drawn with a key per
kind or coefficient (:func:`strata_ui.state.widget_key` with parts) and stored with
:meth:`~dpcore.analyses.gvdp.GvdpSettings.with_choice`; column pickers also carry the dataset's
fingerprint, so a new upload starts them afresh. The rest are :func:`strata_ui.widgets.bind`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dpcore.analyses.gvdp import (
    BOUNDS_MODES,
    GVDP,
    MODELS,
    STRATEGIES,
    UNINFORMATIVE,
    GvdpSettings,
)
from dpcore.analyses.gvdp.analysis import DEMO_BOX, BoundsKey
from dpcore.analyses.gvdp.bounds import (
    NEARLY_UNBIASED_ROWS,
    recommended_subset_rows,
    small_subsets_warning,
)
from dpcore.analyses.gvdp.data import GvdpData
from dpcore.analyses.gvdp.groups import RunSettings
from dpcore.analyses.gvdp.model import GvdpBoundsSpec, GvdpModel
from dpcore.foundations.errors import SettingsError
from strata_ui import constants, pipeline
from strata_ui.analyses.gvdp import charts
from strata_ui.state import get_settings, get_state, set_settings, widget_key
from strata_ui.style import plain_number
from strata_ui.text import as_text, as_written
from strata_ui.widgets import bind, show_error, show_problems, stored_on_change

ERROR_ICON = ":material/error:"
ROWS_ICON = ":material/memory:"

MODEL_HELP = {
    "mean": "The average of one numeric column.",
    "ols": "A straight-line fit y = b₀ + b₁x₁ + …: each coefficient is the change in y per unit "
    "of its covariate, others held fixed.",
    "logistic": "A fit of a 0/1 outcome: each coefficient is the change in the log-odds of y = 1 "
    "per unit of its covariate, others held fixed.",
}
OUTCOME_CAPTIONS = {
    "mean": "One number per row; the estimate is their average over the rows.",
    "ols": "The numeric column the regression explains.",
    "logistic": "A column holding only 0 and 1, e.g. income_over_50k.",
}
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
BOX_PARTS = (
    (
        "low",
        "Lowest plausible {name}",
        "A value the coefficient cannot be below, known beforehand.",
    ),
    (
        "high",
        "Highest plausible {name}",
        "A value the coefficient cannot be above, known beforehand.",
    ),
    ("spread", "Spread bound σ for the {name}", "Its standard error on n rows is at most σ/√n."),
)
"""(key part, label, help) of each number of an explicit range: (low, high, per-row spread)."""
GUESS_PARTS = (
    ("value", "Public guess of the {name}", "Any rough figure from outside these data."),
    ("spread", "Guessed spread σ for the {name}", "Standard error ≈ σ/√n, roughly."),
)
"""(key part, label, help) of each number of a guess: (guess, per-row spread)."""
K_ADVICE = (
    "- **Larger k, less noise.** The k subset results are averaged privately, so the "
    "privacy noise shrinks like 1/k.\n"
    "- **Smaller k, better bootstrap.** Each subset has b = N/k rows. GVDP's guarantees "
    "assume the bootstrap on b rows mimics the estimator's sampling distribution on N rows; "
    "with too few rows it does not (a logistic fit, for one, is biased on small samples).\n"
    "- **The paper's advice:** take the largest k for which the subsets' estimates still "
    "look like the sampling distribution. Try it on similar *public* data: start small "
    "and raise k until the subset estimates start to look different. The paper uses "
    "k = 250–1,000 for 10,000–100,000 rows.\n"
    "- **The default rule** (an empty box): subsets of ⌈√N / 3⌉ rows, so k ≈ 3√N, and never "
    "fewer rows per coefficient than the model needs to be nearly unbiased (5 for a mean, 10 "
    "for OLS, 20 for a logistic fit). A subset's estimate carries its bias on b rows, which "
    "weighs √N/b against the interval's standard error; growing b like √N keeps that fixed "
    "while the privacy noise still falls. On skewed earnings-like data, 1,000 subsets of 10 "
    "rows of 10,000 covered 81–94% of the time for a nominal 95%; the rule's 294 subsets of 34 "
    "rows 91–96% (the lower ends on power-law tails).\n"
    "- The number of rows N is treated as public (paper §2.2), so k may depend on it at "
    "no privacy cost.\n\n"
    "The diagnostic at the bottom of this page shows the subsets at several k."
)


@dataclass(frozen=True, eq=False)
class RunInputs:
    """Everything a preview or a coverage run reads: the model, its rows (the cached statistics
    of :func:`strata_ui.pipeline.current_statistics`), the cache key that stands for those rows,
    the public bounds and the run settings."""

    model: GvdpModel
    data: GvdpData
    key: tuple
    bounds: GvdpBoundsSpec
    run: RunSettings


def cache_key(settings: GvdpSettings) -> tuple:
    """What the model's rows depend on (the groups, the model's columns): the key of every cache
    of a run on them."""
    return (pipeline.grouping_key(get_state()), GVDP.statistics_key(settings))


def run_settings(settings: GvdpSettings) -> RunSettings:
    """The inputs of every run at the Budget page's budget and the Release page's level."""
    state = get_state()
    return GVDP.run_settings(settings, pipeline.page_budget(state), state.release_level)


def budget_sentence() -> str:
    """What ρ GVDP runs at, and where it comes from (:meth:`GVDP.describe_budget`)."""
    return GVDP.describe_budget(get_settings(GvdpSettings), pipeline.page_budget(get_state()))


def current_inputs() -> RunInputs:
    """The session's model, rows, bounds and run settings; ``ValueError`` says what to fix."""
    settings = get_settings(GvdpSettings)
    model = GVDP.model(settings)
    data = pipeline.current_statistics(GVDP, settings)
    return RunInputs(
        model, data, cache_key(settings), GVDP.bounds(settings, model), run_settings(settings)
    )


def _store_outcome(outcome: str) -> None:
    _store(get_settings(GvdpSettings).with_choice(outcome=outcome))


def _store_covariates(covariates: list[str]) -> None:
    _store(get_settings(GvdpSettings).with_choice(covariates=tuple(covariates)))


def _store_k(k: float | None) -> None:
    """A typed k, or None (an emptied box): k chosen from the data again."""
    settings = get_settings(GvdpSettings)
    _store(settings.with_choice(automatic_k=True) if k is None else settings.with_choice(k=int(k)))


def _store(settings: GvdpSettings) -> None:
    """Store ``settings`` if they differ from the session's (a rerun then sees them)."""
    if settings != get_settings(GvdpSettings):
        set_settings(settings)


# ---- 1. Model -----------------------------------------------------------------------------------


def render_model() -> GvdpModel | None:
    """The model kind, its outcome and covariates; returns the model, or None with the reason."""
    st.subheader("1. Model")
    kind = bind(
        st.radio, "Model", GvdpSettings, "model", labels=MODELS, horizontal=True,
        help="GVDP works for any estimator that can be bootstrapped; these three are built in.",
        captions=MODEL_HELP,
    )  # fmt: skip
    columns, numeric = _columns()

    def label(column: str) -> str:
        return column if column in numeric else f"{column} (text — not usable)"

    _render_outcome(kind, columns, numeric, label)
    st.caption(OUTCOME_CAPTIONS[kind])
    if kind != "mean":
        _render_covariates(kind, columns, label)
    st.caption(
        "Missing values: a row with a missing or infinite value in any of the model's columns is "
        "dropped (the number dropped is shown)."
    )
    try:
        return GVDP.model(get_settings(GvdpSettings))
    except SettingsError as exc:
        show_problems(exc.problems)
    except (ValueError, TypeError) as exc:
        show_error(exc, icon=ERROR_ICON)
    return None


def _columns() -> tuple[list[str], set[str]]:
    """The data's columns and those a model can use (numbers; for data read where it lies,
    from the columns' kinds, no row read). A column that only numbers the rows is left out."""
    state = get_state()
    numbers = pipeline.row_number_columns(state)
    columns = [c for c in pipeline.column_kinds(state) if c not in numbers]
    return columns, set(pipeline.value_columns(state))


def _column_key(field_name: str, kind: str) -> str:
    """A column picker's key: one per model kind, and per dataset so a new upload starts
    afresh."""
    return widget_key(GvdpSettings, field_name, kind, get_state().dataset_fingerprint)


def _render_outcome(
    kind: str, columns: list[str], numeric: set[str], label: Callable[[str], str]
) -> None:
    settings = get_settings(GvdpSettings)
    current = settings.outcome
    if current not in columns:  # e.g. after an upload: the first column a model can use
        current = next((c for c in columns if c in numeric), columns[0])
    key = _column_key("outcomes", kind)
    outcome = st.selectbox(
        "Column to average" if kind == "mean" else "Outcome y", columns,
        index=columns.index(current), format_func=label, key=key,
        help="Only numeric columns can be used; text columns are listed but refused.",
        **stored_on_change(key, _store_outcome),
    )  # fmt: skip
    _store_outcome(outcome)


def _render_covariates(kind: str, columns: list[str], label: Callable[[str], str]) -> None:
    settings = get_settings(GvdpSettings)
    key = _column_key("covariates", kind)
    covariates = st.multiselect(
        "Covariates x₁, x₂, …", columns,
        default=[c for c in settings.covariate_columns if c in columns], format_func=label,
        key=key, help="The explanatory columns; an intercept is added automatically.",
        **stored_on_change(key, _store_covariates),
    )  # fmt: skip
    _store_covariates(covariates)
    st.caption(
        "An intercept is always included. Each covariate adds one coefficient, and GVDP needs "
        "5 rows per coefficient in every subset."
    )


# ---- 2. Groups ----------------------------------------------------------------------------------


def render_strategy() -> None:
    """Per group and recombined, or the whole population only."""
    st.subheader("2. Groups")
    strategy = bind(
        st.radio, "What the release holds", GvdpSettings, "strategy", options=list(STRATEGIES),
        format_func=lambda s: STRATEGIES[s].capitalize(), horizontal=True,
        help="Groups come from the Strata page. The preview below shows both choices.",
    )  # fmt: skip
    by = " × ".join(pipeline.grouping_spec(get_state()).by)
    if strategy == "stratified":
        st.caption(
            f"GVDP runs in every {as_text(by)} group with the whole ρ — the groups are disjoint, so this "
            "costs one group's ρ (parallel composition) — and the group estimates are "
            "recombined with the public shares at no extra cost."
        )
    else:
        st.caption(f"One GVDP run on all rows, ignoring the {as_text(by)} groups; it costs ρ.")


# ---- 3. Subsets k -------------------------------------------------------------------------------


def render_k(model: GvdpModel, data: GvdpData) -> DeltaGenerator:
    """The current model's k; returns where :func:`render_k_check` draws its check, which needs
    the resamples chosen further down."""
    st.subheader("3. Subsets k")
    settings = get_settings(GvdpSettings)
    key = widget_key(GvdpSettings, "ks", model.kind)
    automatic = data.subsets(None)
    k = st.number_input(
        "k: number of subsets", min_value=constants.GVDP_SUBSETS_MIN, value=settings.k,
        step=50, key=key, placeholder=f"chosen from the rows: {automatic:,}",
        help="More subsets mean less privacy noise but smaller subsets for the bootstrap. "
        "Leave the box empty to have k chosen from the number of rows.",
        **stored_on_change(key, _store_k),
    )  # fmt: skip
    _store_k(k)
    most = max(1, data.rows // model.min_rows)
    b = recommended_subset_rows(data.rows, model.estimator, model.d)
    if k is None:
        st.caption(
            f"Chosen from the N = {data.rows:,} rows: subsets of b = ⌈√N / 3⌉ rows, at least "
            f"{NEARLY_UNBIASED_ROWS[model.estimator]} per coefficient (here {b:,}), so "
            f"k = {automatic:,}; each group gets its own k the same way from its own rows. "
            "Type a k to choose it yourself."
        )
    else:
        st.caption(
            f"The N = {data.rows:,} rows are split into k subsets of b = N // k rows "
            f"(at most k = {most:,} here: GVDP needs {model.min_rows} rows per subset). Every "
            "group uses the same subset size b, so a group of n rows gets n // b subsets. "
            f"Empty the box to have k chosen from the rows ({automatic:,} here)."
        )
        warning = small_subsets_warning(data.rows, int(k), model.estimator, model.d)
        if warning:
            st.warning(warning, icon=":material/warning:")
    with st.expander("How to choose k (paper §3 and App. G.4)", icon=":material/help:"):
        st.markdown(K_ADVICE)
    return st.container()


def render_k_check(where: DeltaGenerator, data: GvdpData, run: RunSettings) -> bool:
    """Whether k suits the data (:meth:`GvdpData.check_k`), said in section 3 (``where``)."""
    with where:
        try:
            data.check_k(run.k, run.resamples)
        except ValueError as exc:
            show_error(exc, icon=ERROR_ICON)
            return False
        k = data.subsets(run.k, run.resamples)
        st.caption(f"With k = {k:,}: subsets of b = {data.rows // k:,} rows.")
    return True


# ---- 4. Public bounds ---------------------------------------------------------------------------


def render_bounds(model: GvdpModel, data: GvdpData) -> GvdpBoundsSpec | None:
    """Public bounds on every coefficient, as ranges or as guesses × a factor; returns them, or
    None with the reason."""
    st.subheader("4. Public bounds")
    st.markdown(
        "CoinPress starts from public bounds on the estimate and on its sampling variance "
        "(paper Assumptions 2.6–2.7). They must come from **outside knowledge** — a codebook, "
        "an earlier study, theory — never from these data. They may be very loose: GVDP "
        "tightens them privately, and looser bounds cost a little precision, never bias."
    )
    mode = bind(
        st.radio, "How to state the bounds", GvdpSettings, "bounds_mode",
        labels=BOUNDS_MODES, horizontal=True,
        help="Both give the same kind of bounds; choose the one your knowledge fits.",
    )  # fmt: skip
    if mode == "box":
        _render_box(model, data)
        _render_box_source()
    else:
        _render_guess(model)
    try:
        return GVDP.bounds(get_settings(GvdpSettings), model)
    except (ValueError, TypeError) as exc:
        st.error(f"Public bounds: {as_written(exc)}", icon=ERROR_ICON)
        return None


BOX_SOURCES = {
    "typed": "Use these ranges as the box",
    "private": "Find a tighter box privately within them",
}
BOX_SOURCE_CAPTIONS = {
    "typed": "GVDP starts its search from the ranges above, as typed.",
    "private": "A small private pass (a share of ρ) looks at a bag of little bootstraps of "
    "its own: the median of the subsets' estimates and of their standard errors give each "
    "coefficient a box and a spread bound within the ranges above; GVDP runs in that box with "
    "the rest of ρ. For data whose coefficients nobody can guess closely.",
}


def _render_box_source() -> None:
    """Typed box, or a box found privately within it (and the share of ρ that pays for it)."""
    source = bind(
        st.radio, "The box GVDP starts from", GvdpSettings, "box_source", labels=BOX_SOURCES,
        captions=BOX_SOURCE_CAPTIONS,
        help="A box ten thousand times too wide makes CoinPress's noise as wide, and every "
        "interval wider than the box is withheld.",
    )  # fmt: skip
    if source == "private":
        fraction = bind(
            st.select_slider, "Share of ρ that finds the box", GvdpSettings, "box_fraction",
            format_func="{:.0%}".format,
        )  # fmt: skip
        st.caption(
            f"The box costs {fraction:.0%} of the release's ρ and GVDP runs at the rest "
            "(sequential composition); in every group at once, the groups being disjoint. "
            "The Compare page's coverage and the planner use a typed box so far."
        )


def _name(kind: str, coefficient: str) -> str:
    """A coefficient in a widget label: "mean of age", "intercept", "coefficient of age"."""
    if kind == "mean":
        return f"mean of {coefficient}"
    return coefficient if coefficient == "intercept" else f"coefficient of {coefficient}"


def _render_row(field_name: str, key: BoundsKey, row: tuple, parts: tuple, name: str) -> tuple:
    """One coefficient's bounds: a number input per part (:data:`BOX_PARTS`,
    :data:`GUESS_PARTS`), side by side, keyed by the coefficient and the part."""
    typed = []
    boxes = zip(st.columns(len(parts)), row, parts, strict=True)
    for index, (column, value, (part, label, help)) in enumerate(boxes):
        key_of_part = widget_key(GvdpSettings, field_name, *key, part)
        store = functools.partial(_store_bound_part, field_name, key, index)
        typed.append(
            float(
                column.number_input(
                    label.format(name=name),
                    value=float(value),
                    min_value=-constants.BOUND_MAGNITUDE_MAX,
                    max_value=constants.BOUND_MAGNITUDE_MAX,
                    format="%g",
                    help=help,
                    key=key_of_part,
                    **stored_on_change(key_of_part, store),
                )  # fmt: skip
            )
        )
    return tuple(typed)


def _store_bound_part(field_name: str, key: BoundsKey, index: int, value: float) -> None:
    """Store one box of a coefficient's row of bounds (``field_name`` "box" or "guess")."""
    settings = get_settings(GvdpSettings)
    row = list(getattr(settings, f"{field_name}_row")(key))
    row[index] = float(value)
    _store(settings.with_choice(**{field_name: (key, tuple(row))}))


def _heading(model: GvdpModel, coefficient: str) -> None:
    unit = charts.coefficient_unit(model.kind, model.outcome, coefficient)
    st.markdown(f"**{as_text(coefficient)}** — {as_written(unit)}")


def _render_box(model: GvdpModel, data: GvdpData) -> None:
    kind, outcome = model.kind, model.outcome
    st.caption(
        "For each coefficient: a range it surely lies in, and a spread bound σ — its "
        "standard error on n rows is at most σ/√n. For a column known to lie in [L, U], "
        "σ = (U − L)/2 is always safe."
    )
    if kind in BOUNDS_REASONS and (kind, outcome, model.coefficients[0]) in DEMO_BOX:
        st.caption(BOUNDS_REASONS[kind])
    for coefficient in model.coefficients:
        key = (kind, outcome, coefficient)
        settings = get_settings(GvdpSettings)
        _heading(model, coefficient)
        row = _render_row("box", key, settings.box_row(key), BOX_PARTS, _name(kind, coefficient))
        if row != settings.box_row(key):
            set_settings(settings.with_choice(box=(key, row)))
        spread = row[2]
        if spread > 0:
            st.caption(
                f"With all N = {data.rows:,} rows this allows a standard error up to "
                f"{plain_number(spread / data.rows**0.5, 3)}."
            )
    if all((kind, outcome, c) not in DEMO_BOX for c in model.coefficients):
        st.caption(
            ":material/warning: These are placeholder ranges: replace them with what is "
            "publicly known about your columns."
        )


def _render_guess(model: GvdpModel) -> None:
    kind, outcome = model.kind, model.outcome
    st.caption(
        "For each coefficient: a rough public guess of its value and of its spread σ "
        "(standard error ≈ σ/√n), e.g. from an earlier survey. The safety factor c widens "
        "them: the estimate is assumed within c × the guess's size of 0, and the variance "
        "below c × the guessed one. The paper's experiments use c ≈ 100."
    )
    for coefficient in model.coefficients:
        key = (kind, outcome, coefficient)
        settings = get_settings(GvdpSettings)
        _heading(model, coefficient)
        row = _render_row("guess", key, settings.guess_row(key), GUESS_PARTS, _name(kind, coefficient))  # fmt: skip
        if row != settings.guess_row(key):
            set_settings(settings.with_choice(guess=(key, row)))
    factor_slider(
        "Safety factor c", GvdpSettings, "factor",
        help="How far off the guesses may be. Larger is safer and costs a little precision.",
        caption="The bounds hold only if the truth is within this factor of your guesses; a "
        "factor that is too small can bias the estimate (check coverage on the Compare page).",
    )  # fmt: skip


def factor_slider(label: str, cls: type, field_name: str, *, help: str, caption: str) -> None:
    """How many times too loose bounds are, from :data:`~strata_ui.constants.GVDP_FACTORS` shown as "100×": the
    guesses' safety factor here, the synthetic run's looseness on the Compare page."""
    bind(
        st.select_slider, label, cls, field_name, format_func=lambda v: f"{v:g}×", help=help,
        caption=caption,
    )  # fmt: skip


# ---- 5. Budget ----------------------------------------------------------------------------------


def render_budget() -> RunSettings:
    """The ρ GVDP runs at and the advanced settings; returns the run settings."""
    st.subheader("5. Budget")
    st.markdown(budget_sentence())
    with st.expander("Advanced settings", icon=":material/tune:"):
        bind(
            st.slider, "Bootstrap resamples r per subset", GvdpSettings, "resamples",
            help="How many times each subset is resampled to estimate the variance.",
            caption="More resamples steady the variance estimate but take longer (paper: 10).",
        )  # fmt: skip
        bind(
            st.slider, "CoinPress steps t", GvdpSettings, "steps",
            help="How many times the public bounds are tightened.",
            caption="Each step spends a share of ρ; the paper uses t = 5.",
        )  # fmt: skip
        bind(
            st.select_slider, "Failure probability β", GvdpSettings, "beta",
            format_func=lambda v: f"{v:g}",
            help="The chance that CoinPress clips a point and the guarantees fail.",
            caption="Smaller β makes CoinPress's balls wider, so the noise grows slightly.",
        )  # fmt: skip
        bind(
            st.slider, "Share of ρ for the estimate", GvdpSettings, "mean_fraction",
            step=0.05,
            help="The rest of ρ estimates the variance that sets the interval's width.",
            caption="Half and half, as in the paper, suits most uses.",
        )  # fmt: skip
    return run_settings(get_settings(GvdpSettings))


# ---- the Release page ---------------------------------------------------------------------------


def render_uninformative_choice() -> None:
    """The Release page's choice for groups too small for an informative GVDP release."""
    bind(
        st.radio, "Groups with too few subsets for this budget", GvdpSettings, "uninformative",
        labels=UNINFORMATIVE,
        help="A group split into too few subsets gets an estimate noisier than one subset's, "
        "and an interval that can be wider than the public range. Withheld groups are listed "
        "with the reason in the table and every download; refusing stops the commit until "
        "every group has enough subsets.",
    )  # fmt: skip
