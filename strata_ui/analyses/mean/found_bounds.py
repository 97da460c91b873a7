"""The Estimator page's bounds found privately for the mean: the search range, the share of the
budget that pays for them, where they are found and what they aim at, and what that means at
the Budget page's budget (:mod:`dpcore.foundations.private_bounds`)."""

from __future__ import annotations

import streamlit as st

from dpcore.analyses.mean import MEAN, MeanSettings
from dpcore.foundations.errors import SettingsError
from dpcore.foundations.private_bounds import (
    BOUNDS_SCOPES,
    GRID_PER_DECADE,
    MAX_TAIL,
    PrivateBounds,
)
from strata_ui import constants, pipeline
from strata_ui.state import get_settings, get_state
from strata_ui.text import as_text
from strata_ui.widgets import bind

SOURCE_LABELS = {
    "typed": "Type public bounds",
    "private": "Find them privately (paid from the budget)",
}
SOURCE_CAPTIONS = {
    "typed": "You know the range from outside the data: a codebook, a definition (0 to 168 "
    "hours in a week). Free, and exact.",
    "private": "You know only a generous range (0 to a million for an income). A share of the "
    "release's budget finds, privately, a range within it that keeps all but a few values; "
    "the release publishes the range it found.",
}
SCOPE_LABELS = {
    "pooled": "One range for everyone",
    "per_group": "Each group its own range",
}
SCOPE_CAPTIONS = {
    "pooled": BOUNDS_SCOPES["pooled"].capitalize() + ": every value counts, so it needs the "
    "least budget. The default.",
    "per_group": BOUNDS_SCOPES["per_group"].capitalize() + " (the groups are disjoint, so it "
    "costs no more). Pays off for large groups whose values differ; groups too small to find "
    "their own find one together.",
}
TAIL_LABELS = {
    tail: f"{tail * 100:g}% of the values"
    if tail
    else "Automatic: the fewest the budget can find reliably"
    for tail in constants.BOUNDS_TAILS
}


def render_search_range(settings: MeanSettings) -> None:
    """The search range: the two typed bounds, read as the range the bounds are found in."""
    st.markdown(
        f"Type a **search range** that surely holds every value of **"
        f"{as_text(settings.value or 'the value column')}**, from outside knowledge (it may be "
        "generous: ten or a thousand times too wide costs little). The release then finds, "
        "privately, a range within it that keeps all but a few values, and clips at that range."
    )
    low_col, high_col = st.columns(2)
    with low_col:
        bind(low_col.number_input, "Search from (lowest possible value)", MeanSettings,
             "clip_low", key_parts=("search",),
             min_value=-constants.BOUND_MAGNITUDE_MAX, max_value=constants.BOUND_MAGNITUDE_MAX,
             help="No value can be below this, known without looking at the data.")  # fmt: skip
    with high_col:
        bind(high_col.number_input, "Search up to (highest possible value)", MeanSettings,
             "clip_high", key_parts=("search",),
             min_value=-constants.BOUND_MAGNITUDE_MAX, max_value=constants.BOUND_MAGNITUDE_MAX,
             help="No value can be above this, known without looking at the data.")  # fmt: skip


def render_private_bounds() -> None:
    """The share of the budget, where the bounds are found, what they aim at, and what that
    means at the Budget page's budget."""
    settings = get_settings(MeanSettings)
    bind(
        st.select_slider, "Share of the release's budget that finds the bounds", MeanSettings,
        "bounds_fraction", format_func="{:.0%}".format,
        help="The bounds and the means share one budget (sequential composition): more for the "
        "bounds finds a tighter range, and leaves less for the means. The Plan page can choose "
        "the split for you.",
    )  # fmt: skip
    bind(st.radio, "Where the bounds are found", MeanSettings, "bounds_scope",
         labels=SCOPE_LABELS, captions=SCOPE_CAPTIONS, horizontal=True)  # fmt: skip
    tails = TAIL_LABELS if settings.n_public else {k: v for k, v in TAIL_LABELS.items() if k}
    bind(
        st.selectbox, "Values to leave beyond each bound", MeanSettings, "bounds_tail",
        labels=tails, placeholder="Choose a share",
        help="Automatic aims each bound at the fewest values the budget can tell apart from "
        "the extremes; a share aims at that share of each group's values.",
    )  # fmt: skip
    if not settings.n_public:
        st.caption(
            "With private group sizes the bounds aim at a share of the values: aiming at a "
            "number of values would read the sizes."
        )
    _render_what_it_means(get_settings(MeanSettings))


def _render_what_it_means(settings: MeanSettings) -> None:
    """The grid, the cost and the target at the Budget page's budget; a warning for groups
    too small for the target (their sizes are public when the target is automatic)."""
    try:
        bounds = MEAN.private_bounds(settings)
        budget = MEAN.native_budget(settings, pipeline.page_budget(get_state()))
    except (SettingsError, ValueError, TypeError):
        return  # the problems are said above
    if bounds is None:
        return
    low, high = bounds.search
    st.info(
        f"**How:** the low and the high bound are each chosen among {len(bounds.grid):,} public "
        f"candidates, log-spaced within [{low:g}, {high:g}] ({GRID_PER_DECADE} per decade below "
        f"{max(abs(low), abs(high)):g}, both signs, with 0 and the two ends), by the exponential "
        "mechanism on rank scores (Smith 2011; OpenDP's noisy max on a release). "
        f"**Cost:** {bounds.cost(budget)} of the release's {budget}; the means run at "
        f"{bounds.rest(budget)}. {_target_words(bounds, budget)}",
        icon=":material/travel_explore:",
    )
    if settings.n_public and bounds.tail is None:
        _warn_small(bounds, budget, settings)


def _target_words(bounds: PrivateBounds, budget) -> str:
    if bounds.tail is not None:
        return f"**Aim:** {bounds.tail:.1%} of the values beyond each bound."
    return (
        f"**Aim:** about {bounds.target_rank(budget):,} values beyond each bound in a large "
        "group (the fewest this budget can tell apart from the extremes; at most "
        f"{MAX_TAIL:.0%} of a small one)."
    )


def _warn_small(bounds: PrivateBounds, budget, settings: MeanSettings) -> None:
    """With public sizes: which groups (or the whole population) are too small for the
    automatic target, so that their bounds err outwards."""
    try:
        values = pipeline.current_statistics(MEAN, settings)
    except (ValueError, TypeError):
        return
    needed = bounds.reliable_below(budget)
    if bounds.scope == "pooled":
        if values.n < needed:
            st.warning(
                f"The groups hold {values.n:,} values together, fewer than the {needed:,} the "
                "automatic aim needs at this budget: the bounds will often land wide (towards "
                "the search range), which costs noise. Give the bounds a larger share, raise "
                "the budget, or type public bounds.",
                icon=":material/warning:",
            )
        return
    small = [label for label, size in zip(values.labels, values.sizes, strict=True)
             if size < needed]  # fmt: skip
    if small:
        st.caption(
            f"{len(small)} of {values.k} groups hold fewer than {needed:,} values (group sizes "
            "are public here) and find one range together, on all their values."
        )
