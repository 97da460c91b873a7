"""Plotly figures, tables and one-sentence summaries for the calibration-ratio analysis.

Every builder takes a tidy frame (from :mod:`dpcore.analyses.ratio`) and returns a figure, a frame
for display, or a sentence; nothing here imports streamlit, so everything is unit-tested directly.
Colours are the Okabe–Ito palette of :mod:`strata_ui.style`, and every method also has
its own marker symbol or line dash, so no chart relies on colour alone.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpcore.analyses.ratio.intervals import RatioComparison
from strata_ui.charts_common import interval_bars
from strata_ui.style import FONT, PALETTE, plain_number
from strata_ui.text import chart_text

METHOD_NAMES = {
    "public": "Public (no noise)",
    "none": "No correction",
    "monte_carlo": "Monte Carlo correction",
    "analytical": "Analytical correction",
}
METHOD_COLOURS = {
    "public": PALETTE[2],
    "none": PALETTE[3],
    "monte_carlo": PALETTE[1],
    "analytical": PALETTE[0],
}
METHOD_SYMBOLS = {
    "public": "star",
    "none": "x",
    "monte_carlo": "diamond",
    "analytical": "circle",
}
COMPOSITION_NAMES = {"basic": "basic composition (paper)", "zcdp": "zCDP accounting"}
COMPOSITION_DASHES = {"basic": "solid", "zcdp": "dash"}
GROUP_COLOUR, GLOBAL_COLOUR, EXACT_COLOUR = PALETTE[0], PALETTE[3], PALETTE[1]
REFERENCE_COLOUR = "#555555"
ROW_HEIGHT = 34  # pixels per group on the horizontal charts


def method_label(method: str) -> str:
    return METHOD_NAMES.get(method, method)


def method_in_text(method: str) -> str:
    """The method's name inside a sentence: ``analytical correction``, ``Monte Carlo correction``."""
    name = method_label(method)
    return name if name.startswith("Monte Carlo") else name[:1].lower() + name[1:]


def ratio_layout(fig: go.Figure, title: str, x_title: str, y_title: str, rows: int) -> go.Figure:
    # The title sits at the very top and the legend (up to two rows) just above the plot, with
    # room for both in the top margin, so a wrapping legend never runs into the title.
    fig.update_layout(
        title={"text": title, "yref": "container", "y": 1, "yanchor": "top", "pad": {"t": 12}},
        xaxis_title={"text": x_title},
        yaxis_title={"text": y_title},
        font=FONT,
        height=max(320, 190 + ROW_HEIGHT * rows),
        margin={"t": 110, "b": 60, "l": 10, "r": 20},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.01, "x": 0},
    )
    return fig


def group_tick(group: str, rows: int | float | None) -> str:
    """A group's axis label with its size: ``Black × Female (n = 1,555)``."""
    if rows is None or (isinstance(rows, float) and math.isnan(rows)):
        return chart_text(group)
    return f"{chart_text(group)} (n = {int(rows):,})"


def ratio_axis_title(s_column: str, y_column: str, w_column: str | None = None) -> str:
    """``Calibration ratio Σ score / Σ label (unitless; 1 = calibrated)``."""
    w = f"{w_column}·" if w_column else ""
    return f"Calibration ratio Σ {w}{s_column} / Σ {w}{y_column} (unitless; 1 = calibrated)"


def short_number(value: float | None) -> str:
    if value is None or not np.isfinite(value):
        return "—"
    return f"{plain_number(value, 3)}"


# ---- the preview on the Estimator page ----------------------------------------------------------


