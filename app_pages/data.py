"""Data: the table under study, where it comes from, and the analysis' choices of columns."""

import streamlit as st

from dpcore.datasets import DEMO_COLUMNS
from strata_ui import url_state
from strata_ui.analyses import current
from strata_ui.constants import MAX_UPLOAD_MB, PREVIEW_ROWS
from strata_ui.data import describe_columns
from strata_ui.navigation import render_journeys
from strata_ui.state import get_dataset, get_state
from strata_ui.style import as_written
from strata_ui.uploads import handle_upload, restore_demo

st.title("Data")
st.markdown(
    "The table every page works from. Each row is one person, and differential privacy "
    "protects each row: adding or removing one person barely changes what the app releases."
)
state = get_state()
st.markdown("**Where to start**")
render_journeys()

# ---- upload ------------------------------------------------------------------------------
if state.workshop_mode:
    st.info(
        "Workshop mode: the app uses its built-in data only, so no one's file ends up on a "
        "projector. Switch workshop mode off in the sidebar to upload your own data.",
        icon=":material/school:",
    )
else:
    st.subheader("Your own data")
    upload = st.file_uploader(
        f"Upload a CSV or Parquet file (up to {MAX_UPLOAD_MB} MB) to use in place of the demo data",
        type=["csv", "txt", "gz", "parquet", "pq"],
        key=f"upload_{state.upload_generation}",
        help="One row per person, with a header row. CSV files must be UTF-8 text (a "
        "gzip-compressed .csv.gz works too). The file stays in this browser session and is "
        "never saved.",
    )
    if upload is not None:
        previous = state.dataset_fingerprint
        error = handle_upload(state, upload.getvalue(), upload.name)
        if error is None and state.dataset_fingerprint != previous:
            resumed = url_state.resume_after_upload(upload.name, state.uploaded.columns)
            state.upload_notes = (resumed, *state.upload_notes) if resumed else state.upload_notes
            st.rerun()  # the sidebar, drawn before this, still names the previous dataset
        if error is not None:
            kept = "the demo data" if state.uploaded is None else f"“{state.dataset_name}”"
            st.error(f"{as_written(error)}\n\nStill using {as_written(kept)}.",
                     icon=":material/error:")  # fmt: skip
        else:
            st.success(f"Using “{as_written(state.dataset_name)}”.",
                       icon=":material/check_circle:")  # fmt: skip
# An upload, or a Learn preset's built-in data (allowed in workshop mode).
if state.uploaded is not None and st.button("Use the demo data again", icon=":material/undo:"):
    restore_demo(state)
    st.rerun()

# ---- the dataset in use ----------------------------------------------------------------
frame = get_dataset()
is_demo = state.uploaded is None
st.subheader(state.dataset_name)
rows, columns, _ = st.columns([1, 1, 2])
rows.metric("Rows", f"{len(frame):,}")
columns.metric("Columns", frame.shape[1])
for note in state.upload_notes:
    st.info(as_written(note), icon=":material/info:")

current().render_data_choices(frame)

# ---- preview ---------------------------------------------------------------------------
st.subheader("Preview")
st.caption(
    f"First {PREVIEW_ROWS} of {len(frame):,} rows, shown as they are: this curator's view of the "
    "confidential data is not differentially private."
)
st.dataframe(frame.head(PREVIEW_ROWS), hide_index=True)

st.subheader("Columns")
st.dataframe(describe_columns(frame, DEMO_COLUMNS if is_demo else {}), hide_index=True)
if is_demo:
    st.caption(
        "Source: UCI Adult, 1994 US Census extract (Becker & Kohavi, 1996), CC BY 4.0. "
        "The `score` column comes from a demo classifier."
    )
