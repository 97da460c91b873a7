"""The ratio's Learn items: why intervals break under DP, and the ratio paper's Table 1 (numbers
from dpcore.analyses.ratio, figures from strata_ui.analyses.ratio.learn_charts).
"""

import math

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.ratio import teaching as ratio_teaching
from dpcore.foundations.metrics import binomial_band
from strata_ui.analyses.ratio import compare_charts
from strata_ui.analyses.ratio import learn_charts as ratio_charts
from tests.figures import as_json, assert_accessible, values
from tests.tolerances import binomial_tolerance

# ---- Why confidence intervals break under DP (Miao & Li 2022) -----------------------------------


@pytest.fixture(scope="module")
def ratio_sweep() -> pd.DataFrame:
    return ratio_teaching.ratio_coverage_sweep(5000, weighted=False, reps=400, seed=0)


def test_ratio_sweep_no_correction_undercovers_and_corrections_hold(ratio_sweep):
    by = ratio_sweep.set_index(["method", "epsilon"])
    assert set(ratio_sweep["epsilon"]) == set(ratio_teaching.RATIO_CI_EPSILONS)
    assert set(ratio_sweep["method"]) == set(ratio_teaching.RATIO_CI_METHODS)
    tolerance = binomial_tolerance(400)
    # Small ε: ignoring the noise covers far below 95%; both corrections are back at 95%.
    assert by.loc[("none", 0.1), "coverage"] < 0.3
    assert by.loc[("none", 0.2), "coverage"] < 0.5
    for method in ("monte_carlo", "analytical", "public"):
        for eps in ratio_teaching.RATIO_CI_EPSILONS:
            assert abs(by.loc[(method, eps), "coverage"] - 0.95) <= tolerance, (method, eps)
    # The uncorrected interval improves as ε grows (less noise) and has the public width.
    none = ratio_sweep[ratio_sweep["method"] == "none"].sort_values("epsilon")
    assert none["coverage"].is_monotonic_increasing
    assert by.loc[("none", 4.0), "coverage"] > 0.9
    np.testing.assert_allclose(
        none["width"], by.loc[("public", 4.0), "width"], rtol=0.05
    )  # ignores the noise: same width as the non-private interval
    # The corrected interval is wider the smaller ε, ~12× the public one at ε = 0.1 (paper: 0.370
    # at ε = 0.2 vs public 0.061).
    analytical = ratio_sweep[ratio_sweep["method"] == "analytical"].sort_values("epsilon")
    assert analytical["width"].is_monotonic_decreasing
    assert by.loc[("analytical", 0.2), "width"] == pytest.approx(0.367, rel=0.05)
    se = by.loc[("none", 0.5), "coverage_se"]
    p = by.loc[("none", 0.5), "coverage"]
    assert se == pytest.approx(math.sqrt(p * (1 - p) / 400))


def test_ratio_sweep_weighted_needs_more_noise():
    weighted = ratio_teaching.ratio_coverage_sweep(
        5000, weighted=True, epsilons=(0.2, 1.0), reps=200
    )
    by = weighted.set_index(["method", "epsilon"])["coverage"]
    # The paper's Table 1: no correction covers 7.6% at ε = 0.2 and 39.8% at ε = 1.
    assert by[("none", 0.2)] < 0.2 and by[("none", 1.0)] < 0.6
    assert weighted["weighted"].all()
    assert weighted["effective_n"].iloc[0] == pytest.approx(
        ratio_teaching.kish_effective_n(5000), rel=0.005
    )


def test_kish_effective_n_is_the_closed_form_of_the_papers_weights():
    assert ratio_teaching.kish_effective_n(5000) == pytest.approx(3080.12, abs=0.01)
    assert ratio_teaching.kish_effective_n(10000) == pytest.approx(6160.24, abs=0.01)
    # The paper's Table 2 (3,082) and Table 1 at n = 10,000 (6,161) agree; Table 1's 3,032 doesn't.
    assert (
        abs(ratio_teaching.kish_effective_n(5000) - 3082)
        < 3
        < abs(ratio_teaching.kish_effective_n(5000) - 3032)
    )
    w = np.clip(np.random.default_rng(0).standard_exponential(2_000_000), 1 / 3, 3)
    assert ratio_teaching.kish_effective_n(1) == pytest.approx(
        w.mean() ** 2 / (w**2).mean(), rel=2e-3
    )


