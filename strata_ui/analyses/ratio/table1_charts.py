"""The calibration ratio's Table 1 views (Miao & Li 2022): our coverage beside the paper's for
every setting and method, as a figure, a sentence and a table. Nothing here imports streamlit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from strata_ui.analyses.ratio.charts import (
    COMPOSITION_NAMES,
    METHOD_COLOURS,
    METHOD_SYMBOLS,
    REFERENCE_COLOUR,
    _method,
    method_in_text,
)
from strata_ui.style import FONT, PALETTE

__all__ = ["table1_display", "table1_figure", "table1_summary"]


def table1_figure(comparison: pd.DataFrame) -> go.Figure:
    """Our coverage against the paper's for every Table 1 setting and method, with y = x; the
    right panel zooms in on 90–100%, where the corrected intervals sit."""
    rows = comparison.dropna(subset=["paper_coverage"])
    fig = make_subplots(
        rows=1, cols=2, horizontal_spacing=0.1,
        subplot_titles=("Every setting", "Zoom on 90–100%: the corrected intervals"),
    )  # fmt: skip
    for col, (low, high) in enumerate(((0.0, 1.02), (0.9, 1.0)), start=1):
        fig.add_trace(
            go.Scatter(
                x=[low, high], y=[low, high], mode="lines", name="same as the paper",
                line={"color": REFERENCE_COLOUR, "dash": "dash", "width": 1.5}, hoverinfo="skip",
                showlegend=col == 1, legendgroup="same",
            ),
            row=1, col=col,
        )  # fmt: skip
        for method in dict.fromkeys(rows["method"]):
            part = rows[rows["method"] == method]
            labels = [
                f"{'weighted' if w else 'unweighted'}, n = {n:,}, ε = {e:g}"
                for w, n, e in zip(part["weighted"], part["n"], part["epsilon"], strict=True)
            ]
            fig.add_trace(
                go.Scatter(
                    x=part["paper_coverage"],
                    y=part["ours_coverage"],
                    mode="markers",
                    name=_method(method),
                    legendgroup=method,
                    showlegend=col == 1,
                    text=labels,
                    marker={
                        "color": METHOD_COLOURS.get(method, PALETTE[4]),
                        "symbol": METHOD_SYMBOLS.get(method, "circle"),
                        "size": 10,
                        "line": {"width": 1, "color": "white"},
                    },
                    hovertemplate="%{text}<br>paper %{x:.1%}, ours %{y:.1%}"
                    + f"<extra>{_method(method)}</extra>",
                ),
                row=1,
                col=col,
            )
        ticks = {"tickformat": ".0%", "range": [low, high]}
        fig.update_xaxes(title={"text": "Coverage in the paper's Table 1 (%)"}, **ticks,
                         row=1, col=col)  # fmt: skip
        fig.update_yaxes(title={"text": "Coverage in our run (%)"}, **ticks, row=1, col=col)
    fig.update_layout(
        title={"text": "The paper's Table 1 reproduced: coverage of 95% intervals, ours against "
                       "the paper's"},
        font=FONT, height=520, margin={"t": 110, "b": 60, "l": 10, "r": 20},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.08, "x": 0},
    )  # fmt: skip
    return fig


def table1_summary(comparison: pd.DataFrame) -> str:
    """The largest coverage gap, and how the widths compare."""
    rows = comparison.dropna(subset=["paper_coverage"])
    gap = (rows["ours_coverage"] - rows["paper_coverage"]).abs()
    worst = rows.loc[gap.idxmax()]
    corrected = rows[rows["method"].isin(["monte_carlo", "analytical", "public"])]
    corrected_gap = (corrected["ours_coverage"] - corrected["paper_coverage"]).abs().max()
    ratio = rows["ours_width"] / rows["paper_width"]
    off = rows[(ratio - 1).abs() > 0.1]
    text = (
        f"Coverage agrees within {100 * corrected_gap:.1f} percentage points for the public and "
        f"corrected intervals; the largest gap overall is {100 * gap.max():.1f} points "
        f"({method_in_text(worst['method'])}, "
        f"{'weighted' if worst['weighted'] else 'unweighted'}, n = {int(worst['n']):,}, "
        f"ε = {worst['epsilon']:g})."
    )
    if off.empty:
        text += " Every mean width is within 10% of the paper's."
    else:
        where = sorted(
            {
                f"{'weighted' if w else 'unweighted'} ε = {e:g}"
                for w, e in zip(off["weighted"], off["epsilon"], strict=True)
            }
        )
        text += (
            f" Mean widths are within 10% of the paper's except in {len(off)} "
            f"cell{'s' if len(off) > 1 else ''} "
            f"({', '.join(where)}), where a few releases with a noisy denominator near 0 "
            "dominate the mean."
        )
    return text


def table1_display(comparison: pd.DataFrame) -> pd.DataFrame:
    """The comparison for display: readable setting and method names, ours beside the paper's."""
    table = pd.DataFrame(
        {
            "Weighted": np.where(comparison["weighted"], "yes", "no"),
            "n": comparison["n"],
            "ε": comparison["epsilon"],
            "Accounting": comparison["composition"].map(
                lambda c: COMPOSITION_NAMES.get(c, c).split(" (")[0]
            ),
            "Method": comparison["method"].map(_method),
        }
    )
    for metric in ("width", "coverage", "score"):
        table[f"{metric.capitalize()} (ours)"] = comparison[f"ours_{metric}"]
        table[f"{metric.capitalize()} (paper)"] = comparison[f"paper_{metric}"]
    if "flagged" in comparison:
        table["Degenerate (ours)"] = comparison["flagged"]
    return table
