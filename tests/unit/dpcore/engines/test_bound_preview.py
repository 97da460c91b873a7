"""Engines: the curator's preview of a contribution bound is the same on every engine as in
memory, counts missing ids and refuses a person column that also groups."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.engines import EngineError
from dpcore.foundations.grouping import GroupingSpec, cell_labels
from dpcore.foundations.privacy_unit import PrivacyUnit, preview_bound
from tests.unit.dpcore.engines.helpers import SPECS, engine_on, engines

PREVIEW_UNITS = {
    "2 groups x 2 rows": PrivacyUnit("person", max_groups=2, max_rows=2),
    "1 group x 3 rows": PrivacyUnit("person", max_groups=1, max_rows=3),
}


@pytest.mark.parametrize("spec", [*SPECS.values(), GroupingSpec(by=())],
                         ids=[*SPECS, "no grouping"])  # fmt: skip
@pytest.mark.parametrize("unit", PREVIEW_UNITS.values(), ids=PREVIEW_UNITS.keys())
def test_the_preview_of_a_bound_is_the_same_on_every_engine(
    frame, parquet_folder, spark, spec, unit
):
    """What the bound leaves out, counted in one aggregation on each engine, equals the count
    of the rows in memory (:func:`preview_bound`), and leaves rows out."""
    edges = dict(spec.edges)
    labels = cell_labels(frame, spec.by, edges) if spec.by else frame.iloc[:, :0]
    expected = preview_bound(labels, frame["person"], unit)
    assert expected.dropped > 0 and expected.people_affected > 0
    for name, engine in engines(frame, parquet_folder, spark).items():
        assert engine.bound_preview(spec.by, edges, unit) == expected, name


@pytest.mark.parametrize("engine_name", ["pandas", "duckdb", "spark"])
def test_the_preview_counts_missing_ids_and_refuses_a_grouping_person(
    frame, tmp_path, request, engine_name
):
    data = frame.assign(owner=frame["person"].astype(float))
    data.loc[[5, 9, 11], "owner"] = np.nan
    engine = engine_on(engine_name, data, tmp_path / "data.parquet", request)
    unit = PrivacyUnit("owner", max_groups=1, max_rows=2)
    expected = preview_bound(cell_labels(data, ("region",)), data["owner"], unit)
    found = engine.bound_preview(("region",), {}, unit)
    assert found == expected and found.missing_person == 3
    with pytest.raises(EngineError, match="person column `region` is also a grouping column"):
        engine.bound_preview(("region",), {}, PrivacyUnit("region"))
    with pytest.raises(EngineError, match="person column `who` is not in the data"):
        engine.bound_preview(("region",), {}, PrivacyUnit("who"))
