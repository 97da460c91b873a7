"""The project's ledger on screen: which one is in use and switching, analysts' allowances
(Budget page), the sidebar's lines naming it and what its people have lost in all, and what a
release costs in it. Starting a ledger and raising a total: :mod:`strata_ui.ledger_admin`; the
audit trail: :mod:`strata_ui.audit_ui`. Each action checks the user's role itself
(:mod:`strata_ui.roles`): the pages hide what a role may not do, and these functions refuse it
anyway."""

from __future__ import annotations

import math

import streamlit as st

from dpcore.foundations.accounting import (
    SYMBOLS,
    ZCDP,
    Budget,
    PureDP,
    exact_components,
    format_components,
)
from dpcore.foundations.ledger import Ledger, LedgerDataset, LedgerSummary, Population, list_ledgers
from strata_ui import allowances, constants, roles, serving
from strata_ui.roles import Action, NotAllowed, Role
from strata_ui.state import get_state
from strata_ui.style import plain_number
from strata_ui.text import as_text, as_written

SWITCH_KEY = "ledger.switch"


def data_of(names: list[str]) -> str:
    """The data a ledger covers, for a sentence in markdown: “A” or “A” and “B”, each name
    shown as text."""
    return " and ".join(f"“{as_text(name)}”" for name in names)


def render_sidebar_line(ledger: Ledger) -> None:
    """The project in use: the ledger's name and the data it is the budget of."""
    covered = [d.name for d in ledger.datasets()]
    st.markdown(f"Project ledger: **{as_text(ledger.name)}**")
    # Said as a fact, not an instruction: a user who has just started a ledger read "Choose or
    # start a ledger" as if none were in use.
    if roles.allows(Action.MANAGE_LEDGERS):
        where = " The Budget page switches to another ledger or starts one."
    elif roles.allows(Action.PREVIEW):
        where = " See your allowance on the Budget page."
    else:
        where = ""
    st.caption(
        (f"The budget of {data_of(covered)}." if covered else "Nothing released from it yet.")
        + where
    )


def people_sentence(people: Population) -> str | None:
    """What the people of a population have lost in all, across its ledgers and their kinds of
    budget (in ρ too when the loss is in ε, to compare with totals in ρ), and what was granted
    them; None before any release."""
    figure = people.figure()
    if figure is None:
        return None
    in_rho = f" (ρ = {figure['as_zcdp']:.4g} in zCDP)" if "as_zcdp" in figure else ""
    releases = f"{people.releases} release{'' if people.releases == 1 else 's'}"
    ledgers = " and ".join(f"“{as_text(name)}”" for name in people.ledgers)
    word = "ledger" if len(people.ledgers) == 1 else "ledgers"
    return (
        f"Lost in all by the people of {data_of([d.name for d in people.datasets])}: "
        f"**{people.loss}**{in_rho}, over {releases} under {word} {ledgers}; granted them in "
        f"all: {people.total}."
    )


def render_people_loss(ledger: Ledger, in_use: LedgerDataset | None) -> None:
    """What the people of ``ledger`` have lost in all (every ledger and archive that released
    on their data), and, when the data in use belongs to other people, what those have lost."""
    people = ledger.population()
    if (sentence := people_sentence(people)) is not None:
        st.caption(sentence)
    if in_use is None or in_use.identity in {d.identity for d in people.datasets}:
        return
    others = ledger.population_of(in_use)
    if others.loss is not None and not set(others.ledgers) & set(people.ledgers):
        names = " and ".join(f"“{as_text(name)}”" for name in others.ledgers)
        st.caption(
            f"The data in use, “{as_text(in_use.name)}”, was released on under {names}: its people "
            f"have lost **{others.loss}** in all."
        )


def _summary_line(summary: LedgerSummary) -> str:
    releases = f"{summary.releases} release{'' if summary.releases == 1 else 's'}"
    data = "no data yet" if summary.dataset is None else f"data “{summary.dataset}”"
    return f"{summary.name} · {data} · {releases}"


def _refused(action: Action) -> bool:
    """Say so and return True when the user's role does not allow ``action``."""
    try:
        roles.require(action)
    except NotAllowed as exc:
        st.error(as_written(exc), icon=":material/block:")
        return True
    return False


def use_a_usable_ledger() -> None:
    """Move an analyst's session to a ledger they have an allowance on, when the one in use is
    not (the default ledger, at sign-in); with none, the session stays where it is, and every
    commit there is refused."""
    usable = allowances.usable_ledgers(roles.current_user())
    state = get_state()
    if usable and state.ledger_name not in usable:
        state.ledger_name = usable[0]


