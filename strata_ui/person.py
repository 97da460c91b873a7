"""The Data page's "Who is one person?": an optional column that says whose row each row is, the
bounds on each person's rows, and a curator's preview of what the bounds leave out.

The choice lives in :class:`~strata_ui.state.AppState` (:data:`~strata_ui.state.PERSON_FIELDS`);
:func:`strata_ui.pipeline.privacy_unit` turns it into the
:class:`~dpcore.foundations.privacy_unit.PrivacyUnit` every pass over the rows bounds.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.foundations.grouping import cell_labels
from dpcore.foundations.privacy_unit import (
    BoundPreview,
    PrivacyUnit,
    missing_person_message,
    preview_bound,
)
from strata_ui import engine_sources, pipeline
from strata_ui.state import AppState, get_dataset, get_state
from strata_ui.text import as_written
from strata_ui.widgets import stored_in

__all__ = ["render_person_choice"]

ONE_ROW = "Each row is one person"


def render_person_choice(kinds: dict[str, str], value_columns: tuple[str, ...]) -> None:
    """The section: the person column (or each row is one person), M and G, what is wrong with
    them, and the preview. ``value_columns`` are the analysis' value columns, which cannot name
    people."""
    state = get_state()
    st.subheader("Who is one person?")
    st.markdown(
        "Differential privacy protects **one person**: adding or removing everything about them "
        "barely changes what the app releases. If one person can own several rows (the visits "
        "of a patient, the purchases of a customer, the members of a household), choose the "
        "column that says whose row it is. Each person's rows are then limited before anything "
        "is added up, and every release protects the whole person, not just one row."
    )
    options = [None, *kinds]
    state.person_column = st.selectbox(
        "Column that identifies a person", options,
        index=options.index(state.person_column) if state.person_column in options else 0,
        format_func=lambda column: ONE_ROW if column is None else column,
        key=(key := f"data.person_column.{state.dataset_fingerprint}"),
        **stored_in(key, state, "person_column"),
        help="An id such as a person or household number. The id itself is never released.",
    )  # fmt: skip
    if state.person_column is None:
        return
    _render_bounds(state)
    problem = _problem(state, value_columns)
    if problem is not None:
        st.error(as_written(problem), icon=":material/error:")
        return
    st.caption(
        f"One person then counts for up to {state.max_rows_per_person * state.max_groups_per_person} "
        "rows: each noisy sum gets the noise of that many rows, so larger bounds keep more rows "
        "but add more noise."
    )
    _render_preview(state)


def _render_bounds(state: AppState) -> None:
    rows, groups = st.columns(2)
    labels = pipeline.PERSON_BOUND_LABELS
    state.max_rows_per_person = int(
        rows.number_input(
            labels["max_rows_per_person"], value=state.max_rows_per_person, step=1,
            key=f"data.max_rows_per_person.{state.dataset_fingerprint}",
            help="M: if a person has more rows than this in one group, only M of them are used.",
        )
    )  # fmt: skip
    state.max_groups_per_person = int(
        groups.number_input(
            labels["max_groups_per_person"], value=state.max_groups_per_person, step=1,
            key=f"data.max_groups_per_person.{state.dataset_fingerprint}",
            help="G: if a person's rows fall in more groups than this (the groups of the Strata "
            "page), only the G groups where they have the most rows are used.",
        )
    )  # fmt: skip


def _problem(state: AppState, value_columns: tuple[str, ...]) -> str | None:
    """What is wrong with the choice, in the words the pipeline uses, or None."""
    if state.person_column in value_columns:
        return (
            f"The person column `{state.person_column}` is also the value to estimate. It "
            "names who owns each row, so choose another person column, or another value."
        )
    try:
        pipeline.privacy_unit(state)
    except ValueError as exc:
        return str(exc)
    return None


def _render_preview(state: AppState) -> None:
    st.markdown("**What the bounds leave out** (curator's view)")
    try:
        spec = pipeline.grouping_spec(state)
        by, edges = spec.by, dict(spec.edges)
    except ValueError:  # no grouping columns yet: every row is in one group
        by, edges = (), {}
    unit, fingerprint = pipeline.privacy_unit(state), state.dataset_fingerprint
    try:
        if state.source is not None:  # counted where the rows lie, in one pass of the engine
            preview = engine_sources.bound_preview(state.source, fingerprint, by, edges, unit)
        else:
            preview = _preview(get_dataset(), fingerprint, by, edges, unit)
    except ValueError as exc:  # a numeric grouping column without edges yet
        st.info(f"The preview needs the groups: {as_written(exc)}", icon=":material/info:")
        return
    if preview.missing_person:
        st.error(as_written(missing_person_message(preview.missing_person, state.person_column)),
                 icon=":material/error:")  # fmt: skip
    left, middle, right = st.columns(3)
    left.metric("Rows left out", f"{preview.dropped:,}", help=f"of {preview.rows:,} rows")
    middle.metric("People affected", f"{preview.people_affected:,}",
                  help=f"of {preview.people:,} people")  # fmt: skip
    right.metric("Most rows of one person in a group", f"{preview.most_rows_in_a_group:,}",
                 help="The smallest M that keeps every row")  # fmt: skip
    grouped = f"the groups of the Strata page ({' × '.join(by)})" if by else "one group"
    st.caption(
        f"With {as_written(grouped)}: {preview.dropped:,} of {preview.rows:,} rows left out, from "
        f"{preview.people_affected:,} of {preview.people:,} people. Keeping every row would take "
        f"M = {preview.most_rows_in_a_group:,} and G = {preview.most_groups:,}. These are exact "
        "counts of the confidential data, shown to you who hold it: they are not differentially "
        "private and are never part of a release or an export."
    )


@st.cache_data(max_entries=16, show_spinner="Counting the rows the bounds leave out…")
def _preview(
    _frame: pd.DataFrame, fingerprint: str, by: tuple[str, ...], edges: dict, unit: PrivacyUnit
) -> BoundPreview:
    """The preview per dataset (``fingerprint`` stands for ``_frame``), cells and bounds."""
    labels = cell_labels(_frame, by, edges) if by else _frame.iloc[:, :0]
    return preview_bound(labels, _frame[unit.column], unit)
