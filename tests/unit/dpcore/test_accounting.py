"""Unit tests for ``dpcore.foundations.accounting``: budgets, conversions, composition and the accountant.

Expected values are derived independently of the implementation: from the published formulas
(Bun & Steinke 2016; Canonne, Kamath & Steinke 2020; Balle & Wang 2018), or from exact decimal
arithmetic done by hand in the test.
"""

from __future__ import annotations

import dataclasses
import math
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy.special import log_ndtr, ndtr

from dpcore.foundations.accounting import (
    CUMULATIVE_DELTA,
    ZCDP,
    ApproxDP,
    BudgetAccountant,
    BudgetExceededError,
    PureDP,
    as_pure_dp,
    as_zcdp,
    check_affordable,
    cumulative,
    exact_components,
    parallel,
    pure_epsilon_within,
    remaining_after,
    sequential,
)
from dpcore.foundations.errors import BudgetKindError

# The shared autouse fixture in tests/conftest.py is function-scoped; it only isolates app state
# and does not interact with these pure computations, so Hypothesis may reuse it across examples.
HYPOTHESIS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

# ---------------------------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Construction and validation
# ---------------------------------------------------------------------------------------------

BAD_POSITIVE = [math.nan, math.inf, -math.inf, 0, 0.0, -1, -1e-300]
BAD_DELTA = [0, 0.0, 1, 1.0, 1.5, math.nan, math.inf, -math.inf, -0.1]
WRONG_TYPES = ["0.5", None, True, False, [0.5], {"epsilon": 0.5}]


@pytest.mark.parametrize(
    "make",
    [
        lambda: PureDP(1.0),
        lambda: PureDP(1),
        lambda: PureDP(1e-9),
        lambda: PureDP(1e6),
        lambda: PureDP(np.float64(0.5)),
        lambda: PureDP(np.int64(2)),
        lambda: ApproxDP(1.0, 1e-6),
        lambda: ApproxDP(3, 0.5),
        lambda: ApproxDP(np.float32(0.25), np.float64(1e-12)),
        lambda: ZCDP(0.5),
        lambda: ZCDP(2),
        lambda: ZCDP(np.float64(1e-8)),
    ],
)
def test_valid_budgets_construct_with_float_components(make):
    budget = make()
    for value in budget.components().values():
        assert type(value) is float
        assert math.isfinite(value) and value > 0


def test_components_hold_the_given_values():
    assert PureDP(2).components() == {"epsilon": 2.0}
    assert ApproxDP(0.5, 1e-5).components() == {"epsilon": 0.5, "delta": 1e-5}
    assert ZCDP(0.125).components() == {"rho": 0.125}


def _constructors(param: str):
    if param == "epsilon":
        return [
            ("PureDP", lambda v: PureDP(v)),
            ("ApproxDP", lambda v: ApproxDP(v, 1e-6)),
        ]
    if param == "delta":
        return [("ApproxDP", lambda v: ApproxDP(1.0, v))]
    return [("ZCDP", lambda v: ZCDP(v))]


def _bad_value_cases():
    for param, bad_values in (("epsilon", BAD_POSITIVE), ("rho", BAD_POSITIVE)):
        for cls, ctor in _constructors(param):
            for v in bad_values:
                yield pytest.param(ctor, param, v, id=f"{cls}-{param}={v!r}")
    for cls, ctor in _constructors("delta"):
        for v in BAD_DELTA:
            yield pytest.param(ctor, "delta", v, id=f"{cls}-delta={v!r}")


@pytest.mark.parametrize(("ctor", "param", "value"), list(_bad_value_cases()))
def test_bad_values_raise_value_error_naming_parameter_and_value(ctor, param, value):
    with pytest.raises(ValueError) as info:
        ctor(value)
    message = str(info.value)
    assert f"`{param}`" in message
    assert f"got {float(value)!r}" in message


def _wrong_type_cases():
    for param in ("epsilon", "delta", "rho"):
        for cls, ctor in _constructors(param):
            for v in WRONG_TYPES:
                yield pytest.param(ctor, param, v, id=f"{cls}-{param}={v!r}")


@pytest.mark.parametrize(("ctor", "param", "value"), list(_wrong_type_cases()))
def test_wrong_types_raise_type_error_naming_parameter(ctor, param, value):
    with pytest.raises(TypeError, match=f"`{param}`"):
        ctor(value)


