"""Figures, tables and sentences of the calibration-ratio analysis (no streamlit needed)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.ratio.intervals import RatioComparison
from dpcore.analyses.ratio.preview import ALL_GROUPS
from dpcore.foundations.metrics import binomial_band
from strata_ui import charts_common
from strata_ui.analyses.ratio import charts, compare_charts
from strata_ui.style import PALETTE

OKABE_ITO = set(PALETTE) | {charts.REFERENCE_COLOUR}
LEVEL = 0.95


def preview_frame() -> pd.DataFrame:
    """Three groups (one without an interval, one running off the axis) and the global ratio."""
    return pd.DataFrame(
        {
            "level": ["group", "group", "group", "population"],
            "group": ["Large", "Wide", "Tiny", ALL_GROUPS],
            "estimate": [1.02, 1.4, None, 1.05],
            "low": [0.98, 0.2, None, 1.0],
            "high": [1.06, 5.5, None, 1.1],
            "flag": ["", "", "noisy Σwy ≤ 0: the ratio's denominator is not positive", ""],
            "rows": [5000, 300, 40, 5340],
            "exact": [1.01, 1.2, 0.9, 1.03],
        }
    )


def simulation_frame() -> pd.DataFrame:
    rows = []
    for group, size, coverages in (
        ("Large", 5000, (0.93, 0.95, 0.951)),
        ("Small", 120, (0.4, 0.62, 0.6)),
        (ALL_GROUPS, 5120, (0.8, 0.96, 0.955)),
    ):
        for method, cov in zip(("none", "monte_carlo", "analytical"), coverages, strict=True):
            rows.append(
                {
                    "group": group, "rows": size, "method": method, "coverage": cov,
                    "width": 0.1 / cov, "median_width": 0.08 / cov, "score": 0.2 / cov,
                    "flagged": 0.3 if group == "Small" else 0.0, "reps": 1000,
                }
            )  # fmt: skip
    return pd.DataFrame(rows)


def colours(figure) -> set[str]:
    found = set()
    for trace in figure.data:
        for part in (getattr(trace, "marker", None), getattr(trace, "line", None)):
            colour = getattr(part, "color", None) if part is not None else None
            if isinstance(colour, str):
                found.add(colour)
    return found


def assert_labelled(figure) -> None:
    layout = figure.layout
    assert layout.title.text and layout.xaxis.title.text and layout.yaxis.title.text


def test_preview_error_bars_are_the_intervals_with_a_line_at_one():
    frame = preview_frame()
    fig = charts.preview_figure(
        frame, level=LEVEL, x_title=charts.ratio_axis_title("s", "y"), show_exact=True
    )
    assert_labelled(fig)
    assert "95% confidence intervals" in fig.layout.title.text
    assert fig.layout.xaxis.title.text == "Calibration ratio Σ s / Σ y (unitless; 1 = calibrated)"
    groups = next(t for t in fig.data if t.name == "Group ratio (DP)")
    np.testing.assert_allclose(np.add(groups.x, groups.error_x.array), [1.06, 5.5])
    np.testing.assert_allclose(np.subtract(groups.x, groups.error_x.arrayminus), [0.98, 0.2])
    assert list(groups.y) == ["Large (n = 5,000)", "Wide (n = 300)"]
    whole = next(t for t in fig.data if t.name == "All groups (recombined)")
    assert whole.x[0] + whole.error_x.array[0] == pytest.approx(1.1)
    [line] = [s for s in fig.layout.shapes if s.type == "line"]
    assert line.x0 == line.x1 == 1.0
    assert any(t.name == "1 = calibrated" for t in fig.data)
    notes = [a.text for a in fig.layout.annotations]
    assert "no interval: noisy Σwy ≤ 0" in notes  # the flagged group is named, not dropped
    assert "→ 5.5" in notes  # the interval running off the fitted axis says where it ends
    low, high = fig.layout.xaxis.range
    assert low <= 0.98 and 1.1 <= high < 5.5  # fitted to the estimates, 1 in view
    assert colours(fig) <= OKABE_ITO
    exact = next(t for t in fig.data if t.name == "Exact ratio (confidential)")
    assert len(exact.x) == 4
    hidden = charts.preview_figure(frame, level=LEVEL, x_title="x")  # confidential: off by default
    assert not any(t.name == "Exact ratio (confidential)" for t in hidden.data)


def test_a_large_ratio_stands_inside_a_fitted_axis():
    """An income-per-hour ratio near 1,460 was an off-chart arrow on a fixed 0–3 axis."""
    frame = preview_frame()
    frame[["estimate", "low", "high"]] = frame[["estimate", "low", "high"]].astype(float) * 1400
    low, high = charts.preview_figure(frame, level=LEVEL, x_title="x").layout.xaxis.range
    estimates = frame.loc[frame["flag"] == "", "estimate"].astype(float)
    assert low < estimates.min() and estimates.max() < high < 2 * estimates.max()


def test_preview_summary_names_the_global_ratio_and_the_groups_without_interval():
    text = charts.preview_summary(preview_frame(), level=LEVEL)
    assert text.startswith("All groups together: ratio 1.05 (95% CI 1 to 1.1).")
    assert "Every interval of the 2 groups with one includes 1" in text
    assert "1 group has no interval (Tiny)" in text and text.endswith(".")
    frame = preview_frame()
    frame.loc[0, ["low", "high"]] = [1.01, 1.03]
    assert "1 of 2 groups with an interval exclude 1 (Large above 1)" in charts.preview_summary(
        frame, level=LEVEL
    )


def test_preview_table_states_each_groups_status():
    table = charts.preview_table(preview_frame())
    assert list(table.columns) == ["Group", "Rows", "Exact ratio (confidential)", "DP estimate",
                                   "CI low", "CI high", "Width", "Status"]  # fmt: skip
    assert table["Status"].iloc[2].startswith("no interval: noisy Σwy ≤ 0")
    assert table["Width"].iloc[0] == pytest.approx(0.08)


def comparison(p_value: float, flag=None) -> RatioComparison:
    return RatioComparison(-0.2, -0.35, -0.05, -2.6, p_value, "ratio", 0.95, flag)


def test_comparison_sentence_states_difference_ci_z_p_and_verdict():
    text = charts.comparison_sentence(comparison(0.009), "A", "B", scale="ratio")
    assert text.startswith("A − B: difference of ratios -0.2 (95% CI -0.35 to -0.05), z = -2.60")
    assert "p = 0.009" in text and "calibrated differently" in text
    assert "no evidence" in charts.comparison_sentence(comparison(0.3), "A", "B", scale="ratio")
    log = charts.comparison_sentence(comparison(0.3), "A", "B", scale="log")
    assert f"ratio of ratios {math.exp(-0.2):.3g}" in log
    flagged = charts.comparison_sentence(comparison(math.nan, "ratio `b` is flagged"), "A", "B",
                                         scale="ratio")  # fmt: skip
    assert flagged.startswith("A versus B: no comparison, because ratio `b` is flagged")
    table = charts.comparison_table(comparison(0.009), "A", "B")
    assert table.iloc[0]["p-value"] == 0.009


def test_coverage_figure_has_nominal_line_band_and_one_series_per_method():
    frame = simulation_frame()
    fig = compare_charts.coverage_figure(frame, level=LEVEL, title="Coverage per group")
    assert_labelled(fig)
    named = {t.name for t in fig.data}
    assert {"No correction", "Monte Carlo correction", "Analytical correction"} <= named
    assert "nominal 95%" in named and "binomial band (1,000 releases)" in named
    [band] = [s for s in fig.layout.shapes if s.type == "rect"]
    assert (band.x0, band.x1) == pytest.approx(binomial_band(LEVEL, 1000))
    [line] = [s for s in fig.layout.shapes if s.type == "line"]
    assert line.x0 == line.x1 == LEVEL
    assert colours(fig) <= OKABE_ITO
    assert len({t.marker.symbol for t in fig.data if t.name in charts.METHOD_NAMES.values()}) == 3
    text = compare_charts.coverage_summary(frame, level=LEVEL)
    assert text.startswith("Within the band 93.6%–96.3% around the nominal 95%:")
    assert "Analytical correction 2 of 3" in text and "No correction 0 of 3" in text
    assert "Lowest corrected coverage: Small (analytical correction 60%" in text


def sweep_frame() -> pd.DataFrame:
    frames = []
    for budget in (0.1, 1.0, 4.0):
        part = simulation_frame().assign(budget=budget, composition="basic")
        part["median_width"] = part["median_width"] / budget
        frames.append(part)
        alt = part[part["method"] == "analytical"].assign(composition="zcdp")
        alt["median_width"] = alt["median_width"] / 2
        frames.append(alt)
    return pd.concat(frames, ignore_index=True)


def test_width_figure_draws_each_method_and_accounting_on_log_axes():
    sweep = sweep_frame()
    fig = compare_charts.width_figure(sweep, symbol="ε", group=ALL_GROUPS, current=1.0)
    assert_labelled(fig)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    names = [t.name for t in fig.data]
    assert "Analytical correction — zCDP accounting" in names
    assert "Analytical correction — basic composition (paper)" in names
    assert "your ε = 1" in names
    dashed = next(t for t in fig.data if t.name == "Analytical correction — zCDP accounting")
    assert dashed.line.dash == "dash"
    assert list(fig.layout.xaxis.ticktext) == ["0.1", "1", "4"]
    text = compare_charts.width_summary(sweep, symbol="ε", group=ALL_GROUPS)
    assert text.startswith(f"Median width for {ALL_GROUPS} from ε = 0.1 to ε = 4 — ")
    assert text.endswith("; zCDP accounting: analytical correction 0.419 → 0.0105.")


def test_log_ticks_are_round_numbers_covering_the_range():
    assert charts_common.log_ticks(0.03, 0.7) == [0.02, 0.05, 0.1, 0.2, 0.5, 1.0]


def test_score_figure_and_summary():
    frame = simulation_frame()
    fig = compare_charts.score_figure(frame, title="Mean interval score per group at ε = 1")
    assert_labelled(fig)
    assert fig.layout.xaxis.type == "log" and "lower is better" in fig.layout.xaxis.title.text
    assert [t.type for t in fig.data] == ["bar"] * 3
    assert colours(fig) <= OKABE_ITO
    text = compare_charts.score_summary(frame)
    assert "in 3 groups: Monte Carlo correction 2; Analytical correction 1." in text
    assert text.endswith(f"{ALL_GROUPS}: no correction 0.25, Monte Carlo correction 0.208, "
                         "analytical correction 0.209.")  # fmt: skip


def table1_comparison() -> pd.DataFrame:
    rows = []
    for weighted, epsilon in ((False, 1.0), (True, 0.2)):
        for method, paper_cov, ours_cov in (("none", 0.78, 0.8), ("analytical", 0.95, 0.94)):
            paper_width = 8.8 if weighted else 0.1
            rows.append(
                {
                    "weighted": weighted, "n": 5000, "effective_n": 3032.0, "epsilon": epsilon,
                    "composition": "basic", "method": method,
                    "ours_width": paper_width * (0.6 if weighted else 1.02),
                    "paper_width": paper_width, "ours_coverage": ours_cov,
                    "paper_coverage": paper_cov, "ours_score": 0.2, "paper_score": 0.21,
                    "flagged": 0, "reps": 1000,
                }
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_table1_figure_summary_and_table():
    comparison = table1_comparison()
    fig = compare_charts.table1_figure(comparison)
    assert "Table 1" in fig.layout.title.text
    assert fig.layout.xaxis.title.text == "Coverage in the paper's Table 1 (%)"
    assert fig.layout.yaxis.title.text == "Coverage in our run (%)"
    diagonal = fig.data[0]
    assert diagonal.name == "same as the paper" and list(diagonal.x) == list(diagonal.y)
    assert fig.layout.xaxis2.range == (0.9, 1.0)  # the zoom panel
    text = compare_charts.table1_summary(comparison)
    assert text.startswith(
        "Coverage agrees within 1.0 percentage points for the public and corrected intervals;"
    )
    assert "except in 2 cells (weighted ε = 0.2)" in text
    table = compare_charts.table1_display(comparison)
    assert {"Coverage (ours)", "Coverage (paper)", "Width (ours)", "Width (paper)"} <= set(table)
    assert list(table["Method"].unique()) == ["No correction", "Analytical correction"]
