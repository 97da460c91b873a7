"""The Learn page's shared pieces: its settings, chart and formula helpers, the table helpers of the
presets, and the explainer that belongs to no analysis (what ε means).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dpcore.foundations import teaching
from strata_ui import constants
from strata_ui.analyses import every
from strata_ui.analyses.base import LearnItem
from strata_ui.learn_charts import (
    epsilon_density_figure,
    epsilon_density_summary,
    epsilon_ratio_figure,
    epsilon_ratio_summary,
    sized,
)
from strata_ui.sidebar import format_delta
from strata_ui.state import get_settings, get_state
from strata_ui.widgets import log_slider


@dataclass
class LearnSettings:
    """The shared explainer's choices (each analysis keeps its Learn items' own); they never
    change the plan that the Release page commits."""

    # What ε means
    epsilon: float = 1.0
    delta: float = 1e-6


def show_chart(fig: go.Figure, *, key: str, summary: str) -> None:
    """Draw ``fig`` sized for the screen (workshop mode: projector size) and its summary under it."""
    st.plotly_chart(sized(fig, workshop=get_state().workshop_mode), key=key)
    st.markdown(summary)


def show_charts(key: str, **charts: tuple[go.Figure, str]) -> None:
    """Draw each named (figure, summary) pair with :func:`show_chart`, keyed ``<key>.<name>``."""
    for name, (fig, summary) in charts.items():
        show_chart(fig, key=f"{key}.{name}", summary=summary)


def formula(latex: str, source: str) -> None:
    """A formula and, under it, the paper and equation it comes from."""
    st.latex(latex)
    st.caption(f"Source: {source}")


def render_epsilon() -> None:
    """Laplace and Gaussian noise on two neighbouring datasets, and the e^ε ratio between them."""
    settings = get_settings(LearnSettings)
    st.markdown(
        "Differential privacy promises that adding or removing **one person** changes the chance "
        "of any published result by at most a factor **e^ε**. Here a count is published with "
        "noise, once on a dataset D and once on D′, which has one more person. Slide ε and watch "
        "how far apart the two curves are."
    )
    left, right = st.columns(2)
    with left:
        log_slider(
            "ε, the privacy budget (log scale)",
            settings,
            "epsilon",
            options=constants.EPSILON_OPTIONS,
            key="learn.epsilon.epsilon",
            help="Smaller ε means stronger privacy: wider noise and curves that overlap more.",
            caption="Smaller ε → wider noise → the two curves are harder to tell apart.",
        )
    with right:
        log_slider(
            "δ, the Gaussian's small failure chance (log scale)",
            settings,
            "delta",
            options=constants.LEARN_DELTA_OPTIONS,
            format_func=format_delta,
            key="learn.epsilon.delta",
            help="Gaussian noise cannot meet the e^ε limit everywhere; δ is the chance it may "
            "exceed it. Laplace noise needs no δ.",
            caption="Smaller δ → a wider Gaussian. Laplace ignores δ.",
        )
    noise = teaching.neighbour_noise(settings.epsilon, settings.delta)
    show_charts(
        "learn.chart.epsilon",
        density=(epsilon_density_figure(noise), epsilon_density_summary(noise)),
        ratio=(epsilon_ratio_figure(noise), epsilon_ratio_summary(noise)),
    )
    formula(
        r"\frac{p(x \mid D)}{p(x \mid D')} = \exp\!\left(\frac{|x - f(D')| - |x - f(D)|}{b}\right)"
        r"\le e^{\Delta / b} = e^{\varepsilon}, \qquad b = \frac{\Delta}{\varepsilon}",
        "the Laplace mechanism, Dwork, McSherry, Nissim & Smith (2006); Dwork & Roth (2014), "
        "Thm. 3.6. The Gaussian's σ is the analytic Gaussian mechanism of Balle & Wang (2018), "
        "Thm. 8. Here Δ = 1: one person changes a count by one.",
    )


EXPLAINERS: tuple[LearnItem, ...] = (
    LearnItem(
        "epsilon",
        "What ε means: noise on two neighbouring datasets",
        ":material/tune:",
        render_epsilon,
    ),
)
"""The explainers that belong to no analysis (each analysis adds its own)."""


def settings_table(rows: list[tuple[str, str, str, bool]]) -> None:
    """Setting / paper / here / same as the paper?, with ✱ on every row where we differ."""
    text_table(
        pd.DataFrame(
            [
                {
                    "setting": s,
                    "paper": p,
                    "here": h,
                    "same as the paper?": "yes" if same else "✱ no",
                }
                for s, p, h, same in rows
            ]
        )
    )


def claims_table(rows: list[tuple[str, str, str]]) -> None:
    """The paper's claims (claim / paper / ours) beside our numbers."""
    text_table(pd.DataFrame(rows, columns=["claim", "paper", "ours"]))


def text_table(frame: pd.DataFrame) -> None:
    """A table of sentences as a static table: its cells wrap, so every word shows at any width
    (a projector's 1024 px included), where a data grid would cut the last column."""
    st.table(frame, hide_index=True)


def all_explainers() -> tuple[LearnItem, ...]:
    """The Learn page's explainers: the shared ones, then each analysis' in registry order."""
    return EXPLAINERS + tuple(item for ui in every() for item in ui.explainers)


def all_presets() -> tuple[LearnItem, ...]:
    """The Learn page's presets: each analysis', in registry order."""
    return tuple(item for ui in every() for item in ui.presets)


def render_items(items: tuple[LearnItem, ...], key_prefix: str) -> None:
    """One lazy expander per item: an item draws only while it is open, so the page stays fast
    (its open state is kept under ``<key_prefix>.<item key>``)."""
    for item in items:
        box = st.expander(
            item.title, icon=item.icon, key=f"{key_prefix}.{item.key}", on_change="rerun"
        )
        if box.open:
            with box:
                item.render()
