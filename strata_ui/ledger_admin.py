"""Starting a ledger and raising a total (Budget page): a curator's acts, each recorded for good
with who made it and why.

There is no reset: a ledger's people keep every loss they had, so a budget grows only by a
raise, recorded with its reason. A new ledger for data that was released on is a raise too: the
people's total grows by the new ledger's, and the form asks for the reason.
"""

from __future__ import annotations

import uuid

import streamlit as st

from dpcore.foundations.accounting import ZCDP, ApproxDP, Budget, PureDP
from dpcore.foundations.ledger import Ledger, LedgerDataset, LedgerUnavailableError, list_ledgers
from strata_ui import constants
from strata_ui.actor import current_actor, may
from strata_ui.state import get_state
from strata_ui.text import as_text, as_written, in_label

__all__ = ["render_ledger_admin"]

OTHER_DATA = "other data"


FORM_TOKEN = "ledger.form_token"
"""A token per showing of the forms: their keys, and the key of the raise they record, so that
a submit repeated by a double click (on a form the rerun has since replaced) records nothing
more."""


def render_ledger_admin(ledger: Ledger, in_use: LedgerDataset | None) -> None:
    """Start a new ledger, or raise this one's total — each behind explicit confirmation."""
    released = None if in_use is None else ledger.population_of(in_use)
    token = st.session_state.setdefault(FORM_TOKEN, uuid.uuid4().hex)
    new_col, raise_col = st.columns(2)
    with new_col, st.form(f"ledger.new.{token}", border=True):
        _new_ledger_form(in_use if released is not None and released.ledgers else None, token)
    with raise_col, st.form(f"ledger.raise.{token}", border=True):
        _raise_form(ledger, token)


def _done(flash: str) -> None:
    """Say what was recorded after the rerun, with fresh forms."""
    st.session_state[FORM_TOKEN] = uuid.uuid4().hex
    get_state().ledger_flash = flash
    st.rerun()


def _new_ledger_form(released: LedgerDataset | None, token: str) -> None:
    """``released``: the data in use when some ledger has released on it."""
    st.markdown("**Start a new ledger**")
    st.caption("For a new project: data about other people, with a budget of its own.")
    name = st.text_input("Name", key="ledger.new_name")
    rho = st.number_input(
        "Total budget ρ (zCDP)", min_value=constants.RHO_MIN, max_value=constants.RHO_MAX,
        value=constants.DEFAULT_LEDGER_TOTAL.rho, key="ledger.new_rho",
    )  # fmt: skip
    purpose, reason = OTHER_DATA, ""
    if released is not None:
        purpose = st.radio(
            "For",
            (OTHER_DATA, released.name),
            format_func=lambda p: (
                "other data (its first release binds it)"
                if p == OTHER_DATA
                else f"“{as_text(p)}”, already released on: raise its people's total"
            ),  # fmt: skip
            key="ledger.new_purpose",
            help="A new ledger is no new budget for people whose data was released on: for "
            f"“{as_text(released.name)}” it raises their total by this ledger's, with a recorded reason.",
        )
        reason = st.text_area(
            "Reason for the raise (recorded with it)", key="ledger.new_reason",
            placeholder="e.g. the data owner agreed to a second study on 3 March",
        )  # fmt: skip
    confirm = st.checkbox(
        "I confirm: start a new ledger and use it for the next releases", key="ledger.new_confirm"
    )
    allowed = may("start") and (purpose == OTHER_DATA or may("join"))
    if not may("start"):
        st.caption("Only a curator starts a ledger.")
    if st.form_submit_button("Start new ledger", disabled=not allowed):
        taken = released if purpose != OTHER_DATA else None
        _start_ledger(name.strip(), ZCDP(rho), confirm, taken, reason.strip(), token)


