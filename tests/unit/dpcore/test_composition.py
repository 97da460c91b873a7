"""Sequential and parallel composition of budgets in ``dpcore.foundations.accounting``, exact in
decimal where the kinds allow, and mixed kinds converted as documented."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP, parallel, sequential
from tests.hypothesis_settings import HYPOTHESIS


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
