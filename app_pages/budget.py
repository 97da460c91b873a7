"""Budget: the privacy budget, what it allows, and what is left."""

import streamlit as st

from dpcore.accounting import format_components
from strata_ui.sidebar import render_remaining_budget
from strata_ui.state import LedgerUnavailableError, get_state, open_ledger

st.title("Budget")
st.markdown(
    "Every release is charged to a ledger with a fixed total budget. The ledger adds up what each "
    "release costs and refuses any release that would overspend. A smaller budget means more noise "
    "and stronger privacy."
)

try:
    ledger = open_ledger()
except LedgerUnavailableError as exc:
    st.error(str(exc), icon=":material/error:")
    st.stop()

st.subheader(f"Ledger “{ledger.name}”")
total, spent, remaining = st.columns(3)
total.metric("Total", format_components(ledger.total.components()), help=str(ledger.total))
spent.metric("Spent", format_components(ledger.spent()))
releases = len(ledger.history())
spent.caption(f"{releases} release{'' if releases == 1 else 's'} so far")
with remaining:
    render_remaining_budget(ledger)
st.caption(
    "Budgets are in ρ-zero-concentrated DP (zCDP): the costs of successive releases add up, and "
    "any ρ converts to a familiar (ε, δ)-DP guarantee."
)

state = get_state()
planned = f"ε = {state.epsilon:g}" if state.budget_kind == "pure" else f"ρ = {state.rho:g}"
st.subheader("Next release")
st.markdown(f"**Budget per release:** {planned}")

st.caption(
    ":material/upcoming: Coming next: set the budget of the next release with ε or ρ and see how "
    "much noise it adds."
)
