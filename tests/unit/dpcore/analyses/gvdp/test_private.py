"""GVDP's private pieces (modified CoinPress step, tail radius, PSD projection, the private
variance bound of Cor. D.1, precision weighting): sensitivities against their noise, closed forms
and seeded moments."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtri

from dpcore.analyses.gvdp.estimator import gvdp
from dpcore.analyses.gvdp.private import (
    coinpress_step,
    precision_weighted,
    psd_projection,
    tail_radius,
    variance_bound,
    variance_upper_bound,
)
from tests.unit.dpcore.analyses.gvdp.helpers import (
    MEAN_K,
    MEAN_N,
    MEAN_R,
    MEAN_RHO,
    RecordingNoise,
    mean_bounds,
)


def test_coinpress_step_sensitivity_matches_its_noise():
    """Moving one of k points anywhere moves the projected mean by at most Δ = 2(r + γ₁)/k, and
    σ = Δ/√(2ρ), so the step is ρ-zCDP (Gaussian mechanism, Lemma A.4)."""
    rng = np.random.default_rng(10)
    k, d, radius, gamma1, rho_m = 50, 3, 2.0, 4.0, 0.07
    points = rng.normal(size=(k, d))
    neighbour = points.copy()
    neighbour[7] = [1e9, -1e9, 3e8]
    noise = RecordingNoise()
    args = (np.zeros(d), np.asarray(radius), gamma1, 3.0, rho_m, noise)
    mean, _, sigma = coinpress_step(points, *args)
    mean_neighbour, _, _ = coinpress_step(neighbour, *args)
    delta = 2 * (radius + gamma1) / k
    assert np.linalg.norm(mean - mean_neighbour) <= delta * (1 + 1e-12)
    assert float(sigma) == pytest.approx(delta / math.sqrt(2 * rho_m), rel=1e-12)
    np.testing.assert_allclose(noise.sigmas[0], float(sigma))


def test_an_outlier_cannot_move_the_release_beyond_the_noise():
    """One row at 1e12 changes only its subset's point, which CoinPress clips: the release stays
    where it was up to the per-step sensitivity (with the same seed, the noise draws coincide)."""
    x = np.random.default_rng(11).normal(1.0, 1.0, MEAN_N)
    spoiled = x.copy()
    spoiled[123] = 1e12
    bounds = mean_bounds()
    common = dict(k=MEAN_K, rho=MEAN_RHO, resamples=MEAN_R, bounds=bounds, rng=12)
    clean, dirty = gvdp(x, "mean", **common), gvdp(spoiled, "mean", **common)
    assert dirty.subset_estimates.max() > 1e7  # the BLB really saw the outlier
    assert abs(dirty.estimate[0] - clean.estimate[0]) < 3 * math.sqrt(clean.variance[0])
    assert np.all(np.isfinite(dirty.high)) and dirty.high[0] < 10


def test_tail_radius_is_exact_in_one_dimension():
    for beta in (0.1, 1e-3, 1e-7):
        assert tail_radius(1, beta) == pytest.approx(stats.norm.isf(beta / 2), rel=1e-12)


def test_tail_radius_holds_under_correlation_where_laurent_massart_fails():
    """Whitening by the diagonal leaves correlated N(0, 1) coordinates. Our union-bound radius
    keeps P(‖R‖ > γ) ≤ β; Fact C.5 (which needs Cov ⪯ I) does not."""
    d, beta, draws = 5, 0.01, 200_000
    cov = np.full((d, d), 0.9) + 0.1 * np.eye(d)
    norms = np.linalg.norm(
        np.random.default_rng(13).multivariate_normal(np.zeros(d), cov, draws), axis=1
    )
    x = math.log(1 / beta)
    laurent_massart = math.sqrt(d + 2 * math.sqrt(d * x) + 2 * x)
    ours = np.mean(norms > tail_radius(d, beta))
    assert ours <= beta
    assert np.mean(norms > laurent_massart) > 2 * beta


def test_psd_projection_clips_negative_eigenvalues_at_zero():
    q = np.linalg.qr(np.random.default_rng(14).normal(size=(3, 3)))[0]
    matrix = q @ np.diag([3.0, -2.0, 1.0]) @ q.T
    projected = psd_projection(matrix)
    np.testing.assert_allclose(np.linalg.eigvalsh(projected), [0.0, 1.0, 3.0], atol=1e-12)
    np.testing.assert_allclose(projected, q @ np.diag([3.0, 0.0, 1.0]) @ q.T, atol=1e-12)
    absolute = q @ np.diag([3.0, 2.0, 1.0]) @ q.T  # the |λ| "projection" we must not do
    assert np.linalg.norm(projected - matrix) < np.linalg.norm(absolute - matrix)
    psd = q @ np.diag([3.0, 0.5, 1.0]) @ q.T
    np.testing.assert_allclose(psd_projection(psd), psd, atol=1e-12)
    with pytest.raises(ValueError, match="`matrix`"):
        psd_projection(np.ones((2, 3)))


def test_variance_upper_bound_adds_the_quantile_and_clips_at_zero():
    """Cor. D.1: S̃ + b Φ⁻¹(1 − β/d); a negative result becomes 0 (not its absolute value)."""
    iterates = np.array([[1.0, -5.0], [3.0, -5.0]])
    variances = np.array([[1.0, 1.0], [1.0, 1.0]])
    bound = variance_upper_bound(iterates, variances, 0.02)
    z = ndtri(1 - 0.02 / 2)
    np.testing.assert_allclose(bound, [2.0 + z * math.sqrt(0.5), 0.0])


def test_variance_bound_clips_the_estimate_at_zero_and_falls_back_to_the_public_bound():
    """max(S̃, 0) + c where Cor. D.1's S̃ + c is positive (never below it, never below c > 0);
    the public v_j where Cor. D.1's bound is ≤ 0 (its failure event)."""
    iterates = np.array([[1.0, -1.0, -5.0], [3.0, -1.0, -5.0]])
    variances = np.ones((2, 3))
    high = np.array([10.0, 20.0, 30.0])
    c = ndtri(1 - 0.03 / 3) * math.sqrt(0.5)  # ≈ 1.64: S̃ = −1 still gives a positive D.1 bound
    paper = variance_upper_bound(iterates, variances, 0.03)
    np.testing.assert_allclose(paper, [2.0 + c, c - 1.0, 0.0])
    bound = variance_bound(iterates, variances, 0.03, high)
    np.testing.assert_allclose(bound, [2.0 + c, c, 30.0])
    assert np.all(bound >= paper) and np.all(bound > 0)


def test_precision_weighting_is_unbiased_with_the_stated_variance():
    rng = np.random.default_rng(15)
    sds = np.array([4.0, 1.0, 0.5])[:, None]
    iterates = 2.0 + sds * rng.normal(size=(3, 100_000))
    combined, variance = precision_weighted(iterates, np.broadcast_to(sds**2, iterates.shape))
    assert variance[0] == pytest.approx(1 / np.sum(1 / sds**2), rel=1e-12)
    assert abs(combined.mean() - 2.0) < 5 * math.sqrt(variance[0] / combined.size)
    assert combined.var() == pytest.approx(variance[0], rel=0.03)
