"""The analyses' widgets, found through the registry of :mod:`dpcore.analyses`.

Each analysis ``<name>`` of :data:`dpcore.analyses.ANALYSES` has a package
``strata_ui.analyses.<name>`` whose ``UI`` is its :class:`~strata_ui.analyses.base.AnalysisUI`.
Pages call :func:`current` (the analysis chosen on the Estimator page), :func:`every` or
:func:`for_kind`; none of them names an analysis.
"""

from __future__ import annotations

import importlib

import streamlit as st

from dpcore.analyses import ANALYSES, get
from strata_ui.analyses.base import AnalysisUI, LearnItem
from strata_ui.state import get_state

__all__ = ["AnalysisUI", "LearnItem", "current", "every", "for_kind", "stops_for_rows"]


def for_kind(name: str) -> AnalysisUI:
    """The widgets of the analysis registered as ``name`` (``ValueError`` for an unknown one)."""
    return importlib.import_module(f"strata_ui.analyses.{get(name).name}").UI


def every() -> tuple[AnalysisUI, ...]:
    """The widgets of every registered analysis, in the registry's order."""
    return tuple(for_kind(analysis.name) for analysis in ANALYSES)


def current() -> AnalysisUI:
    """The widgets of the analysis chosen on the Estimator page."""
    return for_kind(get_state().analysis)


def stops_for_rows() -> bool:
    """Say plainly when the chosen analysis cannot run on the rows as the Data page gives them:
    files read where they lie, for an analysis that needs the rows in memory
    (:attr:`~dpcore.analyses.base.Analysis.runs_on_engines`), or a person column, for one that
    counts each row as a person
    (:attr:`~dpcore.analyses.base.Analysis.honours_person_column`). True when it cannot, and
    the page then stops instead of failing further down (or releasing rows as people)."""
    state = get_state()
    analysis = get(state.analysis)
    if state.person_column is not None and not analysis.honours_person_column:
        st.warning(analysis.needs_row_unit(), icon=":material/group:")
        return True
    if state.source is None or analysis.runs_on_engines:
        return False
    st.info(analysis.needs_rows(), icon=":material/memory:")
    return True
