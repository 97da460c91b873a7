"""The Strata page's table of public shares: typed cell by cell, or filled from a CSV file with the
columns group and share (e.g. census figures), then edited."""

from __future__ import annotations

import functools
import io

import pandas as pd
import streamlit as st

from dpcore.foundations.shares import share_file_rows
from strata_ui.constants import SMALL_FILE_MAX_BYTES, SMALL_FILE_MAX_MB
from strata_ui.state import AppState
from strata_ui.text import as_text, as_written
from strata_ui.widgets import stored_on_change


def render(state: AppState, labels: tuple[str, ...]) -> None:
    """The table of every group's share, with a file uploader beside it that fills the table."""
    editor_key = f"share_table_{hash(labels)}"
    table_col, file_col = st.columns([3, 2])
    with file_col:
        _load_file(state, labels, editor_key)
    with table_col:
        edited = st.data_editor(
            pd.DataFrame(
                {"group": list(labels), "share": [state.share_table.get(g) for g in labels]}
            ).astype({"share": "float64"}),
            column_config={
                "group": st.column_config.TextColumn("group", disabled=True),
                "share": st.column_config.NumberColumn(
                    "share", min_value=None, format="%.4f", help="Proportion, percentage or count."
                ),
            },
            hide_index=True,
            key=editor_key,
            **stored_on_change(editor_key, functools.partial(_store_edits, state, labels)),
        )
    state.share_table = {
        str(g): float(s) for g, s in zip(edited["group"], edited["share"], strict=True)
        if pd.notna(s)
    }  # fmt: skip
    st.caption(
        "Shares may be proportions, percentages or counts (e.g. census figures); they are rescaled "
        "to sum to 1."
    )


def _store_edits(state: AppState, labels: tuple[str, ...], edits: dict) -> None:
    """Put the editor's edited cells (``{"edited_rows": {row: {"share": value}}, ...}``, rows
    in the order of ``labels``) into the session's shares as soon as they are sent: a cell
    typed just before a page change is kept (see :mod:`strata_ui.widgets`)."""
    for row, cells in edits.get("edited_rows", {}).items():
        if "share" not in cells:
            continue
        label, share = labels[int(row)], cells["share"]
        if share is None:
            state.share_table.pop(label, None)
        else:
            state.share_table[label] = float(share)


def _load_file(state: AppState, labels: tuple[str, ...], editor_key: str) -> None:
    """A CSV of (group, share) rows replaces the table's shares once per file; the rows that
    cannot be used are named, and nothing changes then."""
    upload = st.file_uploader(
        "Fill the table from a CSV file (columns group, share)",
        type=["csv"],
        key=f"strata.shares_file.{state.dataset_fingerprint}.{hash(labels)}",
        help="One row per group, its label exactly as the table shows it. Groups missing from "
        "the file keep an empty share to type in.",
        max_upload_size=SMALL_FILE_MAX_MB,
    )
    applied = "strata.shares_file.applied"
    if upload is None or st.session_state.get(applied) == upload.file_id:
        return
    try:
        if upload.size > SMALL_FILE_MAX_BYTES:
            raise ValueError(
                f"the file has {upload.size:,} bytes; a shares file is one short row per group "
                f"(at most {SMALL_FILE_MAX_MB} MB)"
            )
        table = pd.read_csv(
            io.BytesIO(upload.getvalue()), dtype=str, keep_default_na=False, encoding="utf-8-sig"
        )
        rows = share_file_rows(table, labels)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        st.error(
            f"The shares file {as_text(upload.name)} could not be used: {as_written(exc)}",
            icon=":material/error:",
        )
        return
    state.share_table = dict(rows)
    st.session_state.pop(editor_key, None)  # the file's shares replace earlier typed ones
    st.session_state[applied] = upload.file_id
    st.success(
        f"Filled {len(rows):,} shares from {as_text(upload.name)}.", icon=":material/check_circle:"
    )
    missing = [g for g in labels if g not in state.share_table]
    if missing:
        shown = ", ".join(missing[:10]) + (" …" if len(missing) > 10 else "")
        st.warning(
            f"The file has no share for {len(missing):,} group(s): {as_written(shown)}. Type them in the "
            "table, or add them to the file and load it again.",
            icon=":material/warning:",
        )
