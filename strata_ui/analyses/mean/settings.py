"""The mean's settings widgets: its value column (Data page), estimator, public bounds and the
CoinPress and group-size choices (Estimator page), its budget split (Budget page) and what a
release publishes (Release page). Every widget is bound to a field of
:class:`~dpcore.analyses.mean.MeanSettings` (:func:`strata_ui.widgets.bind`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.analyses.mean import ESTIMATOR_LABELS, MEAN, STRATEGY_LABELS, MeanSettings
from dpcore.analyses.mean.strategies import STRATEGIES, STRATEGY_NAMES
from dpcore.foundations.accounting import format_components, parallel, scale, sequential
from dpcore.foundations.errors import SettingsError
from strata_ui import constants, pipeline
from strata_ui.analyses.mean import found_bounds
from strata_ui.sidebar import format_delta
from strata_ui.state import get_settings, get_state, reset_settings
from strata_ui.style import plain_number
from strata_ui.text import as_text, as_written
from strata_ui.widgets import bind, show_error, show_problems

ESTIMATOR_HELP = {
    "laplace": "Adds Laplace noise; meets pure ε-DP. Simple and the paper's main example.",
    "gaussian": "Adds Gaussian noise; meets ρ-zCDP, whose costs add up gently over many releases.",
    "coinpress": "Narrows a public interval step by step before the final estimate (ρ-zCDP); "
    "good when the public range is much wider than the data.",
}


def render_value_column() -> None:
    """The Data page's "Value to estimate": the mean's value column, numeric columns only."""
    state = get_state()
    st.subheader("Value to estimate")
    numeric = pipeline.value_columns(state)
    if not numeric:
        reset_settings(MeanSettings, value=None)
        st.error(
            "This table has no numeric column, so there is no value to average. Upload a table "
            "with at least one column of numbers (or 0/1, true/false).",
            icon=":material/error:",
        )
        return
    value = bind(
        st.selectbox, "Value column", MeanSettings, "value", options=numeric,
        placeholder="Choose a numeric column",
        help="The private mean of this column is what the other pages estimate.",
    )  # fmt: skip
    st.caption(
        "Only numeric columns are offered: a differentially private mean clips each value to "
        "public bounds and adds noise, which needs numbers. Text columns can still split people "
        "into groups on the Strata page." + row_numbers_note(state)
    )
    if value is None:
        st.warning("Choose the value column to estimate.", icon=":material/warning:")
    elif value in state.strata_columns:
        state.strata_columns = [c for c in state.strata_columns if c != value]


def row_numbers_note(state) -> str:
    """A sentence naming the columns left out of the values because they number the rows."""
    numbers = pipeline.row_number_columns(state)
    if not numbers:
        return ""
    names = ", ".join(as_written(c) for c in numbers)
    return f" {names} only numbers the rows, so it is not offered as a value."


def render_estimator_settings() -> MeanSettings:
    """The estimator, its public bounds and its options; returns the settings chosen."""
    st.markdown(
        "Choose how each mean is estimated privately. Every method clips values to a public "
        "range, averages them, and adds random noise sized to hide any one person."
    )
    kind = bind(
        st.radio, "Private mean estimator", MeanSettings, "estimator",
        labels=ESTIMATOR_LABELS,
        help="How the noise is added. Gaussian and CoinPress need a ρ-zCDP budget (Budget page).",
        captions=ESTIMATOR_HELP,
    )  # fmt: skip
    _render_value_messages()
    _render_bounds()
    if kind == "coinpress":
        _render_coinpress()
    else:
        _render_group_sizes()
    return get_settings(MeanSettings)


def _render_value_messages() -> None:
    """What the value column leaves out (missing values, groups without one), or why it cannot
    be averaged."""
    try:
        values = pipeline.current_statistics(MEAN, get_settings(MeanSettings))
    except SettingsError:  # files are summed within the bounds, which the section below asks for
        return
    except (ValueError, TypeError) as exc:  # the estimator below can still be configured
        show_error(exc)
        return
    for message in values.messages():
        st.info(message, icon=":material/info:")


def _render_bounds() -> None:
    settings = get_settings(MeanSettings)
    st.subheader("Bounds on the value")
    source = bind(
        st.radio, "How the bounds are set", MeanSettings, "bounds_source",
        labels=found_bounds.SOURCE_LABELS, captions=found_bounds.SOURCE_CAPTIONS,
        help="Every private mean clips the values to a range before it adds noise: too narrow "
        "a range biases the means, too wide a range drowns them in noise.",
    )  # fmt: skip
    if source == "private":
        found_bounds.render_search_range(settings)
    else:
        _render_typed_bounds(settings)
    show_problems(_bound_problems(get_settings(MeanSettings)))
    if source == "private":
        found_bounds.render_private_bounds()


def _render_typed_bounds(settings: MeanSettings) -> None:
    st.markdown(
        f"Values of **{as_text(settings.value or 'the value column')}** are clipped to [L, U] before "
        "averaging. The bounds **must come from outside knowledge** (what the value can be by "
        "its definition or its codebook, e.g. 0 to 168 for hours in a week), never from the "
        "data — bounds read off the data leak the smallest and largest values."
    )
    low_col, high_col = st.columns(2)
    with low_col:
        bind(low_col.number_input, "Lower bound L", MeanSettings, "clip_low",
             min_value=-constants.BOUND_MAGNITUDE_MAX, max_value=constants.BOUND_MAGNITUDE_MAX,
             help="The smallest value anyone could have, known without looking at the data.",
             caption="Values below L count as L.")  # fmt: skip
    with high_col:
        bind(high_col.number_input, "Upper bound U", MeanSettings, "clip_high",
             min_value=-constants.BOUND_MAGNITUDE_MAX, max_value=constants.BOUND_MAGNITUDE_MAX,
             help="The largest value anyone could have, known without looking at the data.",
             caption="Values above U count as U. A wider range means more noise.")  # fmt: skip


def _bound_problems(settings: MeanSettings) -> list:
    """What is wrong with bounds that were typed, or with finding them privately (empty bounds
    are still to be chosen)."""
    if settings.clip_low is None or settings.clip_high is None:
        return []
    return [p for p in MEAN.problems(settings, None) if p.field != "value"]


def _render_coinpress() -> None:
    st.subheader("CoinPress settings")
    st.markdown(
        "CoinPress starts from the public interval [L, U] as its prior guess for each group's "
        "mean and shrinks it over a few noisy steps, spending a share of ρ on each. Every "
        "step clips the values to a window inside [L, U]; a release's intervals add a "
        "worst-case bound on that clipping's bias, which holds only when σ bounds the spread "
        "of every group's values (a group of 30 whose values spread more than σ covered 85% "
        "in our benchmark)."
    )
    sigma_col, steps_col, beta_col = st.columns(3)
    with sigma_col:
        bind(
            sigma_col.number_input, "σ: upper bound on each group's standard deviation",
            MeanSettings, "coinpress_sigma",
            help="A public upper bound on how spread out values are inside any group.",
            caption="Public knowledge, like L and U. Too small biases the estimate and voids "
            "its intervals.",
        )  # fmt: skip
    with steps_col:
        bind(
            steps_col.slider, "Steps t", MeanSettings, "coinpress_steps",
            help="How many times the interval is narrowed; the budget is split across steps.",
            caption="More steps narrow further but leave less budget for each.",
        )  # fmt: skip
    with beta_col:
        bind(
            beta_col.number_input, "β: failure probability", MeanSettings, "coinpress_beta",
            step=0.005, format="%.4f",
            help="The chance that an interval misses the mean; smaller is safer but wider.",
            caption="Smaller β keeps the mean inside each interval more often.",
        )  # fmt: skip
    st.caption(
        "CoinPress treats each group's size as public (replace-one neighbours), as in the paper."
    )


def _render_group_sizes() -> None:
    st.subheader("Group sizes")
    n_public = bind(
        st.checkbox, "Treat group sizes as public", MeanSettings, "n_public",
        help="Whether the number of people in each group may be published without noise.",
    )  # fmt: skip
    if n_public:
        st.warning(
            "Sizes declared public (the paper's setting): neighbouring datasets differ by "
            "*replacing* one person, so only the clipped sum is noised and the whole budget goes "
            "to it. A release then publishes numbers that depend on each group's exact size "
            "(its noise and interval), which no noise protects: choose this only when the sizes "
            "are public already.",
            icon=":material/warning:",
        )
    else:
        st.caption(
            "Sizes are private: neighbours differ by *adding or removing* one person, so half the "
            "budget buys a noisy count and half a noisy sum — more noise for the same budget."
        )
        needs = pipeline.private_sizes_needs(get_state())
        if needs:
            st.warning(
                "A release would give away the group sizes kept private here (through each "
                "group's share, a new category, or which groups are small). Before releasing, "
                f"on the Strata page: {as_written('; '.join(needs))}.",
                icon=":material/warning:",
            )


def render_configured(settings: MeanSettings) -> None:
    """The estimator the settings make, in words, and the budget it runs at — or what to fix."""
    st.subheader("Your estimator")
    if settings.clip_low is None or settings.clip_high is None or _bound_problems(settings):
        st.info("Fix the bounds above to configure the estimator.", icon=":material/info:")
        return
    estimator = MEAN.bounded_estimator(settings)
    st.markdown(f"**{ESTIMATOR_LABELS[settings.estimator]}**: {as_written(estimator.describe())}.")
    try:
        budget = MEAN.native_budget(settings, pipeline.page_budget(get_state()))
    except (ValueError, TypeError) as exc:
        st.warning(str(exc), icon=":material/warning:")
    else:
        bounds = MEAN.private_bounds(settings)
        split = (
            "" if bounds is None
            else f": {format_components(bounds.cost(budget).components())} of it finds the "
            f"bounds, the means run at {format_components(bounds.rest(budget).components())}"
        )  # fmt: skip
        st.caption(f"Each release will use {budget}{split}. Set the budget on the Budget page.")


def render_budget_split() -> None:
    """The Budget page's part for the mean: vanilla (ii)'s split, and what each strategy costs
    under composition (the page has said what the estimator runs at)."""
    state, settings = get_state(), get_settings(MeanSettings)
    try:
        budget = MEAN.native_budget(settings, pipeline.page_budget(state))
    except (ValueError, TypeError) as exc:
        show_error(exc)
        return
    st.subheader("What each strategy costs under composition")
    fraction = bind(
        st.slider, "Both, budget split: the share for the estimate for everyone", MeanSettings,
        "global_fraction", step=0.05,
        help="“Both, budget split” releases one estimate for everyone and one per group; they "
        "share one budget.",
    )  # fmt: skip
    st.caption(
        f"The estimate for everyone gets {fraction:.0%} of the budget and the groups the other "
        f"{1 - fraction:.0%}; both touch everyone, so their costs add up."
    )
    try:
        k = pipeline.current_grouping(state).k
    except (ValueError, TypeError) as exc:
        st.warning(f"{as_written(exc)} Assuming 2 groups for the table.", icon=":material/warning:")
        k = 2
    st.dataframe(_composition_table(budget, fraction, k), hide_index=True, width="stretch")
    st.caption(
        "Each person is in exactly one group, so estimating all groups separately costs the "
        "budget of one group (parallel composition); releasing a global estimate too means "
        "everyone is touched twice, so the costs add (sequential composition)."
    )


def _composition_table(budget, fraction: float, k: int) -> pd.DataFrame:
    def approx(b) -> str:
        if b.kind == "pure":
            return f"ε = {plain_number(b.epsilon, 4)}, δ = 0"
        eps = b.to_approx_dp(constants.DISPLAY_DELTA).epsilon
        return f"ε = {plain_number(eps, 4)}, δ = {format_delta(constants.DISPLAY_DELTA)}"

    groups = parallel(*[budget] * k)
    global_part, group_part = scale(budget, fraction), scale(budget, 1 - fraction)
    per_group, everyone, both = (
        STRATEGY_NAMES[s] for s in ("stratified", "global_only", "global_and_groups")
    )
    rows = [
        (per_group, f"{k} disjoint groups, each with the full budget", groups),
        (per_group, "Total: parallel composition = one group's cost", groups),
        (everyone, "One estimate for everyone, full budget", budget),
        (everyone, "Total", budget),
        (both, f"The estimate for everyone ({fraction:.0%})", global_part),
        (both, f"{k} group estimates ({1 - fraction:.0%}, parallel over groups)",
         parallel(*[group_part] * k)),
        (both, "Total: sequential composition (the parts add up)",
         sequential(global_part, parallel(*[group_part] * k))),
    ]  # fmt: skip
    return pd.DataFrame(
        [
            {
                "strategy": strategy,
                "part": part,
                "cost": format_components(cost.components()),
                f"(ε, δ = {format_delta(constants.DISPLAY_DELTA)})": approx(cost),
            }
            for strategy, part, cost in rows
        ]
    )


def render_strategy_choice() -> None:
    """The Release page's "What to release" for the mean."""
    bind(
        st.radio, "What to release", MeanSettings, "strategy", options=list(STRATEGIES),
        format_func=STRATEGY_LABELS.__getitem__,
        help="Groups are disjoint, so releasing every group's estimate costs one group's budget.",
    )  # fmt: skip


