"""The Strata page's bucket edges found privately (:mod:`dpcore.release.edges`): for a numeric
grouping column, a release of its quantiles through the ledger, its cost shown before the
commit, whose edges then fill the column's edges as public ones, labelled as found so."""

from __future__ import annotations

import streamlit as st

from dpcore.analyses.base import NeedsRowsInMemory
from dpcore.foundations.accounting import ZCDP, BudgetExceededError, PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.ledger import (
    Ledger,
    LedgerUnavailableError,
    OtherDatasetError,
    ReleasedElsewhereError,
)
from dpcore.release import PlanHeader, UnidentifiedDataError, release
from dpcore.release.edges import MAX_BUCKETS, EdgesPlan, column_values
from strata_ui import allowances, constants, pipeline, release_ui, roles
from strata_ui.state import AppState, get_dataset, open_ledger
from strata_ui.text import as_code, as_text, as_written
from strata_ui.uploads import format_edges

FOUND = "strata.edges_found"
"""Session key: per column, the sentence saying where its edges were found."""
RELEASED_FLASH = "strata.edges_released"
"""Session key: the edges just released, said once after the rerun that follows the spend."""
COSTS = {"pure": (0.05, 0.1, 0.2, 0.5, 1.0), "zcdp": (0.001, 0.005, 0.02, 0.1, 0.5)}


def found_label(column: str) -> str | None:
    """Where ``column``'s edges were found privately, if they were (this session)."""
    return st.session_state.get(FOUND, {}).get(column)


def render(state: AppState, column: str, edges_key: str) -> None:
    """The expander that releases ``column``'s edges; on success the edges go into the
    session's edges (and the text box keyed ``edges_key``, drawn after this)."""
    with st.expander(f"Find edges for {as_code(column)} privately (paid from the budget)",
                     icon=":material/travel_explore:"):  # fmt: skip
        st.markdown(
            "A release of the column's quantiles: each edge is chosen privately among public "
            "candidates within a search range you type, and the ledger is charged once. The "
            "edges it publishes are DP outputs, then used as public edges at no further cost."
        )
        base = f"strata.private_edges.{column}.{state.dataset_fingerprint}"
        buckets = st.slider("Buckets", 2, MAX_BUCKETS, 4, key=f"{base}.buckets",
                            help="Equal shares of the people: 4 buckets cut at the quartiles.")  # fmt: skip
        low_col, high_col = st.columns(2)
        limits = {"min_value": -constants.BOUND_MAGNITUDE_MAX,
                  "max_value": constants.BOUND_MAGNITUDE_MAX}  # fmt: skip
        low = low_col.number_input("Search from", value=0.0, key=f"{base}.low", **limits,
                                   help="No value can be below this, known without the data.")  # fmt: skip
        high = high_col.number_input("Search up to", value=1000.0, key=f"{base}.high", **limits,
                                     help="No value can be above this, known without the data.")  # fmt: skip
        symbol = "ε" if state.budget_kind == "pure" else "ρ"
        value = st.select_slider(f"Cost ({symbol})", options=COSTS[state.budget_kind],
                                 value=COSTS[state.budget_kind][2], key=f"{base}.cost")  # fmt: skip
        try:
            frame = get_dataset()
            budget = PureDP(value) if state.budget_kind == "pure" else ZCDP(value)
            spec = GroupingSpec(by=(column,))
            header = PlanHeader(  # the data's identity as every release records it
                dataset=pipeline.dataset_ref(state, spec), spec=spec, budget=budget, label="",
                level=0.95,
            )  # fmt: skip
            plan = EdgesPlan(column_values(frame, column), header, column, buckets, (low, high))
            ledger = open_ledger()
        except (NeedsRowsInMemory, ValueError, TypeError) as exc:  # the ledger's error too
            st.error(str(exc), icon=":material/error:")
            return
        lines = [line for line in plan.review_lines() if not line.startswith("**Data:**")]
        st.markdown("\n".join(f"- {line}" for line in lines))
        confirmed = st.checkbox(f"I understand this spends {budget} from the ledger",
                                key=f"{base}.confirm")  # fmt: skip
        not_yours = release_ui.allowance_problem(plan.cost, ledger)  # an analyst's allowance
        if not_yours is not None:
            st.caption(f"Release is off: {as_written(not_yours)}")
        if st.button(f"Release the edges ({budget})", key=f"{base}.release",
                     disabled=not confirmed or bool(not_yours), icon=":material/lock:"):  # fmt: skip
            _release(state, plan, ledger, column, edges_key)
        if (released := st.session_state.pop(RELEASED_FLASH, None)) is not None:
            st.success(released, icon=":material/check:")


def _release(state: AppState, plan: EdgesPlan, ledger: Ledger, column: str, edges_key: str) -> None:
    """Commit the edges as the Release page commits a release: as the signed-in user, within an
    analyst's allowance, refused with what to do when the ledger is not this data's."""
    user = roles.current_user()
    try:
        with allowances.committing(ledger, user, plan.cost):
            record = release(plan, ledger, noise="secure", actor=user.actor)
    except roles.NotAllowed as exc:  # the role or the allowance
        st.error(f"{as_written(exc)} Nothing was spent.", icon=":material/block:")
        return
    except OtherDatasetError as exc:
        st.error(
            exc.advice(
                "commit a release on it from the Release page, ticking the box that appears "
                "above its Commit button, then release the edges",
                start="start a new ledger for it on the Budget page",
            ),
            icon=":material/block:",
        )
        return
    except ReleasedElsewhereError as exc:
        st.error(
            exc.advice(
                f"switch to ledger “{exc.owners[0]}” on the Budget page",
                "a curator starts or raises a ledger for it on the Budget page",
            ),
            icon=":material/block:",
        )
        return
    except (BudgetExceededError, LedgerUnavailableError, UnidentifiedDataError, ValueError) as exc:
        st.error(f"Nothing was spent: {as_written(exc)}", icon=":material/block:")
        return
    edges = [float(row["estimate"]) for row in record.outputs]
    state.bucket_edges[column] = edges
    st.session_state[edges_key] = format_edges(edges)
    spent = "spent" if record.spent else "already released; nothing more spent"
    st.session_state.setdefault(FOUND, {})[column] = (
        f"Found privately in the release “{as_text(plan.header.label)}” ({plan.cost}, {spent}), "
        "recorded "
        f"in the ledger: the {plan.buckets - 1} edges are its DP outputs."
    )
    st.session_state[RELEASED_FLASH] = f"Edges released: {format_edges(edges)}."
    st.rerun()  # the sidebar, drawn before this page, then shows what was spent
