"""The mean's Compare page: stratified against whole-population estimates, by simulation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.analyses.mean import ESTIMATOR_LABELS, MEAN, MeanSettings, MeanStudy
from dpcore.analyses.mean.found_accuracy import bounds_costs
from dpcore.analyses.mean.simulate import summarize_sweep
from dpcore.analyses.mean.strategies import STRATEGIES, Strategy
from dpcore.foundations.accounting import Budget
from strata_ui import constants, pipeline, url_state
from strata_ui.analyses.mean import bounds_charts, charts
from strata_ui.budget_control import compare_budget, compare_slider
from strata_ui.group_selection import MAX_SIDE_BY_SIDE
from strata_ui.shared_results import SharedResults
from strata_ui.state import get_settings, get_state
from strata_ui.style import plain_number
from strata_ui.text import as_text, as_written
from strata_ui.widgets import (
    attribute_widget,
    bind,
    group_search,
    quiet_progress,
    seed_input,
    show_error,
)

VANILLA = ("global_only", "global_and_groups")
METRIC_LABELS = {
    "global": "Population error",
    "worst group": "Worst-group error",
    "parity": "Parity error",
}


@dataclass(frozen=True)
class MeanView:
    """How the mean's Compare page shows the simulations (simulation only; never spends)."""

    vanilla_strategy: Literal["global_only", "global_and_groups"] = "global_only"
    log_axis: bool = False
    sweep_metric: Literal["global", "worst group", "parity"] = "parity"
    group_search: str = ""  # words of group names to add to a chart of many groups
    measure: Literal["relative", "absolute"] = "relative"


MEASURES = {
    "relative": "% of the true value",
    "absolute": "% of the public range (absolute error)",
}


MAX_STUDIES = 128
"""Simulations kept for every session (a slider's positions for several settings)."""


@st.cache_resource(show_spinner=False)
def _studies() -> SharedResults:
    """Every session's simulations, by all they depend on (:func:`study`)."""
    return SharedResults(MAX_STUDIES)


def study(
    settings: MeanSettings, strategy: Strategy, budget: Budget, *, per_group: bool = True
) -> MeanStudy:
    """The kept simulation of ``strategy`` at ``budget`` on the session's values, run once per
    key, scored in the page's measure (:func:`measure`); the privacy–utility curve asks for
    ``per_group=False`` (it shows no group's error). The values are read only when it runs: a
    kept one costs a dictionary look-up."""
    state = get_state()
    absolute = measure(settings) == "absolute"
    key = (
        pipeline.grouping_key(state), settings, budget, strategy, state.replicates, state.seed,
        per_group, absolute,
    )  # fmt: skip

    def simulate() -> MeanStudy:
        values = pipeline.current_statistics(MEAN, settings)
        return MEAN.study(
            values, settings, budget, strategy=strategy, replicates=state.replicates,
            rng=state.seed, per_group=per_group, absolute=absolute,
        )  # fmt: skip

    return _studies().get_or_compute(key, simulate)


def measure(settings: MeanSettings) -> str:
    """The errors' measure: the one chosen, or absolute when a true mean is 0 (an error
    relative to 0 is undefined)."""
    chosen = get_settings(MeanView).measure
    if chosen == "relative" and _relative_undefined(settings):
        return "absolute"
    return chosen


def _relative_undefined(settings: MeanSettings) -> bool:
    try:
        return MEAN.relative_error_undefined(pipeline.current_statistics(MEAN, settings))
    except (ValueError, TypeError):  # not ready yet: the simulations say what to fix
        return False


