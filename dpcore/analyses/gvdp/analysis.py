"""The general estimator (GVDP) as an analysis: its settings, budget, statistics, plan and study.

Settings remember a choice per model kind (the outcome, covariates and k of the mean, OLS and
logistic models; the bounds per model, outcome and coefficient), so switching the model and back
keeps what was chosen. They are frozen: mappings are stored as tuples of pairs and changed with
:meth:`GvdpSettings.with_choice`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from dpcore.analyses.base import Analysis, EngineStatistics, PlannerUnavailable, StudyRuns
from dpcore.analyses.gvdp.accuracy import (
    GvdpErrorModel,
    GvdpRunSettings,
    check_gvdp_accuracy,
    gvdp_error_model,
)
from dpcore.analyses.gvdp.aggregate import aggregate_gvdp
from dpcore.analyses.gvdp.data import GvdpData, prepare_data
from dpcore.analyses.gvdp.diagnostics import coverage_on_data
from dpcore.analyses.gvdp.estimator import GVDPCoverage
from dpcore.analyses.gvdp.found_box import BOX_FRACTION, PrivateBox
from dpcore.analyses.gvdp.groups import RunSettings, Strategy
from dpcore.analyses.gvdp.model import BoundsMode, GvdpBoundsSpec, GvdpModel, ModelKind
from dpcore.analyses.gvdp.plan import GvdpPlan
from dpcore.analyses.gvdp.withhold import Uninformative
from dpcore.foundations.accounting import ZCDP, Budget, Kind, as_zcdp
from dpcore.foundations.errors import Problem
from dpcore.foundations.grouping import Grouping, GroupingSpec
from dpcore.foundations.intervals import Interval
from dpcore.foundations.validation import is_numeric
from dpcore.planner.accuracy import AccuracyTarget
from dpcore.release.plan import PlanHeader

if TYPE_CHECKING:  # the engines package imports DuckDB and Spark modules: only the type here
    from dpcore.engines import Engine

__all__ = ["DEFAULT_K", "GVDP", "GvdpAnalysis", "GvdpSettings"]

DEFAULT_K: dict[str, int | None] = {"mean": None, "ols": None, "logistic": None}
"""Subsets k per model kind by default: None, chosen from each run's rows by the rule of
:func:`~dpcore.analyses.gvdp.recommended_subsets` (k ≈ 3√n, at least a model's
:data:`~dpcore.analyses.gvdp.NEARLY_UNBIASED_ROWS` per coefficient). It replaced fixed
defaults (1,000 for a mean, 250 for a regression), whose subsets were too small for skewed data
on 10,000 rows and too few on 1,000 (issue 42)."""

# Public bounds for the demo's columns, from outside knowledge (the app states why):
# (low, high, per-row spread σ) for each (model, outcome, coefficient).
DEMO_BOX: dict[tuple[str, str, str], tuple[float, float, float]] = {
    ("mean", "hours_per_week", "hours_per_week"): (0.0, 100.0, 50.0),
    ("mean", "age", "age"): (0.0, 120.0, 60.0),
    ("mean", "income_over_50k", "income_over_50k"): (0.0, 1.0, 0.5),
    ("mean", "score", "score"): (0.0, 1.0, 0.5),
    ("ols", "hours_per_week", "intercept"): (-100.0, 200.0, 200.0),
    ("ols", "hours_per_week", "age"): (-5.0, 5.0, 5.0),
    ("ols", "hours_per_week", "income_over_50k"): (-100.0, 100.0, 100.0),
    ("logistic", "income_over_50k", "intercept"): (-20.0, 20.0, 100.0),
    ("logistic", "income_over_50k", "age"): (-1.0, 1.0, 2.0),
    ("logistic", "income_over_50k", "hours_per_week"): (-1.0, 1.0, 2.0),
}
GENERIC_BOX = (-1000.0, 1000.0, 1000.0)
# (guess, guessed per-row spread σ): rough public figures, e.g. from an earlier survey.
DEMO_GUESS: dict[tuple[str, str, str], tuple[float, float]] = {
    ("mean", "hours_per_week", "hours_per_week"): (40.0, 15.0),
    ("mean", "age", "age"): (40.0, 15.0),
    ("ols", "hours_per_week", "intercept"): (40.0, 40.0),
    ("ols", "hours_per_week", "age"): (0.1, 1.0),
    ("ols", "hours_per_week", "income_over_50k"): (5.0, 30.0),
    ("logistic", "income_over_50k", "intercept"): (-5.0, 10.0),
    ("logistic", "income_over_50k", "age"): (0.05, 0.2),
    ("logistic", "income_over_50k", "hours_per_week"): (0.05, 0.2),
}
GENERIC_GUESS = (1.0, 10.0)

BoundsKey = tuple[str, str, str]  # (model kind, outcome, coefficient)


def _lookup(pairs: tuple, key: object, default: object) -> object:
    return dict(pairs).get(key, default)


def _with(pairs: tuple, key: object, value: object) -> tuple:
    return tuple({**dict(pairs), key: value}.items())


@dataclass(frozen=True)
class GvdpSettings:
    """The general estimator's choices (defaults fit the demo data).

    ``outcomes``, ``covariates`` and ``ks`` hold one entry per model kind; ``box`` and ``guess``
    one per (model kind, outcome, coefficient) that the user typed (the rest take the demo's
    public figures, or generous generic ones). ``box_source = "private"`` finds each
    coefficient's box and spread privately within the typed (or generic) box, paying
    ``box_fraction`` of ρ (:mod:`~dpcore.analyses.gvdp.found_box`).
    """

    model: ModelKind = "mean"
    outcomes: tuple[tuple[str, str], ...] = (
        ("mean", "hours_per_week"),
        ("ols", "hours_per_week"),
        ("logistic", "income_over_50k"),
    )
    covariates: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("ols", ("age", "income_over_50k")),
        ("logistic", ("age", "hours_per_week")),
    )
    strategy: Strategy = "stratified"
    ks: tuple[tuple[str, int], ...] = ()
    bounds_mode: BoundsMode = "box"
    box: tuple[tuple[BoundsKey, tuple[float, float, float]], ...] = ()
    guess: tuple[tuple[BoundsKey, tuple[float, float]], ...] = ()
    factor: float = 100.0
    resamples: int = 10
    steps: int = 5
    beta: float = 0.03
    mean_fraction: float = 0.5
    uninformative: Uninformative = "withhold"
    box_source: Literal["typed", "private"] = "typed"
    box_fraction: float = BOX_FRACTION

    @property
    def outcome(self) -> str | None:
        """The current model's outcome (or averaged column)."""
        return _lookup(self.outcomes, self.model, None)

    @property
    def covariate_columns(self) -> tuple[str, ...]:
        """The current model's covariates (none for the mean)."""
        return () if self.model == "mean" else tuple(_lookup(self.covariates, self.model, ()))

    @property
    def k(self) -> int | None:
        """The current model's chosen number of subsets; None when it is chosen from the data
        (the default, :data:`DEFAULT_K`)."""
        k = _lookup(self.ks, self.model, DEFAULT_K[self.model])
        return None if k is None else int(k)

    def with_choice(
        self,
        *,
        outcome: str | None = None,
        covariates: tuple[str, ...] | None = None,
        k: int | None = None,
        box: tuple[BoundsKey, tuple[float, float, float]] | None = None,
        guess: tuple[BoundsKey, tuple[float, float]] | None = None,
        automatic_k: bool = False,
    ) -> GvdpSettings:
        """These settings with a choice for the current model (or for one bounds key);
        ``automatic_k`` forgets the current model's chosen k (it is then chosen from the data)."""
        changes: dict = {}
        if automatic_k:
            changes["ks"] = tuple((kind, v) for kind, v in self.ks if kind != self.model)
        if outcome is not None:
            changes["outcomes"] = _with(self.outcomes, self.model, outcome)
        if covariates is not None:
            changes["covariates"] = _with(self.covariates, self.model, tuple(covariates))
        if k is not None:
            changes["ks"] = _with(self.ks, self.model, int(k))
        if box is not None:
            changes["box"] = _with(self.box, *box)
        if guess is not None:
            changes["guess"] = _with(self.guess, *guess)
        return dataclasses.replace(self, **changes)

    def box_row(self, key: BoundsKey) -> tuple[float, float, float]:
        """(low, high, per-row spread) of one coefficient: typed, the demo's, or generic."""
        return _lookup(self.box, key, DEMO_BOX.get(key, GENERIC_BOX))

    def guess_row(self, key: BoundsKey) -> tuple[float, float]:
        """(guess, per-row spread) of one coefficient: typed, the demo's, or generic."""
        return _lookup(self.guess, key, DEMO_GUESS.get(key, GENERIC_GUESS))


