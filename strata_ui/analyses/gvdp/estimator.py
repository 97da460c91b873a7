"""GVDP's Estimator page: the settings (sections 1–5, :mod:`.settings`), then a preview on the
confidential data beside the non-private estimate (6) and the k diagnostic (7).

The runs are cached on the model's rows through the key that stands for them
(:attr:`.settings.RunInputs.key`), the public bounds, the run settings and a seed.
"""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from dpcore.analyses.base import NeedsRowsInMemory
from dpcore.analyses.gvdp import GVDP, GvdpSettings
from dpcore.analyses.gvdp.data import GvdpData
from dpcore.analyses.gvdp.diagnostics import blb_diagnostic, k_ladder
from dpcore.analyses.gvdp.estimator import nonprivate_ci
from dpcore.analyses.gvdp.groups import (
    DP,
    NON_PRIVATE,
    comparison_frame,
    groups_frame,
    nonprivate,
    nonprivate_population,
    run_groups,
    run_population,
)
from strata_ui import pipeline
from strata_ui.analyses.gvdp import charts, settings
from strata_ui.analyses.gvdp.settings import ERROR_ICON, ROWS_ICON, RunInputs
from strata_ui.analyses.gvdp.view import GvdpView
from strata_ui.state import get_settings, get_state, reset_settings
from strata_ui.style import by_interval_width, written_or_dash
from strata_ui.text import as_written
from strata_ui.widgets import bind, show_error

PREVIEW_LABEL = "Preview — uses the confidential data; not a release"
PREVIEW_ICON = ":material/visibility:"
INTRO = (
    "GVDP (Covington, He, Honaker & Kamath) gives an **unbiased** private estimate and a "
    "**valid confidence interval** for a mean or regression coefficients. It splits the rows "
    "into k subsets, bootstraps the estimator on each (the *bag of little bootstraps*), and "
    "privately averages the k subset results with CoinPress, which starts from loose public "
    "bounds and tightens them step by step — so nothing is clipped and nothing is biased."
)


def render_estimator() -> None:
    """The model, k, public bounds and budget, then previews and the k diagnostic."""
    st.markdown(INTRO)
    model = settings.render_model()
    if model is None:
        return
    chosen = get_settings(GvdpSettings)
    try:
        data = pipeline.current_statistics(GVDP, chosen)
    except (ValueError, TypeError) as exc:
        show_error(exc, icon=ERROR_ICON)
        return
    for message in data.messages():
        st.caption(f":material/info: {as_written(message)}")
    settings.render_strategy()
    k_check = settings.render_k(model, data)
    bounds = settings.render_bounds(model, data)
    run = settings.render_budget()
    k_ok = settings.render_k_check(k_check, data, run)
    if not k_ok or bounds is None:
        st.info("Fix the settings above to see the preview.", icon=":material/info:")
        return
    inputs = RunInputs(model, data, settings.cache_key(chosen), bounds, run)
    seed = get_state().seed
    _render_preview(inputs, seed)
    _render_k_diagnostic(inputs, seed)


# ---- cached runs (keyed on the rows' key, the bounds, the run settings and a seed) ----------


@st.cache_data(max_entries=32, show_spinner="Running GVDP on the confidential data (preview)…")
def _population_preview(_data: GvdpData, key: tuple, bounds, run, seed: int) -> pd.DataFrame:
    result = run_population(_data, bounds, run, rng=seed)
    return comparison_frame(_data.model, result, nonprivate_population(_data, run.level))


@st.cache_data(max_entries=32, show_spinner="Running GVDP in every group (preview)…")
def _groups_preview(_data: GvdpData, key: tuple, bounds, run, seed: int) -> pd.DataFrame:
    grouped = run_groups(_data, bounds, run, rng=seed)
    return groups_frame(_data.model, grouped, nonprivate(_data, run.level), _data.group_rows)


@st.cache_data(max_entries=16, show_spinner="Drawing the bag of little bootstraps at several k…")
def _diagnostic(_data: GvdpData, key: tuple, bounds, run, ks: tuple[int, ...], seed: int):
    result = blb_diagnostic(_data, bounds, run, ks, rng=seed)
    reference = nonprivate_ci(_data.population, _data.model.estimator, run.level)
    return result.frame, result.failed, reference.estimate.tolist(), reference.variance.tolist()


# ---- 6. Preview ---------------------------------------------------------------------------------