def _render_measure(settings: MeanSettings) -> None:
    """The errors' measure, and a note when the page switched to absolute errors: the radio
    then shows absolute errors chosen and cannot be moved, while the stored choice is kept for
    data where every true mean differs from 0."""
    help_text = (
        "Relative: each error over the true value it misses (the paper's Def. 10). "
        "Absolute: each error over the width of the public range, the same yardstick for "
        "every group."
    )
    if get_settings(MeanView).measure == "relative" and measure(settings) == "absolute":
        st.radio(
            "Errors as", options=tuple(MEASURES), index=1, format_func=MEASURES.__getitem__,
            horizontal=True, disabled=True, help=help_text, key="mean_view.measure_forced",
        )  # fmt: skip
        st.info(
            "A true mean here is 0, where an error relative to it is undefined: the errors are "
            "shown as absolute errors, in % of the public range "
            f"[{plain_number(settings.clip_low)}, {plain_number(settings.clip_high)}].",
            icon=":material/info:",
        )
        return
    bind(
        st.radio, "Errors as", MeanView, "measure", options=tuple(MEASURES),
        format_func=MEASURES.__getitem__, horizontal=True, help=help_text,
    )  # fmt: skip


def sweep_values(points: int) -> tuple[float, ...]:
    """``points`` log-spaced ε (or ρ) values over the slider's range, to 2 significant digits."""
    if get_state().budget_kind == "pure":
        low, high = constants.EPSILON_MIN, constants.EPSILON_MAX
    else:
        low, high = constants.RHO_MIN, constants.RHO_MAX
    return tuple(float(f"{v:.2g}") for v in np.geomspace(low, high, points))


def render_compare() -> None:
    """The population's error, each group's, the parity error and the privacy–utility curve."""
    state, settings = get_state(), get_settings(MeanSettings)
    strata_text = " × ".join(state.strata_columns) or "none yet"
    bounds = (
        f"bounds [{plain_number(settings.clip_low, 6)}, {plain_number(settings.clip_high, 6)}]"
        if None not in (settings.clip_low, settings.clip_high)
        else "bounds not typed yet"
    )
    if settings.bounds_source == "private" and None not in (settings.clip_low, settings.clip_high):
        bounds = f"bounds found privately within {bounds.removeprefix('bounds ')}"
    # On a projector the settings fold away, so that the first chart is in the first screen.
    settings_box = (
        st.expander("Simulation settings", icon=":material/tune:")
        if state.workshop_mode
        else st.container()
    )
    with settings_box:
        st.caption(
            f"Estimating the mean of **{as_text(settings.value or 'no column yet')}** by "
            f"**{as_written(strata_text)}** with the {ESTIMATOR_LABELS[settings.estimator]}, "
            f"{bounds}. Change these on the Data, Strata and Estimator pages."
        )
        strategies = ("stratified", _render_simulation_settings())
        _render_measure(settings)
    if _render_simulations(strategies):
        symbol = "ε" if state.budget_kind == "pure" else "ρ"
        _render_sweep(settings, strategies, symbol)


def _render_simulation_settings() -> Strategy:
    """What the simulations compare and how many they run; returns the whole-population
    strategy. Outside the ε slider's fragment: a change here also redraws the privacy–utility
    curve, which the ε slider does not."""
    settings = get_settings(MeanSettings)
    vanilla_col, reps_col, seed_col = st.columns([2, 1, 1])
    with vanilla_col:
        vanilla = bind(
            st.radio, "Compare one estimate per group with", MeanView, "vanilla_strategy",
            options=VANILLA,
            format_func=STRATEGIES.__getitem__,
            help="The whole-population approach that stratification is measured against.",
        )  # fmt: skip
        st.caption(
            "One estimate for everyone is used for every group; “both” also estimates each "
            f"group, with {1 - settings.global_fraction:.0%} of the budget (set on the Budget "
            "page). The paper calls these vanilla (i) and (ii)."
        )
    with reps_col:
        _replicates_slider()
    with seed_col:
        seed_input("compare.seed")
        st.caption("Change it to check that a difference is not a fluke of one simulation.")
    return vanilla


