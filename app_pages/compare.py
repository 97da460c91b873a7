"""Compare: stratified versus whole-population estimates, by simulation."""

import streamlit as st

from dpcore.analyses.mean.strategies import STRATEGIES
from strata_ui import charts_compare as charts
from strata_ui import constants, pipeline
from strata_ui.analyses import module_for
from strata_ui.state import get_state

st.title("Compare")
st.info(
    "These views use the confidential data and are not themselves differentially private.",
    icon=":material/visibility:",
)
st.markdown(
    "See who pays for the noise before spending anything: simulate many noisy releases and compare "
    "the population error, each group's error, and the gap between groups. Simulation never spends "
    "budget."
)

state = get_state()
if state.analysis != "mean":
    module_for(state.analysis).render_compare()
    st.stop()
strata_text = " × ".join(state.strata_columns) or "none yet"
st.caption(
    f"Estimating the mean of **{state.value_column or 'no column yet'}** by **{strata_text}** "
    f"with the {pipeline.ESTIMATOR_LABELS[state.estimator]}, bounds "
    f"[{state.clip_low}, {state.clip_high}]. Change these on the Strata and Estimator pages."
)

VANILLA = ("global_only", "global_and_groups")
budget_col, vanilla_col = st.columns(2)
with budget_col:
    if state.budget_kind == "pure":
        options, symbol = constants.EPSILON_OPTIONS, "ε"
        current = min(options, key=lambda o: abs(o - state.epsilon) / o)
    else:
        options, symbol = constants.RHO_OPTIONS, "ρ"
        current = min(options, key=lambda o: abs(o - state.rho) / o)
    chosen = st.select_slider(
        f"{symbol} per release (log scale)",
        options=options,
        value=current,
        format_func=lambda v: f"{v:g}",
        key=f"compare.budget.{state.budget_kind}",
        help="The same budget as on the Budget page: smaller means more privacy and more noise.",
    )
    if state.budget_kind == "pure":
        state.epsilon = chosen
    else:
        state.rho = chosen
    st.caption("Move it and every chart below is redrawn. Switch ε/ρ on the Budget page.")
with vanilla_col:
    state.vanilla_strategy = st.radio(
        "Compare stratified with",
        VANILLA,
        index=VANILLA.index(state.vanilla_strategy),
        format_func=STRATEGIES.__getitem__,
        key="compare.vanilla",
        help="The whole-population approach that stratification is measured against.",
    )
    st.caption(
        "Vanilla (i) reuses one population estimate for every group; vanilla (ii) also estimates "
        f"each group, with {1 - state.global_fraction:.0%} of the budget (set on the Budget page)."
    )

reps_col, seed_col = st.columns(2)
with reps_col:
    state.replicates = st.slider(
        "Simulated releases",
        min_value=constants.MC_REPLICATES_MIN,
        max_value=constants.MC_REPLICATES_MAX,
        value=int(state.replicates),
        step=100,
        key="compare.replicates",
        help="How many noisy releases to simulate; more gives smoother charts but takes longer.",
    )
    st.caption("Each simulated release redraws the noise on the same confidential data.")
with seed_col:
    state.seed = int(
        st.number_input(
            "Random seed",
            min_value=0,
            value=int(state.seed),
            step=1,
            key="compare.seed",
            help="The same seed gives the same simulated noise, so results can be reproduced.",
        )
    )
    st.caption("Change it to check that a difference is not a fluke of one simulation.")

strategies = ("stratified", state.vanilla_strategy)
try:
    results = {s: pipeline.simulate_metrics(state, s) for s in strategies}
except (ValueError, TypeError) as exc:
    st.error(str(exc), icon=":material/error:")
    st.stop()

metrics = charts.stack({s: r[0] for s, r in results.items()})
groups = charts.stack({s: r[1] for s, r in results.items()})
st.caption(f"Simulated {state.replicates:,} releases per strategy at {symbol} = {chosen:g}.")

st.subheader("1. Error of the population mean")
st.plotly_chart(
    charts.distribution_figure(
        metrics,
        "global",
        title=f"Error of the population mean over {state.replicates:,} simulated releases",
    ),
    key="compare.chart.global",
)
st.markdown(charts.distribution_summary(metrics, "global"))

st.subheader("2. Error in each group")
state.group_error_log_axis = st.toggle(
    "Log scale for the error axis",
    value=state.group_error_log_axis,
    key="compare.log_axis",
    help="A log scale shows small and large errors side by side.",
)
st.plotly_chart(
    charts.group_error_figure(groups, log_y=state.group_error_log_axis),
    key="compare.chart.groups",
)
st.markdown(charts.group_error_summary(groups))

st.subheader("3. Parity error: how unequal the errors are")
st.caption(
    "Parity error (Def. 10 of the paper): the population error weighted 1/k plus the average "
    "group error, per release. Lower means the noise is shared more fairly."
)
st.plotly_chart(
    charts.distribution_figure(
        metrics, "parity", title="Parity error over simulated releases (ω = 1/k)"
    ),
    key="compare.chart.parity",
)
st.markdown(charts.distribution_summary(metrics, "parity"))

st.subheader("4. Privacy–utility curve")
METRIC_LABELS = {
    "global": "Population error",
    "worst group": "Worst-group error",
    "parity": "Parity error",
}
state.sweep_metric = st.radio(
    "Error to plot",
    list(METRIC_LABELS),
    index=list(METRIC_LABELS).index(state.sweep_metric),
    format_func=METRIC_LABELS.__getitem__,
    horizontal=True,
    key="compare.sweep_metric",
    help="Which error to follow as the budget grows.",
)
values = pipeline.sweep_values(state, constants.SWEEP_POINTS)
runs = []
total = len(values) * len(strategies)
progress = st.progress(0.0, text="Simulating the privacy–utility curve…")
try:
    for i, value in enumerate(values):
        budget = pipeline.budget_for(state, value)
        for j, strategy in enumerate(strategies):
            runs.append((value, strategy, pipeline.simulate_metrics(state, strategy, budget)[0]))
            done = i * len(strategies) + j + 1
            progress.progress(
                done / total, text=f"Simulating {symbol} = {value:g} ({done}/{total})"
            )
except (ValueError, TypeError) as exc:
    progress.empty()
    st.error(str(exc), icon=":material/error:")
    st.stop()
progress.empty()
sweep = charts.sweep_frame(runs)
st.plotly_chart(
    charts.sweep_figure(sweep, state.sweep_metric, symbol=symbol, current=chosen),
    key="compare.chart.sweep",
)
st.markdown(charts.sweep_summary(sweep, state.sweep_metric, symbol=symbol))
