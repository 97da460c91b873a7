"""One budget language for every page: the rule that says what a release is charged for the
Budget page's control, and the sentences that show a charge beside its ε or ρ.

The rule (:func:`dpcore.foundations.accounting.charge_of`): the ledger counts ρ; a control of ρ
charges at most ρ and one of ε at most ρ = ε²/2; every analysis is calibrated to spend exactly
that, except a Gaussian calibrated to (ε, δ) (the ratio's), which adds more noise and is charged
its exact, smaller ρ. Where a charge differs from the rule's, both are shown.
"""

from __future__ import annotations

import math

from dpcore.foundations.accounting import ZCDP, ApproxDP, Budget, PureDP, charge_of
from strata_ui.style import plain_number

__all__ = ["RULE", "budget_text", "charge_line", "charge_note", "rule_charge"]

RULE = (
    "**What a release is charged.** The ledger counts ρ (zero-concentrated DP), and every "
    "release is charged the exact ρ of the noise it adds, never more than your control: with "
    "ρ, that ρ; with ε, **ρ = ε²/2** — what a pure ε-DP release costs in ρ (Bun & Steinke "
    "2016, Prop. 1.4). Laplace mechanisms run at your ε; Gaussian ones (the Gaussian mean, "
    "CoinPress, the general estimator, MST, AIM) at ρ = ε²/2, so at the same ε they cost the "
    "same. One kind costs less: the ratio's Gaussian calibrated to (ε, δ) (Miao & Li 2022, "
    "eq. 5, or Balle & Wang 2018) adds more noise than ρ = ε²/2 needs, and is charged its "
    "exact, smaller ρ; every page then shows both its ε and its charge."
)


def budget_text(budget: Budget) -> str:
    """``ε = 1``, ``ρ = 0.5`` or ``ε = 1, δ = 1e-6``, in plain notation."""
    if isinstance(budget, PureDP):
        return f"ε = {plain_number(budget.epsilon)}"
    if isinstance(budget, ZCDP):
        return f"ρ = {plain_number(budget.rho)}"
    return f"ε = {plain_number(budget.epsilon)}, δ = {_delta(budget.delta)}"


def rule_charge(control: Budget) -> float:
    """The most a release at the user's ``control`` (ε or ρ) is charged: ρ, or ε²/2."""
    return charge_of(control)


LEDGER_DIGITS = 6
"""Significant digits of a charge: as the ledger's own lines write it (0.00263206), so that
one charge reads as one number on every line of a page."""


def charge_line(control: Budget, cost: Budget) -> str:
    """What a release at ``control`` is charged, in the ledger's unit, beside the control: one
    line for the Budget, Plan and Release pages. A charge below the rule's names both."""
    charged = charge_of(cost)
    cap = rule_charge(control)
    rho = f"ρ = {plain_number(charged, LEDGER_DIGITS)}"
    if isinstance(control, ZCDP) and _same(charged, cap):
        return f"Charged **{rho}**, the ρ you set."
    if _same(charged, cap):
        return f"{budget_text(control)} is charged **{rho}** (ρ = ε²/2)."
    shown = budget_text(cost if isinstance(cost, ApproxDP) else control)
    return (
        f"{shown} is charged **{rho}**: less than the ρ = {plain_number(cap)} another analysis "
        f"is charged at {budget_text(control)}, because this Gaussian is calibrated to (ε, δ) "
        "and adds more noise than that ρ needs. Compare analyses by their charge."
    )


def charge_note(control: Budget, cost: Budget) -> str | None:
    """:func:`charge_line` where the cost reads differently from the control the user set (a
    Gaussian analysis run at ρ = ε²/2 for an ε, or the ratio's (ε, δ) Gaussian); ``None`` where
    the cost is the control itself, which the page's cost line already prices."""
    if type(cost) is type(control) and _same(charge_of(cost), rule_charge(control)):
        return None
    return charge_line(control, cost)


def _same(charge: float, cap: float) -> bool:
    """Equal up to the float rounding of splitting a budget over several noisy sums."""
    return math.isclose(charge, cap, rel_tol=1e-6)


def _delta(delta: float) -> str:
    mantissa, exponent = f"{delta:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"