def _replicates_slider() -> None:
    state = get_state()
    attribute_widget(
        st.slider,
        "Simulated releases",
        state,
        "replicates",
        min_value=constants.MC_REPLICATES_MIN,
        max_value=constants.MC_REPLICATES_MAX,
        value=int(state.replicates),
        step=100,
        key="compare.replicates",
        help="How many noisy releases to simulate; more gives smoother charts but takes longer.",
    )
    st.caption("Each simulated release redraws the noise on the same confidential data.")


@st.fragment
def _render_simulations(strategies: tuple[Strategy, Strategy]) -> bool:
    """The ε slider and sections 1–2, the charts at that budget, as a fragment: a move of the
    slider reruns and redraws this part only, not the sidebar, the settings above or the
    privacy–utility curve (which covers every budget). A fragment's run skips ``app.py``, so it
    puts the budget in the address itself. Returns whether the simulations ran (on a full run;
    a fragment's own runs discard it)."""
    state, settings = get_state(), get_settings(MeanSettings)
    symbol, chosen = compare_slider("compare.budget")
    if not state.workshop_mode:  # on a projector the first chart comes first
        st.caption(
            "Move it and sections 1–2 are redrawn at that budget; section 3 shows every budget. "
            "Switch ε/ρ on the Budget page."
        )
    url_state.write()
    try:
        with st.spinner(f"Simulating {state.replicates:,} releases per approach…"):
            results = {s: study(settings, s, compare_budget(state)) for s in strategies}
    except (ValueError, TypeError) as exc:
        show_error(exc)
        return False
    metrics = charts.stack({s: r.metrics for s, r in results.items()})
    groups = charts.stack({s: r.groups for s, r in results.items()})
    if not state.workshop_mode:  # the chart's title says how many; the slider, at what budget
        st.caption(
            f"Simulated {state.replicates:,} releases per strategy at {symbol} = {chosen:g}."
        )
    _render_errors(metrics, groups, state.replicates, settings.value)
    _render_bounds_cost(settings, compare_budget(state), state.replicates)
    return True


def _render_bounds_cost(settings: MeanSettings, budget: Budget, replicates: int) -> None:
    """Section 2b, with bounds found privately: what they cost each group, in clipping bias and
    in noise, beside the typed (search) range at the same total budget."""
    if settings.bounds_source != "private":
        return
    st.subheader("What the bounds cost: typed range or found privately")
    st.caption(
        "At the same total budget: the typed range spends it all on the means, clipping nothing "
        f"it should not but adding noise for its whole width; the found bounds spend "
        f"{settings.bounds_fraction:.0%} of it finding a narrower range, then clip at it. Each "
        "group's error splits into the clipping bias and the noise (hover a bar); one estimate "
        "per group."
    )
    try:
        values = pipeline.current_statistics(MEAN, settings)
        native = MEAN.native_budget(settings, budget)
        costs = bounds_costs(values, MEAN.bounded_estimator(settings), native,
                             replicates=replicates, rng=get_state().seed)  # fmt: skip
    except (ValueError, TypeError) as exc:
        show_error(exc)
        return
    st.plotly_chart(bounds_charts.bounds_cost_figure(costs), key="compare.chart.bounds_cost")
    st.markdown(bounds_charts.bounds_cost_summary(costs))


def _render_errors(metrics, groups, replicates: int, value: str) -> None:
    st.subheader("1. Error of the population mean, and parity error")
    if not get_state().workshop_mode:  # on a projector the chart comes first; its words follow
        st.caption(
            "Left, how far the population mean lands from its true value. Right, how unequally "
            "the error falls on the groups: the parity error (Def. 10 of the paper) is the "
            "population error weighted 1/k plus the average group error, per release. Lower "
            "means the noise is shared more fairly."
        )
    st.plotly_chart(
        charts.distributions_figure(
            metrics,
            ("global", "parity"),
            title=f"Over {replicates:,} simulated releases",
            measure=measure(get_settings(MeanSettings)),
        ),
        key="compare.chart.distributions",
    )
    st.markdown(charts.distribution_summary(metrics, "global", f"`{value}`"))
    st.markdown(charts.distribution_summary(metrics, "parity"))

    _render_group_errors(groups, value)


