"""Estimator: what to estimate, how, and with what public knowledge."""

import streamlit as st

from dpcore.analyses import ANALYSES, get
from strata_ui.analyses import current, stops_for_rows
from strata_ui.page_end import stop_page
from strata_ui.state import get_state
from strata_ui.widgets import stored_in

st.title("Estimator")
state = get_state()
names = [analysis.name for analysis in ANALYSES]
state.analysis = st.radio(
    "What to estimate",
    names,
    index=names.index(state.analysis),
    format_func=lambda name: get(name).title,
    horizontal=True,
    key="estimator.analysis",
    **stored_in("estimator.analysis", state, "analysis"),
    help="Each analysis uses the strata from the Strata page.",
)
st.caption(get(state.analysis).summary)
if stops_for_rows():
    stop_page()
current().render_estimator()
