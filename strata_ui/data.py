"""Cached data loaders and plain-language summaries of a dataset for display."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import column_kind as kind_of
from dpcore.foundations import datasets
from dpcore.foundations.labels import plural
from dpcore.foundations.ledger import LedgerRecord


@st.cache_resource(show_spinner="Loading the demo data…")
def load_demo() -> pd.DataFrame:
    """The demo dataset, read from disk once per server process and shared by every session
    and rerun (a page reads it a dozen times per run; a copy each time cost more than the
    rest of a small page). Read it, never change it in place: pandas' copy-on-write keeps any
    frame derived from it apart."""
    return datasets.load_demo()


def describe_columns(frame: pd.DataFrame, descriptions: dict[str, str]) -> pd.DataFrame:
    """One row per column: name, plain-language type and description."""
    return pd.DataFrame(
        {
            "column": frame.columns,
            "type": [kind_of(frame[c]) for c in frame.columns],
            "description": [descriptions.get(c, "") for c in frame.columns],
        }
    )


def history_table(records: list[LedgerRecord], actors: dict[int, str]) -> pd.DataFrame:
    """The ledger's spends, oldest first, as a table for display, with who committed each
    (``actors``, by record id; a record made before sign-in existed names no one)."""
    return pd.DataFrame(
        {
            "when (UTC)": [
                datetime.fromisoformat(r.created_at).strftime("%Y-%m-%d %H:%M:%S") for r in records
            ],
            "release": [r.label for r in records],
            "cost": [str(r.cost) for r in records],
            "committed by": [actors.get(r.id, "") for r in records],
        }
    )


MANY_GROUPS = 200
"""Above this many groups the Strata page warns what the grouping costs."""
FEW_ROWS = 30
"""A group with fewer rows than this gets an estimate that is mostly noise at ε ≈ 1."""


def many_groups_warning(sizes: np.ndarray) -> str | None:
    """What a grouping of more than :data:`MANY_GROUPS` groups costs, in plain words (None for
    fewer): how many groups are tiny, what that does to their estimates, and what to change.
    ``sizes`` are the curator's exact sizes; the warning is shown on screen only."""
    k = int(sizes.size)
    if k <= MANY_GROUPS:
        return None
    tiny = int((sizes < FEW_ROWS).sum())
    median = float(np.median(sizes))
    return (
        f"{k:,} groups is a lot. Half of them have {plural(round(median), 'row')} or fewer and "
        f"{tiny:,} have "
        f"fewer than {FEW_ROWS}: each group's private estimate gets noise scaled to one person "
        "over its own size, so these estimates will be mostly noise, and every chart and "
        "simulation has to draw them all. Fewer grouping columns, or coarser bucket edges, give "
        "groups large enough to say something."
    )
