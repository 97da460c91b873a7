"""Compare: stratified versus whole-population estimates, by simulation."""

import streamlit as st

from strata_ui.analyses import current, stops_for_rows
from strata_ui.page_end import stop_page
from strata_ui.state import get_state

st.title("Compare")
CURATOR_VIEW = (
    "These views use the confidential data and are not themselves differentially private."
)
if get_state().workshop_mode:  # a line, not a box: the first chart belongs in the first screen
    st.caption(f":material/visibility: {CURATOR_VIEW}")
else:
    st.info(CURATOR_VIEW, icon=":material/visibility:")
if not get_state().workshop_mode:  # on a projector the first chart comes first
    st.markdown(
        "See who pays for the noise before spending anything: simulate many noisy releases and "
        "compare the population error, each group's error, and the gap between groups. "
        "Simulation never spends budget."
    )
if stops_for_rows():
    stop_page()
current().render_compare()
