"""Plotly figures for the Release page and the HTML report (:mod:`strata_ui.report`): the budget
gauge and a release's estimates with their intervals. No streamlit here, so the figures are unit-tested directly.
"""

from __future__ import annotations

import math
import textwrap
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dpcore.release import ReleaseRecord
from strata_ui.charts_common import interval_bars
from strata_ui.style import FONT, PALETTE, at_precision, plain_number, wrap_label, wrap_label_wide
from strata_ui.text import as_written

GAUGE_STEPS = ((0.0, 0.1, "#F0E0D0"), (0.1, 1.0, "#E4EEF6"))  # the last 10% is shaded warm


def budget_gauge(left: float, total: float, symbol: str, ledger_name: str) -> go.Figure:
    """A gauge of the budget left in a ledger, from 0 to its total."""
    name_lines = textwrap.wrap(f"“{ledger_name}”", 32)
    fig = go.Figure(
        go.Indicator(
            mode="gauge+number",
            value=left,
            number={"valueformat": ".4~g", "suffix": f" of {plain_number(total, 4)}"},
            gauge={
                "axis": {"range": [0, total], "tickformat": ".3~g"},
                "bar": {"color": PALETTE[0]},
                "steps": [
                    {"range": [a * total, b * total], "color": colour}
                    for a, b, colour in GAUGE_STEPS
                ],
            },
            # The name on lines of its own: a long ledger name was cut at both ends.
            title={"text": "<br>".join([f"{symbol} left in ledger", *name_lines])},
        )
    )
    top = 30 + 24 * (1 + len(name_lines))  # room for every line of the title
    fig.update_layout(font=FONT, height=200 + top, margin={"l": 45, "r": 45, "t": top, "b": 10})
    return fig


def _numeric_frame(record: ReleaseRecord) -> pd.DataFrame:
    """The record's rows with undefined (None) estimates and interval ends as NaN."""
    frame = record.frame
    for column in ("estimate", "low", "high"):
        frame[column] = pd.to_numeric(frame[column])
    return frame


_LEVELS = (
    ("group", PALETTE[0], "group estimate"),
    ("population", PALETTE[3], "whole population"),
)
"""Each level of a release's rows: its colour and legend name."""


def release_traces(
    frame: pd.DataFrame, *, marker_size: int = 10, horizontal: bool = False, **bar_style: Any
) -> list[go.Scatter]:
    """A marker trace of the estimates with their intervals for each level in ``frame`` (groups
    first, then the whole population): the Release page and GVDP's release chart draw them alike.
    ``horizontal``: one row per group, for more labels than stand side by side. ``bar_style`` is
    passed to :func:`~strata_ui.charts_common.interval_bars`."""
    traces = []
    for level, colour, name in _LEVELS:
        part = frame[frame["level"] == level]
        if part.empty:
            continue
        bars = interval_bars(part["estimate"], part["low"], part["high"], colour, **bar_style)
        wrap = wrap_label_wide if horizontal else wrap_label
        labels = [wrap(g) for g in part["group"]]
        position = (
            {"y": labels, "x": part["estimate"], "error_x": bars}
            if horizontal
            else {"x": labels, "y": part["estimate"], "error_y": bars}
        )
        axis, value = ("y", "x") if horizontal else ("x", "y")
        traces.append(
            go.Scatter(
                **position,
                mode="markers",
                marker={"color": colour, "size": marker_size},
                name=name,
                hovertemplate=f"%{{{axis}}}<br>estimate %{{{value}:.4g}}<extra></extra>",
            )
        )
    return traces


MAX_UPRIGHT_GROUPS = 12
"""Most groups a release chart lists side by side; with more, it lists one per row (their
labels, turned upright, ran into each other)."""


def _public_pair(value: object) -> tuple[float, float] | None:
    """A plan's public range as stated in its parameters (a pair of finite numbers), or None."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    low, high = (pd.to_numeric(pd.Series(value), errors="coerce")).tolist()
    return (low, high) if pd.notna(low) and pd.notna(high) and low < high else None


def value_range(record: ReleaseRecord, frame: pd.DataFrame) -> tuple[float, float] | None:
    """The value axis of a release chart, fitted to what it shows: from the smallest to the
    largest released estimate, widened by the typical (median) interval half-width on each side
    and padded, then cut to the range the release clipped into: the bounds it found privately
    (:func:`_found_range`), else the plan's public range (a mean's bounds [L, U] or CoinPress's
    prior) where it has one. Never the bounds themselves (an income bounded by 250,000 flattened
    every estimate against it), nor the widest interval: a small group's wide bar runs off the
    chart, its far end written at the edge (:func:`_mark_cut_intervals`), instead of squashing
    the others. None when nothing was released."""
    estimates = pd.to_numeric(frame["estimate"], errors="coerce")
    finite = estimates.dropna()
    if finite.empty:
        return None
    halves = ((pd.to_numeric(frame["high"]) - pd.to_numeric(frame["low"])) / 2).dropna()
    spread = float(halves.median()) if not halves.empty else 0.0
    low, high = float(finite.min()) - spread, float(finite.max()) + spread
    pad = 0.08 * (high - low) if high > low else max(abs(high) * 0.1, 1.0)
    low, high = low - pad, high + pad
    clipped_into = _found_range(record.outputs)
    estimator = record.metadata["plan"].get("estimator", {})
    for name in ("bounds", "prior"):
        if clipped_into is None:
            clipped_into = _public_pair(estimator.get(name))
    if clipped_into is None:
        return low, high
    return max(low, clipped_into[0]), min(high, clipped_into[1])


def _found_range(outputs: list[dict]) -> tuple[float, float] | None:
    """The range a release's means were clipped into when it found its bounds privately: from
    the lowest ``clip_low`` to the highest ``clip_high`` on its rows (DP outputs), or None. The
    search range it was found in may be a thousand times wider, and would squash every mean."""
    lows = [row["clip_low"] for row in outputs if row.get("clip_low") is not None]
    highs = [row["clip_high"] for row in outputs if row.get("clip_high") is not None]
    return _public_pair([min(lows), max(highs)]) if lows and highs else None


def _coverage_short(coverage: dict) -> str:
    """The release metadata's coverage caveat (:class:`~dpcore.release.CoverageNote`) in a
    few words for the title; the whole note is in the release's facts and exports."""
    return f"some cover ≈{coverage['measured']}: see Coverage"


