"""The synthetic data's Compare page: per-group 3-way workload error of vanilla and stratified
synthesis, and the overall, worst-group and parity error across ε (AAAI 2024 arXiv, appendix C,
Defs. 11 and 14, Fig. 9), from simulated syntheses that spend nothing."""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from dpcore.analyses.synth import (
    MBI_METHODS,
    METHOD_NAMES,
    SWEEP_EPSILONS,
    SYNTH,
    PreparedRows,
    SynthSettings,
    build_workload,
    sweep_metrics,
)
from dpcore.foundations.accounting import PureDP
from dpcore.foundations.metrics import GroupWorkload
from strata_ui import pipeline
from strata_ui.analyses.synth import charts, slow_fits
from strata_ui.analyses.synth.settings import SynthView
from strata_ui.analyses.synth.synthesis import Resolved, resolve
from strata_ui.group_selection import MAX_SIDE_BY_SIDE
from strata_ui.state import get_settings, get_state
from strata_ui.style import plain_number
from strata_ui.text import as_text, as_written
from strata_ui.widgets import bind, group_search, quiet_progress, show_error


@st.cache_data(max_entries=8, show_spinner="Counting the real rows' 3-way tables…")
def _workload(_stats: PreparedRows, key: tuple) -> GroupWorkload:
    """The real rows' marginals per group, counted once per rows (``key`` stands for them)."""
    return build_workload(_stats, _stats.config, _stats.grouping.spec)


@st.cache_data(max_entries=256, show_spinner=False)
def _sweep_point(
    _stats: PreparedRows, _settings: SynthSettings, key: tuple, epsilon: float, runs: int,
    seed: int,
) -> pd.DataFrame:  # fmt: skip
    """Both strategies' errors at one ε (``key`` stands for the rows and the settings)."""
    return SYNTH.study(
        _stats, _settings, PureDP(epsilon), replicates=runs, rng=seed,
        workload=_workload(_stats, key),
    )  # fmt: skip


@st.cache_data(max_entries=32, show_spinner=False)
def _metrics(_errors: pd.DataFrame, key: tuple, epsilons: tuple, runs: int, seed: int):
    """:func:`~dpcore.analyses.synth.sweep_metrics` of the sweep the other arguments stand for."""
    return sweep_metrics(_errors)


def _sweep(resolved: Resolved, settings: SynthSettings, view: SynthView) -> pd.DataFrame:
    """The errors at :data:`~dpcore.analyses.synth.SWEEP_EPSILONS` and the session's ε."""
    epsilons = sorted(set(SWEEP_EPSILONS) | {round(resolved.epsilon, 6)})
    parts = []
    with quiet_progress("Simulating synthetic releases") as progress:
        for i, epsilon in enumerate(epsilons):
            progress(i, len(epsilons), f"ε = {epsilon:g} ({i + 1}/{len(epsilons)})")
            parts.append(
                _sweep_point(resolved.stats, settings, resolved.key, epsilon, view.runs, view.seed)
            )
    return pd.concat(parts, ignore_index=True)


def render_compare() -> None:
    """Per-group error and ε sweeps of one model per group and one for everyone (Compare page)."""
    state, settings = get_state(), get_settings(SynthSettings)
    st.caption(
        f"Synthesizing {', '.join(map(as_text, settings.columns or []))} with "
        f"{METHOD_NAMES.get(settings.method, settings.method)}, {settings.n_rows:,} rows, by "
        f"**{as_written(' × '.join(state.strata_columns) or 'no strata yet')}**. Change these on the Strata "
        "and Estimator pages."
    )
    runs = bind(
        st.slider, "Simulated synthetic releases per ε and strategy", SynthView, "runs",
        help="Each run fits new noisy models; more runs give steadier averages but take longer.",
    )  # fmt: skip
    st.caption(
        "Errors compare each synthetic table with the confidential rows, group by group: the "
        "3-way workload error (Def. 14) averages, over every 3 columns besides the strata, the "
        "L1 distance between the real and the synthetic shares of each combination."
    )
    view = get_settings(SynthView)
    if settings.method in MBI_METHODS:
        _render_slow_compare(settings, view)
        return
    try:
        resolved = resolve(("stratified", "vanilla"))
        started = time.perf_counter()
        errors = _sweep(resolved, settings, view)
    except (ValueError, TypeError) as exc:
        show_error(exc)
        return
    elapsed = time.perf_counter() - started
    epsilons = tuple(sorted(errors["epsilon"].unique()))
    metrics = _metrics(errors, resolved.key, epsilons, runs, view.seed)
    epsilon = charts.nearest_epsilon(errors, resolved.epsilon)
    st.caption(
        f"{runs} run(s) per ε and strategy at ε = {', '.join(f'{e:g}' for e in epsilons)}; "
        f"simulation noise, nothing spent. Took {elapsed:.2f} s (repeat visits are cached)."
    )
    _render_charts(errors, metrics, epsilon)


