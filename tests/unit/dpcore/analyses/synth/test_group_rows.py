"""Rows per group of stratified synthetic data from the release's own noisy counts (issue 37,
item 4): a tenth of the budget, the rest for the models, no exact size used or published."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.synth.group_rows import COUNT_FRACTION, CountSplit
from dpcore.analyses.synth.plan import SynthPlan
from dpcore.foundations.accounting import ZCDP, PureDP, exact_components, sequential
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.release import DatasetRef, PlanHeader, to_csv, to_json
from tests.unit.dpcore.analyses.synth.test_plan import config, survey

NOISY = GroupingSpec(
    by=("region",), share_source="noisy_counts", small_groups="keep",
    categories=(("region", ("east", "north", "south")),),
)  # fmt: skip


@pytest.mark.parametrize("budget", [PureDP(0.7), PureDP(1e-3), ZCDP(0.3), ZCDP(2.0)])
def test_the_counts_and_the_models_compose_back_to_exactly_the_budget(budget):
    split = CountSplit.of(budget)
    whole = exact_components(budget, budget.kind)
    spent = exact_components(sequential(split.counts, split.models), budget.kind)
    assert all(spent[k] <= whole[k] for k in whole)
    assert {k: float(v) for k, v in spent.items()} == pytest.approx(
        {k: float(v) for k, v in whole.items()}
    )
    assert float(next(iter(exact_components(split.counts, budget.kind).values()))) == (
        pytest.approx(COUNT_FRACTION * float(next(iter(whole.values()))))
    )


def plan_for(frame) -> SynthPlan:
    header = PlanHeader(dataset=DatasetRef.of(frame, "survey.csv"), spec=NOISY, budget=PureDP(1.0))
    return SynthPlan.build(frame, header=header, config=config())


def test_a_release_draws_its_rows_per_group_from_noisy_counts_and_says_so():
    """Regions of 400, 150 and 50 people and 600 rows: exact shares would give 400, 150 and 50
    rows every time; the noisy counts move them from release to release, the models run at
    0.9 ε, and the review and every export say where the rows per group come from."""
    frame = survey()
    plan = plan_for(frame)
    assert plan.epsilon == pytest.approx(0.9)
    counts = set()
    for seed in range(6):
        rows = plan.estimate(SimulationNoise(rng=seed), np.random.default_rng(seed)).frame
        counts.add(tuple(rows["region"].value_counts().reindex(["north", "south", "east"])))
        assert len(rows) == 600
    assert len(counts) > 1 and (400, 150, 50) not in counts
    review = "\n".join(plan.review_lines())
    assert "the release's own noisy group counts (Laplace noise, 10% of the budget" in review
    assert "one model each with the rest of the budget" in review
    assert "No exact group size is used or published" in plan.parameters()["rows_per_group"]


def test_the_exports_name_the_source_of_the_rows_per_group(tmp_path):
    from dpcore.foundations.ledger import Ledger
    from dpcore.release import release

    frame = survey()
    ledger = Ledger(tmp_path / "ledger.sqlite", "test", ZCDP(10.0))
    record = release(plan_for(frame), ledger, noise="simulation", rng=1)
    assert "# rows_per_group: rows per group in proportion to the release's own noisy" in (
        to_csv(record)
    )
    assert "release's own noisy group counts" in to_json(record)


def test_neighbouring_data_changes_the_rows_per_group_only_through_the_noise():
    """One person added to the smallest group: with the same noise the counts move by that one
    person's share at most, so rows per group differ by at most one or two rows."""
    frame = survey()
    neighbour = pd.concat([frame, frame[frame["region"] == "east"].iloc[[0]]], ignore_index=True)
    per_group = [
        plan_for(data)
        .estimate(SimulationNoise(rng=3), np.random.default_rng(3))
        .frame["region"]
        .value_counts()
        for data in (frame, neighbour)
    ]
    assert (per_group[0] - per_group[1]).abs().max() <= 2
