"""GVDP's Compare page: how often the DP intervals cover the truth over R replications, on the
current data or on synthetic samples with a known truth (never spends budget).

Coverage is scored by :func:`dpcore.analyses.gvdp.coverage_frame`: Clopper–Pearson intervals
and the binomial band of :mod:`dpcore.foundations.metrics`, the one band of every coverage chart.
"""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from dpcore.analyses.base import NeedsRowsInMemory
from dpcore.analyses.gvdp import BOUNDS_MODES, MODELS, GvdpSettings
from dpcore.analyses.gvdp.data import GvdpData
from dpcore.analyses.gvdp.diagnostics import (
    coverage_frame,
    coverage_on_data,
    coverage_synthetic,
    synthetic_coefficients,
    synthetic_description,
)
from strata_ui import constants
from strata_ui.analyses.gvdp import charts
from strata_ui.analyses.gvdp.settings import (
    ERROR_ICON,
    ROWS_ICON,
    RunInputs,
    budget_sentence,
    current_inputs,
    factor_slider,
)
from strata_ui.analyses.gvdp.view import GvdpView
from strata_ui.state import get_settings, get_state, set_settings, widget_key
from strata_ui.text import as_text, as_written
from strata_ui.widgets import bind, seed_input, show_error

REPLICATIONS_RANGE = constants.GVDP_REPLICATIONS
SOURCES = {
    "data": "The current data (fresh noise and subsets)",
    "synthetic": "Synthetic data with a known truth",
}
SOURCE_CAPTIONS = {
    "data": "Each replication redraws GVDP's subsets, bootstrap resamples and noise on the same "
    "confidential rows; the truth is the ordinary (non-private) estimate on all rows. Since the "
    "interval also allows for sampling error it should cover that estimate *at least* 95% of "
    "the time; falling below the band signals bias — subsets too small for the estimator "
    "(lower k) or bounds that clip.",
    "synthetic": "Each replication draws a fresh synthetic sample of the same size from a model "
    "whose true coefficients are known, and runs GVDP with bounds c times looser than the "
    "tightest (the paper's §3 experiment). This checks calibration: coverage should sit inside "
    "the band. Bounds here come from the known synthetic truth, which is allowed only because "
    "these data are not anyone's.",
}


@st.cache_data(max_entries=32, show_spinner="Replicating GVDP on the current data…")
def _coverage_current(_data: GvdpData, key: tuple, bounds, run, replications: int, seed: int):
    """Coverage of the full-data estimate (``key`` stands for the rows ``_data``)."""
    coverage = coverage_on_data(_data, bounds, run, replications=replications, rng=seed)
    return coverage_frame(coverage, _data.model.coefficients)


@st.cache_data(max_entries=32, show_spinner="Replicating GVDP on synthetic samples…")
def _coverage_synthetic(
    kind: str, n: int, coefficients: tuple[str, ...], run, factor: float,
    replications: int, seed: int,
):  # fmt: skip
    coverage = coverage_synthetic(
        kind, n, len(coefficients), run, factor=factor, replications=replications, rng=seed
    )
    return coverage_frame(coverage, coefficients)


