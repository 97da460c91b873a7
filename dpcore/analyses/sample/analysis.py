"""A private sample as an analysis: a handful of records of one group drawn by a DP sampler
(Raskhodnikova, Sivakumar, Smith & Swanberg, NeurIPS 2021)."""

from __future__ import annotations

import pandas as pd

from dpcore.analyses.base import Analysis, StudyRuns
from dpcore.analyses.sample.plan import SampleDraw, SamplePlan, SampleSettings, records_problem
from dpcore.analyses.sample.rows import SampleRows, column_problem, prepare_sample_rows
from dpcore.foundations.accounting import ZCDP, Budget, PureDP, as_pure_dp
from dpcore.foundations.errors import BudgetKindError, Problem
from dpcore.foundations.grouping import Grouping
from dpcore.release.plan import PlanHeader

__all__ = ["SAMPLE", "SampleAnalysis"]


class SampleAnalysis(Analysis[SampleSettings, SampleRows, SampleDraw, pd.DataFrame]):
    """Private records of one group: k-ary (categories) or product-Bernoulli (yes/no columns)."""

    name = "sample"
    title = "Private sample"
    summary = (
        "A handful of realistic records of one group, drawn privately: how close to the group "
        "can they be at this budget?"
    )
    settings_type = SampleSettings

    def problems(self, settings: SampleSettings, frame: pd.DataFrame) -> list[Problem]:
        out = []
        if not settings.columns:
            out.append(Problem("info", "Choose at least one column to sample.", "columns"))
        for column in settings.columns:
            if (problem := column_problem(frame, column)) is not None:
                out.append(Problem("error", problem, "columns"))
        if (problem := records_problem(settings.records)) is not None:
            out.append(Problem("error", problem, "records"))
        return out

    def native_budget(self, settings: SampleSettings, budget: Budget) -> Budget:
        """The k-ary sampler is pure ε-DP (a ρ budget runs it at ε = √(2ρ), Bun & Steinke 2016,
        Prop. 1.4); the product sampler's cost is stated in the budget's own unit, ε (basic
        composition) or ρ (zCDP composition, Thm. 6.4)."""
        if settings.sampler == "kary":
            return as_pure_dp(budget, "The k-ary sampler")
        if isinstance(budget, PureDP | ZCDP):
            return budget
        raise BudgetKindError(
            f"The product sampler runs under an ε or a ρ budget only, got {budget}.",
            mechanism="The product sampler", kind=budget.kind, needs=("pure", "zcdp"),
        )  # fmt: skip

    def describe_budget(self, settings: SampleSettings, budget: Budget) -> str:
        native = self.native_budget(settings, budget)
        if settings.sampler == "product":
            return (
                f"The product sampler adds no noise: its privacy comes from the number of rows "
                f"behind each record. It is charged the whole budget ({native}), and refused "
                "where the group is too small to stay within it."
            )
        if isinstance(budget, PureDP):
            return f"ε = {budget.epsilon:g} from the Budget page, for all the records together."
        return (
            f"The Budget page sets ρ = {budget.rho:g} (zCDP). The k-ary sampler is pure ε-DP, "
            f"and ε-DP implies ε²/2-zCDP, so it runs at ε = √(2ρ) = {native.epsilon:.4g}."
        )

    def statistics(
        self, frame: pd.DataFrame, grouping: Grouping, settings: SampleSettings
    ) -> SampleRows:
        return prepare_sample_rows(frame, grouping, settings.columns)

    def statistics_key(self, settings: SampleSettings) -> tuple[str, ...]:
        return settings.columns

    def plan(self, stats: SampleRows, settings: SampleSettings, header: PlanHeader) -> SamplePlan:
        return SamplePlan(
            rows=stats, header=self.native_header(settings, header), settings=settings
        )

    def run_study(
        self, stats: SampleRows, settings: SampleSettings, budget: Budget, runs: StudyRuns
    ) -> pd.DataFrame:
        """One record's output distribution at ``budget``, simulated over ``runs.replicates``
        runs (numpy noise) and compared with the group's own (``runs.level`` unused): the distance, the
        paper's guarantee, the rows per part. A curator's view of the confidential rows."""
        plan = SamplePlan(
            rows=stats, header=_study_header(stats, self.native_budget(settings, budget)),
            settings=settings,
        )  # fmt: skip
        result = plan.simulate(runs=runs.replicates, rng=runs.rng)
        return pd.DataFrame(
            [
                {
                    "distance": result["distance"],
                    "floor": result["floor"],
                    "guarantee": result["guarantee"],
                    "part_rows": result["part_rows"],
                    "reps": runs.replicates,
                }
            ]
        )


def _study_header(stats: SampleRows, budget: Budget) -> PlanHeader:
    """A header for a simulation (never committed): the plan only reads its budget."""
    from dpcore.foundations.dataset import DatasetRef
    from dpcore.foundations.grouping import GroupingSpec

    return PlanHeader(
        dataset=DatasetRef("simulation", "", len(stats.values)),
        spec=GroupingSpec(by=("simulation",)), budget=budget,
    )  # fmt: skip


SAMPLE = SampleAnalysis()
