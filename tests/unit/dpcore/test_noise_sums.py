"""Quantiles of Laplace and Gaussian noise and of their weighted sums, computed: checked against
closed forms where they exist, against seeded simulations where they do not, and the mean's
noise-only intervals against the parametric bootstrap they replace."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.analyses.mean import GaussianMean, LaplaceMean
from dpcore.analyses.mean.noise_intervals import noise_error_quantiles
from dpcore.analyses.mean.strategies import run_strategy
from dpcore.analyses.mean.sums import GroupSums
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.noise_sums import (
    _laplace_sum_upper_quantiles,
    _LaplaceSum,
    noise_quantiles,
    sum_quantiles,
)
from dpcore.foundations.shares import PublicShares

TAILS = [0.025, 0.975]


def test_one_laplace_and_gaussians_have_their_textbook_quantiles():
    p = np.array([0.005, 0.05, 0.5, 0.9, 0.999])
    np.testing.assert_allclose(sum_quantiles("laplace", [2.0], p), -2.0 * np.sign(p - 0.5)
                               * np.log1p(-2 * np.abs(p - 0.5)))  # fmt: skip
    np.testing.assert_allclose(
        sum_quantiles("gaussian", [3.0, 4.0], p), 5.0 * stats.norm.ppf(p), rtol=1e-14
    )
    np.testing.assert_allclose(noise_quantiles("laplace", np.array([1.0, 3.0]), p)[1],
                               3.0 * stats.laplace.ppf(p))  # fmt: skip


@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.9995])
def test_two_equal_laplace_draws_sum_to_the_known_law(p):
    r"""For :math:`L_1 + L_2` of scale b: :math:`P(S > x) = e^{-x/b}(2 + x/b)/4`."""
    b = 1.7
    x = sum_quantiles("laplace", [b, b], [p])[0]
    assert 1 - math.exp(-x / b) * (2 + x / b) / 4 == pytest.approx(p, abs=1e-11)
    assert sum_quantiles("laplace", [b, b], [1 - p])[0] == -x  # symmetric


@pytest.mark.parametrize(
    "scales",
    [[1.0, 0.3, 0.05, 2.0], [1.0] + [0.02] * 300, list(np.linspace(0.1, 1.0, 1000))],
    ids=["mixed", "one dominant", "many alike"],
)
def test_a_weighted_sum_of_laplace_draws_matches_a_seeded_simulation(scales):
    """Each computed quantile's tail holds its share of 100,000 simulated sums (a binomial test
    per quantile)."""
    scales = np.asarray(scales)
    levels = [0.01, 0.1, 0.5, 0.95]
    quantiles = sum_quantiles("laplace", scales, levels)
    rng = np.random.default_rng(4)
    draws = np.concatenate([
        rng.laplace(size=(10_000, scales.size)) @ scales for _ in range(10)
    ])  # fmt: skip
    for level, quantile in zip(levels, quantiles, strict=True):
        below = int((draws <= quantile).sum())
        assert stats.binomtest(below, draws.size, level).pvalue > 0.001, (level, below)


def test_a_law_asked_again_is_not_integrated_again():
    """A release's preview and commit ask for the same quantiles: the second answer is the
    remembered one, the same numbers; another law or level is integrated anew."""
    scales, levels = [0.7, 0.2, 0.2, 1.3], [0.025, 0.975]
    first = sum_quantiles("laplace", scales, levels)
    before = _laplace_sum_upper_quantiles.cache_info()
    np.testing.assert_array_equal(sum_quantiles("laplace", scales[::-1], levels), first)
    after = _laplace_sum_upper_quantiles.cache_info()
    assert (after.hits, after.misses) == (before.hits + 1, before.misses)
    sum_quantiles("laplace", scales, [0.05, 0.95])
    assert _laplace_sum_upper_quantiles.cache_info().misses == before.misses + 1


def test_the_power_series_of_the_characteristic_function_is_the_product_it_replaces():
    scales = np.array([0.2, 0.5, 1.0, 3.0])
    counts = np.array([5.0, 1.0, 40.0, 2.0])
    law = _LaplaceSum(scales, counts)
    for t in np.linspace(0.0, 1 / (2 * 3.0), 7):
        direct = np.prod((1 + (scales * t) ** 2) ** -counts)
        assert law.characteristic(t) == pytest.approx(direct, rel=1e-13)


def test_fifty_thousand_distinct_scales_are_quick_and_near_the_normal_limit():
    """Many comparable draws: the sum is close to Gaussian (the central limit), computed with
    work that does not grow with the draws (a power series near 0, module doc)."""
    scales = np.random.default_rng(0).uniform(0.1, 1.0, 50_000)
    quantile = sum_quantiles("laplace", scales, [0.975])[0]
    normal = stats.norm.ppf(0.975) * math.sqrt(2 * np.sum(scales**2))
    assert quantile == pytest.approx(normal, rel=1e-4)


@pytest.mark.parametrize("strategy", ["stratified", "global_only", "global_and_groups"])
@pytest.mark.parametrize(
    ("estimator", "budget"),
    [(LaplaceMean((0.0, 100.0)), PureDP(0.3)), (GaussianMean((0.0, 100.0)), ZCDP(0.05))],
    ids=["laplace", "gaussian"],
)
def test_the_mean_s_computed_noise_quantiles_are_those_of_its_simulated_errors(
    strategy, estimator, budget
):
    r"""The closed forms give the quantiles of the very errors the release's strategy draws
    (200,000 seeded replicates: each tail holds its share, binomial test). A stratified
    population's are those of the groups' unclamped recombination :math:`\sum_g w_g e_g`, which
    the intervals take (``MeanIntervals._noise_draws``); the population the release publishes
    recombines the clamped groups (issue 37), and its errors stay inside those quantiles at
    least as often as the level says (one-sided binomial test)."""
    sizes = np.array([40, 300, 7, 1200])
    stand_in = GroupSums.constant(("a", "b", "c", "d"), sizes, np.full(4, 50.0))
    shares = PublicShares(np.array([0.1, 0.2, 0.3, 0.4]), "table", "a public table")
    group_q, whole_q = noise_error_quantiles(
        estimator, strategy, sizes, shares.values, budget, 0.3, TAILS
    )
    draws = run_strategy(strategy, stand_in, estimator, budget, shares, global_fraction=0.3,
                         replicates=200_000, noise=SimulationNoise(rng=9))  # fmt: skip
    group_errors = draws.group_estimates - 50.0
    published_errors = draws.global_estimate - 50.0
    whole_errors = group_errors @ shares.values if strategy == "stratified" else published_errors
    for errors, quantiles in [*zip(group_errors.T, group_q, strict=True), (whole_errors, whole_q)]:
        for level, quantile in zip(TAILS, quantiles, strict=True):
            below = int((errors <= quantile).sum())
            assert stats.binomtest(below, errors.size, level).pvalue > 0.001, (level, below)
    covered = int(((published_errors >= whole_q[0]) & (published_errors <= whole_q[1])).sum())
    coverage = stats.binomtest(covered, published_errors.size, TAILS[1] - TAILS[0], "less")
    assert coverage.pvalue > 0.001, covered


@pytest.mark.parametrize("law, scipy_law", [("laplace", stats.laplace), ("gaussian", stats.norm)])
def test_the_closed_form_unit_quantiles_are_scipys_to_the_bit(law, scipy_law):
    """The unit law's quantiles are computed without importing scipy.stats (a third of a second
    of every release on an engine), and equal its ppf exactly, ends included: seeded intervals
    are unchanged."""
    probabilities = np.concatenate(
        [[0.0, 1e-300, 1e-9, 0.5, 1 - 1e-16, 1.0], np.random.default_rng(7).random(10_000)]
    )
    ours = noise_quantiles(law, np.array([1.0]), probabilities)[0]
    assert np.array_equal(ours, scipy_law.ppf(probabilities))
