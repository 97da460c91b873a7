"""Data: the table under study, where it comes from, and the analysis' choices of columns."""

import pandas as pd
import streamlit as st

from dpcore.engines import EngineError
from dpcore.foundations.datasets import DEMO_COLUMNS
from strata_ui import files, pipeline, roles, spark, url_state
from strata_ui.analyses import current
from strata_ui.constants import MAX_UPLOAD_MB, PRESET_FINGERPRINT_PREFIX, PREVIEW_ROWS
from strata_ui.data import describe_columns
from strata_ui.engine_sources import EngineSource
from strata_ui.navigation import render_journeys
from strata_ui.page_end import stop_page
from strata_ui.person import render_person_choice
from strata_ui.state import get_dataset, get_state
from strata_ui.text import as_code, as_written
from strata_ui.uploads import handle_upload, open_source, restore_demo

st.title("Data")
st.markdown(
    "The table every page works from. Differential privacy protects each person: adding or "
    "removing one person barely changes what the app releases. Unless you say otherwise under "
    "“Who is one person?”, each row is one person."
)
state = get_state()


def open_or_explain(source: EngineSource) -> None:
    """Open ``source`` as the dataset; say why not, and what stays in use, when it cannot be."""
    error = open_source(state, source)
    if error is None:
        st.rerun()  # the sidebar, drawn before this, still names the previous dataset
    own = state.uploaded is not None or state.source is not None
    kept = f"“{state.dataset_name}”" if own else "the demo data"
    st.error(f"{as_written(error)}\n\nStill using {as_written(kept)}.", icon=":material/error:")


def source_text_input(
    column, label: str, opened: EngineSource | None, field: str, *, key: str, **kwargs
) -> str:
    """A text box for what opens a source (a path, a table, its declared identity): it shows
    ``field`` of the ``opened`` source, and is keyed by the upload generation so that it starts
    empty again once the demo data or an upload replaces the source."""
    shown = "" if opened is None else getattr(opened, field)
    return column.text_input(label, value=shown, key=f"{key}_{state.upload_generation}", **kwargs)


def render_upload() -> None:
    """The uploader, and what became of the file (a curator's: uploads bring in new data)."""
    state.decimal_comma = st.checkbox(
        "Numbers in my file use decimal commas (3,25 for 3.25)",
        value=state.decimal_comma,
        key="data.decimal_comma",
        help="As spreadsheets write them where the comma is the decimal mark: such files "
        "separate their fields with semicolons (;) or tabs. A comma-separated file cannot also "
        "use decimal commas. Changing this reads the uploaded file again.",
    )
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
    elif (
        state.uploaded is not None
        and state.source is None
        and not state.dataset_fingerprint.startswith(PRESET_FINGERPRINT_PREFIX)
    ):  # the uploader empties when another page is opened; the file is still in use
        st.success(
            f"Using “{as_written(state.dataset_name)}”, uploaded earlier in this session. Upload "
            "another file to use it instead.",
            icon=":material/check_circle:",
        )


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
    if roles.allows(roles.Action.UPLOAD):
        render_upload()
    else:
        st.caption(
            "Uploads are for curators: they decide which data the team works on. Open the data "
            "they placed on the server below."
        )

    # ---- files on this machine -----------------------------------------------------------
    st.subheader("Open a file or folder on this machine")
    root = files.data_root()
    st.markdown(
        "For data too large to upload, where the app is installed next to it: the path of a "
        "CSV or Parquet file, a folder of Parquet files, or a glob such as "
        "`/data/survey/*.parquet`. The data must sit **on the machine that runs the app** (the "
        "server), not on your own computer. The rows stay in the files: DuckDB reads them where "
        "they lie, and only each group's counts and sums come into memory."
        + ("" if root is None else f" This installation opens files under {as_code(root)} only.")
    )
    shown = state.source if isinstance(state.source, files.FilesSource) else None
    path = source_text_input(
        st,
        "Path on the machine running the app",
        shown,
        "location",
        placeholder="/data/survey/ or /data/survey/*.parquet",
        key="data.path",
        help="A folder is searched with its subfolders for Parquet or CSV files; every part "
        "must have the same columns. The address bar keeps the path, so a refresh opens it again.",
    )
    if st.button("Open", icon=":material/folder_open:", key="data.open"):
        open_or_explain(files.FilesSource(path.strip()))

    # ---- a table in Spark ----------------------------------------------------------------
    st.subheader("Connect to Spark")
    listed = spark.listed_masters()
    if listed == ():
        st.caption(
            "This installation connects to no Spark cluster: its team file lists no "
            "`spark_masters`."
        )
    else:
        st.markdown(
            "For data held in a Spark cluster: Spark computes each group's counts and sums where "
            "the rows lie, and only those come into memory. "
            + spark.masters_sentence(listed)
            + " Starting Spark takes ten seconds or more the first time."
        )
        connected = state.source if isinstance(state.source, spark.SparkSource) else None
        master_column, table_column = st.columns(2)
        master = spark.render_master_input(
            master_column, connected, key=f"data.spark_master_{state.upload_generation}"
        )
        table = source_text_input(
            table_column,
            "Table, or a folder Spark reads",
            connected,
            "table",
            placeholder="survey, or /data/survey/",
            key="data.spark_table",
            help="The name of a table in Spark's catalog, or the path of a Parquet folder (or a "
            "CSV file) that Spark can read. The address bar keeps both, so a refresh connects "
            "again.",
        )
        declared = source_text_input(
            st,
            "What the table is, if Spark keeps no snapshot of it",
            connected,
            "declared",
            placeholder="survey 2024, extract of 1 March",
            key="data.spark_identity",
            help="The ledger knows each dataset by its identity, so that the same people are "
            "charged to one budget however their data is read. Files are known by their bytes, "
            "Delta and Iceberg tables by their snapshot; for another table (a view, a plain "
            "table), name the data as it is now, the same way wherever it is released. Needed "
            "for a release only.",
        )
        if st.button("Connect", icon=":material/hub:", key="data.spark_connect"):
            spark.allow_typed(master)  # typed here, by the one user of single-user mode
            open_or_explain(spark.SparkSource(master, table.strip(), declared.strip()))
