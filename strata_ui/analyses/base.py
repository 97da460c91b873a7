"""What every analysis provides to the pages (:class:`AnalysisUI`), so that no page branches on
an analysis' name."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from dpcore.analyses.base import Analysis
from dpcore.foundations.accounting import Budget
from dpcore.release import ReleasePlan, ReleaseRecord
from strata_ui import pipeline
from strata_ui.state import get_settings, get_state

__all__ = ["AnalysisUI", "LearnItem", "session_plan"]


def session_plan(
    analysis: Analysis, statistics: Callable[[Any, Budget], Any], budget: Budget | None = None
) -> ReleasePlan:
    """The release the session would commit with ``analysis`` at ``budget`` (None: the Budget
    page's): its settings, ``statistics(settings, budget)`` and the session's plan header."""
    state = get_state()
    settings = get_settings(analysis.settings_type)
    budget = pipeline.release_budget(state, budget)
    return analysis.plan(
        statistics(settings, budget), settings, pipeline.plan_header(state, budget)
    )


@dataclass(frozen=True)
class LearnItem:
    """One explainer or preset on the Learn page: an expander that draws ``render`` when open."""

    key: str
    title: str
    icon: str
    render: Callable[[], None]


class AnalysisUI(ABC):
    """The widgets of one analysis on the pages.

    Required: the Estimator page's settings and preview (:meth:`render_estimator`), the Compare
    page's simulation study (:meth:`render_compare`) and the release the Release page commits
    (:meth:`current_plan`). The other hooks add what only some analyses need; by default they
    add nothing.
    """

    analysis: Analysis
    """The dpcore analysis these widgets drive."""
    has_intervals: bool = True
    """Whether a release has intervals (the Release page then offers their level, and its
    downloads an HTML report)."""
    release_rows: str = "Estimates and intervals"
    """What a release's rows are, for the help of its downloads."""
    explainers: tuple[LearnItem, ...] = ()
    """The analysis' explainers on the Learn page."""
    presets: tuple[LearnItem, ...] = ()
    """Its presets on the Learn page: the papers' results, rebuilt."""
    address_view: tuple[type, tuple[str, ...]] | None = None
    """Its view settings (a frozen dataclass) and those of their fields that the address keeps,
    so that a refresh redraws the Compare page as it was (:mod:`strata_ui.url_state`): display
    choices only, never one read from the data (a group's label, a column's value)."""

    @property
    def name(self) -> str:
        return self.analysis.name

    @abstractmethod
    def render_estimator(self) -> None:
        """The Estimator page: the analysis' settings and its preview."""

    @abstractmethod
    def render_compare(self) -> None:
        """The Compare page: simulated releases scored against the confidential truth."""

    def current_plan(self, budget: Budget | None = None) -> ReleasePlan:
        """The release the session would commit at ``budget`` (None: the Budget page's; a plan
        of several releases passes each one's planned budget), from the session's settings and
        their statistics (:meth:`plan_statistics`); ``ValueError`` says what to fix."""
        return session_plan(self.analysis, self.plan_statistics, budget)

    def plan_statistics(self, settings: Any, budget: Budget) -> Any:
        """The statistics :meth:`current_plan` plans from: the session's cached statistics of
        ``settings``, unless the analysis checks more first (what the plan at ``budget`` needs);
        ``ValueError`` says what to fix."""
        return pipeline.current_statistics(self.analysis, settings)

    def render_data_choices(self, kinds: dict[str, str]) -> None:
        """Choices on the Data page that belong to this analysis (the mean's value column), from
        the data's columns and their kinds (:func:`dpcore.column_kind`'s words)."""
        return None  # nothing by default

    def columns_not_for_grouping(self) -> tuple[str, ...]:
        """Columns the Strata page does not offer for grouping (the mean's value column)."""
        return ()

    def render_budget_choices(self) -> None:
        """Choices on the Budget page that belong to this analysis (the mean's budget split)."""
        return None  # nothing by default

    def render_release_options(self) -> None:
        """Choices on the Release page that belong to this analysis (the mean's strategy)."""
        return None  # nothing by default

    def on_dataset_change(self, *, demo: bool) -> None:
        """Reset choices tied to the data when a file is uploaded or the demo data restored."""
        return None  # nothing by default

    def release_figure(self, record: ReleaseRecord) -> go.Figure | None:
        """The analysis' own chart of a release, or None for the generic one."""
        return None

    def render_record(self, record: ReleaseRecord, key: str) -> bool:
        """Draw a release in the analysis' own way; False to use the generic table and chart."""
        return False
