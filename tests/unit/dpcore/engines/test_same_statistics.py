"""Engines: the same groups, sizes and clipped sums on pandas in memory, the pandas engine, DuckDB
and Spark, for every grouping (text, yes/no, codes, buckets, declared groups)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.sums import GroupSums
from dpcore.engines import EngineError, PandasEngine
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from tests.unit.dpcore.engines.helpers import BOUNDS, SPECS, assert_same_statistics, engines

UNITS = {"row": ROW, "person 2x2": PrivacyUnit("person", max_groups=2, max_rows=2)}


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPECS.keys())
@pytest.mark.parametrize("unit", UNITS.values(), ids=UNITS.keys())
def test_engines_give_the_same_groups_sizes_and_sums(frame, parquet_folder, spark, spec, unit):
    results = [
        aggregate_mean(engine, spec, "v", BOUNDS, unit).stats
        for engine in engines(frame, parquet_folder, spark).values()
    ]
    for second in results[1:]:
        assert_same_statistics(results[0], second)


def test_whole_number_codes_group_alike_on_every_engine_and_many_values_need_edges(
    frame, tmp_path, spark
):
    """A 0/1 code (with missing entries) groups by its values without edges on every engine;
    a whole-number column of more than 20 values is refused on every engine."""
    codes = pd.Series(np.arange(len(frame)) % 2, dtype="Int64")
    codes[::50] = pd.NA
    data = frame.assign(code=codes, count=np.arange(len(frame)) % 21)
    data.to_parquet(tmp_path / "codes.parquet")
    spec = GroupingSpec(by=("code", "region"), min_group_size=10)
    results = [
        aggregate_mean(engine, spec, "v", BOUNDS).stats
        for engine in engines(data, tmp_path / "codes.parquet", spark).values()
    ]
    assert {label.split(" × ")[0] for label in results[0].labels} >= {"0", "1", "(missing)"}
    for second in results[1:]:
        assert_same_statistics(results[0], second)
    for name, engine in engines(data, tmp_path / "codes.parquet", spark).items():
        with pytest.raises(EngineError, match="`count` holds .*Give public bucket edges"):
            aggregate_mean(engine, GroupingSpec(by=("count",)), "v", BOUNDS)
        if name != "pandas":
            with pytest.raises(EngineError, match="more than 20 distinct whole numbers"):
                aggregate_mean(engine, GroupingSpec(by=("count",)), "v", BOUNDS)


def test_decimal_codes_group_as_whole_numbers_on_every_engine(frame, tmp_path, spark):
    """A 0/1/2 code written as 0.0/1.0/2.0 (with missing entries) groups as "0", "1", "2" on
    every engine, as in memory; a decimal that is not whole still needs edges."""
    codes = (np.arange(len(frame)) % 3).astype(float)
    codes[::40] = np.nan
    data = frame.assign(code=codes, half=codes / 2)
    data.to_parquet(tmp_path / "decimal-codes.parquet")
    spec = GroupingSpec(by=("code",))
    found = engines(data, tmp_path / "decimal-codes.parquet", spark)
    results = [aggregate_mean(engine, spec, "v", BOUNDS).stats for engine in found.values()]
    assert results[0].labels == ("0", "1", "2", "(missing)")
    for second in results[1:]:
        assert_same_statistics(results[0], second)
    for engine in found.values():
        with pytest.raises(EngineError, match="`half` holds numbers that are not"):
            aggregate_mean(engine, GroupingSpec(by=("half",)), "v", BOUNDS)


def test_every_engine_keeps_the_declared_groups_with_no_rows(frame, parquet_folder):
    for name, engine in engines(frame, parquet_folder).items():
        stats = aggregate_mean(engine, SPECS["declared"], "v", BOUNDS).stats
        assert stats.k == 20, name
        empty = [label for label, size in zip(stats.labels, stats.sizes, strict=True) if not size]
        assert empty == [f"{age} × west" for age in ("< 30", "[30, 60)", "≥ 60", "(missing)")]
        assert any("“tiny”" in note for note in stats.messages()), name


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPECS.keys())
def test_without_a_person_the_engines_match_the_in_memory_statistics(frame, spec):
    in_memory = GroupValues.from_grouping(spec.build(frame), frame, "v")
    engine = aggregate_mean(PandasEngine(frame), spec, "v", BOUNDS).stats
    assert engine.labels == in_memory.labels
    np.testing.assert_array_equal(engine.sizes, in_memory.sizes)
    assert engine.n_missing == in_memory.n_missing
    np.testing.assert_allclose(
        engine.clipped_sums(*BOUNDS), in_memory.clipped_sums(*BOUNDS), rtol=1e-12
    )


def test_coinpress_replicates_at_other_bounds_need_the_rows_in_memory(frame):
    stats = aggregate_mean(PandasEngine(frame), SPECS["text"], "v", BOUNDS).stats
    with pytest.raises(ValueError, match="needs the rows in memory"):
        stats.clipped_sums(np.zeros((5, stats.k)), np.ones((5, stats.k)))


def test_group_sums_of_constants_are_exact():
    stats = GroupSums.constant(("a", "b"), np.array([3, 5]), np.array([2.0, 7.0]))
    np.testing.assert_array_equal(stats.clipped_sums(0.0, 5.0), [6.0, 25.0])
    np.testing.assert_array_equal(stats.pooled.clipped_sums(np.zeros((2, 1)), 5.0), [[31.0]] * 2)
