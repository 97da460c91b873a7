"""The Plan page's sections, over :mod:`dpcore.planner` and the analysis' planner hooks: the
accuracy a user needs → the budget it costs, checked by simulation. The frontier of
stratification choices is :mod:`strata_ui.frontier_ui`."""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from dpcore.analyses import PlannerUnavailable, get
from dpcore.analyses.base import Analysis
from dpcore.foundations.accounting import (
    ZCDP,
    Budget,
    PureDP,
    as_zcdp,
    format_components,
    scale,
)
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.ledger import Ledger
from dpcore.planner import (
    AccuracyTarget,
    BudgetAnswer,
    ErrorModel,
    PlannerCost,
    duration_text,
)
from strata_ui import budget_language, charts_planner, constants, pipeline
from strata_ui.budget_control import set_page_budget
from strata_ui.budget_language import budget_text
from strata_ui.planner_fits import render_what_fits
from strata_ui.release_ui import large_budget_warning
from strata_ui.shared_results import kept, kept_or_run
from strata_ui.state import (
    AppState,
    get_settings,
    get_state,
    reset_settings,
    update_settings,
    widget_key,
)
from strata_ui.style import plain_number, rounded_up
from strata_ui.text import as_text, as_written, in_label
from strata_ui.widgets import bind, stored_on_change, table_height

__all__ = [
    "PlannerView",
    "cached_error_model",
    "curator_reasons",
    "error_model_for",
    "render_answer",
    "render_check",
    "run_check",
    "target_inputs",
]

LEVELS = constants.RELEASE_LEVELS
QUICK_MODEL_S = 5.0
"""An error model expected to take longer is built only when the user asks (a button)."""
QUICK_CHECK_S = 0.05
"""A check expected to take longer runs only when asked: a change of target stays instant."""


@dataclass(frozen=True)
class PlannerView:
    """The Plan page's choices (the target, and the frontier's candidate columns)."""

    relative: bool = False
    half_widths: tuple[tuple[str, float], ...] = ()
    """The ± targets typed so far, by what they are measured in (a column's units, a ratio's),
    so that switching analyses does not carry ±2 hours over to a ratio."""
    percent: float = 5.0
    level: float = 0.95
    include_bias: bool = False
    frontier_columns: tuple[str, ...] | None = None  # None: the Strata page's columns


def _symbol(model: ErrorModel) -> str:
    return "ε" if model.unit == "epsilon" else "ρ"


def value_unit(settings: object, *, markdown: bool = True, model: ErrorModel | None = None) -> str:
    """How the value's units read in labels: the value column's name (as code in markdown),
    where there is one; else what ``model`` says its estimates are measured in."""
    value = getattr(settings, "value", None)
    if not value:
        return (model.measured_in if model is not None else "") or "the value's units"
    return f"`{value}`" if markdown else value


def target_inputs(unit: str, model: ErrorModel) -> AccuracyTarget:
    """The target widgets; ``ValueError`` with a user's message when the target is impossible.
    The clipping bias is offered only when ``model`` knows it."""
    kind, amount, level = st.columns(3)
    with kind:
        relative = bind(
            st.radio, "Accuracy as", PlannerView, "relative",
            labels={False: f"± in {in_words(unit)}", True: "± % of each group's true value"},
            help="A percentage needs each group's true value, which is confidential: the "
            "answer is then a curator preview.",
        )  # fmt: skip
    with amount:
        if relative:
            percent = bind(
                st.number_input, "Within ± (% of the true value)", PlannerView, "percent",
                min_value=0.0, step=1.0, format="%.2f",
            )  # fmt: skip
            amount_value = percent / 100
        else:
            amount_value = _half_width_input(unit, model)
    with level:
        confidence = bind(
            st.select_slider, "With probability", PlannerView, "level", options=LEVELS,
            format_func=lambda v: f"{v:.0%}",
        )  # fmt: skip
    if model.bias is None:
        return AccuracyTarget(amount_value, relative, confidence)
    include_bias = bind(
        st.checkbox, "Count the clipping bias too (curator preview: reads the confidential data)",
        PlannerView, "include_bias",
        help="Off: the target is on the noise, which is what a release's interval covers. On: "
        "the target is on the distance to the true mean, so values outside the public bounds "
        "count too.",
    )  # fmt: skip
    return AccuracyTarget(amount_value, relative, confidence, include_bias)


def _half_width_input(unit: str, model: ErrorModel) -> float:
    """The ± target in ``unit``: the one typed for this unit before, else the model's typical
    target (a round share of the public range); one widget per unit, so each keeps its own."""
    typed = dict(get_settings(PlannerView).half_widths)
    key = widget_key(PlannerView, "half_widths", unit)
    store = functools.partial(_store_half_width, unit)
    value = st.number_input(
        f"Within ± (in {in_words(unit)})", min_value=0.0,
        value=typed.get(unit, model.typical_half_width),
        step=model.typical_half_width / 4, format="%.6g", key=key,
        **stored_on_change(key, store),
    )  # fmt: skip
    store(value)
    return value


