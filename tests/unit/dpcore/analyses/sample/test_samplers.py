"""Unit tests of the DP samplers (Raskhodnikova, Sivakumar, Smith & Swanberg, NeurIPS 2021):
projection onto the simplex, the k-ary sampler (Alg. 3), the bounded-bias Bernoulli sampler
(Thm. 6.1) and its product (Thm. 6.4).

Randomized checks are seeded; their tolerances come from computed standard errors, with z = 5
(a false failure has probability below 1e-5 per check).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.analyses.sample.samplers import (
    bernoulli_sample,
    bernoulli_sampler_epsilon,
    clipped_proportion,
    kary_distribution,
    kary_laplace_scale,
    kary_sample,
    product_bernoulli_min_n,
    product_bernoulli_sample,
    product_bernoulli_sampler_rho,
    project_simplex,
)
from dpcore.foundations.accounting import PureDP, sequential
from tests.noise import RecordingNoise

Z = 5.0  # standard errors allowed in every statistical check


# ---------------------------------------------------------------------------------------------
# Projection onto the simplex
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        ([0.5, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]),
        ([-1.0, 2.0, 0.2], [0.0, 1.0, 0.0]),
        ([0.2, 0.3, 0.5], [0.2, 0.3, 0.5]),
        ([0.6, 0.6], [0.5, 0.5]),
        ([0.3, -0.6, 0.1], [0.6, 0.0, 0.4]),
        ([0.3, -0.1, 0.1], [16 / 30, 4 / 30, 10 / 30]),
    ],
)
def test_project_simplex_known_values(x, expected):
    np.testing.assert_allclose(project_simplex(np.array(x)), expected, atol=1e-12)


def test_project_simplex_is_the_euclidean_and_an_l1_nearest_point():
    rng = np.random.default_rng(0)
    x = rng.normal(0.2, 0.5, size=(500, 6))
    q = project_simplex(x)
    assert np.all(q >= 0)
    np.testing.assert_allclose(q.sum(axis=1), 1.0, atol=1e-12)
    # KKT: x - q equals the threshold τ on the support and x <= τ off it.
    tau = np.max(np.where(q > 0, x - q, -np.inf), axis=1, keepdims=True)
    np.testing.assert_allclose(np.where(q > 0, x - q, tau), np.broadcast_to(tau, x.shape))
    assert np.all(np.where(q == 0, x <= tau + 1e-12, True))
    # No point of the simplex is closer in L2; the L1 distance is the L1 distance to the simplex.
    others = rng.dirichlet(np.ones(6), size=2000)
    dist_q = np.linalg.norm(x - q, axis=1)
    assert np.all(np.linalg.norm(x[:, None] - others[None], axis=2) >= dist_q[:, None] - 1e-12)
    l1_to_simplex = np.clip(-x, 0, None).sum(1) + np.abs(np.clip(x, 0, None).sum(1) - 1)
    np.testing.assert_allclose(np.abs(x - q).sum(axis=1), l1_to_simplex, atol=1e-12)


@pytest.mark.parametrize("bad", [[], [1.0, np.nan], [np.inf, 0.0]])
def test_project_simplex_rejects_bad_input(bad):
    with pytest.raises(ValueError, match="`values` must be a non-empty array of finite"):
        project_simplex(np.array(bad))


# ---------------------------------------------------------------------------------------------
# k-ary sampler (Alg. 3)
# ---------------------------------------------------------------------------------------------


def _dataset(counts: list[int]) -> np.ndarray:
    return np.repeat(np.arange(len(counts)), counts)


def test_kary_noise_scale_is_two_over_epsilon_n():
    data = _dataset([5, 3, 2])
    noise = RecordingNoise(zero=True)
    probs = kary_distribution(data, 3, 0.5, noise=noise)
    assert noise.calls == [((1, 3), 2 / (0.5 * 10))] == [((1, 3), kary_laplace_scale(10, 0.5))]
    np.testing.assert_allclose(probs, [0.5, 0.3, 0.2])  # no noise: the empirical distribution


def test_kary_shapes_and_simplex():
    data = _dataset([5, 3, 2])
    probs = kary_distribution(data, 4, 1.0, runs=50, rng=0)
    assert probs.shape == (50, 4) and np.all(probs >= 0)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert np.ndim(kary_sample(data, 4, 1.0, rng=0)) == 0
    assert kary_sample(data, 4, 1.0, size=7, rng=0).shape == (7,)
    assert kary_sample(data, 4, 1.0, runs=3, rng=0).shape == (3,)
    out = kary_sample(data, 4, 1.0, size=7, runs=3, rng=0)
    assert out.shape == (3, 7) and out.min() >= 0 and out.max() <= 3
    np.testing.assert_array_equal(out, kary_sample(data, 4, 1.0, size=7, runs=3, rng=0))


def test_kary_sampler_with_secure_noise():
    noise = RecordingNoise(zero=True)
    assert kary_sample(_dataset([5, 3, 2]), 3, 1.0, size=4, noise=noise, rng=0).shape == (4,)
    assert noise.calls == [((1, 3), 0.2)]
    out = kary_sample(_dataset([5, 3, 2]), 3, 1.0, size=4, noise="secure", rng=0)
    assert out.shape == (4,) and set(out.tolist()) <= {0, 1, 2}


@pytest.mark.parametrize(
    ("data", "k", "error"),
    [
        (np.array([0, 1, 5]), 3, ValueError),
        (np.array([-1, 0]), 3, ValueError),
        (np.array([], dtype=int), 3, ValueError),
        (np.array([0.0, 1.0]), 3, TypeError),
    ],
)
def test_kary_rejects_bad_data(data, k, error):
    with pytest.raises(error, match="`data`"):
        kary_sample(data, k, 1.0, rng=0)


@pytest.mark.parametrize("epsilon", [0, -1, math.nan, math.inf])
def test_kary_rejects_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="`epsilon` must be a finite number > 0"):
        kary_sample(_dataset([2, 2]), 2, epsilon, rng=0)


def _tv_tolerance(p: np.ndarray, runs: int) -> float:
    """Z standard errors of every coordinate of an empirical distribution, summed and halved."""
    return 0.5 * Z * float(np.sum(np.sqrt(p * (1 - p) / runs)))


def test_kary_sampler_is_unbiased_when_noise_is_small():
    """n ε = 2000: no coordinate reaches 0, Π is affine in the noise, so E[output] = p_D exactly."""
    counts = [800, 600, 300, 200, 100]
    p = np.array(counts) / 2000
    runs = 200_000
    freq = np.bincount(kary_sample(_dataset(counts), 5, 1.0, runs=runs, rng=1), minlength=5) / runs
    se = np.sqrt(p * (1 - p) / runs)
    assert np.all(np.abs(freq - p) <= Z * se)
    assert 0.5 * np.abs(freq - p).sum() <= _tv_tolerance(p, runs)


def test_kary_sampler_accuracy_within_theorem_bound_when_noise_is_large():
    """n ε = 25: projection is active; Thm. 1.4's proof bounds TV(output, p_D) by E‖Z‖₁ = kb."""
    counts, epsilon = [20, 15, 10, 5, 0], 0.5
    p, k = np.array(counts) / 50, 5
    runs = 200_000
    freq = np.bincount(kary_sample(_dataset(counts), k, epsilon, runs=runs, rng=2), minlength=k)
    tv = 0.5 * np.abs(freq / runs - p).sum()
    bound = k * kary_laplace_scale(50, epsilon)
    assert tv <= bound + _tv_tolerance(p, runs)


