"""Private mean estimators: Laplace / Gaussian clipped means, their scales, private sizes, the
radius rule, and the errors and seeding of every estimator.

Expected values are derived by hand in the tests (np.clip on the raw rows, the mechanisms' noise
formulas), never copied from the implementation's output. Randomized checks are seeded and use
tolerances of >= 4 standard errors of the known noise law. CoinPress, raw arrays and the
stratified strategies have their own files.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtr

from dpcore.analyses.mean.array_api import coinpress_mean, gaussian_mean, laplace_mean
from dpcore.analyses.mean.coinpress import CoinPressMean
from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP
from tests.unit.dpcore.analyses.mean.helpers import R, Z, assert_mean_and_var, clipped_means


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
