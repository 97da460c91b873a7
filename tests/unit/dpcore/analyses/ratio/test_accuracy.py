"""The ratio's error model for the planner: the delta method against simulated releases, the
budget kinds and mechanisms it covers, and the inputs it refuses."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcore.analyses import RATIO, PlannerUnavailable
from dpcore.analyses.ratio import ALL_GROUPS, RatioSettings, ratio_error_model
from dpcore.analyses.ratio.noise import release_ratio_sums
from dpcore.analyses.ratio.preview import recombine
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.planner import (
    AccuracyTarget,
    ErrorModel,
    LaplacePairError,
    LaplaceSumError,
    smallest_budget,
)

SETTINGS = RatioSettings(s_column="s", y_column="y")
GROUP_ROWS = {"a": 300, "b": 900, "c": 2500}


def paper_frame(seed: int = 0) -> pd.DataFrame:
    """The paper's simulation (§3): s ~ Beta(2, 2), y ~ Bernoulli(s/1.1), a true ratio of 1.1."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(list(GROUP_ROWS), list(GROUP_ROWS.values()))
    s = rng.beta(2, 2, size=len(groups))
    return pd.DataFrame({"g": groups, "s": s, "y": (rng.random(len(s)) < s / 1.1).astype(int)})


@pytest.fixture(scope="module")
def sums():
    frame = paper_frame()
    return RATIO.statistics(frame, GroupingSpec(by=("g",)).build(frame), SETTINGS)


def simulated_errors(sums, settings: RatioSettings, budget, replicates: int) -> np.ndarray:
    """|published ratio − exact ratio| of simulated releases, one column per estimate."""
    arguments = RATIO.arguments(settings, budget)
    release = release_ratio_sums(
        sums.sums, **arguments, bounds=sums.bounds, replicates=replicates,
        noise=SimulationNoise(rng=11),
    )  # fmt: skip
    ratios = [part.sums.ws / part.sums.wy for part in (release, recombine(release))]
    truth = np.append(sums.truth, sums.global_truth)
    return np.abs(np.column_stack(ratios) - truth)


PLANNED = [
    pytest.param(dataclasses.replace(SETTINGS, mechanism="laplace"), "pure", id="laplace"),
    pytest.param(SETTINGS, "pure", id="classic-gaussian"),
    pytest.param(SETTINGS, "zcdp", id="gaussian-zcdp"),
]


@pytest.mark.parametrize(("settings", "kind"), PLANNED)
def test_at_the_answer_releases_meet_the_target_as_often_as_promised(sums, settings, kind):
    target = AccuracyTarget(0.2, level=0.9)
    answer = smallest_budget(RATIO.error_model(sums, settings, budget_kind=kind), target)
    assert answer.binding == "a"  # the fewest positive labels: the largest error
    check = RATIO.check_accuracy(
        sums, settings, answer.budget, target, replicates=4000, rng=3
    ).set_index("estimate")
    binding = check.loc["a"]
    assert binding.band_low <= binding.met <= binding.band_high  # the smallest budget, not more
    assert (check["met"] >= check["band_low"]).all()


@pytest.mark.parametrize(("settings", "kind"), PLANNED)
def test_every_estimate_s_modelled_error_is_its_simulated_error(sums, settings, kind):
    """At one budget, each estimate's model quantile (the all-groups ratio's included) is the
    quantile of simulated errors, to within their sampling error."""
    model = RATIO.error_model(sums, settings, budget_kind=kind)
    scale = 2.0
    modelled = model.half_widths_at(scale, AccuracyTarget(1.0, level=0.9))
    simulated = np.quantile(simulated_errors(sums, settings, model.budget_at(scale), 8000), 0.9,
                            axis=0)  # fmt: skip
    np.testing.assert_allclose(modelled, simulated, rtol=0.06)


def test_units_follow_the_mechanism_and_the_budget_kind(sums):
    laplace = dataclasses.replace(SETTINGS, mechanism="laplace")
    assert RATIO.error_model(sums, laplace, budget_kind="zcdp").unit == "epsilon"
    assert RATIO.error_model(sums, SETTINGS).unit == "epsilon"  # classic: (ε, δ)
    assert RATIO.error_model(sums, SETTINGS, budget_kind="zcdp").unit == "rho"
    zcdp = dataclasses.replace(SETTINGS, composition="zcdp")
    assert RATIO.error_model(sums, zcdp).unit == "rho"


@pytest.mark.parametrize(("settings", "kind"), PLANNED)
def test_the_noise_falls_as_the_budget_scale_rises(sums, settings, kind):
    """Half the target needs about twice the ε (or four times the ρ): exactly so to first order;
    the exact law asks a little more of the looser target, where the noise on the label sum
    matters more."""
    model = RATIO.error_model(sums, settings, budget_kind=kind)
    loose = smallest_budget(model, AccuracyTarget(0.4)).budget.components()[model.unit]
    tight = smallest_budget(model, AccuracyTarget(0.2)).budget.components()[model.unit]
    factor = 4 if model.unit == "rho" else 2
    assert tight == pytest.approx(factor * loose, rel=0.1)
    assert tight <= factor * loose


