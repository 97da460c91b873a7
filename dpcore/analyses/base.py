"""The interface every analysis implements, so that pages, scripts and tools never branch on an
analysis' name.

An analysis is a frozen settings dataclass (its typed choices) plus an :class:`Analysis` object
that knows, for those settings:

- what is wrong with them for a table (:meth:`Analysis.problems`);
- the budget it runs at, in its own accounting, for the budget a user set
  (:meth:`Analysis.native_budget`) and a sentence saying so (:meth:`Analysis.describe_budget`);
- its sufficient statistics from a :class:`~dpcore.foundations.grouping.Grouping` — the only pass over the
  table's rows (:meth:`Analysis.statistics`) — and, where it can, from an engine that reads the
  rows where they lie, such as files on disk (:meth:`Analysis.engine_statistics`,
  :attr:`Analysis.runs_on_engines`);
- its release plan (:meth:`Analysis.plan`), from which its preview follows: the plan's estimate
  drawn once with simulation noise (:meth:`Analysis.preview`);
- its simulation study, many simulated releases scored against the confidential truth
  (:meth:`Analysis.study`);
- for the planner (:mod:`dpcore.planner`), where it has one: the errors of what it publishes as a
  function of the budget (:meth:`Analysis.error_model`), their check by simulation
  (:meth:`Analysis.check_accuracy`), what both cost in seconds (:meth:`Analysis.planner_cost`,
  so that a page runs a slow simulation only when asked) and the frontier of stratification choices
  (:meth:`Analysis.frontier`). An analysis without them raises :class:`PlannerUnavailable`.

The registry in :mod:`dpcore.analyses` lists one instance of each.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import numpy as np
import pandas as pd

from dpcore.foundations.accounting import Budget, Kind
from dpcore.foundations.dataset import DatasetRef
from dpcore.foundations.errors import Problem, SettingsError
from dpcore.foundations.grouping import Grouping, GroupingSpec
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from dpcore.foundations.small_groups import CountNoise
from dpcore.foundations.validation import as_rng
from dpcore.planner.accuracy import AccuracyTarget, ErrorModel
from dpcore.planner.simulated import PlannerCost
from dpcore.release.plan import PlanHeader, Progress, ReleasePlan

if TYPE_CHECKING:  # the engines package imports DuckDB and Spark modules: only the type here
    from dpcore.engines import Engine

__all__ = [
    "Analysis",
    "EngineStatistics",
    "NeedsRowsInMemory",
    "PersonColumnUnsupported",
    "PlannerUnavailable",
    "StudyRuns",
    "unit_keyword",
]

SettingsT = TypeVar("SettingsT")
StatsT = TypeVar("StatsT")
PreviewT = TypeVar("PreviewT")
"""What the plan's estimate is (:meth:`Analysis.preview`): group estimates, an interval, rows."""
StudyT = TypeVar("StudyT")
"""What a simulation study returns (:meth:`Analysis.study`): the Compare page's numbers."""


@dataclass(frozen=True)
class StudyRuns:
    """How a simulation study (:meth:`Analysis.study`) runs: ``replicates`` simulated releases
    drawn from ``rng``, their intervals at ``level`` (unused by a study that scores estimates,
    not intervals)."""

    replicates: int
    rng: np.random.Generator | int | None = None
    level: float = 0.95


@dataclass(frozen=True, eq=False)
class EngineStatistics(Generic[StatsT]):
    """What :meth:`Analysis.engine_statistics` returns: the analysis' sufficient statistics
    from an engine's passes (what :meth:`Analysis.plan` and :meth:`Analysis.study` take) and
    the data reference a release records."""

    stats: StatsT
    dataset: DatasetRef


class PlannerUnavailable(ValueError):
    """The planner does not cover this analysis, or these settings of it; the message says
    which and what to use instead."""


class NeedsRowsInMemory(ValueError):
    """The analysis reads the rows themselves, which an engine keeps where they lie (files on
    disk); the message says so and what to do instead."""


class PersonColumnUnsupported(ValueError):
    """The analysis counts each row as one person and cannot honour a person column yet; the
    message says so and what to do instead (:meth:`Analysis.needs_row_unit`)."""