def preview_figure(
    frame: pd.DataFrame,
    *,
    level: float,
    x_title: str,
    show_exact: bool = False,
) -> go.Figure:
    """Each group's DP ratio with its interval (a forest plot), the global ratio, and a line at 1.

    ``frame`` has one row per group then the global ratio (:meth:`RatioResult.frame`) with the
    columns level, group, estimate, low, high, flag, rows and (optionally) exact. Groups without
    an interval get a note on the chart instead of a point; the table says why.
    """
    frame = frame.reset_index(drop=True)
    ticks = [group_tick(g, r) for g, r in zip(frame["group"], frame["rows"], strict=True)]
    frame = frame.assign(tick=ticks)
    lower, upper = ratio_axis(frame, show_exact=show_exact)
    fig = go.Figure()
    usable = frame[frame["flag"] == ""]
    for part, colour, symbol, name in (
        (usable[usable["level"] == "group"], GROUP_COLOUR, "circle", "Group ratio (DP)"),
        (usable[usable["level"] != "group"], GLOBAL_COLOUR, "diamond", "All groups (recombined)"),
    ):
        if part.empty:
            continue
        estimate = part["estimate"].astype(float)
        fig.add_trace(
            go.Scatter(
                x=estimate,
                y=part["tick"],
                mode="markers",
                name=name,
                marker={"color": colour, "size": 11, "symbol": symbol},
                error_x=interval_bars(estimate, part["low"], part["high"], colour, thickness=2),
                customdata=np.column_stack([part["low"], part["high"]]),
                hovertemplate=(
                    "%{y}<br>ratio %{x:,.3r}<br>"
                    f"{level:.0%} CI " + "%{customdata[0]:,.3r} to %{customdata[1]:,.3r}"
                    "<extra></extra>"
                ),
            )
        )
    if show_exact and "exact" in frame:
        exact = frame[np.isfinite(frame["exact"].astype(float))]
        fig.add_trace(
            go.Scatter(
                x=exact["exact"].astype(float),
                y=exact["tick"],
                mode="markers",
                name="Exact ratio (confidential)",
                marker={
                    "color": EXACT_COLOUR,
                    "size": 9,
                    "symbol": "line-ns-open",
                    "line": {"width": 3, "color": EXACT_COLOUR},
                },
                hovertemplate="%{y}<br>exact ratio %{x:,.3r} (confidential)<extra></extra>",
            )
        )
    flagged = frame[frame["flag"] != ""]
    for _, row in flagged.iterrows():
        fig.add_annotation(
            x=lower + 0.02 * (upper - lower),
            y=row["tick"],
            text=f"no interval: {short_reason(row['flag'])}",
            showarrow=False,
            xanchor="left",
            font={"color": REFERENCE_COLOUR, "size": 12},
        )
    if flagged.shape[0]:  # keep every group on the axis even without a point
        fig.add_trace(
            go.Scatter(
                x=[None] * len(flagged), y=flagged["tick"], mode="markers", showlegend=False,
                hoverinfo="skip",
            )
        )  # fmt: skip
    for _, row in usable[usable["high"].astype(float) > upper].iterrows():
        fig.add_annotation(
            x=upper, y=row["tick"], text=f"→ {plain_number(float(row['high']), 3)}", showarrow=False,
            xanchor="right", yshift=11, font={"color": REFERENCE_COLOUR, "size": 11},
        )  # fmt: skip
    for _, row in usable[usable["low"].astype(float) < lower].iterrows():
        fig.add_annotation(
            x=lower, y=row["tick"], text=f"{plain_number(float(row['low']), 3)} ←", showarrow=False,
            xanchor="left", yshift=11, font={"color": REFERENCE_COLOUR, "size": 11},
        )  # fmt: skip
    reference_line(fig, 1.0, "1 = calibrated")
    fig.update_yaxes(
        categoryorder="array", categoryarray=list(frame["tick"]), autorange="reversed",
        automargin=True,
    )  # fmt: skip
    fig.update_xaxes(range=[lower, upper], zeroline=False)
    title = f"Calibration ratio per group with {level:.0%} confidence intervals (preview)"
    return ratio_layout(fig, title, x_title, "Group (n = rows)", len(frame))


def ratio_axis(frame: pd.DataFrame, *, show_exact: bool) -> tuple[float, float]:
    """The preview's ratio axis, fitted to what it shows: the estimates (and exact ratios when
    shown), widened by the typical (median) interval half-width and padded, from 0 at the
    lowest (ratios of sums of non-negative values are never negative), with 1 (calibrated) in
    view when the estimates are near it. An income-per-hour ratio of 1,460 sits in the chart,
    not past a fixed edge at 3; one group's much wider interval runs off it, with an arrow."""
    usable = frame[frame["flag"] == ""]
    values = usable["estimate"].astype(float)
    if show_exact and "exact" in frame:
        values = pd.concat([values, frame["exact"].astype(float)], ignore_index=True)
    values = values[np.isfinite(values)]
    if values.empty:
        return 0.0, 1.2
    halves = ((usable["high"].astype(float) - usable["low"].astype(float)) / 2).dropna()
    spread = float(halves.median()) if not halves.empty else 0.0
    low, high = float(values.min()) - spread, float(values.max()) + spread
    if high < 3:  # a calibration ratio: keep 1 in view
        low, high = min(low, 1.0), max(high, 1.0)
    pad = 0.08 * (high - low) if high > low else max(0.1 * abs(high), 0.1)
    return max(low - pad, 0.0), high + pad


