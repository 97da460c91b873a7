"""The Plan page's frontier of stratification choices: every grouping of the candidate columns
scored by simulated releases (the analysis' ``frontier``), charted, and each adoptable in one
click."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.analyses import get
from dpcore.analyses.base import Analysis, unit_keyword
from dpcore.foundations.accounting import Budget
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.privacy_unit import PrivacyUnit
from strata_ui import charts_planner, pipeline
from strata_ui.budget_language import budget_text
from strata_ui.planner import PlannerView, value_unit
from strata_ui.state import get_dataset, get_settings, get_state, reset_settings, update_settings
from strata_ui.style import plain_number
from strata_ui.text import as_written

__all__ = ["frontier_column_options", "render_frontier"]

FRONTIER_REPLICATES = 200
MAX_FRONTIER_COLUMNS = 4  # 15 stratifications × 3 strategies: about a second on the demo
ADOPTED_FLASH = "plan.adopted_flash"  # shown once, after the rerun that adopts a candidate


def frontier_column_options(frame: pd.DataFrame, kept_apart: list[str]) -> list[str]:
    """Columns the frontier can group by: text-like ones, and numeric ones with bucket edges."""
    state = get_state()
    options = []
    for column in frame.columns:
        if column in kept_apart:
            continue
        numeric = pd.api.types.is_numeric_dtype(frame[column])
        if not numeric or pd.api.types.is_bool_dtype(frame[column]):
            options.append(column)
        elif column in state.bucket_edges:
            options.append(column)
    return options


@st.cache_data(max_entries=8, show_spinner="Scoring every stratification…")
def _frontier(
    name: str, _frame: pd.DataFrame, fingerprint: str, columns: tuple[str, ...], settings,
    budget: Budget, spec: GroupingSpec, seed: int, unit: PrivacyUnit,
) -> pd.DataFrame:  # fmt: skip
    analysis = get(name)
    return analysis.frontier(
        _frame, list(columns), settings, budget, spec, replicates=FRONTIER_REPLICATES, rng=seed,
        **unit_keyword(analysis, unit),
    )  # fmt: skip


def render_frontier(analysis: Analysis, settings: object, kept_apart: list[str]) -> None:
    """Candidate columns, the frontier chart, and a button that adopts a candidate."""
    adopted = st.session_state.pop(ADOPTED_FLASH, None)
    if adopted:
        st.success(adopted, icon=":material/check:")
    state, frame = get_state(), get_dataset()
    options = frontier_column_options(frame, kept_apart)
    view = get_settings(PlannerView)
    default = view.frontier_columns if view.frontier_columns is not None else state.strata_columns
    columns = st.multiselect(
        "Candidate columns", options, default=[c for c in default if c in options],
        max_selections=MAX_FRONTIER_COLUMNS, key=f"plan.frontier_columns.{state.dataset_fingerprint}",
        help="Every subset of these columns is a candidate grouping (at most "
        f"{MAX_FRONTIER_COLUMNS} columns: {2**MAX_FRONTIER_COLUMNS - 1} groupings). A numeric "
        "column is offered once it has bucket edges on the Strata page.",
    )  # fmt: skip
    if tuple(columns) != view.frontier_columns:
        update_settings(PlannerView, frontier_columns=tuple(columns))
    if not columns:
        st.info("Choose one or more candidate columns.", icon=":material/info:")
        return
    budget = pipeline.page_budget(state)
    # The candidates' own spec: the Strata page's rule, and its edges for every candidate column
    # (the session's grouping spec holds edges only for the columns grouped by now).
    spec = GroupingSpec(
        by=tuple(columns),
        edges=tuple((c, tuple(state.bucket_edges[c])) for c in columns if c in state.bucket_edges),
        min_group_size=state.min_group_size, small_groups=state.small_groups,
        needs_values=analysis.value_columns(settings),
    )  # fmt: skip
    table = _frontier(
        analysis.name, frame, state.dataset_fingerprint, tuple(columns), settings, budget, spec,
        state.seed, pipeline.checked_unit(analysis, state),
    )  # fmt: skip
    st.caption(
        f"At the Budget page's {budget_text(budget)}, {FRONTIER_REPLICATES} "
        "simulated releases per candidate, with the Strata page's small-group rule and the "
        "counts of each candidate's groups as shares. Large markers are on the frontier: no "
        "other choice is better on both axes."
    )
    st.plotly_chart(
        charts_planner.frontier_chart(table, value_unit(settings, markdown=False)),
        key="plan.frontier_chart",
    )
    st.caption(charts_planner.frontier_summary(table))
    _frontier_tables(table)
    _adopt_candidate(table, settings)


ERROR_COLUMNS = ["population error", "worst group's error", "parity error (relative)"]


def _frontier_tables(table: pd.DataFrame) -> None:
    front = table[table["pareto"]].sort_values("global_error")
    st.markdown("**On the frontier**")
    st.dataframe(
        front[["label", "groups", "global_error", "worst_group_error", "parity_error"]]
        .rename(
            columns={
                "label": "grouping and strategy",
                "global_error": "population error",
                "worst_group_error": "worst group's error",
                "parity_error": "parity error (relative)",
            }
        )  # fmt: skip
        .style.format(plain_number, subset=ERROR_COLUMNS, na_rep="—"),
        hide_index=True,
    )
    skipped = table[table["skipped"] != ""].drop_duplicates("by")
    for _, row in skipped.iterrows():
        st.caption(
            f"Not scored: {as_written(' × '.join(row['by']))} ({as_written(row['skipped'])})."
        )


def _adopt_candidate(table: pd.DataFrame, settings: object) -> None:
    scored = table[table["skipped"] == ""].sort_values(
        ["pareto", "global_error"], ascending=[False, True], kind="stable"
    )
    labels = scored["label"].tolist()
    chosen = st.selectbox("Adopt a candidate", labels, key="plan.adopt_choice")
    if chosen is None or not st.button("Use this grouping and strategy", key="plan.adopt"):
        return
    row = scored.set_index("label").loc[chosen]
    state = get_state()
    state.strata_columns = list(row["by"])
    if hasattr(settings, "strategy"):
        reset_settings(type(settings), strategy=row["strategy"])
    st.session_state[ADOPTED_FLASH] = (
        f"Now grouping by {as_written(' × '.join(row['by']))}, "
        f"{row['strategy_name'].lower()}. The Strata and Estimator "
        "pages show it, and the answer above is for it."
    )
    st.rerun()
