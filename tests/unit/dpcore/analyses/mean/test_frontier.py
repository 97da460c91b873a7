"""The stratification frontier: candidates, Pareto marking, and scores that mean what they say."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses import MEAN
from dpcore.analyses.mean import LaplaceMean, MeanSettings
from dpcore.analyses.mean.frontier import (
    candidate_columns,
    pareto_mask,
    stratification_frontier,
)
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import GroupingSpec

BOUNDS = (0.0, 100.0)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """Two columns: ``sex`` shifts the value by 20, ``region`` by nothing; ``id`` is unique."""
    rng = np.random.default_rng(0)
    n = 4000
    sex = rng.choice(["F", "M"], n)
    region = rng.choice(["north", "south", "east", "west"], n)
    value = np.where(sex == "F", 30.0, 50.0) + rng.normal(0, 5, n)
    return pd.DataFrame({"sex": sex, "region": region, "id": np.arange(n).astype(str), "v": value})


def test_every_non_empty_subset_is_a_candidate_smallest_first():
    assert candidate_columns(["a", "b", "c"]) == [
        ("a",), ("b",), ("c",), ("a", "b"), ("a", "c"), ("b", "c"), ("a", "b", "c"),
    ]  # fmt: skip
    assert len(candidate_columns(["a", "b", "c", "d"])) == 15
    with pytest.raises(ValueError, match="at least one"):
        candidate_columns([])
    with pytest.raises(ValueError, match="at most 6"):
        candidate_columns(list("abcdefg"))


def test_pareto_marks_the_points_nothing_beats_on_both_axes():
    first = np.array([1.0, 2.0, 3.0, 2.0, 1.0, np.nan])
    second = np.array([5.0, 2.0, 1.0, 3.0, 5.0, 0.0])
    # (2, 3) is beaten by (2, 2); the two (1, 5) tie and both stay; NaN is never on it.
    assert pareto_mask(first, second).tolist() == [True, True, True, False, True, False]
    # A difference in the last bits is a tie, not a win.
    nudged = first.copy()
    nudged[4] = 1.0 - 1e-15
    assert pareto_mask(nudged, second)[0]


def test_the_frontier_scores_every_candidate_and_strategy(frame):
    table = stratification_frontier(
        frame, ["sex", "region"], "v", LaplaceMean(bounds=BOUNDS), PureDP(1.0), rng=1
    )
    assert len(table) == 3 * 3
    assert set(table["strategy"]) == {"stratified", "global_only", "global_and_groups"}
    assert (table["skipped"] == "").all()
    assert (table["worst_group_error"] <= 100).all()
    # Common random numbers: one estimate for everyone has the same population error whatever
    # the stratification (up to the order of summation).
    everyone = table[table["strategy"] == "global_only"]["global_error"]
    assert everyone.to_numpy() == pytest.approx(everyone.iloc[0], rel=1e-12)


def test_the_scores_reflect_the_groups_and_the_noise(frame):
    table = stratification_frontier(
        frame, ["sex", "region"], "v", LaplaceMean(bounds=BOUNDS), PureDP(10.0), rng=2,
        replicates=400,
    ).set_index("label")  # fmt: skip
    # Nearly no noise at ε = 10: one estimate for everyone misses each sex by about 10.
    gap = table.loc["sex: one estimate for everyone", "worst_group_error"]
    assert gap == pytest.approx(10.0, abs=0.5)
    # Stratifying by sex removes that gap; region does not matter for the value.
    assert table.loc["sex: one estimate per group", "worst_group_error"] < 0.2
    assert table.loc["sex: one estimate per group", "pareto"]
    assert not table.loc["sex × region: one estimate for everyone", "pareto"]


def test_candidates_over_the_group_limit_are_listed_with_the_reason(frame):
    table = stratification_frontier(
        frame, ["sex", "id"], "v", LaplaceMean(bounds=BOUNDS), PureDP(1.0), rng=3, max_groups=50,
        min_group_size=1,
    )  # fmt: skip
    skipped = table[table["skipped"] != ""]
    assert set(skipped["by"]) == {("id",), ("sex", "id")}
    assert skipped["skipped"].str.contains("over the limit of 50").all()
    assert not skipped["pareto"].any()
    assert (table.loc[table["skipped"] == "", "worst_group_error"] > 0).all()


def test_the_analysis_runs_the_frontier_at_its_native_budget(frame):
    """A ρ budget runs the Laplace mean at ε = √(2ρ)."""
    settings = MeanSettings(
        value="v", estimator="laplace", clip_low=0.0, clip_high=100.0, n_public=True
    )
    table = MEAN.frontier(
        frame, ["sex"], settings, ZCDP(0.5), GroupingSpec(by=("sex",)), replicates=100, rng=4
    )
    direct = stratification_frontier(
        frame, ["sex"], "v", LaplaceMean(bounds=BOUNDS), PureDP(1.0), replicates=100, rng=4
    )
    pd.testing.assert_frame_equal(table, direct)
