"""The ratio's Learn items: why CIs break under DP (explainer) and the paper's Table 1 (preset)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from dpcore.analyses.ratio import teaching as ratio_teaching
from dpcore.analyses.ratio.study import load_table1, ratio_study, table1_comparison
from strata_ui.analyses.base import LearnItem
from strata_ui.analyses.ratio import charts, compare_charts
from strata_ui.analyses.ratio.learn_charts import (
    TABLE1_SETTINGS,
    ratio_coverage_figure,
    ratio_coverage_summary,
    ratio_width_figure,
    ratio_width_summary,
    table1_overview_figure,
    table1_setting_figure,
    table1_setting_summary,
)
from strata_ui.learn import (
    claims_table,
    formula,
    settings_table,
    show_chart,
    show_charts,
)
from strata_ui.state import get_settings, get_state
from strata_ui.widgets import labelled_radio, log_slider

RATIO_CI_WEIGHTING = {
    False: "Unweighted (every row counts once)",
    True: "Weighted (survey weights w ~ Exp(1), clipped to [1/3, 3])",
}


@dataclass
class RatioLearn:
    """The ratio's Learn items' choices; they never change the plan the Release page commits."""

    # Why confidence intervals break under DP
    ratio_ci_n: int = 5000
    ratio_ci_weighted: bool = False
    # Table 1 preset
    table1_setting: str = "weighted-5000"


@st.cache_data(max_entries=32, show_spinner="Simulating 400 releases per ε (cached)…")
def _ratio_sweep(n: int, weighted: bool, seed: int) -> pd.DataFrame:
    return ratio_teaching.ratio_coverage_sweep(n, weighted=weighted, seed=seed)


def render_ratio_ci() -> None:
    """Coverage of ratio intervals with no correction, Monte Carlo and analytical correction."""
    settings = get_settings(RatioLearn)
    st.markdown(
        "A 95% confidence interval promises to contain the true value 95% of the time. DP adds "
        "noise to the published sums, and an interval built as if they were exact is too narrow: "
        "in Miao & Li's simulation of a ratio of two sums, ignoring the noise made 95% intervals "
        "cover as little as **7.6%** of the time. Adding the noise's variance to the interval's "
        "(by formula or by simulation) brings it back to 95%."
    )
    left, right = st.columns(2)
    with left:
        log_slider(
            "Rows in the data, n (log scale)",
            settings,
            "ratio_ci_n",
            options=ratio_teaching.RATIO_CI_SIZES,
            key="learn.ratio_ci.n",
            help="The noise does not grow with n but the sums do, so with more rows the noise "
            "matters less and even the uncorrected interval covers better.",
            caption="The paper uses 5,000 and 10,000.",
        )
    with right:
        labelled_radio(
            "Weights",
            settings,
            "ratio_ci_weighted",
            RATIO_CI_WEIGHTING,
            key="learn.ratio_ci.weighted",
            help="Weights up to 3 triple the sensitivity of every sum, so the same ε needs three "
            "times the noise, and one more sum (Σw²) shares the budget.",
        )
        st.caption("Weighted data need more noise: coverage falls further.")
    seed = get_state().seed
    sweep = _ratio_sweep(int(settings.ratio_ci_n), bool(settings.ratio_ci_weighted), seed)
    show_charts(
        "learn.chart.ratio_ci",
        coverage=(ratio_coverage_figure(sweep), ratio_coverage_summary(sweep)),
        width=(ratio_width_figure(sweep), ratio_width_summary(sweep)),
    )
    st.caption(
        "The paper's simulation (§3): s ~ Beta(2, 2), y ~ Bernoulli(s/1.1), so the true ratio "
        "Σs/Σy is 1.1; classic Gaussian noise (eq. 5), δ = 1e-6, ε split evenly over the 5 "
        "released sums (6 weighted); Monte Carlo correction with B = 200 draws; "
        f"{ratio_teaching.RATIO_CI_REPS} data sets, the same for every ε, seed {seed} (from the "
        "Compare page). Releases whose noisy sums leave no interval count as misses, as in the "
        "paper's code. Simulated data only: nothing is released or spent."
    )
    formula(
        r"\begin{gathered}"
        r"\widehat{\mathrm{Var}}(\hat r) = \frac{\hat\sigma^2_{S} + \sigma^2_{\mathrm{dp},S}}{T_y^2}"
        r"- \frac{2\,T_s}{T_y^3}\,\hat\sigma_{SY}"
        r"+ \frac{T_s^2}{T_y^4}\big(\hat\sigma^2_{Y} + \sigma^2_{\mathrm{dp},Y}\big) \\"
        r"\hat r \pm 1.96\sqrt{\widehat{\mathrm{Var}}(\hat r)}, \quad \hat r = \frac{T_s}{T_y}"
        r"\\ \sigma_{\mathrm{dp}} = \frac{\Delta\sqrt{2\log(1.25/\delta')}}{\varepsilon'}"
        r"\end{gathered}",
        "Miao & Li, Privacy-Preserving Inference on the Ratio of Two Gaussians Using Sums (JDS "
        "2022): the delta method, eq. 1, applied to the noisy sums T_s = (Σws)_dp and "
        "T_y = (Σwy)_dp, with the variances and covariance of the sums from eq. 2–4; the "
        "analytical correction (§2.4.3, steps 1–4) adds the noise variances σ²_dp of eq. 5 "
        "(ε′, δ′: each sum's share of the budget). Without the two σ²_dp terms it is the "
        "no-correction interval (§2.4.1); the Monte Carlo correction (§2.4.2) estimates their "
        "effect by re-noising the sums B times.",
    )


TABLE1_REPS, TABLE1_B = 1000, 200  # the paper's replicates and Monte Carlo draws


TABLE1_SETTING_NAMES = {
    "unweighted-5000": "Unweighted, n = 5,000",
    "weighted-5000": "Weighted, n = 5,000",
    "unweighted-10000": "Unweighted, n = 10,000",
    "weighted-10000": "Weighted, n = 10,000",
}


@st.cache_data(
    max_entries=8, show_spinner="Running the paper's simulation: 16 settings × 1,000 releases…"
)
def _ratio_table1(seed: int) -> tuple[pd.DataFrame, dict[tuple[bool, int], float]]:
    """Our Table 1 beside the paper's, and our mean Kish effective n per (weighted, n)."""
    study = ratio_study(reps=TABLE1_REPS, B=TABLE1_B, rng=seed)
    effective = study.groupby(["weighted", "n"])["effective_n"].first()
    return table1_comparison(study, load_table1()), {
        (bool(w), int(n)): float(v) for (w, n), v in effective.items()
    }