@pytest.mark.parametrize(
    ("budget", "field"),
    [(PureDP(1.0), "epsilon"), (ApproxDP(1.0, 1e-6), "epsilon"), (ApproxDP(1.0, 1e-6), "delta")]
    + [(ZCDP(0.5), "rho")],
)
def test_budgets_are_frozen(budget, field):
    before = getattr(budget, field)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(budget, field, 0.123)
    assert getattr(budget, field) == before


def test_budgets_are_hashable_and_equal_by_value():
    assert PureDP(1) == PureDP(1.0)
    assert hash(PureDP(1)) == hash(PureDP(1.0))
    assert len({PureDP(1), PureDP(1.0), PureDP(np.float64(1.0))}) == 1
    assert PureDP(1.0) != PureDP(2.0)
    assert ApproxDP(1, 1e-5) == ApproxDP(1.0, 1e-5)
    assert hash(ApproxDP(1, 1e-5)) == hash(ApproxDP(1.0, 1e-5))
    assert ApproxDP(1.0, 1e-5) != ApproxDP(1.0, 1e-6)
    assert ZCDP(0.5) == ZCDP(0.5)
    assert len({ZCDP(0.5), ZCDP(0.5), ZCDP(0.25)}) == 2
    # Equal numbers in different budget kinds are different guarantees.
    assert PureDP(0.5) != ZCDP(0.5)
    assert {PureDP(0.5): "a"}.get(ZCDP(0.5)) is None


def test_kinds():
    assert (PureDP(1).kind, ApproxDP(1, 0.1).kind, ZCDP(1).kind) == ("pure", "approx", "zcdp")


# ---------------------------------------------------------------------------------------------
# Conversions
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Sequential composition
# ---------------------------------------------------------------------------------------------


def test_sequential_pure_adds_epsilon_exactly_in_decimal():
    # In binary 0.1 + 0.2 == 0.30000000000000004; in decimal it is exactly 0.3.
    assert sequential(PureDP(0.1), PureDP(0.2)) == PureDP(0.3)
    assert sequential(PureDP(1), PureDP(2), PureDP(0.5)) == PureDP(3.5)


def test_sequential_approx_adds_epsilon_and_delta():
    total = sequential(ApproxDP(0.5, 1e-6), ApproxDP(0.25, 2e-6), ApproxDP(0.1, 1e-7))
    assert total == ApproxDP(0.85, 3.1e-6)


def test_sequential_zcdp_adds_rho():
    assert sequential(ZCDP(0.1), ZCDP(0.2)) == ZCDP(0.3)
    assert sequential(ZCDP(0.5), ZCDP(0.25), ZCDP(0.25)) == ZCDP(1.0)


def test_sequential_single_budget_is_itself():
    for b in (PureDP(0.7), ApproxDP(0.7, 1e-7), ZCDP(0.7)):
        assert sequential(b) == b


@HYPOTHESIS
@given(st.lists(st.floats(1e-6, 10), min_size=1, max_size=20))
def test_sequential_matches_exact_sum(values):
    exact = float(sum(Decimal(repr(v)) for v in values))
    assert sequential(*map(PureDP, values)) == PureDP(exact)
    assert sequential(*map(ZCDP, values)) == ZCDP(exact)
    assert sequential(*map(PureDP, values)).epsilon == pytest.approx(math.fsum(values), rel=1e-12)


def test_sequential_pure_and_zcdp_gives_zcdp_with_half_epsilon_squared():
    # ε = 1 → ρ = 1/2 (exact in binary).
    assert sequential(PureDP(1.0), ZCDP(0.25)) == ZCDP(0.75)
    assert sequential(ZCDP(0.25), PureDP(1.0)) == ZCDP(0.75)
    assert sequential(PureDP(2.0), PureDP(1.0), ZCDP(0.5)) == ZCDP(2.0 + 0.5 + 0.5)


@HYPOTHESIS
@given(eps=st.floats(1e-3, 10), rho=st.floats(1e-3, 10))
def test_sequential_pure_and_zcdp_formula(eps, rho):
    combined = sequential(PureDP(eps), ZCDP(rho))
    assert isinstance(combined, ZCDP)
    assert combined.rho == pytest.approx(eps**2 / 2 + rho, rel=1e-12)


