"""Unit tests of the Strata page's figure builders (no streamlit)."""

import base64
import json

import numpy as np
import pytest

from dpcore.foundations import theory
from strata_ui import charts_strata as cs
from strata_ui.constants import ALPHA_AXIS

LABELS = ["b", "a", "tiny", "c", "small"]
SIZES = [300, 5000, 10, 1200, 40]


def as_json(fig) -> dict:
    return json.loads(fig.to_json())


def values(array) -> np.ndarray:
    """A JSON array, including Plotly's base64 typed arrays ({"dtype": ..., "bdata": ...})."""
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"])
    return np.asarray(array)


def test_group_size_frame_sorts_descending_and_flags_small_groups():
    frame = cs.group_size_frame(LABELS, SIZES)
    assert list(frame["group"]) == ["a", "c", "b", "small", "tiny"]
    assert list(frame["size"]) == [5000, 1200, 300, 40, 10]
    assert frame["share"].sum() == pytest.approx(1.0)
    # 1% of 6,550 rows is 65.5: "small" (40) and "tiny" (10) are flagged.
    assert list(frame.loc[frame["small"], "group"]) == ["small", "tiny"]


def test_group_size_frame_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="one size per label"):
        cs.group_size_frame(["a"], [1, 2])


def test_group_size_chart_has_log_axis_titles_and_two_coloured_traces():
    fig = as_json(cs.group_size_chart(cs.group_size_frame(LABELS, SIZES)))
    layout = fig["layout"]
    assert layout["yaxis"]["type"] == "log"
    assert layout["yaxis"]["title"]["text"] == "rows (log scale)"
    assert layout["xaxis"]["title"]["text"] == "group"
    assert "5 groups" in layout["title"]["text"]
    assert layout["xaxis"]["categoryarray"] == ["a", "c", "b", "small", "tiny"]
    big, small = fig["data"]
    assert big["x"] == ["a", "c", "b"] and small["x"] == ["small", "tiny"]
    assert "Small groups" in small["name"]
    assert big["marker"]["color"] != small["marker"]["color"]
    assert {big["marker"]["color"], small["marker"]["color"]} <= {cs.BLUE, cs.VERMILLION}
    assert "of all rows" in small["hovertemplate"] and "%{x}" in small["hovertemplate"]


def test_group_size_chart_without_small_groups_has_one_trace():
    fig = as_json(cs.group_size_chart(cs.group_size_frame(["a", "b"], [50, 60])))
    assert [t["name"] for t in fig["data"]] == ["Groups with ≥ 1% of rows"]


def test_many_groups_hide_the_bar_labels():
    labels = [f"g{i}" for i in range(cs.MAX_LABELLED_BARS + 1)]
    fig = as_json(cs.group_size_chart(cs.group_size_frame(labels, np.arange(len(labels)) + 1)))
    assert fig["layout"]["xaxis"]["showticklabels"] is False
    assert "41 groups" in fig["layout"]["xaxis"]["title"]["text"]


def test_log_size_curves_match_the_theory_functions():
    n, k = 10_000, 6
    alphas = np.array([0.1, 1.0, 10.0])
    curves = cs.log_size_curves(n, k, alphas)
    assert set(curves["curve"]) == set(cs.CURVES)
    worst = curves[curves["curve"] == cs.WORST]["value"]
    best = curves[curves["curve"] == cs.BEST]["value"]
    expected = curves[curves["curve"] == cs.EXPECTED]["value"].to_numpy()
    assert np.allclose(worst, theory.worst_case_log_sizes(n, k))
    assert np.allclose(best, theory.best_case_log_sizes(n, k))
    assert expected == pytest.approx([theory.dirichlet_expected_log_sizes(n, k, a) for a in alphas])
    # Thm. 9 increases with α towards Prop. 8's worst case.
    assert np.all(np.diff(expected) > 0) and expected[-1] < theory.worst_case_log_sizes(n, k)


def test_alpha_grid_covers_the_axis_and_the_fitted_alpha():
    grid = cs.alpha_grid()
    assert grid[0] == pytest.approx(ALPHA_AXIS[0]) and grid[-1] == pytest.approx(ALPHA_AXIS[1])
    wide = cs.alpha_grid(100.0)
    assert wide[0] == pytest.approx(ALPHA_AXIS[0]) and wide[-1] >= 100.0


