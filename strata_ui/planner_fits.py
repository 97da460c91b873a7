"""What the Plan page's answer meets when it is to be spent: the most one release may use (what
the largest ledger a curator can start holds) and what the ledger in use has left; said plainly
when the answer exceeds them, with the most that fits and what the estimates miss at it (issue
37: the answer is one number, and "Use it" sets exactly that number, or the page says why not)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.analyses.base import Analysis
from dpcore.foundations.accounting import SYMBOLS, ZCDP, Budget, PureDP, charge_of
from dpcore.foundations.ledger import Ledger
from dpcore.planner import BudgetAnswer, ErrorModel, shortfall
from strata_ui import constants
from strata_ui.budget_control import largest
from strata_ui.budget_language import budget_text
from strata_ui.release_ui import affordable
from strata_ui.style import plain_number
from strata_ui.text import as_text, as_written

__all__ = ["render_what_fits"]


def _spendable(budget: Budget, ledger: Ledger | None) -> float:
    """The most one release may spend, as an ε or a ρ like ``budget``: what the largest ledger
    holds, or less when the ledger in use has less left (0 when it is used up)."""
    pure = isinstance(budget, PureDP)
    most = largest(pure)
    if ledger is not None:
        left = ledger.remaining()
        if "rho" in left:
            rho_left = max(left["rho"], 0.0)
            most = min(most, math.sqrt(2 * rho_left) if pure else rho_left)
        else:  # a ledger of pure ε-DP (only pure budgets reach here)
            most = min(most, max(left["epsilon"], 0.0))
    return most


def render_what_fits(
    model: ErrorModel,
    answer: BudgetAnswer,
    budget: Budget,
    analysis: Analysis,
    settings: object,
    ledger: Ledger | None,
) -> bool:
    """Whether the answer can be spent: said plainly when it cannot (more than one release may
    use, or than the ledger has left), with the most that fits and what the estimates miss at
    it. True when it fits (the answer's button is then offered)."""
    cost = analysis.cost(settings, budget)
    if ledger is not None and isinstance(cost, ZCDP) and ledger.total.kind == "pure":
        st.warning(
            f"The ledger “{as_text(ledger.name)}” counts pure ε-DP, which Gaussian noise cannot "
            "meet: a release at this budget needs a ρ-zCDP ledger (start one on the Budget page), or "
            "Laplace noise.",
            icon=":material/warning:",
        )
        return False
    pure = isinstance(budget, PureDP)
    release_most = _spendable(budget, None)
    fits_release = charge_of(cost) <= charge_of(
        PureDP(release_most) if pure else ZCDP(release_most)
    ) * (1 + 1e-12)
    if ledger is not None and fits_release and affordable(cost, ledger):
        left = ", ".join(f"{SYMBOLS[k]} = {plain_number(v)}" for k, v in ledger.remaining().items())
        st.success(
            f"The ledger “{as_text(ledger.name)}” can afford it: it has {left} left.",
            icon=":material/check_circle:",
        )
        return True
    if ledger is None and fits_release:
        return True
    most_value = _spendable(budget, ledger)
    where = (
        "than one release may use (the largest ledger a curator can start holds ρ = "
        f"{plain_number(constants.RHO_MAX)})"
        if not fits_release
        else f"than the ledger “{as_text(ledger.name)}” has left"
    )
    if most_value <= 0:
        st.warning(
            f"{budget_text(budget)} is more than the ledger “{as_text(ledger.name)}” has left: it "
            "is used up. Start a new ledger on the Budget page.",
            icon=":material/warning:",
        )
        return False
    most = PureDP(most_value) if pure else ZCDP(most_value)
    short = shortfall(model, answer.target, _in_model_unit(most, model))
    missing = short.table[short.table["estimate"].isin(short.short)]
    held_back = f" in what “{as_text(ledger.name)}” has left" if most_value < release_most else ""
    st.warning(
        f"{budget_text(budget)} is more {where}. The most that fits{held_back} is "
        f"**{budget_text(most)}**: at it {len(short.short)} of {len(model.labels)} estimates "
        "miss the target "
        f"({as_written(_worst_miss(missing['error at available budget'], model.widest_error))}). "
        + as_written(_rows_advice(missing, short.rows_reason)),
        icon=":material/warning:",
    )
    return False


def _in_model_unit(budget: Budget, model: ErrorModel) -> Budget:
    """``budget`` in the error model's unit: ε = √(2ρ) for a model in ε."""
    if model.unit == "epsilon" and isinstance(budget, ZCDP):
        return PureDP(math.sqrt(2 * budget.rho))
    if model.unit == "rho" and isinstance(budget, PureDP):
        return budget.to_zcdp()
    return budget


def _worst_miss(errors: pd.Series, widest: float) -> str:
    """How far the estimates that miss are off: the widest finite error, at most ``widest``
    (a release clamps its estimates into the public range, so none is off by more than the
    range), and how many would not be published at all (an unbounded error: a group withheld
    at that budget)."""
    unpublished = int(np.isinf(errors).sum())
    finite = errors[np.isfinite(errors)]
    parts = []
    if len(finite) and finite.max() >= widest:
        parts.append(f"up to ±{plain_number(widest, 3)}, the whole public range")
    elif len(finite):
        parts.append(f"up to ±{plain_number(finite.max(), 3)}")
    if unpublished:
        parts.append(f"{unpublished} not published at all at that budget")
    return "; ".join(parts)


def _rows_advice(missing: pd.DataFrame, rows_reason: str) -> str:
    """What would meet the target with what is left: larger groups (merging them), unless a
    clipping bias no size removes stands in the way, or the model cannot count rows."""
    if rows_reason:
        return f"{rows_reason[0].upper()}{rows_reason[1:]}."
    rows = missing["rows needed"].dropna().max()  # NaN for the whole population: not a group
    if not np.isfinite(rows):
        return "Loosen the target or widen the public bounds: more rows cannot remove a bias."
    return (
        f"To meet it with what is left, the groups that miss would need about {int(rows):,} "
        "rows each: merge the smaller groups (minimum group size on the Strata page) or choose "
        "a coarser grouping (the frontier below)."
    )