# An upload, data read where it lies, or a Learn preset's built-in data (allowed in workshop mode).
own_data = state.uploaded is not None or state.source is not None
if own_data and st.button("Use the demo data again", icon=":material/undo:"):
    restore_demo(state)
    st.rerun()

# ---- the dataset in use ----------------------------------------------------------------
try:
    kinds, n_rows = pipeline.column_kinds(state), pipeline.row_count(state)
except EngineError as exc:  # data opened earlier, since moved or changed
    st.error(f"{as_written(str(exc))}\n\nOpen the data again, or use the demo data.",
             icon=":material/error:")  # fmt: skip
    stop_page()
st.subheader(state.dataset_name)
rows, columns, _ = st.columns([1, 1, 2])
if state.source is not None:
    rows.metric(
        "Rows (curator's view)", f"{n_rows:,}",
        help=f"Counted exactly from the data {as_written(state.source.place)}, for you who hold the data. "
        "It is not differentially private and is never part of a release or an export.",
    )  # fmt: skip
else:
    rows.metric("Rows", f"{n_rows:,}")
columns.metric("Columns", len(kinds))
for note in state.upload_notes:
    st.info(as_written(note), icon=":material/info:")

current().render_data_choices(kinds)
render_person_choice(kinds, current().columns_not_for_grouping())

if state.source is not None:
    st.subheader("Columns")
    st.dataframe(pd.DataFrame({"column": list(kinds), "type": list(kinds.values())}),
                 hide_index=True)  # fmt: skip
    st.caption(
        f"No rows are shown: they stay {as_written(state.source.place)}. The row count above is the "
        "curator's view of the confidential data, not differentially private."
    )
else:  # ---- preview and columns of a table in memory --------------------------------------
    frame = get_dataset()
    is_demo = state.uploaded is None
    st.subheader("Preview")
    st.caption(
        f"First {PREVIEW_ROWS} of {n_rows:,} rows, shown as they are: this curator's view of "
        "the confidential data is not differentially private."
    )
    st.dataframe(frame.head(PREVIEW_ROWS), hide_index=True)
    st.subheader("Columns")
    st.dataframe(describe_columns(frame, DEMO_COLUMNS if is_demo else {}), hide_index=True)
    if is_demo:
        st.caption(
            "Source: UCI Adult, 1994 US Census extract (Becker & Kohavi, 1996), CC BY 4.0. "
            "The `score` column comes from a demo classifier."
        )
