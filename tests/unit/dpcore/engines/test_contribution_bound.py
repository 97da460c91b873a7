"""Engines: the contribution bound keeps what it promises, so one added person moves the
statistics by at most what the accounting assumes, and a person-level release adds the noise of
all their rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.mean import LaplaceMean, MeanPlan
from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.analyses.mean.strategies import run_strategy
from dpcore.engines import PandasEngine
from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.ledger import Ledger
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit, bounded_weights, cell_ranks
from dpcore.release import DatasetRef, PlanHeader, public_metadata, release
from tests.unit.dpcore.engines.helpers import BOUNDS, engine_on, engines


def test_the_bound_scales_a_persons_rows_in_a_cell_and_keeps_their_fullest_cells():
    """Person 0 has 5 rows in a, 2 in b, 1 in c: with M = 2 and G = 2 the rows of a count as
    2 (2/5 each), those of b fully, c not at all (fewest counted rows); person 1's one finite
    row counts, their NaN row does not."""
    labels = pd.DataFrame({"g": ["a"] * 5 + ["b"] * 2 + ["c"] + ["a"] * 2})
    values = np.array([1.0, 2, 3, 4, 5, 6, 7, 8, 9, np.nan])
    person = np.array([0, 0, 0, 0, 0, 0, 0, 0, 1, 1])
    weights = bounded_weights(cell_ranks(labels), np.isfinite(values), person, 2, 2)
    np.testing.assert_allclose(weights, [0.4] * 5 + [1.0, 1.0, 0.0, 1.0, 0.0])


def test_ties_between_a_persons_cells_go_to_the_first_label():
    """Cell c counts 2 rows, a and b one each: with G = 2, c and then a (before b) count."""
    labels = pd.DataFrame({"g": ["b", "a", "c", "c"]})
    weights = bounded_weights(cell_ranks(labels), np.ones(4, bool), np.zeros(4, int), 2, 2)
    np.testing.assert_allclose(weights, [0.0, 1.0, 1.0, 1.0])


@pytest.mark.parametrize("engine_name", ["pandas", "duckdb"])
def test_after_the_bound_no_person_exceeds_it(frame, parquet_folder, engine_name):
    unit = PrivacyUnit("person", max_groups=2, max_rows=1)
    stats = aggregate_mean(
        engines(frame, parquet_folder)[engine_name], GroupingSpec(by=("region",)), "v",
        BOUNDS, unit,
    ).stats  # fmt: skip
    people = frame.loc[np.isfinite(frame["v"]), "person"].nunique()
    assert stats.n <= people * unit.rows_per_person
    assert any("left out" in note for note in stats.notes)


@pytest.mark.parametrize("engine_name", ["pandas", "duckdb", "spark"])
def test_one_added_person_moves_the_statistics_by_at_most_the_bound(
    frame, tmp_path, request, engine_name
):
    """Neighbouring datasets differ by one person with many rows in many groups: the change of
    the sizes and clipped sums over all groups is at most c rows and c·max(|L|, |U|)."""
    unit = PrivacyUnit("person", max_groups=2, max_rows=3)
    intruder = pd.DataFrame({
        "region": ["north", "south", "east", "wést"] * 10, "age": 50.0, "flag": True,
        "v": np.linspace(-50, 50, 40), "person": -7,
    })  # fmt: skip
    labels = ("north", "south", "east", "wést", "tiny", "(missing)")
    spec = GroupingSpec(
        by=("region",), share_source="table", share_table=tuple((g, 1.0) for g in labels)
    )
    stats = []
    for i, data in enumerate([frame, pd.concat([frame, intruder], ignore_index=True)]):
        engine = engine_on(engine_name, data, tmp_path / f"{i}.parquet", request)
        stats.append(aggregate_mean(engine, spec, "v", BOUNDS, unit).stats)
    before, after = stats
    assert before.labels == after.labels
    size_change = np.abs(after.sizes - before.sizes).sum()
    sum_change = np.abs(after.clipped_sums(*BOUNDS) - before.clipped_sums(*BOUNDS)).sum()
    c = unit.rows_per_person
    assert 0 < size_change <= c
    assert sum_change <= c * max(abs(b) for b in BOUNDS) + 1e-9


def test_row_budget_divides_by_the_rows_of_one_person():
    unit = PrivacyUnit("person", max_groups=2, max_rows=3)
    assert unit.row_budget(PureDP(1.2)).epsilon == pytest.approx(0.2)
    assert unit.row_budget(ZCDP(0.72)).rho == pytest.approx(0.02)
    assert ROW.row_budget(ApproxDP(1.0, 1e-6)) == ApproxDP(1.0, 1e-6)
    with pytest.raises(ValueError, match="ε-DP or ρ-zCDP"):
        unit.row_budget(ApproxDP(1.0, 1e-6))
    with pytest.raises(ValueError, match="need a person column"):
        PrivacyUnit(None, max_groups=2)


def test_a_person_level_release_adds_noise_for_all_their_rows(frame):
    """Laplace with public sizes: the noise's spread grows by c = max_groups × max_rows (a
    statistical check over 600 seeded releases; the spread ratio's 99% range is about ±15%)."""
    spec = GroupingSpec(by=("region",), min_group_size=10)
    spreads = []
    for unit in (ROW, PrivacyUnit("person", max_groups=1, max_rows=3)):
        stats = aggregate_mean(PandasEngine(frame), spec, "v", BOUNDS, unit).stats
        header = PlanHeader(dataset=DatasetRef("messy", "-", 1), spec=spec, budget=PureDP(1.0))
        plan = MeanPlan(values=stats, header=header, estimator=LaplaceMean(bounds=BOUNDS))
        draws = run_strategy(
            "stratified", stats, plan.estimator, plan.row_budget, stats.shares,
            replicates=600, rng=11,
        ).group_estimates  # fmt: skip
        spreads.append(draws.std(axis=0) * stats.sizes)  # the noise of a sum, per group
    ratio = spreads[1] / spreads[0]
    assert np.all((ratio > 3 * 0.85) & (ratio < 3 * 1.15)), ratio


def test_the_privacy_unit_is_in_the_plan_and_its_metadata_only_when_set(frame, tmp_path):
    spec = GroupingSpec(by=("region",), min_group_size=10)
    parameters = []
    for unit in (ROW, PrivacyUnit("person", max_groups=1, max_rows=2)):
        aggregated = aggregate_mean(PandasEngine(frame, "messy"), spec, "v", BOUNDS, unit)
        header = PlanHeader(dataset=aggregated.dataset, spec=spec, budget=PureDP(1.0))
        plan = MeanPlan(values=aggregated.stats, header=header, estimator=LaplaceMean(BOUNDS))
        parameters.append(plan.parameters())
        ledger = Ledger(tmp_path / f"{unit.column}.sqlite", "l", PureDP(1.0))  # one per unit
        record = release(plan, ledger, noise="simulation", rng=0)
        public = public_metadata(record.metadata)
        assert aggregated.dataset.identity not in str(public)
    assert "privacy_unit" not in parameters[0]
    assert parameters[1]["privacy_unit"] == {"column": "person", "max_groups": 1, "max_rows": 2}
