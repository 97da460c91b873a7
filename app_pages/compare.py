"""Compare: stratified versus whole-population estimates, by simulation."""

import streamlit as st

from strata_ui.analyses import current, stops_for_rows
from strata_ui.page_end import stop_page

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
if stops_for_rows():
    stop_page()
current().render_compare()
