"""A committed private sample on the Release page: its records and their downloads (the records
are DP outputs, so they may be published)."""

from __future__ import annotations

import streamlit as st

from dpcore.foundations.accounting import SYMBOLS
from dpcore.release import ReleaseRecord
from strata_ui import release_ui
from strata_ui.text import as_text


def render_record(record: ReleaseRecord, key: str) -> None:
    plan = record.metadata["plan"]
    estimator = plan["estimator"]
    budget = ", ".join(f"{SYMBOLS[k]} = {v:g}" for k, v in plan["budget"].items() if k != "kind")
    st.markdown(
        f"**Differentially private records** — {len(record.outputs)} of “{as_text(estimator['group'])}”, "
        f"{budget}; {record.metadata['noise']}. These records are a DP release: they may be "
        "published and downloaded."
    )
    st.dataframe(record.frame, hide_index=True)
    release_ui.render_public_categories(record)
    release_ui.render_downloads(record, key)