def release_figure(record: ReleaseRecord) -> go.Figure:
    """Each released estimate with its interval; the population estimate drawn apart. The value
    axis follows :func:`value_range`."""
    frame = _numeric_frame(record)
    level = record.metadata["plan"]["level"]
    horizontal = len(frame) > MAX_UPRIGHT_GROUPS
    fig = go.Figure(release_traces(frame, horizontal=horizontal))
    statistic = record.metadata["plan"]["statistic"]
    value_title = {"text": statistic[:1].upper() + statistic[1:]}
    axis = value_range(record, frame)
    coverage = record.metadata.get("coverage")
    caveat = "" if coverage is None else f" ({_coverage_short(coverage)})"
    fig.update_layout(
        title={
            "text": f"{record.metadata['title']} — DP estimates with {level:.0%} intervals{caveat}"
        },
        font=FONT,
    )
    if axis is not None:
        _mark_cut_intervals(fig, frame, axis, horizontal=horizontal)
    if horizontal:
        fig.update_xaxes(title=value_title, range=None if axis is None else list(axis))
        fig.update_yaxes(title={"text": "Group"}, autorange="reversed", automargin=True)
        fig.update_layout(
            height=160 + 28 * len(frame), legend={"orientation": "h", "y": 1.0, "yanchor": "bottom"}
        )
    else:
        fig.update_xaxes(title={"text": "Group"})
        fig.update_yaxes(title=value_title, range=None if axis is None else list(axis))
        fig.update_layout(legend={"orientation": "h", "y": -0.35}, margin={"b": 140})
    return fig


def _mark_cut_intervals(
    fig: go.Figure, frame: pd.DataFrame, axis: tuple[float, float], *, horizontal: bool
) -> None:
    """Name the far end of every interval that runs past the value axis (:func:`value_range`),
    at the edge it crosses, so a cut bar reads "→ 89,288" rather than as endless."""
    wrap = wrap_label_wide if horizontal else wrap_label
    grey = {"color": "#6B6B6B", "size": 11}
    for _, row in frame.iterrows():
        label = wrap(row["group"])
        for end, edge, outside, arrows in (
            ("high", axis[1], row["high"] > axis[1], ("→", "↑")),
            ("low", axis[0], row["low"] < axis[0], ("←", "↓")),
        ):
            if not outside:
                continue
            value = plain_number(float(row[end]), 3)
            if horizontal:
                text = f"→ {value}" if end == "high" else f"{value} ←"
                anchor = {"x": edge, "y": label, "xanchor": "right" if end == "high" else "left",
                          "yshift": 11}  # fmt: skip
            else:
                text = f"{arrows[1]} {value}"
                anchor = {"x": label, "y": edge, "yanchor": "top" if end == "high" else "bottom"}
            fig.add_annotation(text=text, showarrow=False, font=grey, **anchor)


def written_number(value: float, digits: int) -> str:
    """``value`` to ``digits`` significant digits, written out with thousands separators for
    everyday magnitudes (2,440 rather than 2.44e+03), scientific beyond them."""
    if pd.isna(value):
        return "undefined"
    if value != 0 and not 1e-4 <= abs(value) < 1e12:
        return f"{value:.{digits}g}"
    rounded = float(f"{value:.{digits}g}")
    magnitude = math.floor(math.log10(abs(rounded))) if rounded else 0
    text = f"{rounded:,.{max(0, digits - 1 - magnitude)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def release_summary(record: ReleaseRecord) -> str:
    """One sentence: the population estimate, as precise as its interval's width allows (or why
    it was withheld), and the widest group interval."""
    frame = _numeric_frame(record)
    whole = frame[frame["level"] == "population"].iloc[0]
    width = whole["high"] - whole["low"]
    if pd.isna(whole["estimate"]):
        reason = str(record.frame.loc[whole.name].get("flag") or "").strip()
        text = "The whole-population estimate was withheld" + (f" ({reason})." if reason else ".")
    elif pd.isna(width):
        text = f"Whole-population estimate {written_number(whole['estimate'], 4)}."
    else:
        text = (
            f"Whole-population estimate {at_precision(whole['estimate'], width)} (interval "
            f"{at_precision(whole['low'], width)} to {at_precision(whole['high'], width)})."
        )
    widths = (frame["high"] - frame["low"])[frame["level"] == "group"].dropna()
    if not widths.empty:
        widest = frame.loc[widths.idxmax()]
        text += (
            f" The widest group interval is {widest['group']}'s, "
            f"{written_number(widths.max(), 3)} wide: small groups pay most for privacy."
        )
    return text


def gauge_summary(left: float, total: float, symbol: str, ledger_name: str) -> str:
    """The ledger gauge in words (the name is the user's, escaped for markdown)."""
    share = left / total if total > 0 else 0.0
    return (
        f"The gauge: {symbol} = {left:.4g} of {total:.4g} left in “{as_written(ledger_name)}” "
        f"({share:.0%})."
    )
