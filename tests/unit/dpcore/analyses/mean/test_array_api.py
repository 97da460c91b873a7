"""The mean on a raw array (issue 16, speed): clipped afresh at each step without a sort, the same
release as the sorted path with the same seed; non-finite values refused."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.analyses.mean.array_api import ArrayValues, coinpress_mean, gaussian_mean, laplace_mean
from dpcore.analyses.mean.coinpress import CoinPressMean
from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.mechanisms import SimulationNoise


def sorted_release(estimator, values, budget, seed, replicates=None):
    """The release through sorted statistics (GroupValues: one group), with noise seeded alike."""
    stats, noise = GroupValues.from_values(values), SimulationNoise(rng=seed)
    if isinstance(estimator, CoinPressMean):
        return estimator.run(stats, budget, replicates=replicates, noise=noise)
    return estimator.group_estimates(stats, budget, replicates=replicates, noise=noise), None


def outlying_values(n: int) -> np.ndarray:
    """N(3, 2²) values with two far outliers, which every step clips."""
    values = np.random.default_rng(n).normal(3.0, 2.0, n)
    return np.append(values, [-1e300, 1e300])


@pytest.mark.parametrize("steps", [1, 2, 4])
@pytest.mark.parametrize("n", [1, 7, 5000])
def test_coinpress_on_an_array_equals_the_sorted_path_with_the_same_seed(steps, n):
    values = outlying_values(n)
    estimator = CoinPressMean(prior=(-20.0, 20.0), sigma=2.0, steps=steps)
    release = coinpress_mean(values, ZCDP(0.3), prior=(-20.0, 20.0), sigma=2.0, steps=steps, rng=9)
    estimate, intervals = sorted_release(estimator, values, ZCDP(0.3), 9)
    assert isinstance(release.estimate, float)
    assert release.intervals.shape == (steps, 2)
    # Same noise draws; the clipped sums differ only in their order of summation.
    np.testing.assert_allclose(release.intervals, intervals[:, 0, :], rtol=1e-12, atol=1e-12)
    assert release.estimate == pytest.approx(estimate[0], rel=1e-12, abs=1e-12)


def test_simulated_coinpress_on_an_array_sorts_it_once():
    """Replicates clip at every later step once each: the sorted path, the very same numbers."""
    values = outlying_values(300)
    estimator = CoinPressMean(prior=(-20.0, 20.0), sigma=2.0, steps=3)
    release = coinpress_mean(
        values, ZCDP(0.3), prior=(-20.0, 20.0), sigma=2.0, steps=3, rng=9, replicates=5
    )
    estimate, intervals = sorted_release(estimator, values, ZCDP(0.3), 9, replicates=5)
    np.testing.assert_array_equal(release.estimate, estimate[:, 0])
    np.testing.assert_array_equal(release.intervals, intervals[:, :, 0, :])


@pytest.mark.parametrize("replicates", [None, 6])
@pytest.mark.parametrize(
    ("function", "estimator", "budget"),
    [
        (laplace_mean, LaplaceMean(bounds=(0.0, 5.0)), PureDP(0.7)),
        (gaussian_mean, GaussianMean(bounds=(0.0, 5.0), n_public=False), ZCDP(0.7)),
    ],
)
def test_clipped_means_on_an_array_equal_the_sorted_path(function, estimator, budget, replicates):
    values = outlying_values(40)
    release = function(
        values, budget, bounds=(0.0, 5.0), n_public=estimator.n_public, rng=4,
        replicates=replicates,
    )  # fmt: skip
    expected, _ = sorted_release(estimator, values, budget, 4, replicates)
    np.testing.assert_allclose(release.estimate, expected[..., 0], rtol=1e-12)
    assert isinstance(release.estimate, float) == (replicates is None)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize(
    "release",
    [
        lambda v: coinpress_mean(v, ZCDP(1.0), prior=(-5.0, 5.0), sigma=1.0),
        lambda v: coinpress_mean(v, ZCDP(1.0), prior=(-5.0, 5.0), sigma=1.0, replicates=3),
        lambda v: laplace_mean(v, PureDP(1.0), bounds=(0.0, 5.0)),
    ],
)
def test_an_array_with_a_value_that_is_not_finite_is_refused(release, bad):
    with pytest.raises(ValueError, match="finite numbers"):
        release(np.array([1.0, bad, 3.0]))


def test_array_values_clip_with_one_pair_of_bounds_only():
    """As many bounds as values would otherwise clip each value to its own pair."""
    values = ArrayValues(np.array([1.0, 5.0, 9.0]))
    assert values.clipped_sums(2.0, 6.0) == 2.0 + 5.0 + 6.0
    with pytest.raises(ValueError, match="one pair of scalar bounds"):
        values.clipped_sums(np.zeros(3), np.full(3, 6.0))
