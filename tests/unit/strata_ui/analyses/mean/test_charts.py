"""Unit tests of the Compare page's figure builders (no streamlit involved)."""

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from dpcore.analyses.mean.simulate import summarize_sweep
from strata_ui.analyses.mean import charts
from strata_ui.group_selection import select_from_table

STRATEGIES = ("stratified", "global_only")


@pytest.fixture
def metrics() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    frames = {
        s: pd.DataFrame(
            {
                "replicate": np.arange(200),
                "global": rng.exponential(scale, 200),
                "worst group": rng.exponential(10 * scale, 200),
                "parity": rng.exponential(2 * scale, 200),
                "global_abs": rng.exponential(40 * scale, 200),
            }
        )
        for s, scale in zip(STRATEGIES, (0.01, 0.02), strict=True)
    }
    return charts.stack(frames)


@pytest.fixture
def groups() -> pd.DataFrame:
    base = pd.DataFrame(
        {"group": ["big", "small", "mid"], "size": [1000, 10, 100], "mean": [0.01, 0.2, 0.05]}
    )
    frames = {}
    for i, s in enumerate(STRATEGIES):
        frame = base.assign(mean=base["mean"] * (i + 1))
        frames[s] = frame.assign(
            q05=frame["mean"] / 2, q95=frame["mean"] * 2, abs_mean=frame["mean"] * 40
        )
    return charts.stack(frames)


def test_distributions_have_one_panel_per_error_and_one_box_per_strategy_in_percent(metrics):
    fig = go.Figure(charts.distributions_figure(metrics, ("global", "parity"), title="T"))
    names = ["One estimate per group", "One estimate for everyone"]
    assert [t.name for t in fig.data] == 2 * names
    assert [t.marker.color for t in fig.data] == 2 * list(charts.PALETTE[:2])
    assert [t.xaxis for t in fig.data] == ["x", "x", "x2", "x2"]
    np.testing.assert_allclose(fig.data[0].x, 100 * metrics.loc[:199, "global"])
    np.testing.assert_allclose(fig.data[3].x, 100 * metrics.loc[200:, "parity"])
    assert fig.layout.title.text == "T"
    assert "population mean" in fig.layout.xaxis.title.text
    assert "Parity error" in fig.layout.xaxis2.title.text
    # Side by side without overlap, the strategies named once, on the left panel's axis.
    assert fig.layout.xaxis.domain[1] < fig.layout.xaxis2.domain[0]
    assert fig.layout.yaxis2.matches == "y" and fig.layout.yaxis2.showticklabels is False


def test_distribution_summary_states_each_median(metrics):
    text = charts.distribution_summary(metrics, "parity")
    for s in STRATEGIES:
        median = np.median(metrics.loc[metrics["strategy"] == s, "parity"])
        assert f"{100 * median:.3g}%" in text
    assert text.startswith("Median parity error — One estimate per group:")


def test_population_error_summary_is_also_in_the_values_units(metrics):
    text = charts.distribution_summary(metrics, "global", "hours")
    for s in STRATEGIES:
        rows = metrics[metrics["strategy"] == s]
        relative, absolute = np.median(rows["global"]), np.median(rows["global_abs"])
        assert f"{100 * relative:.3g}% (±{absolute:.3g} hours)" in text
    assert "hours" not in charts.distribution_summary(metrics, "parity", "hours")


def test_group_figure_orders_by_size_with_asymmetric_bars_and_log_toggle(groups):
    fig = go.Figure(charts.group_error_figure(groups))
    assert len(fig.data) == 2
    assert list(fig.data[0].x) == ["small", "mid", "big"]
    assert list(fig.layout.xaxis.categoryarray) == ["small", "mid", "big"]
    np.testing.assert_allclose(fig.data[0].y, [20, 5, 1])
    np.testing.assert_allclose(fig.data[0].error_y.array, [20, 5, 1])  # q95 − mean
    np.testing.assert_allclose(fig.data[0].error_y.arrayminus, [10, 2.5, 0.5])  # mean − q05
    assert fig.data[0].customdata[0][0] == 10  # size in hover
    assert fig.data[0].customdata[0][3] == pytest.approx(8.0)  # error in the value's units
    assert fig.layout.yaxis.type == "linear"
    log_y = go.Figure(charts.group_error_figure(groups, log_y=True)).layout.yaxis
    assert log_y.type == "log"
    assert list(log_y.ticktext) == ["0.5", "1", "2", "5", "10", "20", "50", "100"]  # each its value
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text


