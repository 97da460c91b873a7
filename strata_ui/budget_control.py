"""The budget controls: the Budget page's ε or ρ of the next release (any value a ledger can
hold, not only a slider's stops), the Compare page's own ε or ρ (carried over only when the user
asks), and setting the Budget page's budget from another page (the Plan page's answer)."""

from __future__ import annotations

import math

import streamlit as st

from dpcore.foundations.accounting import ZCDP, Budget, PureDP
from strata_ui import constants
from strata_ui.state import AppState, get_state
from strata_ui.style import plain_number
from strata_ui.widgets import log_label, nearest, stored_in

__all__ = [
    "budget_input",
    "compare_budget",
    "compare_slider",
    "largest",
    "set_page_budget",
]


def _symbol(pure: bool) -> str:
    return "ε" if pure else "ρ"


def largest(pure: bool) -> float:
    """The largest ε or ρ the Budget page takes: what the largest ledger can hold."""
    return constants.BUDGET_EPSILON_MAX if pure else constants.RHO_MAX


def budget_input(state: AppState) -> float:
    """The Budget page's ε or ρ per release: a number box that takes any value from the
    smallest the app offers to what the largest ledger holds (a value set elsewhere, such as the
    Plan page's answer, shows exactly as set). Returns the value."""
    pure = state.budget_kind == "pure"
    field_name = "epsilon" if pure else "rho"
    low = constants.EPSILON_MIN if pure else constants.RHO_MIN
    high = largest(pure)
    stored = getattr(state, field_name)
    if not low <= stored <= high:  # from an old address or a Compare page's carry-over
        st.caption(
            f"{_symbol(pure)} = {plain_number(stored)} is outside what one release may use "
            f"({plain_number(low)} to {plain_number(high)}); it is set to the nearest end."
        )
        stored = min(max(stored, low), high)
        setattr(state, field_name, stored)
    key = f"budget.{field_name}"
    value = st.number_input(
        f"{_symbol(pure)} per release",
        min_value=low,
        max_value=high,
        value=float(stored),
        step=0.1 if pure else 0.05,
        format="%.6g",
        key=key,
        **stored_in(key, state, field_name),
        help=f"Any value from {plain_number(low)} to {plain_number(high)}: the most a release "
        "may spend, what the largest ledger a curator can start holds. Smaller means stronger "
        "privacy and more noise.",
    )
    setattr(state, field_name, value)
    return value


def set_page_budget(state: AppState, budget: Budget) -> None:
    """Make ``budget`` (ε or ρ) the Budget page's, exactly, switching its unit if needed."""
    pure = isinstance(budget, PureDP)
    state.budget_kind = "pure" if pure else "zcdp"
    if pure:
        state.epsilon = budget.epsilon
    else:
        state.rho = budget.rho


def compare_budget(state: AppState, value: float | None = None) -> Budget:
    """The Compare page's budget: its own ε or ρ once moved there, else the Budget page's;
    ``value`` overrides both (for sweeps)."""
    pure = state.budget_kind == "pure"
    own = state.compare_epsilon if pure else state.compare_rho
    page = state.epsilon if pure else state.rho
    chosen = value if value is not None else (page if own is None else own)
    return PureDP(chosen) if pure else ZCDP(chosen)


def compare_slider(key: str) -> tuple[str, float]:
    """The Compare page's own ε or ρ on a log slider; returns (symbol, value). It starts at the
    Budget page's and moving it leaves that one alone; a button carries it over."""
    state = get_state()
    pure = state.budget_kind == "pure"
    options = constants.EPSILON_OPTIONS if pure else constants.RHO_OPTIONS
    own = "compare_epsilon" if pure else "compare_rho"
    page = state.epsilon if pure else state.rho
    current = compare_budget(state)
    current_value = current.epsilon if pure else current.rho
    chosen = st.select_slider(
        f"{_symbol(pure)} per release (log scale)", options=options,
        value=nearest(options, current_value), format_func=log_label,
        key=f"{key}.{state.budget_kind}", **stored_in(f"{key}.{state.budget_kind}", state, own),
        help="This page's own budget, for simulations only: it starts at the Budget page's and "
        "moving it changes nothing there. Smaller means more privacy and more noise.",
    )  # fmt: skip
    setattr(state, own, chosen)
    if not math.isclose(chosen, page, rel_tol=1e-12):
        _carry_over(state, chosen, page, pure, key)
    return _symbol(pure), chosen


def _carry_over(state: AppState, chosen: float, page: float, pure: bool, key: str) -> None:
    symbol = _symbol(pure)
    if chosen > largest(pure):
        st.caption(
            f"The Budget page stays at {symbol} = {plain_number(page)}: {symbol} = "
            f"{plain_number(chosen)} is more than one release may use (at most "
            f"{plain_number(largest(pure))})."
        )
        return
    st.caption(f"Here only: the Budget page's {symbol} stays {plain_number(page)}.")
    if st.button(f"Use {symbol} = {plain_number(chosen)} on the Budget page", key=f"{key}.carry"):
        setattr(state, "epsilon" if pure else "rho", chosen)
        st.success(
            f"The next release's budget is now {symbol} = {plain_number(chosen)}.",
            icon=":material/check:",
        )
