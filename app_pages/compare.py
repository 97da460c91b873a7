"""Compare: stratified versus whole-population estimates, by simulation."""

import streamlit as st

from strata_ui.analyses import current

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

current().render_compare()
