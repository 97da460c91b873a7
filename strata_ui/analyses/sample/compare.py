"""The private sample's Compare page: how close one private record's distribution comes to the
group's, across budgets, against the paper's guarantee (simulation, numpy noise, nothing spent)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.analyses.sample import SAMPLE, SampleRows, SampleSettings
from dpcore.foundations.accounting import ZCDP, PureDP
from strata_ui import pipeline
from strata_ui.analyses.sample import charts
from strata_ui.analyses.sample.session import current_rows
from strata_ui.analyses.sample.settings import SampleView
from strata_ui.state import get_settings, get_state
from strata_ui.style import plain_number
from strata_ui.text import as_text, as_written
from strata_ui.widgets import show_error

SWEEP = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
"""Budgets of the sweep, in the Budget page's unit (ε or ρ), with the page's own added."""


@st.cache_data(max_entries=64, show_spinner="Simulating the sampler across budgets…")
def _sweep(
    _rows: SampleRows, key: tuple, settings: SampleSettings, kind: str, budgets: tuple,
    runs: int, seed: int,
) -> tuple[pd.DataFrame, list[tuple[float, str]]]:  # fmt: skip
    """Distance and guarantee at each budget (``key`` stands for the rows); the budgets where
    the plan is refused, with why."""
    points, refused = [], []
    for value in budgets:
        budget = PureDP(value) if kind == "pure" else ZCDP(value)
        try:
            study = SAMPLE.study(_rows, settings, budget, replicates=runs, rng=seed)
        except ValueError as exc:
            refused.append((value, str(exc)))
            continue
        points.append({"budget": value, **study.iloc[0].to_dict()})
    return pd.DataFrame(points), refused


def render_compare() -> None:
    state = get_state()
    settings, view = get_settings(SampleSettings), get_settings(SampleView)
    st.markdown(
        f"One private record of “{as_text(settings.group)}” is drawn again and again at each budget; the "
        "chart shows how far the records' distribution is from the group's own (total "
        "variation, 0 = identical), beside what the paper guarantees. Nothing is spent."
    )
    try:
        rows = current_rows()
        page = pipeline.page_budget(state)
    except (ValueError, TypeError) as exc:
        show_error(exc)
        return
    symbol, current = ("ε", page.epsilon) if state.budget_kind == "pure" else ("ρ", page.rho)
    budgets = tuple(sorted({*SWEEP, current}))
    key = (pipeline.grouping_key(state), settings.columns)
    frame, refused = _sweep(rows, key, settings, state.budget_kind, budgets, view.runs, view.seed)
    if frame.empty:
        st.error(
            "No budget of the sweep can run: " + " ".join(map(as_written, refused[:1])),
            icon=":material/error:",
        )
        return
    st.plotly_chart(charts.sweep_figure(frame, symbol=symbol, current=current),
                    key="sample.compare.chart")  # fmt: skip
    st.caption(
        f"{view.runs:,} simulated runs per budget (seed {view.seed}; Estimator page). The "
        "simulated distance carries its own Monte Carlo error, so values below about "
        f"{plain_number(frame['floor'].max(), 1)} are simulation noise."
    )
    if refused:
        st.caption(
            f"Not drawn at {symbol} = {', '.join(f'{v:g}' for v, _ in refused)}: {as_written(refused[0][1])}"
        )