def test_group_summary_names_smallest_and_largest_in_percent_and_units(groups):
    text = charts.group_error_summary(groups, "hours")
    assert (
        "small, n = 10): One estimate per group 20% (±8 hours), One estimate for everyone 40% "
        "(±16 hours)" in text
    )
    assert "big, n = 1,000): One estimate per group 1% (±0.4 hours)" in text


def test_sweep_has_a_band_and_a_line_per_strategy(metrics):
    runs = [
        (value, s, metrics[metrics["strategy"] == s].assign(parity=lambda f, v=value: f.parity / v))
        for value in (0.1, 1.0, 10.0)
        for s in STRATEGIES
    ]
    sweep = summarize_sweep(runs)
    assert len(sweep) == 3 * 2 * 3
    assert (sweep["q05"] <= sweep["mean"]).all() and (sweep["mean"] <= sweep["q95"]).all()
    fig = go.Figure(charts.sweep_figure(sweep, "parity"))
    assert len(fig.data) == 6  # band, band, line per strategy
    upper, lower, line = fig.data[:3]
    assert lower.fill == "tonexty" and upper.line.width == 0
    assert line.name == "One estimate per group" and line.mode == "lines+markers"
    assert list(line.x) == [0.1, 1.0, 10.0]
    assert np.all(np.asarray(upper.y) >= np.asarray(line.y))
    assert np.all(np.asarray(lower.y) <= np.asarray(line.y))
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    text = charts.sweep_summary(sweep, "parity")
    assert text.startswith("Mean parity error from ε = 0.1 to ε = 10 — One estimate per group")


def test_releases_that_publish_nothing_are_counted_not_averaged(metrics):
    """A release whose every noisy count fell below the minimum group size publishes no estimate
    (NaN errors): the summaries are over the releases that published one, and say how many did
    not, instead of printing nan%."""
    per_group = metrics[metrics["strategy"] == STRATEGIES[0]].copy()
    per_group.loc[per_group.index[:5], ["global", "global_abs", "parity"]] = np.nan
    rows = pd.concat([per_group, metrics[metrics["strategy"] == STRATEGIES[1]]])
    text = charts.distribution_summary(rows, "global", "hours")
    assert "nan" not in text
    published = per_group["global"].dropna()
    share = len(published) / len(per_group)
    assert f"{charts.percent_text(float(np.median(published)))} (±" in text
    assert f"in the {charts.percent_text(share)} of releases that published one" in text
    assert "every group's noisy count fell below the minimum group size" in text

    nothing = per_group.assign(parity=np.nan)
    sweep = summarize_sweep([(0.01, STRATEGIES[0], nothing), (1.0, STRATEGIES[0], per_group)])
    parity = sweep[sweep["metric"] == "parity"].set_index("budget")
    assert np.isnan(parity.at[0.01, "mean"]) and parity.at[0.01, "published"] == 0
    assert parity.at[1.0, "published"] == pytest.approx(share)
    assert parity.at[1.0, "mean"] == pytest.approx(per_group["parity"].mean())
    said = charts.sweep_summary(sweep, "parity")
    assert "nan" not in said and "no estimate →" in said
    assert "up to 100% of them publish nothing, at ε = 0.01" in said


def test_long_group_labels_are_wrapped():
    assert charts.group_tick("Amer-Indian-Eskimo × Female", 119) == (
        "Amer-Indian-<br>Eskimo<br>× Female<br>n = 119"
    )


def test_palette_is_okabe_ito():
    assert charts.PALETTE == ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7")


@pytest.mark.parametrize(
    "fraction, text", [(0.000204, "0.0204%"), (0.126, "12.6%"), (195.6, "19,560%")]
)
def test_percentages_read_without_exponents(fraction, text):
    assert charts.percent_text(fraction) == text


@pytest.fixture
def many_groups() -> pd.DataFrame:
    """300 groups of sizes 1–300 under two strategies; the stratified error falls with size."""
    labels = [f"Region {i:03d} × Some long category name × Another one" for i in range(300)]
    sizes = np.arange(1, 301)
    frames = {}
    for scale, s in zip((1.0, 0.1), STRATEGIES, strict=True):
        mean = scale / np.sqrt(sizes)
        frames[s] = pd.DataFrame(
            {"group": labels, "size": sizes, "mean": mean, "q05": mean / 2, "q95": mean * 2,
             "abs_mean": 40 * mean}
        )  # fmt: skip
    return charts.stack(frames)


