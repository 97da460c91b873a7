"""The Compare page's figures for the calibration ratio: coverage, width and interval score of
simulated releases per method, and Miao & Li's Table 1 beside our rerun.

Every builder takes a tidy frame (from :mod:`dpcore.analyses.ratio`) and returns a figure, a frame
for display, or a sentence; nothing here imports streamlit. Styles (colours, markers, dashes)
are the preview's, from :mod:`strata_ui.analyses.ratio.charts`.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore.analyses.ratio.preview import ALL_GROUPS
from dpcore.foundations.metrics import binomial_band
from strata_ui.analyses.ratio.charts import (
    COMPOSITION_DASHES,
    COMPOSITION_NAMES,
    METHOD_COLOURS,
    METHOD_SYMBOLS,
    REFERENCE_COLOUR,
    group_tick,
    method_in_text,
    method_label,
    ratio_layout,
    reference_line,
    short_number,
)
from strata_ui.charts_common import budget_marker, log_ticks
from strata_ui.style import FONT, PALETTE, plain_number


def _ticks(frame: pd.DataFrame) -> pd.Series:
    return pd.Series(
        [group_tick(g, r) for g, r in zip(frame["group"], frame["rows"], strict=True)],
        index=frame.index,
    )


def _by_method(frame: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame, dict]]:
    """Each method's rows, in the frame's order, with what its horizontal trace shares with the
    other methods' (the group ticks on y, the method's name)."""
    for method in dict.fromkeys(frame["method"]):
        part = frame[frame["method"] == method]
        yield method, part, {"y": _ticks(part), "orientation": "h", "name": method_label(method)}


def _groups_down(fig: go.Figure, frame: pd.DataFrame) -> int:
    """The groups down the y axis in the frame's order, the first at the top; returns how many."""
    order = list(dict.fromkeys(_ticks(frame)))
    fig.update_yaxes(categoryorder="array", categoryarray=order, autorange="reversed",
                     automargin=True)  # fmt: skip
    return len(order)


def coverage_figure(frame: pd.DataFrame, *, level: float, title: str) -> go.Figure:
    """Coverage per group and method with the nominal level and its binomial band.

    ``frame`` is :func:`dpcore.analyses.ratio.simulate_ratio_intervals`' output (group, rows,
    method, coverage, flagged, reps).
    """
    reps = int(frame["reps"].iloc[0])
    low, high = binomial_band(level, reps)
    fig = go.Figure()
    for method, part, common in _by_method(frame):
        fig.add_trace(
            go.Scatter(
                x=part["coverage"],
                mode="markers",
                marker={
                    "color": METHOD_COLOURS.get(method, PALETTE[4]),
                    "symbol": METHOD_SYMBOLS.get(method, "circle"),
                    "size": 11,
                    "line": {"width": 1, "color": "white"},
                },
                customdata=part[["flagged"]].to_numpy(),
                hovertemplate=(
                    "%{y}<br>coverage %{x:.1%}<br>degenerate releases %{customdata[0]:.1%}"
                    f"<extra>{method_label(method)}</extra>"
                ),
                **common,
            )
        )
    fig.add_vrect(x0=low, x1=high, fillcolor=PALETTE[2], opacity=0.2, line_width=0,
                  layer="below")  # fmt: skip
    fig.add_trace(
        go.Scatter(
            x=[None], y=[None], mode="markers", name=f"binomial band ({reps:,} releases)",
            marker={"symbol": "square", "size": 14, "color": PALETTE[2], "opacity": 0.35},
        )
    )  # fmt: skip
    reference_line(fig, level, f"nominal {level:.0%}")
    fig.update_layout(scattermode="group")
    groups = _groups_down(fig, frame)
    fig.update_xaxes(range=[0, 1.02], tickformat=".0%")
    return ratio_layout(
        fig,
        title,
        "Coverage: share of simulated intervals that contain the exact ratio (%)",
        "Group (n = rows)",
        groups,
    )


def coverage_summary(frame: pd.DataFrame, *, level: float) -> str:
    """How many groups each method keeps within the band, and the weakest group."""
    reps = int(frame["reps"].iloc[0])
    low, high = binomial_band(level, reps)
    parts = []
    for method in dict.fromkeys(frame["method"]):
        part = frame[(frame["method"] == method) & frame["coverage"].notna()]
        inside = int(((part["coverage"] >= low) & (part["coverage"] <= high)).sum())
        above = int((part["coverage"] > high).sum())
        note = f", {above} above" if above else ""
        parts.append(f"{method_label(method)} {inside} of {len(part)}{note}")
    text = (
        f"Within the band {low:.1%}–{high:.1%} around the nominal {level:.0%}: "
        + "; ".join(parts)
        + "."
    )
    best = frame[frame["method"] != "none"].dropna(subset=["coverage"])
    if not best.empty:
        worst = best.loc[best["coverage"].idxmin()]
        text += (
            f" Lowest corrected coverage: {worst['group']} ({method_in_text(worst['method'])} "
            f"{worst['coverage']:.0%}, with {worst['flagged']:.0%} of releases degenerate)."
        )
    return text