def in_words(unit: str) -> str:
    """``unit`` for a widget's label, which a screen reader reads as written: a column's name
    (:func:`value_unit`'s code span) in words (:func:`~strata_ui.text.in_label`), not in
    backticks; a unit the code wrote as it is; anything else escaped."""
    name = re.fullmatch(r"`([^`]*)`", unit)
    if name:
        return in_label(name[1])
    return as_text(unit) if "`" in unit else unit


def _store_half_width(unit: str, value: float) -> None:
    typed = dict(get_settings(PlannerView).half_widths)
    update_settings(PlannerView, half_widths=tuple({**typed, unit: value}.items()))


@st.cache_data(max_entries=16, show_spinner="Modelling each estimate's error…")
def _error_model(name: str, _stats, grouping_key: tuple, settings, budget_kind: str) -> ErrorModel:
    return get(name).error_model(_stats, settings, budget_kind=budget_kind)


@st.cache_data(max_entries=16, show_spinner="Timing one simulated release…")
def _cost(
    name: str, _stats, grouping_key: tuple, settings, budget_kind: str, check_releases: int
) -> PlannerCost:
    return get(name).planner_cost(_stats, settings, check_releases, budget_kind=budget_kind)


@dataclass(frozen=True)
class _Inputs:
    """What an error model is built from: the analysis, its settings and statistics, the data
    and groups they come from (``grouping_key``) and the kind of budget."""

    analysis: Analysis
    settings: object
    stats: object
    grouping_key: tuple
    budget_kind: str

    @property
    def cost(self) -> PlannerCost:
        return _cost(self.analysis.name, self.stats, self.grouping_key, self.settings,
                     self.budget_kind, get_state().replicates)  # fmt: skip

    def cached_model(self) -> ErrorModel:
        return _error_model(self.analysis.name, self.stats, self.grouping_key, self.settings,
                            self.budget_kind)  # fmt: skip

    @property
    def slow_key(self) -> tuple:
        """The key a slow model is kept by (:mod:`strata_ui.shared_results`, shared by every session)."""
        return ("plan-model", self.analysis.name, *self.grouping_key, self.settings,
                self.budget_kind)  # fmt: skip


def _inputs(analysis: Analysis, settings: object, spec: GroupingSpec, budget_kind: str) -> _Inputs:
    stats = pipeline.statistics_for(analysis, settings, spec)
    state = get_state()
    grouping_key = (state.dataset_fingerprint, spec, pipeline.privacy_unit(state))
    return _Inputs(analysis, settings, stats, grouping_key, budget_kind)


def cached_error_model(analysis: Analysis, settings: object) -> ErrorModel | None:
    """The analysis' error model for the session's data, groups and kind of budget, cached on
    all three. A model that simulates for seconds or more (:meth:`Analysis.planner_cost`) waits
    for a button that says how long it takes (None until pressed), runs with a progress bar,
    and is kept for every session (:mod:`strata_ui.shared_results`)."""
    state = get_state()
    inputs = _inputs(analysis, settings, pipeline.grouping_spec(state), state.budget_kind)
    cost = inputs.cost
    if cost.model_seconds <= QUICK_MODEL_S:
        return inputs.cached_model()
    if kept(inputs.slow_key) is None and not _asked(_simulate_prompt, cost):
        return None
    return kept_or_run(
        inputs.slow_key, "Simulating releases for the planner",
        lambda progress: analysis.error_model(
            inputs.stats, settings, budget_kind=inputs.budget_kind, progress=progress
        ),
    )  # fmt: skip


def _simulate_prompt(cost: PlannerCost) -> bool:
    st.info(
        f"No formula gives this error, so the planner simulates it: {cost.simulation}, "
        f"{duration_text(cost.model_seconds)} in all (2 cores shared). It runs once for these "
        "data and settings and is then kept, so that changing the target afterwards is "
        "instant. Every simulated release reads the confidential rows: what it shows is a "
        "curator preview.",
        icon=":material/schedule:",
    )
    return st.button(
        f"Simulate ({duration_text(cost.model_seconds)})", key="plan.simulate",
        icon=":material/play_arrow:", type="primary",
    )  # fmt: skip


def error_model_for(
    analysis: Analysis, settings: object, spec: GroupingSpec, budget_kind: str
) -> ErrorModel:
    """As :func:`cached_error_model`, for the groups of ``spec`` and a kind of budget (a planned
    release's); a slow model only once simulated on the Plan page, else
    :class:`PlannerUnavailable` saying so."""
    inputs = _inputs(analysis, settings, spec, budget_kind)
    if inputs.cost.model_seconds <= QUICK_MODEL_S:
        return inputs.cached_model()
    model = kept(inputs.slow_key)
    if model is None:
        raise PlannerUnavailable(
            "This release's error is known only by simulation, which is not at hand now: "
            "choose its settings and press Simulate on the Plan page, then come back."
        )
    return model


