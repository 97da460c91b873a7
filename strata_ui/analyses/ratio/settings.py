"""The ratio's settings widgets on the Estimator page: its columns, public bounds, noise and
interval (Miao & Li 2022). Every widget of a release choice is bound to a field of
:class:`~dpcore.analyses.ratio.RatioSettings` (:func:`strata_ui.widgets.bind`); the interval
level is the Release page's (``AppState.release_level``).
"""

from __future__ import annotations

import streamlit as st

from dpcore.analyses.ratio import RATIO, RatioSettings
from strata_ui import constants, pipeline
from strata_ui.state import (
    get_settings,
    get_state,
    reset_settings,
    update_settings,
    widget_key,
)
from strata_ui.widgets import attribute_widget, bind

LEVELS = constants.RELEASE_LEVELS
NO_WEIGHTS = "(no weights)"

MECHANISM_LABELS = {
    "gaussian": "Gaussian, classic (paper eq. 5)",
    "gaussian_analytic": "Gaussian, analytic (Balle & Wang)",
    "laplace": "Laplace (pure ε-DP)",
}
MECHANISM_HELP = {
    "gaussian": "Normal noise sized by the paper's formula; gives (ε, δ)-DP.",
    "gaussian_analytic": "Normal noise sized by an exact formula, a little less noise for the "
    "same (ε, δ).",
    "laplace": "Laplace noise; gives pure ε-DP with no δ, but heavier tails.",
}
COMPOSITION_LABELS = {
    "basic": "Basic: ε/m and δ/m per sum (the paper's)",
    "zcdp": "zCDP: one ρ split over the sums (documented improvement)",
}
METHOD_LABELS = {
    "none": "No correction",
    "monte_carlo": "Monte Carlo correction",
    "analytical": "Analytical correction",
}
METHOD_HELP = {
    "none": "Ignores the DP noise, so intervals are too narrow when the noise matters (§2.4.1).",
    "monte_carlo": "Adds the noise's effect by re-noising the released sums B times (§2.4.2).",
    "analytical": "Adds the noise's known variance to the formula; no simulation (§2.4.3).",
}
SCALE_LABELS = {"ratio": "Ratio scale", "log": "Log scale"}
SCALE_HELP = {
    "ratio": "Symmetric interval around the ratio, cut at 0 (eq. 1).",
    "log": "Interval built for log r and mapped back: never below 0, skewed for small groups "
    "(§2.3).",
}


def render_settings() -> RatioSettings:
    """The columns, bounds, noise and interval widgets; returns the settings chosen."""
    st.markdown(
        "The **calibration ratio** of a group is Σ score / Σ label over its rows: 1 means the "
        "scores add up to the observed outcomes, above 1 the model over-predicts and below 1 it "
        "under-predicts. Each group's sums get DP noise, and the confidence interval accounts "
        "for it (Miao & Li 2022)."
    )
    _render_columns(pipeline.value_columns(get_state()))
    _render_bounds()
    _render_noise()
    _render_interval()
    return get_settings(RatioSettings)


def _render_columns(options: list[str]) -> None:
    st.subheader("Columns")
    s_col, y_col, w_col = st.columns(3)
    for column, label, field, explanation, caption in (
        (s_col, "Score s", "s_column", "What the model predicts, e.g. a predicted probability.",
         "The model's prediction for each person (e.g. a probability between 0 and 1)."),
        (y_col, "Label y", "y_column", "What actually happened, e.g. 1 if income is over 50K.",
         "The observed outcome the score tries to predict."),
    ):  # fmt: skip
        with column:
            bind(
                st.selectbox, label, RatioSettings, field, options=options,
                placeholder="Choose a column", help=explanation, caption=caption,
            )  # fmt: skip
    with w_col:
        _choose_weight(options)
        st.caption("How many people each row stands for; most data have no weights.")


def _choose_weight(options: list[str]) -> None:
    """The weight column, or none: "(no weights)" is stored as ``None``, which :func:`bind`
    cannot show as a choice."""
    stored = get_settings(RatioSettings).w_column
    choices = [NO_WEIGHTS, *options]
    current = NO_WEIGHTS if stored is None else stored
    chosen = st.selectbox(
        "Weight w (optional)",
        choices,
        index=choices.index(current) if current in choices else None,
        placeholder="Choose a column",
        key=widget_key(RatioSettings, "w_column"),
        help="A survey weight per row; leave at no weights if every row counts once.",
    )
    if chosen is None:  # keep an unusable stored choice so that its error stays on screen
        return
    weight = None if chosen == NO_WEIGHTS else chosen
    if weight != stored:
        update_settings(RatioSettings, w_column=weight)


def _render_bounds() -> None:
    st.subheader("Public bounds")
    st.markdown(
        "Values are clipped to **[0, upper bound]** before summing (the lower bounds are 0, as "
        "in the paper). Type bounds you know **without looking at the data** — bounds read off the "
        "data would leak the largest values. Larger bounds mean more noise."
    )
    s_col, y_col, w_col = st.columns(3)
    with s_col:
        _upper_bound("s_bound", "Upper bound of the score u_s",
                     help_text="The largest score anyone could have; 1 for a probability.",
                     caption="Scores above it count as the bound.")  # fmt: skip
    with y_col:
        binary = bind(
            st.checkbox, "Label is binary (0/1)", RatioSettings, "binary_y",
            help="Tick if the label is always 0 or 1; then one fewer sum is released.",
        )  # fmt: skip
        _upper_bound("y_bound", "Upper bound of the label u_y",
                     one=("binary", "A 0/1 label needs no bound: it is 1.") if binary else None,
                     help_text="The largest label anyone could have.",
                     caption="Labels above it count as the bound.")  # fmt: skip
    with w_col:
        unweighted = get_settings(RatioSettings).w_column is None
        _upper_bound(
            "w_bound", "Upper bound of the weight u_w",
            one=("none", "Without weights every row has weight 1.") if unweighted else None,
            help_text="The largest weight in the survey design; it scales every sum's noise.",
            caption="Weights above it count as the bound; at least 1.",
        )  # fmt: skip


