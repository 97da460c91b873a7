"""The Release page's preview: per group, what the commit would publish (curator's view)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.release import ReleasePlan, nothing_informative
from strata_ui.style import plain_number
from strata_ui.text import as_written
from strata_ui.widgets import table_height

PREVIEW_LABELS = {
    "group": "group",
    "quantity": "released value",
    "expected_error": "typical error",
    "half_width": "interval ±",
    "withheld": "withheld?",
}


@st.cache_data(max_entries=16, show_spinner=False)
def _preview(key: str, _plan: ReleasePlan) -> pd.DataFrame:
    # ``key`` (the plan's key: data, groups, settings, budget) says when to redraw.
    return _plan.preview()


def render_preview(plan: ReleasePlan, key: str) -> str | None:
    """The plan's :meth:`preview` as a table, labelled as the curator's view; never exported.
    Returns the sentence of :func:`~dpcore.release.nothing_informative` when the commit would
    publish nothing informative (the page then refuses it), else None."""
    st.markdown("**What this commit would publish, per group**")
    with st.spinner("Simulating a few releases (no budget spent)…"):
        table = _preview(key, plan)
    shown = table.rename(columns=PREVIEW_LABELS)
    if not table["quantity"].astype(bool).any():
        shown = shown.drop(columns=PREVIEW_LABELS["quantity"])
    if table["half_width"].isna().all():
        shown = shown.drop(columns=PREVIEW_LABELS["half_width"])
    reasons = table.loc[table["withheld"] != "", ["group", "withheld"]]
    withheld = len(reasons)
    if not withheld:  # the caption says so; the column would only be empty
        shown = shown.drop(columns=PREVIEW_LABELS["withheld"])
    else:  # a yes in the table, the reason in full below it: a sentence in a cell was cut off
        shown[PREVIEW_LABELS["withheld"]] = table["withheld"].map(lambda r: "yes" if r else "")
    numbers = [
        PREVIEW_LABELS[c] for c in ("expected_error", "half_width") if PREVIEW_LABELS[c] in shown
    ]
    # Three significant digits, and a dash where a withheld row has no error or interval (a
    # number column would print "None").
    shown[numbers] = shown[numbers].map(lambda x: "—" if pd.isna(x) else f"{plain_number(x, 3)}")
    st.dataframe(
        shown, hide_index=True, width="stretch", height=table_height(len(shown), limit=1_100),  # 30 rows
        column_config={c: st.column_config.TextColumn(alignment="right") for c in numbers},
    )  # fmt: skip
    if withheld:
        st.markdown(
            "**Why withheld**\n"
            + "\n".join(f"- {as_written(group)}: {as_written(reason.removeprefix('withheld: '))}"
                         for group, reason in reasons.itertuples(index=False))
        )  # fmt: skip
    st.caption(
        "Curator's view, computed from the confidential data with simulated noise; it is never "
        "exported and spends nothing. Errors are in the value's units: the typical error is how far "
        "a published value usually lies from the value without noise, and the interval ± the "
        "expected half-width of its interval"
        + (f"; {withheld} row(s) would or might be withheld, for the reasons above." if withheld
           else "; no row would be withheld.")
    )  # fmt: skip
    return nothing_informative(table)
