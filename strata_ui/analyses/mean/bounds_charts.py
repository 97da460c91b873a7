"""What the bounds cost each group's mean, typed beside found privately: a Plotly figure and a
one-sentence summary of :func:`dpcore.analyses.mean.found_accuracy.bounds_costs`' tidy frame.
Nothing here imports streamlit, so the figure is unit-tested directly."""

from __future__ import annotations

from typing import Any

import pandas as pd

from strata_ui.style import BLUE, FONT, LEGEND_BELOW, ORANGE, wrap_label
from strata_ui.text import as_text

METHOD_NAMES = {"typed": "Typed range", "found": "Found privately"}
METHOD_COLOURS = {"typed": ORANGE, "found": BLUE}


def _ranges(frame: pd.DataFrame) -> dict[str, str]:
    """Each method's range in words: the typed one, or the median found (one, or several)."""
    out = {}
    for method, part in frame.groupby("method", sort=False):
        lows, highs = part["low"].unique(), part["high"].unique()
        if len(lows) == 1 and len(highs) == 1:
            out[method] = f"[{lows[0]:.4g}, {highs[0]:.4g}]"
            if method == "found":
                out[method] = f"(median {out[method]})"
        else:
            out[method] = "each group's own"
    return out


def bounds_cost_figure(frame: pd.DataFrame) -> dict[str, Any]:
    """Each group's root mean square error under each way of bounding (bars, log axis), the
    bias and the noise in the hover: smallest group first."""
    ranges = _ranges(frame)
    order = frame.drop_duplicates("group").sort_values("size", kind="stable")["group"].tolist()
    traces = []
    for method in ("typed", "found"):
        part = frame[frame["method"] == method].set_index("group").loc[order]
        traces.append({
            "type": "bar", "name": f"{METHOD_NAMES[method]} {ranges.get(method, '')}",
            "x": [wrap_label(g) for g in order], "y": part["rmse"].tolist(),
            "marker": {"color": METHOD_COLOURS[method]},
            "customdata": part[["bias", "noise", "size"]].to_numpy().tolist(),
            "hovertemplate": "%{x}<br>n = %{customdata[2]:,}<br>error (RMSE) %{y:.3g}"
            "<br>clipping bias %{customdata[0]:.3g}<br>noise %{customdata[1]:.3g}<extra></extra>",
        })  # fmt: skip
    return {
        "data": traces,
        "layout": {
            "title": {"text": "Error of each group's mean: typed range against bounds found"},
            "barmode": "group",
            "xaxis": {"title": {"text": "Group (smallest first)"}},
            "yaxis": {"title": {"text": "Error (root mean square, value's units)"}, "type": "log"},
            "font": FONT,
            "legend": {**LEGEND_BELOW, "title": {"text": "Bounds "}},
            "margin": {"t": 60, "b": 150, "l": 80, "r": 20},
        },
    }


def bounds_cost_summary(frame: pd.DataFrame, unit: str = "") -> str:
    """One sentence: the smallest group's error both ways, and where the found bounds' bias
    is largest."""
    typed = frame[frame["method"] == "typed"].set_index("group")
    found = frame[frame["method"] == "found"].set_index("group")
    smallest = typed["size"].idxmin()
    worst_bias = found["bias"].abs().idxmax()
    unit = f" {unit}" if unit else ""
    return (
        f"In the smallest group, **{as_text(smallest)}**, the typed range's noise gives an error of "
        f"{typed.loc[smallest, 'rmse']:.3g}{unit} and the bounds found privately "
        f"{found.loc[smallest, 'rmse']:.3g}{unit} (their noise {found.loc[smallest, 'noise']:.3g}, "
        f"their clipping bias {found.loc[smallest, 'bias']:+.3g}). The found bounds' largest "
        f"clipping bias is in **{as_text(worst_bias)}**: {found.loc[worst_bias, 'bias']:+.3g}{unit}."
    )
