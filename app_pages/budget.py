"""Budget: the privacy budget, what it allows, and what is left."""

import math

import pandas as pd
import streamlit as st

from dpcore.foundations.accounting import ZCDP, Budget, PureDP, format_components
from strata_ui import budget_language, constants, ledger_ui, pipeline
from strata_ui.analyses import current
from strata_ui.budget_control import budget_input
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

st.subheader("Project ledger")
st.markdown(
    "Keep one ledger per project: one set of people, one total budget. A ledger's first release "
    "makes it the budget of that release's data; a release on other data then asks you first, "
    "because data about other people deserves a ledger of its own, and data about the same "
    "people must share this one."
)
ledger_ui.render_flash()
ledger_ui.render_ledger_choice(ledger)
total, spent, remaining = st.columns(3)
total.metric("Total", format_components(ledger.total.components()), help=str(ledger.total))
spent.metric("Spent", format_components(ledger.spent()))
releases = len(ledger.history(payloads=False))
spent.caption(f"{releases} release{'' if releases == 1 else 's'} so far")
with remaining:
    render_remaining_budget(ledger)
st.caption(
    "Budgets are in ρ-zero-concentrated DP (zCDP): the costs of successive releases add up, and "
    "any ρ converts to a familiar (ε, δ)-DP guarantee."
)
with st.expander("Start a new ledger, or reset this one", icon=":material/settings:"):
    ledger_ui.render_ledger_admin(ledger)

state = get_state()
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