def test_figure1_chart_marks_the_dataset_on_log_alpha_axis():
    n, k, alpha, observed = 32_561, 10, 0.14, 65.8
    curves = cs.log_size_curves(n, k, cs.alpha_grid(alpha))
    fig = as_json(cs.figure1_chart(curves, n=n, k=k, alpha_fit=alpha, observed=observed))
    layout = fig["layout"]
    assert layout["xaxis"]["type"] == "log"
    assert "How uneven the group sizes are, α" in layout["xaxis"]["title"]["text"]
    assert "Extra noise from stratifying" in layout["yaxis"]["title"]["text"]
    assert "n = 32,561" in layout["title"]["text"] and "k = 10" in layout["title"]["text"]
    names = [t["name"] for t in fig["data"]]
    assert names[:3] == list(cs.CURVES)
    (marker,) = [t for t in fig["data"] if t["name"].startswith("This dataset")]
    assert marker["x"] == [alpha] and marker["y"] == [observed]
    assert "α ≈ 0.14" in marker["text"][0]
    low, high = layout["yaxis"]["range"]
    assert low < theory.best_case_log_sizes(n, k) and high > theory.worst_case_log_sizes(n, k)
    assert low < observed < high
    # Flat lines are flat; the Thm. 9 curve moves with α.
    by_name = {t["name"]: t for t in fig["data"]}
    assert len(set(np.round(values(by_name[cs.WORST]["y"]), 9))) == 1
    assert len(set(np.round(values(by_name[cs.EXPECTED]["y"]), 9))) > 1


def test_the_size_axis_runs_from_a_labelled_tick_below_the_smallest_bar_to_one_above():
    """A tester's groups of 32 to 62 rows: Plotly started the axis at 32, so the smallest bar
    was a sliver, and labelled the single tick 50."""
    sizes = [32 + (i * 7) % 31 for i in range(24)]
    labels = [f"group {i}" for i in range(24)]
    axis = as_json(cs.group_size_chart(cs.group_size_frame(labels, sizes)))["layout"]["yaxis"]
    assert axis["tickvals"] == [10, 20, 50, 100, 200]
    assert axis["range"] == pytest.approx([1.0, np.log10(200)])
    assert axis["ticktext"] == ["10", "20", "50", "100", "200"]
    big = as_json(cs.group_size_chart(cs.group_size_frame(["a", "b"], [300, 2_000_000])))
    assert big["layout"]["yaxis"]["ticktext"][-1] == "10,000,000"  # not 1e+07


def test_equal_groups_get_readable_size_ticks_and_a_label_in_view():
    """Three groups of 100 rows: Plotly alone labelled every minor tick (10, 20, … 1,000) and
    the fitted α of 1,000 put the dataset's label past the right edge."""
    fig = as_json(cs.group_size_chart(cs.group_size_frame(["a", "b", "c"], [100, 100, 100])))
    assert fig["layout"]["yaxis"]["tickvals"] == [50, 100, 200]
    curves = cs.log_size_curves(300, 3, cs.alpha_grid(1000.0))
    fig = as_json(cs.figure1_chart(curves, n=300, k=3, alpha_fit=1000.0, observed=13.8))
    (marker,) = [t for t in fig["data"] if t["name"].startswith("This dataset")]
    assert marker["textposition"] == "top left" and marker["text"][0].endswith("α ≈ 1,000")


def test_the_size_chart_and_figure_1_are_said_in_words():
    """A reader who cannot see a chart reads its summary: largest, smallest, where the data sit."""
    sizes = cs.group_size_frame(["a*b", "c", "d"], [2000, 300, 100])
    assert cs.group_size_summary(sizes) == (
        r"Largest group: a\*b, 2,000 rows; smallest: d, 100 rows; the largest is 20 times the "
        "smallest."
    )
    said = cs.figure1_summary(2400, 3, 0.5, 18.0)
    assert said.startswith(
        "This dataset (n = 2,400 rows, k = 3 groups, α ≈ 0.5): Σ log|G_i| = 18.0"
    )
    assert "when all groups are the same size" in said and "% of the way up" in said


def test_a_group_of_one_row_is_said_in_the_singular():
    sizes = cs.group_size_frame(["a", "b"], [40, 1])
    assert "smallest: b, 1 row; " in cs.group_size_summary(sizes)


def test_figure_1_names_the_declared_groups_without_rows_it_leaves_out():
    """Its k counts groups with rows: beside a page that counts every group, it says so."""
    said = cs.figure1_summary(2400, 4, 0.5, 18.0, empty=2)
    assert said.startswith(
        "This dataset (n = 2,400 rows, k = 4 groups with rows (2 groups "
        "without rows left out), α ≈ 0.5)"
    )
    curves = cs.log_size_curves(2400, 4, cs.alpha_grid(0.5))
    fig = as_json(cs.figure1_chart(curves, n=2400, k=4, alpha_fit=0.5, observed=18.0, empty=1))
    assert fig["layout"]["title"]["text"].endswith(
        "rows<br>and k = 4 groups with rows (1 group without rows left out)"
    )
