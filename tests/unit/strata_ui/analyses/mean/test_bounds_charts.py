"""The figure and sentence of what the bounds cost, typed beside found privately."""

import pandas as pd

from strata_ui.analyses.mean.bounds_charts import bounds_cost_figure, bounds_cost_summary


def costs() -> pd.DataFrame:
    rows = []
    for method, low, high, bias, noise in (
        ("typed", 0, 1000, 0.0, 10.0),
        ("found", 5, 90, -0.1, 1.0),
    ):
        for group, size, scale in (("big", 900, 0.1), ("small", 100, 1.0)):
            rows.append({"group": group, "size": size, "method": method, "low": low, "high": high,
                         "bias": bias, "noise": noise * scale,
                         "rmse": (bias**2 + (noise * scale) ** 2) ** 0.5})  # fmt: skip
    return pd.DataFrame(rows)


def test_one_bar_per_group_and_way_smallest_group_first_with_bias_and_noise_in_the_hover():
    figure = bounds_cost_figure(costs())
    typed, found = figure["data"]
    assert typed["name"] == "Typed range [0, 1000]"
    assert found["name"] == "Found privately (median [5, 90])"
    assert typed["x"] == ["small", "big"] and typed["y"] == [10.0, 1.0]
    assert found["customdata"][0] == [-0.1, 1.0, 100]  # bias, noise, size of the smallest
    assert figure["layout"]["yaxis"]["type"] == "log"


def test_the_summary_names_the_smallest_group_and_the_largest_bias():
    text = bounds_cost_summary(costs())
    assert "**small**" in text and "10" in text and "-0.1" in text