def test_sequential_pure_and_approx_gives_approx_with_delta_from_approx_only():
    assert sequential(PureDP(0.5), ApproxDP(0.25, 1e-6)) == ApproxDP(0.75, 1e-6)
    assert sequential(ApproxDP(0.25, 1e-6), PureDP(0.5), PureDP(1)) == ApproxDP(1.75, 1e-6)
    assert sequential(ApproxDP(0.25, 1e-6), PureDP(0.5), ApproxDP(1, 2e-6)) == ApproxDP(1.75, 3e-6)


@pytest.mark.parametrize(
    "budgets",
    [
        (ZCDP(0.5), ApproxDP(1.0, 1e-6)),
        (ApproxDP(1.0, 1e-6), ZCDP(0.5)),
        (PureDP(1.0), ZCDP(0.5), ApproxDP(1.0, 1e-6)),
    ],
)
@pytest.mark.parametrize("compose", [sequential, parallel])
def test_zcdp_and_approx_do_not_mix(compose, budgets):
    with pytest.raises(ValueError, match=r"\.to_approx_dp"):
        compose(*budgets)


@pytest.mark.parametrize("compose", [sequential, parallel])
def test_no_budgets_raises_value_error(compose):
    with pytest.raises(ValueError, match="`budgets`"):
        compose()


@pytest.mark.parametrize("bad", [0.5, "eps=1", None, {"epsilon": 1.0}, (1.0, 1e-6)])
@pytest.mark.parametrize("compose", [sequential, parallel])
def test_non_budget_raises_type_error(compose, bad):
    with pytest.raises(TypeError, match=r"`budgets\[1\]`"):
        compose(PureDP(1.0), bad)


# ---------------------------------------------------------------------------------------------
# Parallel composition
# ---------------------------------------------------------------------------------------------


def test_parallel_takes_max_per_component():
    assert parallel(PureDP(0.1), PureDP(0.3), PureDP(0.2)) == PureDP(0.3)
    assert parallel(ZCDP(0.1), ZCDP(0.05)) == ZCDP(0.1)
    # ε and δ are maximised separately, even when they come from different budgets.
    assert parallel(ApproxDP(1.0, 1e-6), ApproxDP(0.5, 1e-5)) == ApproxDP(1.0, 1e-5)


def test_parallel_mixed_kinds_like_sequential():
    assert parallel(PureDP(1.0), ZCDP(0.25)) == ZCDP(0.5)  # ε²/2 = 0.5 wins
    assert parallel(PureDP(0.5), ZCDP(0.25)) == ZCDP(0.25)  # ε²/2 = 0.125 loses
    assert parallel(PureDP(2.0), ApproxDP(1.0, 1e-6)) == ApproxDP(2.0, 1e-6)
    assert parallel(ApproxDP(1.0, 1e-6), PureDP(0.5)) == ApproxDP(1.0, 1e-6)


_pure = st.floats(1e-4, 10).map(PureDP)
_zcdp = st.floats(1e-4, 10).map(ZCDP)
_approx = st.builds(ApproxDP, st.floats(1e-4, 10), st.floats(1e-12, 0.05))


@HYPOTHESIS
@given(
    st.one_of(
        st.lists(_pure, min_size=1, max_size=10),
        st.lists(_zcdp, min_size=1, max_size=10),
        st.lists(st.one_of(_pure, _zcdp), min_size=1, max_size=10),
        st.lists(st.one_of(_pure, _approx), min_size=1, max_size=10),
    )
)
def test_parallel_cost_is_at_most_sequential_cost(budgets):
    assume(sum(getattr(b, "delta", 0.0) for b in budgets) < 1)
    par, seq = parallel(*budgets), sequential(*budgets)
    assert par.kind == seq.kind
    for k, v in par.components().items():
        assert v <= seq.components()[k]
    if len(budgets) > 1:
        assert sum(par.components().values()) < sum(seq.components().values())
    # And parallel is an upper bound on every single budget, expressed in the common kind.
    for b in budgets:
        for k, v in _in_kind(b, par.kind).items():
            assert v <= par.components()[k] * (1 + 1e-15)


