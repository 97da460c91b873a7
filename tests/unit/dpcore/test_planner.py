"""The planner's accuracy → budget answers: closed forms, the bias bisection, the shortfall, and
each answer checked by seeded simulated releases of the real estimators."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcore.analyses import ANALYSES, PlannerUnavailable, get
from dpcore.analyses.mean import GaussianMean, GroupValues, LaplaceMean
from dpcore.analyses.mean.accuracy import POPULATION_LABEL, check_by_simulation, mean_error_model
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.planner import (
    AccuracyTarget,
    LaplaceError,
    LaplacePairError,
    LaplaceSumError,
    WeightedLaplaceSumError,
    round_to_one_two_five,
    shortfall,
    smallest_budget,
)

BOUNDS = (0.0, 100.0)
SIZES = {"a": 2000, "b": 400, "c": 60}


def frame_with(sizes: dict[str, int], seed: int = 0, spread: float = 10.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    groups = np.repeat(list(sizes), list(sizes.values()))
    centre = {"a": 40.0, "b": 50.0, "c": 30.0, "d": 45.0}
    values = np.array([centre[g] for g in groups]) + rng.normal(0, spread, len(groups))
    return pd.DataFrame({"g": groups, "v": np.clip(values, 1, 99)})


def values_of(frame: pd.DataFrame) -> GroupValues:
    return GroupValues.from_grouping(GroupingSpec(by=("g",)).build(frame), frame, "v")


@pytest.fixture(scope="module")
def values() -> GroupValues:
    return values_of(frame_with(SIZES))


def test_laplace_answer_is_the_closed_form_of_the_smallest_group(values):
    target = AccuracyTarget(2.0, level=0.9)
    answer = smallest_budget(mean_error_model(values, LaplaceMean(bounds=BOUNDS)), target)
    # Lap(b) with b = (U − L)/(n ε): P(|X| ≤ h) = 1 − exp(−h/b) = level.
    expected = 100.0 * math.log(1 / 0.1) / (60 * 2.0)
    assert isinstance(answer.budget, PureDP)
    assert answer.budget.epsilon == pytest.approx(expected, rel=1e-12)
    assert answer.binding == "c"
    assert answer.table.set_index("estimate").loc["c", "error at budget"] == pytest.approx(2.0)


def test_gaussian_answer_is_the_closed_form_in_rho(values):
    target = AccuracyTarget(2.0, level=0.95)
    answer = smallest_budget(mean_error_model(values, GaussianMean(bounds=BOUNDS)), target)
    sigma_times_sqrt_rho = 100.0 / (60 * math.sqrt(2))
    expected = (sigma_times_sqrt_rho * stats.norm.ppf(0.975) / 2.0) ** 2
    assert isinstance(answer.budget, ZCDP)
    assert answer.budget.rho == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("estimator", [LaplaceMean(bounds=BOUNDS), GaussianMean(bounds=BOUNDS)])
def test_splitting_the_budget_in_half_doubles_what_the_groups_need(values, estimator):
    target = AccuracyTarget(1.0)
    alone = smallest_budget(mean_error_model(values, estimator, "stratified"), target).budget
    split = smallest_budget(mean_error_model(values, estimator, "global_and_groups", 0.5), target)
    assert split.budget.components() == pytest.approx(
        {k: 2 * v for k, v in alone.components().items()}, rel=1e-12
    )


def test_one_estimate_for_everyone_plans_only_the_population(values):
    model = mean_error_model(values, LaplaceMean(bounds=BOUNDS), "global_only")
    answer = smallest_budget(model, AccuracyTarget(1.0, level=0.9))
    assert model.labels == (POPULATION_LABEL,)
    assert answer.budget.epsilon == pytest.approx(100 * math.log(10) / (values.n * 1.0))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("estimator", "strategy"),
    [
        (LaplaceMean(bounds=BOUNDS), "stratified"),
        (GaussianMean(bounds=BOUNDS), "stratified"),
        (LaplaceMean(bounds=BOUNDS), "global_and_groups"),
        (GaussianMean(bounds=BOUNDS), "global_only"),
    ],
)
def test_simulated_releases_at_the_answer_meet_the_target_as_often_as_promised(
    values, estimator, strategy
):
    target = AccuracyTarget(1.5, level=0.9)
    answer = smallest_budget(mean_error_model(values, estimator, strategy), target)
    check = check_by_simulation(
        values, estimator, answer.budget, target, strategy=strategy, replicates=4000, rng=7
    ).set_index("estimate")
    binding = check.loc[answer.binding]
    assert binding.band_low <= binding.met <= binding.band_high
    assert (check["met"] >= check["band_low"]).all()


@pytest.mark.slow
def test_private_sizes_plan_conservatively(values):
    """The worst case |mean| = max(|L|, |U|) makes the answer safe: more than the level."""
    estimator = LaplaceMean(bounds=BOUNDS, n_public=False)
    target = AccuracyTarget(3.0, level=0.9)
    answer = smallest_budget(mean_error_model(values, estimator), target)
    check = check_by_simulation(values, estimator, answer.budget, target, replicates=4000, rng=3)
    assert (check["met"] >= check["band_low"]).all()
    assert check.set_index("estimate").loc[answer.binding, "met"] > 0.9


@pytest.mark.slow
def test_private_sizes_near_a_bound_meet_the_target_as_released():
    """Near U the delta method's worst case is first-order only; clipped into [L, U] as a
    release is, the estimates meet the target at least as often as promised."""
    frame = pd.DataFrame({"g": ["a"] * 5 + ["b"] * 8, "v": [99.5] * 13})
    values = values_of(frame)
    estimator = LaplaceMean(bounds=BOUNDS, n_public=False)
    target = AccuracyTarget(40.0, level=0.95)
    answer = smallest_budget(mean_error_model(values, estimator), target)
    check = check_by_simulation(values, estimator, answer.budget, target, replicates=4000, rng=9)
    assert (check["met"] >= check["band_low"]).all()


def test_a_clipping_bias_raises_the_budget_and_can_make_a_target_unreachable():
    frame = frame_with({"a": 2000, "b": 300})
    frame.loc[frame["g"] == "b", "v"] += 45  # about a third of b's values now exceed U = 100
    values = values_of(frame)
    bias = values.clipped_sums(np.zeros(2), np.full(2, 100.0)) / values.sizes - values.means
    assert bias[1] < -1.0
    model = mean_error_model(values, LaplaceMean(bounds=BOUNDS))
    noise_only = smallest_budget(model, AccuracyTarget(abs(bias[1]) + 1.0, level=0.9))
    with_bias = smallest_budget(
        model, AccuracyTarget(abs(bias[1]) + 1.0, level=0.9, include_bias=True)
    )
    assert with_bias.budget.epsilon > noise_only.budget.epsilon
    assert with_bias.binding == "b"
    row = with_bias.table.set_index("estimate").loc["b"]
    assert row["error at budget"] == pytest.approx(abs(bias[1]) + 1.0, rel=1e-6)

    unreachable = smallest_budget(model, AccuracyTarget(abs(bias[1]) / 2, include_bias=True))
    assert unreachable.budget is None
    assert unreachable.unreachable[0].startswith("b: its clipping bias alone is")


@pytest.mark.slow
def test_the_bias_answer_is_met_as_often_as_promised_against_the_true_means():
    frame = frame_with({"a": 2000, "b": 300})
    frame.loc[frame["g"] == "b", "v"] += 45
    values = values_of(frame)
    estimator = LaplaceMean(bounds=BOUNDS)
    target = AccuracyTarget(3.0, level=0.9, include_bias=True)
    answer = smallest_budget(mean_error_model(values, estimator), target)
    check = check_by_simulation(values, estimator, answer.budget, target, replicates=4000, rng=11)
    binding = check.set_index("estimate").loc[answer.binding]
    assert binding.band_low <= binding.met <= binding.band_high


def test_noise_only_answers_use_public_information_only():
    """Change every value but keep the group sizes: the answer is the same to the last bit."""
    one = values_of(frame_with(SIZES, seed=1))
    other = values_of(frame_with(SIZES, seed=2, spread=25.0))
    target = AccuracyTarget(2.0)
    for estimator in (LaplaceMean(bounds=BOUNDS), GaussianMean(bounds=BOUNDS)):
        answers = [smallest_budget(mean_error_model(v, estimator), target) for v in (one, other)]
        assert answers[0].budget == answers[1].budget
        pd.testing.assert_frame_equal(answers[0].table, answers[1].table)


def test_relative_targets_scale_with_each_true_mean(values):
    model = mean_error_model(values, LaplaceMean(bounds=BOUNDS))
    answer = smallest_budget(model, AccuracyTarget(0.05, relative=True))
    table = answer.table.set_index("estimate")
    assert table.loc["c", "target"] == pytest.approx(0.05 * values.means[2])


def test_the_shortfall_names_the_groups_that_miss_and_the_rows_they_need(values):
    model = mean_error_model(values, LaplaceMean(bounds=BOUNDS))
    target = AccuracyTarget(2.0, level=0.9)
    needed = smallest_budget(model, target).budget.epsilon
    short = shortfall(model, target, PureDP(needed / 2))
    assert short.short == ("c",)
    row = short.table.set_index("estimate").loc["c"]
    assert row["error at available budget"] == pytest.approx(4.0)
    assert row["rows needed"] == 120  # noise halves when the group doubles
    # Groups that meet the target at what is available need no rows, not a smaller size.
    met = short.table.set_index("estimate").loc[["a", "b"]]
    assert (met["error at available budget"] <= met["target"]).all()
    assert met["rows needed"].isna().all()
    # A ρ budget is converted at ε = √(2ρ) for the Laplace mean.
    as_rho = shortfall(model, target, ZCDP((needed / 2) ** 2 / 2))
    pd.testing.assert_frame_equal(as_rho.table, short.table)


def test_with_a_clipping_bias_the_rows_needed_do_meet_the_target():
    frame = frame_with({"a": 2000, "b": 300})
    frame.loc[frame["g"] == "b", "v"] += 45
    values = values_of(frame)
    model = mean_error_model(values, LaplaceMean(bounds=BOUNDS))
    bias = abs(model.bias[1])
    target = AccuracyTarget(bias + 1.0, level=0.9, include_bias=True)
    available = PureDP(smallest_budget(model, target).budget.epsilon / 2)
    short = shortfall(model, target, available)
    assert "b" in short.short
    rows = int(short.table.set_index("estimate").loc["b", "rows needed"])
    # Half the budget doubles the noise: b needs twice its rows, although the noise alone
    # would be met with fewer (the bias does not shrink as the group grows).
    assert rows == 2 * 300
    noise_only = 300 * model._abs_quantile(0.9)[1] / available.epsilon / target.amount
    assert noise_only < rows - 50
    # b's values twice over: the same bias, half the noise; the target is met exactly.
    twice = pd.concat([frame, frame[frame["g"] == "b"]])
    grown = mean_error_model(values_of(twice), LaplaceMean(bounds=BOUNDS))
    assert grown.half_widths_at(available.epsilon, target)[1] == pytest.approx(target.amount)
    assert np.isnan(short.table.set_index("estimate").loc[POPULATION_LABEL, "rows needed"])
    out_of_reach = shortfall(model, AccuracyTarget(bias / 2, include_bias=True), available)
    assert np.isinf(out_of_reach.table.set_index("estimate").loc["b", "rows needed"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"amount": 0.0}, "must be above 0"),
        ({"amount": -1.0}, "must be above 0"),
        ({"amount": 1.0, "level": 1.0}, "strictly between 0 and 1"),
        ({"amount": 1.0, "level": 0.0}, "strictly between 0 and 1"),
        ({"amount": float("nan")}, "amount"),
    ],
)
def test_impossible_targets_are_refused_with_the_reason(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AccuracyTarget(**kwargs)


def test_a_relative_target_around_a_true_mean_of_zero_is_refused():
    frame = pd.DataFrame({"g": ["a"] * 50 + ["b"] * 50, "v": [0.0] * 50 + [5.0] * 50})
    model = mean_error_model(values_of(frame), LaplaceMean(bounds=(-10, 10)))
    with pytest.raises(ValueError, match="true value is 0"):
        smallest_budget(model, AccuracyTarget(0.1, relative=True))


def test_the_pair_of_laplace_noises_has_the_convolved_law():
    scale = np.array([2.0])
    draws = np.random.default_rng(5).laplace(scale=2.0, size=(2, 200_000)).sum(axis=0)
    law = LaplacePairError(scale)
    result = stats.kstest(draws, lambda x: law.cdf(np.atleast_1d(x).reshape(-1)))
    assert result.pvalue > 0.001
    q = law.abs_quantile(0.9)
    assert 2 * law.cdf(q) - 1 == pytest.approx(0.9, abs=1e-9)


def test_a_weighted_sum_of_laplace_noises_matches_the_closed_forms_and_the_draws():
    """One weight is a Laplace law, two its pair (equal) or sum (unequal) law; many match a
    million seeded draws (Kolmogorov–Smirnov) and their quantile."""
    x = np.array([-7.0, -1.5, 0.0, 0.4, 3.0, 12.0])
    for weights, law in [
        ([2.0], LaplaceError(np.array([2.0]))),
        ([2.0, 2.0], LaplacePairError(np.array([2.0]))),
        ([2.0, 0.7], LaplaceSumError(np.array([2.0]), np.array([0.7]))),
    ]:
        series = WeightedLaplaceSumError(np.array(weights))
        for point in x:
            assert series.cdf(np.array([point]))[0] == pytest.approx(
                law.cdf(np.array([point]))[0], abs=1e-8
            )
        assert series.abs_quantile(0.95)[0] == pytest.approx(law.abs_quantile(0.95)[0], rel=1e-7)
    weights = np.random.default_rng(2).dirichlet(np.ones(30)) * 5
    draws = np.random.default_rng(3).laplace(size=(1_000_000, 30)) @ weights
    series = WeightedLaplaceSumError(weights)
    result = stats.kstest(draws[:20_000], lambda v: series.cdf(np.asarray(v)))
    assert result.pvalue > 0.001
    assert series.abs_quantile(0.95)[0] == pytest.approx(
        np.quantile(np.abs(draws), 0.95), rel=0.005
    )
    # Negative weights weigh as their size (a Laplace noise is symmetric); none is no noise.
    assert WeightedLaplaceSumError(-weights).abs_quantile(0.9) == series.abs_quantile(0.9)
    assert WeightedLaplaceSumError(np.zeros(3)).abs_quantile(0.95)[0] == 0


def test_analyses_without_an_error_model_say_the_planner_does_not_cover_them():
    sample = get("sample")
    with pytest.raises(
        PlannerUnavailable,
        match="covers the mean per group, the ratio of sums, the general estimator and synthetic data",
    ):
        sample.error_model(None, sample.default_settings())


def test_only_analyses_without_an_error_model_are_refused_before_their_statistics():
    refused = []
    for analysis in ANALYSES:
        try:
            analysis.check_planned()
        except PlannerUnavailable as exc:
            refused.append(analysis.name)
            assert "covers the mean per group" in str(exc) and "page" not in str(exc)
    assert refused == ["sample"]


def test_a_kept_group_with_no_rows_cannot_be_planned_and_says_how_to_plan():
    frame = pd.DataFrame({"g": ["a"] * 40 + ["b"] * 60, "v": np.linspace(0, 10, 100)})
    spec = GroupingSpec(by=("g",), small_groups="keep", categories=(("g", ("a", "b", "c")),))
    values = GroupValues.from_grouping(spec.build(frame), frame, "v")
    private = LaplaceMean(bounds=(0, 10), n_public=False)
    with pytest.raises(ValueError, match="“c” has no rows: .* remove the category"):
        mean_error_model(values, private)
    assert mean_error_model(values, private, "global_only").labels == (POPULATION_LABEL,)


@pytest.mark.parametrize(
    ("x", "rounded"),
    [(2.0, 2.0), (2.4, 2.0), (0.04, 0.05), (7.5, 10.0), (6.0, 5.0), (1400.0, 1000.0), (1.5, 2.0)],
)
def test_round_to_one_two_five(x, rounded):
    assert round_to_one_two_five(x) == pytest.approx(rounded)


@pytest.mark.parametrize(("bounds", "typical"), [((0.0, 100.0), 2.0), ((0.0, 250_000.0), 5000.0)])
def test_a_mean_s_first_target_is_a_round_two_percent_of_its_public_range(values, bounds, typical):
    model = mean_error_model(values, LaplaceMean(bounds=bounds))
    assert model.typical_half_width == typical and model.measured_in == ""
