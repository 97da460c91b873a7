"""Estimator: how each group's mean is estimated privately, and with what public knowledge."""

import streamlit as st

from strata_ui import constants, pipeline
from strata_ui.analyses import ANALYSIS_HELP, ANALYSIS_LABELS, module_for
from strata_ui.state import get_state

st.title("Estimator")
state = get_state()
analyses = list(ANALYSIS_LABELS)
state.analysis = st.radio(
    "What to estimate",
    analyses,
    index=analyses.index(state.analysis),
    format_func=ANALYSIS_LABELS.__getitem__,
    horizontal=True,
    key="estimator.analysis",
    help="Each analysis uses the strata from the Strata page.",
)
st.caption(ANALYSIS_HELP[state.analysis])
if state.analysis != "mean":
    module_for(state.analysis).render_estimator()
    st.stop()

st.markdown(
    "Choose how each mean is estimated privately. Every method clips values to a public range, "
    "averages them, and adds random noise sized to hide any one person."
)

ESTIMATOR_HELP = {
    "laplace": "Adds Laplace noise; meets pure ε-DP. Simple and the paper's main example.",
    "gaussian": "Adds Gaussian noise; meets ρ-zCDP, whose costs add up gently over many releases.",
    "coinpress": "Narrows a public interval step by step before the final estimate (ρ-zCDP); "
    "good when the public range is much wider than the data.",
}
options = list(pipeline.ESTIMATOR_LABELS)
state.estimator = st.radio(
    "Private mean estimator",
    options,
    index=options.index(state.estimator),
    format_func=pipeline.ESTIMATOR_LABELS.__getitem__,
    key="estimator.method",
    help="How the noise is added. Gaussian and CoinPress need a ρ-zCDP budget (Budget page).",
)
st.caption(ESTIMATOR_HELP[state.estimator])

try:
    values = pipeline.current_values(state)
except (ValueError, TypeError) as exc:  # the estimator below can still be configured
    st.error(str(exc), icon=":material/error:")
else:
    for message in values.messages():
        st.info(message, icon=":material/info:")

st.subheader("Public bounds on the value")
st.markdown(
    f"Values of **{state.value_column or 'the value column'}** are clipped to [L, U] before "
    "averaging. The bounds **must come from outside knowledge** (for hours a week: 0 to 100), "
    "never from the data — bounds read off the data leak the smallest and largest values."
)
low_col, high_col = st.columns(2)
with low_col:
    state.clip_low = st.number_input(
        "Lower bound L",
        value=state.clip_low,
        key="estimator.clip_low",
        help="The smallest value anyone could have, known without looking at the data.",
    )
    st.caption("Values below L count as L.")
with high_col:
    state.clip_high = st.number_input(
        "Upper bound U",
        value=state.clip_high,
        key="estimator.clip_high",
        help="The largest value anyone could have, known without looking at the data.",
    )
    st.caption("Values above U count as U. A wider range means more noise.")

bounds_ok = state.clip_low is not None and state.clip_high is not None
if bounds_ok and state.clip_low >= state.clip_high:
    bounds_ok = False
    st.error(
        f"The lower bound L must be below the upper bound U, got L = {state.clip_low:g} and "
        f"U = {state.clip_high:g}. Fix the bounds to continue.",
        icon=":material/error:",
    )

if state.estimator == "coinpress":
    st.subheader("CoinPress settings")
    st.markdown(
        "CoinPress starts from the public interval [L, U] as its prior guess for each group's "
        "mean and shrinks it over a few noisy steps, spending a share of ρ on each."
    )
    sigma_col, steps_col, beta_col = st.columns(3)
    with sigma_col:
        state.coinpress_sigma = st.number_input(
            "σ: upper bound on each group's standard deviation",
            min_value=1e-6,
            value=float(state.coinpress_sigma),
            key="estimator.coinpress_sigma",
            help="A public upper bound on how spread out values are inside any group.",
        )
        st.caption("Public knowledge, like L and U. Too small biases the estimate.")
    with steps_col:
        state.coinpress_steps = st.slider(
            "Steps t",
            min_value=1,
            max_value=constants.COINPRESS_STEPS_MAX,
            value=int(state.coinpress_steps),
            key="estimator.coinpress_steps",
            help="How many times the interval is narrowed; the budget is split across steps.",
        )
        st.caption("More steps narrow further but leave less budget for each.")
    with beta_col:
        state.coinpress_beta = st.number_input(
            "β: failure probability",
            min_value=0.0001,
            max_value=0.5,
            value=float(state.coinpress_beta),
            step=0.005,
            format="%.4f",
            key="estimator.coinpress_beta",
            help="The chance that an interval misses the mean; smaller is safer but wider.",
        )
        st.caption("Smaller β keeps the mean inside each interval more often.")
    st.caption(
        "CoinPress treats each group's size as public (replace-one neighbours), as in the paper."
    )
else:
    st.subheader("Group sizes")
    state.n_public = st.checkbox(
        "Treat group sizes as public",
        value=state.n_public,
        key="estimator.n_public",
        help="Whether the number of people in each group may be published without noise.",
    )
    if state.n_public:
        st.caption(
            "Sizes are public (the paper's setting): neighbouring datasets differ by *replacing* "
            "one person, so only the clipped sum is noised and the whole budget goes to it."
        )
    else:
        st.caption(
            "Sizes are private: neighbours differ by *adding or removing* one person, so half the "
            "budget buys a noisy count and half a noisy sum — more noise for the same budget."
        )

st.subheader("Configured estimator")
if bounds_ok:
    try:
        estimator = pipeline.current_estimator(state)
    except (ValueError, TypeError) as exc:
        st.error(str(exc), icon=":material/error:")
    else:
        st.markdown(f"**{pipeline.ESTIMATOR_LABELS[state.estimator]}**")
        st.code(repr(estimator), language="python", wrap_lines=True)
        try:
            budget = pipeline.budget_for(state)
        except (ValueError, TypeError) as exc:
            st.warning(str(exc), icon=":material/warning:")
        else:
            st.caption(f"Each release will use {budget}; set the budget on the Budget page.")
else:
    st.info("Enter valid public bounds to configure the estimator.", icon=":material/info:")