def _in_kind(budget, kind):
    """Components of ``budget`` in ``kind``, converted by the textbook rules (not the module's)."""
    if budget.kind == kind:
        return budget.components()
    assert budget.kind == "pure"
    if kind == "zcdp":
        return {"rho": budget.epsilon**2 / 2}
    return {"epsilon": budget.epsilon, "delta": 0.0}


# ---------------------------------------------------------------------------------------------
# The accountant: exact decimal arithmetic and refusal of overspend
# ---------------------------------------------------------------------------------------------


def test_ten_spends_of_a_tenth_use_exactly_one_epsilon():
    acc = BudgetAccountant(PureDP(1.0))
    for _ in range(10):
        acc.spend(PureDP(0.1))
    assert acc.remaining() == {"epsilon": 0.0}
    assert len(acc.spent) == 10
    # Sanity: naive binary arithmetic would have made the tenth spend look like an overspend
    # or left a residue; the accountant must not.
    assert sum([0.1] * 10) != 1.0

    with pytest.raises(BudgetExceededError) as info:
        acc.spend(PureDP(0.1))
    err = info.value
    message = str(err)
    for word in ("Requested", "Remaining", "Difference"):
        assert word in message
    assert err.requested == {"epsilon": 0.1}
    assert err.remaining == {"epsilon": 0.0}
    assert err.difference == {"epsilon": pytest.approx(0.1, abs=1e-15)}
    assert isinstance(err, ValueError)
    # A failed spend changes nothing.
    assert acc.remaining() == {"epsilon": 0.0}
    assert len(acc.spent) == 10


def test_three_zcdp_spends_of_a_tenth_use_exactly_point_three():
    acc = BudgetAccountant(ZCDP(0.3))
    for _ in range(3):
        acc.spend(ZCDP(0.1))
    assert acc.remaining() == {"rho": 0.0}
    with pytest.raises(BudgetExceededError, match="Requested.*Remaining.*Difference") as info:
        acc.spend(ZCDP(0.1))
    assert info.value.requested == {"rho": 0.1}
    assert info.value.remaining == {"rho": 0.0}
    assert info.value.difference == {"rho": pytest.approx(0.1, abs=1e-15)}
    assert acc.remaining() == {"rho": 0.0}
    assert acc.spent == (ZCDP(0.1),) * 3


def test_error_reports_partial_remaining():
    acc = BudgetAccountant(PureDP(1.0))
    acc.spend(PureDP(0.7))
    with pytest.raises(BudgetExceededError) as info:
        acc.spend(PureDP(0.5))
    err = info.value
    assert err.requested == {"epsilon": 0.5}
    assert err.remaining == {"epsilon": pytest.approx(0.3, abs=1e-15)}
    assert err.difference == {"epsilon": pytest.approx(0.2, abs=1e-15)}
    assert "0.3" in str(err) and "0.2" in str(err)
    # An affordable spend still goes through after a refusal.
    acc.spend(PureDP(0.3))
    assert acc.remaining() == {"epsilon": 0.0}


def _decimal_amount(k: int, places: int) -> Decimal:
    return Decimal(k).scaleb(-places)


@settings(HYPOTHESIS, max_examples=200)
@given(
    n=st.integers(1, 50),
    k=st.integers(1, 999),
    places=st.integers(0, 4),
    kind=st.sampled_from(["pure", "zcdp", "approx"]),
    delta_k=st.integers(1, 99),
    delta_places=st.integers(5, 9),
)
def test_n_equal_decimal_spends_fit_exactly(n, k, places, kind, delta_k, delta_places):
    # Amounts are short decimals (e.g. "0.05"); the total is their exact decimal product.
    amount = _decimal_amount(k, places)
    total_amount = amount * n
    d_amount = _decimal_amount(delta_k, delta_places)
    d_total = d_amount * n  # ≤ 99 · 50 · 1e-5 < 1
    make = {
        "pure": lambda e, d: PureDP(e),
        "zcdp": lambda e, d: ZCDP(e),
        "approx": lambda e, d: ApproxDP(e, d),
    }[kind]
    total = make(float(str(total_amount)), float(str(d_total)))
    cost = make(float(str(amount)), float(str(d_amount)))

    acc = BudgetAccountant(total)
    for _ in range(n):
        acc.spend(cost)
    assert all(v == 0.0 for v in acc.remaining().values())
    assert set(acc.remaining()) == set(total.components())

    with pytest.raises(BudgetExceededError):
        acc.spend(cost)
    assert all(v == 0.0 for v in acc.remaining().values())
    assert len(acc.spent) == n


