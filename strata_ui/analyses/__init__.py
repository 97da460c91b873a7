"""The analyses' widgets, found through the registry of :mod:`dpcore.analyses`.

Each analysis ``<name>`` of :data:`dpcore.analyses.ANALYSES` has a package
``strata_ui.analyses.<name>`` whose ``UI`` is its :class:`~strata_ui.analyses.base.AnalysisUI`.
Pages call :func:`current` (the analysis chosen on the Estimator page), :func:`every` or
:func:`for_kind`; none of them names an analysis.
"""

from __future__ import annotations

import importlib

from dpcore.analyses import ANALYSES, get
from strata_ui.analyses.base import AnalysisUI, LearnItem
from strata_ui.state import get_state

__all__ = ["AnalysisUI", "LearnItem", "current", "every", "for_kind"]


def for_kind(name: str) -> AnalysisUI:
    """The widgets of the analysis registered as ``name`` (``ValueError`` for an unknown one)."""
    return importlib.import_module(f"strata_ui.analyses.{get(name).name}").UI


def every() -> tuple[AnalysisUI, ...]:
    """The widgets of every registered analysis, in the registry's order."""
    return tuple(for_kind(analysis.name) for analysis in ANALYSES)


def current() -> AnalysisUI:
    """The widgets of the analysis chosen on the Estimator page."""
    return for_kind(get_state().analysis)