@st.fragment
def _render_group_errors(groups, value: str) -> None:
    """Section 2, a fragment: its log-scale toggle and search box redraw this section only."""
    st.subheader("2. Error in each group")
    log_y = bind(
        st.toggle, "Log scale for the error axis", MeanView, "log_axis",
        help="A log scale shows small and large errors side by side.",
    )  # fmt: skip
    url_state.write()  # a fragment's run skips app.py, which writes the address
    shown = measure(get_settings(MeanSettings))
    if groups["group"].nunique() <= MAX_SIDE_BY_SIDE:
        st.plotly_chart(
            charts.group_error_figure(groups, log_y=log_y, measure=shown),
            key="compare.chart.groups",
        )
    else:
        _render_many_groups(groups, log_y)
    st.markdown(as_written(charts.group_error_summary(groups, f"`{value}`")))


def _render_many_groups(groups, log_x: bool) -> None:
    """Too many groups to stand side by side: one row each, and past a few dozen only the
    smallest, the worst and those a search finds."""
    selection = group_search(MeanView, "group_search", groups)
    st.plotly_chart(
        charts.many_groups_figure(
            groups, selection, log_x=log_x, measure=measure(get_settings(MeanSettings))
        ),
        key="compare.chart.groups",
    )
    st.markdown(charts.many_groups_summary(groups, selection))


SWEEP_MEMO = "compare.sweep"
"""Session key of the last privacy–utility curve and what it was simulated from."""


def _sweep(settings: MeanSettings, strategies: tuple[Strategy, ...], symbol: str) -> pd.DataFrame:
    """The privacy–utility curve: each strategy's errors at :data:`~strata_ui.constants.SWEEP_POINTS`
    budgets. Moving ε leaves it unchanged, so the session keeps the last one rather than look up
    and summarize its 64 simulations again on every move."""
    state = get_state()
    key = (
        pipeline.grouping_key(state), settings, strategies, state.budget_kind, state.replicates,
        state.seed, measure(settings),
    )  # fmt: skip
    memo = st.session_state.get(SWEEP_MEMO)
    if memo is not None and memo[0] == key:
        return memo[1]
    values = sweep_values(constants.SWEEP_POINTS)
    runs, total = [], len(values) * len(strategies)
    with quiet_progress("Simulating the privacy–utility curve") as progress:
        for i, value in enumerate(values):
            budget = compare_budget(state, value)
            for j, strategy in enumerate(strategies):
                runs.append(
                    (value, strategy, study(settings, strategy, budget, per_group=False).metrics)
                )
                done = i * len(strategies) + j + 1
                progress(done, total, f"{symbol} = {value:g} ({done}/{total})")
    sweep = summarize_sweep(runs)
    st.session_state[SWEEP_MEMO] = (key, sweep)
    return sweep


@st.fragment
def _render_sweep(settings: MeanSettings, strategies: tuple[Strategy, ...], symbol: str) -> None:
    """Section 3, a fragment: choosing the error to plot redraws this section only. The curve
    covers every budget and has no marker of the slider's: the ε slider then leaves it as it
    is, one chart fewer to redraw on every move."""
    st.subheader("3. Privacy–utility curve")
    metric = bind(
        st.radio, "Error to plot", MeanView, "sweep_metric", labels=METRIC_LABELS, horizontal=True,
        help="Which error to follow as the budget grows.",
    )  # fmt: skip
    url_state.write()  # a fragment's run skips app.py, which writes the address
    try:
        sweep = _sweep(settings, strategies, symbol)
    except (ValueError, TypeError) as exc:
        show_error(exc)
        return
    st.plotly_chart(
        charts.sweep_figure(sweep, metric, symbol=symbol, measure=measure(settings)),
        key="compare.chart.sweep",
    )
    st.markdown(charts.sweep_summary(sweep, metric, symbol=symbol))