def test_failed_spend_of_incompatible_kind_changes_nothing():
    acc = BudgetAccountant(PureDP(1.0))
    acc.spend(PureDP(0.25))
    with pytest.raises(ValueError) as info:
        acc.spend(ZCDP(0.01))
    assert not isinstance(info.value, BudgetExceededError)
    with pytest.raises(ValueError):
        acc.spend(ApproxDP(0.01, 1e-9))
    with pytest.raises(TypeError, match="`cost`"):
        acc.spend(0.01)
    assert acc.remaining() == {"epsilon": 0.75}
    assert acc.spent == (PureDP(0.25),)


def test_accountant_rejects_non_budget_total():
    with pytest.raises(TypeError, match="`total`"):
        BudgetAccountant(1.0)


def test_pure_spends_against_zcdp_total_are_converted():
    acc = BudgetAccountant(ZCDP(1.0))
    acc.spend(PureDP(1.0))  # ρ = 0.5
    assert acc.remaining() == {"rho": 0.5}
    with pytest.raises(BudgetExceededError):
        acc.spend(PureDP(1.1))  # ρ = 0.605 > 0.5
    acc.spend(ZCDP(0.5))
    assert acc.remaining() == {"rho": 0.0}


def test_pure_spend_converted_to_zcdp_is_exact_in_decimal():
    # Exactly: ρ = (0.1)² / 2 = 0.005, which fits a total of 0.005.
    acc = BudgetAccountant(ZCDP(0.005))
    acc.spend(PureDP(0.1))
    assert acc.remaining() == {"rho": 0.0}


def test_pure_spend_converted_to_zcdp_never_underestimates_cost():
    acc = BudgetAccountant(ZCDP(0.245))
    acc.spend(PureDP(0.7))  # exactly ρ = 0.49 / 2 = 0.245
    assert acc.remaining() == {"rho": 0.0}
    with pytest.raises(BudgetExceededError):
        acc.spend(ZCDP(1e-17))


# ---------------------------------------------------------------------------------------------
# remaining_after / check_affordable with two components
# ---------------------------------------------------------------------------------------------

APPROX_TOTAL = ApproxDP(1.0, 1e-5)
APPROX_SPENT = (ApproxDP(0.3, 2e-6), PureDP(0.2))


def test_remaining_after_approx_total_is_exact_per_component():
    left = remaining_after(APPROX_TOTAL, APPROX_SPENT)
    # By hand: 1.0 − 0.3 − 0.2 = 0.5 and 0.00001 − 0.000002 − 0 = 0.000008.
    assert left == {"epsilon": Decimal("0.5"), "delta": Decimal("0.000008")}
    assert all(isinstance(v, Decimal) for v in left.values())
    assert remaining_after(APPROX_TOTAL, []) == {
        "epsilon": Decimal("1.0"),
        "delta": Decimal("0.00001"),
    }


def test_check_affordable_accepts_an_exact_fit():
    check_affordable(APPROX_TOTAL, APPROX_SPENT, ApproxDP(0.5, 8e-6))
    check_affordable(APPROX_TOTAL, APPROX_SPENT, PureDP(0.5))  # δ = 0


def test_check_affordable_refuses_when_only_delta_is_exceeded():
    with pytest.raises(BudgetExceededError) as info:
        check_affordable(APPROX_TOTAL, APPROX_SPENT, ApproxDP(0.1, 9e-6))
    err = info.value
    assert err.requested == {"epsilon": 0.1, "delta": 9e-6}
    assert err.remaining == {"epsilon": 0.5, "delta": 8e-6}
    assert err.difference["epsilon"] == pytest.approx(-0.4)
    assert err.difference["delta"] == pytest.approx(1e-6)
    assert "δ" in str(err)


