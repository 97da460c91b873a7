"""GVDP's exact samplers (the bag of little bootstraps' partition, multinomial and Poisson
counts) against their laws: chi-square tests on seeded draws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.analyses.gvdp.blb import partition_and_resample, poisson_counts, uniform_multinomial


@pytest.mark.parametrize("lam", [3.9, 95.0])
def test_poisson_inversion_matches_the_poisson_law(lam):
    draws = poisson_counts(lam, (20_000, 10), np.random.default_rng(0)).ravel()
    top = int(lam + 6 * math.sqrt(lam))
    observed = np.bincount(np.minimum(draws, top), minlength=top + 1)
    expected = stats.poisson.pmf(np.arange(top + 1), lam)
    expected[-1] = stats.poisson.sf(top - 1, lam)
    keep = expected * draws.size > 5
    rest = [observed[~keep].sum(), expected[~keep].sum() * draws.size]
    chi2 = stats.chisquare(
        [*observed[keep], rest[0]], [*(expected[keep] * draws.size), rest[1]], ddof=0
    )
    assert chi2.pvalue > 1e-3


def test_uniform_multinomial_has_the_exact_joint_law():
    """n = 6 draws into 3 cells: 28 outcomes, compared with the multinomial pmf."""
    n, cells, rows = 6, 3, 60_000
    counts = uniform_multinomial(n, cells, rows, np.random.default_rng(1))
    assert counts.shape == (rows, cells) and np.all(counts.sum(axis=1) == n)
    outcomes, observed = np.unique(counts, axis=0, return_counts=True)
    expected = stats.multinomial.pmf(outcomes, n, [1 / cells] * cells) * rows
    assert len(outcomes) == math.comb(n + cells - 1, cells - 1)
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_uniform_multinomial_moments_at_blb_scale():
    n, cells, rows = 10_000, 100, 4_000
    counts = uniform_multinomial(n, cells, rows, np.random.default_rng(2)).astype(float)
    assert np.all(counts.sum(axis=1) == n)
    p = 1 / cells
    # Cell means, variances and one covariance against n p, n p (1 − p), −n p², within 5 SE.
    assert abs(counts.mean() - n * p) < 5 * math.sqrt(n * p * (1 - p) / counts.size)
    var = counts.var(axis=0, ddof=1).mean()
    assert abs(var / (n * p * (1 - p)) - 1) < 5 * math.sqrt(2 / (rows * cells))
    cov = np.cov(counts[:, 0], counts[:, 1])[0, 1]
    assert abs(cov + n * p * p) < 5 * n * p * (1 - p) / math.sqrt(rows)


def test_partition_covers_every_row_once_and_pads_with_zero_counts():
    n, k, r = 1_003, 10, 4  # 3 subsets of 101 rows, 7 of 100
    index, counts = partition_and_resample(n, k, r, np.random.default_rng(3))
    assert index.shape == (k, 101) and counts.shape == (k, r, 101)
    real = np.ones((k, 101), dtype=bool)
    real[3:, 100] = False
    assert np.array_equal(np.sort(index[real]), np.arange(n))
    assert np.all(counts[3:, :, 100] == 0)
    assert np.all(counts.sum(axis=-1) == n)
