"""Stratified and vanilla strategies for the mean: recombined group estimates, one global estimate,
the budget split between global and groups, dispatch, and argument validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.analyses.mean.array_api import coinpress_mean, gaussian_mean, laplace_mean
from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.analyses.mean.strategies import (
    global_and_group_means,
    global_only_mean,
    run_strategy,
    stratified_mean,
)
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.shares import shares_from_counts
from tests.unit.dpcore.analyses.mean.helpers import R, assert_mean_and_var, clipped_means


def test_stratified_recombines_dp_group_estimates(frame, strata):
    eps = 1.0
    shares = shares_from_counts(strata)
    w = strata.sizes / strata.n
    result = stratified_mean(
        strata, LaplaceMean(bounds=(0.0, 10.0)), PureDP(eps), shares, rng=9, replicates=R
    )
    assert result.group_estimates.shape == (R, strata.k)
    assert result.global_estimate.shape == (R,)
    by_hand = sum(result.group_estimates[:, g] * w[g] for g in range(strata.k))
    np.testing.assert_allclose(result.global_estimate, by_hand, rtol=1e-12, atol=1e-12)
    assert result.cost == PureDP(eps)  # parallel composition over disjoint groups
    # The global noise is Σ w_g Lap(b_g): mean Σ w_g m_g, variance Σ w_g² 2 b_g² (> 0, so the
    # exact group means were not what got recombined).
    m = clipped_means(frame, strata, 0, 10)
    b = 10.0 / (strata.sizes * eps)
    var = float(np.sum(w**2 * 2 * b**2))
    glob = result.global_estimate[:, None]
    assert_mean_and_var(glob, np.array([w @ m]), np.array([var]), kurt=6)


def test_stratified_single_release_shapes_and_plain_array_shares(strata):
    w = np.full(strata.k, 1 / strata.k)
    result = stratified_mean(strata, LaplaceMean(bounds=(0.0, 10.0)), PureDP(1.0), w, rng=0)
    assert result.group_estimates.shape == (strata.k,)
    assert np.ndim(result.global_estimate) == 0
    assert float(result.global_estimate) == pytest.approx(float(result.group_estimates.mean()))


def test_global_only_uses_one_estimate_for_every_group(frame, strata):
    eps = 0.5
    result = global_only_mean(
        strata, LaplaceMean(bounds=(0.0, 10.0)), PureDP(eps), rng=10, replicates=R
    )
    assert result.cost == PureDP(eps)
    np.testing.assert_array_equal(
        result.group_estimates, np.repeat(result.global_estimate[:, None], strata.k, axis=1)
    )
    pooled = np.clip(frame["value"].to_numpy(), 0, 10).mean()
    b = 10.0 / (strata.n * eps)
    assert_mean_and_var(
        result.global_estimate[:, None], np.array([pooled]), np.array([2 * b**2]), kurt=6
    )


def test_global_and_groups_splits_the_budget(frame, strata):
    eps = 1.0
    est = LaplaceMean(bounds=(0.0, 10.0))
    result = global_and_group_means(strata, est, PureDP(eps), rng=11, replicates=R)
    assert result.cost == PureDP(eps)  # sequential: ε/2 + ε/2
    # Each part has ε/2, so its Laplace scale doubles (sd 2× the full-budget one).
    b_groups = 10.0 / (strata.sizes * eps / 2)
    assert_mean_and_var(
        result.group_estimates, clipped_means(frame, strata, 0, 10), 2 * b_groups**2, kurt=6
    )
    full = stratified_mean(
        strata, est, PureDP(eps), shares_from_counts(strata), rng=12, replicates=R
    )
    ratio = result.group_estimates.std(axis=0) / full.group_estimates.std(axis=0)
    np.testing.assert_allclose(ratio, 2.0, rtol=0.05)
    b_global = 10.0 / (strata.n * eps / 2)
    pooled = np.clip(frame["value"].to_numpy(), 0, 10).mean()
    assert_mean_and_var(
        result.global_estimate[:, None], np.array([pooled]), np.array([2 * b_global**2]), kurt=6
    )
    # an uneven split: 0.2 to the global, 0.8 to the groups
    uneven = global_and_group_means(
        strata, est, PureDP(eps), global_fraction=0.2, rng=13, replicates=R
    )
    assert uneven.cost == PureDP(eps)
    b = 10.0 / (strata.sizes * eps * 0.8)
    assert_mean_and_var(
        uneven.group_estimates, clipped_means(frame, strata, 0, 10), 2 * b**2, kurt=6
    )


def test_global_and_groups_zcdp_cost(strata):
    est = GaussianMean(bounds=(0.0, 10.0))
    result = global_and_group_means(strata, est, ZCDP(0.4), global_fraction=0.25, rng=0)
    assert result.cost == ZCDP(0.4)


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.5, 1.5])
def test_global_fraction_validation(strata, fraction):
    with pytest.raises(ValueError, match="global_fraction"):
        global_and_group_means(
            strata, LaplaceMean(bounds=(0.0, 1.0)), PureDP(1.0), global_fraction=fraction
        )


def test_run_strategy_dispatches_and_rejects_unknown(strata):
    est = LaplaceMean(bounds=(0.0, 10.0))
    shares = shares_from_counts(strata)
    for name in ("stratified", "global_only", "global_and_groups"):
        assert run_strategy(name, strata, est, PureDP(1.0), shares, rng=0).strategy == name
    # same seed: dispatch gives the same numbers as the direct call
    direct = stratified_mean(strata, est, PureDP(1.0), shares, rng=5, replicates=3)
    via = run_strategy("stratified", strata, est, PureDP(1.0), shares, rng=5, replicates=3)
    np.testing.assert_array_equal(direct.group_estimates, via.group_estimates)
    with pytest.raises(ValueError, match="strategy"):
        run_strategy("per_group", strata, est, PureDP(1.0), shares, rng=0)


@pytest.mark.parametrize(
    "shares",
    [
        [0.5, 0.5],  # wrong length
        [0.5, 0.25, 0.25, 0.0],  # wrong length
        [1.2, -0.1, -0.1],  # negative
        [0.5, 0.3, 0.1],  # sums to 0.9
        [0.5, 0.5, math.nan],
    ],
)
def test_shares_validation(strata, shares):
    with pytest.raises(ValueError, match="shares"):
        stratified_mean(strata, LaplaceMean(bounds=(0.0, 1.0)), PureDP(1.0), np.array(shares))


@pytest.mark.parametrize("replicates", [0, -3])
def test_replicates_validation(strata, replicates):
    with pytest.raises(ValueError, match="replicates"):
        global_only_mean(strata, LaplaceMean(bounds=(0.0, 1.0)), PureDP(1.0), replicates=replicates)


@pytest.mark.parametrize(
    ("release", "replicates", "error"),
    [
        ("laplace", 0, ValueError),
        ("laplace", -2, ValueError),
        ("laplace", 2.5, TypeError),
        ("gaussian", 0, ValueError),
        ("coinpress", 0, ValueError),
    ],
)
def test_single_release_functions_validate_replicates(release, replicates, error):
    values = np.array([0.2, 0.4, 0.6])
    call = {
        "laplace": lambda: laplace_mean(
            values, PureDP(1.0), bounds=(0.0, 1.0), replicates=replicates
        ),
        "gaussian": lambda: gaussian_mean(
            values, ZCDP(1.0), bounds=(0.0, 1.0), replicates=replicates
        ),
        "coinpress": lambda: coinpress_mean(
            values, ZCDP(1.0), prior=(0.0, 1.0), sigma=1.0, replicates=replicates
        ),
    }[release]
    with pytest.raises(error, match="`replicates`"):
        call()
