"""The synthetic data's settings widgets on the Estimator page: the synthesizer, vanilla or
stratified, the columns and their public bucket edges, the rows and the preview's seed.

Every choice a release depends on is a field of :class:`~dpcore.analyses.synth.SynthSettings`;
what only changes what is shown is a field of :class:`SynthView`. Widgets are keyed by the field
they edit (:func:`strata_ui.state.widget_key`), so a change is never undone on the next rerun.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import streamlit as st

from dpcore.analyses.synth import (
    METHODS,
    MIN_MODEL_COLUMNS,
    STRATEGIES,
    SYNTH,
    SynthSettings,
)
from dpcore.analyses.synth.analysis import NUMBER_KINDS
from strata_ui import pipeline
from strata_ui.state import get_settings, get_state, set_settings, update_settings, widget_key
from strata_ui.text import as_text, as_written, in_label
from strata_ui.uploads import format_edges, parse_edges
from strata_ui.widgets import bind, show_error, stored_on_change, view_seed_input

METHOD_HELP = {
    "independent": "Noisy counts of each column on its own; rows combine the columns at random, "
    "so relationships between columns are lost. Fast and robust at small ε.",
    "mwem": "Selects the most informative 1- to 3-way tables privately, measures them with noise "
    "and fits a joint model to them (select–measure–project). Keeps relationships.",
    "histogram": "Noisy count of every combination of values. Exact in the limit, but the noise "
    "swamps it when there are many combinations per person.",
    "mst": "The paper's MST, run by OpenDP: noisy counts of each column and of the pairs that "
    "link all columns in a tree, then a fitted model. Slow: seconds per group. Needs a ρ budget.",
    "aim": "The paper's AIM, run by OpenDP: picks and measures tables of up to 3 columns round "
    "after round. The most accurate and the slowest: minutes per group. Needs a ρ budget.",
}
METHOD_LABELS = {
    "independent": "Independent marginals",
    "mwem": "MWEM",
    "histogram": "Full histogram",
    "mst": "MST (OpenDP)",
    "aim": "AIM (OpenDP)",
}
STRATEGY_LABELS = {
    "stratified": "One model per group (stratified)",
    "vanilla": "One model for everyone",
}


@dataclass(frozen=True)
class SynthView:
    """What the synthetic-data views show; a release never depends on these."""

    seed: int = 0
    """Seeds the simulation noise of the preview and of the Compare page."""
    runs: int = 3
    """Simulated synthetic releases per ε and strategy on the Compare page."""
    release_column: str | None = None
    """The column of a committed release charted on the Release page (its first if None)."""
    started: tuple[str, ...] = ()
    """The slow fits (MST, AIM) asked for in this session, by their cache keys."""
    group_search: str = ""
    """Words of group names to add to the Compare page's chart of many groups."""


def render_settings(kinds: dict[str, str], by: list[str]) -> SynthSettings:
    """Every setting of the synthesis, for data whose columns and their kinds are ``kinds``
    (in memory or read where it lies), grouped by ``by``; returns the settings."""
    method_col, strategy_col = st.columns(2)
    with method_col:
        _render_method()
    with strategy_col:
        _render_strategy(by)
    _render_columns(kinds, by)
    _render_rows()
    return get_settings(SynthSettings)


def _render_method() -> None:
    method = bind(
        st.radio, "Synthesizer", SynthSettings, "method", options=list(METHODS),
        format_func=METHOD_LABELS.__getitem__,
        help="How the private model of the data is built. The first three are pure ε-DP; MST "
        "and AIM add Gaussian noise and are accounted in ρ-zCDP by OpenDP.",
        captions=METHOD_HELP,
    )  # fmt: skip
    if method == "mwem":
        bind(
            st.slider, "MWEM rounds", SynthSettings, "rounds",
            help="How many tables MWEM selects and measures; ε is split across the rounds.",
            caption="More rounds measure more tables, each with less budget (noisier).",
        )  # fmt: skip


def _render_strategy(by: list[str]) -> None:
    strategy = bind(
        st.radio, "Stratification (for the preview and the release)", SynthSettings,
        "strategy", options=list(STRATEGIES), format_func=STRATEGY_LABELS.__getitem__,
        help="Stratified fits one private model per group of the Strata page, each with the "
        "full ε (the groups are disjoint, so the cost is ε once). One model for everyone fits "
        "all rows together. The Compare page simulates both.",
    )  # fmt: skip
    groups = " × ".join(by) or "the Strata page's columns"
    if strategy == "stratified":
        st.caption(
            f"One model per group of {as_text(groups)}; each group's rows are drawn in proportion to its "
            "public share (Strata page)."
        )
    else:
        st.caption(
            f"One model for everyone; {as_text(groups)} are modelled like the other columns."
        )


