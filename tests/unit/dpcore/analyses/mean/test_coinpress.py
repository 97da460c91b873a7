"""CoinPress: the ρ split, a loop-per-replicate CoinPress written out against the implementation
step by step, and the coverage of its interval."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcore.analyses.mean.array_api import coinpress_mean
from dpcore.analyses.mean.coinpress import CoinPressMean, default_rho_split
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.foundations.accounting import ZCDP
from tests.unit.dpcore.analyses.mean.helpers import raw_groups


class FixedGaussianNoise:
    """Adds ``sigma * z[i]`` on the i-th call, with standard normals ``z`` drawn by the test."""

    kind = "simulation"

    def __init__(self, z: np.ndarray) -> None:
        self.z = z
        self.calls = 0

    def add_laplace(self, values, scale):
        raise AssertionError("CoinPress must only use Gaussian noise")

    def add_gaussian(self, values, sigma):
        values = np.asarray(values, dtype=float)
        out = values + np.broadcast_to(sigma, values.shape) * self.z[self.calls]
        self.calls += 1
        return out


def test_default_rho_split():
    assert default_rho_split(1) == (1.0,)
    assert default_rho_split(2) == pytest.approx((0.25, 0.75))
    for t in (3, 4, 7):
        split = default_rho_split(t)
        assert len(split) == t
        assert split[-1] == pytest.approx(0.75)
        assert split[:-1] == pytest.approx([0.25 / (t - 1)] * (t - 1))
        assert sum(split) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("steps", "split"),
    [(2, (0.5,)), (2, (0.5, 0.6)), (2, (-0.5, 1.5)), (2, (0.0, 1.0)), (2, (math.nan, 1.0))],
)
def test_rho_split_validation(steps, split):
    with pytest.raises(ValueError, match="rho_split"):
        CoinPressMean(prior=(-1.0, 1.0), sigma=1.0, steps=steps, rho_split=split)


@pytest.mark.parametrize("beta", [0.0, 1.0, -0.1])
def test_beta_validation(beta):
    with pytest.raises(ValueError, match="beta"):
        CoinPressMean(prior=(-1.0, 1.0), sigma=1.0, beta=beta)


def brute_force_coinpress(x, prior, sigma, rhos, beta, z):
    """Alg. 2 (UVMRec) for one group and one replicate, calling Alg. 1 (UVM) with np.clip.

    ``z[i]`` is the standard normal behind step i's noise.
    """
    t, n = len(rhos), x.size
    lo, hi = prior
    out = []
    for i, rho_i in enumerate(rhos):
        beta_i = beta / (4 * (t - 1)) if i < t - 1 else beta / 4
        w = sigma * math.sqrt(2 * math.log(2 * n / beta_i))
        clipped = np.clip(x, lo - w, hi + w)
        delta = (hi - lo + 2 * w) / n
        s = delta / math.sqrt(2 * rho_i)
        centre = clipped.mean() + s * z[i]
        half = math.sqrt(2 * (sigma**2 / n + s**2) * math.log(2 / beta_i))
        lo, hi = centre - half, centre + half
        out.append((lo, hi))
    return np.array(out)


@pytest.mark.parametrize(("steps", "split"), [(1, None), (2, None), (3, (0.2, 0.3, 0.5))])
def test_coinpress_matches_brute_force_step_by_step(frame, strata, steps, split):
    reps, rho, beta, prior, sigma = 4, 0.4, 0.05, (-3.0, 20.0), 4.0
    z = np.random.default_rng(5).standard_normal((steps, reps, strata.k))
    est = CoinPressMean(prior=prior, sigma=sigma, steps=steps, rho_split=split, beta=beta)
    noise = FixedGaussianNoise(z)
    estimate, intervals = est.run(strata, ZCDP(rho), replicates=reps, noise=noise)
    assert noise.calls == steps
    assert estimate.shape == (reps, strata.k)
    assert intervals.shape == (steps, reps, strata.k, 2)
    fractions = default_rho_split(steps) if split is None else split
    rhos = [rho * f for f in fractions]
    for r in range(reps):
        for g, x in enumerate(raw_groups(frame, strata)):
            expected = brute_force_coinpress(x, prior, sigma, rhos, beta, z[:, r, g])
            np.testing.assert_allclose(intervals[:, r, g, :], expected, rtol=1e-10, atol=1e-12)
            assert estimate[r, g] == pytest.approx(expected[-1].mean(), rel=1e-12)


def test_coinpress_single_group_and_midpoint():
    values = np.random.default_rng(6).normal(2.0, 1.0, 500)
    one = coinpress_mean(values, ZCDP(0.5), prior=(-10.0, 10.0), sigma=1.0, rng=0)
    assert isinstance(one.estimate, float)
    assert one.intervals.shape == (2, 2)
    assert one.estimate == pytest.approx(one.intervals[-1].mean(), rel=1e-12)
    many = coinpress_mean(values, ZCDP(0.5), prior=(-10.0, 10.0), sigma=1.0, rng=0, replicates=9)
    assert many.estimate.shape == (9,)
    assert many.intervals.shape == (2, 9, 2)
    np.testing.assert_allclose(many.estimate, many.intervals[-1].mean(axis=-1), rtol=1e-12)
    assert np.all(many.intervals[..., 0] < many.intervals[..., 1])


def test_coinpress_interval_covers_true_mean_with_probability_1_minus_beta():
    """Binomial test on (group, replicate) pairs: each group is a fresh N(μ_g, 1) sample."""
    rng = np.random.default_rng(7)
    k, n_g, reps, beta = 400, 200, 25, 0.1
    mu = rng.uniform(-5.0, 5.0, k)
    df = pd.DataFrame(
        {
            "group": np.repeat([f"g{i:03d}" for i in range(k)], n_g),
            "value": rng.normal(np.repeat(mu, n_g), 1.0),
        }
    )
    s = GroupValues.from_frame(df, "group", "value")
    truth = mu[[int(lab[1:]) for lab in s.labels]]
    release = coinpress_mean(
        s, ZCDP(0.1), prior=(-10.0, 10.0), sigma=1.0, beta=beta, rng=8, replicates=reps
    )
    final = release.intervals[-1]  # (reps, k, 2)
    misses = int(np.sum((truth < final[..., 0]) | (truth > final[..., 1])))
    trials = reps * k
    # P(miss) <= beta: the observed misses must not be significantly above beta·trials
    assert stats.binom.sf(misses - 1, trials, beta) > 1e-6, (misses, trials)
    # the intervals are informative, not trivially wide
    assert np.median(final[..., 1] - final[..., 0]) < 2.0
