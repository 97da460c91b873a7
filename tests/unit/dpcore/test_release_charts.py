"""The release's charts: the budget gauge and the figure of estimates with their intervals."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dpcore.release.commit import release
from strata_ui import charts_release
from tests.unit.dpcore.release_helpers import make_plan


@pytest.mark.parametrize("left, total", [(0.5, 1.0), (2.0, 8.0)])
def test_budget_gauge_shows_what_is_left_on_a_zero_to_total_scale(left, total):
    indicator = charts_release.budget_gauge(left, total, "ρ", "survey").data[0]
    assert indicator.value == left
    assert tuple(indicator.gauge.axis.range) == (0, total)
    assert [tuple(s.range) for s in indicator.gauge.steps] == [
        (0.0, 0.1 * total),
        (0.1 * total, total),
    ]
    assert indicator.title.text == "ρ left in ledger<br>“survey”"


def test_budget_gauge_wraps_a_long_ledger_name_rather_than_cut_it():
    name = "Income survey 2026, second wave, regions and municipalities"
    title = charts_release.budget_gauge(1.0, 2.0, "ρ", name).data[0].title.text
    lines = title.split("<br>")
    assert lines[0] == "ρ left in ledger" and all(len(line) <= 34 for line in lines)
    assert " ".join(lines[1:]) == f"“{name}”"


def test_release_figure_draws_each_estimate_with_its_interval(demo_record):
    fig = charts_release.release_figure(demo_record)
    assert fig.layout.title.text == "Hours <b>by</b> group — DP estimates with 95% intervals"
    assert fig.layout.xaxis.title.text == "Group"
    assert fig.layout.yaxis.title.text == "Mean of hours_per_week"
    assert [t.name for t in fig.data] == ["group estimate", "whole population"]
    frame = demo_record.frame
    for trace, part in zip(fig.data, (frame.iloc[:-1], frame.iloc[-1:]), strict=True):
        assert len(trace.x) == len(part)
        np.testing.assert_allclose(trace.y, part["estimate"])
        np.testing.assert_allclose(trace.error_y.array, part["high"] - part["estimate"])
        np.testing.assert_allclose(trace.error_y.arrayminus, part["estimate"] - part["low"])
        assert trace.error_y.symmetric is False


def test_release_figure_value_axis_fits_the_estimates_within_the_public_range(demo_record):
    """Issue 37: the axis spans the estimates and their typical interval, inside the bounds
    [L, U] but not pinned to them (a bound of 250,000 flattened every estimate); a release
    without a public pair of bounds (a ratio) spans its estimates alone."""
    frame = demo_record.frame
    low_bound, high_bound = demo_record.metadata["plan"]["estimator"]["bounds"]
    low, high = charts_release.release_figure(demo_record).layout.yaxis.range
    assert (
        low_bound <= low < frame["estimate"].min() and frame["estimate"].max() < high <= high_bound
    )
    assert high - low < (high_bound - low_bound) / 2  # fitted, not the range
    ratio_like = dataclasses.replace(
        demo_record, metadata={**demo_record.metadata, "plan": {
            **demo_record.metadata["plan"], "estimator": {"bounds": {"s": 1.0, "y": 1.0}}}},
    )  # fmt: skip
    low, high = charts_release.release_figure(ratio_like).layout.yaxis.range
    assert low < frame["estimate"].min() and frame["estimate"].max() < high


def test_one_wide_interval_runs_off_the_axis_instead_of_squashing_the_others(demo_record):
    outputs = [dict(row) for row in demo_record.outputs]
    outputs[0] |= {"low": 0.0, "high": 100.0}  # a tiny group's interval over the whole range
    wide = dataclasses.replace(demo_record, outputs=outputs)
    fig = charts_release.release_figure(wide)
    low, high = fig.layout.yaxis.range
    assert high - low < 50
    # The cut bar's ends are written at the edges it crosses, not left to read as endless.
    marks = {a.text for a in fig.layout.annotations}
    assert {"↑ 100", "↓ 0"} <= marks, marks


def test_a_release_of_many_groups_lists_one_per_row_with_whole_labels(demo, ledger):
    """Turned upright, the labels of 17 groups ran into each other (a browser tester's chart)."""
    record = release(make_plan(demo, by=("education",)), ledger, noise="simulation", rng=13)
    fig = charts_release.release_figure(record)
    groups, population = fig.data
    frame = record.frame
    assert len(frame) > charts_release.MAX_UPRIGHT_GROUPS
    assert [label.replace("<br>", " ") for label in groups.y] == frame["group"].iloc[:-1].tolist()
    np.testing.assert_allclose(groups.x, frame["estimate"].iloc[:-1])
    np.testing.assert_allclose(groups.error_x.array, (frame["high"] - frame["estimate"]).iloc[:-1])
    assert list(population.y) == ["All"]
    assert fig.layout.yaxis.autorange == "reversed"  # the first group on top
    low, high = fig.layout.xaxis.range
    assert low <= frame["estimate"].min() and frame["estimate"].max() <= high
    assert fig.layout.height >= 28 * len(frame)


def test_release_figure_of_a_population_only_release_has_one_point(demo, ledger):
    plan = make_plan(demo, strategy="global_only")
    fig = charts_release.release_figure(release(plan, ledger, noise="simulation", rng=12))
    assert [t.name for t in fig.data] == ["whole population"]
    assert list(fig.data[0].x) == ["All"]
