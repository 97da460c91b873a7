"""GVDP's statistical validity (slow): seeded coverage and unbiasedness of the mean, OLS and
logistic intervals with bounds far too loose, checked with binomial tolerances."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

from dpcore.analyses.gvdp.bounds import GVDPBounds
from dpcore.analyses.gvdp.estimator import gvdp_coverage
from tests.unit.dpcore.analyses.gvdp.helpers import (
    MEAN_N,
    MEAN_RHO,
    MEAN_TRUTH,
    OLS_BETA,
    OLS_K,
    OLS_N,
    OLS_R,
    OLS_RHO,
    mean_coverage,
    ols_coverage,
    ols_sampling_variance,
)


def binomial_low(successes: int, trials: int, alpha: float = 1e-3) -> float:
    """One-sided lower confidence bound (Clopper–Pearson) on a binomial proportion."""
    return float(stats.beta.ppf(alpha, successes, trials - successes + 1))


@pytest.mark.slow
def test_mean_coverage_with_bounds_100x_too_loose():
    """n = 10,000, k = 100, r = 20, ρ = 0.5, 500 replications: coverage in [0.93, 0.99]."""
    result = mean_coverage(replications=500, rho=MEAN_RHO, rng=26)
    assert 0.93 <= result.coverage[0] <= 0.99
    errors = result.estimates[:, 0] - MEAN_TRUTH
    assert abs(errors.mean()) < 3 * errors.std(ddof=1) / math.sqrt(errors.size)


@pytest.mark.slow
def test_mean_coverage_rests_on_the_variance_bound_when_noise_is_small():
    """With ρ = 50 the privacy noise is a small part of the interval, so coverage depends on the
    private sampling-variance bound (Thm. 2.10) being valid: dropping it would cover ~30 %."""
    result = mean_coverage(replications=300, rho=50.0, rng=30)
    assert 0.92 <= result.coverage[0] <= 0.99
    assert np.mean(result.variance) < 1.5 / MEAN_N  # the interval is not just very wide


@pytest.mark.slow
def test_ols_coverage_and_unbiasedness_with_bounds_100x_too_loose():
    """d = 5, n = 50,000, k = 500, ρ = 0.1, 200 replications (paper §3, Table 1 setting)."""
    bounds = GVDPBounds.overestimated(
        OLS_BETA, ols_sampling_variance(), 100, resamples=OLS_R, subset_size=OLS_N // OLS_K
    )
    result = ols_coverage(
        OLS_N, bounds, replications=200, k=OLS_K, rho=OLS_RHO, resamples=OLS_R, rng=27
    )
    assert np.all(result.coverage >= 0.90), result.coverage
    standard_error = result.estimates.std(axis=0, ddof=1) / math.sqrt(result.replications)
    assert np.all(np.abs(result.estimates.mean(axis=0) - OLS_BETA) <= 2 * standard_error)


@pytest.mark.slow
def test_logistic_coverage_sanity():
    """Logistic regression, n = 20,000, k = 100, bounds 10× too loose, 100 replications."""
    beta = np.array([-1.0, 0.5, -0.5])

    def generate(rng, n=20_000):
        X = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
        return X, (rng.random(n) < expit(X @ beta)).astype(float)

    # Public "truth" of the simulation: Var(β̂) ≈ I(β)⁻¹/n from a large independent sample.
    X_big, _ = generate(np.random.default_rng(28), n=1_000_000)
    mu = expit(X_big @ beta)
    variance = np.diag(np.linalg.inv((X_big * (mu * (1 - mu))[:, None]).T @ X_big / 1e6)) / 2e4
    bounds = GVDPBounds.overestimated(beta, variance, 10, resamples=10, subset_size=200)
    result = gvdp_coverage(
        generate,
        beta,
        "logistic",
        replications=100,
        k=100,
        rho=1.0,
        resamples=10,
        bounds=bounds,
        rng=29,
    )
    covered = result.covered.sum(axis=0)
    # Clopper–Pearson lower bound above 0.85 would fail only if coverage were far below nominal.
    assert all(binomial_low(int(c), 100, alpha=0.001) > 0.80 for c in covered), covered
    assert np.all(result.coverage >= 0.88), result.coverage
