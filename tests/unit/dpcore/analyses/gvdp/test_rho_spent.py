"""GVDP's privacy accounting: ρ split over the steps of Algorithm 3, and a release that spends
exactly ρ through the noise it draws (replayed from the recorded σ's, Lemma A.4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.analyses.gvdp.bounds import GVDPBounds, RhoSpent
from dpcore.analyses.gvdp.estimator import gvdp
from dpcore.analyses.gvdp.private import tail_radius
from dpcore.foundations.accounting import ZCDP
from tests.unit.dpcore.analyses.gvdp.helpers import RecordingNoise


@pytest.mark.parametrize(
    ("rho", "fraction", "t"), [(0.1, 0.5, 5), (0.3, 0.3, 7), (1e-4, 0.9, 2), (2.0, 0.5, 1)]
)
def test_rho_steps_follow_algorithm_3_and_sum_to_rho(rho, fraction, t):
    spent = RhoSpent.split(rho, fraction, t)
    assert len(spent.mean_steps) == len(spent.variance_steps) == t
    assert abs(spent.total - rho) <= 1e-12 * rho
    assert spent.mean == pytest.approx(rho * fraction, rel=1e-12)
    if t > 1:
        assert spent.mean_steps[-1] == pytest.approx(spent.mean / 2, rel=1e-12)
        assert spent.mean_steps[0] == pytest.approx(spent.mean / (2 * (t - 1)), rel=1e-12)


def test_release_spends_exactly_rho_through_the_noise_it_draws():
    """Replays both CoinPress runs from the recorded σ's: each Gaussian release with ℓ2
    sensitivity Δ_m = 2(r_{m-1} + γ₁)/k costs Δ_m²/(2σ_m²) (Lemma A.4), and the 2t costs are
    the announced steps, summing to ρ (γ's at β/(3t) per step, half each; radii from Alg. 4)."""
    noise = RecordingNoise()
    x = np.random.default_rng(16).normal(size=(3_000, 2))
    bounds = GVDPBounds([1.0, -1.0], 5.0, [0.01, 0.04])
    k, t, r = 30, 4, 5
    result = gvdp(
        x, "mean", k=k, rho=ZCDP(0.37), t=t, resamples=r, bounds=bounds, rng=17, noise=noise
    )
    assert result.cost == ZCDP(0.37) and abs(result.rho.total - 0.37) <= 1e-12
    assert len(noise.sigmas) == 2 * t
    beta_s = 0.03 / 3 / t / 2
    gamma1, gamma2 = tail_radius(2, beta_s / k), tail_radius(2, beta_s)
    variance_scale = bounds.spread(r, 3_000 // k)
    mean_scale = np.sqrt(k * result.sampling_variance)
    high = bounds.variance_high
    starts = [
        # The variance part starts from the box [0, v]: the ball around the whitened box
        # (issue 42), never larger than Alg. 3 line 4's ‖v‖/2 / min τ.
        min(
            np.linalg.norm(high) / 2 / variance_scale.min(),
            np.linalg.norm(high / 2 / variance_scale),
        ),
        bounds.radius / mean_scale.min(),  # a ball without a box: Alg. 3 line 4
    ]
    parts = [
        (noise.sigmas[:t], result.rho.variance_steps),
        (noise.sigmas[t:], result.rho.mean_steps),
    ]
    spent = []
    for start, (sigmas, steps) in zip(starts, parts, strict=True):
        radius = start
        for sigma, rho_m in zip(sigmas, steps, strict=True):
            assert np.all(sigma == sigma.flat[0])  # isotropic noise in whitened space
            delta = 2 * (radius + gamma1) / k
            spent.append(delta**2 / (2 * sigma.flat[0] ** 2))
            assert spent[-1] == pytest.approx(rho_m, rel=1e-9)
            radius = gamma2 * math.sqrt(1 / k + sigma.flat[0] ** 2)
    assert math.fsum(spent) == pytest.approx(0.37, rel=1e-9)
