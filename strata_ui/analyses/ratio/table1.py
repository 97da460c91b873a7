"""The Compare page's preset: Miao & Li (JDS 2022), Table 1, rerun beside the paper's numbers."""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from dpcore.analyses.ratio import load_table1, ratio_study, table1_comparison
from strata_ui.analyses.ratio import compare_charts
from strata_ui.analyses.ratio.learn import TABLE1_B, TABLE1_REPS
from strata_ui.analyses.ratio.view import RatioView
from strata_ui.state import get_settings, get_state, update_settings, widget_key
from strata_ui.widgets import bind


@st.cache_data(max_entries=8, show_spinner="Running the paper's simulation (16 settings)…")
def _table1(seed: int, zcdp: bool) -> pd.DataFrame:
    """Our run of the paper's 16 settings beside its Table 1 (with the zCDP accounting too when
    ``zcdp``)."""
    study = ratio_study(
        composition=("basic", "zcdp") if zcdp else "basic", reps=TABLE1_REPS, B=TABLE1_B,
        rng=seed,
    )  # fmt: skip
    return table1_comparison(study, load_table1())


def render_table1() -> None:
    """The paper's design, a button to run it, and our Table 1 beside theirs once asked for."""
    st.subheader("4. Reproduce the paper's Table 1")
    st.markdown(
        "Miao & Li's simulation: s ~ Beta(2, 2), y ~ Bernoulli(s/1.1), so the true ratio is 1.1; "
        "n = 5,000 and 10,000 rows, unweighted and weighted (w ~ Exp(1) clipped to [1/3, 3]), "
        "ε = 0.2 to 4 with the classic Gaussian, δ = 1e-6 split evenly over the sums, "
        f"{TABLE1_REPS:,} replicates, B = {TABLE1_B}, 95% intervals on the ratio scale."
    )
    run_col, zcdp_col = st.columns([1, 2])
    with run_col:
        if st.button("Reproduce the paper's Table 1", key=widget_key(RatioView, "show_table1"),
                     icon=":material/table_chart:", type="primary"):  # fmt: skip
            update_settings(RatioView, show_table1=True)
    with zcdp_col:
        zcdp = bind(
            st.checkbox, "Also run the zCDP accounting", RatioView, "table1_zcdp",
            help="Adds rows with the paper's suggested improvement; the paper has no numbers "
            "for them.",
        )  # fmt: skip
    if not get_settings(RatioView).show_table1:
        st.caption("Takes about a second; uses the seed above. Simulated data only.")
        return
    seed = get_state().seed
    started = time.perf_counter()
    comparison = _table1(seed, zcdp)
    took = time.perf_counter() - started
    st.plotly_chart(compare_charts.table1_figure(comparison), key="ratio.chart.table1")
    st.markdown(compare_charts.table1_summary(comparison))
    st.dataframe(
        compare_charts.table1_display(comparison),
        hide_index=True,
        column_config={
            name: st.column_config.NumberColumn(format="%.3f")
            for name in compare_charts.table1_display(comparison.head(1)).columns
            if "(" in name and "Degenerate" not in name
        },
        key="ratio.table.table1",
    )
    st.caption(
        f"Our run: seed {seed}, {took:.2f} s. Where we differ from the paper: we use common "
        "random numbers (each n and weighting's data are simulated once and reused for every ε "
        "and method) and one seed, so our numbers differ from the paper's by Monte Carlo error "
        "(about ±1.4 points of coverage at 1,000 replicates). Releases whose noisy sums make the "
        "ratio undefined count as misses and are left out of the width and score, as NaNs are "
        "in the paper's code. The weighted ε = 0.2 widths and scores are means dominated by a "
        "few releases with a noisy denominator near 0, so they change a lot from run to run."
    )