def width_figure(
    sweep: pd.DataFrame,
    *,
    symbol: str,
    group: str,
    current: float | None = None,
) -> go.Figure:
    """Median interval width against the budget, one line per method and accounting (log–log).

    ``sweep`` has columns budget, composition, method, group, median_width, flagged.
    """
    rows = sweep[sweep["group"] == group].sort_values("budget")
    fig = go.Figure()
    for (composition, method), part in rows.groupby(["composition", "method"], sort=False):
        name = f"{method_label(method)} — {COMPOSITION_NAMES.get(composition, composition)}"
        fig.add_trace(
            go.Scatter(
                x=part["budget"],
                y=part["median_width"],
                mode="lines+markers",
                name=name,
                line={
                    "color": METHOD_COLOURS.get(method, PALETTE[4]),
                    "dash": COMPOSITION_DASHES.get(composition, "dot"),
                    "width": 2.5,
                },
                marker={"symbol": METHOD_SYMBOLS.get(method, "circle"), "size": 8},
                customdata=part[["flagged"]].to_numpy(),
                hovertemplate=(
                    f"{symbol} = " + "%{x:,.3r}<br>median width %{y:,.3r}"
                    "<br>degenerate releases %{customdata[0]:.1%}" + f"<extra>{name}</extra>"
                ),
            )
        )
    if current is not None:
        values = rows["median_width"].astype(float)
        values = values[np.isfinite(values) & (values > 0)]
        y_low, y_high = (values.min(), values.max()) if not values.empty else (1e-3, 1.0)
        fig.add_trace(budget_marker(current, y_low, y_high, symbol=symbol, colour=REFERENCE_COLOUR))
    budgets = sorted(rows["budget"].unique())
    fig.update_xaxes(type="log", tickvals=budgets, ticktext=[f"{b:g}" for b in budgets])
    values = rows["median_width"].astype(float)
    values = values[np.isfinite(values) & (values > 0)]
    if not values.empty:
        ticks = log_ticks(float(values.min()), float(values.max()))
        fig.update_yaxes(tickvals=ticks, ticktext=[plain_number(v) for v in ticks])
    fig.update_yaxes(type="log")
    unit = "ε" if symbol == "ε" else "ρ, zCDP"
    fig = ratio_layout(
        fig,
        f"Interval width as the budget grows — {group}",
        f"Privacy budget per release ({unit}, log scale)",
        "Median interval width (ratio units, log scale)",
        8,
    )
    fig.update_layout(height=460, legend={"orientation": "h", "y": -0.25, "yanchor": "top"},
                      margin={"b": 140})  # fmt: skip
    return fig


def width_summary(sweep: pd.DataFrame, *, symbol: str, group: str) -> str:
    """Each line's median width at the smallest and largest budget of the sweep."""
    rows = sweep[sweep["group"] == group]
    low, high = rows["budget"].min(), rows["budget"].max()
    parts = []
    for composition, block in rows.groupby("composition", sort=False):
        lines = []
        for method, part in block.groupby("method", sort=False):
            widths = part.set_index("budget")["median_width"]
            lines.append(
                f"{method_in_text(method)} {short_number(widths.get(low))} → {short_number(widths.get(high))}"
            )
        parts.append(f"{COMPOSITION_NAMES.get(composition, composition)}: {', '.join(lines)}")
    return (
        f"Median width for {group} from {symbol} = {low:g} to {symbol} = {high:g} — "
        + "; ".join(parts)
        + "."
    )


def _score_column(frame: pd.DataFrame) -> str:
    return "median_score" if "median_score" in frame else "score"


def score_figure(frame: pd.DataFrame, *, title: str) -> go.Figure:
    """Median interval score per group and method (the mean if the frame has no median), as
    horizontal bars on a log axis."""
    column = _score_column(frame)
    which = "Median" if column == "median_score" else "Mean"
    fig = go.Figure()
    for method, part, common in _by_method(frame):
        fig.add_trace(
            go.Bar(
                x=part[column],
                marker={
                    "color": METHOD_COLOURS.get(method, PALETTE[4]),
                    "pattern": {"shape": {"none": "x", "monte_carlo": "/"}.get(method, "")},
                },
                hovertemplate="%{y}<br>"
                + which.lower()
                + " score %{x:,.3r}"
                + f"<extra>{method_label(method)}</extra>",
                **common,
            )
        )
    fig.update_layout(barmode="group")
    groups = _groups_down(fig, frame)
    fig.update_xaxes(type="log", dtick=1)  # whole decades: minor log labels crowd the axis
    return ratio_layout(
        fig,
        title,
        f"{which} interval score (ratio units, log scale; lower is better)",
        "Group (n = rows)",
        groups * 1.6,
    )


def score_summary(frame: pd.DataFrame) -> str:
    """Which method has the lowest score in how many groups, and the global scores."""
    column = _score_column(frame)
    which = "median" if column == "median_score" else "mean"
    valid = frame.dropna(subset=[column])
    if valid.empty:
        return "No interval could be formed, so there is no score to compare."
    best = valid.loc[valid.groupby("group", sort=False)[column].idxmin()]
    counts = best["method"].value_counts()
    wins = "; ".join(f"{method_label(m)} {counts[m]}" for m in counts.index)
    whole = valid[valid["group"] == ALL_GROUPS]
    scores = ", ".join(f"{method_in_text(m)} {plain_number(s, 3)}" for m, s in zip(
        whole["method"], whole[column], strict=True))  # fmt: skip
    return (
        f"Lowest {which} score (the best trade-off of width and misses) in {best.shape[0]} groups: "
        f"{wins}. {ALL_GROUPS}: {scores}."
    )


# ---- the paper's Table 1 ------------------------------------------------------------------------


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
                    name=method_label(method),
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
                    + f"<extra>{method_label(method)}</extra>",
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
            "Method": comparison["method"].map(method_label),
        }
    )
    for metric in ("width", "coverage", "score"):
        table[f"{metric.capitalize()} (ours)"] = comparison[f"ours_{metric}"]
        table[f"{metric.capitalize()} (paper)"] = comparison[f"paper_{metric}"]
    if "flagged" in comparison:
        table["Degenerate (ours)"] = comparison["flagged"]
    return table
