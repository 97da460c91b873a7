"""Slow results (seconds to minutes: MST and AIM fits, the planner's simulated syntheses) kept
for every session by their inputs' key, so that each runs once per choice, after the user
asked, with a progress bar, and a rerun shows it again at once."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

import streamlit as st

from dpcore.release import Progress
from strata_ui.widgets import progress_bar

__all__ = ["MAX_KEPT", "kept", "kept_or_run"]

T = TypeVar("T")

MAX_KEPT = 16
"""Slow results kept (the oldest is forgotten first)."""


@st.cache_resource(show_spinner=False)
def _kept() -> dict:
    """The slow results of every session, by their inputs' key. Not ``st.cache_data``: a cached
    function may not move a progress bar drawn outside it (Streamlit replays its elements)."""
    return {}


def kept(key: Hashable) -> object | None:
    """The result kept for ``key``, None when there is none (the work has not run)."""
    return _kept().get(key)


def kept_or_run(key: Hashable, label: str, compute: Callable[[Progress], T]) -> T:
    """``compute(progress)`` once per ``key`` with a progress bar, then the kept result."""
    store = _kept()
    if key not in store:
        progress, clear = progress_bar(label)
        try:
            store[key] = compute(progress)
        finally:
            clear()
        while len(store) > MAX_KEPT:
            store.pop(next(iter(store)))
    return store[key]
