"""Figures and summaries of the general estimator (GVDP): labelled, Okabe–Ito, honest."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.gvdp.data import prepare_data
from dpcore.analyses.gvdp.diagnostics import blb_diagnostic, coverage_frame
from dpcore.analyses.gvdp.estimator import GVDPCoverage, nonprivate_ci
from dpcore.analyses.gvdp.groups import (
    ALL,
    DP,
    NON_PRIVATE,
    RunSettings,
    comparison_frame,
    groups_frame,
    nonprivate,
    run_groups,
    run_population,
)
from dpcore.analyses.gvdp.model import GvdpBoundsSpec, GvdpModel
from dpcore.analyses.gvdp.plan import GvdpPlan
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.ledger import Ledger
from dpcore.release import DatasetRef, PlanHeader, release
from strata_ui.analyses.gvdp import charts
from strata_ui.style import PALETTE
from tests.unit.dpcore.analyses.gvdp.test_plan import OLS, OLS_BOUNDS, SPEC, survey

SETTINGS = RunSettings(k=60, rho=0.5)


@pytest.fixture(scope="module")
def data():
    source = survey()
    return prepare_data(source, OLS, SPEC.build(source))


@pytest.fixture(scope="module")
def comparison(data) -> pd.DataFrame:
    result = run_population(data, OLS_BOUNDS, SETTINGS, rng=0)
    return comparison_frame(OLS, result, nonprivate_ci(data.population, "ols"))


@pytest.fixture(scope="module")
def groups(data) -> pd.DataFrame:
    grouped = run_groups(data, OLS_BOUNDS, SETTINGS, rng=0)
    return groups_frame(OLS, grouped, nonprivate(data), data.group_rows)


@pytest.fixture(scope="module")
def diagnostic(data):
    return blb_diagnostic(data, OLS_BOUNDS, SETTINGS, (15, 60, 1000), rng=0)


def assert_labelled(figure, axes=("xaxis", "yaxis")) -> None:
    layout = figure.to_plotly_json()["layout"]
    assert layout["title"]["text"]
    assert layout["font"]["family"] == "sans-serif"
    for axis in axes:
        assert layout[axis]["title"]["text"], axis


def test_units_name_what_a_coefficient_measures():
    assert charts.coefficient_unit("mean", "hours", "hours") == "Mean of hours (units of hours)"
    assert charts.coefficient_unit("ols", "hours", "age") == "Change in hours per unit of age"
    assert "when every covariate is 0" in charts.coefficient_unit("ols", "hours", "intercept")
    assert charts.coefficient_unit("logistic", "y", "age").startswith("Change in log-odds of y")
    assert charts.coefficient_units("logistic", "y", "age") == "log-odds per unit of age"
    assert charts.coefficient_units("ols", "hours", "intercept") == "hours"


def test_comparison_figure_has_one_panel_per_coefficient(comparison):
    figure = charts.comparison_figure(comparison, kind="ols", outcome="hours", level=0.95)
    assert_labelled(figure, ("xaxis", "yaxis", "xaxis2", "yaxis2", "xaxis3", "yaxis3"))
    traces = figure.data
    assert len(traces) == 2 * 3
    assert [t.name for t in traces[:2]] == [DP, NON_PRIVATE]
    assert [t.marker.color for t in traces[:2]] == [PALETTE[0], PALETTE[1]]
    assert sum(bool(t.showlegend) for t in traces) == 2  # one legend entry per method
    titles = [a.text for a in figure.layout.annotations]
    assert titles == ["intercept", "age", "union"]
    assert figure.layout.yaxis2.title.text.replace("<br>", " ") == "Change in hours per unit of age"
    dp_age = comparison[(comparison["coefficient"] == "age") & (comparison["method"] == DP)]
    np.testing.assert_allclose(
        traces[2].error_y.array, dp_age["high"].to_numpy() - dp_age["estimate"].to_numpy()
    )


def test_comparison_summary_gives_width_ratios_and_overlap(comparison):
    text = charts.comparison_summary(comparison)
    assert text.startswith("The DP intervals are ")
    assert all(f"× for {c}" in text for c in OLS.coefficients)
    assert "every DP interval overlaps its non-private interval" in text
    apart = comparison.copy()
    apart.loc[apart["method"] == DP, ["estimate", "low", "high"]] += 1e6
    assert "do not overlap for intercept, age, union" in charts.comparison_summary(apart)


def test_group_figure_orders_groups_and_marks_estimates_beyond_the_axis(groups):
    unit = charts.coefficient_unit("ols", "hours", "age")
    figure = charts.group_figure(groups, "age", unit=unit, level=0.95)
    assert_labelled(figure)
    assert list(figure.layout.xaxis.categoryarray) == ["east", "south", "north", ALL]
    assert figure.layout.xaxis.ticktext[0] == "east<br>n = 300<br>k = 6"
    assert figure.layout.xaxis.ticktext[-1] == "All<br>(recombined)"
    assert [t.name for t in figure.data] == [DP, NON_PRIVATE]
    assert figure.data[0].marker.color[-1] == charts.RECOMBINED_COLOUR
    assert figure.layout.yaxis.range is None

    far = groups.copy()
    age = far["coefficient"] == "age"
    far.loc[age & (far["method"] == DP), ["estimate", "low", "high"]] = [0.2, 0.1, 0.3]
    far.loc[age & (far["method"] == DP) & (far["group"] == "east"), "estimate"] = 40.0
    far.loc[age & (far["method"] == DP) & (far["group"] == "south"), "estimate"] = -9.0
    figure = charts.group_figure(far, "age", unit=unit, level=0.95, y_range=(-5.0, 5.0))
    assert list(figure.layout.yaxis.range) == [-5.0, 5.0]
    beyond = figure.data[-1]
    assert beyond.name == f"{DP} estimate beyond the axis"
    assert list(beyond.x) == ["east", "south"] and list(beyond.y) == [5.0, -5.0]
    assert list(beyond.marker.symbol) == ["triangle-up", "triangle-down"]
    assert list(beyond.customdata) == [40.0, -9.0]
    assert beyond.offsetgroup == figure.data[0].offsetgroup == DP


def test_width_figure_is_on_a_log_axis(groups):
    figure = charts.group_width_figure(groups, "union", unit="hours per unit of union")
    assert_labelled(figure)
    assert figure.layout.yaxis.type == "log"
    assert "hours per unit of union" in figure.layout.yaxis.title.text
    dp = groups[(groups["coefficient"] == "union") & (groups["method"] == DP)]
    dp = dp[dp["level"] == "group"].set_index("group")
    np.testing.assert_allclose(
        figure.data[0].y, (dp["high"] - dp["low"]).loc[["east", "south", "north"]]
    )


def test_group_estimates_summary_counts_groups_and_gives_the_recombination(groups):
    text = charts.group_estimates_summary(groups, "age", level=0.95)
    assert text.startswith("3 of 3 group DP intervals contain the group's non-private estimate")
    assert "Recombined over the groups: " in text and "without privacy." in text
    moved = groups.copy()
    moved.loc[(moved["method"] == DP) & (moved["group"] == "east"), ["low", "high"]] = 1e6
    assert charts.group_estimates_summary(moved, "age", level=0.95).startswith("2 of 3")


def test_group_summary_names_the_smallest_and_largest_group(groups):
    text = charts.group_summary(groups, "age")
    assert text.startswith("Smallest group (east, n = 300, k = 6): DP interval ")
    assert "largest (north, n = 1,800, k = 36)" in text
    assert "Recombined:" in text


def coverage_example(misses: int) -> pd.DataFrame:
    R = 50
    low, high = -np.ones((R, 2)), np.ones((R, 2))
    high[:misses, 1] = -0.5
    coverage = GVDPCoverage(np.zeros(2), np.zeros((R, 2)), low, high, np.ones((R, 2)), 0.95)
    return coverage_frame(coverage, ("intercept", "age"))


def test_coverage_figure_draws_the_band_nominal_and_observed_points():
    frame = coverage_example(misses=2)
    figure = charts.coverage_figure(frame, title="Coverage")
    assert_labelled(figure)
    band, nominal = figure.layout.shapes
    assert band.y0 == pytest.approx(100 * frame["band_low"].iloc[0]) and band.y1 == 100
    assert nominal.y0 == nominal.y1 == 95
    [points] = figure.data
    np.testing.assert_allclose(points.y, [100, 96])
    assert points.marker.color == PALETTE[0]


def test_coverage_summary_flags_coverage_below_the_band():
    assert "all inside or above the band" in charts.coverage_summary(coverage_example(2), "θ")
    text = charts.coverage_summary(coverage_example(12), "the truth")
    assert text.startswith("Over R = 50 replications the DP intervals covered the truth 100% for")
    assert "below the band for age" in text


def test_k_diagnostic_figure_has_violins_per_k_and_reference_lines(diagnostic, data):
    reference = nonprivate_ci(data.population, "ols")
    j = OLS.coefficients.index("age")
    options = {"reference_estimate": reference.estimate[j],
               "reference_se": float(np.sqrt(reference.variance[j])), "chosen_k": 60}  # fmt: skip
    figure = charts.k_diagnostic_figure(diagnostic.frame, "age", unit="hours per unit", **options)
    assert_labelled(figure, ("xaxis", "yaxis", "xaxis2", "yaxis2"))
    violins = [t for t in figure.data if t.type == "violin"]
    assert len(violins) == 2 * 2  # two k values that ran, two panels
    colours = {t.name: t.line.color for t in violins}
    assert colours["k = 60, b = 50"] == PALETTE[0] and colours["k = 15, b = 200"] == PALETTE[4]
    assert "non-private curator diagnostic" in figure.layout.title.text
    lines = figure.layout.shapes
    assert lines[0].y0 == pytest.approx(reference.estimate[j]) and lines[1].y0 == 1.0
    text = charts.k_diagnostic_summary(diagnostic.frame, "age", failed=diagnostic.failed, **options)
    assert "k = 60 (in use): centre" in text and "could not run at k = 1,000" in text


def test_release_figure_has_a_panel_per_coefficient(tmp_path):
    frame = survey()
    header = PlanHeader(
        dataset=DatasetRef.of(frame, "survey.csv"), spec=GroupingSpec(by=("region",)),
        budget=ZCDP(0.5),
    )  # fmt: skip
    plan = GvdpPlan.build(
        frame, header=header, model=GvdpModel("ols", "hours", ("age",)),
        bounds=GvdpBoundsSpec("box", ("intercept", "age"), spread=(200.0, 5.0),
                              low=(-100.0, -5.0), high=(200.0, 5.0)),
        k=60,
    )  # fmt: skip
    record = release(plan, Ledger(tmp_path / "l.sqlite", "t", ZCDP(1.0)), noise="simulation")
    figure = charts.release_figure(record)
    assert_labelled(figure, ("xaxis2", "yaxis", "yaxis2"))
    assert [a.text for a in figure.layout.annotations] == ["intercept", "age"]
    assert {t.name for t in figure.data} == {"group estimate", "whole population"}
    assert "95% GVDP intervals" in figure.layout.title.text
    # Each panel spans its coefficient's public range, whatever the intervals (issue 13).
    assert list(figure.layout.yaxis.range) == [-100.0, 200.0]
    assert list(figure.layout.yaxis2.range) == [-5.0, 5.0]
    assert record.frame["flag"].str.startswith("withheld").any()  # drawn without a point
