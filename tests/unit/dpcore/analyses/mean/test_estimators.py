"""Private mean estimators: Laplace / Gaussian clipped means, CoinPress, stratified strategies.

Expected values are derived by hand in the tests (np.clip on the raw rows, the mechanisms' noise
formulas, a loop-per-replicate CoinPress), never copied from the implementation's output.
Randomized checks are seeded and use tolerances of >= 4 standard errors of the known noise law.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import ndtr

from dpcore.analyses.mean.array_api import (
    ArrayValues,
    coinpress_mean,
    gaussian_mean,
    laplace_mean,
)
from dpcore.analyses.mean.coinpress import CoinPressMean, default_rho_split
from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import (
    global_and_group_means,
    global_only_mean,
    run_strategy,
    stratified_mean,
)
from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.shares import shares_from_counts

R = 20_000  # replicates for the noise-law checks
Z = 4.5  # standard errors of slack in the seeded statistical checks


# ---- fixtures and helpers ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """Three groups of different sizes; uniform(-2, 12) values, so (0, 10) clips both ends."""
    rng = np.random.default_rng(11)
    sizes = {"a": 400, "b": 100, "c": 25}
    return pd.DataFrame(
        {
            "group": np.repeat(list(sizes), list(sizes.values())),
            "value": rng.uniform(-2.0, 12.0, sum(sizes.values())),
        }
    )


@pytest.fixture(scope="module")
def strata(frame: pd.DataFrame) -> GroupValues:
    return GroupValues.from_frame(frame, "group", "value")


def raw_groups(frame: pd.DataFrame, strata: GroupValues) -> list[np.ndarray]:
    """The raw rows of each group, in the order of ``strata.labels``."""
    return [frame.loc[frame["group"] == lab, "value"].to_numpy() for lab in strata.labels]


def clipped_means(frame, strata, low, high) -> np.ndarray:
    lows = np.broadcast_to(low, (strata.k,))
    highs = np.broadcast_to(high, (strata.k,))
    return np.array(
        [
            np.clip(x, lo, hi).mean()
            for x, lo, hi in zip(raw_groups(frame, strata), lows, highs, strict=True)
        ]
    )


def assert_mean_and_var(samples: np.ndarray, mean: np.ndarray, var: np.ndarray, kurt: float):
    """Column means ≈ ``mean`` within Z SE, column variances ≈ ``var`` within Z SE.

    ``kurt`` is the kurtosis of the noise law (3 Gaussian, 6 Laplace): Var(s²) ≈ σ⁴(κ − 1)/R.
    """
    reps = samples.shape[0]
    se_mean = np.sqrt(var / reps)
    np.testing.assert_array_less(np.abs(samples.mean(axis=0) - mean), Z * se_mean)
    rel_se_var = math.sqrt((kurt - 1) / reps)
    np.testing.assert_array_less(np.abs(samples.var(axis=0, ddof=1) / var - 1), Z * rel_se_var)


class RecordingNoise:
    """A deterministic NoiseSource: adds ``offset × scale`` (0 by default) and records the scale.

    With ``offset=1`` the estimate minus the noise-free value is the noise scale *on the released
    mean*, whether the estimator adds noise to the sum or to the mean.
    """

    kind = "simulation"

    def __init__(self, offset: float = 0.0) -> None:
        self.offset = offset
        self.calls: list[tuple[str, np.ndarray]] = []

    def _record(self, family, values, scale):
        values = np.asarray(values, dtype=float)
        scale = np.broadcast_to(scale, values.shape).copy()
        self.calls.append((family, scale))
        return values + self.offset * scale

    def add_laplace(self, values, scale):
        return self._record("laplace", values, scale)

    def add_gaussian(self, values, sigma):
        return self._record("gaussian", values, sigma)


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


# ---- Laplace / Gaussian clipped means ---------------------------------------------------------


def test_laplace_mean_is_unbiased_with_the_stated_scale(frame, strata):
    eps = 0.7
    release = laplace_mean(strata, PureDP(eps), bounds=(0.0, 10.0), rng=1, replicates=R)
    assert release.estimate.shape == (R, strata.k)
    assert release.cost == PureDP(eps)
    b = 10.0 / (strata.sizes * eps)  # (U − L)/(n_g ε)
    assert_mean_and_var(release.estimate, clipped_means(frame, strata, 0, 10), 2 * b**2, kurt=6)


def test_gaussian_mean_is_unbiased_with_the_zcdp_scale(frame, strata):
    rho = 0.3
    release = gaussian_mean(strata, ZCDP(rho), bounds=(0.0, 10.0), rng=2, replicates=R)
    var = (10.0 / strata.sizes) ** 2 / (2 * rho)
    assert_mean_and_var(release.estimate, clipped_means(frame, strata, 0, 10), var, kurt=3)


def test_noise_free_estimate_is_the_clipped_mean_and_scale_is_exact(frame, strata):
    m = clipped_means(frame, strata, 0, 10)
    est = LaplaceMean(bounds=(0.0, 10.0))
    zero = est.group_estimates(strata, PureDP(2.0), replicates=None, noise=RecordingNoise())
    np.testing.assert_allclose(zero, m, rtol=1e-12)
    unit = RecordingNoise(offset=1.0)
    shifted = est.group_estimates(strata, PureDP(2.0), replicates=None, noise=unit)
    assert [family for family, _ in unit.calls] == ["laplace"]
    # one unit of noise moves each group's mean by its Laplace scale (U − L)/(n_g ε)
    np.testing.assert_allclose(shifted - m, 10.0 / (strata.sizes * 2.0), rtol=1e-9)


def test_gaussian_approx_dp_sigma_satisfies_balle_wang(strata):
    """The (ε, δ) σ meets the analytic Gaussian condition with equality (Balle & Wang 2018)."""
    eps, delta = 1.0, 1e-6
    est = GaussianMean(bounds=(0.0, 10.0))
    zero = est.group_estimates(
        strata, ApproxDP(eps, delta), replicates=None, noise=RecordingNoise()
    )
    shifted = est.group_estimates(
        strata, ApproxDP(eps, delta), replicates=None, noise=RecordingNoise(offset=1.0)
    )
    sigma = shifted - zero  # σ on the released mean
    for s, n in zip(sigma, strata.sizes, strict=True):
        sens = 10.0 / n
        got = ndtr(sens / (2 * s) - eps * s / sens) - math.exp(eps) * ndtr(
            -sens / (2 * s) - eps * s / sens
        )
        assert got == pytest.approx(delta, rel=1e-6)


def test_radius_rule_clips_to_paper_interval(frame, strata):
    radius, gamma, eps = 1.0, 0.1, 1.0
    half = radius + np.sqrt(np.log(strata.sizes) / gamma)  # ±(R + sqrt(log n_g / γ))
    assert np.all(half < 12.0)  # the uniform(-2, 12) data really is clipped at the top
    expected = clipped_means(frame, strata, -half, half)
    est = LaplaceMean(radius=radius, gamma=gamma)
    zero = est.group_estimates(strata, PureDP(eps), replicates=None, noise=RecordingNoise())
    np.testing.assert_allclose(zero, expected, rtol=1e-12)
    shifted = est.group_estimates(
        strata, PureDP(eps), replicates=None, noise=RecordingNoise(offset=1.0)
    )
    np.testing.assert_allclose(shifted - zero, 2 * half / (strata.sizes * eps), rtol=1e-9)
    # and statistically, through the public function
    release = laplace_mean(strata, PureDP(eps), radius=radius, gamma=gamma, rng=3, replicates=R)
    b = 2 * half / (strata.sizes * eps)
    assert_mean_and_var(release.estimate, expected, 2 * b**2, kurt=6)


def test_private_sizes_split_the_budget_between_count_and_sum(frame, strata):
    eps = 1.0
    low, high = -5.0, 10.0
    mag = 10.0  # max(|L|, |U|): add/remove sensitivity of the clipped sum
    noise = RecordingNoise()
    est = LaplaceMean(bounds=(low, high), n_public=False).group_estimates(
        strata, PureDP(eps), replicates=None, noise=noise
    )
    np.testing.assert_allclose(est, clipped_means(frame, strata, low, high), rtol=1e-12)
    scales = sorted(float(np.unique(s)[0]) for _, s in noise.calls)
    assert scales == pytest.approx([2 / eps, 2 * mag / eps])  # ε/2 each: count (Δ=1), sum (Δ=10)

    # Variance by the delta method on the big group (n = 400, relative count noise < 1%):
    # Var(S'/n') ≈ (Var(sum noise) + m² Var(count noise)) / n².
    release = laplace_mean(
        strata, PureDP(eps), bounds=(low, high), n_public=False, rng=4, replicates=R
    )
    g = strata.labels.index("a")
    n = strata.sizes[g]
    m = clipped_means(frame, strata, low, high)[g]
    var = (2 * (2 * mag / eps) ** 2 + m**2 * 2 * (2 / eps) ** 2) / n**2
    sample = release.estimate[:, g]
    assert abs(sample.var(ddof=1) / var - 1) < 0.08  # 4 SE of a Laplace variance + delta-method
    assert abs(sample.mean() - m) < Z * math.sqrt(var / R)
    # more than the public-size variance 2((U − L)/(n ε))²: the budget really was halved
    assert sample.var() > 2 * 2 * ((high - low) / (n * eps)) ** 2

    gnoise = RecordingNoise()
    GaussianMean(bounds=(low, high), n_public=False).group_estimates(
        strata, ZCDP(0.5), replicates=None, noise=gnoise
    )
    sigmas = sorted(float(np.unique(s)[0]) for _, s in gnoise.calls)
    # ρ/2 each: σ = Δ/sqrt(2 · ρ/2) = Δ/sqrt(ρ)
    assert sigmas == pytest.approx([1 / math.sqrt(0.5), mag / math.sqrt(0.5)])


def test_private_sizes_refuse_the_radius_rule():
    with pytest.raises(ValueError, match="n_public"):
        LaplaceMean(radius=1.0, n_public=False)
    with pytest.raises(ValueError, match="bounds"):
        LaplaceMean()  # neither bounds nor radius
    with pytest.raises(ValueError, match="radius"):
        LaplaceMean(bounds=(0.0, 1.0), radius=1.0)


@pytest.mark.parametrize(
    ("call", "budget"),
    [
        (lambda d, b: laplace_mean(d, b, bounds=(0.0, 1.0)), ZCDP(0.5)),
        (lambda d, b: laplace_mean(d, b, bounds=(0.0, 1.0)), ApproxDP(1.0, 1e-6)),
        (lambda d, b: laplace_mean(d, b, bounds=(0.0, 1.0)), 1.0),
        (lambda d, b: gaussian_mean(d, b, bounds=(0.0, 1.0)), PureDP(1.0)),
        (lambda d, b: gaussian_mean(d, b, bounds=(0.0, 1.0)), 0.5),
        (lambda d, b: coinpress_mean(d, b, prior=(-1.0, 1.0), sigma=1.0), PureDP(1.0)),
    ],
)
def test_wrong_budget_type_raises_type_error(call, budget):
    with pytest.raises(TypeError, match="`budget`"):
        call(np.array([0.1, 0.5, 0.9]), budget)


@pytest.mark.parametrize(
    "bounds",
    [(1.0, 1.0), (2.0, 1.0), (math.nan, 1.0), (0.0, math.nan), (0.0, math.inf), (-math.inf, 0.0)],
)
@pytest.mark.parametrize("cls", [LaplaceMean, GaussianMean])
def test_bad_bounds_raise_value_error(cls, bounds):
    with pytest.raises(ValueError, match="bounds"):
        cls(bounds=bounds)


def test_bad_coinpress_prior_raises():
    with pytest.raises(ValueError, match="bounds"):
        CoinPressMean(prior=(1.0, -1.0), sigma=1.0)


def test_array_input_returns_float_and_replicates_shape():
    values = np.array([1.0, 2.0, 3.0, 4.0])
    one = laplace_mean(values, PureDP(1.0), bounds=(0.0, 5.0), rng=0)
    assert isinstance(one.estimate, float)
    many = laplace_mean(values, PureDP(1.0), bounds=(0.0, 5.0), rng=0, replicates=7)
    assert many.estimate.shape == (7,)
    gauss = gaussian_mean(values, ZCDP(1.0), bounds=(0.0, 5.0), rng=0, replicates=3)
    assert gauss.estimate.shape == (3,)


def test_same_seed_same_numbers_different_seed_different_numbers():
    values = np.linspace(0, 1, 50)
    a = laplace_mean(values, PureDP(1.0), bounds=(0.0, 1.0), rng=42, replicates=5).estimate
    b = laplace_mean(values, PureDP(1.0), bounds=(0.0, 1.0), rng=42, replicates=5).estimate
    c = laplace_mean(values, PureDP(1.0), bounds=(0.0, 1.0), rng=43, replicates=5).estimate
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    gen = np.random.default_rng(42)
    d = laplace_mean(values, PureDP(1.0), bounds=(0.0, 1.0), rng=gen, replicates=5).estimate
    np.testing.assert_array_equal(a, d)


def test_secure_noise_works_and_refuses_a_seed():
    values = np.linspace(0.0, 10.0, 101)  # mean 5
    release = laplace_mean(values, PureDP(1.0), bounds=(0.0, 10.0), noise="secure")
    assert isinstance(release.estimate, float)
    b = 10.0 / 101
    assert abs(release.estimate - 5.0) < 40 * b  # P(|Lap(b)| > 40 b) = e^-40
    gauss = gaussian_mean(values, ZCDP(1.0), bounds=(0.0, 10.0), noise="secure")
    assert abs(gauss.estimate - 5.0) < 12 * (10.0 / 101) / math.sqrt(2.0)
    with pytest.raises(ValueError, match="rng"):
        laplace_mean(values, PureDP(1.0), bounds=(0.0, 10.0), noise="secure", rng=0)


# ---- CoinPress ---------------------------------------------------------------------------------


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


# ---- a raw array: clipped afresh at each step, without a sort (issue 16, speed) ----------------


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


# ---- stratified and vanilla strategies --------------------------------------------------------


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
