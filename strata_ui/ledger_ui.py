"""The project's ledger on screen: which one is in use, switching, starting and resetting one
(Budget page), and the sidebar's line naming it."""

from __future__ import annotations

import math

import streamlit as st

from dpcore.foundations.accounting import ZCDP, Budget, PureDP, exact_components, format_components
from dpcore.foundations.ledger import Ledger, LedgerSummary, list_ledgers
from strata_ui import constants
from strata_ui.state import get_state

SWITCH_KEY = "ledger.switch"


def data_of(names: list[str]) -> str:
    """The data a ledger covers, for a sentence: “A” or “A” and “B”."""
    return " and ".join(f"“{name}”" for name in names)


def render_sidebar_line(ledger: Ledger) -> None:
    """The project in use: the ledger's name and the data it is the budget of."""
    covered = [d.name for d in ledger.datasets()]
    st.markdown(f"Project ledger: **{ledger.name}**")
    # Said as a fact, not an instruction: a user who has just started a ledger read "Choose or
    # start a ledger" as if none were in use.
    st.caption(
        (f"The budget of {data_of(covered)}." if covered else "Nothing released from it yet.")
        + " The Budget page switches to another ledger or starts one."
    )


def _summary_line(summary: LedgerSummary) -> str:
    releases = f"{summary.releases} release{'' if summary.releases == 1 else 's'}"
    data = "no data yet" if summary.dataset is None else f"data “{summary.dataset}”"
    return f"{summary.name} · {data} · {releases}"


def _switch_ledger() -> None:
    # A callback runs before the page, so the sidebar and the page open the chosen ledger.
    get_state().ledger_name = st.session_state[SWITCH_KEY]


def render_ledger_choice(ledger: Ledger) -> None:
    """Choose the project's ledger among every ledger in the file."""
    summaries = {s.name: s for s in list_ledgers(ledger.path)}
    # A keyed selectbox keeps its own value across reruns (its `index` only seeds it), so set it
    # to the ledger in use: otherwise, after "Start new ledger" it would still hold the old name
    # and switch the session straight back, charging the next release to the old ledger.
    st.session_state[SWITCH_KEY] = ledger.name
    st.selectbox(
        "Ledger in use",
        list(summaries),
        key=SWITCH_KEY,
        on_change=_switch_ledger,
        format_func=lambda name: _summary_line(summaries[name]),
        help="Every ledger in the file, archived ones included. Releases charge the one in use.",
    )


def render_flash() -> None:
    """The outcome of the last start or reset, shown once after the rerun that follows it."""
    state = get_state()
    if state.ledger_flash:
        st.success(state.ledger_flash, icon=":material/check_circle:")
        state.ledger_flash = None


def render_ledger_admin(ledger: Ledger) -> None:
    """Start a new ledger, or reset this one — each behind explicit confirmation."""
    names = [s.name for s in list_ledgers(ledger.path)]
    new_col, reset_col = st.columns(2)
    with new_col, st.form("ledger.new", border=True):
        st.markdown("**Start a new ledger**")
        st.caption("For a new project: data about other people, with a budget of its own.")
        name = st.text_input("Name", key="ledger.new_name")
        rho = st.number_input(
            "Total budget ρ (zCDP)",
            min_value=constants.RHO_MIN,
            max_value=constants.RHO_MAX,
            value=constants.DEFAULT_LEDGER_TOTAL.rho,
            key="ledger.new_rho",
        )
        confirm = st.checkbox(
            "I confirm: start a new ledger and use it for the next releases",
            key="ledger.new_confirm",
        )
        if st.form_submit_button("Start new ledger"):
            _start_ledger(name, rho, confirm, names)
    with reset_col, st.form("ledger.reset", border=True):
        st.markdown(f"**Reset “{ledger.name}”**")
        st.caption(
            "Its history is kept as an archived ledger. A reset does not undo the privacy loss "
            "of past releases: only reset when the data or its owner's policy changes."
        )
        typed = st.text_input(
            f"Type the ledger's name ({ledger.name}) to confirm", key="ledger.reset_name"
        )
        if st.form_submit_button("Archive and reset"):
            _reset_ledger(ledger, typed)


def _reset_ledger(ledger: Ledger, typed: str) -> None:
    if typed != ledger.name:
        st.error(
            f"Nothing reset: type the ledger's name exactly ({ledger.name}) to confirm.",
            icon=":material/error:",
        )
        return
    archived = ledger.archive()
    # Rerun so the balance, the sidebar and the list of ledgers show the emptied ledger.
    get_state().ledger_flash = f"Reset. The old history is kept as “{archived}”."
    st.rerun()


def _start_ledger(name: str, rho: float, confirmed: bool, existing: list[str]) -> None:
    name = name.strip()
    if not confirmed:
        st.error("Nothing started: tick the confirmation box first.", icon=":material/error:")
    elif not name:
        st.error("Nothing started: give the new ledger a name.", icon=":material/error:")
    elif name in existing:
        st.error(
            f"Nothing started: a ledger called “{name}” already exists. Choose another name, or "
            "switch to it above.",
            icon=":material/error:",
        )
    else:
        Ledger(None, name, ZCDP(rho))
        get_state().ledger_name = name
        get_state().ledger_flash = f"Started “{name}”: the next releases are charged to it."
        st.rerun()


def releases_affordable(charge: dict[str, float], left: dict[str, float]) -> int:
    """How many releases charging ``charge`` fit in ``left`` (per component, the scarcest)."""
    counts = [left[k] / v for k, v in charge.items() if v > 0]
    # A hair of slack: 1 / 0.25 may come out as 3.9999999999999996 in floats.
    return math.floor(min(counts) * (1 + 1e-12)) if counts else 0


def cost_sentence(cost: Budget, ledger: Ledger) -> str:
    """One release's cost in its own unit and in the ledger's, with an ε for either, and how
    many such releases the ledger affords now and when fresh: the same words for every
    analysis, so one budget control reads the same whichever analysis it prices."""
    charge = {k: float(v) for k, v in exact_components(cost, ledger.total.kind).items()}
    charged = f"the ledger is charged **{format_components(charge)}**"
    if isinstance(cost, PureDP) and ledger.total.kind == "zcdp":
        own = f"{cost}; the ledger counts ε-DP as ρ = ε²/2, so {charged}"
    elif isinstance(cost, ZCDP):
        delta = constants.DISPLAY_DELTA
        epsilon = cost.to_approx_dp(delta).epsilon
        own = f"{cost}, that is (ε = {epsilon:.3g}, δ = {delta:g})-DP; {charged}"
    else:
        own = f"{cost}; {charged}"
    total = {k: float(v) for k, v in ledger.total.components().items()}
    now, fresh = (releases_affordable(charge, left) for left in (ledger.remaining(), total))
    return (
        f"**One release costs** {own}. “{ledger.name}” has room for **{now} more "
        f"release{'' if now == 1 else 's'}** like this one ({fresh} on its whole budget of "
        f"{format_components(total)})."
    )