def _render_slow_compare(settings: SynthSettings, view: SynthView) -> None:
    """MST and AIM: vanilla against stratified at the chosen budget only, after a button."""
    name = METHOD_NAMES[settings.method]
    st.info(
        f"{name} fits take seconds to minutes per group, so here one model per group and one "
        "model for everyone are compared at the Budget page's budget only. The sweep across ε is offered for MWEM, "
        "independent marginals and the full histogram.",
        icon=":material/info:",
    )
    try:
        resolved = resolve(("stratified", "vanilla"))
    except (ValueError, TypeError) as exc:
        show_error(exc)
        return
    budget = pipeline.page_budget(get_state())
    key = (resolved.key, str(budget), view.runs, view.seed)
    seconds = slow_fits.fit_seconds(resolved, ("stratified", "vanilla"), view.runs)
    label = f"{view.runs} {name} run(s) of each strategy"
    if not slow_fits.started(("compare", *key), label, seconds, "synth.compare.run"):
        return
    started = time.perf_counter()
    workload = _workload(resolved.stats, resolved.key)
    try:
        errors = slow_fits.kept_or_run(
            ("compare", *key), f"Fitting {name}, one model per group, then one for everyone",
            lambda progress: SYNTH.study(
                resolved.stats, settings, budget, replicates=view.runs, rng=view.seed,
                workload=workload, progress=progress,
            ),
        )  # fmt: skip
    except (ValueError, TypeError) as exc:
        show_error(exc)
        return
    elapsed = time.perf_counter() - started
    st.caption(
        f"{view.runs} run(s) per strategy at {budget} (labelled ε = {plain_number(resolved.epsilon, 4)}, the "
        f"ε of the other synthesizers at the same cost); OpenDP's noise, nothing spent. Took "
        f"{elapsed:.1f} s (kept for these settings)."
    )
    st.subheader("1. Error in each group")
    _render_group_errors(errors, resolved.epsilon)
    st.subheader("2. On all rows, worst group and parity")
    table = sweep_metrics(errors).groupby("strategy")[["overall", "worst group", "parity"]].mean()
    st.dataframe(table.rename(index=charts.STRATEGY_NAMES).round(4))
    st.caption(
        "Means over runs. Parity error (Def. 11, ω = 1/k): the error on all rows weighted 1/k "
        "plus the average group error; lower means the errors are shared more fairly."
    )


def _render_group_errors(errors: pd.DataFrame, epsilon: float) -> None:
    """Each group's error at ``epsilon``: side by side for a few groups, else one row each, and
    past a few dozen only the smallest, the worst and those a search finds."""
    table = charts.group_table(errors, epsilon)
    if table["group"].nunique() <= MAX_SIDE_BY_SIDE:
        figure = charts.group_error_figure(errors, epsilon)
    else:
        selection = group_search(SynthView, "group_search", table)
        figure = charts.many_groups_figure(errors, epsilon, selection)
    st.plotly_chart(figure, key="synth.chart.groups")
    st.markdown(as_written(charts.group_error_summary(errors, epsilon)))


def _render_charts(errors: pd.DataFrame, metrics: pd.DataFrame, epsilon: float) -> None:
    st.subheader("1. Error in each group")
    _render_group_errors(errors, epsilon)

    st.subheader("2. Error on all rows")
    st.plotly_chart(
        charts.sweep_figure(metrics, "overall", current=epsilon), key="synth.chart.overall"
    )
    st.markdown(charts.sweep_summary(metrics, "overall", current=epsilon))

    st.subheader("3. Worst-group error")
    st.plotly_chart(
        charts.sweep_figure(metrics, "worst group", current=epsilon), key="synth.chart.worst"
    )
    st.markdown(charts.sweep_summary(metrics, "worst group", current=epsilon))
    st.caption(
        "Why stratifying can hurt the worst group: each group's model sees only that group's "
        "rows, so a small group pays the full noise of every table it measures on its own. "
        "One model for everyone borrows strength from everyone — and imposes the majority's "
        "patterns."
    )

    st.subheader("4. Parity error")
    st.caption(
        "Parity error (Def. 11, ω = 1/k): the error on all rows weighted 1/k plus the average "
        "group error. Lower means the errors are shared more fairly."
    )
    st.plotly_chart(
        charts.sweep_figure(metrics, "parity", current=epsilon), key="synth.chart.parity"
    )
    st.markdown(charts.sweep_summary(metrics, "parity", current=epsilon))
