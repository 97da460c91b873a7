"""What a budget has left in ``dpcore.foundations.accounting``: remaining_after and
check_affordable per component (ε and δ), the largest ε that fits, and the cumulative loss of the
same people across ledgers."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

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
    pure_epsilon_within,
    remaining_after,
    sequential,
)
from dpcore.foundations.errors import BudgetKindError

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
