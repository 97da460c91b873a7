"""Figures and summaries of the synthetic-data views (strata_ui.analyses.synth.charts)."""

from __future__ import annotations

import pandas as pd
import pytest

from dpcore.analyses.synth.workload import sweep_metrics
from strata_ui.analyses.synth import charts
from strata_ui.group_selection import select_from_table
from strata_ui.style import PALETTE

# Errors per group: the small group does worse stratified at ε = 1 and better at ε = 10.
GROUP_ERRORS = {
    # (ε, strategy): (small, large)
    (1.0, "stratified"): (1.5, 0.2),
    (1.0, "vanilla"): (1.1, 0.3),
    (10.0, "stratified"): (0.4, 0.05),
    (10.0, "vanilla"): (0.9, 0.1),
}
SIZES = {"Other × Female": 109, "White × Male": 19_174}


def errors_frame(runs: int = 2) -> pd.DataFrame:
    """A :func:`dpcore.analyses.synth.sweep_errors`-shaped frame; runs differ by ±0.05."""
    rows = []
    for (epsilon, strategy), values in GROUP_ERRORS.items():
        for run in range(runs):
            wobble = 0.05 * (run - (runs - 1) / 2)
            for (group, size), value in zip(SIZES.items(), values, strict=True):
                rows.append((epsilon, strategy, run, "group", group, size, value + wobble))
            overall = min(values) / 2 + wobble
            rows.append((epsilon, strategy, run, "population", "All", sum(SIZES.values()), overall))
    return pd.DataFrame(
        rows, columns=["epsilon", "strategy", "run", "level", "group", "size", "error"]
    )


@pytest.fixture
def errors() -> pd.DataFrame:
    return errors_frame()


def test_group_table_orders_groups_by_size_and_summarises_runs(errors):
    table = charts.group_table(errors, 1.0)
    assert list(table["group"].unique()) == ["Other × Female", "White × Male"]
    row = table[(table["group"] == "Other × Female") & (table["strategy"] == "stratified")].iloc[0]
    assert row["mean"] == pytest.approx(1.5)
    assert (row["low"], row["high"]) == pytest.approx((1.475, 1.525))
    assert row["runs"] == 2 and row["size"] == 109


def test_group_error_figure_is_labelled_coloured_and_ordered(errors):
    fig = charts.group_error_figure(errors, 1.0)
    layout = fig.layout
    assert layout.title.text == (
        "3-way error in each group at ε = 1: mean of 2 runs, bars from lowest to highest"
    )
    assert layout.xaxis.title.text.startswith("Group, smallest to largest")
    assert layout.yaxis.title.text == "3-way error (0 = exact, 2 = disjoint)"
    assert [t.name for t in fig.data] == ["One model per group", "One model for everyone"]
    assert [t.marker.color for t in fig.data] == [PALETTE[0], PALETTE[1]]
    assert list(fig.data[0].x) == ["Other × Female", "White × Male"]
    assert list(layout.xaxis.ticktext) == [
        "Other<br>× Female<br>n = 109",
        "White<br>× Male<br>n = 19,174",
    ]
    assert list(fig.data[0].error_y.array) == pytest.approx([0.025, 0.025])


def test_group_summary_says_plainly_when_stratification_does_worse(errors):
    text = charts.group_error_summary(errors, 1.0)
    assert text == (
        "At ε = 1, one model per group has the lower error in 1 of 2 groups and the higher in 1; "
        "for the smallest group (Other × Female, n = 109) it scores 1.5 against 1.1 for one model "
        "for everyone: "
        "stratification does worse for it."
    )
    assert charts.group_error_summary(errors, 10.0).endswith("stratification helps it.")


