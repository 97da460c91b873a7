"""Plan: from the accuracy you need to the budget it costs, and which stratification to choose."""

import streamlit as st

from dpcore.analyses import PlannerUnavailable
from dpcore.analyses.base import NeedsRowsInMemory
from dpcore.foundations.errors import NeedsFixedShares
from dpcore.foundations.ledger import LedgerUnavailableError
from dpcore.planner import smallest_budget
from strata_ui import frontier_ui, planner, portfolio
from strata_ui.analyses import current, stops_for_rows
from strata_ui.page_end import stop_page
from strata_ui.state import get_settings, get_state, open_ledger
from strata_ui.text import as_written
from strata_ui.widgets import show_error

st.title("Plan")
st.markdown(
    "Start from the accuracy you need: the planner finds the smallest budget at which every "
    "group's estimate meets it, names the group that sets the price, and checks the answer with "
    "simulated releases. Below, compare every way of grouping people at the current budget."
)

if stops_for_rows():
    stop_page()
ui, state = current(), get_state()
settings = get_settings(ui.analysis.settings_type)
try:
    model = planner.cached_error_model(ui.analysis, settings)
except NeedsFixedShares as exc:  # sizes treated as public: the explicit choice is offered
    show_error(exc)
    stop_page()
except (ValueError, TypeError) as exc:  # PlannerUnavailable, missing bounds, no grouping yet
    st.info(str(exc), icon=":material/info:")
    stop_page()
if model is None:  # a slow simulation the user has not asked for yet: its button is shown
    stop_page()

st.subheader("The accuracy you need")
try:
    target = planner.target_inputs(planner.value_unit(settings, model=model), model)
    answer = smallest_budget(model, target)
except ValueError as exc:
    show_error(exc)
    stop_page()
ledger = None
if not state.workshop_mode:  # workshop mode shows no ledger
    try:
        ledger = open_ledger()
    except LedgerUnavailableError as exc:
        st.caption(
            f"The ledger cannot be read now, so the answer is not compared with it: {as_written(exc)}"
        )
planner.render_answer(answer, model, ledger, ui.analysis, settings)
with st.expander("What the planner assumes"):
    st.markdown("\n".join(f"- {line}" for line in model.assumptions))

if answer.budget is not None:
    st.subheader("Checked by simulation")
    st.caption(model.check_note)
    checked = planner.run_check(ui.analysis, settings, answer)
    if checked is not None:
        planner.render_check(*checked, answer.binding, answer.target)

portfolio.render_plan_of_releases(ui, settings, target)

st.subheader("Which stratification?")
st.info(
    "Curator preview, not differentially private: every candidate is scored against the "
    "confidential data.",
    icon=":material/visibility:",
)
try:
    frontier_ui.render_frontier(ui.analysis, settings, list(ui.columns_not_for_grouping()))
except (PlannerUnavailable, NeedsRowsInMemory) as exc:  # e.g. on files read where they lie
    st.info(str(exc), icon=":material/info:")
except ValueError as exc:  # e.g. a Gaussian mean at an ε budget: the message says what to switch
    show_error(exc)