def _upper_bound(
    field: str, label: str, *, one: tuple[str, str] | None = None, help_text: str, caption: str
) -> None:
    """The typed upper bound ``field``; or, when ``one`` gives (a key suffix, why), a disabled
    bound of 1 (the bound :attr:`RatioSettings.bounds` uses then)."""
    if one is not None:
        suffix, why = one
        st.number_input(label, value=1.0, disabled=True,
                        key=widget_key(RatioSettings, field, suffix))  # fmt: skip
        st.caption(why)
        return
    bind(st.number_input, label, RatioSettings, field, help=help_text,
         max_value=constants.BOUND_MAGNITUDE_MAX)  # fmt: skip
    st.caption(caption)


def _render_noise() -> None:
    st.subheader("Noise")
    state = get_state()
    pure = state.budget_kind == "pure"
    # The analytic calibration splits an (ε, δ) budget: a ρ budget falls back to the classic one.
    mechanisms = list(MECHANISM_LABELS) if pure else ["gaussian", "laplace"]
    if get_settings(RatioSettings).mechanism not in mechanisms:
        reset_settings(RatioSettings, mechanism="gaussian")
    mech_col, comp_col, delta_col = st.columns(3)
    with mech_col:
        mechanism = bind(
            st.radio, "Mechanism", RatioSettings, "mechanism", options=mechanisms,
            format_func=MECHANISM_LABELS.__getitem__, key_parts=(state.budget_kind,),
            help="The kind of random noise added to each sum.",
            captions=MECHANISM_HELP,
        )  # fmt: skip
    gaussian = mechanism != "laplace"
    with comp_col:
        _render_accounting(pure=pure, mechanism=mechanism)
    with delta_col:
        if pure and gaussian:
            bind(
                st.select_slider, "δ (chance the guarantee fails)", RatioSettings, "delta",
                format_func=lambda d: f"{d:.0e}",
                help="Gaussian noise allows a tiny probability δ of a larger privacy loss.",
                caption="Keep it far below 1/rows; the paper uses 1e-6.",
            )  # fmt: skip
        elif gaussian:
            st.markdown("**δ:** not needed")
            st.caption("A ρ-zCDP budget has no δ; the ledger converts when needed.")
        else:
            st.markdown("**δ:** 0")
            st.caption("Laplace noise needs no δ.")
    st.caption(RATIO.describe_budget(get_settings(RatioSettings), pipeline.page_budget(state)))


def _render_accounting(*, pure: bool, mechanism: str) -> None:
    """The accounting choice; only the classic Gaussian under an ε budget has one."""
    if pure and mechanism == "gaussian":
        bind(
            st.radio, "Accounting", RatioSettings, "composition",
            labels=COMPOSITION_LABELS,
            help="How the budget is shared among the released sums.",
        )  # fmt: skip
        st.caption(
            "Same (ε, δ) guarantee either way; zCDP adds less noise. The table below the "
            "preview and the width chart on the Compare page show both."
        )
    elif not pure and mechanism != "laplace":
        st.markdown("**Accounting:** zCDP")
        st.caption("With a ρ budget the noise comes from ρ directly: σ = Δ/√(2ρ/m) per sum.")
    elif mechanism != "laplace":
        st.markdown("**Accounting:** basic")
        st.caption("zCDP accounting sizes σ from ρ directly; choose the classic Gaussian to "
                   "use it.")  # fmt: skip
    else:
        st.markdown("**Accounting:** basic (ε/m per sum)")
        st.caption("Laplace noise is pure ε-DP; its costs add up simply.")


def _render_interval() -> None:
    st.subheader("Confidence interval")
    method_col, scale_col, level_col = st.columns(3)
    with method_col:
        method = bind(
            st.radio, "Interval method", RatioSettings, "method", labels=METHOD_LABELS,
            help="How the interval accounts for the DP noise.",
            captions=METHOD_HELP,
        )  # fmt: skip
        if method == "monte_carlo":
            bind(
                st.slider, "Monte Carlo draws B", RatioSettings, "B", step=50,
                help="More draws make the correction steadier but slower.",
                caption="The paper uses B = 200.",
            )  # fmt: skip
    with scale_col:
        bind(
            st.radio, "Scale", RatioSettings, "scale", labels=SCALE_LABELS,
            help="Whether the interval is built for the ratio or for its logarithm.",
            captions=SCALE_HELP,
        )  # fmt: skip
    with level_col:
        _render_level()


def _render_level() -> None:
    """The interval level, shared with the Release page (an :class:`AppState` field)."""
    state = get_state()
    level = state.release_level if state.release_level in LEVELS else 0.95
    attribute_widget(
        st.select_slider, "Confidence level", state, "release_level", options=LEVELS,
        value=level, format_func=lambda v: f"{v:.0%}", key="ratio.level",
        help="How often the interval should contain the true ratio.",
    )  # fmt: skip
    st.caption("Shared with the Release page.")