def test_check_affordable_refuses_when_only_epsilon_is_exceeded():
    with pytest.raises(BudgetExceededError) as info:
        check_affordable(APPROX_TOTAL, APPROX_SPENT, ApproxDP(0.6, 1e-6))
    assert info.value.difference["epsilon"] == pytest.approx(0.1)
    assert info.value.difference["delta"] == pytest.approx(-7e-6)
    with pytest.raises(BudgetExceededError):
        check_affordable(APPROX_TOTAL, APPROX_SPENT, PureDP(0.6))


def test_check_affordable_validates_cost():
    with pytest.raises(TypeError, match="`cost`"):
        check_affordable(APPROX_TOTAL, APPROX_SPENT, (0.1, 1e-6))
    with pytest.raises(ValueError, match="ZCDP"):
        check_affordable(APPROX_TOTAL, APPROX_SPENT, ZCDP(0.01))


def test_accountant_with_approx_total_tracks_both_components():
    acc = BudgetAccountant(ApproxDP(1.0, 1e-5))
    for _ in range(5):
        acc.spend(ApproxDP(0.2, 2e-6))
    assert acc.remaining() == {"epsilon": 0.0, "delta": 0.0}
    acc2 = BudgetAccountant(ApproxDP(1.0, 1e-5))
    acc2.spend(PureDP(0.5))
    with pytest.raises(BudgetExceededError):
        acc2.spend(ApproxDP(0.1, 1.1e-5))
    assert acc2.remaining() == {"epsilon": 0.5, "delta": 1e-5}


def test_composed_delta_of_one_or_more_is_refused_with_a_clear_message():
    with pytest.raises(ValueError, match=r"combined budget has δ = 1\.2 ≥ 1"):
        sequential(ApproxDP(1, 0.6), ApproxDP(1, 0.6))


@pytest.mark.parametrize("rho", [1.0, 0.2, 0.3, 0.5, 1e-4, 7.0, 0.123456789])
def test_pure_epsilon_within_is_the_largest_epsilon_that_fits_exactly(rho):
    epsilon = pure_epsilon_within(rho)
    limit = exact_components(ZCDP(rho), "zcdp")["rho"]
    assert exact_components(PureDP(epsilon), "zcdp")["rho"] <= limit
    above = math.nextafter(epsilon, math.inf)
    assert exact_components(PureDP(above), "zcdp")["rho"] > limit
    # A ledger of exactly ρ affords it: the last of a budget can be spent.
    check_affordable(ZCDP(rho), [], PureDP(epsilon))


def test_a_mechanism_runs_at_its_own_kind_of_budget_and_refuses_an_epsilon_delta_one():
    assert as_zcdp(ZCDP(0.3), "GVDP") == ZCDP(0.3)
    assert as_zcdp(PureDP(1.0), "GVDP") == ZCDP(0.5)  # ε-DP implies ε²/2-zCDP
    assert as_pure_dp(PureDP(0.7), "Synthesis") == PureDP(0.7)
    assert as_pure_dp(ZCDP(0.5), "Synthesis") == PureDP(pure_epsilon_within(0.5))
    for convert in (as_zcdp, as_pure_dp):
        with pytest.raises(BudgetKindError, match="GVDP runs under an ε or a ρ budget") as error:
            convert(ApproxDP(1.0, 1e-6), "GVDP")
        assert (error.value.kind, error.value.needs) == ("approx", ("pure", "zcdp"))


# --- the loss of the same people across ledgers ---------------------------------------------------


def test_the_cumulative_loss_adds_each_kind_as_documented():
    assert cumulative(PureDP(1.0), PureDP(0.5)) == PureDP(1.5)  # pure ε adds
    assert cumulative(PureDP(1.0), ZCDP(0.25)) == ZCDP(0.75)  # ε counts as ρ = ε²/2
    assert cumulative(PureDP(1.0), ApproxDP(0.5, 1e-7)) == ApproxDP(1.5, 1e-7)
    # ρ beside (ε, δ): the ρ part (ε included as ε²/2) is summed, converted once, then added.
    mixed = cumulative(ZCDP(0.25), PureDP(1.0), ApproxDP(0.5, 1e-7))
    converted = ZCDP(0.75).to_approx_dp(CUMULATIVE_DELTA)
    assert mixed == ApproxDP(converted.epsilon + 0.5, CUMULATIVE_DELTA + 1e-7)
    with pytest.raises(ValueError, match="at least one budget"):
        cumulative()
