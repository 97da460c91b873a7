"""Plotly pieces that charts on several pages draw alike: an estimate's interval as error bars,
a dotted line to read the data against (a true value, the nominal level, the chosen budget) and
a series' spread over runs as a band. No streamlit here, so the figures stay unit-testable.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from strata_ui.charts_strata import BLACK
from strata_ui.style import rgba


def interval_bars(estimate, low, high, colour: str, **style: Any) -> dict:
    """Asymmetric error bars from each estimate to the ends of its interval, for ``error_x`` or
    ``error_y``; ``style`` adds Plotly's bar options (``thickness``, ``width``)."""
    estimate = np.asarray(estimate, dtype=float)
    return {
        "type": "data",
        "symmetric": False,
        "array": np.asarray(high, dtype=float) - estimate,
        "arrayminus": estimate - np.asarray(low, dtype=float),
        "color": colour,
        **style,
    }


def dotted_line(
    x, y, name: str, *, colour: str = BLACK, width: float = 2, **trace: Any
) -> go.Scatter:
    """A dotted line through the points (``x``, ``y``) that hovering skips: a mark the chart is
    read against rather than data."""
    return go.Scatter(
        x=x, y=y, mode="lines", name=name, line={"color": colour, "dash": "dot", "width": width},
        hoverinfo="skip", **trace,
    )  # fmt: skip


def add_spread_band(
    fig: go.Figure, x, low, high, *, colour: str, group: str, names: tuple[str, str]
) -> None:
    """A series' spread over runs (e.g. 5–95%) as a translucent band from ``low`` to ``high``:
    two invisible edges, the lower one filled up to the upper, left out of the legend and shown
    or hidden with the series' own entry (legend ``group``). ``names`` are the low and high
    edges' names."""
    low_name, high_name = names
    for y, name, fill in ((high, high_name, None), (low, low_name, "tonexty")):
        fig.add_trace(
            go.Scatter(
                x=x, y=y, mode="lines", line={"width": 0}, fill=fill,
                fillcolor=rgba(colour, 0.2) if fill else None, showlegend=False,
                legendgroup=group, hoverinfo="skip", name=name,
            )
        )  # fmt: skip


def budget_marker(
    current: float, low: float, high: float, *, symbol: str, colour: str
) -> go.Scatter:
    """The user's budget on a sweep, a vertical dotted line from ``low`` to ``high``. A trace
    rather than a shape: shapes on log axes take log10 coordinates, which renderers disagree
    about; a trace sits at the data value and gets a legend entry."""
    return dotted_line(
        [current, current], [low, high], f"your {symbol} = {current:g}", colour=colour
    )
