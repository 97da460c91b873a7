"""Compare: stratified versus whole-population estimates, by simulation."""

import streamlit as st

from strata_ui.constants import MC_REPLICATES_DEFAULT
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
st.subheader("Current setup")
st.markdown(
    f"**Strata columns:** {' × '.join(state.strata_columns) or 'none yet'}  \n"
    f"**Estimator:** {state.estimator or 'none yet'}  \n"
    f"**Simulated releases per run:** {MC_REPLICATES_DEFAULT:,}"
)

st.caption(
    ":material/upcoming: Coming next: error and parity-error charts for stratified and "
    "whole-population estimates, redrawn as you move the budget."
)