def _render_columns(kinds: dict[str, str], by: list[str]) -> None:
    """The columns to synthesize, then public bucket edges (or "categories") for numeric ones."""
    settings = get_settings(SynthSettings)
    numbers = pipeline.row_number_columns(get_state())
    options = [c for c in kinds if c not in by and c not in numbers]
    # Keyed by the data and the strata too: new data or groups start from the default columns.
    fingerprint = get_state().dataset_fingerprint
    key = widget_key(SynthSettings, "columns", fingerprint, "-".join(by))
    columns = st.multiselect(
        "Columns to synthesize",
        options,
        default=[c for c in SYNTH.columns(settings, kinds, tuple(by)) if c in options],
        key=key,
        help=f"At least {MIN_MODEL_COLUMNS}. The strata columns ({as_written(', '.join(by) or 'none')}) "
        "are always included. Every extra column multiplies the number of combinations.",
        **stored_on_change(key, _store_columns),
    )
    _store_columns(columns)
    st.caption(
        f"The strata columns {as_written(', '.join(by) or '(none chosen)')} are always included (Strata "
        "page). Numeric columns need public bucket edges, or can be treated as categories."
    )
    numeric = [c for c in columns if kinds[c] in NUMBER_KINDS]
    if numeric:
        st.markdown("**Numeric columns: public bucket edges**")
        st.caption(
            "Type edges from outside knowledge (e.g. age 25, 35, 45, 55, 65), never read off the "
            "data. A value at an edge goes to the upper bucket. Or treat each value as a category "
            "(for 0/1 columns); the list of values is then read from the data and not protected."
        )
    for column in numeric:
        _render_numeric_column(column)


def _render_numeric_column(column: str) -> None:
    edges_col, cat_col = st.columns([3, 1])
    with cat_col:
        key = widget_key(SynthSettings, "categorical", column)
        as_category = st.checkbox(
            "Values are categories",
            value=column in get_settings(SynthSettings).categorical,
            key=key,
            help="Each distinct value becomes a category (for codes like 0/1).",
            **stored_on_change(key, functools.partial(_store_categorical, column)),
        )
    _store_categorical(column, as_category)
    with edges_col:
        text = st.text_input(
            f"Bucket edges for {in_label(column)}",
            value=format_edges(list(get_settings(SynthSettings).edges_of(column) or ())),
            key=(key := widget_key(SynthSettings, "edges", column)),
            disabled=as_category,
            placeholder="e.g. 25, 45, 65",
            help="Public cut points, separated by commas.",
            **stored_on_change(key, functools.partial(_store_edges, column)),
        )
        # A category column's edges are not used: nothing to check.
        if not as_category and (problem := _store_edges(column, text)) is not None:
            show_error(problem)


def _store_columns(columns: list[str]) -> None:
    if tuple(columns) != get_settings(SynthSettings).columns:
        update_settings(SynthSettings, columns=tuple(columns))


def _store_categorical(column: str, as_category: bool) -> None:
    categorical = get_settings(SynthSettings).categorical
    if as_category and column not in categorical:
        update_settings(SynthSettings, categorical=(*categorical, column))
    elif not as_category and column in categorical:
        update_settings(SynthSettings, categorical=tuple(c for c in categorical if c != column))


def _store_edges(column: str, text: str) -> ValueError | None:
    """Store the edges typed for ``column``; a text that does not parse keeps the stored edges
    and is returned why, to be said under the box (the text stays in the box, to be corrected)."""
    settings = get_settings(SynthSettings)
    current = settings.edges_of(column)
    # Unchanged text keeps the stored edges exactly (the box shows them to 6 digits).
    if text == format_edges(list(current or ())):
        return None
    try:
        edges = parse_edges(text, column)
    except ValueError as exc:
        return exc
    set_settings(settings.with_edges(column, tuple(edges) or None))
    return None


def _render_rows() -> None:
    rows_col, seed_col = st.columns(2)
    with rows_col:
        bind(
            rows_col.number_input, "Synthetic rows", SynthSettings, "n_rows",
            step=1000, store=int,
            help="How many rows to generate (public). Groups get rows in proportion to their "
            "public shares.",
            caption="More rows mean less sampling noise in small groups and a bigger file.",
        )  # fmt: skip
    with seed_col:
        view_seed_input(SynthView)
