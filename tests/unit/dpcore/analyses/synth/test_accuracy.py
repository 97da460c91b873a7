"""Synthetic data's error model for the planner (dpcore.analyses.synth.accuracy): each group's
3-way workload error simulated on a grid of ε, the answer checked by fresh syntheses, and the
slow synthesizers refused with what to do instead. Tiny data, so each test takes seconds."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses import PlannerUnavailable
from dpcore.analyses.mean.accuracy import POPULATION_LABEL
from dpcore.analyses.synth import SYNTH, SynthSettings, estimate_seconds
from dpcore.analyses.synth.accuracy import (
    CHECK_REPLICATES,
    MAX_WORKLOAD_ERROR,
    SIMULATION_SIZES,
    SimulationSize,
    SynthWorkloadErrors,
    check_synth_accuracy,
    synth_error_model,
    synth_planner_cost,
)
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.planner import AccuracyTarget, duration_text, log_grid, shortfall, smallest_budget

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
    """More syntheses than the Plan page's, so the test measures calibration."""
    return synth_error_model(
        prepared(), "stratified", size=SimulationSize(log_grid(0.1, 10, 4), 200, 20)
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
    # together about ±0.035 (one s.d.); the answer is interpolated between grid budgets a
    # quarter decade apart, so it may sit a little either side of the smallest.
    assert level - 0.12 < met < level + 0.14, (answer.binding, met)
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


def test_a_change_of_target_reads_the_grid_and_never_synthesizes(monkeypatch):
    model = SYNTH.error_model(prepared(), SETTINGS)

    def refuse(*args, **kwargs):
        raise AssertionError("a synthesis after the model was built")

    monkeypatch.setattr(SynthWorkloadErrors, "_simulate", refuse)
    answers = [smallest_budget(model, AccuracyTarget(h, level=0.9)) for h in (0.6, 0.35, 0.45)]
    assert all(a.budget is not None for a in answers)
    epsilons = [a.budget.epsilon for a in answers]
    assert epsilons[1] > epsilons[2] > epsilons[0]  # a tighter target costs more
    for answer, half in zip(answers, (0.6, 0.35, 0.45), strict=True):
        # The binding group's error at the answer is the target: both read off the same lines.
        binding = answer.table.set_index("estimate").loc[answer.binding, "error at budget"]
        assert binding == pytest.approx(half, rel=1e-9)
        assert (answer.table["error at budget"] <= half * (1 + 1e-9)).all()
    short = shortfall(model, AccuracyTarget(0.35, level=0.9), PureDP(epsilons[1] / 10))
    assert short.short  # less budget than the answer misses


def test_the_error_read_off_the_grid_falls_with_the_budget_and_is_bounded():
    model = SYNTH.error_model(prepared(), SETTINGS)
    target = AccuracyTarget(0.5)
    scales = np.geomspace(model.grid[0], model.grid[-1] * 10, 40)
    errors = np.array([model.half_widths_at(s, target) for s in scales])
    assert np.all(np.diff(errors, axis=0) <= 1e-12)  # never more error for more budget
    at_grid = model.half_widths_at(float(model.grid[4]), target)
    _, envelope = model._raw_and_envelope(target.level)
    np.testing.assert_allclose(at_grid, envelope[4])
    below = model.half_widths_at(model.grid[0] / 2, target)
    assert np.all(below == MAX_WORKLOAD_ERROR)  # unknown below the grid: the largest possible


def test_mwem_is_planned_with_a_progress_that_counts_every_model_fitted():
    settings = dataclasses.replace(SETTINGS, method="mwem", rounds=2)
    size = SimulationSize(log_grid(0.1, 10, 1), 3, 4)
    calls = []
    model = synth_error_model(
        prepared(settings), "stratified", size=size, progress=lambda d, t: calls.append((d, t))
    )
    fits = size.syntheses * 2  # two groups, one model each
    assert calls[-1] == (fits, fits)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert model.errors.shape == (3, 3, 3)
    answer = smallest_budget(model, AccuracyTarget(1.0))
    assert answer.budget is not None and answer.binding in model.labels


def test_the_cost_of_every_synthesizer_is_said_before_it_runs():
    cost = SYNTH.planner_cost(prepared(), SETTINGS, 1000)
    size = SIMULATION_SIZES["independent"]
    assert cost.check_releases == CHECK_REPLICATES
    per_synthesis = cost.model_seconds / size.syntheses
    assert 0 < per_synthesis < 1  # a few milliseconds on 400 rows
    assert cost.check_seconds == pytest.approx(per_synthesis * CHECK_REPLICATES)
    assert f"{size.syntheses} syntheses ({size.replicates} at each of 17 budgets)" in (
        cost.simulation
    )
    mst = dataclasses.replace(SETTINGS, method="mst")
    mst_cost = SYNTH.planner_cost(prepared(mst), mst, 1000, budget_kind="zcdp")
    # OpenDP's fits take minutes: their time model, not a timed fit.
    assert mst_cost.model_seconds == pytest.approx(10 * estimate_seconds("mst", 2, 3))
    assert mst_cost.check_releases == 2 == SYNTH.check_replicates(mst, 1000)
    # At an ε budget MST runs at ρ = ε²/2 (one budget language): planned as in ρ.
    assert SYNTH.planner_cost(prepared(mst), mst, 20, budget_kind="pure") == mst_cost


@pytest.mark.parametrize(
    ("method", "strategy", "seconds", "instead"),
    [("mst", "stratified", 120.0, "Plan with MWEM"), ("aim", "vanilla", 650.0, "Plan with MWEM"),
     ("mwem", "vanilla", 20.0, "Plan with independent marginals")],
)  # fmt: skip
def test_a_simulation_too_long_to_offer_says_its_cost_and_what_to_plan_with(
    method, strategy, seconds, instead
):
    settings = dataclasses.replace(SETTINGS, method=method, strategy=strategy)
    size = SIMULATION_SIZES[method]
    with pytest.raises(PlannerUnavailable) as refused:
        synth_planner_cost(prepared(settings), strategy, 20, seconds)
    message = str(refused.value)
    assert duration_text(seconds * size.syntheses) in message
    assert f"{size.syntheses} syntheses" in message and instead in message
    assert "at that budget on the Compare page" in message
    # Just under the limit it is offered, with its time.
    offered = synth_planner_cost(prepared(settings), strategy, 20, 599.0 / size.syntheses)
    assert offered.model_seconds == pytest.approx(599.0)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.2, "about 1 s"), (4.4, "about 4 s"), (43, "about 45 s"), (1200, "about 20 min"),
     (4520 * 10, "about 13 h")],
)  # fmt: skip
def test_durations_read_as_rounded_guides(seconds, text):
    assert duration_text(seconds) == text


def test_mst_is_checked_at_the_models_epsilon():
    mst = dataclasses.replace(SETTINGS, method="mst")
    assert SYNTH.check_replicates(mst, 20) == 2
    # The model's ε maps to ρ = ε²/2 for MST; a ρ budget is run at ε = √(2ρ).
    assert SYNTH.run_epsilon(mst, ZCDP(0.5)) == pytest.approx(1.0, rel=1e-6)


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
