"""A committed synthetic release on the Release page: its rows, one column as a chart, and its
downloads (the rows are a DP release, so they may be published)."""

from __future__ import annotations

import streamlit as st

from dpcore.foundations.accounting import format_components
from dpcore.release import ReleaseRecord
from strata_ui import release_ui
from strata_ui.analyses.synth import charts
from strata_ui.analyses.synth.settings import SynthView
from strata_ui.state import get_settings, reset_settings
from strata_ui.widgets import bind


def render_record(record: ReleaseRecord, key: str) -> None:
    """A committed synthetic release: its rows, one column's categories as a chart, downloads."""
    frame = record.frame
    plan = record.metadata["plan"]
    budget = format_components({k: v for k, v in plan["budget"].items() if k != "kind"})
    st.markdown(
        f"**Differentially private synthetic rows** — {len(frame):,} rows, {budget}, "
        f"{plan['statistic']}, {plan['strategy']}; {record.metadata['noise']}. These rows are a "
        "DP release: they may be published and downloaded."
    )
    st.dataframe(frame, hide_index=True)
    release_ui.render_public_categories(record)
    columns = list(frame.columns)
    if get_settings(SynthView).release_column not in columns:
        reset_settings(SynthView, release_column=columns[0])
    column = bind(
        st.selectbox, "Column to chart", SynthView, "release_column", options=columns,
        key_parts=(key,), help="The share of synthetic rows in each category of this column.",
    )  # fmt: skip
    st.plotly_chart(charts.category_figure(frame, column), key=f"{key}.synth.chart")
    st.caption(charts.category_summary(frame, column))
    release_ui.render_downloads(record, key)
