"""Budget: the privacy budget, what it allows, and what is left."""

import math

import pandas as pd
import streamlit as st

from dpcore.foundations.accounting import ZCDP, Budget, PureDP, format_components
from strata_ui import budget_language, constants, ledger_ui, pipeline, roles
from strata_ui.analyses import current
from strata_ui.audit_ui import render_audit
from strata_ui.budget_control import budget_input
from strata_ui.ledger_admin import render_ledger_admin
from strata_ui.page_end import stop_page
from strata_ui.sidebar import format_delta, render_remaining_budget
from strata_ui.state import get_settings, get_state, open_ledger_or_stop
from strata_ui.style import plain_number
from strata_ui.widgets import labelled_radio, show_error

st.title("Budget")
st.markdown(
    "Every release is charged to a ledger with a fixed total budget. The ledger adds up what each "
    "release costs and refuses any release that would overspend. A smaller budget means more noise "
    "and stronger privacy."
)

ledger = open_ledger_or_stop()
state = get_state()
in_use = pipeline.ledger_dataset(state)

st.subheader("Project ledger")
st.markdown(
    "Keep one ledger per project: one set of people, one total budget. A ledger's first release "
    "makes it the budget of that release's data, however the data is read (uploaded, opened "
    "from a path or read by the command line: the data is known by its content). A release on "
    "other data asks you first; data another ledger released on is refused, because a new "
    "ledger is no new budget for the same people. Only a raise, with its reason, adds budget."
)
ledger_ui.render_flash()
ledger_ui.render_ledger_choice(ledger)
granted = ledger.granted()
total, spent, remaining = st.columns(3)
total.metric(
    "Total", format_components(granted.components()),
    help=f"Started with {ledger.total}" + ("" if granted == ledger.total else ", then raised"),
)  # fmt: skip
spent.metric("Spent", format_components(ledger.spent()))
releases = len(ledger.history(payloads=False))
spent.caption(f"{releases} release{'' if releases == 1 else 's'} so far")
with remaining:
    render_remaining_budget(ledger)
ledger_ui.render_people_loss(ledger, in_use)
st.caption(
    "Budgets are in ρ-zero-concentrated DP (zCDP): the costs of successive releases add up, and "
    "any ρ converts to a familiar (ε, δ)-DP guarantee. Across ledgers, pure ε adds up while "
    "every release is pure; beside ρ each ε counts as ρ = ε²/2."
)
if roles.allows(roles.Action.MANAGE_LEDGERS):
    with st.expander("Start a new ledger, or raise this one's total", icon=":material/settings:"):
        render_ledger_admin(ledger, in_use)
ledger_ui.render_allowances(ledger)
with st.expander("Audit trail: every release, raise and approval", icon=":material/history:"):
    render_audit(ledger, in_use)

st.subheader("Budget of the next release")
st.markdown(
    "Set how much privacy each release may use. **ε** (pure DP) bounds how much any one person "
    "can change the odds of any output; **ρ** (zero-concentrated DP) is the natural unit for "
    "Gaussian noise, and converts to an (ε, δ) guarantee."
)
st.markdown(budget_language.RULE)
KIND_LABELS = {"pure": "ε — pure differential privacy", "zcdp": "ρ — zero-concentrated DP (zCDP)"}
labelled_radio(
    "Budget unit",
    state,
    "budget_kind",
    KIND_LABELS,
    horizontal=True,
    key="budget.kind",
    help="Either unit works for every analysis: the ledger charges ε as ρ = ε²/2.",
)
value = budget_input(state)
native: Budget = PureDP(value) if state.budget_kind == "pure" else ZCDP(value)
rho = native.to_zcdp().rho if state.budget_kind == "pure" else native.rho
if state.budget_kind == "pure":
    st.caption(
        f"ε = {plain_number(value)}: any one person changes the chance of any result by at most "
        f"a factor e^ε = {plain_number(math.exp(value), 3)}. Charged as ρ = ε²/2 = "
        f"{plain_number(rho)}."
    )
else:
    main_eps = ZCDP(rho).to_approx_dp(constants.DISPLAY_DELTA).epsilon
    st.caption(
        f"ρ = {plain_number(rho)}-zCDP implies (ε = {plain_number(main_eps, 3)}, "
        f"δ = {format_delta(constants.DISPLAY_DELTA)})-DP. Other δ:"
    )
    rows = [
        {
            "δ": format_delta(delta) + (" (main)" if delta == constants.DISPLAY_DELTA else ""),
            "ε": plain_number(ZCDP(rho).to_approx_dp(delta).epsilon, 3),
        }
        for delta in constants.EQUIVALENT_DELTAS
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="content")

ui = current()
try:
    st.caption(
        ui.analysis.describe_budget(
            get_settings(ui.analysis.settings_type), pipeline.page_budget(state)
        )
    )
    if state.person_column is not None and ui.analysis.honours_person_column:
        st.caption(pipeline.privacy_unit(state).describe_budget(pipeline.page_budget(state)))
except (ValueError, TypeError) as exc:  # e.g. a Gaussian mean at a pure ε budget
    show_error(exc)
    stop_page()
try:
    # The exact cost can depend on the plan (the ratio's follows from its noise), so price it.
    cost = ui.current_plan().cost
    if (note := budget_language.charge_note(native, cost)) is not None:
        st.markdown(note)
    st.markdown(ledger_ui.cost_sentence(cost, ledger))
except (ValueError, TypeError):  # the plan is not ready yet: the Release page says what to fix
    st.caption("The cost of one release shows here once the release is ready to plan.")
ui.render_budget_choices()
