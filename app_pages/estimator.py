"""Estimator: what to estimate and how to add the noise."""

import streamlit as st

from strata_ui.state import get_state

st.title("Estimator")
st.markdown(
    "Choose the value to estimate and the private method to estimate it with: once for the whole "
    "population, or per group and recombined with the public group shares."
)

state = get_state()
st.subheader("Current choice")
st.markdown(
    f"**Value column:** {state.value_column or 'none yet'}  \n"
    f"**Estimator:** {state.estimator or 'none yet'}"
)

st.caption(
    ":material/upcoming: Coming next: private means (including CoinPress), ratios of two sums, "
    "and regression estimates with valid confidence intervals."
)