@pytest.mark.slow
def test_kary_sampler_privacy_on_neighbours():
    """P[out = j | D] <= e^ε P[out = j | D'] for D' = D with one record replaced (0 -> 2)."""
    epsilon, runs = 1.0, 400_000
    d, d_prime = _dataset([6, 3, 1]), _dataset([5, 3, 2])
    p = kary_distribution(d, 3, epsilon, runs=runs, rng=3)
    q = kary_distribution(d_prime, 3, epsilon, runs=runs, rng=4)
    # The output probabilities are the means of the private distributions over runs.
    slack = Z * (p.std(0) + math.exp(epsilon) * q.std(0)) / math.sqrt(runs)
    for a, b in ((p, q), (q, p)):
        assert np.all(a.mean(0) <= math.exp(epsilon) * b.mean(0) + slack)


# ---------------------------------------------------------------------------------------------
# Bounded-bias Bernoulli sampler (Thm. 6.1)
# ---------------------------------------------------------------------------------------------


def _bits(ones: int, n: int) -> np.ndarray:
    return np.r_[np.ones(ones), np.zeros(n - ones)]


@pytest.mark.parametrize("n", [3, 10, 29, 30, 31, 100])
def test_bernoulli_sampler_exact_privacy_on_all_neighbours(n):
    """Output probabilities are the clipped proportions; check every replace-one pair exactly."""
    epsilon = bernoulli_sampler_epsilon(n)
    assert epsilon == pytest.approx(3 / n, rel=1e-12)
    c = np.array([clipped_proportion(_bits(k, n)) for k in range(n + 1)])
    np.testing.assert_allclose(c, np.clip(np.arange(n + 1) / n, 1 / 3, 2 / 3))
    for out in (c, 1 - c):  # P[out = 1] and P[out = 0]
        ratios = np.abs(np.diff(np.log(out)))  # neighbours: k ones vs k + 1 ones
        assert ratios.max() <= epsilon
        assert ratios.max() <= math.log1p(3 / n) + 1e-12  # the exact worst case is below 3/n


