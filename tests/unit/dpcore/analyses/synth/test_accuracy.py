"""Synthetic data's error model for the planner (dpcore.analyses.synth.accuracy): each group's
3-way workload error simulated on a grid of ε, the answer checked by fresh syntheses, and the
slow synthesizers refused with what to do instead. Tiny data, so each test takes seconds."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pandas as pd
import pytest

from dpcore.accounting import PureDP
from dpcore.analyses import PlannerUnavailable
from dpcore.analyses.mean.accuracy import POPULATION_LABEL
from dpcore.analyses.synth import SYNTH, SynthSettings
from dpcore.analyses.synth.accuracy import (
    CHECK_REPLICATES,
    check_synth_accuracy,
    synth_error_model,
)
from dpcore.grouping import GroupingSpec
from dpcore.planner import AccuracyTarget, log_grid, smallest_budget

SETTINGS = SynthSettings(
    method="independent", columns=("job", "car", "pet"), edges=(), categorical=(), n_rows=400
)


def survey(seed: int = 0) -> pd.DataFrame:
    """Two regions of 300 and 100 people with three text columns that depend on the region."""
    rng = np.random.default_rng(seed)
    region = np.repeat(["north", "south"], [300, 100])
    shift = np.where(region == "north", 0.0, 0.4)
    pick = lambda a, b, p: np.where(rng.random(region.size) < p, a, b)  # noqa: E731
    return pd.DataFrame(
        {
            "region": region,
            "job": pick("office", "field", 0.7 - shift),
            "car": pick("yes", "no", 0.2 + shift),
            "pet": pick("cat", "dog", 0.5),
        }
    )


@functools.cache
def prepared(settings: SynthSettings = SETTINGS):
    frame = survey()
    return SYNTH.statistics(frame, GroupingSpec(by=("region",)).build(frame), settings)


@functools.cache
def precise_model():
    """More syntheses and halvings than the Plan page's, so the test measures calibration."""
    return synth_error_model(
        prepared(), "stratified", replicates=200, grid=log_grid(0.1, 10, 4), refine_steps=6
    )


def test_the_model_scores_each_group_and_the_whole_population_by_the_workload_error():
    model = SYNTH.error_model(prepared(), SETTINGS)
    assert model.labels == ("north", "south", POPULATION_LABEL)
    assert list(model.sizes) == [300, 100, 400]
    assert model.unit == "epsilon" and model.groups == 2
    assert model.curator_preview  # each synthesis is fitted on the confidential rows
    errors = model._simulate(1.0)
    assert errors.shape == (model.replicates, 3)
    assert np.all((errors >= 0) & (errors <= 2))  # an L1 distance between two sets of shares
    np.testing.assert_array_equal(
        errors, model.simulator(1.0, model.replicates, np.random.default_rng(model.seed))
    )
    # More budget, less error; the smaller group errs more.
    low, high = model.quantiles_at(0.1, (0.95,))[0], model.quantiles_at(10.0, (0.95,))[0]
    assert np.all(high < low)
    assert high[1] > high[0]


def test_at_the_planned_budget_the_binding_group_meets_the_target_at_about_the_level():
    model = precise_model()
    level = 0.8
    half = float(model.quantiles_at(1.0, (level,))[0].max())  # a target reached near ε = 1
    target = AccuracyTarget(half, level=level)
    answer = smallest_budget(model, target)
    assert answer.budget is not None and 0.3 < answer.budget.epsilon < 3
    check = check_synth_accuracy(
        prepared(), "stratified", answer.budget.epsilon, target, replicates=400, rng=7
    ).set_index("estimate")
    met = check.loc[answer.binding, "met"]
    # The model's quantile comes from 200 syntheses, the check's share from 400 fresh ones:
    # together about ±0.035 (one s.d.), and the answer sits at most 8% of ε above the smallest.
    assert level - 0.1 < met < level + 0.12, (answer.binding, met)
    assert (check["met"] >= check.loc[answer.binding, "band_low"] - 0.1).all()


def test_a_target_below_what_the_synthesizer_can_reach_has_no_budget_and_says_why():
    model = SYNTH.error_model(prepared(), SETTINGS)
    answer = smallest_budget(model, AccuracyTarget(0.001))
    assert answer.budget is None
    assert "which no budget removes" in answer.unreachable[0]
    assert model.rows_reason  # no count of rows would do it either


def test_a_percentage_target_is_refused_in_words():
    model = SYNTH.error_model(prepared(), SETTINGS)
    with pytest.raises(ValueError, match="no true value to take a percentage of"):
        smallest_budget(model, AccuracyTarget(0.1, relative=True))


@pytest.mark.parametrize(
    ("method", "says"),
    [("mst", "OpenDP in 30 seconds to 10 minutes"), ("aim", "OpenDP"), ("mwem", "0.2 s"),
     ("histogram", "0.06 s")],
)  # fmt: skip
def test_slow_synthesizers_are_refused_with_what_to_do(method, says):
    settings = dataclasses.replace(SETTINGS, method=method)
    with pytest.raises(PlannerUnavailable, match=says) as refused:
        SYNTH.error_model(prepared(settings), settings)
    assert "Choose independent marginals on the Estimator page" in str(refused.value)
    assert "at that budget on the Compare page" in str(refused.value)


def test_the_check_runs_fresh_syntheses_and_caps_their_number():
    assert SYNTH.check_replicates(SETTINGS, 1000) == CHECK_REPLICATES
    assert SYNTH.check_replicates(SETTINGS, 5) == 5
    target = AccuracyTarget(1.0)
    first = SYNTH.check_accuracy(prepared(), SETTINGS, PureDP(1.0), target, replicates=1000, rng=1)
    again = SYNTH.check_accuracy(prepared(), SETTINGS, PureDP(1.0), target, replicates=1000, rng=1)
    pd.testing.assert_frame_equal(first, again)
    assert list(first["estimate"]) == ["north", "south", POPULATION_LABEL]
    # The met shares are counts out of CHECK_REPLICATES syntheses.
    np.testing.assert_allclose(
        first["met"] * CHECK_REPLICATES, np.round(first["met"] * CHECK_REPLICATES)
    )