def unit_keyword(analysis: Analysis, unit: PrivacyUnit) -> dict:
    """``unit=`` for an analysis that bounds each person's rows
    (:attr:`Analysis.honours_person_column`); nothing for one that counts rows, which a caller
    must never hand a person column (it refuses with :meth:`Analysis.needs_row_unit` first)."""
    return {"unit": unit} if analysis.honours_person_column else {}


class Analysis(ABC, Generic[SettingsT, StatsT, PreviewT, StudyT]):
    """One analysis of Strata Lab (see the module docstring)."""

    name: ClassVar[str]
    """Registry key; also the ``kind`` in a release's parameters."""
    title: ClassVar[str]
    """What a user picks, e.g. ``"Mean per group (stratified)"``."""
    summary: ClassVar[str]
    """One sentence under the title saying what the analysis answers."""
    settings_type: ClassVar[type]
    """The frozen dataclass of the analysis' settings; its defaults fit the demo data."""
    read_only_statistics: ClassVar[bool] = False
    """True when :meth:`statistics` returns a frozen object whose arrays are read-only: then
    every reader may share that one object (the app keeps it as a shared resource instead of
    handing each rerun a copy)."""
    runs_on_engines: ClassVar[bool] = False
    """True when :meth:`engine_statistics` computes the statistics through an engine
    (:mod:`dpcore.engines`), so that the analysis runs on data never loaded into memory (files
    on disk); False when it needs the rows in memory (:meth:`needs_rows`)."""
    honours_person_column: ClassVar[bool] = False
    """True when :meth:`statistics`, :meth:`engine_statistics` and :meth:`frontier` take a
    keyword ``unit`` (:class:`~dpcore.foundations.privacy_unit.PrivacyUnit`) and bound each person's rows
    before they aggregate, so that a release protects one person who owns several rows; False
    when the analysis counts each row as a person and must refuse a person column
    (:meth:`needs_row_unit`)."""

    def default_settings(self) -> SettingsT:
        return self.settings_type()

    def value_columns(self, settings: SettingsT) -> tuple[str, ...]:
        """The numeric columns whose value every row the analysis uses must have (the value
        to average, a ratio's sums, a model's columns): a grouping's
        :attr:`~dpcore.foundations.grouping.GroupingSpec.needs_values`, so that the groups,
        their sizes and the small-group rule count the rows the estimate uses. Empty (the
        default) for an analysis that reads categories, where a missing value is a category of
        its own, or before a column is chosen."""
        return ()

    def grouping_for(self, spec: GroupingSpec, settings: SettingsT) -> GroupingSpec:
        """``spec`` grouping the rows this analysis uses under ``settings``
        (:meth:`value_columns`): how the app, the command line and a release's script all
        build its groups."""
        return dataclasses.replace(spec, needs_values=self.value_columns(settings))

    def problems(self, settings: SettingsT, frame: pd.DataFrame) -> list[Problem]:
        """Everything that stops ``settings`` on ``frame`` (errors) or is still to be chosen
        (infos); empty when the analysis can run. Never shows a value of the data."""
        return []

    def check(self, settings: SettingsT, frame: pd.DataFrame) -> None:
        """Raise :class:`~dpcore.foundations.errors.SettingsError` listing :meth:`problems`, if any."""
        problems = self.problems(settings, frame)
        if problems:
            raise SettingsError(problems)

    @abstractmethod
    def native_budget(self, settings: SettingsT, budget: Budget) -> Budget:
        """The budget the analysis runs at for a user's ``budget`` (ε or ρ), in the accounting
        of its mechanism; :class:`~dpcore.foundations.errors.BudgetKindError` when it cannot meet it."""

    def native_header(self, settings: SettingsT, header: PlanHeader) -> PlanHeader:
        """``header`` with its user's budget turned into the one the plan runs at
        (:meth:`native_budget`)."""
        return dataclasses.replace(header, budget=self.native_budget(settings, header.budget))

    def cost(self, settings: SettingsT, budget: Budget) -> Budget:
        """What a release at a user's ``budget`` takes from the ledger: its
        :meth:`native_budget`, unless the analysis charges its exact cost in another accounting
        (the ratio's Gaussian)."""
        return self.native_budget(settings, budget)

    def count_noise(self, settings: SettingsT, budget: Budget) -> CountNoise | None:
        """The noise a release at a user's ``budget`` adds to each group's count, which then
        decides small groups when the shares come from noisy counts
        (:class:`~dpcore.foundations.small_groups.NoisyCountRule`); None when it draws no noisy counts."""
        return None

    @abstractmethod
    def describe_budget(self, settings: SettingsT, budget: Budget) -> str:
        """One sentence: what the analysis runs at for ``budget``, and why."""

    @abstractmethod
    def statistics(self, frame: pd.DataFrame, grouping: Grouping, settings: SettingsT) -> StatsT:
        """The sufficient statistics of ``frame``'s rows in the groups of ``grouping`` (built
        from ``frame``): the only pass over rows; everything after reads these."""

    def statistics_key(self, settings: SettingsT) -> Hashable:
        """The part of ``settings`` that :meth:`statistics` depends on (a cache key): other
        changes reuse the statistics."""
        return settings

    def engine_statistics(
        self, engine: Engine, spec: GroupingSpec, settings: SettingsT
    ) -> EngineStatistics[StatsT]:
        """The sufficient statistics of the rows ``engine`` reads, in the groups of ``spec``,
        from the engine's passes (nothing is loaded into memory but per-group numbers), computed
        by the analysis' own ``aggregate`` module. Only when :attr:`runs_on_engines`; otherwise
        :class:`NeedsRowsInMemory` (:meth:`needs_rows`)."""
        raise NeedsRowsInMemory(self.needs_rows())

    def engine_statistics_key(self, settings: SettingsT) -> Hashable:
        """The part of ``settings`` that :meth:`engine_statistics` depends on (a cache key)."""
        return settings

    def needs_rows(self) -> str:
        """Why the analysis cannot run on data read where it lies, and what to do instead."""
        return (
            f"The {self.title.lower()} needs the rows in memory, and the data in use stays "
            "where it lies (in files on disk, or in Spark). Upload the data (or a sample of it) "
            "on the Data page to use it, or choose an analysis that works where the data lies: "
            "the mean per group, the ratio of sums, or the general estimator's mean or linear "
            "regression."
        )

    def needs_row_unit(self) -> str:
        """Why the analysis cannot honour a person column yet, and what to do instead."""
        return (
            f"The {self.title_in_sentence()} counts each row as one person, but the Data page "
            "says one person may own several rows (a person column). Its release would protect "
            "one row, not one person, so it cannot be released this way. Choose “Each row is "
            "one person” under “Who is one person?” on the Data page if that is true of your "
            "data, or choose the mean per group or the ratio of sums, which bound each person's rows."
        )

    @abstractmethod
    def plan(self, stats: StatsT, settings: SettingsT, header: PlanHeader) -> ReleasePlan:
        """The release plan at ``header.budget`` (a user's budget: the plan runs at
        :meth:`native_budget` of it)."""

    def preview(
        self,
        stats: StatsT,
        settings: SettingsT,
        header: PlanHeader,
        *,
        rng: np.random.Generator | int | None = None,
    ) -> PreviewT:
        """What a release would look like: the plan's estimate, drawn once with numpy noise
        from ``rng`` (a curator's preview, never a release)."""
        generator = as_rng(rng)
        plan = self.plan(stats, settings, header)
        return plan.estimate(SimulationNoise(rng=generator), generator)

    def study(
        self,
        stats: StatsT,
        settings: SettingsT,
        budget: Budget,
        *,
        level: float = 0.95,
        replicates: int,
        rng: np.random.Generator | int | None = None,
        **options: Any,
    ) -> StudyT:
        """Many simulated releases at ``budget``, scored against the confidential truth (the
        Compare page's numbers; numpy noise, no budget spent): ``replicates`` of them drawn
        from ``rng``, their intervals at ``level``. ``options`` are the analysis' own choices
        of what to study, the keywords of its :meth:`run_study`."""
        return self.run_study(stats, settings, budget, StudyRuns(replicates, rng, level), **options)

    @abstractmethod
    def run_study(
        self, stats: StatsT, settings: SettingsT, budget: Budget, runs: StudyRuns
    ) -> StudyT:
        """:meth:`study`, with its runs in one object; an analysis adds its own keyword-only
        options after ``runs``."""

    def error_model(
        self,
        stats: StatsT,
        settings: SettingsT,
        *,
        budget_kind: Kind = "pure",
        progress: Progress | None = None,
    ) -> ErrorModel:
        """The errors of the estimates a release at ``settings`` would publish, as functions of
        its budget (:class:`~dpcore.planner.accuracy.ErrorModel`, the planner's input).
        ``budget_kind`` is the kind of budget the user counts in, for an analysis whose noise
        is calibrated differently under ε and ρ (the ratio's Gaussian). ``progress(done,
        total)`` is passed only where :meth:`planner_cost` says the model takes seconds; the
        analyses whose models are built at once do not take it."""
        raise PlannerUnavailable(self._no_planner())

    def check_planned(self) -> None:
        """Raise :class:`PlannerUnavailable`, before any statistics are computed, when the
        planner does not cover the analysis at all (it has no :meth:`error_model`): a front
        end then says so without reading the data."""
        if type(self).error_model is Analysis.error_model:
            raise PlannerUnavailable(self._no_planner())

    def planner_cost(
        self, stats: StatsT, settings: SettingsT, check_releases: int, *, budget_kind: Kind = "pure"
    ) -> PlannerCost:
        """Expected seconds of :meth:`error_model` (for ``budget_kind``) and of a
        :meth:`check_accuracy` asked for ``check_releases``: 0 (instant) unless the analysis
        says otherwise. :class:`PlannerUnavailable` when the simulation would take longer than
        a page offers."""
        return PlannerCost(check_releases=self.check_replicates(settings, check_releases))

    def check_replicates(self, settings: SettingsT, requested: int) -> int:
        """The simulated releases :meth:`check_accuracy` runs when asked for ``requested``:
        as many, unless a release is too slow to simulate that often on every target change."""
        return requested

    def check_accuracy(
        self,
        stats: StatsT,
        settings: SettingsT,
        budget: Budget,
        target: AccuracyTarget,
        *,
        replicates: int,
        rng: np.random.Generator | int | None = None,
        progress: Progress | None = None,
    ) -> pd.DataFrame:
        """How often :meth:`check_replicates` of ``replicates`` simulated releases at
        ``budget`` (in :meth:`error_model`'s unit) meet ``target``, per estimate (a curator's
        check of the planner's answer). ``progress`` as for :meth:`error_model`: passed only
        where :meth:`planner_cost` says the check takes seconds."""
        raise PlannerUnavailable(self._no_planner())

    def frontier(
        self,
        frame: pd.DataFrame,
        columns: list[str],
        settings: SettingsT,
        budget: Budget,
        grouping: GroupingSpec,
        *,
        replicates: int,
        rng: np.random.Generator | int | None = None,
        unit: PrivacyUnit = ROW,
    ) -> pd.DataFrame:
        """Every stratification of ``columns`` × strategy scored at ``budget`` (a user's
        budget), with ``grouping``'s edges and small-group rule (a curator's preview); ``unit``
        only when :attr:`honours_person_column`."""
        raise PlannerUnavailable(
            f"The frontier of groupings covers the mean per group so far, not the "
            f"{self.title_in_sentence()}. Compare groupings for it by changing them on the Strata page."
        )

    def _no_planner(self) -> str:
        # Said by the app and the command line alike: it names neither's controls.
        return (
            f"The planner covers the mean per group, the ratio of sums, the general estimator "
            f"and synthetic data so far, not the {self.title_in_sentence()}. Plan one of those "
            f"instead, or try budgets on simulated releases of the {self.title_in_sentence()}."
        )

    def title_in_sentence(self) -> str:
        """The title inside a sentence: its first letter lowered, acronyms kept ("CIs")."""
        return self.title[:1].lower() + self.title[1:]
