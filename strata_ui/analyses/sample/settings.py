"""The private sample's settings widgets: the sampler, the columns and their public categories,
the group and the number of records.

Every choice a release depends on is a field of
:class:`~dpcore.analyses.sample.SampleSettings`; what only changes what is shown is a field of
:class:`SampleView`. Widgets are keyed by the field they edit, so a change is never undone.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from dpcore.analyses.sample import (
    WHOLE_POPULATION,
    SampleRows,
    SampleSettings,
    column_problem,
)
from strata_ui.state import get_settings, get_state, set_settings, update_settings, widget_key
from strata_ui.text import as_text, in_label
from strata_ui.widgets import bind, stored_on_change, view_seed_input

SAMPLER_LABELS = {
    "kary": "Categories (k-ary sampler)",
    "product": "Yes/no attributes (product-Bernoulli sampler)",
}
SAMPLER_HELP = {
    "kary": "Laplace noise on the group's share of every combination of categories, then one "
    "record drawn from the noisy shares (Raskhodnikova et al., NeurIPS 2021, Alg. 3).",
    "product": "Each yes/no attribute drawn with the group's share of “yes”, kept between 1/4 "
    "and 3/4; no noise is added (Thm. 6.4). Needs columns of exactly two categories.",
}


@dataclass(frozen=True)
class SampleView:
    """What the private sample's views show; a release never depends on these."""

    seed: int = 0
    """Seeds the simulation noise of the preview and of the Compare page."""
    runs: int = 2000
    """Simulated runs behind each output distribution."""


def categorical_columns(frame: pd.DataFrame) -> list[str]:
    """Columns a sample can range over: categories, yes/no or 0/1 (not continuous numbers)."""
    return [c for c in frame.columns if column_problem(frame, c) is None]


def render_settings(frame: pd.DataFrame, labels: tuple[str, ...]) -> SampleSettings:
    """The sampler, columns, group and records; returns the settings."""
    left, right = st.columns(2)
    with left:
        bind(
            st.radio, "What to sample", SampleSettings, "sampler", labels=SAMPLER_LABELS,
            captions=SAMPLER_HELP,
            help="Both are differentially private samplers: they output records, not counts.",
        )  # fmt: skip
    with right:
        bind(
            st.selectbox, "Group", SampleSettings, "group",
            options=[WHOLE_POPULATION, *labels],
            help="The groups of the Strata page, or every row.",
        )  # fmt: skip
        bind(
            st.number_input, "Records to draw", SampleSettings, "records", step=1, store=int,
            help="Each record is drawn from its own part of the group's rows, so together they "
            "cost the budget once; more records leave fewer rows behind each.",
        )  # fmt: skip
    _render_columns(frame)
    return get_settings(SampleSettings)


def _render_columns(frame: pd.DataFrame) -> None:
    settings = get_settings(SampleSettings)
    options = categorical_columns(frame)
    chosen = [c for c in settings.columns if c in options] or options[:1]
    key = widget_key(SampleSettings, "columns", get_state().dataset_fingerprint)
    columns = st.multiselect(
        "Columns of each record",
        options,
        default=chosen,
        key=key,
        help="Several columns are sampled together: the k-ary sampler draws one combination of "
        "their categories.",
        **stored_on_change(key, _store_columns),
    )
    _store_columns(columns)
    numeric = [c for c in frame.columns if c not in options]
    if numeric:
        st.caption(
            f"Not offered: {', '.join(map(as_text, numeric))} hold numbers, not categories. A private sample "
            "draws records from a declared list of categories."
        )


def _store_columns(columns: list[str]) -> None:
    if tuple(columns) != get_settings(SampleSettings).columns:
        update_settings(SampleSettings, columns=tuple(columns))


def render_categories(rows: SampleRows) -> None:
    """One box per column: its public list of categories, prefilled from the data (and then
    labelled as treated as public), editable."""
    st.markdown("**Categories (public)**")
    st.caption(
        "A sampler may only output categories from a public list. Each list below is prefilled "
        "with the categories found in the data: kept as it is, it is **treated as public** — "
        "published with the release, as a codebook would be. Type your own list (separated by "
        "commas) to declare it instead."
    )
    for column in get_settings(SampleSettings).columns:
        observed = rows.observed_categories(column)
        key = widget_key(SampleSettings, "categories", get_state().dataset_fingerprint, column)
        store = functools.partial(_store_categories, column, observed)
        text = st.text_input(
            f"Categories of {in_label(column)}",
            value=", ".join(get_settings(SampleSettings).declared(column) or observed),
            key=key,
            **stored_on_change(key, store),
        )
        chosen = store(text)
        source = "declared by you" if chosen else "read from the data, treated as public"
        st.caption(f"{len(chosen or observed)} categories, {source}.")


def _store_categories(column: str, observed: tuple, text: str) -> tuple | None:
    """Store the list typed for ``column`` (comma separated); returns it, or None when it is
    empty or the categories found in the data (which are then used, treated as public)."""
    declared = tuple(dict.fromkeys(v.strip() for v in text.split(",") if v.strip()))
    chosen = None if not declared or declared == observed else declared
    settings = get_settings(SampleSettings)
    if chosen != settings.declared(column):
        set_settings(settings.with_categories(column, chosen))
    return chosen


def render_view() -> SampleView:
    """The preview's seed and simulated runs."""
    seed_col, runs_col = st.columns(2)
    with seed_col:
        view_seed_input(SampleView)
    with runs_col:
        bind(
            st.number_input, "Simulated runs", SampleView, "runs",
            step=200, store=int,
            help="How many private runs the comparison averages: more runs, less simulation "
            "error.",
        )  # fmt: skip
    return get_settings(SampleView)
