"""Many groups on engines: up to 50,000 groups from an engine's cells (the in-memory grouping
keeps its 5,000), released with their noise intervals; one more is refused with the limit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.mean import LaplaceMean, MeanPlan
from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.engines import DuckDBEngine, PandasEngine
from dpcore.foundations.accounting import PureDP
from dpcore.foundations.grouping import MAX_ENGINE_GROUPS, MAX_GROUPS, GroupingSpec
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.release import PlanHeader

SPEC = GroupingSpec(by=("g",), min_group_size=1)


def frame(groups: int) -> pd.DataFrame:
    """Three rows in each of ``groups`` groups."""
    codes = np.repeat(np.arange(groups), 3)
    values = np.random.default_rng(0).uniform(0, 10, codes.size)
    return pd.DataFrame({"g": [f"z{c:06d}" for c in codes], "v": values})


@pytest.fixture(scope="module")
def most(tmp_path_factory):
    data = frame(MAX_ENGINE_GROUPS)
    path = tmp_path_factory.mktemp("many") / "many.parquet"
    data.to_parquet(path)
    return data, path


@pytest.mark.parametrize("engine", ["pandas", "duckdb"])
def test_fifty_thousand_groups_are_released_with_their_intervals(most, engine):
    data, path = most
    reader = PandasEngine(data) if engine == "pandas" else DuckDBEngine(path)
    aggregated = aggregate_mean(reader, SPEC, "v", (0.0, 10.0))
    assert aggregated.stats.k == MAX_ENGINE_GROUPS > MAX_GROUPS
    header = PlanHeader(dataset=aggregated.dataset, spec=SPEC, budget=PureDP(1.0))
    plan = MeanPlan(values=aggregated.stats, header=header, estimator=LaplaceMean((0.0, 10.0)))
    rows = plan.run(SimulationNoise(rng=0), None)
    assert len(rows) == MAX_ENGINE_GROUPS + 1
    ends = np.array([[row.low, row.high] for row in rows])
    assert np.isfinite(ends).all() and (ends[:, 0] <= ends[:, 1]).all()  # within [0, 10]


def test_one_group_more_is_refused_with_the_limit():
    with pytest.raises(ValueError, match="more than the limit of 50,000"):
        aggregate_mean(PandasEngine(frame(MAX_ENGINE_GROUPS + 1)), SPEC, "v", (0.0, 10.0))
