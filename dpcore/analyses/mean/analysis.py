"""The mean as an analysis: its settings, budget, statistics, plan and simulation study."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from dpcore.analyses.base import Analysis, EngineStatistics, PlannerUnavailable, StudyRuns
from dpcore.analyses.mean.accuracy import check_by_simulation, mean_error_model
from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.analyses.mean.coinpress import CoinPressMean
from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.analyses.mean.found_accuracy import found_bounds_error_model
from dpcore.analyses.mean.found_bounds import PrivatelyBounded
from dpcore.analyses.mean.frontier import stratification_frontier
from dpcore.analyses.mean.plan import DEFAULT_VARIANCE_FRACTION, MeanPlan
from dpcore.analyses.mean.simulate import simulate_releases
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import Strategy, StrategyResult
from dpcore.analyses.mean.sums import GroupSums
from dpcore.foundations.accounting import ApproxDP, Budget, Kind, as_pure_dp, as_zcdp, scale
from dpcore.foundations.errors import NotChosenYet, Problem, SettingsError
from dpcore.foundations.grouping import Grouping, GroupingSpec
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from dpcore.foundations.private_bounds import (
    BOUNDS_FRACTION,
    GRID_DECADES,
    BoundsScope,
    PrivateBounds,
)
from dpcore.foundations.small_groups import CountNoise
from dpcore.foundations.validation import (
    bounds_problem,
    open_unit_interval,
    positive_int,
    positive_number,
    real_number,
)
from dpcore.planner.accuracy import AccuracyTarget, ErrorModel
from dpcore.release.plan import PlanHeader

if TYPE_CHECKING:  # the engines package imports DuckDB and Spark modules: only the type here
    from dpcore.engines import Engine

__all__ = ["ESTIMATOR_LABELS", "MEAN", "MeanAnalysis", "MeanSettings", "MeanStudy"]

EstimatorKind = Literal["laplace", "gaussian", "coinpress"]
BoundsSource = Literal["typed", "private"]

ESTIMATOR_LABELS: dict[str, str] = {
    "laplace": "Laplace mean (ε-DP)",
    "gaussian": "Gaussian mean (ρ-zCDP)",
    "coinpress": "CoinPress (ρ-zCDP, adaptive)",
}


@dataclass(frozen=True)
class MeanSettings:
    """The mean's choices. Defaults fit the demo data: hours worked per week, clipped to the
    public range [0, 100] hours, with the Laplace mean and group sizes kept private (a noisy
    count per group; treating them as public is an explicit choice).

    Bounds are public: typed by the user, never read off the data. With ``bounds_source =
    "private"`` the typed bounds are the public *search range* instead, and the release finds
    its bounds within it privately, paying ``bounds_fraction`` of its budget
    (:mod:`dpcore.foundations.private_bounds`): on the whole population or in each group
    (``bounds_scope``), aiming at the automatic rank (``bounds_tail = 0``) or at ``bounds_tail``
    of the values beyond each bound, over a grid ``bounds_decades`` deep (None: the default). ``strategy`` is what a
    release publishes and ``global_fraction`` the share of the budget of the population
    estimate when a release publishes both (vanilla (ii)). ``sampling_error`` makes a release's
    intervals cover sampling error too, paying ``variance_fraction`` of the budget for the
    variances (:class:`~dpcore.analyses.mean.MeanPlan`).
    """

    value: str | None = "hours_per_week"
    estimator: EstimatorKind = "laplace"
    clip_low: float | None = 0.0
    clip_high: float | None = 100.0
    n_public: bool = False
    coinpress_sigma: float = 15.0
    coinpress_steps: int = 3
    coinpress_beta: float = 0.01
    strategy: Strategy = "stratified"
    global_fraction: float = 0.5
    sampling_error: bool = False
    variance_fraction: float = DEFAULT_VARIANCE_FRACTION
    bounds_source: BoundsSource = "typed"
    bounds_fraction: float = BOUNDS_FRACTION
    bounds_scope: BoundsScope = "pooled"
    bounds_tail: float = 0.0
    bounds_decades: int | None = None

    def __post_init__(self) -> None:
        # Checked here, before any work: a million CoinPress steps used to run for seconds.
        positive_int("coinpress_steps", self.coinpress_steps)
        positive_number("coinpress_sigma", self.coinpress_sigma)
        for name in ("coinpress_beta", "global_fraction", "variance_fraction", "bounds_fraction"):
            open_unit_interval(name, getattr(self, name))
        if not 0 <= real_number("bounds_tail", self.bounds_tail) < 0.5:
            raise ValueError(
                "`bounds_tail` must be 0 (the automatic aim) or a share of the values below 0.5, "
                f"got {self.bounds_tail!r}"
            )
        if (
            self.bounds_decades is not None
            and not 1 <= positive_int("bounds_decades", self.bounds_decades) <= 20
        ):
            raise ValueError(
                "`bounds_decades` must be a whole number from 1 to 20 (the search grid's depth), "
                f"got {self.bounds_decades!r}"
            )
        for name in ("clip_low", "clip_high"):
            if getattr(self, name) is not None:
                real_number(name, getattr(self, name))


@dataclass(frozen=True, eq=False)
class MeanStudy:
    """Simulated releases of one strategy: per-replicate errors (:meth:`Simulation.metrics`) and
    per-group error summaries (:meth:`Simulation.summary`; None when the study was asked for
    the per-replicate errors only)."""

    metrics: pd.DataFrame
    groups: pd.DataFrame | None


class MeanAnalysis(Analysis[MeanSettings, GroupValues, StrategyResult, MeanStudy]):
    """Private means per group and for the whole population (AAAI 2024; CoinPress)."""

    name = "mean"
    title = "Mean per group (stratified)"
    summary = (
        "The average of one column in each group and overall, with Laplace, Gaussian or "
        "CoinPress noise."
    )
    settings_type = MeanSettings
    read_only_statistics = True  # GroupValues: frozen, read-only arrays
    runs_on_engines = True  # GroupSums: sizes and clipped sums from an engine's passes
    honours_person_column = (
        True  # every pass bounds each person's rows (dpcore.foundations.privacy_unit)
    )

    def value_columns(self, settings: MeanSettings) -> tuple[str, ...]:
        return () if settings.value is None else (settings.value,)

    def problems(self, settings: MeanSettings, frame: pd.DataFrame) -> list[Problem]:
        out = []
        if settings.value is None:
            out.append(Problem("info", "Choose the value column to estimate on the Data page.",
                               "value"))  # fmt: skip
        low, high = settings.clip_low, settings.clip_high
        if low is None or high is None:
            out.append(
                Problem(
                    "error",
                    "Enter public lower and upper bounds for the value on the Estimator page. "
                    "They must come from outside knowledge (e.g. 0 to 100 hours a week), never "
                    "from the data.",
                    "clip_low" if low is None else "clip_high",
                )
            )
        elif problem := bounds_problem(low, high):
            out.append(Problem("error", problem, "clip_low"))
        if settings.bounds_source == "private":
            out.extend(_private_bounds_problems(settings))
        return out

    def private_bounds(self, settings: MeanSettings) -> PrivateBounds | None:
        """How a release finds its bounds privately, within the typed bounds as search range;
        None when the typed bounds clip the values."""
        if settings.bounds_source != "private":
            return None
        self.estimator(settings)  # refuses missing or disordered bounds first
        problems = _private_bounds_problems(settings)
        if problems:
            raise SettingsError(problems)
        return PrivateBounds(
            (settings.clip_low, settings.clip_high), fraction=settings.bounds_fraction,
            scope=settings.bounds_scope, tail=settings.bounds_tail or None,
            sizes_public=settings.n_public, decades=settings.bounds_decades or GRID_DECADES,
        )  # fmt: skip

    def bounded_estimator(self, settings: MeanSettings):
        """The estimator a release runs: :meth:`estimator`, or it finding its bounds privately
        first (:class:`~dpcore.analyses.mean.found_bounds.PrivatelyBounded`)."""
        bounds = self.private_bounds(settings)
        estimator = self.estimator(settings)
        return estimator if bounds is None else PrivatelyBounded(estimator, bounds)

    def estimator(self, settings: MeanSettings) -> LaplaceMean | GaussianMean | CoinPressMean:
        """The estimator the settings describe; :class:`~dpcore.foundations.errors.SettingsError` when its
        public bounds are missing or out of order."""
        problems = [
            p
            for p in self.problems(settings, pd.DataFrame())
            if p.field in ("clip_low", "clip_high")
        ]
        if problems:
            raise SettingsError(problems)
        bounds = (settings.clip_low, settings.clip_high)
        if settings.estimator == "laplace":
            return LaplaceMean(bounds=bounds, n_public=settings.n_public)
        if settings.estimator == "gaussian":
            return GaussianMean(bounds=bounds, n_public=settings.n_public)
        return CoinPressMean(
            prior=bounds, sigma=settings.coinpress_sigma, steps=settings.coinpress_steps,
            beta=settings.coinpress_beta, clip_to_prior=True,
        )  # fmt: skip

    def native_budget(self, settings: MeanSettings, budget: Budget) -> Budget:
        """The budget language's one rule (:func:`~dpcore.foundations.accounting.charge_of`):
        Laplace is ε-DP, and a ρ budget runs it at ε = √(2ρ); Gaussian and CoinPress are
        ρ-zCDP, and an ε budget runs them at ρ = ε²/2. Either way the release costs the ledger
        ρ = ε²/2 (Bun & Steinke 2016, Prop. 1.4), whatever the estimator."""
        if settings.estimator == "laplace":
            return as_pure_dp(budget, "The Laplace mean")
        return as_zcdp(budget, f"The {ESTIMATOR_LABELS[settings.estimator]}")

    def count_noise(self, settings: MeanSettings, budget: Budget) -> CountNoise | None:
        """The Laplace or Gaussian mean with private sizes draws a noisy count of every group
        with the groups' share of the budget; the other settings draw none."""
        if settings.estimator == "coinpress" or settings.n_public:
            return None
        if settings.strategy == "global_only":
            return None
        groups = self.native_budget(settings, budget)
        if settings.strategy == "global_and_groups":
            groups = scale(groups, 1 - settings.global_fraction)
        return self.bounded_estimator(settings).count_noise(groups)

    def describe_budget(self, settings: MeanSettings, budget: Budget) -> str:
        native = self.native_budget(settings, budget)
        return f"The {ESTIMATOR_LABELS[settings.estimator]} will run at {native}."

    def statistics(
        self, frame: pd.DataFrame, grouping: Grouping, settings: MeanSettings,
        *, unit: PrivacyUnit = ROW,
    ) -> GroupValues:  # fmt: skip
        """Each group's sorted values; with a person column, of the rows its contribution
        bound keeps (:meth:`GroupValues.from_grouping`)."""
        if settings.value is None:
            raise NotChosenYet("Choose the value column to estimate on the Data page.")
        return GroupValues.from_grouping(grouping, frame, settings.value, unit)

    def statistics_key(self, settings: MeanSettings) -> str | None:
        return settings.value

    def engine_statistics(
        self, engine: Engine, spec: GroupingSpec, settings: MeanSettings,
        *, unit: PrivacyUnit = ROW,
    ) -> EngineStatistics[GroupSums]:  # fmt: skip
        """Each group's size and sums clipped to the public bounds, from one pass of ``engine``
        (:func:`~dpcore.analyses.mean.aggregate.aggregate_mean`), and the true means a simulation is scored
        against (one more pass, made now so that no simulation waits for it).

        Unlike :meth:`statistics` this depends on the bounds: the engine clips before it sums.
        """

        if settings.value is None:
            raise NotChosenYet("Choose the value column to estimate on the Data page.")
        self.estimator(settings)  # refuses missing or disordered bounds before any pass
        aggregated = aggregate_mean(
            engine, spec, settings.value, (settings.clip_low, settings.clip_high), unit
        )
        aggregated.stats.means  # noqa: B018 - computed and kept (a cached property)
        return aggregated

    def engine_statistics_key(self, settings: MeanSettings) -> tuple:
        return settings.value, settings.clip_low, settings.clip_high

    def plan(self, stats: GroupValues, settings: MeanSettings, header: PlanHeader) -> MeanPlan:
        """The plan at :meth:`native_budget`; an (ε, δ) budget passes as it is when the groups
        are found privately, whose selection costs a δ (:attr:`MeanPlan.selection`)."""
        selects = header.spec.selects and isinstance(header.budget, ApproxDP)
        return MeanPlan(
            values=stats, header=header if selects else self.native_header(settings, header),
            estimator=self.estimator(settings), strategy=settings.strategy,
            global_fraction=settings.global_fraction, sampling_error=settings.sampling_error,
            variance_fraction=settings.variance_fraction, bounds=self.private_bounds(settings),
        )  # fmt: skip

    def run_study(
        self,
        stats: GroupValues,
        settings: MeanSettings,
        budget: Budget,
        runs: StudyRuns,
        *,
        strategy: Strategy = "stratified",
        per_group: bool = True,
        absolute: bool = False,
    ) -> MeanStudy:
        """``runs.replicates`` simulated releases of ``strategy`` at ``budget`` (the user's; run at
        :meth:`native_budget`, divided among the rows one person may own, as the release
        divides it: :meth:`PrivacyUnit.row_budget <dpcore.foundations.privacy_unit.PrivacyUnit.row_budget>`),
        scored against the true clipped means (``runs.level`` unused: the study scores estimates,
        not intervals). ``per_group=False`` leaves out the per-group
        summary, which a privacy–utility curve does not show: its percentiles over thousands
        of groups cost as much as the simulation's noise. ``absolute=True`` scores absolute
        errors as fractions of the public range (:meth:`error_width`), defined where a true
        mean is 0."""
        simulation = simulate_releases(
            stats, self.bounded_estimator(settings),
            stats.unit.row_budget(self.native_budget(settings, budget)),
            strategy=strategy, global_fraction=settings.global_fraction,
            replicates=runs.replicates, rng=runs.rng, absolute_over=self.error_width(settings) if absolute else None,
        )  # fmt: skip
        return MeanStudy(simulation.metrics(), simulation.summary() if per_group else None)

    def error_width(self, settings: MeanSettings) -> float:
        """The public width absolute errors are measured against: U − L of the bounds, or of
        CoinPress' prior (both public)."""
        low, high = self.estimator(settings).public_range
        return float(high - low)

    @staticmethod
    def relative_error_undefined(stats: GroupValues) -> bool:
        """Whether a true mean the Compare page scores against is 0, where an error relative
        to it is undefined (a curator's check of the confidential means)."""
        scored = stats.means[np.asarray(stats.sizes) > 0]
        return bool(np.any(scored == 0) or stats.global_mean == 0)

    def error_model(
        self, stats: GroupValues, settings: MeanSettings, *, budget_kind: Kind = "pure"
    ) -> ErrorModel:
        """Laplace in ε, Gaussian and CoinPress in ρ, whatever ``budget_kind``: the planner's
        answer converts to the user's kind where the mean can run in it. Bounds found privately:
        by simulation, one model per share of the budget for the bounds, the planner choosing
        the share (:func:`~dpcore.analyses.mean.found_accuracy.found_bounds_error_model`)."""
        estimator = self.bounded_estimator(settings)
        if isinstance(estimator, PrivatelyBounded):
            if not isinstance(stats, GroupValues):
                raise PlannerUnavailable(
                    "The planner simulates releases that find their bounds, which needs the "
                    "rows in memory: load the data (or a sample of it) to plan, or type public "
                    "bounds."
                )
            return found_bounds_error_model(
                stats, estimator, settings.strategy, settings.global_fraction
            )
        return mean_error_model(stats, estimator, settings.strategy, settings.global_fraction)

    def check_accuracy(
        self,
        stats: GroupValues,
        settings: MeanSettings,
        budget: Budget,
        target: AccuracyTarget,
        *,
        replicates: int,
        rng: np.random.Generator | int | None = None,
    ) -> pd.DataFrame:
        return check_by_simulation(
            stats, self.bounded_estimator(settings), budget, target,
            strategy=settings.strategy, global_fraction=settings.global_fraction,
            replicates=replicates, rng=rng,
        )  # fmt: skip

    def frontier(
        self,
        frame: pd.DataFrame,
        columns: list[str],
        settings: MeanSettings,
        budget: Budget,
        grouping: GroupingSpec,
        *,
        replicates: int,
        rng: np.random.Generator | int | None = None,
        unit: PrivacyUnit = ROW,
    ) -> pd.DataFrame:
        if settings.value is None:
            raise PlannerUnavailable("Choose the value column to estimate on the Data page.")
        return stratification_frontier(
            frame, columns, settings.value, self.estimator(settings),
            self.native_budget(settings, budget), edges=dict(grouping.edges),
            min_group_size=grouping.min_group_size, small_groups=grouping.small_groups,
            global_fraction=settings.global_fraction, replicates=replicates, rng=rng, unit=unit,
        )  # fmt: skip


def _private_bounds_problems(settings: MeanSettings) -> list[Problem]:
    """What stops bounds found privately with these settings (the typed bounds' own problems
    are said above them)."""
    out = []
    if settings.estimator == "coinpress":
        out.append(Problem(
            "error", "Bounds found privately apply to the Laplace and Gaussian means: CoinPress "
            "narrows its own range from the public prior. Choose another estimator, or type "
            "public bounds.", "bounds_source",
        ))  # fmt: skip
    if settings.sampling_error:
        out.append(Problem(
            "error", "Intervals with sampling error need bounds fixed before the release. On "
            "the Release page choose intervals of the noise only, or type public bounds.",
            "bounds_source",
        ))  # fmt: skip
    if not settings.n_public and not settings.bounds_tail:
        out.append(Problem(
            "error", "With private group sizes the bounds cannot aim at a number of values "
            "(it would read the sizes): choose the share of values to leave beyond each bound.",
            "bounds_tail",
        ))  # fmt: skip
    return out


MEAN = MeanAnalysis()
