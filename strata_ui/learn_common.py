"""Streamlit helpers shared by the Learn page's explainers and presets.

Every explainer and preset draws through these, so each chart gets the same treatment: sized for the
screen (smaller with bigger text in workshop mode), a one-sentence summary under it, and every
formula its source.
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st

from dpcore import theory
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.grouping import Grouping
from strata_ui import charts_learn, pipeline
from strata_ui.state import get_state

# Units of the demo data's numeric columns, for axis labels; other columns get "units of `col`".
VALUE_UNITS = {
    "hours_per_week": "hours per week",
    "age": "years",
    "income_over_50k": "share of people, 0 to 1",
    "score": "probability, 0 to 1",
    "value": "units of the synthetic value",
}


def unit_of(column: str | None) -> str:
    """A plain-language unit for ``column`` (for axis titles and summaries)."""
    if column is None:
        return "units"
    return VALUE_UNITS.get(column, f"units of `{column}`")


@dataclass
class LearnSettings:
    """The Learn page's own choices; they never change the plan that the Release page commits."""

    # What ε means
    epsilon: float = 1.0
    delta: float = 1e-6
    # Why small groups pay more
    group_epsilon: float = 1.0
    group_size: int = 1000
    # Stratify or not
    alpha: float | None = None  # None: start at the data's fitted α
    # CoinPress step by step
    coinpress_group: str | None = None  # None: the smallest group
    coinpress_steps: int = 3
    coinpress_rho: float = 0.5
    # Why confidence intervals break under DP
    ratio_ci_n: int = 5000
    ratio_ci_weighted: bool = False
    # Loose bounds, still valid
    gvdp_bounds_rho: float = 0.1
    # Presets
    figure1_groups: str = "race"
    figure1_alpha: float = 0.13
    figure3_rho: float = 0.5
    table1_setting: str = "weighted-5000"
    gvdp_ols_panel: str = "c"


def show_chart(fig: go.Figure, *, key: str, summary: str) -> None:
    """Draw ``fig`` sized for the screen (workshop mode: projector size) and its summary under it."""
    st.plotly_chart(charts_learn.sized(fig, workshop=get_state().workshop_mode), key=key)
    st.markdown(summary)


def formula(latex: str, source: str) -> None:
    """A formula and, under it, the paper and equation it comes from."""
    st.latex(latex)
    st.caption(f"Source: {source}")


def current_grouping_or_none() -> tuple[Grouping | None, str | None]:
    """The session's groups, or (None, a message saying what to fix on the other pages)."""
    try:
        return pipeline.current_grouping(get_state()), None
    except (ValueError, TypeError) as exc:
        return None, str(exc)


def current_values_or_none() -> tuple[GroupValues | None, str | None]:
    """The session's groups with their values of the value column, or (None, what to fix)."""
    try:
        return pipeline.current_values(get_state()), None
    except (ValueError, TypeError) as exc:
        return None, str(exc)


@st.cache_data(max_entries=64, show_spinner=False)
def fitted_alpha(shares: tuple[float, ...]) -> float:
    """Dirichlet α of the group shares (:func:`dpcore.theory.dirichlet_alpha`), cached on the
    rounded shares."""
    return theory.dirichlet_alpha(list(shares))


def nearest(options: tuple[float, ...], value: float) -> float:
    """The option closest to ``value`` on a log scale (for log sliders)."""
    return min(options, key=lambda o: abs(o - value) / o)
