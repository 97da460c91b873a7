"""The Strata page's declaration of which groups exist: the categories found in the data, treated
as public, or a declared public list per grouping column (prefilled from the data, editable, or
loaded from a codebook). Only a declared list keeps a new category out of a release.
"""

from __future__ import annotations

import io

import pandas as pd
import streamlit as st

from dpcore.foundations.grouping import MISSING_LABEL, bucket_labels, codebook_categories
from strata_ui import pipeline
from strata_ui.constants import SMALL_FILE_MAX_BYTES, SMALL_FILE_MAX_MB
from strata_ui.state import AppState
from strata_ui.text import as_text, as_written, in_label
from strata_ui.widgets import labelled_radio

GROUP_LIST_LABELS = {
    "data": "The categories found in the data, treated as public",
    "declared": "A declared list of categories (a public codebook)",
}


def render(state: AppState) -> None:
    """The group-list choice and, for a declared list, one editable list per grouping column."""
    st.subheader("Which groups exist")
    labelled_radio(
        "The list of groups comes from", state, "group_list", GROUP_LIST_LABELS,
        key="strata.group_list",
        help="A release names its groups. Taken from the data, a category appears in it as soon "
        "as one person of it is in the data; a declared list does not depend on the data.",
    )  # fmt: skip
    if state.group_list == "data":
        st.caption(
            "Every combination of categories present in the data is a group. Declare the list "
            "instead for a release that keeps group sizes private."
        )
        return
    _load_codebook(state)
    prefilled = [c for c in state.strata_columns if c not in state.codebook_columns]
    st.caption(
        (
            f"Prefilled from the data ({', '.join(map(as_text, prefilled))}): the categories listed are "
            "treated as public, and a release says so. Load a codebook to declare them from a "
            "public source. "
            if prefilled
            else "Loaded from a codebook: a declared public list. "
        )
        + "Every combination is a group: one with no rows is still released (from noise alone "
        "when sizes are private), and rows with a category not listed are left out."
    )
    for column in state.strata_columns:
        chosen = _category_list(state, column)
        # The list as prefilled is not stored: the address would carry it, and with it every
        # category found in the data (one new person of a new category would change a link).
        if chosen == pipeline.prefilled_categories(state, column):
            state.declared_categories.pop(column, None)
        else:
            state.declared_categories[column] = chosen


def _widget_key(state: AppState, column: str) -> str:
    edges = state.bucket_edges.get(column)
    return f"strata.categories.{column}.{state.dataset_fingerprint}.{edges}"


def _category_list(state: AppState, column: str) -> list[str]:
    """One grouping column's declared categories: a multiselect that accepts new categories."""
    edges = state.bucket_edges.get(column)
    found = pipeline.categories_found(state, column, tuple(edges) if edges else None)
    # A bucketed column's categories are its buckets, public because its edges are.
    offered = [*bucket_labels(tuple(edges)), MISSING_LABEL] if edges else found
    key = _widget_key(state, column)
    declared = st.session_state.get(key, state.declared_categories.get(column))
    if edges and declared:  # buckets of edges since changed are no category any more
        declared = [label for label in declared if label in offered] or None
    if declared is None:
        declared = pipeline.prefilled_categories(state, column)
    # The widget keeps its own state once made (or once a codebook set it): a default then
    # would only draw Streamlit's warning about a value set twice.
    default = {} if key in st.session_state else {"default": declared}
    return st.multiselect(
        f"Categories of {in_label(column)}",
        options=list(dict.fromkeys([*offered, *declared])),
        key=key,
        **default,
        accept_new_options=not edges,
        placeholder="Type or choose the categories",
        help="Type a category to add one the data may not have."
        if not edges
        else "The buckets come from the edges above; remove those not to release.",
    )


def _load_codebook(state: AppState) -> None:
    """A codebook CSV (columns column, category) fills the lists of the columns it names."""
    upload = st.file_uploader(
        "Load the lists from a codebook (CSV with the columns column, category)",
        type=["csv"],
        key=f"strata.codebook.{state.dataset_fingerprint}",
        max_upload_size=SMALL_FILE_MAX_MB,
    )
    if upload is None or st.session_state.get("strata.codebook.applied") == upload.file_id:
        return
    try:
        if upload.size > SMALL_FILE_MAX_BYTES:
            raise ValueError(
                f"the file has {upload.size:,} bytes; a codebook is a short list (at most "
                f"{SMALL_FILE_MAX_MB} MB)"
            )
        table = pd.read_csv(
            io.BytesIO(upload.getvalue()), dtype=str, keep_default_na=False, na_values=[""]
        )
        categories = codebook_categories(table)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        st.error(
            f"The codebook {as_text(upload.name)} could not be used: {as_written(exc)}",
            icon=":material/error:",
        )
        return
    used = [column for column in state.strata_columns if column in categories]
    for column in used:
        state.declared_categories[column] = list(categories[column])
        st.session_state[_widget_key(state, column)] = list(categories[column])
    state.codebook_columns = sorted({*state.codebook_columns, *used})
    st.session_state["strata.codebook.applied"] = upload.file_id
    ignored = [column for column in categories if column not in state.strata_columns]
    note = f"Loaded the categories of {', '.join(map(as_text, used)) or 'no grouping column'}"
    st.success(
        note
        + (
            f"; ignored {', '.join(map(as_text, ignored))} (not grouping columns)."
            if ignored
            else "."
        ),
        icon=":material/check_circle:",
    )
