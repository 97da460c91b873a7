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


def test_a_release_that_found_its_bounds_is_charted_within_them_not_the_search_range(tmp_path):
    """The search range [0, 1000] squashed every mean of hours near the bottom of the chart;
    the axis is fitted to the estimates within the range the release found (its rows'
    clip_low and clip_high, DP outputs)."""
    from dpcore import load_demo_dataset
    from dpcore.analyses.mean import MEAN, MeanSettings
    from dpcore.foundations.accounting import PureDP
    from dpcore.foundations.grouping import GroupingSpec
    from dpcore.foundations.ledger import Ledger
    from dpcore.release import PlanHeader, release
    from strata_ui.charts_release import release_figure

    frame, dataset = load_demo_dataset()
    spec = GroupingSpec(by=("sex",))
    settings = MeanSettings(clip_high=1000, bounds_source="private", n_public=True)
    plan = MEAN.plan(MEAN.statistics(frame, spec.build(frame), settings), settings,
                     PlanHeader(dataset, spec, PureDP(1.0)))  # fmt: skip
    record = release(plan, Ledger(tmp_path / "l.sqlite", "default", PureDP(2.0)),
                     noise="simulation", rng=0)  # fmt: skip
    low, high = release_figure(record).layout.yaxis.range
    found_low = min(r["clip_low"] for r in record.outputs)
    found_high = max(r["clip_high"] for r in record.outputs)
    estimates = [r["estimate"] for r in record.outputs]
    # Fitted to the estimates (issue 37), within the range found (never the search range).
    assert found_low <= low < min(estimates) and max(estimates) < high <= found_high
    assert 0 <= low < 40 < high < 200  # hours per week, not the search range's 1000