def reference_line(fig: go.Figure, x: float, name: str) -> None:
    """A dashed vertical line at ``x`` over the whole plot, named in the legend."""
    line = {"color": REFERENCE_COLOUR, "dash": "dash", "width": 1.5}
    fig.add_vline(x=x, line=line)
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=line, name=name))


def short_reason(flag: str) -> str:
    """The flag's first clause: ``noisy Σwy ≤ 0``."""
    return str(flag).split(":")[0]


def preview_summary(frame: pd.DataFrame, *, level: float) -> str:
    """One or two sentences: the global ratio, which groups' intervals exclude 1, which have none."""
    whole = frame[frame["level"] != "group"].iloc[0]
    groups = frame[frame["level"] == "group"]
    if whole["flag"] == "":
        text = (
            f"All groups together: ratio {short_number(whole['estimate'])} ({level:.0%} CI "
            f"{short_number(whole['low'])} to {short_number(whole['high'])})."
        )
    else:
        text = f"All groups together: no interval ({whole['flag']})."
    usable = groups[groups["flag"] == ""]
    above = usable[usable["low"].astype(float) > 1]
    below = usable[usable["high"].astype(float) < 1]
    if above.empty and below.empty:
        text += f" Every interval of the {len(usable)} groups with one includes 1"
    else:
        parts = [f"{g} above 1" for g in above["group"]] + [f"{g} below 1" for g in below["group"]]
        text += (
            f" {len(above) + len(below)} of {len(usable)} groups with an interval exclude 1 "
            f"({'; '.join(parts)})"
        )
    flagged = groups[groups["flag"] != ""]
    if not flagged.empty:
        text += (
            f"; {len(flagged)} group{'s' if len(flagged) > 1 else ''} "
            f"{'have' if len(flagged) > 1 else 'has'} no interval ({', '.join(flagged['group'])})"
        )
    return text + "."


def preview_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The preview as a table for display: group, rows, exact and DP ratio, interval, status."""
    table = pd.DataFrame(
        {
            "Group": frame["group"],
            "Rows": frame["rows"],
            "DP estimate": frame["estimate"].astype(float),
            "CI low": frame["low"].astype(float),
            "CI high": frame["high"].astype(float),
            "Width": frame["high"].astype(float) - frame["low"].astype(float),
            "Status": [
                "interval formed" if flag == "" else f"no interval: {flag}"
                for flag in frame["flag"]
            ],
        }
    )
    if "exact" in frame:
        table.insert(2, "Exact ratio (confidential)", frame["exact"].astype(float))
    return table


def comparison_sentence(
    comparison: RatioComparison, group_a: str, group_b: str, *, scale: str
) -> str:
    """``White × Male − Black × Female: difference −0.14 (95% CI −0.5 to 0.22), z = −0.8,
    p = 0.42 — no evidence that their calibration differs.``"""
    if comparison.flag is not None:
        return (
            f"{group_a} versus {group_b}: no comparison, because {comparison.flag} (a group "
            "without an interval has no usable variance)."
        )
    what = "difference of log ratios" if scale == "log" else "difference of ratios"
    text = (
        f"{group_a} − {group_b}: {what} {comparison.difference:+.3g} ({comparison.level:.0%} CI "
        f"{comparison.low:+.3g} to {comparison.high:+.3g}), z = {comparison.z:.2f}, "
        f"p = {plain_number(comparison.p_value, 2)}"
    )
    if scale == "log":
        text += f" (ratio of ratios {plain_number(math.exp(comparison.difference), 3)})"
    alpha = 1 - comparison.level
    if comparison.p_value < alpha:
        verdict = f"the two groups are calibrated differently (p < {plain_number(alpha, 2)})"
    else:
        verdict = "no evidence at this level that their calibration differs"
    return f"{text} — {verdict}."


def comparison_table(comparison: RatioComparison, group_a: str, group_b: str) -> pd.DataFrame:
    """The comparison as a one-row table."""
    return pd.DataFrame(
        [
            {
                "Group A": group_a,
                "Group B": group_b,
                "Difference A − B": comparison.difference,
                "CI low": comparison.low,
                "CI high": comparison.high,
                "z": comparison.z,
                "p-value": comparison.p_value,
            }
        ]
    )


def noise_table(rows: list[dict]) -> pd.DataFrame:
    """Noise per sum under each accounting, side by side (rows built by the UI)."""
    return pd.DataFrame(rows)


# ---- simulation views (Compare page) ------------------------------------------------------------
