"""The private sample's Estimator page: its settings, then a preview of private records and how
close one record's distribution comes to the group's.

**Previews.** Drawn with numpy noise, spending nothing: shown on screen only, labelled, never
offered for download. Records can be published only from the Release page, after the budget is
spent in the ledger and the noise drawn with OpenDP.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from dpcore.analyses.sample import SAMPLE, SamplePlan, SampleSettings
from dpcore.foundations.mechanisms import SimulationNoise
from strata_ui import pipeline
from strata_ui.analyses.sample import charts
from strata_ui.analyses.sample.session import current_plan, current_rows
from strata_ui.analyses.sample.settings import render_categories, render_settings, render_view
from strata_ui.state import get_dataset, get_state
from strata_ui.style import plain_number
from strata_ui.text import as_text, as_written
from strata_ui.widgets import show_error


def render_estimator() -> None:
    state = get_state()
    st.markdown(
        "Draw a **handful of realistic records** of one group, privately. A private sampler "
        "(Raskhodnikova, Sivakumar, Smith & Swanberg, NeurIPS 2021) outputs records whose "
        "distribution is close to the group's, with far fewer rows than learning the whole "
        "distribution would need — see the Learn page."
    )
    grouping = pipeline.current_grouping_or_error(state)
    if grouping is None:
        return
    settings = render_settings(get_dataset(), tuple(grouping.labels))
    try:
        rows = current_rows()
        render_categories(rows)
        plan = current_plan()
        st.caption(
            "Privacy budget: "
            + SAMPLE.describe_budget(settings, pipeline.page_budget(state))
            + " Neighbouring datasets differ by one row replaced (the paper's model): the "
            "group's number of rows is treated as public."
        )
    except (ValueError, TypeError) as exc:
        show_error(exc)
        return
    view = render_view()
    _render_preview(plan, settings, view.seed, view.runs)
    for message in rows.messages():
        st.caption(message)
    st.caption("Next: the Compare page shows the distance across budgets; the Release page "
               "commits the records.")  # fmt: skip


@st.cache_data(max_entries=32, show_spinner="Simulating the private sampler…")
def _preview(_plan: SamplePlan, key: tuple, seed: int, runs: int) -> dict:
    """Records drawn once with numpy noise, and the simulated comparison (``key`` stands for the
    plan)."""
    generator = np.random.default_rng(seed)
    draw = _plan.estimate(SimulationNoise(rng=generator), generator)
    return {"records": draw.frame, **_plan.simulate(runs=runs, rng=seed)}


def _render_preview(plan: SamplePlan, settings: SampleSettings, seed: int, runs: int) -> None:
    st.subheader("Preview")
    key = (pipeline.grouping_key(get_state()), settings, plan.header.budget)
    result = _preview(plan, key, seed, runs)
    st.info(
        f"{settings.records} private record{'' if settings.records == 1 else 's'} of "
        f"“{as_text(settings.group)}”, drawn with simulation "
        "noise — a preview, not a release.",
        icon=":material/visibility:",
    )
    st.dataframe(result["records"], hide_index=True)
    left, right = st.columns(2)
    left.metric(
        "Guarantee for each record (paper)",
        "none (≥ 1)" if result["guarantee"] >= 1 else f"≤ {plain_number(result['guarantee'], 3)}",
        help="Total variation distance between a record's distribution and the population's "
        "(Thm. 1.4: 2K/(εn) for K combinations; Thm. 6.4 for yes/no attributes with shares in "
        "[1/3, 2/3]). 0 means identical, 1 completely different.",
    )
    right.metric(
        "Rows behind each record",
        f"{result['part_rows']:,}",
        help="Each record comes from its own part of the group's rows (curator's view: an "
        "exact count, not released).",
    )
    if result["guarantee"] >= 1:
        st.warning(
            "At this budget and group size the paper guarantees nothing: the records may look "
            "nothing like the group. Raise the budget, draw fewer records or choose a larger "
            "group.",
            icon=":material/warning:",
        )
    if result["outside_class"]:
        st.warning(
            "The guarantee assumes every attribute's share of “yes” lies in [1/3, 2/3]; in this "
            f"group {', '.join(map(as_text, result['outside_class']))} do not, so the sampler pulls them toward "
            "that range (the chart shows by how much).",
            icon=":material/warning:",
        )
    st.plotly_chart(
        charts.comparison_figure(result, product=settings.sampler == "product"),
        key="sample.preview.chart",
    )
    st.caption(
        as_written(charts.comparison_summary(result))
        + " Curator's view: the group's shares are confidential and not released; the preview's "
        "records cannot be downloaded. To publish records, commit them on the Release page."
    )