def _switch_ledger() -> None:
    # A callback runs before the page, so the sidebar and the page open the chosen ledger.
    chosen = st.session_state[SWITCH_KEY]
    if allowances.may_use_ledger(chosen, roles.current_user()):
        get_state().ledger_name = chosen


def render_ledger_choice(ledger: Ledger) -> None:
    """Choose the project's ledger among the ledgers in the file the user may use."""
    usable = allowances.usable_ledgers(roles.current_user(), ledger.path)
    summaries = {s.name: s for s in list_ledgers(ledger.path) if usable is None or s.name in usable}
    if ledger.name not in summaries:  # an analyst with no allowance here: nothing to switch to
        return
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
    """The outcome of the last start or raise, shown once after the rerun that follows it."""
    state = get_state()
    if state.ledger_flash:
        st.success(state.ledger_flash, icon=":material/check_circle:")
        state.ledger_flash = None


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
        own = f"{cost}, that is (ε = {plain_number(epsilon, 3)}, δ = {delta:g})-DP; {charged}"
    else:
        own = f"{cost}; {charged}"
    total = {k: float(v) for k, v in ledger.granted().components().items()}
    now, fresh = (releases_affordable(charge, left) for left in (ledger.remaining(), total))
    return (
        f"**One release costs** {own}. “{as_text(ledger.name)}” has room for **{now} more "
        f"release{'' if now == 1 else 's'}** like this one ({fresh} on its whole budget of "
        f"{format_components(total)})."
    )


def render_allowances(ledger: Ledger) -> None:
    """Analysts' allowances on ``ledger``: a curator sets them; an analyst sees their own."""
    user = roles.current_user()
    config = serving.mode().config
    if config is None:  # single-user mode: no analysts
        return
    symbol = SYMBOLS[allowances.unit_of(ledger)]
    granted = allowances.allowances(ledger)
    if user.role == Role.ANALYST:
        mine = granted.get(user.identity)
        st.markdown(
            f"**Your allowance on “{as_text(ledger.name)}”:** {symbol} = "
            f"{allowances.used_by(ledger, user.identity):.4g} used of {mine.amount:.4g}, set by "
            f"{mine.set_by}."
            if mine is not None
            else f"**You have no allowance on “{as_text(ledger.name)}”**, so you cannot commit here. A "
            "curator gives analysts allowances on this page."
        )
        return
    if not roles.allows(Action.SET_ALLOWANCES, user):
        return
    analysts = sorted(identity for identity, role in config.people.items() if role == "analyst")
    st.subheader("Analysts' allowances")
    st.markdown(
        f"What each analyst may commit on “{as_text(ledger.name)}”, in {symbol}: their releases add up "
        "against it, and the ledger's total still bounds everyone. An analyst with no "
        "allowance here cannot commit on this ledger, nor choose it."
    )
    st.dataframe(
        [
            {
                "analyst": identity,
                f"allowance ({symbol})": granted[identity].amount if identity in granted else None,
                f"used ({symbol})": allowances.used_by(ledger, identity),
                "set by": granted[identity].set_by if identity in granted else "",
            }
            for identity in analysts
        ],
        hide_index=True,
    )
    if analysts:
        _render_allowance_form(ledger, analysts, symbol)


def _render_allowance_form(ledger: Ledger, analysts: list[str], symbol: str) -> None:
    with st.form("ledger.allowance", border=True):
        who = st.selectbox("Analyst", analysts, key="ledger.allowance_who")
        amount = st.number_input(
            f"Allowance ({symbol})", min_value=0.0,
            max_value=float(ledger.total.components()[allowances.unit_of(ledger)]),
            value=0.5, key="ledger.allowance_amount",
            help="0 stops the analyst's commits on this ledger without removing their history.",
        )  # fmt: skip
        if st.form_submit_button("Set allowance"):
            _set_allowance(ledger, who, amount)


def _set_allowance(ledger: Ledger, identity: str, amount: float) -> None:
    try:
        allowances.set_allowance(ledger, identity, amount, by=roles.current_user())
    except (NotAllowed, ValueError) as exc:
        st.error(as_written(exc), icon=":material/block:")
        return
    get_state().ledger_flash = (
        f"{identity} may now commit up to {amount:g} on “{as_text(ledger.name)}”."
    )
    st.rerun()