def _start_ledger(
    name: str, total: Budget, confirmed: bool, taken: LedgerDataset | None, reason: str,
    token: str,
) -> None:  # fmt: skip
    existing = [s.name for s in list_ledgers()]
    refusal = None
    if not may("start") or (taken is not None and not may("join")):  # the form may be hidden
        refusal = "only a curator starts a ledger or raises a total."
    elif not confirmed:
        refusal = "tick the confirmation box first."
    elif not name:
        refusal = "give the new ledger a name."
    elif name in existing:
        refusal = (
            f"a ledger called “{as_text(name)}” already exists. Choose another name, or switch "
            "to it above."
        )
    elif taken is not None and not reason:
        refusal = (
            f"give the reason for raising the total of the people of “{as_text(taken.name)}”: "
            "it is "
            "recorded with the raise."
        )
    if refusal is not None:
        st.error(f"Nothing started: {refusal}", icon=":material/error:")
        return
    try:
        ledger = Ledger(None, name, total, actor=current_actor())
        if taken is not None:
            ledger.take_on(taken, reason=reason, actor=current_actor(), key=f"take-on-{token}")
    except LedgerUnavailableError as exc:  # busy, read-only or full: nothing was recorded
        st.error(as_written(exc), icon=":material/error:")
        return
    flash = f"Started “{as_text(name)}”: the next releases are charged to it."
    if taken is not None:
        flash = (
            f"Started “{as_text(name)}” for “{as_text(taken.name)}”: its people's total rose by {total}, recorded "
            "with your reason."
        )
    get_state().ledger_name = name
    _done(flash)


def _raise_form(ledger: Ledger, token: str) -> None:
    st.markdown(f"**Raise the total of “{as_text(ledger.name)}”**")
    st.caption(
        "Its releases so far keep counting: a raise adds to the total, for a recorded reason "
        "(the people's data owner agreed to more). There is no reset."
    )
    amount = _amount_input(ledger.total)
    reason = st.text_area(
        "Reason (recorded with the raise)", key="ledger.raise_reason",
        placeholder="e.g. new data-sharing agreement of 3 March",
    )  # fmt: skip
    typed = st.text_input(
        f"Type the ledger's name ({in_label(ledger.name)}) to confirm", key="ledger.raise_name"
    )
    if not may("raise"):
        st.caption("Only a curator raises a total.")
    if st.form_submit_button("Raise the total", disabled=not may("raise")):
        _raise(ledger, amount, reason.strip(), typed, token)


def _amount_input(total: Budget) -> Budget:
    """The amount of a raise, in the ledger's own kind."""
    if isinstance(total, ZCDP):
        return ZCDP(
            st.number_input(
                "Raise by ρ (zCDP)",
                min_value=constants.RHO_MIN,
                max_value=constants.RHO_MAX,
                value=total.rho,
                key="ledger.raise_rho",
            )  # fmt: skip
        )
    epsilon = st.number_input(
        "Raise by ε", min_value=1e-3, max_value=100.0, value=total.epsilon,
        key="ledger.raise_epsilon",
    )  # fmt: skip
    if isinstance(total, PureDP):
        return PureDP(epsilon)
    delta = st.number_input(
        "Raise by δ", min_value=1e-12, max_value=0.1, value=total.delta, format="%.1e",
        key="ledger.raise_delta",
    )  # fmt: skip
    return ApproxDP(epsilon, delta)


def _raise(ledger: Ledger, amount: Budget, reason: str, typed: str, token: str) -> None:
    if not may("raise"):  # the form may be hidden; the action refuses anyway
        refusal = "only a curator raises a total."
    elif typed != ledger.name:
        refusal = f"type the ledger's name exactly ({as_text(ledger.name)}) to confirm."
    elif not reason:
        refusal = "give the reason for the raise: it is recorded with it."
    else:
        refusal = None
    if refusal is not None:
        st.error(f"Nothing raised: {refusal}", icon=":material/error:")
        return
    try:
        ledger.raise_total(amount, reason=reason, actor=current_actor(), key=f"raise-{token}")
    except LedgerUnavailableError as exc:
        st.error(as_written(exc), icon=":material/error:")
        return
    # Rerun so the balance, the sidebar and the audit trail show the raise.
    _done(f"Raised the total of “{as_text(ledger.name)}” by {amount}, recorded with your reason.")
