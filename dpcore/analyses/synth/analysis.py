"""Synthetic data as an analysis: its settings, budget, statistics (the rows to synthesize),
plan and simulation study."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from dpcore.analyses.base import Analysis, EngineStatistics, StudyRuns
from dpcore.analyses.synth.accuracy import (
    SIMULATION_SIZES,
    SynthErrorModel,
    check_synth_accuracy,
    seconds_per_synthesis,
    synth_error_model,
    synth_planner_cost,
)
from dpcore.analyses.synth.aggregate import aggregate_synth
from dpcore.analyses.synth.config import (
    MIN_MODEL_COLUMNS,
    PreparedRows,
    Strategy,
    SynthConfig,
    check_config,
    prepare_rows,
)
from dpcore.analyses.synth.encoding import Method
from dpcore.analyses.synth.mbi_models import MBI_METHODS
from dpcore.analyses.synth.plan import SynthPlan
from dpcore.analyses.synth.synthesizers import Progress, SyntheticData
from dpcore.analyses.synth.workload import sweep_errors
from dpcore.foundations.accounting import (
    ZCDP,
    Budget,
    Kind,
    PureDP,
    as_pure_dp,
    as_zcdp,
    pure_epsilon_within,
)
from dpcore.foundations.column_choices import choice_of, with_choice
from dpcore.foundations.grouping import Grouping, GroupingSpec
from dpcore.foundations.metrics import GroupWorkload
from dpcore.foundations.validation import as_rng, column_kind
from dpcore.planner.accuracy import AccuracyTarget
from dpcore.planner.simulated import PlannerCost
from dpcore.release.plan import PlanHeader

if TYPE_CHECKING:  # the engines package imports DuckDB and Spark modules: only the type here
    from dpcore.engines import Engine

__all__ = ["SYNTH", "SynthAnalysis", "SynthSettings"]

DEFAULT_COLUMNS = (
    "age",
    "workclass",
    "education",
    "marital_status",
    "hours_per_week",
    "income_over_50k",
)
"""The demo's columns to synthesize (when the data has them)."""


NUMBER_KINDS = ("whole number", "decimal number")
"""Column kinds (:func:`~dpcore.foundations.validation.column_kind`'s words) that need public bucket edges
or to be treated as categories (yes/no and text columns are categories as they are)."""


def column_kinds(frame: pd.DataFrame) -> dict:
    """Each column of ``frame`` and its kind, in the frame's order."""
    return {column: column_kind(frame[column]) for column in frame.columns}


@dataclass(frozen=True)
class SynthSettings:
    """The synthetic-data analysis' choices (defaults fit the demo data).

    ``columns`` None means a default subset of the data's columns (:meth:`SynthAnalysis.columns`).
    A numeric column is bucketed by its public ``edges`` (typed by the user, never read off the
    data) unless it is listed in ``categorical``, whose values are then categories.
    """

    method: Method = "mwem"
    strategy: Strategy = "stratified"
    columns: tuple[str, ...] | None = None
    edges: tuple[tuple[str, tuple[float, ...]], ...] = (
        ("age", (25.0, 35.0, 45.0, 55.0, 65.0)),
        ("hours_per_week", (20.0, 35.0, 41.0, 50.0)),
        ("score", (0.25, 0.5, 0.75)),
    )
    categorical: tuple[str, ...] = ("income_over_50k",)
    n_rows: int = 10_000
    rounds: int = 6

    def edges_of(self, column: str) -> tuple[float, ...] | None:
        """The public bucket edges typed for ``column`` (None if none were)."""
        return choice_of(self.edges, column)

    def with_edges(self, column: str, edges: tuple[float, ...] | None) -> SynthSettings:
        """These settings with ``column``'s edges set (or removed with None)."""
        return dataclasses.replace(self, edges=with_choice(self.edges, column, edges))


