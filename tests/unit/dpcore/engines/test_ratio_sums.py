"""Engines: the ratio's sums on every engine, those of the rows in memory; the same seeded
release; one added person moves each sum by at most its sensitivity; bad columns refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.ratio import GroupRatioSums, RatioBounds, RatioPlan
from dpcore.analyses.ratio.aggregate import aggregate_ratio
from dpcore.analyses.ratio.groups import group_ratio_sums
from dpcore.engines import DuckDBEngine, EngineError, PandasEngine
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from dpcore.release import DatasetRef, PlanHeader
from tests.neighbours import assert_each_sum_moves_within_its_sensitivity
from tests.unit.dpcore.engines.helpers import (
    RATIO_CASES,
    SPECS,
    assert_same_ratio_sums,
    engine_on,
    engines,
    ratio_options,
)


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPECS.keys())
@pytest.mark.parametrize("case", RATIO_CASES.values(), ids=RATIO_CASES.keys())
def test_the_ratio_sums_are_those_of_the_rows_in_memory(frame, parquet_folder, spec, case):
    """Every grouping and choice of columns on pandas and DuckDB (Spark, slower to run, is
    checked on one grouping by the seeded release below, whose noisy sums it compares)."""
    options = ratio_options(case[0])
    in_memory = group_ratio_sums(frame, spec.build(frame), **options)
    for name, engine in engines(frame, parquet_folder).items():
        stats = aggregate_ratio(engine, spec, **options).stats
        assert stats.engine == name
        assert_same_ratio_sums(in_memory, stats)


def released_ratio(stats: GroupRatioSums, options: dict, budget, seed: int = 3) -> np.ndarray:
    header = PlanHeader(dataset=DatasetRef("messy", "-", 1), spec=SPECS["text"], budget=budget)
    plan = RatioPlan(sums=stats, header=header, **options)
    rows = plan.run(SimulationNoise(rng=seed), np.random.default_rng(seed))
    return np.array(
        [[row.estimate, row.low, row.high, *dict(row.noisy_sums).values()] for row in rows],
        dtype=float,
    )


@pytest.mark.parametrize("case", RATIO_CASES.values(), ids=RATIO_CASES.keys())
def test_a_seeded_ratio_release_is_the_same_on_every_engine(frame, parquet_folder, spark, case):
    """Pandas in memory, the pandas engine, DuckDB on a Parquet folder and Spark: the same
    release, to floating-point rounding (issue 16, item 3)."""
    options, plan_options, budget = case
    options = ratio_options(options)
    spec = SPECS["text"]
    runs = [released_ratio(group_ratio_sums(frame, spec.build(frame), **options), plan_options,
                           budget)]  # fmt: skip
    for engine in engines(frame, parquet_folder, spark).values():
        stats = aggregate_ratio(engine, spec, **options).stats
        runs.append(released_ratio(stats, plan_options, budget))
    assert np.isfinite(runs[0][:, 0]).sum() >= 4
    for other in runs[1:]:
        np.testing.assert_allclose(other, runs[0], rtol=1e-9, atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("engine_name", ["pandas", "duckdb", "spark"])
def test_one_added_person_moves_each_ratio_sum_by_at_most_its_sensitivity(
    frame, tmp_path, request, engine_name
):
    """Neighbouring datasets differ by one person with many rows at the bounds and beyond, in
    many groups: each sum, over all groups, moves by at most its declared sensitivity, which is
    c = max_groups × max_rows times one row's (and by some of it: the bound is reached)."""
    unit = PrivacyUnit("person", max_groups=2, max_rows=3)
    intruder = pd.DataFrame({
        "region": ["north", "south", "east", "wést"] * 10, "age": 50.0, "flag": True,
        "v": 1.0, "person": -7, "s": np.linspace(1.5, 9, 40), "y": 1.0, "y3": 7.0, "w": 50.0,
    })  # fmt: skip
    options = ratio_options(RATIO_CASES["weighted, label up to 3, laplace"][0])
    spec = GroupingSpec(by=("region",))
    stats = []
    for i, data in enumerate([frame, pd.concat([frame, intruder], ignore_index=True)]):
        engine = engine_on(engine_name, data, tmp_path / f"{i}.parquet", request)
        stats.append(aggregate_ratio(engine, spec, **options, unit=unit).stats)
    before, after = stats
    assert before.labels == after.labels
    sensitivity = after.bounds.sensitivities(after.sums.released)
    assert sensitivity["w"] == unit.rows_per_person * 3.0
    assert_each_sum_moves_within_its_sensitivity(before, after, sensitivity, unit)


def test_a_person_level_ratio_release_scales_its_noise_not_its_cost(frame):
    spec = SPECS["text"]
    options = ratio_options(RATIO_CASES["unweighted, 0/1 label, classic gaussian"][0])
    plans = []
    for unit in (ROW, PrivacyUnit("person", max_groups=2, max_rows=2)):
        aggregated = aggregate_ratio(PandasEngine(frame, "messy"), spec, **options, unit=unit)
        header = PlanHeader(dataset=aggregated.dataset, spec=spec, budget=ZCDP(0.5))
        plans.append(RatioPlan(sums=aggregated.stats, header=header))
    row, person = plans
    for name, sigma in row.noise_scale.items():
        assert person.noise_scale[name] == pytest.approx(4 * sigma)
    assert person.cost.rho == pytest.approx(row.cost.rho)
    assert "privacy_unit" not in row.parameters()
    assert person.parameters()["privacy_unit"] == {"column": "person", "max_groups": 2,
                                                   "max_rows": 2}  # fmt: skip
    assert any("Privacy unit" in line for line in person.review_lines())
    assert "aggregate_ratio(PandasEngine(frame, 'messy'), spec" in person.script_body()


@pytest.mark.parametrize("engine_name", ["pandas", "duckdb", "spark"])
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"s_column": "region"}, "score column `region` holds text; choose a column of numbers"),
        ({"y_column": "nope"}, "label column `nope` is not in the data"),
        ({"y_column": "y3"}, "label column `y3` has values other than 0 and 1.*--label-bound"),
        ({"w_column": "s", "bounds": RatioBounds(1, 1, 3)}, "must be different columns"),
    ],
)  # fmt: skip
def test_bad_ratio_columns_are_refused_with_what_to_fix(
    frame, tmp_path, request, engine_name, options, message
):
    engine = engine_on(engine_name, frame, tmp_path / "data.parquet", request)
    arguments = {**ratio_options(RATIO_CASES["unweighted, 0/1 label, classic gaussian"][0]),
                 **options}  # fmt: skip
    with pytest.raises(EngineError, match=message):
        aggregate_ratio(engine, GroupingSpec(by=("region",)), **arguments)


def test_a_ratio_column_absent_from_some_parts_is_named(tmp_path, frame):
    frame.to_parquet(tmp_path / "a.parquet")
    frame.drop(columns="s").to_parquet(tmp_path / "b.parquet")
    options = ratio_options(RATIO_CASES["unweighted, 0/1 label, classic gaussian"][0])
    with pytest.raises(EngineError, match="same columns.*`?s`?"):
        aggregate_ratio(DuckDBEngine(tmp_path), GroupingSpec(by=("region",)), **options)