def test_many_groups_draw_titled_sections_with_a_bounded_number_of_marks(many_groups):
    selection = select_from_table(many_groups, "region 29")
    fig = charts.many_groups_figure(many_groups, selection)
    titles = [a.text for a in fig.layout.annotations]
    assert titles == [
        "The 10 smallest of 300 groups",
        "The 10 groups with the largest errors",
        "Groups matching “region 29”: the 10 smallest of 13",  # 029, 129, 229, 290–299
    ]
    assert fig.layout.title.text == f"Error in {len(selection.shown)} of the 300 groups"
    assert len(fig.data) == 2 * 3  # one trace per strategy and section
    marks = sum(len(trace.x) for trace in fig.data)
    assert marks == 2 * (10 + 10 + 10)
    smallest = fig.data[0]
    assert list(smallest.y) == [many_groups["group"][i] for i in range(10)]
    np.testing.assert_allclose(smallest.x, 100 / np.sqrt(np.arange(1, 11)))
    np.testing.assert_allclose(smallest.error_x.array, smallest.x)  # q95 − mean, in %
    assert [t.showlegend for t in fig.data] == [True, True, False, False, False, False]
    ticks = fig.layout.yaxis.ticktext
    assert ticks[0] == "Region 000 × Some long category name<br>× Another one (n = 1)"
    assert fig.layout.yaxis.automargin and fig.layout.yaxis.autorange == "reversed"
    assert charts.many_groups_figure(many_groups, selection, log_x=True).layout.xaxis.type == "log"


def test_a_label_or_search_with_angle_brackets_is_shown_as_text(many_groups):
    # Bucket labels such as "< 25" would otherwise open an HTML tag in Plotly's titles.
    bucketed = many_groups.assign(group=many_groups["group"].str.replace("Region", "<b>Age"))
    selection = select_from_table(bucketed, "<b>age 001")
    figure = charts.many_groups_figure(bucketed, selection)
    assert figure.layout.annotations[2].text == "Groups matching “&lt;b&gt;age 001”"
    # Escaped after the lines are measured: "<b>" takes 3 characters on screen, not 9.
    assert figure.layout.yaxis.ticktext[0].startswith("&lt;b&gt;Age 000 × Some")


def test_worst_groups_rank_by_the_larger_error_of_the_two_strategies(many_groups):
    flipped = many_groups.copy()
    # The largest group is served worst by one estimate for everyone: it ranks first.
    last = (flipped["strategy"] == "global_only") & (flipped["size"] == 300)
    flipped.loc[last, "mean"] = 5.0
    worst = select_from_table(flipped).sections[1].groups
    assert worst[0] == flipped.loc[last, "group"].item()
    assert worst[1:4] == tuple(many_groups["group"][:3])


def test_many_groups_summary_gives_the_count_median_and_90th_percentile(many_groups):
    selection = select_from_table(many_groups)
    text = charts.many_groups_summary(many_groups, selection)
    assert text.startswith("The chart shows 10 of 300 groups.")  # the smallest are the worst
    stratified = many_groups.loc[many_groups["strategy"] == "stratified", "mean"]
    median, p90 = np.quantile(stratified, [0.5, 0.9])
    assert (
        f"One estimate per group: median {charts.percent_text(median)}, 90th percentile "
        f"{charts.percent_text(p90)}" in text
    )
    assert "One estimate for everyone: median" in text


def test_a_few_dozen_groups_are_all_drawn_one_row_each(many_groups):
    few = many_groups[many_groups["size"] <= 20]
    selection = select_from_table(few, "ignored while every group is drawn")
    figure = charts.many_groups_figure(few, selection)
    assert figure.layout.title.text == "Error in each of the 20 groups"
    assert [a.text for a in figure.layout.annotations] == ["All 20 groups"]
    assert list(figure.data[0].y) == list(few["group"][:20])
    text = charts.many_groups_summary(few, selection)
    assert text.startswith("Mean error per group over the 20 groups — One estimate per group:")
