"""Engines: bad data and bad requests (missing ids, text values, wrong edges, absent columns)
refused on every engine with a message that says what to fix."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.engines import DuckDBEngine, EngineError, SparkEngine
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from tests.unit.dpcore.engines.helpers import BOUNDS, engine_on


@pytest.mark.parametrize("engine_name", ["duckdb", "spark"])
def test_a_nan_is_missing_as_in_pandas(tmp_path, request, engine_name):
    """Float columns may hold NaN (not null) in Parquet: a NaN person id is no id, and a NaN in a
    bucketed grouping column is "(missing)", as in pandas."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({
        "g": ["a", "a", "b", "b"], "v": [1.0, 2.0, 3.0, 4.0],
        "who": pa.array([1.0, float("nan"), 2.0, float("nan")], from_pandas=False),
    })  # fmt: skip
    pq.write_table(table, tmp_path / "nan.parquet")
    path = tmp_path / "nan.parquet"
    engine = (
        DuckDBEngine(path) if engine_name == "duckdb"
        else SparkEngine(str(path), session=request.getfixturevalue("spark"))
    )  # fmt: skip
    with pytest.raises(EngineError, match="2 rows of the data have no id"):
        aggregate_mean(engine, GroupingSpec(by=("g",)), "v", BOUNDS, PrivacyUnit("who"))
    spec = GroupingSpec(by=("who",), edges=(("who", (1.5,)),), min_group_size=1)
    stats = aggregate_mean(engine, spec, "v", BOUNDS).stats
    assert set(stats.labels) == {"(missing)", "< 1.5", "≥ 1.5"}


@pytest.mark.parametrize("engine_name", ["pandas", "duckdb", "spark"])
@pytest.mark.parametrize(
    ("spec", "value", "unit", "message"),
    [
        (GroupingSpec(by=("age",)), "v", ROW, "`age` holds numbers that are not .*Give public bucket edges"),
        (GroupingSpec(by=("region",)), "region2", ROW, "value column `region2` is not in the data"),
        (GroupingSpec(by=("flag",)), "region", ROW, "`region` holds text; choose a column of numbers"),
        (GroupingSpec(by=("region",), edges=(("region", (1.0,)),)), "v", ROW,
         "edges apply to numeric columns only"),
        (GroupingSpec(by=("region",)), "v", PrivacyUnit("who", 1, 1), "person column `who` is not"),
        (GroupingSpec(by=("region",)), "v", PrivacyUnit("owner", 1, 1), "2 rows of the data have no id"),
        (GroupingSpec(by=("rows",)), "v", ROW, "may not be called `rows`"),
        (GroupingSpec(by=("age",), edges=(("age", (50.0, 10.0)),)), "v", ROW, "strictly increasing"),
        (GroupingSpec(by=("region",), share_source="holdout", holdout_fraction=0.2), "v", ROW,
         "holdout is drawn row by row"),
    ],
)  # fmt: skip
def test_bad_requests_are_refused_with_what_to_fix(
    frame, tmp_path, request, engine_name, spec, value, unit, message
):
    data = frame.assign(owner=frame["person"].astype(float), rows=frame["region"])
    data.loc[[5, 9], "owner"] = np.nan
    engine = engine_on(engine_name, data, tmp_path / "data.parquet", request)
    with pytest.raises(ValueError, match=message):
        aggregate_mean(engine, spec, value, BOUNDS, unit)