def _cell(comparison: pd.DataFrame, weighted: bool, n: int, epsilon: float, method: str):
    rows = comparison[
        (comparison["weighted"] == weighted)
        & (comparison["n"] == n)
        & (comparison["epsilon"] == epsilon)
        & (comparison["method"] == method)
        & (comparison["composition"] == "basic")
    ]
    return rows.iloc[0]


def render_ratio_table1() -> None:
    """Miao & Li (2022), Table 1: our run of their simulation beside their published numbers."""
    settings = get_settings(RatioLearn)
    st.markdown(
        "**Table 1** of Miao & Li (JDS 2022) reports, for 16 settings, how wide the 95% intervals "
        "for a ratio of two noisy sums are, how often they cover the true ratio 1.1, and their "
        "interval score, with no correction and with their two corrections. This preset reruns "
        "their simulation with the same design and puts our numbers beside theirs."
    )
    seed = get_state().seed
    comparison, effective = _ratio_table1(seed)
    settings_table(
        [
            ("data", "s ~ Beta(2, 2), y ~ Bernoulli(s/1.1); w ~ Exp(1) clipped to [1/3, 3]",
             "the same", True),
            ("n; ε; δ", "5,000 and 10,000; 0.2, 0.5, 1, 4; 1e-6", "the same", True),
            ("mechanism", "classic Gaussian (eq. 5), basic composition over the sums",
             "the same", True),
            ("replicates; Monte Carlo draws B", "1,000; 200", "1,000; 200", True),
            ("random numbers", "not stated; its code seeds each replicate",
             f"seed {seed}, data reused across ε", False),
            ("releases with no interval", "a miss; left out of width and score", "the same",
             True),
        ]
    )  # fmt: skip
    show_chart(
        table1_overview_figure(comparison),
        key="learn.chart.preset.ratio_table1.all",
        summary=compare_charts.table1_summary(comparison),
    )
    labelled_radio(
        "Setting to compare in detail",
        settings,
        "table1_setting",
        TABLE1_SETTING_NAMES,
        default="weighted-5000",
        horizontal=True,
        key="learn.preset.ratio_table1.setting",
        help="One block of the paper's Table 1: coverage and mean width for each ε and method.",
    )
    weighted, n = TABLE1_SETTINGS[settings.table1_setting]
    show_chart(
        table1_setting_figure(comparison, weighted=weighted, n=n),
        key="learn.chart.preset.ratio_table1.setting",
        summary=table1_setting_summary(comparison, weighted=weighted, n=n),
    )
    worst_none = _cell(comparison, True, 5000, 0.2, "none")
    corrected = comparison[comparison["method"].isin(["monte_carlo", "analytical"])]
    big_mc = _cell(comparison, True, 5000, 0.2, "monte_carlo")
    big_an = _cell(comparison, True, 5000, 0.2, "analytical")
    cheap = _cell(comparison, False, 10000, 4.0, "analytical")
    public = _cell(comparison, False, 10000, 4.0, "public")
    claims_table(
        [
            ("no correction covers as little as (weighted, n = 5,000, ε = 0.2)", "7.6%",
             f"{100 * worst_none['ours_coverage']:.1f}%"),
            ("corrected intervals cover ≈ 95% (16 settings, both corrections)",
             "93.9% to 95.8%",
             f"{100 * corrected['ours_coverage'].min():.1f}% to "
             f"{100 * corrected['ours_coverage'].max():.1f}%"),
            ("unweighted n = 10,000, ε = 4: corrected width ≈ public width",
             "0.044 vs 0.043", f"{cheap['ours_width']:.3f} vs {public['ours_width']:.3f}"),
            ("weighted n = 5,000, ε = 0.2: mean width, Monte Carlo; analytical",
             "8.783; 1.532", f"{big_mc['ours_width']:.3f}; {big_an['ours_width']:.3f}"),
            ("Kish effective n, weighted n = 5,000", "3,032 (Tab. 1), 3,082 (Tab. 2)",
             f"{effective[(True, 5000)]:,.1f}; {ratio_teaching.kish_effective_n(5000):,.1f} expected"),
            ("Kish effective n, weighted n = 10,000", "6,161",
             f"{effective[(True, 10000)]:,.1f}; {ratio_teaching.kish_effective_n(10000):,.1f} expected"),
        ]
    )  # fmt: skip
    with st.popover("The whole table: ours beside the paper's", icon=":material/table_view:"):
        display = compare_charts.table1_display(comparison)
        st.dataframe(
            display,
            hide_index=True,
            column_config={
                name: st.column_config.NumberColumn(format="%.3f")
                for name in display.columns
                if "(" in name and "Degenerate" not in name
            },
        )
        st.caption("Miao & Li (JDS 2022), Table 1; our run with the seed above.")
    gaps = comparison.dropna(subset=["paper_coverage"])
    gap = (gaps["ours_coverage"] - gaps["paper_coverage"]).abs()
    worst = gaps.loc[gap.idxmax()]
    st.markdown(
        "**Where we differ.** We simulate each n's data once and reuse them for every ε "
        "(common random numbers) with one seed, so our numbers differ from the paper's by Monte "
        f"Carlo error: about ±{200 * math.sqrt(0.95 * 0.05 / TABLE1_REPS):.1f} percentage points "
        f"of coverage near 95% with {TABLE1_REPS:,} replicates (2 standard errors), more near "
        f"50%. Our largest coverage gap is {100 * gap.max():.1f} points "
        f"({'weighted' if worst['weighted'] else 'unweighted'}, n = {int(worst['n']):,}, "
        f"ε = {worst['epsilon']:g}, {charts.METHOD_NAMES[worst['method']].lower()}). The "
        "weighted ε = 0.2 widths and scores are means dominated by a few releases whose noisy "
        "denominator is near 0, so they change a lot from run to run. For weighted n = 5,000 "
        f"the paper prints an effective n of 3,032; ours is {effective[(True, 5000)]:,.1f} and "
        f"its expected value {ratio_teaching.kish_effective_n(5000):,.1f}, which matches the 3,082 "
        "of the paper's own Table 2 (same design), so 3,032 looks like a misprint."
    )
    formula(
        r"\begin{gathered}"
        r"\hat r \pm z_{0.975}\sqrt{V}, \quad V_{\text{none}} = \text{eq. 1 on the noisy sums}"
        r"\\ V_{\text{an}} = V_{\text{none}} + \frac{\sigma^2_{\mathrm{dp},S}"
        r"+ \hat r^{2}\,\sigma^2_{\mathrm{dp},Y}}{T_y^{2}}, \quad "
        r"n_{\text{eff}} = \frac{(\sum w)^2}{\sum w^2}"
        r"\end{gathered}",
        "Miao & Li (JDS 2022): eq. 1–4 and §2.4.1–2.4.3 (on the ratio scale the analytical "
        "correction reduces to this sum), eq. 5 for σ_dp, Kish (1965) for n_eff; the interval "
        "score is Gneiting & Raftery (2007), eq. 43. Table 1 ships with this app as "
        "`dpcore/data/ratio_table1_gaussian.csv`.",
    )


EXPLAINERS: tuple[LearnItem, ...] = (
    LearnItem(
        "ratio_ci",
        "Why confidence intervals break under DP",
        ":material/error:",
        render_ratio_ci,
    ),
)
PRESETS: tuple[LearnItem, ...] = (
    LearnItem(
        "ratio_table1",
        "Ratio paper, Table 1: coverage of the corrected intervals",
        ":material/table_chart:",
        render_ratio_table1,
    ),
)