@pytest.mark.parametrize(("settings", "kind"), PLANNED)
def test_a_loose_target_needs_more_than_the_first_order_and_simulations_meet_it(
    sums, settings, kind
):
    """At a loose target the first order (delta method) promises too much; the exact law's
    answer is met by simulated releases about as often as the level says."""
    model = RATIO.error_model(sums, settings, budget_kind=kind)
    target = AccuracyTarget(0.4)
    exact = model.needed_scales(target)
    first_order = ErrorModel.needed_scales(model, target)
    assert np.all(exact[: model.groups] >= first_order[: model.groups])
    assert exact.max() > 1.02 * first_order.max()
    answer = smallest_budget(model, target)
    binding = model.labels.index(answer.binding)
    scale = model.scale_within(answer.budget)
    probability = model.group_probability_within(
        np.full(model.groups, scale), np.full(model.groups, 0.4)
    )
    assert probability[binding] == pytest.approx(0.95, abs=1e-6)
    check = RATIO.check_accuracy(sums, settings, answer.budget, target, replicates=4000, rng=5)
    met = check.set_index("estimate").loc[answer.binding, "met"]
    assert stats.binomtest(round(met * 4000), 4000, 0.95).pvalue > 0.001


def test_the_classic_gaussian_says_when_a_target_needs_more_than_it_can_run_at(sums):
    model = RATIO.error_model(sums, SETTINGS)
    answer = smallest_budget(model, AccuracyTarget(0.01))
    assert answer.budget is None
    [reason] = answer.unreachable
    assert "runs only below ε = 5" in reason and "ρ-zCDP" in reason
    assert np.isnan(answer.table["error at budget"]).all()
    assert smallest_budget(model, AccuracyTarget(0.3)).budget.epsilon < 5


def test_relative_targets_scale_with_each_exact_ratio(sums):
    model = RATIO.error_model(sums, SETTINGS, budget_kind="zcdp")
    answer = smallest_budget(model, AccuracyTarget(0.05, relative=True))
    expected = 0.05 * np.append(sums.truth, sums.global_truth)
    np.testing.assert_allclose(answer.table["target"], expected)


def test_the_model_reads_confidential_sums_and_says_so(sums):
    model = RATIO.error_model(sums, SETTINGS)
    assert model.curator_preview
    assert model.labels[-1] == ALL_GROUPS
    assert any("curator preview" in line for line in model.assumptions)
    with pytest.raises(ValueError, match="no clipping bias"):
        RATIO.check_accuracy(
            sums, SETTINGS, PureDP(1.0), AccuracyTarget(0.5, include_bias=True), replicates=10
        )


def test_the_analytic_calibration_is_not_planned_and_says_what_is(sums):
    analytic = dataclasses.replace(SETTINGS, mechanism="gaussian_analytic")
    with pytest.raises(PlannerUnavailable, match="Laplace noise or the classic Gaussian"):
        RATIO.error_model(sums, analytic)


def test_a_group_without_positive_labels_cannot_be_planned_and_says_how_to_plan():
    frame = paper_frame()
    frame.loc[frame["g"] == "a", "y"] = 0
    stats_ = RATIO.statistics(frame, GroupingSpec(by=("g",)).build(frame), SETTINGS)
    with pytest.raises(ValueError, match="“a” has a label sum of 0: .* merge or drop"):
        ratio_error_model(stats_, mechanism="laplace")


@pytest.mark.parametrize(
    ("first", "second"), [(1.0, 0.3), (0.3, 1.0), (2.0, 2.0), (1.0, 0.9995), (1.0, 0.0)]
)
def test_the_sum_of_two_laplace_noises_has_the_convolved_law(first, second):
    rng = np.random.default_rng(5)
    draws = rng.laplace(scale=first, size=200_000) + rng.laplace(scale=second, size=200_000)
    law = LaplaceSumError(np.array([first]), np.array([second]))
    result = stats.kstest(draws, lambda x: law.cdf(np.atleast_1d(x).reshape(-1)))
    assert result.pvalue > 0.001
    q = law.abs_quantile(0.9)
    assert 2 * law.cdf(q) - 1 == pytest.approx(0.9, abs=1e-9)
    if first == second:
        assert q == pytest.approx(LaplacePairError(np.array([first])).abs_quantile(0.9))


def test_a_rho_answer_runs_with_zcdp_accounting_in_the_check(sums):
    """The check of a ρ answer draws the noise a ρ release would: zCDP accounting."""
    model = RATIO.error_model(sums, SETTINGS, budget_kind="zcdp")
    answer = smallest_budget(model, AccuracyTarget(0.2, level=0.9))
    assert isinstance(answer.budget, ZCDP)
    assert RATIO.arguments(SETTINGS, answer.budget)["composition"] == "zcdp"
