"""GVDP's weighted fits on resampled subsets (mean, weighted mean, OLS, logistic) against the
resampled rows repeated and fitted independently (np.linalg.lstsq, scipy's optimiser)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize
from scipy.special import expit

from dpcore.analyses.gvdp import blb
from dpcore.analyses.gvdp.blb import fit_logistic, fit_mean, fit_ols, fit_weighted_mean
from dpcore.analyses.gvdp.bounds import GVDPBounds
from dpcore.analyses.gvdp.estimator import gvdp, nonprivate_ci


@pytest.fixture(scope="module")
def small_resample():
    """Two subsets of 30 rows, three resamples each, with explicit counts summing to n = 60."""
    rng = np.random.default_rng(4)
    X = np.column_stack([np.ones(60), rng.normal(size=(60, 2))]).reshape(2, 30, 3)
    y = X @ np.array([0.5, -1.0, 2.0]) + rng.normal(size=(2, 30))
    counts = np.stack(
        [[rng.multinomial(60, np.full(30, 1 / 30)) for _ in range(3)] for _ in range(2)]
    ).astype(float)
    return X, y, counts


def repeated(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    return np.repeat(values, counts.astype(int), axis=0)


def test_fit_mean_and_weighted_mean_equal_the_resampled_rows(small_resample):
    X, _, counts = small_resample
    x, w = X[..., 1:], np.abs(X[..., 2]) + 0.1
    means = fit_mean([x], counts, 60)
    weighted = fit_weighted_mean([x, w], counts, 60)
    for i in range(2):
        for c in range(3):
            rows, wts = repeated(x[i], counts[i, c]), repeated(w[i], counts[i, c])
            np.testing.assert_allclose(means[i, c], rows.mean(axis=0), rtol=1e-12)
            np.testing.assert_allclose(weighted[i, c], np.average(rows, 0, wts), rtol=1e-12)


def test_fit_ols_equals_least_squares_on_the_resampled_rows(small_resample):
    X, y, counts = small_resample
    coef = fit_ols([X, y], counts, 60)
    for i in range(2):
        for c in range(3):
            expected = np.linalg.lstsq(
                repeated(X[i], counts[i, c]), repeated(y[i], counts[i, c]), rcond=None
            )[0]
            np.testing.assert_allclose(coef[i, c], expected, rtol=1e-9, atol=1e-12)


def test_fit_logistic_equals_the_weighted_mle(small_resample):
    X, _, counts = small_resample
    y = (np.random.default_rng(5).random((2, 30)) < expit(X @ [0.2, 1.0, -0.7])).astype(float)
    coef = fit_logistic([X, y], counts, 60)

    def loss(beta, Xr, yr):
        eta = Xr @ beta
        return np.sum(np.logaddexp(0, eta) - yr * eta) + 0.5 * 1e-6 * 60 * beta @ beta

    for i in range(2):
        for c in range(3):
            Xr, yr = repeated(X[i], counts[i, c]), repeated(y[i], counts[i, c])
            best = optimize.minimize(loss, np.zeros(3), args=(Xr, yr), method="BFGS", tol=1e-12)
            np.testing.assert_allclose(coef[i, c], best.x, atol=1e-5)


def test_fit_logistic_stops_early_only_where_more_steps_change_nothing(monkeypatch):
    rng = np.random.default_rng(8)
    X = np.concatenate([np.ones((4, 200, 1)), rng.normal(size=(4, 200, 2))], axis=-1)
    y = (rng.random((4, 200)) < expit(X @ [-0.5, 1.5, 0.8])).astype(float)
    counts = rng.multinomial(200, np.full(200, 1 / 200), size=(4, 5)).astype(float)
    early = fit_logistic([X, y], counts, 200)
    monkeypatch.setattr(blb, "NEWTON_TOLERANCE", 0.0)  # every one of the NEWTON_STEPS steps
    np.testing.assert_allclose(early, fit_logistic([X, y], counts, 200), rtol=1e-12, atol=1e-14)


def test_weighted_mean_with_equal_weights_is_the_mean_run():
    x = np.random.default_rng(6).normal(3.0, 2.0, 2_000)
    bounds = GVDPBounds([0.0], 10.0, [0.01])
    plain = gvdp(x, "mean", k=20, rho=1.0, resamples=5, bounds=bounds, rng=7)
    weighted = gvdp(
        (x, np.full(x.size, 2.5)), "weighted_mean", k=20, rho=1.0, resamples=5, bounds=bounds, rng=7
    )
    np.testing.assert_allclose(weighted.subset_estimates, plain.subset_estimates, rtol=1e-12)
    np.testing.assert_allclose(weighted.estimate, plain.estimate, rtol=1e-12)


def test_weighted_mean_estimates_the_weighted_population_mean():
    """Units with weight 3 have mean 0, weight 1 have mean 4: weighted mean 1, plain mean 2."""
    rng = np.random.default_rng(8)
    n = 40_000
    heavy = rng.random(n) < 0.5
    x = np.where(heavy, rng.normal(0.0, 1.0, n), rng.normal(4.0, 1.0, n))
    w = np.where(heavy, 3.0, 1.0)
    reference = nonprivate_ci((x, w), "weighted_mean")
    assert reference.estimate[0] == pytest.approx(np.average(x, weights=w), rel=1e-12)
    expected_var = np.sum(w**2 * (x - reference.estimate[0]) ** 2) / w.sum() ** 2
    assert reference.variance[0] == pytest.approx(expected_var, rel=1e-12)
    result = gvdp(
        {"x": x, "weights": w},
        "weighted_mean",
        k=200,
        rho=10.0,
        resamples=10,
        bounds=GVDPBounds([0.0], 10.0, [1e-3]),
        rng=9,
    )
    assert abs(result.estimate[0] - 1.0) < 5 * math.sqrt(result.variance[0])
    assert abs(result.subset_estimates.mean() - reference.estimate[0]) < 0.02
