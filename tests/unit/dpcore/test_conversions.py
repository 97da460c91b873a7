"""Conversions between budgets in ``dpcore.foundations.accounting``: ε-DP to ρ-zCDP and ρ-zCDP to
(ε, δ)-DP, against references derived independently from the published formulas (Bun & Steinke
2016; Canonne, Kamath & Steinke 2020; Balle & Wang 2018)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import log_ndtr, ndtr

from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP
from tests.hypothesis_settings import HYPOTHESIS


def _log_alpha_grid(lo: float, hi: float, n: int) -> np.ndarray:
    return np.linspace(lo, hi, n)


def _cks_log_delta(rho: float, eps: float, log_am1: np.ndarray) -> np.ndarray:
    """log of exp((α−1)(αρ−ε)) / (α−1) · (1−1/α)^α at α = 1 + exp(log_am1) (CKS 2020, Cor. 13)."""
    am1 = np.exp(log_am1)
    alpha = 1.0 + am1
    return am1 * (alpha * rho - eps) - log_am1 + alpha * np.log1p(-1.0 / alpha)


def _grid_min(fun, lo: float = -25.0, hi: float = 25.0) -> float:
    """Minimum of ``fun`` over a dense grid in log(α−1), refined twice around the best point.

    A grid minimum is an upper bound on the infimum; the refinements make it tight to ~1e-12.
    """
    for _ in range(3):
        grid = _log_alpha_grid(lo, hi, 20001)
        values = fun(grid)
        i = int(np.nanargmin(values))
        step = grid[1] - grid[0]
        best = float(values[i])
        lo, hi = grid[i] - 2 * step, grid[i] + 2 * step
    return best


def cks_delta(rho: float, eps: float) -> float:
    """δ_CKS(ε) = inf over α > 1 of the CKS bound, by dense grid search in log space."""
    return math.exp(_grid_min(lambda g: _cks_log_delta(rho, eps, g)))


def cks_optimal_epsilon(rho: float, delta: float) -> float:
    """min over α > 1 of ε(α) solving the CKS bound for ε, by dense grid search."""

    def eps_at(log_am1: np.ndarray) -> np.ndarray:
        am1 = np.exp(log_am1)
        alpha = 1.0 + am1
        # (α−1)(αρ−ε) − log(α−1) + α log(1−1/α) = log δ, solved for ε.
        return alpha * rho + (alpha * np.log1p(-1.0 / alpha) - log_am1 - math.log(delta)) / am1

    return _grid_min(eps_at)


def gaussian_exact_delta(sigma: float, eps: float) -> float:
    """Balle & Wang (2018, Thm. 8): exact δ(ε) of the sensitivity-1 Gaussian mechanism."""
    a = 1 / (2 * sigma) - eps * sigma
    b = -1 / (2 * sigma) - eps * sigma
    return float(ndtr(a) - math.exp(eps + log_ndtr(b)))


def classic_zcdp_epsilon(rho: float, delta: float) -> float:
    """Bun & Steinke (2016, Prop. 1.3): ρ-zCDP ⇒ (ρ + 2√(ρ ln(1/δ)), δ)-DP."""
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))


@pytest.mark.parametrize(("eps", "rho"), [(1.0, 0.5), (2.0, 2.0), (0.5, 0.125), (3.0, 4.5)])
def test_pure_to_zcdp_known_values(eps, rho):
    # ε²/2 is exact in binary for these ε, so equality is exact.
    assert PureDP(eps).to_zcdp() == ZCDP(rho)


@HYPOTHESIS
@given(eps=st.floats(1e-6, 1e3))
def test_pure_to_zcdp_is_half_epsilon_squared(eps):
    converted = PureDP(eps).to_zcdp()
    assert isinstance(converted, ZCDP)
    assert converted.rho == pytest.approx(eps * eps / 2, rel=1e-15)


@settings(HYPOTHESIS, max_examples=150)
@given(rho=st.floats(1e-4, 50), delta=st.floats(1e-12, 0.1))
def test_zcdp_to_approx_is_never_looser_than_classic_and_is_sound(rho, delta):
    converted = ZCDP(rho).to_approx_dp(delta)
    assert isinstance(converted, ApproxDP)
    assert converted.delta == delta
    assert converted.epsilon <= classic_zcdp_epsilon(rho, delta)
    # Soundness (CKS 2020): the δ the theorem guarantees at the returned ε is at most δ.
    assert cks_delta(rho, converted.epsilon) <= delta * (1 + 1e-6)
    # Sanity against a concrete ρ-zCDP mechanism: the Gaussian with σ = 1/√(2ρ) must itself be
    # (ε, δ)-DP at the returned ε, by Balle & Wang's exact characterisation.
    sigma = 1 / math.sqrt(2 * rho)
    assert gaussian_exact_delta(sigma, converted.epsilon) <= delta * (1 + 1e-6)


@pytest.mark.parametrize(("rho", "delta"), [(0.00390625, 0.0625), (0.01, 0.1), (1e-4, 0.01)])
def test_zcdp_to_approx_when_cks_optimum_is_not_positive(rho, delta):
    assert cks_optimal_epsilon(rho, delta) <= 0  # the corner case, established independently
    converted = ZCDP(rho).to_approx_dp(delta)
    assert converted.delta == delta
    assert 0 < converted.epsilon <= classic_zcdp_epsilon(rho, delta)
    assert cks_delta(rho, converted.epsilon) <= delta * (1 + 1e-6)


@settings(HYPOTHESIS, max_examples=60)
@given(rho=st.floats(1e-4, 50), delta=st.floats(1e-12, 0.1))
def test_zcdp_to_approx_is_the_optimal_cks_epsilon(rho, delta):
    # Tightness: not worse than a dense grid search of the same theorem (a grid minimum is an
    # upper bound on the true minimum, so a returned ε above it would be a missed optimum).
    eps = ZCDP(rho).to_approx_dp(delta).epsilon
    optimum = cks_optimal_epsilon(rho, delta)
    # A non-positive optimum is clamped to the smallest ε the module returns (1e-12).
    assert eps <= max(optimum * (1 + 1e-9), 1e-12)


@pytest.mark.parametrize(("rho", "delta"), [(0.5, 1e-5), (0.1, 1e-6), (1.0, 1e-9), (0.01, 1e-3)])
def test_zcdp_to_approx_is_strictly_tighter_than_classic_for_typical_values(rho, delta):
    eps = ZCDP(rho).to_approx_dp(delta).epsilon
    classic = classic_zcdp_epsilon(rho, delta)
    assert eps < classic * 0.99
    assert eps == pytest.approx(cks_optimal_epsilon(rho, delta), rel=1e-8)


def test_zcdp_to_approx_reference_value():
    # ρ = 0.5, δ = 1e-5: classic bound 0.5 + 2√(0.5 ln 1e5) ≈ 5.2985; CKS is clearly below it.
    eps = ZCDP(0.5).to_approx_dp(1e-5).epsilon
    assert classic_zcdp_epsilon(0.5, 1e-5) == pytest.approx(5.2985, abs=1e-4)
    assert 4.6 < eps < 4.8


@HYPOTHESIS
@given(
    rho=st.floats(1e-4, 50),
    factor=st.floats(1.01, 10),
    delta=st.floats(1e-12, 0.1),
)
def test_zcdp_to_approx_grows_with_rho(rho, factor, delta):
    small = ZCDP(rho).to_approx_dp(delta).epsilon
    large = ZCDP(rho * factor).to_approx_dp(delta).epsilon
    assert small <= large
    if large > 1e-9:  # strictly, except where both sit at the clamp for a non-positive optimum
        assert small < large


@HYPOTHESIS
@given(rho=st.floats(1e-4, 50), delta=st.floats(1e-12, 0.05), factor=st.floats(1.01, 2))
def test_zcdp_to_approx_shrinks_with_delta(rho, delta, factor):
    small = ZCDP(rho).to_approx_dp(delta).epsilon
    large = ZCDP(rho).to_approx_dp(delta * factor).epsilon
    assert large <= small
    if small > 1e-9:  # strictly, except where both sit at the clamp for a non-positive optimum
        assert large < small


@pytest.mark.parametrize("delta", [0, 0.0, 1, 1.0, 1.5, -1e-6, math.nan, math.inf])
def test_zcdp_to_approx_bad_delta_raises_value_error(delta):
    with pytest.raises(ValueError, match="`delta`"):
        ZCDP(0.5).to_approx_dp(delta)


@pytest.mark.parametrize("delta", ["1e-5", None, True, [1e-5]])
def test_zcdp_to_approx_wrong_type_delta_raises_type_error(delta):
    with pytest.raises(TypeError, match="`delta`"):
        ZCDP(0.5).to_approx_dp(delta)
