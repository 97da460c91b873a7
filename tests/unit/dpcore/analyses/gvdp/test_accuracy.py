"""GVDP's error model for the planner: its fast interval variances against the release's own
private stage, the planned budget met by independent simulated releases about as often as the
level says, withheld groups named, sampling error no budget removes, and the analysis' hooks."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcore.analyses import GVDP
from dpcore.analyses.gvdp import GvdpSettings
from dpcore.analyses.gvdp.accuracy import (
    GvdpRunSettings,
    RunInputs,
    _bags,
    _seeded_check_bags,
    check_gvdp_accuracy,
    gvdp_error_model,
)
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.planner import AccuracyTarget, smallest_budget

KEY = ("mean", "v", "v")


def frame_of(sizes: dict[str, int], spread: float = 10.0, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    groups = np.repeat(list(sizes), list(sizes.values()))
    values = np.clip(40 + spread * rng.standard_normal(len(groups)), 0, 100)
    return pd.DataFrame({"g": groups, "v": values})


def settings_of(k: int = 100, spread: float = 50.0, **changes) -> GvdpSettings:
    return GvdpSettings(
        outcomes=(("mean", "v"),), ks=(("mean", k),), box=((KEY, (0.0, 100.0, spread)),),
        **changes,
    )  # fmt: skip


def data_of(frame: pd.DataFrame, settings: GvdpSettings):
    return GVDP.statistics(frame, GroupingSpec(by=("g",)).build(frame), settings)


@pytest.fixture(scope="module")
def two_groups():
    frame = frame_of({"large": 2000, "small": 300})
    settings = settings_of()
    return data_of(frame, settings), settings


@pytest.fixture(scope="module")
def model(two_groups):
    data, settings = two_groups
    return GVDP.error_model(data, settings)


def test_the_fast_variances_follow_the_release_s_own_private_stage(two_groups):
    data, settings = two_groups
    run_settings = GVDP.planner_settings(settings)
    spec = GVDP.bounds(settings, GVDP.model(settings))
    bags, _ = _bags(data, spec, run_settings, 10, np.random.default_rng(1))
    for rho in (0.05, 1.0, 50.0):
        for bag in bags:
            fast = RunInputs.of(bag).variances(run_settings, rho, 4000, np.random.default_rng(2))
            slow = bag.released_variances(run_settings, rho, 4000, np.random.default_rng(3))
            for level in (0.5, 0.95):
                assert np.quantile(fast, level) == pytest.approx(np.quantile(slow, level), rel=0.03)


def test_at_the_planned_budget_independent_releases_meet_the_target_about_as_often_as_the_level(
    two_groups, model
):
    data, settings = two_groups
    target = AccuracyTarget(4.0, level=0.9)
    answer = smallest_budget(model, target)
    assert answer.binding == "small" and answer.budget is not None
    table = answer.table.set_index("estimate")
    assert table.loc["small", "error at budget"] <= 4.0
    check = GVDP.check_accuracy(data, settings, answer.budget, target, replicates=2000, rng=7)
    met = check.set_index("estimate")["met"]
    # Calibrated: the binding group meets it about 90% of the time (two-sided binomial test) …
    assert stats.binomtest(round(met["small"] * 2000), 2000, 0.9).pvalue > 0.001
    # … and at a fifth less budget it misses more often than the level allows.
    less = GVDP.check_accuracy(
        data, settings, ZCDP(answer.budget.rho * 0.8**2), target, replicates=2000, rng=8
    ).set_index("estimate")["met"]
    assert less["small"] < check["band_low"].iloc[0]
    assert met["large"] >= check["band_low"].iloc[0] and met["Whole population"] == 1.0


def test_the_error_falls_with_the_budget_and_every_estimate_is_labelled(model):
    target = AccuracyTarget(5.0)
    small, large = (model.half_widths_at(s, target) for s in (0.3, 3.0))
    assert np.all(large < small)
    assert model.labels == ("large", "small", "Whole population")
    assert model.curator_preview and model.unit == "rho"
    assert model.typical_half_width == 5.0  # 5% of the public range [0, 100]
    assert pickle.loads(pickle.dumps(model)).labels == model.labels


def test_sampling_error_no_budget_removes_is_named_with_what_to_do(model):
    # The small group's sampling error alone (sd 10 over 300 rows: ±1.1 at 95%) exceeds ±1.
    answer = smallest_budget(model, AccuracyTarget(1.0))
    assert answer.budget is None
    [reason] = answer.unreachable
    assert reason.startswith("small: even at ρ = 1e+06") and "sampling error" in reason


def test_a_group_with_too_few_subsets_is_withheld_and_named_where_that_sets_its_budget():
    frame = frame_of({"large": 3000, "tiny": 40}, spread=2.0)
    # b = 10 rows per subset: the tiny group gets 4 subsets; a public per-row spread of 5 keeps
    # its interval narrow once it is published.
    settings = settings_of(k=300, spread=5.0)
    data = data_of(frame, settings)
    model = GVDP.error_model(data, settings)
    target = AccuracyTarget(45.0)  # below half the public range: an interval that meets it is
    # narrower than the range, which a release would withhold otherwise
    withheld_at_small = model.quantiles_at(0.1, (0.95,))[0]
    assert np.isinf(withheld_at_small[1]) and np.isfinite(withheld_at_small[0])
    answer = smallest_budget(model, target)
    assert answer.binding == "tiny"
    assert any("tiny: withheld at smaller budgets" in note for note in answer.notes)
    needed = GvdpRunSettings(k=300).needed(answer.budget.rho, 1)
    assert needed <= 4  # published at the answer


def test_a_relative_target_and_a_regression_label_each_coefficient():
    rng = np.random.default_rng(3)
    frame = frame_of({"a": 1500, "b": 1500})
    frame["x"] = rng.standard_normal(len(frame))
    frame["v"] = 40 + 3 * frame["x"] + rng.standard_normal(len(frame))
    settings = GvdpSettings(
        model="ols", outcomes=(("ols", "v"),), covariates=(("ols", ("x",)),), ks=(("ols", 100),),
        box=((("ols", "v", "intercept"), (-100.0, 200.0, 50.0)), (("ols", "v", "x"),
             (-10.0, 10.0, 10.0))),
    )  # fmt: skip
    data = data_of(frame, settings)
    model = GVDP.error_model(data, settings)
    assert model.labels[:2] == ("a · intercept", "a · x")
    assert model.labels[-2:] == ("Whole population · intercept", "Whole population · x")
    answer = smallest_budget(model, AccuracyTarget(0.1, relative=True))
    assert answer.budget is not None
    assert np.all(answer.table["target"].to_numpy() == pytest.approx(0.1 * np.abs(model.truth)))


def test_an_epsilon_budget_is_checked_at_its_rho_and_global_only_publishes_the_population(
    two_groups,
):
    data, settings = two_groups
    one = settings_of(strategy="global_only")
    model = GVDP.error_model(data, one)
    assert model.labels == ("Whole population",) and model.groups == 0
    target = AccuracyTarget(1.0)
    answer = smallest_budget(model, target)
    epsilon = PureDP((2 * answer.budget.rho) ** 0.5)
    by_epsilon = GVDP.check_accuracy(data, one, epsilon, target, replicates=500, rng=1)
    by_rho = GVDP.check_accuracy(data, one, answer.budget, target, replicates=500, rng=1)
    assert by_epsilon["met"].tolist() == pytest.approx(by_rho["met"].tolist())


def test_a_group_too_small_for_its_subsets_is_refused_before_any_model(two_groups):
    frame = frame_of({"large": 2000, "lone": 3})
    settings = settings_of()
    data = data_of(frame, settings)
    with pytest.raises(ValueError, match="lone"):
        GVDP.error_model(data, settings)


def test_the_check_needs_a_positive_number_of_releases(two_groups):
    data, settings = two_groups
    with pytest.raises(ValueError, match="replicates"):
        check_gvdp_accuracy(
            data, GVDP.bounds(settings, GVDP.model(settings)), GVDP.planner_settings(settings),
            ZCDP(1.0), AccuracyTarget(5.0), replicates=0,
        )  # fmt: skip


def test_the_model_takes_its_bootstrap_from_a_fixed_seed(two_groups):
    data, settings = two_groups
    spec = GVDP.bounds(settings, GVDP.model(settings))
    again = gvdp_error_model(data, spec, GVDP.planner_settings(settings), replicates=200)
    first = gvdp_error_model(data, spec, GVDP.planner_settings(settings), replicates=200)
    target = AccuracyTarget(5.0)
    assert np.array_equal(again.half_widths_at(1.0, target), first.half_widths_at(1.0, target))


def test_checks_at_one_seed_draw_their_bags_once_whatever_the_budget(two_groups):
    """The Plan page checks answer after answer at the session's seed: the bags of little
    bootstraps (the data's part of a check) are drawn once, the releases' noise each time."""
    data, settings = two_groups
    target = AccuracyTarget(4.0, level=0.9)
    _seeded_check_bags.cache_clear()
    first = GVDP.check_accuracy(data, settings, ZCDP(0.5), target, replicates=300, rng=11)
    again = GVDP.check_accuracy(data, settings, ZCDP(0.5), target, replicates=300, rng=11)
    more = GVDP.check_accuracy(data, settings, ZCDP(2.0), target, replicates=300, rng=11)
    info = _seeded_check_bags.cache_info()
    assert (info.misses, info.hits) == (1, 2)
    pd.testing.assert_frame_equal(first, again)  # a seed gives one check
    assert (more["met"] >= first["met"]).all() and (more["met"] > first["met"]).any()
    GVDP.check_accuracy(data, settings, ZCDP(0.5), target, replicates=300, rng=12)
    assert _seeded_check_bags.cache_info().misses == 2  # another seed, other bags
