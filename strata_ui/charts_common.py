"""Plotly pieces that charts on several pages draw alike: an estimate's interval as error bars,
a dotted line to read the data against (a true value, the nominal level, the chosen budget), a
series' spread over runs as a band, and the sections of a chart of many groups. No streamlit
here, so the figures stay unit-testable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from strata_ui.group_selection import GroupSelection
from strata_ui.style import (
    BLACK,
    FONT,
    LEGEND_BELOW,
    SeriesStyle,
    plain_number,
    rgba,
    wrap_label_wide,
)
from strata_ui.text import chart_text

LINE_PX, ROW_PAD_PX, MIN_ROW_PX = 12, 10, 30  # a group's row: its label's lines, two marks
GAP_PX = 90  # between two sections: the upper one's axis numbers, then the lower one's title
MARGIN_TOP_PX, MARGIN_BOTTOM_PX = 100, 110  # the chart's and first section's titles; the legend


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


LOG_TICK_STEPS = ((1, 2, 5), (1,), (1, 2, 3, 4, 5, 6, 7, 8, 9))
"""Ticks of a log axis per decade, in order of preference: 1-2-5; decades only when that gives
too many; every digit when it gives too few (a range within one decade)."""


def log_axis(values, *, most: int = 9, fewest: int = 3) -> dict[str, Any]:
    """A log axis whose labels are all the same size and say their value (0.002, 0.005, 0.01),
    where Plotly labels a log axis spanning a few decades with small, repeated minor digits.
    Ticks run over the range of ``values`` (positive, finite ones) with the first of
    :data:`LOG_TICK_STEPS` that gives between ``fewest`` and ``most`` of them."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    if not values.size:
        return {"type": "log"}
    low, high = values.min(), values.max()
    decades = range(int(np.floor(np.log10(low))), int(np.ceil(np.log10(high))) + 1)
    ticks: list[float] = []
    for steps in LOG_TICK_STEPS:
        # The outer ticks stand just beyond the data, so that every point sits between labels.
        candidates = [float(f"{s}e{d}") for d in decades for s in steps]
        below = [t for t in candidates if t <= low] or candidates[:1]
        above = [t for t in candidates if t >= high] or candidates[-1:]
        ticks = [t for t in candidates if below[-1] <= t <= above[0]]
        if fewest <= len(ticks) <= most:
            break
    return {"type": "log", "tickvals": ticks, "ticktext": [plain_number(t) for t in ticks]}


def dotted_line(
    x, y, name: str, *, colour: str = BLACK, width: float = 2, **trace: Any
) -> dict[str, Any]:
    """A dotted line through the points (``x``, ``y``) that hovering skips: a mark the chart is
    read against rather than data. A trace spec (a dict), which ``add_trace`` and a figure spec
    take alike."""
    return {
        "type": "scatter", "x": x, "y": y, "mode": "lines", "name": name,
        "line": {"color": colour, "dash": "dot", "width": width}, "hoverinfo": "skip", **trace,
    }  # fmt: skip


def spread_band(
    x, low, high, *, colour: str, group: str, names: tuple[str, str]
) -> list[dict[str, Any]]:
    """A series' spread over runs (e.g. 5–95%) as a translucent band from ``low`` to ``high``:
    two invisible edges (trace specs), the lower one filled up to the upper, left out of the
    legend and shown or hidden with the series' own entry (legend ``group``). ``names`` are the
    low and high edges' names."""
    low_name, high_name = names
    edge = {
        "type": "scatter", "x": x, "mode": "lines", "line": {"width": 0}, "showlegend": False,
        "legendgroup": group, "hoverinfo": "skip",
    }  # fmt: skip
    return [
        {**edge, "y": high, "name": high_name},
        {**edge, "y": low, "name": low_name, "fill": "tonexty", "fillcolor": rgba(colour, 0.2)},
    ]


def budget_marker(
    current: float, low: float, high: float, *, symbol: str, colour: str
) -> dict[str, Any]:
    """The user's budget on a sweep, a vertical dotted line from ``low`` to ``high``. A trace
    rather than a shape: shapes on log axes take log10 coordinates, which renderers disagree
    about; a trace sits at the data value and gets a legend entry."""
    return dotted_line(
        [current, current], [low, high], f"your {symbol} = {current:g}", colour=colour
    )