INTERVAL_COVERAGE = {
    False: "The noise only (nothing extra to pay)",
    True: "The noise and sampling error (pays for the variances)",
}
INTERVAL_COVERAGE_CAPTIONS = {
    False: "The intervals say how far the noise may have moved each estimate from the mean of "
    "these rows. They do not cover the chance differences between these rows and the "
    "population they were drawn from, and say so in the exports.",
    True: "The intervals cover the population's mean (of values within the bounds): part of "
    "the budget pays for private estimates of each group's spread, the rest for the means. "
    "Needs group sizes treated as public and the Laplace or Gaussian mean.",
}


def render_interval_choice() -> None:
    """The Release page's "What the intervals cover" for the mean, and the budget share of the
    variances when they cover sampling error."""
    chosen = bind(
        st.radio, "What the intervals cover", MeanSettings, "sampling_error",
        labels=INTERVAL_COVERAGE, captions=INTERVAL_COVERAGE_CAPTIONS,
    )  # fmt: skip
    if chosen:
        bind(
            st.select_slider, "Share of the budget for the variances", MeanSettings,
            "variance_fraction", format_func="{:.0%}".format,
            help="The variances need less precision than the means: an error of 20% in a "
            "variance is about 10% in an interval's width.",
        )  # fmt: skip