class GvdpAnalysis(Analysis[GvdpSettings, GvdpData, Interval, GVDPCoverage]):
    """Unbiased DP estimates with valid confidence intervals for a mean or regression
    coefficients (Covington, He, Honaker & Kamath)."""

    name = "gvdp"
    title = "General estimator with valid CIs"
    summary = (
        "A mean, regression or logistic coefficient with an unbiased DP estimate and a valid "
        "confidence interval, even with very loose bounds."
    )
    settings_type = GvdpSettings
    read_only_statistics = True  # GvdpData: frozen, its arrays locked (ModelRows.data)
    runs_on_engines = True  # the mean and OLS: their bags from an engine's passes

    def value_columns(self, settings: GvdpSettings) -> tuple[str, ...]:
        if not settings.outcome:
            return ()
        return tuple(dict.fromkeys((settings.outcome, *settings.covariate_columns)))

    def problems(self, settings: GvdpSettings, frame: pd.DataFrame) -> list[Problem]:
        if not settings.outcome:
            return [Problem("info", "Choose the column to estimate on the Estimator page.",
                            "outcomes")]  # fmt: skip
        if settings.box_source == "private" and settings.bounds_mode != "box":
            return [Problem(
                "error", "The box is found privately within explicit public ranges (its search "
                "range): choose “Explicit public ranges”, or type a guess without finding the "
                "box.", "bounds_mode",
            )]  # fmt: skip
        return []

    def private_box(self, settings: GvdpSettings) -> PrivateBox | None:
        """How a release finds its box privately; None when the box is typed."""
        return PrivateBox(settings.box_fraction) if settings.box_source == "private" else None

    def numeric_columns(self, frame: pd.DataFrame) -> tuple[str, ...]:
        """The columns of ``frame`` a model can use: numbers, 0/1 or true/false."""
        return tuple(str(c) for c in frame.columns if is_numeric(frame[c]))

    def model(self, settings: GvdpSettings) -> GvdpModel:
        """What the settings estimate; ``ValueError`` says what to fix."""
        self.check(settings, pd.DataFrame())
        return GvdpModel(settings.model, settings.outcome, settings.covariate_columns)

    def bounds(self, settings: GvdpSettings, model: GvdpModel) -> GvdpBoundsSpec:
        """The public bounds of ``model``'s coefficients in the settings' mode."""
        keys = [(model.kind, model.outcome, c) for c in model.coefficients]
        if settings.bounds_mode == "box":
            rows = [settings.box_row(key) for key in keys]
            return GvdpBoundsSpec(
                "box", model.coefficients, spread=tuple(r[2] for r in rows),
                low=tuple(r[0] for r in rows), high=tuple(r[1] for r in rows),
            )  # fmt: skip
        rows = [settings.guess_row(key) for key in keys]
        return GvdpBoundsSpec(
            "guess", model.coefficients, spread=tuple(r[1] for r in rows),
            guess=tuple(r[0] for r in rows), factor=settings.factor,
        )  # fmt: skip

    def run_settings(self, settings: GvdpSettings, budget: Budget, level: float) -> RunSettings:
        """The inputs of every GVDP run at ``budget`` (ρ, see :meth:`native_budget`)."""
        return RunSettings(
            k=settings.k, rho=self.native_budget(settings, budget).rho,
            resamples=settings.resamples, steps=settings.steps, beta=settings.beta,
            mean_fraction=settings.mean_fraction, level=level,
        )  # fmt: skip

    def native_budget(self, settings: GvdpSettings, budget: Budget) -> ZCDP:
        """ρ-zCDP: GVDP adds Gaussian noise. An ε budget runs at ρ = ε²/2, since ε-DP implies
        ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4), so it costs the ledger what an ε-DP release
        would."""
        return as_zcdp(budget, "GVDP")

    def describe_budget(self, settings: GvdpSettings, budget: Budget) -> str:
        if isinstance(budget, ZCDP):
            return f"ρ = {budget.rho:g} (zCDP), set on the Budget page."
        rho = self.native_budget(settings, budget).rho
        return (
            f"ρ = ε²/2 = {rho:g} from your ε = {budget.epsilon:g} on the Budget page. GVDP adds "
            "Gaussian noise, so it meets ρ-zCDP and never pure ε-DP; since ε-DP implies "
            "ε²/2-zCDP, this ρ costs the ledger exactly what an ε-DP release would. Switch the "
            "Budget page to ρ to set it directly."
        )

    def statistics(
        self, frame: pd.DataFrame, grouping: Grouping, settings: GvdpSettings
    ) -> GvdpData:
        return prepare_data(frame, self.model(settings), grouping)

    def statistics_key(self, settings: GvdpSettings) -> tuple:
        return (settings.model, settings.outcome, settings.covariate_columns)

    def engine_statistics(
        self, engine: Engine, spec: GroupingSpec, settings: GvdpSettings
    ) -> EngineStatistics[GvdpData]:
        """Every group's usable rows and sums from one pass of ``engine``
        (:func:`~dpcore.analyses.gvdp.aggregate.aggregate_gvdp`); each run then draws its bag of little
        bootstraps in one more pass (:mod:`dpcore.engines.blb`). The mean and OLS only: a
        logistic fit is refused with what to do instead."""

        return aggregate_gvdp(engine, spec, self.model(settings))

    def engine_statistics_key(self, settings: GvdpSettings) -> tuple:
        return self.statistics_key(settings)

    def plan(self, stats: GvdpData, settings: GvdpSettings, header: PlanHeader) -> GvdpPlan:
        model = self.model(settings)
        return GvdpPlan(
            data=stats, header=self.native_header(settings, header),
            model=model, bounds=self.bounds(settings, model), k=settings.k,
            strategy=settings.strategy, resamples=settings.resamples, steps=settings.steps,
            beta=settings.beta, mean_fraction=settings.mean_fraction,
            uninformative=settings.uninformative, private_box=self.private_box(settings),
        )  # fmt: skip

    def run_study(
        self, stats: GvdpData, settings: GvdpSettings, budget: Budget, runs: StudyRuns
    ) -> GVDPCoverage:
        """Coverage of the full-data estimate over ``runs.replicates`` fresh GVDP runs on the
        current rows (:func:`~dpcore.analyses.gvdp.coverage_on_data`)."""
        if settings.box_source == "private":
            raise ValueError(
                "The coverage simulation runs GVDP in a typed box; it does not find the box "
                "privately yet. A release with the box found privately says in its review how "
                "its box is found; to simulate coverage here, choose a typed box."
            )
        model = self.model(settings)
        return coverage_on_data(
            stats, self.bounds(settings, model), self.run_settings(settings, budget, runs.level),
            replications=runs.replicates, rng=runs.rng,
        )  # fmt: skip

    def planner_settings(self, settings: GvdpSettings) -> GvdpRunSettings:
        """The choices the planner's error model and check share with a release."""
        return GvdpRunSettings(
            k=settings.k, resamples=settings.resamples, steps=settings.steps, beta=settings.beta,
            mean_fraction=settings.mean_fraction, strategy=settings.strategy,
        )  # fmt: skip

    def error_model(
        self, stats: GvdpData, settings: GvdpSettings, *, budget_kind: Kind = "pure"
    ) -> GvdpErrorModel:
        """Each published interval's half-width as a function of ρ
        (:func:`~dpcore.analyses.gvdp.accuracy.gvdp_error_model`), whatever ``budget_kind``:
        an ε budget runs GVDP at ρ = ε²/2."""
        if settings.box_source == "private":
            raise PlannerUnavailable(
                "The planner simulates GVDP in a typed box; it does not cover a box found "
                "privately yet. Plan with a typed box, or try budgets on the Release page's "
                "preview."
            )
        model = self.model(settings)
        return gvdp_error_model(
            stats, self.bounds(settings, model), self.planner_settings(settings)
        )

    def check_accuracy(
        self,
        stats: GvdpData,
        settings: GvdpSettings,
        budget: Budget,
        target: AccuracyTarget,
        *,
        replicates: int,
        rng: np.random.Generator | int | None = None,
    ) -> pd.DataFrame:
        """How often simulated releases at ``budget`` publish intervals within ``target``
        (:func:`~dpcore.analyses.gvdp.accuracy.check_gvdp_accuracy`)."""
        model = self.model(settings)
        return check_gvdp_accuracy(
            stats, self.bounds(settings, model), self.planner_settings(settings),
            self.native_budget(settings, budget), target, replicates=replicates, rng=rng,
        )  # fmt: skip


GVDP = GvdpAnalysis()