def group_sections_figure(
    table: pd.DataFrame,
    selection: GroupSelection,
    *,
    style: SeriesStyle,
    title: str,
    x_title: str,
    hover: str,
    extra: Sequence[str] = (),
    log_x: bool = False,
) -> go.Figure:
    """The groups of ``selection``, one row each, in its sections (stacked panels, each with its
    title, sharing the error axis): each series' ``mean`` with bars from ``low`` to ``high``.

    ``table`` has one row per series and group: ``strategy``, ``group``, ``size``, ``mean``,
    ``low``, ``high`` and the ``extra`` columns. ``hover`` is the rest of a hover template after
    the group's label, reading ``%{x}`` (the mean), ``%{customdata[0]}`` (the size), then 1, 2, …
    for ``low``, ``high`` and the ``extra`` columns. Group labels wrap between their parts and the
    axis margin grows to fit them, so no label is cut. Labels and section titles (which may
    quote what a user typed) are shown as text, never read as Plotly's HTML tags.
    """
    sections = [s for s in selection.sections if s.groups]
    sizes = table.drop_duplicates("group").set_index("group")["size"]
    ticks = {g: f"{wrap_label_wide(g)} (n = {int(sizes[g]):,})" for g in selection.shown}
    lines = max(tick.count("<br>") + 1 for tick in ticks.values())
    plot_px = max(MIN_ROW_PX, LINE_PX * lines + ROW_PAD_PX) * sum(len(s.groups) for s in sections)
    plot_px += GAP_PX * (len(sections) - 1)
    fig = make_subplots(
        rows=len(sections), cols=1, shared_xaxes=True,
        subplot_titles=[chart_text(s.title) for s in sections],
        row_heights=[len(s.groups) for s in sections], vertical_spacing=GAP_PX / plot_px,
    )  # fmt: skip
    series = list(dict.fromkeys(table["strategy"]))
    for row, section in enumerate(sections, start=1):
        for name in series:
            part = table[table["strategy"] == name].set_index("group").loc[list(section.groups)]
            fig.add_trace(_section_trace(part, name, style, hover, extra, first=row == 1), row, 1)
        fig.update_yaxes(
            type="category", categoryorder="array", categoryarray=list(section.groups),
            tickvals=list(section.groups), ticktext=[ticks[g] for g in section.groups],
            autorange="reversed", automargin=True, ticklabelstandoff=6, tickfont={"size": 11},
            row=row, col=1,
        )  # fmt: skip
    fig.update_xaxes(type="log" if log_x else "linear", showticklabels=True)
    fig.update_xaxes(title={"text": x_title}, row=len(sections), col=1)
    fig.update_layout(
        title={"text": title}, font=FONT, scattermode="group", legend=LEGEND_BELOW,
        height=plot_px + MARGIN_TOP_PX + MARGIN_BOTTOM_PX,
        margin={"t": MARGIN_TOP_PX, "b": MARGIN_BOTTOM_PX},
    )  # fmt: skip
    fig.update_annotations(xanchor="left", x=0, font={"size": 14})  # section titles, flush left
    return fig


def _section_trace(
    part: pd.DataFrame, name: str, style: SeriesStyle, hover: str, extra: Sequence[str], *,
    first: bool,
) -> go.Scatter:  # fmt: skip
    """One series' marks in one section; only the first section's enter the legend, and a
    legend click shows or hides the series in every section."""
    colour = style.colour(name)
    return go.Scatter(
        x=part["mean"].to_numpy(), y=list(part.index), orientation="h", mode="markers",
        name=style.name(name), legendgroup=name, showlegend=first,
        marker={"color": colour, "size": 9},
        cliponaxis=False,  # a mark at an error near 0 shows whole, not halved by the axis
        error_x=interval_bars(part["mean"], part["low"], part["high"], colour),
        customdata=np.column_stack([part[c].to_numpy() for c in ("size", "low", "high", *extra)]),
        hovertemplate="%{y}<br>" + hover + f"<extra>{style.name(name)}</extra>",
    )  # fmt: skip


def log_ticks(low: float, high: float) -> list[float]:
    """Round values 1, 2, 5 × 10^k covering [low, high], for a readable log axis."""
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    ticks = [m * 10.0**k for k in range(first, last + 1) for m in (1, 2, 5)]
    inside = [v for v in ticks if low / 1.5 <= v <= high * 1.5]
    return [float(f"{v:.6g}") for v in inside] or [float(f"{low:.2g}")]
