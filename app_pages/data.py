"""Data: the table under study and what each column means."""

import streamlit as st

from dpcore.datasets import DEMO_COLUMNS
from strata_ui.constants import MAX_UPLOAD_MB, PREVIEW_ROWS
from strata_ui.data import describe_columns
from strata_ui.state import get_dataset, get_state

st.title("Data")
st.markdown(
    "The table every page works from. Each row is one person, and differential privacy "
    "protects each row: adding or removing one person barely changes what the app releases."
)

frame = get_dataset()
st.subheader(get_state().dataset_name)
rows, columns, _ = st.columns([1, 1, 2])
rows.metric("Rows", f"{len(frame):,}")
columns.metric("Columns", frame.shape[1])

st.subheader("Preview")
st.caption(
    f"First {PREVIEW_ROWS} of {len(frame):,} rows, shown as they are: this curator's view of the "
    "confidential data is not differentially private."
)
st.dataframe(frame.head(PREVIEW_ROWS), hide_index=True)

st.subheader("Columns")
st.dataframe(describe_columns(frame, DEMO_COLUMNS), hide_index=True)
st.caption(
    "Source: UCI Adult, 1994 US Census extract (Becker & Kohavi, 1996), CC BY 4.0. "
    "The `score` column comes from a demo classifier."
)

st.caption(
    f":material/upcoming: Coming next: upload your own CSV file (up to {MAX_UPLOAD_MB} MB) in "
    "place of the demo data."
)