def test_ratio_figures_plot_the_sweep(ratio_sweep):
    fig = as_json(ratio_charts.ratio_coverage_figure(ratio_sweep))
    assert_accessible(fig, x_unit="log scale", y_unit="%")
    assert fig["layout"]["xaxis"]["type"] == "log"
    assert "n = 5,000 unweighted" in fig["layout"]["title"]["subtitle"]["text"]
    traces = {t["name"]: t for t in fig["data"]}
    none = ratio_sweep[ratio_sweep["method"] == "none"].sort_values("epsilon")
    np.testing.assert_allclose(values(traces["No correction"]["y"]), 100 * none["coverage"])
    assert set(values(traces["nominal 95%"]["y"])) == {95.0}
    low, high = binomial_band(0.95, 400)
    band = [t for t in fig["data"] if t["name"].startswith("simulation error band")]
    assert sorted(values(t["y"])[0] for t in band) == pytest.approx([100 * low, 100 * high])
    width = as_json(ratio_charts.ratio_width_figure(ratio_sweep))
    assert_accessible(width, x_unit="log scale", y_unit="ratio units")
    assert width["layout"]["yaxis"]["type"] == "log"
    public = next(t for t in width["data"] if t["name"].startswith("Public"))
    assert public["line"]["dash"] == "dot"


def test_ratio_summaries_state_the_numbers(ratio_sweep):
    by = ratio_sweep.set_index(["method", "epsilon"])
    text = ratio_charts.ratio_coverage_summary(ratio_sweep)
    assert f"only {100 * by.loc[('none', 0.1), 'coverage']:.3g}%" in text
    assert "ε = 0.1" in text and "nominal 95%" in text
    width = ratio_charts.ratio_width_summary(ratio_sweep)
    ratio = by.loc[("analytical", 0.1), "width"] / by.loc[("public", 0.1), "width"]
    assert f"{ratio:.3g} times the non-private" in width


# ---- Preset: the ratio paper's Table 1 ----------------------------------------------------------


@pytest.fixture(scope="module")
def table1() -> pd.DataFrame:
    from dpcore.analyses.ratio.study import load_table1, ratio_study, table1_comparison

    study = ratio_study(reps=200, B=50, rng=0, n=5000)
    return table1_comparison(study, load_table1())


def test_table1_setting_figure_puts_ours_beside_the_paper(table1):
    fig = as_json(ratio_charts.table1_setting_figure(table1, weighted=True, n=5000))
    assert_accessible(fig, x_unit="log scale", y_unit="%")
    assert "n = 5,000 weighted" in fig["layout"]["title"]["subtitle"]["text"]
    legend = [t["name"] for t in fig["data"] if t.get("showlegend", True)]
    assert "our run (solid, filled)" in legend and "the paper (dashed, open)" in legend
    assert not [name for name in legend if name.endswith(", paper")]  # one entry per method
    traces = {(t["name"], t["xaxis"]): t for t in fig["data"]}
    ours = traces[("No correction", "x")]
    paper = traces[("No correction, paper", "x")]
    rows = table1[(table1["weighted"]) & (table1["method"] == "none")].sort_values("epsilon")
    np.testing.assert_allclose(values(ours["y"]), 100 * rows["ours_coverage"])
    np.testing.assert_allclose(values(paper["y"]), [7.6, 20.5, 39.8, 86.7])
    assert paper["line"]["dash"] == "dash" and paper["marker"]["symbol"].endswith("-open")
    width = traces[("Analytical correction, paper", "x2")]
    np.testing.assert_allclose(values(width["y"]), [1.532, 0.535, 0.272, 0.101])
    assert fig["layout"]["yaxis2"]["type"] == "log"
    text = ratio_charts.table1_setting_summary(table1, weighted=True, n=5000)
    assert "n = 5,000 weighted rows" in text and "percentage points" in text


def test_table1_overview_reuses_the_ratio_pages_chart(table1):

    original = as_json(compare_charts.table1_figure(table1))
    fig = as_json(ratio_charts.table1_overview_figure(table1))
    assert_accessible(fig, x_unit="%", y_unit="%")
    assert fig["layout"]["title"]["text"] == "Table 1 rebuilt: our coverage against the paper's"
    assert fig["layout"]["legend"]["yref"] == "container"  # under the chart, not over the title
    assert [t["name"] for t in fig["data"]] == [t["name"] for t in original["data"]]
    for ours, theirs in zip(fig["data"], original["data"], strict=True):
        np.testing.assert_array_equal(values(ours["y"]), values(theirs["y"]))
