"""Unit tests for ``dpcore.foundations.mechanisms``: noise scales, vectorized draws, noise sources, and
empirical privacy checks on neighbouring inputs.

Expected values come from the published formulas (Dwork & Roth 2014; Bun & Steinke 2016;
Balle & Wang 2018) evaluated independently in the test, and from exact sampling distributions.
All randomized checks use fixed seeds, except :class:`SecureNoise`, which cannot be seeded by
design; its tolerances are chosen so that a false failure has probability < 1e-8.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpcore.analyses.mean import laplace_mean
from dpcore.foundations.accounting import PureDP
from dpcore.foundations.mechanisms import (
    SecureNoise,
    SimulationNoise,
    as_noise_source,
    gaussian_noise,
    gaussian_sigma,
    laplace_noise,
    laplace_scale,
    noise_source,
    zcdp_gaussian_sigma,
)
from tests.hypothesis_settings import HYPOTHESIS

# Two-sided tail probability for the exact distributional checks below.
TAIL = 1e-7


def balle_wang_delta(sensitivity: float, sigma: float, eps: float) -> float:
    """Balle & Wang (2018, Thm. 8): the exact δ(ε) of N(0, σ²) noise at L2 sensitivity Δ.

    δ = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ), the second term in log space for accuracy.
    """
    a = sensitivity / (2 * sigma) - eps * sigma / sensitivity
    b = -sensitivity / (2 * sigma) - eps * sigma / sensitivity
    return float(stats.norm.cdf(a) - math.exp(eps + stats.norm.logcdf(b)))


# ---------------------------------------------------------------------------------------------
# Noise scales
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sensitivity", "epsilon", "expected"), [(1, 1, 1.0), (2, 0.5, 4.0), (0.5, 2, 0.25)]
)
def test_laplace_scale_known_values(sensitivity, epsilon, expected):
    assert laplace_scale(sensitivity, epsilon) == expected


@HYPOTHESIS
@given(sensitivity=st.floats(1e-6, 1e6), epsilon=st.floats(1e-6, 1e3))
def test_laplace_scale_is_sensitivity_over_epsilon(sensitivity, epsilon):
    assert laplace_scale(sensitivity, epsilon) == pytest.approx(sensitivity / epsilon, rel=1e-15)


@pytest.mark.parametrize(
    ("sensitivity", "rho", "expected"), [(1, 0.5, 1.0), (3, 2, 1.5), (2, 0.125, 4.0)]
)
def test_zcdp_gaussian_sigma_known_values(sensitivity, rho, expected):
    assert zcdp_gaussian_sigma(sensitivity, rho) == pytest.approx(expected, rel=1e-15)


@HYPOTHESIS
@given(sensitivity=st.floats(1e-6, 1e6), rho=st.floats(1e-6, 1e3))
def test_zcdp_gaussian_sigma_gives_back_rho(sensitivity, rho):
    # Bun & Steinke Prop. 1.6: N(0, σ²) on sensitivity Δ is Δ²/(2σ²)-zCDP.
    sigma = zcdp_gaussian_sigma(sensitivity, rho)
    assert sensitivity**2 / (2 * sigma**2) == pytest.approx(rho, rel=1e-12)


@pytest.mark.parametrize(
    ("sensitivity", "epsilon", "delta"), [(1, 0.5, 1e-5), (2, 0.1, 1e-9), (0.3, 0.999, 0.01)]
)
def test_gaussian_sigma_classic_formula(sensitivity, epsilon, delta):
    expected = sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    assert gaussian_sigma(sensitivity, epsilon, delta) == pytest.approx(expected, rel=1e-14)
    assert gaussian_sigma(sensitivity, epsilon, delta, method="classic") == pytest.approx(
        expected, rel=1e-14
    )


@pytest.mark.parametrize("epsilon", [1, 1.0, 1.5, 10])
def test_gaussian_sigma_classic_refuses_epsilon_at_least_one(epsilon):
    with pytest.raises(ValueError, match="analytic") as info:
        gaussian_sigma(1.0, epsilon, 1e-5, method="classic")
    assert "`epsilon`" in str(info.value)


@settings(HYPOTHESIS, max_examples=200)
@given(
    sensitivity=st.floats(1e-3, 1e3),
    epsilon=st.floats(1e-3, 20),
    delta=st.floats(1e-12, 0.5),
)
def test_gaussian_sigma_analytic_meets_balle_wang_with_equality(sensitivity, epsilon, delta):
    sigma = gaussian_sigma(sensitivity, epsilon, delta, method="analytic")
    assert balle_wang_delta(sensitivity, sigma, epsilon) == pytest.approx(delta, rel=1e-6)
    # Smallest such σ: δ(σ) is decreasing, so slightly less noise must exceed δ.
    assert balle_wang_delta(sensitivity, sigma * (1 - 1e-4), epsilon) > delta


@HYPOTHESIS
@given(epsilon=st.floats(1e-3, 0.999), delta=st.floats(1e-12, 0.5))
def test_gaussian_sigma_analytic_is_at_most_classic(epsilon, delta):
    analytic = gaussian_sigma(1.0, epsilon, delta, method="analytic")
    classic = gaussian_sigma(1.0, epsilon, delta, method="classic")
    assert analytic <= classic
    # And the classic σ is itself valid by Balle & Wang, as it must be for ε < 1.
    assert balle_wang_delta(1.0, classic, epsilon) <= delta * (1 + 1e-9)


def test_gaussian_sigma_analytic_reference_value():
    # Typical release: ε = 0.5, δ = 1e-5. The classic σ is √(2 ln 125000)/0.5 ≈ 9.69; the analytic
    # one is noticeably smaller (≈ 7.03 by Balle & Wang's Table/Figure regime).
    analytic = gaussian_sigma(1.0, 0.5, 1e-5, method="analytic")
    assert gaussian_sigma(1.0, 0.5, 1e-5) == pytest.approx(9.6896, abs=1e-3)
    assert 6.9 < analytic < 7.2


@HYPOTHESIS
@given(
    sensitivity=st.floats(1e-3, 1e3),
    epsilon=st.floats(1e-2, 10),
    delta=st.floats(1e-10, 0.1),
)
def test_gaussian_sigma_analytic_scales_linearly_with_sensitivity(sensitivity, epsilon, delta):
    unit = gaussian_sigma(1.0, epsilon, delta, method="analytic")
    assert gaussian_sigma(sensitivity, epsilon, delta, method="analytic") == pytest.approx(
        sensitivity * unit, rel=1e-9
    )


BAD_POSITIVE = [math.nan, math.inf, -math.inf, 0, -1.0]
BAD_DELTA = [0, 1, 1.0, 1.5, -0.1, math.nan, math.inf]
WRONG_TYPES = ["1", None, True, [1.0]]


def _scale_calls():
    """(function of one bad value, parameter name) for every scale function and argument."""
    yield (lambda v: laplace_scale(v, 1.0)), "sensitivity"
    yield (lambda v: laplace_scale(1.0, v)), "epsilon"
    yield (lambda v: zcdp_gaussian_sigma(v, 0.5)), "sensitivity"
    yield (lambda v: zcdp_gaussian_sigma(1.0, v)), "rho"
    for method in ("classic", "analytic"):
        yield (lambda v, m=method: gaussian_sigma(v, 0.5, 1e-5, m)), "sensitivity"
        yield (lambda v, m=method: gaussian_sigma(1.0, v, 1e-5, m)), "epsilon"


_SCALE_CALLS = list(_scale_calls())


@pytest.mark.parametrize("value", BAD_POSITIVE, ids=repr)
@pytest.mark.parametrize(("call", "param"), _SCALE_CALLS)
def test_scale_functions_reject_bad_values(call, param, value):
    with pytest.raises(ValueError, match=f"`{param}`") as info:
        call(value)
    assert repr(float(value)) in str(info.value)


@pytest.mark.parametrize("value", WRONG_TYPES, ids=repr)
@pytest.mark.parametrize(("call", "param"), _SCALE_CALLS)
def test_scale_functions_reject_wrong_types(call, param, value):
    with pytest.raises(TypeError, match=f"`{param}`"):
        call(value)


@pytest.mark.parametrize("delta", BAD_DELTA, ids=repr)
@pytest.mark.parametrize("method", ["classic", "analytic"])
def test_gaussian_sigma_rejects_bad_delta(method, delta):
    with pytest.raises(ValueError, match="`delta`"):
        gaussian_sigma(1.0, 0.5, delta, method=method)


@pytest.mark.parametrize("method", ["Analytic", "exact", "", None, 1])
def test_gaussian_sigma_rejects_unknown_method(method):
    with pytest.raises((ValueError, TypeError), match="`method`"):
        gaussian_sigma(1.0, 0.5, 1e-5, method=method)


# ---------------------------------------------------------------------------------------------
# Vectorized draws
# ---------------------------------------------------------------------------------------------

DRAWS = [laplace_noise, gaussian_noise]


@pytest.mark.parametrize("draw", DRAWS)
def test_draw_shapes(draw):
    assert draw(2.0, (500, 4), rng=0).shape == (500, 4)
    assert draw(2.0, 7, rng=0).shape == (7,)
    assert np.ndim(draw(2.0, rng=0)) == 0
    scales = np.array([0.5, 2.0, 8.0])
    assert draw(scales, (1000, 3), rng=0).shape == (1000, 3)
    assert draw(scales, rng=0).shape == (3,)
    with pytest.raises(ValueError):  # (3,) does not broadcast against (10, 4)
        draw(scales, (10, 4), rng=0)


@pytest.mark.parametrize("draw", DRAWS)
def test_same_seed_same_draws_different_seed_different_draws(draw):
    a = draw(1.5, (200, 3), rng=42)
    b = draw(1.5, (200, 3), rng=42)
    c = draw(1.5, (200, 3), rng=43)
    np.testing.assert_array_equal(a, b)
    assert not np.any(a == c)
    # A Generator seeded the same way yields the same stream as the int seed, and is advanced.
    gen = np.random.default_rng(42)
    np.testing.assert_array_equal(draw(1.5, (200, 3), rng=gen), a)
    assert not np.any(draw(1.5, (200, 3), rng=gen) == a)


@pytest.mark.parametrize("draw", DRAWS)
def test_rng_is_keyword_only(draw):
    with pytest.raises(TypeError):
        draw(1.0, 10, 0)
    assert "rng" in inspect.signature(draw).parameters
    assert inspect.signature(draw).parameters["rng"].kind is inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("rng", ["0", 1.5, True, object()])
@pytest.mark.parametrize("draw", DRAWS)
def test_bad_rng_raises_type_error(draw, rng):
    with pytest.raises(TypeError, match="`rng`"):
        draw(1.0, 10, rng=rng)


@pytest.mark.parametrize(
    "scale",
    [0, 0.0, -1.0, math.nan, math.inf, np.array([1.0, -1.0]), np.array([1.0, np.nan]), []],
    ids=repr,
)
@pytest.mark.parametrize(("draw", "param"), [(laplace_noise, "scale"), (gaussian_noise, "sigma")])
def test_bad_scale_raises_value_error(draw, param, scale):
    with pytest.raises(ValueError, match=f"`{param}`"):
        draw(scale, 10, rng=0)


def _assert_laplace_scale(x: np.ndarray, b: float) -> None:
    """Exact test: for X ~ Laplace(0, b), |X| ~ Exp(b), so Σ|X|/b ~ Gamma(N, 1)."""
    n = x.size
    total = np.abs(x).sum() / b
    assert stats.gamma.ppf(TAIL, n) < total < stats.gamma.isf(TAIL, n)


def _assert_gaussian_sigma(x: np.ndarray, sigma: float) -> None:
    """Exact test: for X ~ N(0, σ²), ΣX²/σ² ~ χ²(N)."""
    n = x.size
    total = np.square(x).sum() / sigma**2
    assert stats.chi2.ppf(TAIL, n) < total < stats.chi2.isf(TAIL, n)


N_MOMENTS = 400_000


@pytest.mark.parametrize("b", [0.01, 1.0, 37.5])
def test_laplace_moments(b):
    x = laplace_noise(b, N_MOMENTS, rng=20240601)
    _assert_laplace_scale(x, b)
    # Variance 2b²: Var(s²) ≈ (μ4 − σ⁴)/N = (24 − 4)b⁴/N, so s²/(2b²) has sd √5/√N ≈ 0.0035.
    assert abs(x.var() / (2 * b**2) - 1) < 6 * math.sqrt(5 / N_MOMENTS)
    assert abs(x.mean()) < 6 * math.sqrt(2) * b / math.sqrt(N_MOMENTS)
    # Power: the same checks reject a scale off by √2 (variance off by 2).
    with pytest.raises(AssertionError):
        _assert_laplace_scale(x, b * math.sqrt(2))
    with pytest.raises(AssertionError):
        _assert_laplace_scale(x, b / math.sqrt(2))


@pytest.mark.parametrize("sigma", [0.01, 1.0, 37.5])
def test_gaussian_moments(sigma):
    x = gaussian_noise(sigma, N_MOMENTS, rng=20240602)
    _assert_gaussian_sigma(x, sigma)
    # Sample variance: (N−1)s²/σ² ~ χ²(N−1).
    n = N_MOMENTS
    stat = (n - 1) * x.var(ddof=1) / sigma**2
    assert stats.chi2.ppf(TAIL, n - 1) < stat < stats.chi2.isf(TAIL, n - 1)
    assert abs(x.mean()) < 6 * sigma / math.sqrt(n)
    # Gaussian, not Laplace: excess kurtosis ≈ 0 (sd ≈ √(24/N) ≈ 0.008), Laplace would give 3.
    assert abs(stats.kurtosis(x)) < 6 * math.sqrt(24 / n)
    with pytest.raises(AssertionError):
        _assert_gaussian_sigma(x, sigma * math.sqrt(2))
    with pytest.raises(AssertionError):
        _assert_gaussian_sigma(x, sigma / math.sqrt(2))


@pytest.mark.parametrize(
    ("draw", "check"),
    [(laplace_noise, _assert_laplace_scale), (gaussian_noise, _assert_gaussian_sigma)],
)
def test_array_scale_applies_per_column(draw, check):
    scales = np.array([0.5, 2.0, 8.0])
    x = draw(scales, (100_000, 3), rng=7)
    for j, s in enumerate(scales):
        check(x[:, j], s)
    # The columns really differ (guards against the scale being applied to the wrong axis).
    with pytest.raises(AssertionError):
        check(x[:, 0], scales[2])


# ---------------------------------------------------------------------------------------------
# Privacy on neighbouring inputs
# ---------------------------------------------------------------------------------------------
#
# A sum query with sensitivity Δ: D and D′ differ in one record, so f(D′) = f(D) + Δ. For each
# test set S we estimate p = P[M(D) ∈ S] and p′ = P[M(D′) ∈ S] from N independent draws each and
# check  p̂ ≤ e^ε p̂′ + δ + slack  (and with D, D′ swapped).
#
# Slack: the binomial standard errors of the two sides are se = √(p̂(1−p̂)/N) and
# e^ε·√(p̂′(1−p̂′)/N). We allow 4·(se + e^ε se′). Since se + e^ε se′ ≥ √(se² + (e^ε se′)²), this is
# at least 4 standard errors of the difference, so a sound mechanism fails a single comparison
# with probability < 3.2e-5 (and the seed is fixed, so the test is deterministic anyway). Sets
# are restricted to probabilities ≳ 1e-3 (thousands of hits), where the normal approximation of
# the binomial is good. The negative controls show that this slack still detects a mechanism
# whose noise is too small.

N_PRIVACY = 200_000
F_D = 10.0  # f(D); f(D′) = f(D) + Δ


def _test_sets(centre: float, scale: float) -> list[tuple[float, float]]:
    """Half-lines (−∞, t] and intervals (a, b] around the two true answers, in noise units."""
    ts = centre + scale * np.linspace(-5, 5, 41)
    half_lines = [(-math.inf, float(t)) for t in ts]
    intervals = [
        (centre + scale * lo, centre + scale * hi)
        for lo, hi in [(-0.25, 0.25), (-1, 1), (-3, -1), (1, 3), (-0.5, 4), (-4, 0.5), (2, 6)]
    ]
    intervals += [(-2 * scale + F_D, F_D), (F_D, F_D + 0.1 * scale)]
    return half_lines + intervals


def _probabilities(sorted_x: np.ndarray, sets: list[tuple[float, float]]) -> np.ndarray:
    lo = np.array([a for a, _ in sets])
    hi = np.array([b for _, b in sets])
    counts = np.searchsorted(sorted_x, hi, side="right") - np.searchsorted(
        sorted_x, lo, side="right"
    )
    return counts / sorted_x.size


def privacy_violations(x_d, x_dprime, eps, delta, sets):
    """All (S, direction, excess) with p̂_A(S) − e^ε p̂_B(S) − δ > slack, for A, B = D, D′ and D′, D."""
    n_a, n_b = x_d.size, x_dprime.size
    p = _probabilities(np.sort(x_d), sets)
    q = _probabilities(np.sort(x_dprime), sets)
    found = []
    for name, pa, pb, na, nb in (("D vs D'", p, q, n_a, n_b), ("D' vs D", q, p, n_b, n_a)):
        slack = 4 * (np.sqrt(pa * (1 - pa) / na) + math.exp(eps) * np.sqrt(pb * (1 - pb) / nb))
        excess = pa - math.exp(eps) * pb - delta - slack
        found += [(sets[i], name, float(excess[i])) for i in np.flatnonzero(excess > 0)]
    return found


def _laplace_outputs(sensitivity, b, seed):
    rng = np.random.default_rng(seed)
    x_d = F_D + laplace_noise(b, N_PRIVACY, rng=rng)
    x_dprime = F_D + sensitivity + laplace_noise(b, N_PRIVACY, rng=rng)
    return x_d, x_dprime


def _gaussian_outputs(sensitivity, sigma, seed):
    rng = np.random.default_rng(seed)
    x_d = F_D + gaussian_noise(sigma, N_PRIVACY, rng=rng)
    x_dprime = F_D + sensitivity + gaussian_noise(sigma, N_PRIVACY, rng=rng)
    return x_d, x_dprime


@pytest.mark.parametrize(("sensitivity", "eps"), [(1.0, 0.5), (1.0, 1.0), (5.0, 2.0), (0.1, 0.1)])
def test_laplace_mechanism_is_eps_dp_on_neighbours(sensitivity, eps):
    b = laplace_scale(sensitivity, eps)
    x_d, x_dprime = _laplace_outputs(sensitivity, b, seed=1000 + int(10 * eps))
    sets = _test_sets(F_D + sensitivity / 2, b)
    assert privacy_violations(x_d, x_dprime, eps, 0.0, sets) == []
    # The test is not vacuous: on the far tails the likelihood ratio is exactly e^ε, so the
    # tightest set is within a few standard errors of the bound.
    p = _probabilities(np.sort(x_d), sets)
    q = _probabilities(np.sort(x_dprime), sets)
    assert np.max(p - math.exp(eps) * q) > -0.01


@pytest.mark.parametrize("factor", [3.0, 1.5])
@pytest.mark.parametrize(("sensitivity", "eps"), [(1.0, 0.5), (1.0, 1.0), (5.0, 2.0)])
def test_negative_control_laplace_with_too_little_noise_is_detected(sensitivity, eps, factor):
    b = laplace_scale(sensitivity, eps) / factor  # the mechanism is only (factor·ε)-DP
    x_d, x_dprime = _laplace_outputs(sensitivity, b, seed=2000 + int(10 * eps))
    sets = _test_sets(F_D + sensitivity / 2, b)
    assert privacy_violations(x_d, x_dprime, eps, 0.0, sets) != []


@pytest.mark.parametrize(
    ("sensitivity", "eps", "delta"), [(1.0, 0.5, 1e-3), (1.0, 1.0, 1e-5), (3.0, 2.0, 1e-2)]
)
def test_gaussian_mechanism_is_eps_delta_dp_on_neighbours(sensitivity, eps, delta):
    sigma = gaussian_sigma(sensitivity, eps, delta, method="analytic")
    x_d, x_dprime = _gaussian_outputs(sensitivity, sigma, seed=3000 + int(10 * eps))
    sets = _test_sets(F_D + sensitivity / 2, sigma)
    assert privacy_violations(x_d, x_dprime, eps, delta, sets) == []


@pytest.mark.parametrize(
    ("sensitivity", "eps", "delta"), [(1.0, 0.5, 1e-3), (1.0, 1.0, 1e-5), (3.0, 2.0, 1e-2)]
)
def test_negative_control_gaussian_with_too_little_noise_is_detected(sensitivity, eps, delta):
    sigma = gaussian_sigma(sensitivity, eps, delta, method="analytic") / 3
    x_d, x_dprime = _gaussian_outputs(sensitivity, sigma, seed=4000 + int(10 * eps))
    sets = _test_sets(F_D + sensitivity / 2, sigma)
    assert privacy_violations(x_d, x_dprime, eps, delta, sets) != []


# ---------------------------------------------------------------------------------------------
# Noise sources
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["add_laplace", "add_gaussian"])
def test_simulation_and_secure_noise_share_the_interface(method):
    assert inspect.signature(getattr(SimulationNoise, method)) == inspect.signature(
        getattr(SecureNoise, method)
    )
    assert SimulationNoise.kind == "simulation"
    assert SecureNoise.kind == "secure"


def test_noise_source_factory():
    assert isinstance(noise_source("simulation", rng=0), SimulationNoise)
    assert isinstance(noise_source("simulation"), SimulationNoise)
    assert isinstance(noise_source("secure"), SecureNoise)
    assert noise_source("secure").kind == "secure"
    with pytest.raises(ValueError, match="`rng`"):
        noise_source("secure", rng=0)
    with pytest.raises(ValueError, match="`rng`"):
        noise_source("secure", rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="`kind`"):
        noise_source("Simulation")


@pytest.mark.parametrize("method", ["add_laplace", "add_gaussian"])
def test_simulation_noise_is_reproducible(method):
    values = np.arange(12.0).reshape(3, 4)
    a = getattr(noise_source("simulation", rng=0), method)(values, 2.0)
    b = getattr(noise_source("simulation", rng=0), method)(values, 2.0)
    c = getattr(noise_source("simulation", rng=1), method)(values, 2.0)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.shape == values.shape
    # Successive calls on one source continue the stream instead of repeating it.
    src = noise_source("simulation", rng=0)
    assert not np.array_equal(getattr(src, method)(values, 2.0), getattr(src, method)(values, 2.0))


def test_simulation_noise_adds_centred_noise_of_the_right_scale():
    values = np.full(200_000, 5.0)
    src = SimulationNoise(rng=11)
    _assert_laplace_scale(src.add_laplace(values, 3.0) - values, 3.0)
    _assert_gaussian_sigma(src.add_gaussian(values, 3.0) - values, 3.0)
    per_element = np.repeat([1.0, 100.0], 100_000)
    out = src.add_laplace(np.zeros(200_000), per_element)
    _assert_laplace_scale(out[:100_000], 1.0)
    _assert_laplace_scale(out[100_000:], 100.0)


SECURE_N = 2000

# The first OpenDP call pays a one-off import of the library (2–4 s), so every test that reaches
# OpenDP's samplers is marked slow.


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "std_of_unit_scale"), [("add_laplace", math.sqrt(2)), ("add_gaussian", 1.0)]
)
def test_secure_noise_spread_matches_per_element_scales(method, std_of_unit_scale):
    # Unseedable, so this is a genuinely random test: the sample sd of 2000 draws has relative
    # sd ≈ √5/(2√2000) ≈ 0.025 for Laplace (0.016 Gaussian), so 15% is ≥ 6 standard deviations.
    scales = np.repeat([1.0, 100.0], SECURE_N)
    out = getattr(SecureNoise(), method)(np.zeros(2 * SECURE_N), scales)
    assert out.shape == (2 * SECURE_N,)
    for i, b in enumerate([1.0, 100.0]):
        part = out[i * SECURE_N : (i + 1) * SECURE_N]
        target = std_of_unit_scale * b
        assert abs(part.std() / target - 1) < 0.15
        assert abs(part.mean()) < 6 * target / math.sqrt(SECURE_N)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["add_laplace", "add_gaussian"])
def test_secure_noise_keeps_shape_and_centres_on_values(method):
    values = np.array([[0.0, 1000.0, -1000.0], [5.0, 6.0, 7.0]])
    out = getattr(SecureNoise(), method)(values, np.array([0.01, 0.02, 0.03]))
    assert out.shape == values.shape
    assert out.dtype == np.float64
    # Noise of scale ≤ 0.03 keeps every value within 1 of its input (P[fail] < 1e-13 per entry).
    assert np.all(np.abs(out - values) < 1.0)
    scalar_scale = getattr(SecureNoise(), method)([1.0, 2.0], 0.01)
    assert scalar_scale.shape == (2,)


@pytest.mark.slow
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("method", ["add_laplace", "add_gaussian"])
def test_secure_noise_refuses_non_finite_values(method, bad):
    with pytest.raises(ValueError, match="`values`"):
        getattr(SecureNoise(), method)(np.array([0.0, bad, 1.0]), 1.0)


@pytest.mark.parametrize(("method", "param"), [("add_laplace", "scale"), ("add_gaussian", "sigma")])
@pytest.mark.parametrize("scale", [0.0, -1.0, math.nan, np.array([1.0, 0.0])], ids=repr)
def test_both_sources_refuse_bad_scales(method, param, scale):
    for src in (SimulationNoise(rng=0), SecureNoise()):
        with pytest.raises(ValueError, match=f"`{param}`"):
            getattr(src, method)(np.zeros(2), scale)


def test_as_noise_source_is_the_one_normaliser():
    source = SimulationNoise(rng=0)
    assert as_noise_source(source) is source
    assert isinstance(as_noise_source(None, rng=1), SimulationNoise)
    assert isinstance(as_noise_source("simulation", rng=1), SimulationNoise)
    # A caller's generator is for its post-processing; a seed would promise reproducible noise.
    assert isinstance(as_noise_source("secure", rng=np.random.default_rng(0)), SecureNoise)
    with pytest.raises(ValueError, match="cannot be seeded"):
        as_noise_source("secure", rng=3)
    with pytest.raises(ValueError, match="`noise` must be"):
        as_noise_source("fast")
    with pytest.raises(TypeError, match="`noise` must be a NoiseSource"):
        as_noise_source(object())


def test_public_mean_functions_refuse_a_seed_with_secure_noise():
    with pytest.raises(ValueError, match="cannot be seeded"):
        laplace_mean(np.arange(10.0), PureDP(1.0), bounds=(0.0, 10.0), rng=3, noise="secure")