def run_check(
    analysis: Analysis, settings: object, answer: BudgetAnswer
) -> tuple[pd.DataFrame, int] | None:
    """The check by simulation of ``answer`` and the simulated releases it ran: at once when
    quick, else after a button that says how long it takes (None until pressed), then kept."""
    state = get_state()
    inputs = _inputs(analysis, settings, pipeline.grouping_spec(state), state.budget_kind)
    cost = inputs.cost
    replicates = analysis.check_replicates(settings, state.replicates)
    if answer.changes:  # the releases the answer plans: its split of the budget
        settings = dataclasses.replace(settings, **answer.changes)

    def check(**progress) -> pd.DataFrame:
        return analysis.check_accuracy(
            inputs.stats, settings, answer.budget, answer.target, replicates=replicates,
            rng=state.seed, **progress,
        )  # fmt: skip

    if cost.check_seconds <= QUICK_CHECK_S:
        return check(), replicates
    key = ("plan-check", *inputs.slow_key, str(answer.budget), answer.target, replicates,
           state.seed)  # fmt: skip
    if kept(key) is None and not _asked(_check_prompt, replicates, cost.check_seconds):
        return None
    return kept_or_run(key, "Checking the answer", lambda p: check(progress=p)), replicates


def _asked(prompt, *args) -> bool:
    """Whether the user pressed the button ``prompt(*args)`` draws; once pressed, the prompt
    gives way to the progress bar and the result."""
    slot = st.empty()
    with slot.container():
        asked = prompt(*args)
    if asked:
        slot.empty()
    return asked


def _check_prompt(replicates: int, seconds: float) -> bool:
    st.caption(
        "The answer above is read off the simulated budgets, with no new simulation. Check it "
        f"with {replicates} fresh simulated releases at that budget."
    )
    label = f"Check it ({duration_text(seconds)})"
    return st.button(label, key="plan.check", icon=":material/play_arrow:")


def answer_budget(budget: Budget, state: AppState) -> Budget:
    """The planner's answer as the one number every line of the answer shows: in the Budget
    page's unit (ρ = ε²/2 for an ε answer when the user works in ρ) and rounded up once to
    three significant digits, so that it still meets the target."""
    if state.budget_kind == "zcdp" and isinstance(budget, PureDP):
        budget = as_zcdp(budget, "The planner")
    if isinstance(budget, PureDP):
        return PureDP(rounded_up(budget.epsilon))
    return ZCDP(rounded_up(budget.rho))


def curator_reasons(model: ErrorModel, target: AccuracyTarget) -> list[str]:
    """The confidential numbers an answer for ``target`` reads, in plain words (empty: none)."""
    reasons = list(model.reads)
    if target.relative:
        reasons.append("each group's true value (for a percentage)")
    if target.include_bias:
        reasons.append("the clipping bias")
    if not model.sizes_public:
        reasons.append(
            "the group sizes, which this release keeps private (each group's needed budget "
            "reveals its size)"
        )
    return reasons


def render_answer(
    answer: BudgetAnswer,
    model: ErrorModel,
    ledger: Ledger | None,
    analysis: Analysis,
    settings: object,
) -> None:
    """The smallest budget, the estimate that sets it, what the ledger says, and the chart."""
    reasons = curator_reasons(model, answer.target)
    if reasons:
        st.info(
            "Curator preview, not differentially private: this answer reads "
            + ", ".join(map(as_written, reasons)) + ".",
            icon=":material/visibility:",
        )  # fmt: skip
    if answer.budget is None and answer.unreachable == (model.limit_reason,):
        st.warning(
            f"No budget meets this target: {as_written(model.limit_reason)}; or loosen the target.",
            icon=":material/warning:",
        )
        return
    if answer.budget is None:
        st.warning(
            "No budget meets this target: "
            + "; ".join(map(as_written, answer.unreachable))
            + f". {as_written(model.unreachable_advice)}",
            icon=":material/warning:",
        )
        return
    for note in answer.notes:
        st.caption(note)
    state = get_state()
    budget = answer_budget(answer.budget, state)
    st.metric(
        "Smallest budget that meets the target",
        budget_text(budget),
        help="Rounded up once, to three significant digits, so that the budget you read still "
        "meets the target; every line below and the button use this same number.",
    )
    st.markdown(
        f"Set by **{as_text(answer.binding)}**: it needs the most budget; every other estimate meets the "
        "target with room to spare."
    )
    st.markdown(budget_language.charge_line(budget, analysis.cost(settings, budget)))
    if answer.parts:
        st.markdown("**How the budget splits:** " + _parts_text(answer.parts, budget))
    warning = large_budget_warning(budget)
    if warning:
        st.warning(warning, icon=":material/warning:")
    if render_what_fits(model, answer, budget, analysis, settings, ledger):
        _adopt_budget_button(budget, state, answer.changes, type(settings))
    symbol = _symbol(model)
    st.plotly_chart(
        charts_planner.needed_budget_chart(answer.table, symbol, answer.binding),
        key="plan.needed_chart",
    )
    st.caption(charts_planner.needed_budget_summary(answer.table, symbol, answer.binding))
    _answer_table(answer, symbol)