@pytest.mark.slow
def test_bernoulli_sampler_empirical_privacy_at_worst_pair():
    n, runs = 30, 1_000_000
    epsilon = bernoulli_sampler_epsilon(n)
    d, d_prime = _bits(11, n), _bits(10, n)  # clipped proportions 11/30 and 1/3: the worst pair
    p = bernoulli_sample(d, runs=runs, rng=5).mean()
    q = bernoulli_sample(d_prime, runs=runs, rng=6).mean()
    se = math.sqrt(0.25 / runs)
    slack = Z * se * (1 + math.exp(epsilon))
    for a, b in ((p, q), (q, p), (1 - p, 1 - q), (1 - q, 1 - p)):
        assert a <= math.exp(epsilon) * b + slack
    # The check can fail: the observed ratio exceeds e^{ε/4}, so a 4x understated ε is caught.
    assert p - Z * se > math.exp(epsilon / 4) * (q + Z * se)


def test_bernoulli_sampler_accuracy_for_interior_bias():
    """Bias 1/2: clipping has probability < 1e-5 at n = 300, so the output is Bernoulli(1/2)."""
    datasets = np.random.default_rng(7).random((40_000, 300)) < 0.5
    out = bernoulli_sample(datasets, rng=8)
    assert out.shape == (40_000,) and set(np.unique(out)) <= {0, 1}
    assert abs(out.mean() - 0.5) <= Z * math.sqrt(0.25 / out.size)


def test_bernoulli_sampler_shapes_and_bounds():
    bits = np.zeros((2, 5, 12))
    assert bernoulli_sample(bits, rng=0).shape == (2, 5)
    assert bernoulli_sample(bits, runs=4, rng=0).shape == (4, 2, 5)
    assert bernoulli_sampler_epsilon(40, bounds=(1 / 4, 3 / 4)) == pytest.approx(4 / 40)
    assert clipped_proportion(_bits(1, 10), bounds=(1 / 4, 3 / 4)) == 1 / 4


