"""Strata: the demographic columns that split people into groups."""

import streamlit as st

from strata_ui.state import get_state

st.title("Strata")
st.markdown(
    "Pick the columns that split people into groups (strata), such as race × sex. Everyone falls "
    "in exactly one group, so estimating every group separately costs the budget of one group."
)

strata = get_state().strata_columns
st.subheader("Current choice")
st.markdown(f"**Strata columns:** {' × '.join(strata) if strata else 'none yet'}")

st.caption(
    ":material/upcoming: Coming next: choose the columns, see how many people each group holds, "
    "and say where the public group shares come from — counts from the data treated as public, a "
    "table you supply, or a separate public sample."
)