def _answer_table(answer: BudgetAnswer, symbol: str) -> None:
    table = answer.table.rename(
        columns={"target": "target (±)", "error at budget": "error at this budget (±)"}
    )
    st.dataframe(
        table.style.format(
            {
                "size": "{:,.0f}",
                "target (±)": plain_number,
                f"needed {symbol}": charts_planner.needed_text,
                "error at this budget (±)": plain_number,
            }
        ),
        hide_index=True,
        height=table_height(len(table)),
    )


def check_sentence(row: pd.Series, replicates: int, binding: str, level: float) -> str:
    """What the binding estimate's simulated check means: the answer is the budget at which it
    meets the target with probability ``level``, so an exact model lands in the binomial band
    of ``level`` over ``replicates`` releases (chance alone moves it that much); above the
    band the budget is on the safe side, below it the model promised too much."""
    met, low, high = row["met"], row["band_low"], row["band_high"]
    said = (
        f"In {replicates:,} simulated releases at this budget, **{as_text(binding)}** met the "
        f"target {met:.1%} of the time. The answer is the budget at which it meets the target "
        f"{level:.0%} of the time; by chance alone, {replicates:,} releases of an exact answer "
        f"meet it between {low:.1%} and {high:.1%} of the time (95 times in 100)."
    )
    if met > high:
        verdict = (
            " Above that range: the planner's model overstates this error (see what it "
            "assumes above), so the budget is on the safe side and a smaller one may do; "
            "compare budgets on the Compare page before you spend less."
        )
    elif met < low:
        verdict = " Below that range: the answer promised more than it delivers (see below)."
    else:
        verdict = " Within that range: the answer is as calibrated as the check can tell."
    return said + verdict + " Every other estimate should meet the target at least as often."


def _parts_text(parts: tuple[tuple[str, float], ...], cost: Budget) -> str:
    """``5% finding the bounds (ε = 0.03), 95% the means (ε = 0.6)``: each part of the answer's
    budget, and what it is in the budget's unit (sequential composition: the parts add up)."""
    return ", ".join(
        f"{share:.0%} {what} ({format_components(scale(cost, share).components())})"
        for what, share in parts
    )


def _adopt_budget_button(
    budget: Budget, state: AppState, changes: dict | None = None, settings_type: type | None = None
) -> None:
    """Make the answer the Budget page's budget, exactly as shown (and the analysis' settings
    the answer's split, when the planner chose one)."""
    label = f"Use {budget_text(budget)} on the Budget page" + (" and this split" if changes else "")
    if st.button(label, key="plan.adopt_budget"):
        switched = state.budget_kind != ("pure" if isinstance(budget, PureDP) else "zcdp")
        set_page_budget(state, budget)
        if changes and settings_type is not None:
            reset_settings(settings_type, **changes)
        symbol = "ε" if isinstance(budget, PureDP) else "ρ"
        st.success(
            f"The next release's budget is now {budget_text(budget)}"
            + (f"; the Budget page now counts in {symbol}" if switched else "")
            + ("; the release splits it as planned." if changes else "."),
            icon=":material/check:",
        )


def render_check(
    table: pd.DataFrame, replicates: int, binding: str, target: AccuracyTarget
) -> None:
    """How often simulated releases at the answer met the target, per estimate."""
    row = table.set_index("estimate").loc[binding]
    st.markdown(check_sentence(row, replicates, binding, target.level))
    short = table[table["met"] < table["band_low"]]
    if len(short):
        st.warning(
            f"{len(short)} of {len(table)} estimates meet the target less often than promised "
            f"(worst: {short['met'].min():.1%}): the planner's model is an approximation that "
            "does not hold this far (see what it assumes above). Tighten the target, or use a "
            "larger budget than the answer and check it on the Compare page.",
            icon=":material/warning:",
        )
    shown = table[["estimate", "target", "met"]].rename(
        columns={"target": "target (±)", "met": "met in simulated releases"}
    )
    st.dataframe(
        shown.style.format({"target (±)": plain_number, "met in simulated releases": "{:.1%}"}),
        hide_index=True,
        height=table_height(len(shown)),
    )
