"""The calibration ratio as an analysis: its settings, budget, statistics, plan and study."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from dpcore.analyses.base import Analysis, EngineStatistics, PlannerUnavailable, StudyRuns
from dpcore.analyses.ratio.accuracy import UNPLANNED_MECHANISM, ratio_check, ratio_error_model
from dpcore.analyses.ratio.aggregate import aggregate_ratio
from dpcore.analyses.ratio.budget import release_arguments, release_cost
from dpcore.analyses.ratio.groups import GroupRatioSums, group_ratio_sums
from dpcore.analyses.ratio.plan import RatioPlan
from dpcore.analyses.ratio.preview import RatioResult, simulate_ratio_intervals
from dpcore.analyses.ratio.sums import Composition, Mechanism, Method, RatioBounds, RatioSums, Scale
from dpcore.foundations.accounting import Budget, Kind, PureDP
from dpcore.foundations.errors import Problem, SettingsError
from dpcore.foundations.grouping import Grouping, GroupingSpec
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from dpcore.foundations.validation import column_kind
from dpcore.planner.accuracy import AccuracyTarget, ErrorModel
from dpcore.release.plan import PlanHeader

if TYPE_CHECKING:  # the engines package imports DuckDB and Spark modules: only the type here
    from dpcore.engines import Engine

__all__ = ["RATIO", "RatioAnalysis", "RatioSettings"]

ROLE_NAMES = {"s_column": "score", "y_column": "label", "w_column": "weight"}
BOUND_HINTS = {
    "score": "Type the largest score anyone could have, known without looking at the data "
    "(1 for a probability).",
    "label": "Type the largest label anyone could have (1 for a yes/no outcome).",
    "weight": "Type the largest weight in the survey design (e.g. 3). Weights are clipped to "
    "[0, u_w], so a bound below 1 would shrink even a weight of 1.",
}


@dataclass(frozen=True)
class RatioSettings:
    """The ratio's choices (defaults fit the demo data: the demo classifier's score against
    the 0/1 income label, unweighted, the classic Gaussian with the analytical correction).

    Bounds are public upper bounds (the lower bounds are 0, as in Miao & Li 2022): typed by the
    user, never read off the data. ``binary_y`` declares the label 0/1 (a public fact, checked,
    never inferred). ``delta`` is the δ of a Gaussian release under a pure ε budget.
    """

    s_column: str | None = "score"
    y_column: str | None = "income_over_50k"
    w_column: str | None = None
    s_bound: float | None = 1.0
    y_bound: float | None = 1.0
    w_bound: float | None = 3.0
    binary_y: bool = True
    mechanism: Mechanism = "gaussian"
    composition: Composition = "basic"
    delta: float = 1e-6
    method: Method = "analytical"
    B: int = 200
    scale: Scale = "ratio"

    @property
    def bounds(self) -> RatioBounds:
        """The public bounds as :class:`RatioBounds` (a binary label's is 1; no weights: 1)."""
        return RatioBounds(
            float(self.s_bound),
            1.0 if self.binary_y else float(self.y_bound),
            float(self.w_bound) if self.w_column is not None else 1.0,
        )


def _column_problem(kinds: dict[str, str], role: str, column: str | None) -> Problem | None:
    name = ROLE_NAMES[role]
    if column is None:
        return Problem("info", f"Choose the {name} column.", role)
    if column not in kinds:
        return Problem(
            "info",
            f"Choose the {name} column: `{column}` is not in the data in use; its columns "
            f"are: {', '.join(kinds)}.",
            role,
        )
    if kinds[column] in ("text", "category"):
        kind = kinds[column]
        return Problem(
            "error",
            f"The {name} column `{column}` is not numeric (its values are {kind}). Choose a "
            f"column of numbers for the {name}.",
            role,
        )
    return None


def _bound_problem(name: str, value: float | None, at_least_one: bool) -> Problem | None:
    bad = value is None or not math.isfinite(value) or (value < 1 if at_least_one else value <= 0)
    if not bad:
        return None
    shown = "nothing" if value is None else f"{value:g}"
    relation = "at least 1" if at_least_one else "above 0"
    return Problem(
        "error",
        f"The upper bound of the {name} must be a finite number {relation}, got {shown}. "
        f"{BOUND_HINTS[name]}",
        f"{name[0]}_bound",
    )


def person_bounds(settings: RatioSettings, unit: PrivacyUnit) -> RatioBounds:
    """The settings' public bounds with c = ``unit.rows_per_person``, the most rows one person
    keeps after the contribution bound: every sum's sensitivity is then c times one row's
    (:meth:`RatioBounds.sensitivities`)."""
    return dataclasses.replace(settings.bounds, rows_per_person=unit.rows_per_person)


def _is_binary(frame: pd.DataFrame, column: str) -> bool:
    values = pd.to_numeric(frame[column], errors="coerce").dropna()
    return bool(values.isin([0, 1]).all())


class RatioAnalysis(Analysis[RatioSettings, GroupRatioSums, RatioResult, pd.DataFrame]):
    r"""The calibration ratio Σ score / Σ label per group with DP confidence intervals (Miao &
    Li 2022).

    With a person column (``unit``, :class:`~dpcore.foundations.privacy_unit.PrivacyUnit`) each person keeps
    at most M = ``max_rows`` rows in each of at most G = ``max_groups`` groups before anything is
    summed, in memory and on every engine alike. Each kept row adds to every sum of §2.3.1 a
    summand clipped to :math:`[0, \Delta]` (:math:`\Delta_{\sum ws} = u_w u_s`, ...), so adding
    or removing one person moves each sum, over all groups together, by at most
    :math:`c\,\Delta` with :math:`c = M G`: every sensitivity is c times one row's
    (:meth:`RatioBounds.sensitivities`), the noise of each sum scales with it, and the
    release's cost stays the budget (ρ = Σ (cΔ_i)²/(2σ_i²) with σ_i ∝ cΔ_i). Compare, the
    planner and the release read these sensitivities off the statistics (``bounds``).
    """

    name = "ratio"
    title = "Ratio of sums (calibration ratio)"
    summary = (
        "Σ score / Σ label per group: is a classifier equally calibrated across groups? With "
        "confidence intervals that stay valid under DP noise."
    )
    settings_type = RatioSettings
    runs_on_engines = True  # GroupRatioSums: every group's clipped sums from an engine's pass
    honours_person_column = True  # every pass bounds each person's rows; sensitivities × c

    def value_columns(self, settings: RatioSettings) -> tuple[str, ...]:
        columns = (settings.s_column, settings.y_column, settings.w_column)
        return tuple(dict.fromkeys(c for c in columns if c is not None))

    def problems(self, settings: RatioSettings, frame: pd.DataFrame) -> list[Problem]:
        """Wrong or missing columns and bounds (:meth:`column_problems`); a label declared
        binary that is not 0/1 (the only check that reads the data; its message never shows a
        value)."""
        kinds = {str(column): column_kind(frame[column]) for column in frame.columns}
        problems = self.column_problems(settings, kinds)
        y = settings.y_column
        if (
            settings.binary_y
            and not any(p.severity == "error" for p in problems)
            and _column_problem(kinds, "y_column", y) is None
            and not _is_binary(frame, y)
        ):
            problems.append(Problem(
                "error",
                f"The label column `{y}` has values other than 0 and 1, but “Label is binary "
                "(0/1)” is ticked. Untick it and type the label's upper bound, or choose a 0/1 "
                "column.",
                "binary_y",
            ))  # fmt: skip
        return problems

    def column_problems(self, settings: RatioSettings, kinds: dict[str, str]) -> list[Problem]:
        """Wrong or missing columns and bounds, from the columns' ``kinds`` alone
        (:func:`~dpcore.foundations.validation.column_kind`'s words): what can be said of data that stays in
        files before any pass (the pass then checks a binary label,
        :func:`~dpcore.analyses.ratio.aggregate.aggregate_ratio`)."""
        roles = {"s_column": settings.s_column, "y_column": settings.y_column}
        if settings.w_column is not None:
            roles["w_column"] = settings.w_column
        problems = [
            problem
            for role, column in roles.items()
            if (problem := _column_problem(kinds, role, column)) is not None
        ]
        chosen = [c for c in roles.values() if c is not None]
        if len(set(chosen)) < len(chosen):
            problems.append(Problem(
                "error", "The score, label and weight must be different columns. Choose another "
                "column for one of them.",
            ))  # fmt: skip
        bounds = [("score", settings.s_bound, False)]
        if not settings.binary_y:
            bounds.append(("label", settings.y_bound, False))
        if settings.w_column is not None:
            bounds.append(("weight", settings.w_bound, True))
        problems += [
            problem
            for name, value, at_least_one in bounds
            if (problem := _bound_problem(name, value, at_least_one)) is not None
        ]
        return problems

    def arguments(self, settings: RatioSettings, budget: Budget) -> dict:
        """The estimator's ``epsilon``, ``delta``, ``mechanism`` and ``composition`` at
        ``budget``, checked against the exact cost (typed errors from
        :func:`release_arguments` and :func:`release_cost`)."""
        weighted = settings.w_column is not None
        arguments = release_arguments(
            budget, mechanism=settings.mechanism, composition=settings.composition,
            delta=settings.delta, bounds=settings.bounds, weighted=weighted,
            binary_y=settings.binary_y,
        )  # fmt: skip
        release_cost(bounds=settings.bounds, weighted=weighted, binary_y=settings.binary_y,
                     **arguments)  # fmt: skip
        return arguments

    def native_budget(self, settings: RatioSettings, budget: Budget) -> Budget:
        """The ratio plans at the user's budget (its exact cost follows from it); refused with
        a typed error when the mechanism cannot run there."""
        self.arguments(settings, budget)
        return budget

    def cost(self, settings: RatioSettings, budget: Budget) -> Budget:
        """The release's exact cost (:func:`release_cost`): pure ε for Laplace, ρ = Σ Δ_i²/(2σ_i²)
        for Gaussian noise, whatever budget chose σ."""
        weighted = settings.w_column is not None
        return release_cost(bounds=settings.bounds, weighted=weighted, binary_y=settings.binary_y,
                            **self.arguments(settings, budget))[0]  # fmt: skip

    def describe_budget(self, settings: RatioSettings, budget: Budget) -> str:
        gaussian = settings.mechanism != "laplace"
        if isinstance(budget, PureDP):
            shown = f"ε = {budget.epsilon:g}"
            guarantee = (
                f"(ε = {budget.epsilon:g}, δ = {settings.delta:.0e})-DP — Gaussian noise cannot "
                "meet pure ε-DP, so δ is added"
                if gaussian
                else "pure ε-DP, as the Budget page says"
            )
        else:
            shown = f"ρ = {budget.rho:g}"
            guarantee = (
                "ρ-zCDP"
                if gaussian
                else f"pure ε-DP at ε = √(2ρ) = {(2 * budget.rho) ** 0.5:.3g}, which is ρ-zCDP"
            )
        return (
            f"Budget per release: **{shown}** from the Budget page; this release is {guarantee}. "
            "Each group is released separately; groups are disjoint, so all of them cost one "
            "group's budget, and the all-groups ratio adds the noisy group sums (no extra cost)."
        )

    def statistics(
        self, frame: pd.DataFrame, grouping: Grouping, settings: RatioSettings,
        *, unit: PrivacyUnit = ROW,
    ) -> GroupRatioSums:  # fmt: skip
        """Every group's clipped sums; with a person column, of the rows its contribution bound
        keeps, each sum's sensitivity then one person's (:func:`group_ratio_sums`)."""
        return group_ratio_sums(
            frame, grouping, s_column=settings.s_column, y_column=settings.y_column,
            w_column=settings.w_column, bounds=person_bounds(settings, unit),
            binary_y=settings.binary_y, unit=unit,
        )  # fmt: skip

    def statistics_key(self, settings: RatioSettings) -> tuple:
        return (settings.s_column, settings.y_column, settings.w_column, settings.bounds,
                settings.binary_y)  # fmt: skip

    def engine_statistics(
        self, engine: Engine, spec: GroupingSpec, settings: RatioSettings,
        *, unit: PrivacyUnit = ROW,
    ) -> EngineStatistics[GroupRatioSums]:  # fmt: skip
        """Every group's clipped sums from one pass of ``engine``, each person's rows bounded
        first as ``unit`` says (:func:`~dpcore.analyses.ratio.aggregate.aggregate_ratio`): the same sums
        :meth:`statistics` gives on the rows in memory. Wrong columns or bounds are refused
        before any pass."""

        self.check_columns(settings, engine.column_kinds())
        return aggregate_ratio(
            engine, spec, s_column=settings.s_column, y_column=settings.y_column,
            w_column=settings.w_column, bounds=settings.bounds, binary_y=settings.binary_y,
            unit=unit,
        )  # fmt: skip

    def engine_statistics_key(self, settings: RatioSettings) -> tuple:
        return self.statistics_key(settings)

    def check_columns(self, settings: RatioSettings, kinds: dict[str, str]) -> None:
        """Raise :class:`~dpcore.foundations.errors.SettingsError` listing :meth:`column_problems`, if any."""
        problems = self.column_problems(settings, kinds)
        if problems:
            raise SettingsError(problems)

    def plan(self, stats: GroupRatioSums, settings: RatioSettings, header: PlanHeader) -> RatioPlan:
        return RatioPlan(
            sums=stats, header=header, mechanism=settings.mechanism,
            composition=settings.composition, delta=settings.delta, method=settings.method,
            scale=settings.scale, B=settings.B,
        )  # fmt: skip

    def run_study(
        self,
        stats: GroupRatioSums,
        settings: RatioSettings,
        budget: Budget,
        runs: StudyRuns,
        *,
        methods: Sequence[Method] = ("none", "monte_carlo", "analytical"),
        resampled: RatioSums | None = None,
    ) -> pd.DataFrame:
        """Coverage, width and interval score of ``methods`` over ``runs.replicates`` simulated
        releases at ``budget`` (:func:`simulate_ratio_intervals`; with ``resampled`` bootstrap
        sums the rows are redrawn too)."""
        return simulate_ratio_intervals(
            stats, **self.arguments(settings, budget), methods=methods, scale=settings.scale,
            level=runs.level, B=settings.B, replicates=runs.replicates, resampled=resampled,
            rng=runs.rng,
        )  # fmt: skip

    def planned_composition(self, settings: RatioSettings, budget_kind: Kind) -> Composition:
        """The accounting a release at a budget of ``budget_kind`` uses: a ρ budget runs the
        Gaussian with zCDP accounting (:func:`release_arguments`)."""
        if settings.mechanism == "laplace":
            return "basic"
        return "zcdp" if budget_kind == "zcdp" else settings.composition

    def error_model(
        self, stats: GroupRatioSums, settings: RatioSettings, *, budget_kind: Kind = "pure"
    ) -> ErrorModel:
        """The delta-method error of every published ratio as a function of the budget
        (:func:`~dpcore.analyses.ratio.accuracy.ratio_error_model`): a curator preview, since
        it reads each group's exact sums."""
        if settings.mechanism == "gaussian_analytic":
            raise PlannerUnavailable(UNPLANNED_MECHANISM)
        return ratio_error_model(
            stats, mechanism=settings.mechanism, delta=settings.delta,
            composition=self.planned_composition(settings, budget_kind),
        )  # fmt: skip

    def check_accuracy(
        self,
        stats: GroupRatioSums,
        settings: RatioSettings,
        budget: Budget,
        target: AccuracyTarget,
        *,
        replicates: int,
        rng: np.random.Generator | int | None = None,
    ) -> pd.DataFrame:
        """Simulated releases at ``budget`` (the model's unit: a ρ answer runs with zCDP
        accounting, an ε answer as the settings say) scored against the exact ratios."""
        composition = self.planned_composition(settings, budget.kind)
        return ratio_check(
            stats, budget, target, mechanism=settings.mechanism, composition=composition,
            delta=settings.delta, replicates=replicates, rng=rng,
        )  # fmt: skip


RATIO = RatioAnalysis()
