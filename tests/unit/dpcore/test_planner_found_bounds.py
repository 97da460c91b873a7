"""The planner for a mean that finds its bounds privately: one simulated model per share of
the budget for the bounds, the answer at the share that needs the least, both parts said, and
the answer checked by fresh simulated releases at that split."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

from dpcore.analyses.mean import MEAN, MeanSettings
from dpcore.foundations.accounting import PureDP
from dpcore.foundations.datasets import load_demo
from dpcore.foundations.grouping import GroupingSpec
from dpcore.planner import AccuracyTarget, BestSplitModel, SplitChoice, smallest_budget
from dpcore.planner.accuracy import ErrorModel
from dpcore.planner.error_shapes import LaplaceError

LEVEL = 0.95


@pytest.fixture(scope="module")
def demo():
    frame = load_demo()
    settings = MeanSettings(clip_high=1000, bounds_source="private", n_public=True)
    stats = MEAN.statistics(frame, GroupingSpec(by=("race",)).build(frame), settings)
    return stats, settings, MEAN.error_model(stats, settings)


def laplace_model(scale: float) -> ErrorModel:
    return ErrorModel(("a", "b"), np.array([10, 20]), ((LaplaceError(np.array([scale, scale])), 2),),
                      "epsilon")  # fmt: skip


def test_the_best_split_is_the_one_that_needs_the_least_budget():
    choices = tuple(
        SplitChoice((("x", share), ("y", 1 - share)), {"share": share}, laplace_model(noise))
        for share, noise in ((0.1, 3.0), (0.2, 1.0), (0.3, 2.0))
    )
    model = BestSplitModel(("a", "b"), np.array([10, 20]), (), "epsilon", choices=choices)
    target = AccuracyTarget(1.0)
    answer = smallest_budget(model, target)
    assert answer.parts == (("x", 0.2), ("y", 0.8)) and answer.changes == {"share": 0.2}
    direct = smallest_budget(laplace_model(1.0), target)
    assert answer.budget == direct.budget
    assert "20% x, 80% y" in answer.notes[-1]
    with pytest.raises(ValueError, match="adding up to 1"):
        SplitChoice((("x", 0.5),), {}, laplace_model(1.0))


def test_found_bounds_are_planned_by_simulation_as_a_curator_preview(demo):
    _, _, model = demo
    assert isinstance(model, BestSplitModel) and model.unit == "epsilon"
    assert model.curator_preview and "finds its bounds" in model.reads[0]
    assert [c.changes["bounds_fraction"] for c in model.choices] == [0.05, 0.1, 0.2, 0.3, 0.4]
    copy = pickle.loads(pickle.dumps(model))  # the app keeps models in its cache
    assert (
        smallest_budget(copy, AccuracyTarget(1.0)).budget
        == smallest_budget(model, AccuracyTarget(1.0)).budget
    )


@pytest.mark.parametrize("half_width", [1.0, 0.5])
def test_the_answer_meets_the_target_at_its_split_and_a_fifth_less_does_not(demo, half_width):
    """Fresh simulated releases (another seed than the planner's) at the answer's budget and
    split meet the target about as often as the level; a fifth less budget does not."""
    stats, settings, model = demo
    target = AccuracyTarget(half_width, level=LEVEL)
    answer = smallest_budget(model, target)
    split = dataclasses.replace(settings, **answer.changes)
    assert sum(share for _, share in answer.parts) == pytest.approx(1.0)

    def met(epsilon: float) -> float:
        check = MEAN.check_accuracy(stats, split, PureDP(epsilon), target, replicates=4000,
                                    rng=99)  # fmt: skip
        return check.set_index("estimate").loc[answer.binding, "met"]

    assert met(answer.budget.epsilon) >= LEVEL - 0.012
    assert met(0.8 * answer.budget.epsilon) < LEVEL - 0.01


def test_a_bias_target_is_refused_since_the_errors_already_include_the_clipping(demo):
    _, _, model = demo
    with pytest.raises(ValueError, match="already include"):
        smallest_budget(model, AccuracyTarget(1.0, include_bias=True))


def test_the_planner_needs_far_less_budget_than_the_wide_typed_range(demo):
    stats, _, model = demo
    wide = MEAN.error_model(stats, MeanSettings(clip_high=1000, n_public=True))
    target = AccuracyTarget(1.0)
    assert (
        smallest_budget(model, target).budget.epsilon
        < smallest_budget(wide, target).budget.epsilon / 5
    )
