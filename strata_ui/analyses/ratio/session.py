"""The ratio's settings in this session: what stops them, and the group sums they run on.

The checks are dpcore's (:meth:`~dpcore.analyses.ratio.RatioAnalysis.problems` and
:meth:`~dpcore.analyses.ratio.RatioAnalysis.arguments`); this module caches the one that reads
the data and words the budget errors for the pages.
"""

from __future__ import annotations

import streamlit as st

from dpcore.analyses.ratio import RATIO, GroupRatioSums, RatioSettings
from dpcore.foundations.accounting import Budget
from dpcore.foundations.errors import (
    BudgetKindError,
    ClassicGaussianRangeError,
    Problem,
    SettingsError,
)
from strata_ui import pipeline
from strata_ui.state import get_dataset, get_state
from strata_ui.widgets import show_error

__all__ = ["budget_message", "check", "current_sums", "problems", "sums_or_error"]

DATA_FIELDS = ("s_column", "y_column", "w_column", "s_bound", "y_bound", "w_bound", "binary_y")
"""The settings :meth:`~dpcore.analyses.ratio.RatioAnalysis.problems` reads (the others do not
change what is wrong with the columns and bounds)."""


@st.cache_data(max_entries=64, show_spinner=False)
def _data_problems(_frame, fingerprint: str, settings: RatioSettings) -> list[Problem]:
    """The columns' and bounds' problems once per data set (``fingerprint`` stands for
    ``_frame``) and choice of columns: checking that a label is 0/1 scans the whole column."""
    return RATIO.problems(settings, _frame)


def data_problems(settings: RatioSettings) -> list[Problem]:
    """What is wrong with the columns and bounds of ``settings`` on the data in use (cached).
    On files read where they lie, from the columns' kinds: the engine's pass checks a binary
    label (its message is then the sums' error)."""
    state = get_state()
    checked = RatioSettings(**{name: getattr(settings, name) for name in DATA_FIELDS})
    if state.source is not None:
        return RATIO.column_problems(checked, pipeline.column_kinds(state))
    return _data_problems(get_dataset(), state.dataset_fingerprint, checked)


def budget_message(exc: Exception, budget: Budget) -> str:
    """A budget error in words: what cannot be done and how to fix it."""
    if isinstance(exc, ClassicGaussianRangeError):
        return (
            f"The budget {budget} is too large for the classic Gaussian formula (paper eq. 5), "
            "which needs ε/m < 1 for each of the m released sums. Choose “Gaussian, analytic”, "
            "switch the accounting to zCDP, or lower ε on the Budget page."
        )
    if isinstance(exc, BudgetKindError) and exc.mechanism == "gaussian_analytic":
        return (
            "The analytic Gaussian formula splits an (ε, δ) budget, but the Budget page is set to "
            "ρ-zCDP. Choose “Gaussian, classic” (its σ then comes from ρ directly) or Laplace, or "
            "switch the Budget page to ε."
        )
    return f"These settings cannot be used with the budget {budget}: {exc}"


def problems(settings: RatioSettings, budget: Budget) -> list[Problem]:
    """Everything that stops ``settings`` at ``budget``: the columns and bounds first, then
    whether the mechanism can run at that budget."""
    found = data_problems(settings)
    if found:
        return found
    try:
        RATIO.arguments(settings, budget)
    except (ValueError, TypeError) as exc:
        return [Problem("error", budget_message(exc, budget))]
    return []


def check(settings: RatioSettings, budget: Budget) -> None:
    """Raise :class:`~dpcore.foundations.errors.SettingsError` listing :func:`problems`, if any."""
    found = problems(settings, budget)
    if found:
        raise SettingsError(found)


def current_sums(settings: RatioSettings) -> tuple[GroupRatioSums, tuple]:
    """The groups' exact clipped sums of checked ``settings`` (cached by
    :func:`strata_ui.pipeline.current_statistics`) and a cache key that stands for them."""
    key = (pipeline.grouping_key(get_state()), RATIO.statistics_key(settings))
    return pipeline.current_statistics(RATIO, settings), key


def sums_or_error(settings: RatioSettings) -> tuple[GroupRatioSums, tuple] | None:
    """:func:`current_sums`, or None after showing why the sums cannot be computed."""
    try:
        return current_sums(settings)
    except (ValueError, TypeError) as exc:
        show_error(exc)
        return None