class SynthAnalysis(Analysis[SynthSettings, PreparedRows, SyntheticData, pd.DataFrame]):
    """ε-DP synthetic rows, one model per group (stratified) or one for everyone (vanilla)
    (Rosenblatt, Stoyanovich & Musco, AAAI 2024 arXiv, appendix C)."""

    name = "synth"
    title = "Synthetic data"
    summary = "Privately generated rows: does a synthetic release treat small groups fairly?"
    settings_type = SynthSettings
    runs_on_engines = True  # independent, histogram and MWEM fit on an engine's cell counts

    def columns(
        self, settings: SynthSettings, kinds: dict[str, str], strata: tuple[str, ...]
    ) -> tuple[str, ...]:
        """The chosen columns present in the data, whose columns and their kinds are ``kinds``
        (:func:`~dpcore.foundations.validation.column_kind`'s words); without a choice (or none present,
        e.g. after an upload), the demo's columns, else the first 6 columns that are not
        numbers (no edges needed)."""
        options = [c for c in kinds if c not in strata]
        chosen = [c for c in settings.columns or () if c in options]
        if chosen or settings.columns == ():
            return tuple(chosen)
        defaults = [c for c in DEFAULT_COLUMNS if c in options]
        if len(defaults) >= MIN_MODEL_COLUMNS:
            return tuple(defaults)
        return tuple([c for c in options if kinds[c] not in NUMBER_KINDS][:6])

    def config(
        self, settings: SynthSettings, kinds: dict[str, str], strata: tuple[str, ...]
    ) -> SynthConfig:
        """The settings as a :class:`SynthConfig` for data whose columns and their kinds are
        ``kinds``; ``ValueError`` says what to fix."""
        columns = self.columns(settings, kinds, strata)
        edges, categorical = [], []
        for column in columns:
            if kinds[column] not in NUMBER_KINDS:
                continue
            if column in settings.categorical:
                categorical.append(column)
            elif (typed := settings.edges_of(column)) is not None:
                edges.append((column, typed))
        try:
            return SynthConfig(
                columns=columns, method=settings.method, n_rows=int(settings.n_rows),
                edges=tuple(edges), categorical=tuple(categorical), rounds=int(settings.rounds),
            )  # fmt: skip
        except (TypeError, ValueError) as exc:
            raise ValueError(f"The synthesizer's settings are not valid: {exc}.") from None

    def native_budget(self, settings: SynthSettings, budget: Budget) -> PureDP | ZCDP:
        """Pure ε-DP for the Laplace synthesizers: a ρ-zCDP budget runs them at ε = √(2ρ), since
        ε-DP implies ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4), so the release costs exactly ρ.
        MST and AIM add Gaussian noise and are accounted by OpenDP in ρ-zCDP: they run at the
        Budget page's ρ, or at ρ = ε²/2 for an ε budget, which costs what an ε-DP release
        would (the budget language's one rule, :func:`~dpcore.foundations.accounting.charge_of`)."""
        if settings.method not in MBI_METHODS:
            return as_pure_dp(budget, "Synthesis")
        return as_zcdp(budget, settings.method.upper())

    def run_epsilon(self, settings: SynthSettings, budget: Budget) -> float:
        """The ε the synthesizers are called with for ``budget``: the Laplace ones run at it;
        MST and AIM at ρ = ε²/2 (:func:`~dpcore.analyses.synth.synthesize`), which never
        exceeds the Budget page's ρ (:func:`~dpcore.foundations.accounting.pure_epsilon_within`)."""
        native = self.native_budget(settings, budget)
        return native.epsilon if isinstance(native, PureDP) else pure_epsilon_within(native.rho)

    def describe_budget(self, settings: SynthSettings, budget: Budget) -> str:
        native = self.native_budget(settings, budget)
        if isinstance(native, ZCDP):
            return (
                f"{settings.method.upper()} runs at ρ = {native.rho:g} (zCDP, Gaussian noise) "
                "from the Budget page, as OpenDP accounts it; the charts label it with ε = √(2ρ) "
                f"= {self.run_epsilon(settings, budget):.4g}, the ε of the other synthesizers "
                "at the same cost."
            )
        if isinstance(budget, PureDP):
            return f"ε = {budget.epsilon:g} from the Budget page."
        return (
            f"The Budget page sets ρ = {budget.rho:g} (zCDP). These synthesizers are pure ε-DP, "
            "and ε-DP implies ε²/2-zCDP, so they run at ε = √(2ρ) = "
            f"{native.epsilon:.4g}, which costs exactly ρ = {budget.rho:g}."
        )

    def statistics(
        self, frame: pd.DataFrame, grouping: Grouping, settings: SynthSettings
    ) -> PreparedRows:
        """The rows to synthesize (output columns only) in ``grouping``'s groups, with each
        column's categories counted once (the checks and plans read them)."""
        config = self.config(settings, column_kinds(frame), grouping.by)
        prepared = prepare_rows(frame, grouping.spec, grouping, config)
        prepared.domain_sizes(config, grouping.spec)
        return prepared

    def statistics_key(self, settings: SynthSettings) -> SynthSettings:
        """Every setting but the strategy: the prepared rows carry the whole
        :class:`SynthConfig` (columns, edges, categories, synthesizer, rows, rounds), and both
        strategies synthesize the same rows."""
        return dataclasses.replace(settings, strategy="stratified")

    def engine_statistics(
        self, engine: Engine, spec: GroupingSpec, settings: SynthSettings
    ) -> EngineStatistics[PreparedRows]:
        """The rows of every combination of the synthesized columns' values per group, from
        one pass of ``engine`` (:func:`~dpcore.analyses.synth.aggregate.aggregate_synth`): what
        :meth:`statistics` gives on the rows in memory, as cells with their counts. MST and
        AIM, which OpenDP fits on rows, are refused before any pass."""

        config = self.config(settings, engine.column_kinds(), spec.by)
        return aggregate_synth(engine, spec, config)

    def engine_statistics_key(self, settings: SynthSettings) -> SynthSettings:
        return self.statistics_key(settings)

    def check_rows(
        self,
        stats: PreparedRows,
        settings: SynthSettings,
        strategies: tuple[Strategy, ...],
    ) -> dict[str, int]:
        """:func:`check_config` of the prepared rows for ``strategies``: the domain size of
        every column, or ``ValueError`` saying what cannot run."""
        grouping = stats.grouping
        return check_config(stats, stats.config, grouping.spec, grouping.shares, strategies)

    def plan(self, stats: PreparedRows, settings: SynthSettings, header: PlanHeader) -> SynthPlan:
        return SynthPlan(
            prepared=stats, header=self.native_header(settings, header),
            config=stats.config, strategy=settings.strategy,
        )  # fmt: skip

    def run_study(
        self,
        stats: PreparedRows,
        settings: SynthSettings,
        budget: Budget,
        runs: StudyRuns,
        *,
        strategies: tuple[Strategy, ...] = ("stratified", "vanilla"),
        workload: GroupWorkload | None = None,
        progress: Progress | None = None,
    ) -> pd.DataFrame:
        """Per-group 3-way workload error of ``runs.replicates`` simulated syntheses per strategy
        at ``budget`` (:func:`~dpcore.analyses.synth.sweep_errors`; ``runs.level`` unused: synthetic
        rows have no intervals). ``workload`` is
        :func:`~dpcore.analyses.synth.build_workload` of ``stats``, for a caller that scores
        several budgets on the same rows (the real tables counted once)."""
        grouping = stats.grouping
        epsilon = self.run_epsilon(settings, budget)
        # sweep_errors seeds run r with (seed, r): common random numbers across ε.
        rng = runs.rng
        seed = rng if isinstance(rng, int | np.integer) else int(as_rng(rng).integers(2**32))
        return sweep_errors(
            stats, stats.config, grouping.spec, grouping.shares, epsilons=(epsilon,),
            strategies=strategies, runs=runs.replicates, rng=int(seed), workload=workload,
            progress=progress,
        )  # fmt: skip

    def error_model(
        self,
        stats: PreparedRows,
        settings: SynthSettings,
        *,
        budget_kind: Kind = "pure",
        progress: Progress | None = None,
    ) -> SynthErrorModel:
        """Each group's workload error as a function of ε
        (:func:`~dpcore.analyses.synth.accuracy.synth_error_model`), whatever ``budget_kind``:
        a ρ budget runs these synthesizers at ε = √(2ρ) (:meth:`native_budget`).
        ``ValueError`` for settings that cannot run. Seconds to minutes for the slower
        synthesizers (:meth:`planner_cost`); ``progress(done, total)`` counts the group models
        fitted."""
        self._check_plannable(stats, settings, budget_kind)
        return synth_error_model(stats, settings.strategy, progress=progress)

    def planner_cost(
        self,
        stats: PreparedRows,
        settings: SynthSettings,
        check_releases: int,
        *,
        budget_kind: Kind = "pure",
    ) -> PlannerCost:
        """The seconds of the error model's syntheses and of a check, from one synthesis timed
        on ``stats`` (:func:`~dpcore.analyses.synth.accuracy.synth_planner_cost`);
        :class:`~dpcore.analyses.base.PlannerUnavailable` when too slow to offer."""
        self._check_plannable(stats, settings, budget_kind)
        per_synthesis = seconds_per_synthesis(stats, settings.strategy)
        return synth_planner_cost(stats, settings.strategy, check_releases, per_synthesis)

    def _check_plannable(self, stats: PreparedRows, settings: SynthSettings, kind: Kind) -> None:
        """``ValueError`` before any synthesis: settings that cannot run, or MST and AIM
        (ρ-zCDP only) planned for a user who counts in ε (:meth:`native_budget`)."""
        self.check_rows(stats, settings, (settings.strategy,))
        self.native_budget(settings, PureDP(1.0) if kind == "pure" else ZCDP(0.5))

    def check_replicates(self, settings: SynthSettings, requested: int) -> int:
        """At most the synthesizer's check size
        (:data:`~dpcore.analyses.synth.accuracy.SIMULATION_SIZES`): each is a synthesis."""
        return min(requested, SIMULATION_SIZES[settings.method].check_replicates)

    def check_accuracy(
        self,
        stats: PreparedRows,
        settings: SynthSettings,
        budget: Budget,
        target: AccuracyTarget,
        *,
        replicates: int,
        rng: np.random.Generator | int | None = None,
        progress: Progress | None = None,
    ) -> pd.DataFrame:
        """How often fresh syntheses at ``budget`` keep each group's workload error within
        ``target`` (:func:`~dpcore.analyses.synth.accuracy.check_synth_accuracy`), with
        :meth:`check_replicates` of ``replicates``; ``progress(done, total)`` counts the group
        models fitted. ``budget`` is in the error model's unit, ε: MST and AIM, which the
        model ran at ρ = ε²/2, are checked there too."""
        epsilon = (
            budget.epsilon if isinstance(budget, PureDP) else self.run_epsilon(settings, budget)
        )
        return check_synth_accuracy(
            stats, settings.strategy, epsilon, target,
            replicates=self.check_replicates(settings, replicates), rng=rng, progress=progress,
        )  # fmt: skip


SYNTH = SynthAnalysis()
