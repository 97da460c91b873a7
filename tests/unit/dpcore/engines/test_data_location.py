"""Engines: what a data location holds (files, formats, parts, their columns) and its identity,
which follows the bytes, not the names of the parts; bad locations refused with a message that
names them."""

from __future__ import annotations

import pandas as pd
import pytest

from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.engines import DuckDBEngine, EngineError, data_files
from dpcore.foundations.grouping import GroupingSpec
from tests.unit.dpcore.engines.helpers import BOUNDS


def test_the_identity_follows_the_bytes_not_the_names_of_the_parts(frame, tmp_path):
    """A folder is the set of its parts' contents: renamed or moved parts are the same data, a
    changed value is other data, and the pass computes no digest of its own any more."""
    spec = GroupingSpec(by=("region",))
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, names in ((first, ("a", "b")), (second, ("z", "y"))):
        (folder / "nested").mkdir(parents=True)
        frame.iloc[:1000].to_parquet(folder / f"{names[0]}.parquet")
        frame.iloc[1000:].to_parquet(folder / "nested" / f"{names[1]}.parquet")
    (second / "_SUCCESS").write_text("")  # left out by both engines, as Spark leaves it out
    changed = frame.copy()
    changed.loc[10, "v"] = 1.2345
    changed.to_parquet(tmp_path / "changed.parquet")

    def identity(location):
        return aggregate_mean(DuckDBEngine(location), spec, "v", BOUNDS).dataset.identity

    assert identity(first) == identity(second) == identity(f"{first}/**/*.parquet")
    assert identity(first).startswith("content:")
    assert identity(tmp_path / "changed.parquet") != identity(first)


def test_no_files_at_the_location(tmp_path):
    with pytest.raises(EngineError, match="No data at .*nope"):
        data_files(tmp_path / "nope")
    (tmp_path / "notes.md").write_text("x")
    with pytest.raises(EngineError, match="No data at"):
        data_files(tmp_path)


def test_mixed_formats_are_refused(tmp_path):
    pd.DataFrame({"a": [1]}).to_parquet(tmp_path / "a.parquet")
    pd.DataFrame({"a": [1]}).to_csv(tmp_path / "b.csv")
    with pytest.raises(EngineError, match="both Parquet and CSV"):
        data_files(tmp_path)


def test_an_unreadable_part_is_named(tmp_path, frame):
    frame.to_parquet(tmp_path / "good.parquet")
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(EngineError, match="broken.parquet"):
        aggregate_mean(DuckDBEngine(tmp_path), GroupingSpec(by=("region",)), "v", BOUNDS)


def test_a_column_absent_from_some_parts_is_named(tmp_path, frame):
    frame.to_parquet(tmp_path / "a.parquet")
    frame.drop(columns="region").to_parquet(tmp_path / "b.parquet")
    with pytest.raises(EngineError, match="same columns.*region"):
        aggregate_mean(DuckDBEngine(tmp_path), GroupingSpec(by=("region",)), "v", BOUNDS)
