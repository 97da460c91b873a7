"""The sidebar shared by every page: who is signed in (or single-user mode), the dataset in
use, the project's ledger and the budget left in it, and workshop mode."""

from __future__ import annotations

import math

import streamlit as st

from dpcore.engines import EngineError
from dpcore.foundations.accounting import SYMBOLS, ZCDP
from dpcore.foundations.ledger import Ledger, LedgerUnavailableError
from strata_ui import constants, pipeline, roles
from strata_ui.engine_sources import EngineSource
from strata_ui.ledger_ui import render_people_loss, render_sidebar_line
from strata_ui.roles import Action, User
from strata_ui.sign_in import render_who
from strata_ui.state import get_state, open_ledger
from strata_ui.style import plain_number
from strata_ui.text import as_text, as_written
from strata_ui.uploads import restore_demo


def render_sidebar(user: User) -> bool:
    """Draw the intro line, who is signed in, the active dataset (to roles that see the
    confidential data), the remaining privacy budget and the workshop switch; return whether
    workshop mode is on (``app.py`` needs it to build the navigation)."""
    with st.sidebar:
        st.markdown("**Strata Lab** — who pays for DP noise?")
        render_who(user)
        workshop = _render_workshop_switch()
        if roles.allows(Action.PREVIEW, user):  # its size is the confidential data's
            _render_dataset()
        _render_budget()
    return workshop


_WORKSHOP_SEEN = "_strata_lab_sidebar.workshop_seen"  # the session has run in workshop mode
_WORKSHOP_SWITCHED_ON = "_strata_lab_sidebar.workshop_switched_on"


def lands_on_workshop_page(*, opened_at_root: bool) -> bool:
    """Whether this workshop run should go to the Learn page: when workshop mode has just been
    switched on, or when a session opens in it at the app's root (a deep link to another page
    is kept)."""
    just_switched_on = st.session_state.pop(_WORKSHOP_SWITCHED_ON, False)
    first_run = _WORKSHOP_SEEN not in st.session_state
    st.session_state[_WORKSHOP_SEEN] = True
    return just_switched_on or (first_run and opened_at_root)


def _workshop_switched() -> None:
    """Switching workshop mode on goes to the Learn page and puts an uploaded file or opened
    files away: workshops use built-in data only."""
    state = get_state()
    st.session_state[_WORKSHOP_SWITCHED_ON] = st.session_state[constants.WORKSHOP_QUERY_KEY]
    if not st.session_state[constants.WORKSHOP_QUERY_KEY]:
        return
    preset = state.dataset_fingerprint.startswith(constants.PRESET_FINGERPRINT_PREFIX)
    if state.source is not None or (state.uploaded is not None and not preset):
        restore_demo(state)


def _render_workshop_switch() -> bool:
    state = get_state()
    # Kept in the address (?workshop=true, see url_state), so a shared link or a reload stays
    # in workshop mode.
    state.workshop_mode = st.toggle(
        "Workshop mode",
        value=state.workshop_mode,
        key=constants.WORKSHOP_QUERY_KEY,
        on_change=_workshop_switched,
        help="For teaching: the built-in demo data only (no uploads), no Release page, and "
        "charts sized for a projector. Nothing can spend privacy budget.",
    )
    if state.workshop_mode:
        st.caption("Demo data only · Release hidden · projector-sized charts")
    return state.workshop_mode


def render_remaining_budget(ledger: Ledger) -> None:
    """Show what ``ledger`` has left as a metric, a progress bar and an (ε, δ) equivalent."""
    remaining = ledger.remaining()
    total = ledger.granted().components()
    # The first component is the one that runs out: ρ for zCDP, ε for pure or approximate DP.
    key = next(iter(remaining))
    left, whole = remaining[key], total[key]
    st.metric(
        f"{SYMBOLS[key]} remaining",
        f"{plain_number(left)} of {plain_number(whole)}",
        help=f"Privacy budget left in ledger “{as_text(ledger.name)}”, total {ledger.granted()}.",
    )
    st.progress(min(max(left / whole, 0.0), 1.0), text=f"{left / whole:.0%} of the budget left")
    if left <= 0:
        st.caption("Budget used up: this ledger allows no more releases.")
    elif key == "rho" and get_state().budget_kind == "pure":
        # In the Budget page's own language: an ε release is charged ρ = ε²/2.
        st.caption(
            f"Room for one more release of up to ε = {plain_number(math.sqrt(2 * left), 3)}."
        )
    elif key == "rho":
        delta = constants.DISPLAY_DELTA
        epsilon = ZCDP(left).to_approx_dp(delta).epsilon
        st.caption(f"Equivalent to (ε = {plain_number(epsilon, 3)}, δ = {format_delta(delta)})-DP.")


def format_delta(delta: float) -> str:
    """Scientific notation without padding: ``1e-6`` rather than Python's ``1e-06``."""
    mantissa, exponent = f"{delta:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _render_dataset() -> None:
    state = get_state()
    st.subheader("Dataset", divider="gray")
    try:
        shape = f"{pipeline.row_count(state):,} rows × {len(pipeline.column_kinds(state))} columns"
    except EngineError as exc:  # data opened earlier, since moved or changed
        st.error(f"{as_text(state.dataset_name)}: {as_written(exc)}", icon=":material/error:")
        return
    st.markdown("  \n".join(_dataset_lines(state.dataset_name, state.source, shape)))
    st.caption(
        "The address bar keeps your choices, so a refresh or a copied link brings them back. "
        "It holds what you chose and a file's name, never the data."
    )


def _dataset_lines(name: str, source: EngineSource | None, shape: str) -> list[str]:
    """The dataset's name, shape and, for data read where it lies, the place — said once: a
    folder's name is its path, which the place already gives."""
    if source is None:
        return [as_text(name), shape]
    place = as_written(source.place)
    if name in source.place:
        return [shape, f"Read where it lies, {place}"]
    return [as_text(name), shape, f"read where it lies, {place}"]


def _render_budget() -> None:
    st.subheader("Privacy budget", divider="gray")
    if get_state().workshop_mode:  # a projector shows no project's ledger
        st.caption("Workshop mode spends nothing, so no ledger is shown.")
        return
    try:
        ledger = open_ledger()
    except LedgerUnavailableError as exc:
        st.error(str(exc), icon=":material/error:")
        return
    render_sidebar_line(ledger)
    render_remaining_budget(ledger)
    render_people_loss(ledger, pipeline.ledger_dataset(get_state()))
