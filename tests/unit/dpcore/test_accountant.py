"""The budget accountant of ``dpcore.foundations.accounting``: exact decimal arithmetic (ten
spends of a tenth use exactly one ε), refusal of overspend with what remains, and conversions of
spends to the total's kind that never underestimate the cost."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.foundations.accounting import (
    ZCDP,
    ApproxDP,
    BudgetAccountant,
    BudgetExceededError,
    PureDP,
)
from tests.hypothesis_settings import HYPOTHESIS


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
