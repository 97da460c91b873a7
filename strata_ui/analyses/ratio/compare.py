"""The ratio's Compare page: coverage, width and interval score of every interval method over
simulated releases of the session's data (Miao & Li 2022, §3), then the paper's Table 1.

Every simulation goes through :meth:`~dpcore.analyses.ratio.RatioAnalysis.study` on the cached
group sums and is cached on the estimator's arguments, so moving back to a budget already seen
redraws at once.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from dpcore.analyses.ratio import (
    ALL_GROUPS,
    RATIO,
    GroupRatioSums,
    RatioSettings,
    RatioSums,
    bootstrap_group_sums,
)
from dpcore.foundations.accounting import ZCDP, Budget, PureDP
from strata_ui import pipeline
from strata_ui.analyses.ratio import compare_charts, session
from strata_ui.analyses.ratio.settings import MECHANISM_LABELS
from strata_ui.analyses.ratio.table1 import render_table1
from strata_ui.analyses.ratio.view import RatioView
from strata_ui.budget_control import compare_budget, compare_slider
from strata_ui.state import get_dataset, get_settings, get_state, reset_settings
from strata_ui.text import as_written
from strata_ui.widgets import bind, seed_input, show_problems

EPSILON_SWEEP = (0.1, 0.2, 0.5, 1.0, 2.0, 4.0)
RHO_SWEEP = (0.001, 0.005, 0.02, 0.1, 0.5, 2.0)
REPLICATES_STEP = 100
SWEEP_MC_DRAWS_MAX = 10_000_000  # Monte Carlo draws per sweep point before its line is left out
METHODS = ("none", "monte_carlo", "analytical")


@st.cache_data(max_entries=8, show_spinner="Resampling the rows of every group…")
def _bootstrap(
    _frame: pd.DataFrame, _grouping, _sums: GroupRatioSums, sums_key: tuple, replicates: int,
    seed: int,
) -> RatioSums:  # fmt: skip
    """Each group's rows redrawn ``replicates`` times (``sums_key`` stands for the frame, the
    groups and the columns)."""
    return bootstrap_group_sums(_frame, _grouping, _sums, replicates=replicates, rng=seed)


@st.cache_data(max_entries=512, show_spinner=False)
def _study(
    _sums: GroupRatioSums, _resampled: RatioSums | None, _settings: RatioSettings,
    _budget: Budget, sums_key: tuple, run_key: tuple, methods: tuple, level: float,
    replicates: int, seed: int,
) -> pd.DataFrame:  # fmt: skip
    """One simulation per key: ``sums_key`` stands for the sums, ``run_key`` for the resampled
    rows, the settings and the budget (what :meth:`RatioAnalysis.study` reads of them)."""
    return RATIO.study(
        _sums, _settings, _budget, level=level, replicates=replicates, rng=seed,
        methods=methods, resampled=_resampled,
    )  # fmt: skip


@dataclass(frozen=True, eq=False)
class Simulation:
    """Simulated releases of one session's sums: the same rows, replicates, seed and level for
    every budget and accounting (with ``resampled`` rows, a bootstrap)."""

    sums: GroupRatioSums
    sums_key: tuple
    replicates: int
    seed: int
    level: float
    resampled: RatioSums | None = None

    def run(
        self, settings: RatioSettings, budget: Budget, arguments: dict, methods: tuple[str, ...]
    ) -> pd.DataFrame:
        """Coverage, width and score of ``methods`` (``arguments``: ``RATIO.arguments(settings,
        budget)``, which the cache is keyed on)."""
        run_key = (tuple(arguments.items()), settings.scale, settings.B, self.resampled is not None)
        return _study(
            self.sums, self.resampled, settings, budget, self.sums_key, run_key, methods,
            self.level, self.replicates, self.seed,
        )  # fmt: skip


def render_compare() -> None:
    """Coverage, width and interval score over simulated releases, and the Table 1 preset."""
    state, settings = get_state(), get_settings(RatioSettings)
    st.markdown(
        "How good are the ratio's confidence intervals with this much noise? Each view simulates "
        "many releases of the current data and checks every interval method against the exact "
        "(confidential) ratio of the clipped data."
    )
    symbol, chosen = _render_controls()
    view = get_settings(RatioView)
    budget = compare_budget(state)
    problems = session.problems(settings, budget)
    if problems:
        show_problems(problems)
        st.info("Fix the settings on the Estimator page to see the simulations.",
                icon=":material/info:")  # fmt: skip
        render_table1()
        return
    if (found := session.sums_or_error(settings)) is None:
        return
    sums, sums_key = found
    arguments = RATIO.arguments(settings, budget)
    st.caption(_describe(arguments, settings))
    started = time.perf_counter()
    simulation = Simulation(sums, sums_key, view.replicates, state.seed, state.release_level)
    if view.bootstrap and state.source is None:
        resampled = _bootstrap(
            get_dataset(), pipeline.current_grouping(state), sums, sums_key, view.replicates,
            state.seed,
        )  # fmt: skip
        current = dataclasses.replace(simulation, resampled=resampled)
    else:
        current = simulation
    results = current.run(settings, budget, arguments, METHODS)
    _render_coverage(results, view)
    # The width sweep varies only the DP noise: width hardly depends on resampling the rows, and
    # its points stay cached when the bootstrap is switched on.
    _render_width(simulation, settings, arguments, results, symbol, chosen)
    _render_score(results, symbol, chosen)
    st.caption(
        f"Simulations took {time.perf_counter() - started:.2f} s (repeat visits are cached)."
    )
    render_table1()


def _render_controls() -> tuple[str, float]:
    """The budget, the number of simulated releases, the seed and the bootstrap switch."""
    budget_col, reps_col, seed_col = st.columns(3)
    with budget_col:
        symbol, chosen = compare_slider("compare.ratio.budget")
        st.caption("Move it and the charts are redrawn. Switch ε/ρ on the Budget page.")
    with reps_col:
        bind(
            st.slider, "Simulated releases", RatioView, "replicates", step=REPLICATES_STEP,
            help="More releases give steadier coverage estimates but take longer.",
            caption="The band on the coverage chart narrows as this grows.",
        )  # fmt: skip
    with seed_col:
        seed_input("compare.ratio.seed")
        st.caption("Change it to check a difference is not a fluke.")
    if get_state().source is not None:
        st.caption(
            "Only the DP noise varies here: resampling the rows (a bootstrap) needs the rows in "
            "memory, and the data in use stays in files. Upload the data (or a sample of it) on "
            "the Data page to resample them too."
        )
        return symbol, chosen
    bind(
        st.checkbox, "Also resample the rows (bootstrap)", RatioView, "bootstrap",
        help="Each simulated release also redraws each group's rows with replacement.",
    )  # fmt: skip
    st.caption(
        "Off: only the DP noise varies, so intervals that also allow for sampling variation "
        "cover more often than the nominal level. On: rows are resampled within each group too, "
        "the situation the intervals are designed for."
    )
    return symbol, chosen


def _describe(arguments: dict, settings: RatioSettings) -> str:
    state = get_state()
    weight = f", weighted by `{settings.w_column}`" if settings.w_column else ""
    accounting = "zCDP" if arguments["composition"] == "zcdp" else "basic"
    return (
        f"Calibration ratio Σ`{settings.s_column}` / Σ`{settings.y_column}`{weight} by "
        f"**{' × '.join(state.strata_columns)}**, {MECHANISM_LABELS[arguments['mechanism']]} "
        f"with {accounting} accounting, {settings.scale} scale, {state.release_level:.0%} "
        "intervals. Change these on the Strata and Estimator pages."
    )


def _render_coverage(results: pd.DataFrame, view: RatioView) -> None:
    st.subheader("1. Coverage: how often the interval contains the exact ratio")
    level = get_state().release_level
    resampled = view.bootstrap and get_state().source is None
    mode = "noise and rows resampled" if resampled else "DP noise only"
    st.plotly_chart(
        compare_charts.coverage_figure(
            results,
            level=level,
            title=f"Coverage per group over {view.replicates:,} simulated releases ({mode})",
        ),
        key="ratio.chart.coverage",
    )
    st.markdown(as_written(compare_charts.coverage_summary(results, level=level)))
    st.caption(
        "A calibrated method sits inside the shaded band around the nominal level (where "
        f"{view.replicates:,} releases of a method with exactly nominal coverage land 95% of "
        "the time). Releases whose noisy sums leave the ratio undefined count as misses, as in "
        "the paper."
    )


def _render_width(
    simulation: Simulation,
    settings: RatioSettings,
    arguments: dict,
    results: pd.DataFrame,
    symbol: str,
    chosen: float,
) -> None:
    st.subheader(f"2. Interval width as {symbol} grows")
    groups = [ALL_GROUPS, *(g for g in dict.fromkeys(results["group"]) if g != ALL_GROUPS)]
    if get_settings(RatioView).sweep_group not in groups:
        reset_settings(RatioView, sweep_group=ALL_GROUPS)
    group = bind(st.selectbox, "Group", RatioView, "sweep_group", options=groups,
                 help="Whose interval width to follow as the budget grows.")  # fmt: skip
    pure_gaussian = get_state().budget_kind == "pure" and arguments["mechanism"] == "gaussian"
    # Many groups × releases × draws: the Monte Carlo line (which the analytical one tracks
    # closely, paper Table 1) is left out of the sweep to keep the page quick.
    with_mc = simulation.replicates * len(groups) * settings.B <= SWEEP_MC_DRAWS_MAX
    methods = METHODS if with_mc else ("none", "analytical")
    sweep = _sweep(simulation, settings, chosen, methods, with_other_accounting=pure_gaussian)
    st.plotly_chart(
        compare_charts.width_figure(sweep, symbol=symbol, group=group, current=chosen),
        key="ratio.chart.width",
    )
    st.markdown(compare_charts.width_summary(sweep, symbol=symbol, group=group))
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
        "dominate)." + as_written(note)
    )


def _sweep(
    simulation: Simulation,
    settings: RatioSettings,
    chosen: float,
    methods: tuple[str, ...],
    *,
    with_other_accounting: bool,
) -> pd.DataFrame:
    """Every method's width at each budget of the sweep; with ``with_other_accounting``, the
    analytical interval with the other accounting too. Budgets the mechanism cannot run at are
    left out."""
    frames = []
    for value, budget in _sweep_budgets(chosen):
        arguments = _arguments_or_none(settings, budget)
        if arguments is None:
            continue  # e.g. the classic Gaussian cannot run at this ε: leave the point out
        composition = arguments["composition"]
        frames.append(
            simulation.run(settings, budget, arguments, methods)
            .assign(budget=value, composition=composition)
        )  # fmt: skip
        if not with_other_accounting:
            continue
        other = "zcdp" if composition == "basic" else "basic"
        alternative = dataclasses.replace(settings, composition=other)
        other_arguments = _arguments_or_none(alternative, budget)
        if other_arguments is not None:
            frames.append(
                simulation.run(alternative, budget, other_arguments, ("analytical",))
                .assign(budget=value, composition=other)
            )  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def _sweep_budgets(current: float) -> list[tuple[float, Budget]]:
    """The sweep's ε (or ρ) values and the slider's, each with its budget."""
    pure = get_state().budget_kind == "pure"
    values = sorted({*(EPSILON_SWEEP if pure else RHO_SWEEP), current})
    make = PureDP if pure else ZCDP
    return [(value, make(value)) for value in values]


def _arguments_or_none(settings: RatioSettings, budget: Budget) -> dict | None:
    """The estimator's arguments at ``budget``, or None when the settings cannot run there."""
    try:
        return RATIO.arguments(settings, budget)
    except (ValueError, TypeError):
        return None


def _render_score(results: pd.DataFrame, symbol: str, chosen: float) -> None:
    st.subheader("3. Interval score: width plus a penalty for missing")
    st.plotly_chart(
        compare_charts.score_figure(
            results, title=f"Median interval score per group at {symbol} = {chosen:g}"
        ),
        key="ratio.chart.score",
    )
    st.markdown(compare_charts.score_summary(results))
    st.caption(
        "The interval score (Gneiting & Raftery 2007, eq. 43) is the width plus 2/α times how "
        "far the exact ratio falls outside: it rewards narrow intervals that still cover. "
        "Median over the releases that form an interval; the paper's tables report means, which "
        "for small groups a few releases with a noisy denominator near 0 dominate."
    )
