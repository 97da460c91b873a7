"""The private sample's figures: the comparison keeps every outcome's probability (the tail
summed into one bar), and the Learn summary reads where each curve reaches α."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from strata_ui.analyses.sample import charts


def result(k: int) -> dict:
    group = np.arange(k, 0, -1) / np.arange(k, 0, -1).sum()
    return {"labels": [f"c{i}" for i in range(k)], "group": group, "output": group[::-1],
            "part_rows": 100, "distance": 0.1, "floor": 0.001, "guarantee": 2.0}  # fmt: skip


@pytest.mark.parametrize("k", [3, charts.MAX_BARS, 40])
def test_the_comparison_keeps_the_total_probability_and_at_most_max_bars(k):
    frame = charts.comparison_frame(result(k))
    assert len(frame) == min(k, charts.MAX_BARS)
    assert frame["group"].sum() == pytest.approx(1) and frame["sampler"].sum() == pytest.approx(1)
    shown = frame["group"].iloc[: charts.MAX_BARS - 1]
    assert list(shown) == sorted(shown, reverse=True)
    figure = charts.comparison_figure(result(k), product=False)
    assert [t.name for t in figure.data] == [
        "The group's rows (confidential)", "One private record (simulated)"
    ]  # fmt: skip
    assert "at most 1 " in charts.comparison_summary(result(k))  # a guarantee above 1 says 1


def test_the_learning_summary_reads_where_each_curve_reaches_alpha():
    frame = pd.DataFrame({"n": [10, 100, 1000], "sampling": [0.5, 0.01, 1e-4],
                          "learning": [0.9, 0.2, 0.04], "floor": [1e-3] * 3,
                          "guarantee": [1.0, 0.4, 0.04]})  # fmt: skip
    text = charts.learning_summary(frame)
    assert "about **100** records" in text and "needed **1,000**" in text
    assert "From about n = 1,000 on" in text
    figure = charts.learning_figure(frame, 20, 1.0)
    assert figure.layout.xaxis.type == "log" and len(figure.data) == 4
