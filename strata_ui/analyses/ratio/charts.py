"""Plotly figures, tables and one-sentence summaries for the calibration-ratio analysis.

Every builder takes a tidy frame (from :mod:`dpcore.analyses.ratio`) and returns a figure, a frame
for display, or a sentence; nothing here imports streamlit, so everything is unit-tested directly.
Colours are the Okabe–Ito palette of :mod:`strata_ui.style`, and every method also has
its own marker symbol or line dash, so no chart relies on colour alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore.analyses.ratio.intervals import RatioComparison
from dpcore.analyses.ratio.preview import ALL_GROUPS
from dpcore.foundations.metrics import binomial_band
from strata_ui.charts_common import budget_marker, interval_bars
from strata_ui.style import FONT, PALETTE
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
AXIS_CAP = 3.0  # the preview's ratio axis stops here; wider intervals run off it (hover shows them)
ROW_HEIGHT = 34  # pixels per group on the horizontal charts


def _method(method: str) -> str:
    return METHOD_NAMES.get(method, method)


def method_in_text(method: str) -> str:
    """The method's name inside a sentence: ``analytical correction``, ``Monte Carlo correction``."""
    name = _method(method)
    return name if name.startswith("Monte Carlo") else name[:1].lower() + name[1:]


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str, rows: int) -> go.Figure:
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


def _fmt(value: float | None) -> str:
    if value is None or not np.isfinite(value):
        return "—"
    return f"{value:.3g}"


# ---- the preview on the Estimator page ----------------------------------------------------------


def preview_figure(
    frame: pd.DataFrame,
    *,
    level: float,
    x_title: str,
    show_exact: bool = True,
) -> go.Figure:
    """Each group's DP ratio with its interval (a forest plot), the global ratio, and a line at 1.

    ``frame`` has one row per group then the global ratio (:meth:`RatioResult.frame`) with the
    columns level, group, estimate, low, high, flag, rows and (optionally) exact. Groups without
    an interval get a note on the chart instead of a point; the table says why.
    """
    frame = frame.reset_index(drop=True)
    ticks = [group_tick(g, r) for g, r in zip(frame["group"], frame["rows"], strict=True)]
    frame = frame.assign(tick=ticks)
    finite = pd.concat([frame["high"], frame["estimate"]], ignore_index=True).astype(float)
    if show_exact and "exact" in frame:
        finite = pd.concat([finite, frame["exact"].astype(float)], ignore_index=True)
    finite = finite[np.isfinite(finite)]
    top = max(1.2, float(finite.max()) if not finite.empty else 1.2) * 1.05
    upper = min(top, AXIS_CAP)
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
                    "%{y}<br>ratio %{x:.3g}<br>"
                    f"{level:.0%} CI " + "%{customdata[0]:.3g} to %{customdata[1]:.3g}"
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
                hovertemplate="%{y}<br>exact ratio %{x:.3g} (confidential)<extra></extra>",
            )
        )
    flagged = frame[frame["flag"] != ""]
    for _, row in flagged.iterrows():
        fig.add_annotation(
            x=0.02 * upper,
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
            x=upper, y=row["tick"], text=f"→ {float(row['high']):.3g}", showarrow=False,
            xanchor="right", yshift=11, font={"color": REFERENCE_COLOUR, "size": 11},
        )  # fmt: skip
    _reference_line(fig, 1.0, "1 = calibrated")
    fig.update_yaxes(
        categoryorder="array", categoryarray=list(frame["tick"]), autorange="reversed",
        automargin=True,
    )  # fmt: skip
    fig.update_xaxes(range=[0, upper], zeroline=False)
    title = f"Calibration ratio per group with {level:.0%} confidence intervals (preview)"
    return _layout(fig, title, x_title, "Group (n = rows)", len(frame))


def _reference_line(fig: go.Figure, x: float, name: str) -> None:
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
            f"All groups together: ratio {_fmt(whole['estimate'])} ({level:.0%} CI "
            f"{_fmt(whole['low'])} to {_fmt(whole['high'])})."
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
        f"p = {comparison.p_value:.2g}"
    )
    if scale == "log":
        text += f" (ratio of ratios {math.exp(comparison.difference):.3g})"
    alpha = 1 - comparison.level
    if comparison.p_value < alpha:
        verdict = f"the two groups are calibrated differently (p < {alpha:.2g})"
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
        yield method, part, {"y": _ticks(part), "orientation": "h", "name": _method(method)}


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
                    f"<extra>{_method(method)}</extra>"
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
    _reference_line(fig, level, f"nominal {level:.0%}")
    fig.update_layout(scattermode="group")
    groups = _groups_down(fig, frame)
    fig.update_xaxes(range=[0, 1.02], tickformat=".0%")
    return _layout(
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
        parts.append(f"{_method(method)} {inside} of {len(part)}{note}")
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


def log_ticks(low: float, high: float) -> list[float]:
    """Round values 1, 2, 5 × 10^k covering [low, high], for a readable log axis."""
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    ticks = [m * 10.0**k for k in range(first, last + 1) for m in (1, 2, 5)]
    inside = [v for v in ticks if low / 1.5 <= v <= high * 1.5]
    return [float(f"{v:.6g}") for v in inside] or [float(f"{low:.2g}")]


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
        name = f"{_method(method)} — {COMPOSITION_NAMES.get(composition, composition)}"
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
                    f"{symbol} = " + "%{x:.3g}<br>median width %{y:.3g}"
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
        fig.update_yaxes(tickvals=ticks, ticktext=[f"{v:g}" for v in ticks])
    fig.update_yaxes(type="log")
    unit = "ε" if symbol == "ε" else "ρ, zCDP"
    fig = _layout(
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
                f"{method_in_text(method)} {_fmt(widths.get(low))} → {_fmt(widths.get(high))}"
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
                + " score %{x:.3g}"
                + f"<extra>{_method(method)}</extra>",
                **common,
            )
        )
    fig.update_layout(barmode="group")
    groups = _groups_down(fig, frame)
    fig.update_xaxes(type="log", dtick=1)  # whole decades: minor log labels crowd the axis
    return _layout(
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
    wins = "; ".join(f"{_method(m)} {counts[m]}" for m in counts.index)
    whole = valid[valid["group"] == ALL_GROUPS]
    scores = ", ".join(f"{method_in_text(m)} {s:.3g}" for m, s in zip(
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
