"""A plan of several releases: the split of what is left (the common factor, locks, units),
rebalancing after a commit, the shortfall, bad input, and the expected accuracy of a planned
release checked by seeded simulated releases."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from functools import partial

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses import MEAN, RATIO
from dpcore.analyses.mean import GaussianMean, GroupValues, LaplaceMean, MeanSettings
from dpcore.analyses.mean.accuracy import mean_error_model
from dpcore.analyses.ratio import RatioSettings
from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP, exact_components
from dpcore.foundations.grouping import GroupingSpec
from dpcore.planner import AccuracyTarget, PlannedRelease, smallest_budget, split_budget

BOUNDS = (0.0, 100.0)
SIZES = {"a": 2000, "b": 400, "c": 60}


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    groups = np.repeat(list(SIZES), list(SIZES.values()))
    return pd.DataFrame(
        {
            "g": groups,
            "v": np.clip(rng.normal(40, 10, len(groups)), 1, 99),
            "s": rng.beta(2, 2, len(groups)),
        }
    ).assign(y=lambda f: (rng.random(len(f)) < f["s"] / 1.1).astype(int))


@pytest.fixture(scope="module")
def values(frame) -> GroupValues:
    return GroupValues.from_grouping(GroupingSpec(by=("g",)).build(frame), frame, "v")


@pytest.fixture(scope="module")
def laplace(values):
    return mean_error_model(values, LaplaceMean(bounds=BOUNDS))


@pytest.fixture(scope="module")
def gaussian(values):
    return mean_error_model(values, GaussianMean(bounds=BOUNDS))


def needed_charge(model, target, unit: str) -> float:
    budget = smallest_budget(model, target).budget
    return float(exact_components(budget, "pure" if unit == "epsilon" else "zcdp")[unit])


def exact_total(split) -> Decimal:
    kind = split.available.kind
    return sum(
        (next(iter(exact_components(s.budget, kind).values())) for s in split.shares), Decimal(0)
    )


@pytest.mark.parametrize("available", [PureDP(3.0), PureDP(0.7), ZCDP(2.0), ZCDP(0.1)])
def test_unlocked_releases_get_their_needs_times_one_factor_using_all_that_is_left(
    laplace, available
):
    targets = (AccuracyTarget(2.0), AccuracyTarget(5.0, level=0.9), AccuracyTarget(1.0))
    releases = [PlannedRelease(f"r{i}", laplace, t) for i, t in enumerate(targets)]
    split = split_budget(releases, available)
    unit = split.unit
    needs = [needed_charge(laplace, t, unit) for t in targets]
    assert split.factor == pytest.approx(next(iter(available.components().values())) / sum(needs))
    for share, need in zip(split.shares, needs, strict=True):
        assert share.needed == pytest.approx(need)
        assert share.charge == pytest.approx(split.factor * need, rel=1e-12)
        assert share.meets is (split.factor >= 1)
    # Exactly what is left, never more, in the ledger's exact arithmetic.
    remaining = exact_components(available, available.kind)[unit]
    assert exact_total(split) <= remaining
    assert float(remaining - exact_total(split)) < 1e-12 * float(remaining)
    assert split.left == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(("available", "power"), [(PureDP(0.5), 1), (ZCDP(0.02), 2)])
def test_a_release_short_of_its_need_misses_by_the_factor_its_noise_scales_with(
    laplace, available, power
):
    """Laplace noise ∝ 1/ε: an ε charge c·n gives the error h/c; a ρ charge c·n gives ε·√c."""
    target = AccuracyTarget(2.0, level=0.9)
    split = split_budget([PlannedRelease("only", laplace, target)], available)
    share = split.shares[0]
    assert split.factor < 1 and split.short == (share,)
    assert share.worst == "c"  # the smallest group
    assert share.error == pytest.approx(2.0 / split.factor ** (1 / power), rel=1e-9)
    assert share.target == 2.0
    assert split.shortfall_lines() == [f"only: ±{share.error:.3g} against a target of ±2 (c)"]


def test_a_locked_release_keeps_its_budget_and_the_others_share_the_rest(laplace):
    target = AccuracyTarget(2.0)
    releases = [
        PlannedRelease("fixed", laplace, target, locked=PureDP(0.5)),
        PlannedRelease("x", laplace, target),
        PlannedRelease("y", laplace, AccuracyTarget(4.0)),
    ]
    split = split_budget(releases, PureDP(2.0))
    fixed, x, y = split.shares
    assert fixed.locked and fixed.budget == PureDP(0.5) and fixed.charge == 0.5
    assert x.charge + y.charge == pytest.approx(1.5)
    assert x.charge / y.charge == pytest.approx(2.0)  # half the width needs twice the ε
    assert fixed.needed == pytest.approx(needed_charge(laplace, target, "epsilon"))


def test_a_lock_in_rho_is_converted_to_the_model_s_epsilon(laplace):
    split = split_budget(
        [PlannedRelease("fixed", laplace, AccuracyTarget(2.0), locked=ZCDP(0.125))], ZCDP(1.0)
    )
    share = split.shares[0]
    assert share.budget == PureDP(0.5)  # ε = √(2ρ)
    assert share.charge == pytest.approx(0.125)
    assert split.factor is None and split.left == pytest.approx(0.875)


def test_committing_at_the_plan_leaves_the_rest_unchanged_and_a_smaller_remainder_rebalances(
    laplace, gaussian
):
    releases = [
        PlannedRelease("one", laplace, AccuracyTarget(2.0)),
        PlannedRelease("two", gaussian, AccuracyTarget(3.0)),
        PlannedRelease("three", laplace, AccuracyTarget(1.5, level=0.9)),
    ]
    before = split_budget(releases, ZCDP(2.0))
    spent = before.shares[0].charge
    after = split_budget(releases[1:], ZCDP(2.0 - spent))
    for old, new in zip(before.shares[1:], after.shares, strict=True):
        assert new.charge == pytest.approx(old.charge, rel=1e-9)
    # Someone spent 0.5 meanwhile: the rest share less, in the same proportion.
    squeezed = split_budget(releases[1:], ZCDP(1.5 - spent))
    ratio = [s.charge / o.charge for s, o in zip(squeezed.shares, after.shares, strict=True)]
    assert ratio[0] == pytest.approx(ratio[1]) and ratio[0] < 1


def test_gaussian_in_rho_and_laplace_in_rho_mix_in_a_zcdp_ledger(laplace, gaussian):
    split = split_budget(
        [
            PlannedRelease("lap", laplace, AccuracyTarget(2.0)),
            PlannedRelease("gauss", gaussian, AccuracyTarget(2.0)),
        ],
        ZCDP(1.0),
    )
    lap, gauss = split.shares
    assert isinstance(lap.budget, PureDP) and lap.charge == pytest.approx(lap.budget.epsilon**2 / 2)
    assert isinstance(gauss.budget, ZCDP) and gauss.charge == pytest.approx(gauss.budget.rho)


def test_the_classic_gaussian_ratio_charges_rho_that_scales_as_epsilon_squared(frame):
    """Its cost is the exact zCDP of eq. 5's σ ∝ 1/ε, so the charges go as the squares of the
    ε each release runs at; the plan still uses exactly what is left."""
    settings = RatioSettings(s_column="s", y_column="y")
    stats = RATIO.statistics(frame, GroupingSpec(by=("g",)).build(frame), settings)
    model = RATIO.error_model(stats, settings, budget_kind="pure")
    releases = [
        PlannedRelease("ratio", model, AccuracyTarget(2.0), cost=partial(RATIO.cost, settings)),
        PlannedRelease("looser", model, AccuracyTarget(4.0), cost=partial(RATIO.cost, settings)),
    ]
    split = split_budget(releases, ZCDP(0.05))
    assert all(isinstance(s.budget, PureDP) for s in split.shares)  # run as the model planned
    assert split.total == pytest.approx(0.05, rel=1e-9) and split.total <= 0.05
    first, second = split.shares
    epsilons = first.budget.epsilon / second.budget.epsilon
    assert epsilons > 1.2  # the tighter target runs at the larger ε …
    assert first.charge / second.charge == pytest.approx(epsilons**2, rel=1e-6)  # … charged ε²
    with pytest.raises(ValueError, match="Gaussian noise never meets pure ε-DP"):
        split_budget(releases, PureDP(1.0))
    with pytest.raises(ValueError, match=r"classic Gaussian calibration.*Lock it at a smaller"):
        split_budget(releases, ZCDP(1.0))


@pytest.mark.parametrize(
    ("releases", "available", "message"),
    [
        ([], PureDP(1.0), "no releases yet"),
        (
            [("a", PureDP(0.7)), ("b", PureDP(0.6))],
            PureDP(1.0),
            r"locked releases take ε = 1.3, more than the ε = 1 available. Unlock",
        ),
        (
            [("a", PureDP(1.0)), ("b", None)],
            PureDP(1.0),
            r"use all the budget available, and 1 other release would get nothing",
        ),
        ([("a", None), ("a", None)], PureDP(1.0), "share the name a: rename one"),
    ],
)
def test_bad_plans_say_what_to_change(laplace, releases, available, message):
    plan = [
        PlannedRelease(label, laplace, AccuracyTarget(2.0), locked) for label, locked in releases
    ]
    with pytest.raises(ValueError, match=message):
        split_budget(plan, available)


def test_a_target_no_budget_meets_names_the_release_and_the_way_out(values):
    model = mean_error_model(values, LaplaceMean(bounds=(0.0, 30.0)))  # clips most values
    target = AccuracyTarget(0.5, include_bias=True)
    with pytest.raises(
        ValueError, match=r"No budget meets the target of “biased”: .*clipping bias"
    ):
        split_budget([PlannedRelease("biased", model, target)], PureDP(1.0))
    # Locked, it has a budget anyway: the plan reports it as short.
    split = split_budget([PlannedRelease("biased", model, target, PureDP(1.0))], PureDP(1.0))
    assert split.shares[0].needed is None and not split.shares[0].meets


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"label": " "}, ValueError, "`label` must name the release"),
        ({"target": 2.0}, TypeError, "target"),
        ({"locked": 0.5}, TypeError, "`locked` must be a PureDP or ZCDP budget"),
        ({"locked": ApproxDP(1.0, 1e-6)}, TypeError, "`locked` must be a PureDP or ZCDP"),
    ],
)
def test_a_planned_release_refuses_wrong_fields(laplace, change, error, message):
    fields = {"label": "r", "model": laplace, "target": AccuracyTarget(2.0), **change}
    with pytest.raises(error, match=message):
        PlannedRelease(**fields)


def test_the_available_budget_must_be_epsilon_or_rho(laplace):
    with pytest.raises(TypeError, match="`available` must be a PureDP or ZCDP budget"):
        split_budget([PlannedRelease("r", laplace, AccuracyTarget(2.0))], ApproxDP(1.0, 1e-6))


@pytest.mark.parametrize("available", [ZCDP(1.0), ZCDP(3.0)], ids=["short", "enough"])
def test_simulated_releases_at_the_planned_budget_meet_the_expected_error_as_often_as_stated(
    values, available
):
    """Seeded releases of the real estimator at each planned budget: the worst estimate falls
    within the plan's expected error with the target's frequency, and every estimate meets the
    target at least as often as promised when the plan says it does."""
    # Public sizes: the model is exact there (private sizes take the worst case, conservative).
    laplace = MeanSettings(value="v", clip_low=0.0, clip_high=100.0, n_public=True)
    gaussian = dataclasses.replace(laplace, estimator="gaussian")
    targets = (AccuracyTarget(2.0, level=0.9), AccuracyTarget(3.0, level=0.95))
    plan = [
        PlannedRelease(name, MEAN.error_model(values, settings), target)
        for name, settings, target in zip(
            ("lap", "gauss"), (laplace, gaussian), targets, strict=True
        )
    ]
    split = split_budget(plan, available)
    for share, settings, target in zip(split.shares, (laplace, gaussian), targets, strict=True):
        expected = dataclasses.replace(target, amount=share.error)
        check = MEAN.check_accuracy(
            values, settings, share.budget, expected, replicates=4000, rng=5
        ).set_index("estimate")
        worst = check.loc[share.worst]
        assert worst.band_low <= worst.met <= worst.band_high
        if share.meets:
            met = MEAN.check_accuracy(
                values, settings, share.budget, target, replicates=4000, rng=6
            )
            assert (met["met"] >= met["band_low"]).all()
    assert [s.meets for s in split.shares] == [available.rho == 3.0] * 2