def _coverage_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The coverage frame for people: percentages and plain column names (the nominal level and
    the band are the same for every row and are stated in the summary)."""
    table = frame[["coefficient", "coverage", "low", "high", "mean_width"]].copy()
    table[["coverage", "low", "high"]] = (100 * table[["coverage", "low", "high"]]).round(1)
    return table.rename(
        columns={
            "coverage": "covered (%)", "low": "covered, 95% low (%)",
            "high": "covered, 95% high (%)", "mean_width": "mean interval width",
        }
    )  # fmt: skip


def render_compare() -> None:
    """Coverage of the DP intervals over R replications, on the data or synthetic samples."""
    st.subheader("Do the intervals cover as often as they claim?")
    st.markdown(
        "A 95% interval should contain the truth in 95% of releases. Here GVDP is rerun R times "
        "and we count how often its intervals contain the truth. Nothing here spends budget."
    )
    try:
        inputs = current_inputs()
        inputs.data.check_k(inputs.run.k, inputs.run.resamples)
    except (ValueError, TypeError) as exc:
        show_error(exc, icon=ERROR_ICON, suffix=" Fix it on the Estimator page.")
        return
    model, run = inputs.model, inputs.run
    if get_settings(GvdpSettings).box_source == "private":
        st.info(
            "These replications run GVDP in the typed box: a release finds a tighter box "
            "privately first (Estimator page), which is not simulated here yet.",
            icon=":material/info:",
        )
    st.caption(
        f"{MODELS[model.kind]}: **{as_text(model.formula)}**, "
        f"k = {inputs.data.subsets(run.k, run.resamples):,}, "
        f"{BOUNDS_MODES[inputs.bounds.mode].lower()}. {budget_sentence()} Change these on the "
        "Estimator and Budget pages."
    )
    source = bind(
        st.radio, "Replicate on", GvdpView, "coverage_source", labels=SOURCES, horizontal=True,
        help="The current data test for bias; synthetic data test the intervals' calibration.",
        captions=SOURCE_CAPTIONS,
    )  # fmt: skip
    replications = _render_replication_controls(model.kind)
    if source == "synthetic":
        _render_synthetic_choices(inputs)
    _render_coverage(inputs, source, replications)


def _render_replication_controls(kind: str) -> int:
    """R for the current model kind and the seed; returns R."""
    view = get_settings(GvdpView)
    reps_col, seed_col = st.columns(2)
    with reps_col:
        replications = st.slider(
            "Replications R", min_value=REPLICATIONS_RANGE[0], max_value=REPLICATIONS_RANGE[1],
            value=view.replications_for(kind), step=5,
            key=widget_key(GvdpView, "replications", kind),
            help="More replications give a narrower band but take longer.",
        )  # fmt: skip
        if replications != view.replications_for(kind):
            set_settings(view.with_replications(kind, replications))
        st.caption("Each replication reruns the whole bootstrap; logistic fits are the slowest.")
    with seed_col:
        # The seed is the session's (the Estimator page's preview uses it too).
        seed_input("gvdp.coverage.seed", help="The same seed gives the same replications.")
        st.caption("Change it to check that a result is not a fluke of one simulation.")
    return replications


def _render_synthetic_choices(inputs: RunInputs) -> None:
    """How loose the synthetic run's bounds are, and the synthetic model."""
    factor_slider(
        "Bounds looser than the truth by", GvdpView, "synthetic_factor",
        help="The paper uses about 100× (§3) and 10,000× (App. F.3).",
        caption="GVDP is built to stay valid even when this factor is large.",
    )  # fmt: skip
    kind, d = inputs.model.kind, inputs.model.d
    st.caption(
        f"Synthetic model ({inputs.data.rows:,} rows, like your data): "
        f"{synthetic_description(kind, d)}."
    )


def _render_coverage(inputs: RunInputs, source: str, replications: int) -> None:
    """The coverage chart, its summary and table, replicated on ``source``."""
    seed, run = get_state().seed, inputs.run
    try:
        started = time.perf_counter()
        if source == "data":
            frame = _coverage_current(inputs.data, inputs.key, inputs.bounds, run,
                                      replications, seed)  # fmt: skip
            truth = "the full-data non-private estimate"
        else:
            kind = inputs.model.kind
            names = synthetic_coefficients(kind, inputs.model.d)
            factor = get_settings(GvdpView).synthetic_factor
            frame = _coverage_synthetic(kind, inputs.data.rows, names, run, factor,
                                        replications, seed)  # fmt: skip
            truth = "the true synthetic coefficients"
        elapsed = time.perf_counter() - started
    except NeedsRowsInMemory as exc:  # the data stay where they lie: synthetic data still work
        st.info(
            f"{as_written(exc)} Synthetic data with a known truth need no rows.", icon=ROWS_ICON
        )
        return
    except (ValueError, TypeError) as exc:
        show_error(exc, icon=ERROR_ICON)
        return
    where = "current data" if source == "data" else "synthetic data"
    st.plotly_chart(
        charts.coverage_figure(
            frame, title=f"Coverage of the {run.level:.0%} GVDP intervals on the {where}, "
            f"R = {replications:,}",
        ),
        key="gvdp.chart.coverage",
    )  # fmt: skip
    st.markdown(as_written(charts.coverage_summary(frame, truth)))
    st.dataframe(_coverage_table(frame), hide_index=True)
    st.caption(
        f"Computed in {elapsed:.2f} s for R = {replications:,} (cached: returning to these "
        "settings is instant)."
    )