def test_sweep_figure_draws_a_band_and_a_line_per_strategy_and_marks_the_budget(errors):
    metrics = sweep_metrics(errors)
    fig = charts.sweep_figure(metrics, "worst group", current=1.0)
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    assert [t.name for t in lines] == ["One model per group", "One model for everyone"]
    assert [t.line.color for t in lines] == [PALETTE[0], PALETTE[1]]
    assert list(lines[0].x) == [1.0, 10.0]
    assert list(lines[0].y) == pytest.approx([1.5, 0.4])
    bands = [t for t in fig.data if t.fill == "tonexty"]
    assert len(bands) == 2
    marker = fig.data[-1]
    assert marker.name == "your ε = 1" and list(marker.x) == [1.0, 1.0]
    assert fig.layout.xaxis.type == "log"
    assert (
        fig.layout.title.text == "Worst-group 3-way error as ε grows (band: lowest to highest run)"
    )
    assert fig.layout.xaxis.title.text == "Privacy budget ε (pure DP, log scale)"
    assert fig.layout.yaxis.title.text == "3-way error (0 = exact, 2 = disjoint)"
    parity = charts.sweep_figure(metrics, "parity")
    assert parity.layout.yaxis.title.text == "Parity error (lower is fairer)"


def test_sweep_summary_names_where_stratified_is_lower_and_higher(errors):
    metrics = sweep_metrics(errors)
    assert charts.sweep_summary(metrics, "worst group", current=1.0) == (
        "Worst-group 3-way error: one model per group is lower than one for everyone at ε = 10 but "
        "higher (worse) at ε = 1; at ε = 1, 1.5 per group against 1.1 for everyone."
    )
    # Parity: (overall / 2 + mean group error); stratified is lower only at ε = 10.
    assert "higher (worse) at ε = 1" in charts.sweep_summary(metrics, "parity")
    better = errors.copy()
    better.loc[better["strategy"] == "stratified", "error"] -= 1.0
    assert charts.sweep_summary(sweep_metrics(better), "overall") == (
        "3-way error on all rows: one model per group is lower than one for everyone at every ε "
        "simulated."
    )
    worse = errors.copy()
    worse.loc[worse["strategy"] == "stratified", "error"] += 1.0
    assert "higher (worse) than one for everyone at every ε simulated" in charts.sweep_summary(
        sweep_metrics(worse), "overall"
    )


def test_nearest_epsilon_is_taken_on_a_log_scale(errors):
    assert charts.nearest_epsilon(errors, 2.9) == 1.0
    assert charts.nearest_epsilon(errors, 3.3) == 10.0


def test_category_figure_and_summary_describe_the_synthetic_rows():
    rows = pd.DataFrame({"sex": ["Male"] * 3 + ["Female"], "race": ["White"] * 4})
    fig = charts.category_figure(rows, "sex")
    assert fig.layout.title.text == "Share of synthetic rows in each category of sex"
    assert fig.layout.xaxis.title.text == "sex (category)"
    assert fig.layout.yaxis.title.text == "Share of synthetic rows (%)"
    assert list(fig.data[0].x) == ["Female", "Male"]
    assert list(fig.data[0].y) == pytest.approx([25.0, 75.0])
    assert fig.data[0].marker.color == PALETTE[0]
    assert charts.category_summary(rows, "sex") == (
        "In these 4 synthetic rows the most common sex is “Male” (75%) and the least common "
        "“Female” (25%)."
    )


def test_many_groups_draw_the_smallest_and_worst_in_sections():
    labels = [f"Region {i:02d} × Sex {i % 2}" for i in range(40)]
    rows = [
        (1.0, strategy, run, "group", label, 10 + i, scale * (1 + i % 7) + 0.01 * run)
        for i, label in enumerate(labels)
        for strategy, scale in (("stratified", 0.1), ("vanilla", 0.05))
        for run in range(2)
    ]
    frame = pd.DataFrame(
        rows, columns=["epsilon", "strategy", "run", "level", "group", "size", "error"]
    )
    selection = select_from_table(charts.group_table(frame, 1.0))
    fig = charts.many_groups_figure(frame, 1.0, selection)
    assert fig.layout.title.text == (
        f"3-way error in {len(selection.shown)} of the 40 groups at ε = 1: mean of 2 runs"
    )
    assert [a.text for a in fig.layout.annotations] == [
        "The 10 smallest of 40 groups",
        "The 10 groups with the largest errors",
    ]
    assert list(fig.data[0].y) == labels[:10]  # sizes 10, 11, …
    assert all(i % 7 == 6 for i in map(labels.index, fig.data[2].y[:5]))  # error 0.7 ranks first
    assert [t.name for t in fig.data] == ["One model per group", "One model for everyone"] * 2
    assert list(fig.data[0].error_x.array) == pytest.approx([0.005] * 10)  # highest run − mean