def _pivot(frame: pd.DataFrame) -> pd.DataFrame:
    """A compare frame as one row per coefficient with DP and non-private columns."""
    wide = frame.pivot(index="coefficient", columns="method", values=["estimate", "low", "high"])
    out = pd.DataFrame(
        {
            "DP estimate": wide[("estimate", DP)],
            "DP low": wide[("low", DP)],
            "DP high": wide[("high", DP)],
            "Non-private estimate": wide[("estimate", NON_PRIVATE)],
            "Non-private low": wide[("low", NON_PRIVATE)],
            "Non-private high": wide[("high", NON_PRIVATE)],
        }
    )
    out["Width ratio (DP ÷ non-private)"] = (out["DP high"] - out["DP low"]) / (
        out["Non-private high"] - out["Non-private low"]
    )
    return out.reindex(list(dict.fromkeys(frame["coefficient"]))).reset_index()


def _readable(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`_pivot`'s table as people read it: each estimate and interval to the precision
    its own interval's width supports, with separators; the width ratio to 3 digits."""
    written = table
    for method in ("DP", "Non-private"):
        ends = [f"{method} {part}" for part in ("estimate", "low", "high")]
        widths = table[f"{method} high"] - table[f"{method} low"]
        written = by_interval_width(written, ends, widths)
    ratio = "Width ratio (DP ÷ non-private)"
    return written.assign(**{ratio: written_or_dash(table[ratio])})


def _render_preview(inputs: RunInputs, seed: int) -> None:
    model, data, run = inputs.model, inputs.data, inputs.run
    st.subheader("6. Preview")
    st.info(PREVIEW_LABEL, icon=PREVIEW_ICON)
    error = (
        "a robust (sandwich) standard error" if data.in_memory or model.kind == "mean"
        else "the classical standard error (a robust one needs the rows in memory)"
    )  # fmt: skip
    st.caption(
        f"Simulated noise with seed {seed} (the Compare page's seed); a release draws "
        f"OpenDP noise instead. The non-private estimate uses {as_written(error)}."
    )
    try:
        started = time.perf_counter()
        frame = _population_preview(data, inputs.key, inputs.bounds, run, seed)
        elapsed = time.perf_counter() - started
    except (ValueError, TypeError) as exc:
        show_error(exc, icon=ERROR_ICON)
        return
    st.markdown(
        f"**Whole population** ({data.rows:,} rows, k = {data.subsets(run.k, run.resamples):,})"
    )
    st.plotly_chart(
        charts.comparison_figure(frame, kind=model.kind, outcome=model.outcome, level=run.level),
        key="gvdp.chart.comparison",
    )
    st.markdown(as_written(charts.comparison_summary(frame)))
    st.dataframe(_readable(_pivot(frame)), hide_index=True, key="gvdp.table.comparison")
    st.caption(f"Computed in {elapsed:.2f} s (cached: the same settings redraw at once).")
    _render_groups(inputs, seed)


_COEFFICIENT_CHOICES = {
    "group_coefficient": (
        "Coefficient to show per group",
        "Coefficients have different units, so one is drawn at a time.",
        "The charts below redraw for the chosen coefficient.",
    ),
    "diagnostic_coefficient": (
        "Coefficient to diagnose",
        "One coefficient is drawn at a time.",
        "Check each coefficient: the most fragile one limits k.",
    ),
}
"""Label, help and caption of each coefficient choice, by its :class:`GvdpView` field."""


def _choose_coefficient(field_name: str, coefficients: list[str]) -> str:
    """The coefficient a chart draws (:class:`GvdpView` ``field_name``): a choice when there
    are several, the last one by default."""
    if getattr(get_settings(GvdpView), field_name) not in coefficients:
        reset_settings(GvdpView, **{field_name: coefficients[-1]})
    if len(coefficients) > 1:
        label, help, caption = _COEFFICIENT_CHOICES[field_name]
        bind(
            st.selectbox, label, GvdpView, field_name, options=coefficients, help=help,
            caption=caption,
        )  # fmt: skip
    return getattr(get_settings(GvdpView), field_name)


def _render_groups(inputs: RunInputs, seed: int) -> None:
    """Every group's DP and non-private estimate and interval width, and their recombination."""
    model, data, bounds, run = inputs.model, inputs.data, inputs.bounds, inputs.run
    st.markdown(f"**Per group** (groups from the Strata page, each with the whole ρ = {run.rho:g})")
    problem = data.group_problem(run.k, run.resamples)
    if problem is not None:
        st.warning(
            f"Per-group estimates are not available: {as_written(problem)}",
            icon=":material/warning:",
        )
        return
    try:
        groups = _groups_preview(data, inputs.key, bounds, run, seed)
    except (ValueError, TypeError) as exc:
        st.warning(
            f"Per-group estimates are not available: {as_written(exc)}", icon=":material/warning:"
        )
        return
    coefficients = list(model.coefficients)
    coefficient = _choose_coefficient("group_coefficient", coefficients)
    unit = charts.coefficient_unit(model.kind, model.outcome, coefficient)
    units = charts.coefficient_units(model.kind, model.outcome, coefficient)
    y_range = None
    if bounds.mode == "box":
        j = coefficients.index(coefficient)
        y_range = (bounds.low[j], bounds.high[j])
    # Two tabs, not two charts one under the other: the page ran to 6,140 px.
    estimates_tab, widths_tab = st.tabs(["Estimates and intervals", "Interval widths"])
    with estimates_tab:
        st.plotly_chart(
            charts.group_figure(groups, coefficient, unit=unit, level=run.level, y_range=y_range),
            key="gvdp.chart.groups",
        )
        st.markdown(charts.group_estimates_summary(groups, coefficient, level=run.level))
        if y_range is not None:
            st.caption(
                "The axis spans the public range of the coefficient; intervals that run past it "
                "are cut at the edge and estimates beyond it are drawn as triangles (hover for "
                "values)."
            )
    with widths_tab:
        st.plotly_chart(
            charts.group_width_figure(groups, coefficient, unit=units), key="gvdp.chart.widths"
        )
        st.markdown(charts.group_summary(groups, coefficient))
    with st.expander("Table of the group estimates", icon=":material/table:"):
        rows = groups[groups["coefficient"] == coefficient]
        readable = by_interval_width(rows, ("estimate", "low", "high"), rows["high"] - rows["low"])
        st.dataframe(readable, hide_index=True)
    if model.kind != "mean":
        st.caption(
            "“All” is the share-weighted average of the group coefficients. For a regression this "
            "differs from the whole-population coefficient when groups differ."
        )


# ---- 7. The k diagnostic ------------------------------------------------------------------------


def _render_k_diagnostic(inputs: RunInputs, seed: int) -> None:
    """Folded: a curator's diagnostic for choosing k, which doubled the page's length."""
    with st.expander("7. Choosing k: the subsets at several k (curator's diagnostic)",
                     icon=":material/tune:"):  # fmt: skip
        _render_k_ladder(inputs, seed)


def _render_k_ladder(inputs: RunInputs, seed: int) -> None:
    model, data, run = inputs.model, inputs.data, inputs.run
    st.info(
        "Non-private curator diagnostic: the subset estimates below are computed from the "
        "confidential data without noise, so never publish them, and prefer to choose k on "
        "public or holdout data: a k tuned on the confidential data depends on it.",
        icon=PREVIEW_ICON,
    )
    st.markdown(
        "Each subset's bootstrap gives an estimate and a standard error. As k grows, the "
        "estimates spread more (each uses fewer rows) — that is expected. Warning signs are a "
        "**centre that drifts away** from the full-data estimate (bias on small subsets) or "
        "**standard errors that drift** from the full-data standard error: then k is too large."
    )
    chosen_k = data.subsets(run.k, run.resamples)
    ks = k_ladder(chosen_k, data.rows, model.d)
    try:
        started = time.perf_counter()
        frame, failed, estimate, variance = _diagnostic(
            data, inputs.key, inputs.bounds, run, ks, seed
        )
        elapsed = time.perf_counter() - started
    except NeedsRowsInMemory as exc:  # the data stay where they lie
        st.info(f"{as_written(exc)}", icon=ROWS_ICON)
        return
    except (ValueError, TypeError) as exc:
        show_error(exc, icon=ERROR_ICON)
        return
    if frame.empty:
        st.warning("The bootstrap could not run at any k tried.", icon=":material/warning:")
        return
    coefficients = list(model.coefficients)
    coefficient = _choose_coefficient("diagnostic_coefficient", coefficients)
    j = coefficients.index(coefficient)
    reference = {"reference_estimate": estimate[j], "reference_se": variance[j] ** 0.5}
    st.plotly_chart(
        charts.k_diagnostic_figure(
            frame, coefficient, chosen_k=chosen_k,
            unit=charts.coefficient_units(model.kind, model.outcome, coefficient), **reference,
        ),
        key="gvdp.chart.k",
    )  # fmt: skip
    st.markdown(
        charts.k_diagnostic_summary(
            frame, coefficient, chosen_k=chosen_k, failed=failed, **reference
        )
    )
    st.caption(f"k tried: {', '.join(f'{k:,}' for k in ks)}; computed in {elapsed:.2f} s.")