@pytest.mark.parametrize(
    ("bits", "kwargs", "error", "match"),
    [
        (np.array([0, 1, 2]), {}, ValueError, "0/1"),
        (np.array([]), {}, ValueError, "non-empty"),
        (np.array(["0", "1"]), {}, ValueError, "0/1"),
        (np.array([0, 1]), {"bounds": (0.7, 0.3)}, ValueError, "0 < low < high < 1"),
        (np.array([0, 1]), {"bounds": 0.5}, TypeError, "pair of numbers"),
        (np.array([0, 1]), {"runs": 0}, ValueError, "`runs`"),
    ],
)
def test_bernoulli_sampler_rejects_bad_input(bits, kwargs, error, match):
    with pytest.raises(error, match=match):
        bernoulli_sample(bits, rng=0, **kwargs)


# ---------------------------------------------------------------------------------------------
# Product of bounded-bias Bernoullis (Thm. 6.4, zCDP)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "d"), [(10, 1), (100, 7), (1000, 50)])
def test_product_sampler_rho_is_composition_of_pure_dp_coordinates(n, d):
    rho = product_bernoulli_sampler_rho(n, d)
    assert rho == pytest.approx(9 * d / (2 * n**2), rel=1e-12)
    composed = sequential(*[PureDP(bernoulli_sampler_epsilon(n)).to_zcdp()] * d)
    assert rho == pytest.approx(composed.rho, rel=1e-12)


@pytest.mark.parametrize(("rho", "d"), [(0.5, 1), (0.1, 20), (1e-3, 5)])
def test_product_sampler_min_n_is_smallest_n_meeting_rho(rho, d):
    n = product_bernoulli_min_n(rho, d)
    assert n >= 3 * math.sqrt(d / (2 * rho)) - 1e-9
    assert product_bernoulli_sampler_rho(n, d) <= rho < product_bernoulli_sampler_rho(n - 1, d)


def test_product_sampler_draws_independent_clipped_proportions():
    rng = np.random.default_rng(9)
    data = rng.random((300, 4)) < np.array([0.4, 0.5, 0.6, 0.2])
    c = clipped_proportion(data, axis=0)
    assert c[3] == 1 / 3  # the 0.2 column is clipped up
    runs = 200_000
    out = product_bernoulli_sample(data, runs=runs, rng=10)
    assert out.shape == (runs, 4) and out.dtype == np.int8
    assert np.all(np.abs(out.mean(0) - c) <= Z * np.sqrt(c * (1 - c) / runs))
    both = c[0] * c[1]  # a product distribution: coordinates independent
    assert abs((out[:, 0] & out[:, 1]).mean() - both) <= Z * math.sqrt(both * (1 - both) / runs)
    assert product_bernoulli_sample(data, rng=10).shape == (4,)


def test_product_sampler_rejects_non_matrix():
    with pytest.raises(ValueError, match="`data` must be a non-empty array"):
        product_bernoulli_sample(np.zeros(5), rng=0)


def test_bernoulli_samplers_draw_through_the_noise_source_given():
    """A release draws the bits with OpenDP (the draw is the mechanism); a preview with seeded
    numpy, reproducibly; both at the clipped proportions."""
    data = np.tile([[1, 0], [1, 1], [0, 0]], (40, 1))  # proportions 2/3 and 1/3
    seeded = product_bernoulli_sample(data, runs=50, rng=4)
    np.testing.assert_array_equal(seeded, product_bernoulli_sample(data, runs=50, rng=4))
    assert not np.array_equal(seeded, product_bernoulli_sample(data, runs=50, rng=5))
    runs = 3000
    secure = product_bernoulli_sample(data, runs=runs, noise="secure")
    c = clipped_proportion(data, axis=0)
    assert np.all(np.abs(secure.mean(0) - c) <= Z * np.sqrt(c * (1 - c) / runs))
    bits = bernoulli_sample(data[:, 0], runs=runs, noise="secure")
    assert abs(bits.mean() - 2 / 3) <= Z * math.sqrt(2 / 9 / runs)
