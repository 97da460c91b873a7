"""The Plan page's charts: log axes labelled with their values, all at one size."""

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from strata_ui.charts_common import log_axis
from strata_ui.charts_planner import (
    frontier_chart,
    frontier_summary,
    needed_budget_chart,
    needed_budget_summary,
)


@pytest.mark.parametrize(
    ("values", "ticks"),
    [
        ([0.0076, 1.37], [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2]),  # 1-2-5
        ([1e-4, 0.5, 100], [1e-4, 1e-3, 0.01, 0.1, 1, 10, 100]),  # too many: decades only
        ([3.1, 3.5, 4.4], [3, 4, 5]),  # within a decade: every digit
        ([0.004, np.nan, 0.011, 0.0, -1.0], [0.002, 0.005, 0.01, 0.02]),  # not positive: skipped
    ],
)
def test_log_axis_ticks_run_over_the_values_with_readable_labels(values, ticks):
    axis = log_axis(values)
    assert axis["type"] == "log"
    np.testing.assert_allclose(axis["tickvals"], ticks)
    assert axis["ticktext"] == [f"{t:g}" for t in ticks]
    positive = [v for v in values if np.isfinite(v) and v > 0]
    assert axis["tickvals"][0] <= min(positive) and axis["tickvals"][-1] >= max(positive)


def test_log_axis_labels_money_in_plain_notation_with_separators():
    axis = log_axis([3_000, 150_000, 2_400_000])
    assert axis["ticktext"] == ["1,000", "10,000", "100,000", "1,000,000", "10,000,000"]


def test_log_axis_without_a_positive_value_leaves_the_ticks_to_plotly():
    assert log_axis([0.0, np.nan]) == {"type": "log"}


def test_planner_charts_label_their_log_axes():
    table = pd.DataFrame(
        {"estimate": ["A", "B", "Whole population"], "needed ε": [0.02, 1.4, 0.007]}
    )
    bars = go.Figure(needed_budget_chart(table, "ε", "B"))
    assert list(bars.layout.xaxis.ticktext) == ["0.005", "0.01", "0.02", "0.05", "0.1", "0.2",
                                                "0.5", "1", "2"]  # fmt: skip
    candidates = pd.DataFrame(
        {
            "label": ["race", "sex", "race × sex"], "strategy_name": ["One per group"] * 3,
            "global_error": [0.004, 0.006, 0.011], "worst_group_error": [0.05, 0.011, 2.1],
            "pareto": [True, True, False], "skipped": ["", "", ""],
        }
    )  # fmt: skip
    front = go.Figure(frontier_chart(candidates, "hours"))
    assert front.layout.xaxis.type == front.layout.yaxis.type == "log"
    assert list(front.layout.xaxis.ticktext) == ["0.002", "0.005", "0.01", "0.02"]
    assert list(front.layout.yaxis.ticktext) == ["0.01", "0.02", "0.05", "0.1", "0.2", "0.5",
                                                 "1", "2", "5"]  # fmt: skip


def test_the_needed_budget_chart_is_said_in_words():
    table = pd.DataFrame({"estimate": ["a", "b", "Whole population"], "needed ε": [0.2, 1.5, 0.1]})
    assert needed_budget_summary(table, "ε", "b") == (
        "The chart: b needs ε = 1.5, the most, so it sets the answer; Whole population needs the "
        "least, ε = 0.1."
    )


def test_the_frontier_chart_is_said_in_words():
    table = pd.DataFrame({
        "label": ["race: one estimate per group", "sex: one estimate per group", "everyone"],
        "global_error": [0.2, 0.1, 0.05], "worst_group_error": [1.0, 3.0, 5.0],
        "pareto": [True, True, False], "skipped": ["", "", ""],
    })  # fmt: skip
    said = frontier_summary(table).replace("\\", "")  # labels are escaped for markdown
    assert said == (
        "The chart: 3 choices scored, 2 on the frontier. Lowest population error: sex: one "
        "estimate per group (0.1); lowest worst-group error: race: one estimate per group (1)."
    )
