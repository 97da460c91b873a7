"""Results kept for every session by their inputs' key (:class:`SharedResults`): slow ones
(seconds to minutes: MST and AIM fits, the planner's simulated syntheses), which run once per
choice, after the user asked, with a progress bar, so a rerun shows them again at once; and
the Compare page's simulations, looked up on every slider move."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TypeVar

import streamlit as st

from dpcore.release import Progress
from strata_ui.widgets import progress_bar

__all__ = ["MAX_KEPT", "SharedResults", "kept", "kept_or_run"]

T = TypeVar("T")

MAX_KEPT = 16
"""Slow results kept (the oldest is forgotten first)."""


class SharedResults:
    """Results by a hashable key, shared by every session and never copied: callers must not
    change them. The oldest is forgotten past ``limit``.

    Not ``st.cache_data``: it hashes every argument with Streamlit's hasher and pickles each
    new result (about 15 ms per Compare slider move), and a cached function may not move a
    progress bar drawn outside it (Streamlit replays its elements). The key is the caller's
    word for everything the result depends on."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._results: dict[Hashable, object] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> object | None:
        """The result kept for ``key``, None when there is none (the work has not run)."""
        return self._results.get(key)

    def get_or_compute(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The result kept for ``key``, computed (outside the lock) if there is none."""
        if key in self._results:
            return self._results[key]
        result = compute()
        with self._lock:
            self._results[key] = result
            while len(self._results) > self._limit:
                self._results.pop(next(iter(self._results)))
        return result


@st.cache_resource(show_spinner=False)
def _kept() -> SharedResults:
    """The slow results of every session."""
    return SharedResults(MAX_KEPT)


def kept(key: Hashable) -> object | None:
    """The slow result kept for ``key``, None when there is none (the work has not run)."""
    return _kept().get(key)


def kept_or_run(key: Hashable, label: str, compute: Callable[[Progress], T]) -> T:
    """``compute(progress)`` once per ``key`` with a progress bar, then the kept result."""

    def with_progress() -> T:
        progress, clear = progress_bar(label)
        try:
            return compute(progress)
        finally:
            clear()

    return _kept().get_or_compute(key, with_progress)
