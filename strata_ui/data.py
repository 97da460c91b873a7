"""Cached data loaders and plain-language summaries of a dataset for display."""

from __future__ import annotations

from datetime import datetime

import pandas as pd
import streamlit as st

from dpcore import column_kind as kind_of
from dpcore import datasets
from dpcore.ledger import LedgerRecord


@st.cache_resource(show_spinner="Loading the demo data…")
def load_demo() -> pd.DataFrame:
    """The demo dataset, read from disk once per server process and shared by every session
    and rerun (a page reads it a dozen times per run; a copy each time cost more than the
    rest of a small page). Read it, never change it in place: pandas' copy-on-write keeps any
    frame derived from it apart."""
    return datasets.load_demo()


def describe_columns(frame: pd.DataFrame, descriptions: dict[str, str]) -> pd.DataFrame:
    """One row per column: name, plain-language type, storage dtype and description."""
    return pd.DataFrame(
        {
            "column": frame.columns,
            "type": [kind_of(frame[c]) for c in frame.columns],
            "dtype": [str(frame[c].dtype) for c in frame.columns],
            "description": [descriptions.get(c, "") for c in frame.columns],
        }
    )


def history_table(records: list[LedgerRecord]) -> pd.DataFrame:
    """The ledger's spends, oldest first, as a table for display."""
    return pd.DataFrame(
        {
            "when (UTC)": [
                datetime.fromisoformat(r.created_at).strftime("%Y-%m-%d %H:%M:%S") for r in records
            ],
            "release": [r.label for r in records],
            "cost": [str(r.cost) for r in records],
        }
    )
