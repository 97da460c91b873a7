"""Plotly figures and one-line summaries of the mean's Compare page.

Every builder takes tidy frames (from :mod:`dpcore.analyses.mean.simulate`) and returns a figure or
a sentence;
nothing here imports streamlit, so the figures are unit-tested directly. Errors come in as
normalized absolute errors (fractions) and are shown in percent of the true value, the population's
also in the value's units. Colours are the Okabe–Ito
colour-blind-safe palette.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpcore.analyses.mean.strategies import STRATEGY_NAMES
from strata_ui.charts_common import (
    group_sections_figure,
    interval_bars,
    log_axis,
    spread_band,
)
from strata_ui.group_selection import GroupSelection
from strata_ui.style import FONT, LEGEND_BELOW, PALETTE, SeriesStyle, plain_number, wrap_label
from strata_ui.text import chart_text

STRATEGY_COLOURS = dict(zip(STRATEGY_NAMES, PALETTE, strict=False))
STRATEGY_STYLE = SeriesStyle(STRATEGY_NAMES, STRATEGY_COLOURS)
AXIS_TITLES = {
    "global": "Error of the population mean (% of its true value)",
    "worst group": "Worst group's error (% of its true mean)",
    "parity": "Parity error (% of the true values)",  # defined in the page's caption
}
"""What each error axis shows, in words: every error is relative to the true value."""
ABSOLUTE_AXIS_TITLES = {
    "global": "Error of the population mean (% of the public range)",
    "worst group": "Worst group's error (% of the public range)",
    "parity": "Parity error (% of the public range)",
}
"""The same, for absolute errors measured against the public range's width."""
PER_GROUP = {
    "relative": "Average error, % of the group's true mean",
    "absolute": "Average error, % of the public range",
}
"""The axis of each group's mean error, by measure."""


def axis_title(metric: str, measure: str = "relative") -> str:
    """The axis title of ``metric``'s errors in ``measure`` ("relative" or "absolute")."""
    return (AXIS_TITLES if measure == "relative" else ABSOLUTE_AXIS_TITLES)[metric]


METRIC_NAMES = {
    "global": "global error",
    "worst group": "worst-group error",
    "parity": "parity error",
}


def percent_text(value: float) -> str:
    """A fraction as a percentage with three significant digits: 0.000204 → ``0.0204%``."""
    percent = 100 * value
    return f"{percent:,.0f}%" if abs(percent) >= 1000 else f"{plain_number(percent, 3)}%"


LABEL_PX_PER_CHAR, LINE_PX = 8, 14  # a tick label's width per character; a line's height
AXIS_PX = 80  # left of the plot: numeric ticks and the rotated axis title
LEGEND_PX = 100  # below the x-axis labels: its title, then the legend


FIXED_LABELS = {"automargin": False, "tickangle": 0, "ticklabeloverflow": "allow"}
"""Axis labels placed without measuring them (:func:`_figure`)."""


def _figure(
    traces: list[dict[str, Any]],
    title: str,
    x_title: str,
    y_title: str,
    *,
    left: int = AXIS_PX,
    bottom: int = 60,
    xaxis: Mapping[str, Any] | None = None,
    yaxis: Mapping[str, Any] | None = None,
    **layout: Any,
) -> dict[str, Any]:
    """A figure spec (a dict): the Compare page redraws its charts on every ε move, and plotly
    validates a spec once where ``st.plotly_chart`` reads it, in about half the time of building
    the same ``go.Figure`` property by property (which ``st.plotly_chart`` then validates again).

    Margins are fixed (``left``, ``bottom`` in pixels, room for the labels and titles the caller
    knows) and the legend sits below the axis title: the browser then draws each chart once,
    where automatic margins measured every label and drew it again, about a third of a
    chart's drawing time on every ε move. Tick labels are level and may reach past the plot
    (:data:`FIXED_LABELS`): otherwise plotly measures each one again to tilt or hide it."""
    return {
        "data": traces,
        "layout": {
            "title": {"text": title},
            "xaxis": {"title": {"text": x_title}, **FIXED_LABELS, **(xaxis or {})},
            "yaxis": {"title": {"text": y_title}, **FIXED_LABELS, **(yaxis or {})},
            "font": FONT,
            "legend": {**LEGEND_BELOW, "title": {"text": "Strategy "}},
            "margin": {"t": 60, "b": bottom, "l": left, "r": 20},
            **layout,
        },
    }


def _strategies(frame: pd.DataFrame) -> list[str]:
    """The strategies in ``frame`` in their first order (``unique`` keeps it, without a Python
    loop over every replicate's row)."""
    return list(frame["strategy"].unique())


def stack(by_strategy: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Concatenate per-strategy frames into one tidy frame with a ``strategy`` column."""
    return pd.concat(
        [frame.assign(strategy=strategy) for strategy, frame in by_strategy.items()],
        ignore_index=True,
    )


# 1: distributions of per-replicate errors, one panel per error, one box per strategy.

PANEL_GAP = 0.1
"""Space between two panels, as a fraction of the figure's width."""


def distributions_figure(
    metrics: pd.DataFrame, panels: Sequence[str], *, title: str, measure: str = "relative"
) -> dict[str, Any]:
    """Box plots (mean marked) over replicates, in %: one panel per error of ``panels``, side by
    side, one box per strategy (named on the left panel only); a figure spec.

    One figure, not one per error: each figure the browser redraws on an ε move costs about as
    much as the script's whole run (measured with ``bench_compare_browser.py``).
    ``metrics`` is a stacked :func:`strata_ui.pipeline.replicate_metrics` frame (column
    ``strategy``)."""
    strategies = _strategies(metrics)
    width = (1 - PANEL_GAP * (len(panels) - 1)) / len(panels)
    traces, axes = [], {}
    for i, metric in enumerate(panels):
        suffix = str(i + 1) if i else ""
        traces += [
            _box(100 * metrics.loc[metrics["strategy"] == strategy, metric].to_numpy(),
                 strategy, axes=(f"x{suffix}", f"y{suffix}"))
            for strategy in strategies
        ]  # fmt: skip
        left = i * (width + PANEL_GAP)
        # From just below 0 (errors are sizes) to a little past the largest: a strategy whose error
        # barely varies stood as half a box on the panel's right edge.
        top = 100 * float(metrics[metric].max()) if len(metrics) else 0.0
        axes[f"xaxis{suffix}"] = {
            "title": {"text": axis_title(metric, measure).replace(" (", "<br>(", 1)},
            "domain": [left, left + width], "anchor": f"y{suffix}", **FIXED_LABELS,
            **({"range": [-0.03 * top, 1.08 * top]} if np.isfinite(top) and top > 0 else {}),
        }  # fmt: skip
        if i:
            axes[f"yaxis{suffix}"] = {
                "anchor": f"x{suffix}", "matches": "y", "showticklabels": False, **FIXED_LABELS
            }  # fmt: skip
    widest = max((len(STRATEGY_STYLE.name(s)) for s in strategies), default=0)
    return _figure(
        traces, title, "", "", left=LABEL_PX_PER_CHAR * widest + 20, bottom=50 + 2 * LINE_PX,
        showlegend=False, height=320, **axes,
    )  # fmt: skip


def _box(percent: np.ndarray, strategy: str, *, axes: tuple[str, str]) -> dict[str, Any]:
    """One strategy's horizontal box of errors in % on the panel of ``axes``."""
    name = STRATEGY_STYLE.name(strategy)
    return {
        "type": "box", "x": percent, "name": name, "orientation": "h",
        "xaxis": axes[0], "yaxis": axes[1],
        "marker": {"color": STRATEGY_STYLE.colour(strategy)},
        "boxmean": True, "boxpoints": "outliers",
        "hovertemplate": "%{x:,.3r}%<extra>" + name + "</extra>",
    }  # fmt: skip


def unpublished_text(share: float, *, why: bool = True) -> str:
    """Words for the releases that published an estimate, given the share that did not."""
    text = f"{percent_text(1 - share)} of releases that published one"
    if why:
        text += (
            f" (the other {percent_text(share)} publish nothing: every group's noisy count fell "
            "below the minimum group size)"
        )
    return text


def distribution_summary(metrics: pd.DataFrame, metric: str, unit: str = "") -> str:
    """``"Median global error — One estimate per group: 0.0204% (±0.00837 hours_per_week); …"``;
    the error in the value's units only for the global error (``global_abs`` in ``metrics``)."""

    def median_text(rows: pd.DataFrame) -> str:
        published = rows[rows[metric].notna()]
        if published.empty:
            return "no estimate in any release"
        text = percent_text(float(np.median(published[metric])))
        if metric == "global" and "global_abs" in rows:
            text += f" (±{plain_number(float(np.median(published['global_abs'])), 3)}{' ' + unit if unit else ''})"
        if len(published) < len(rows):
            share = 1 - len(published) / len(rows)
            text += f", in the {unpublished_text(share, why=metric == 'global')}"
        return text

    parts = [
        f"{STRATEGY_STYLE.name(s)}: {median_text(metrics[metrics['strategy'] == s])}"
        for s in _strategies(metrics)
    ]
    return f"Median {METRIC_NAMES.get(metric, metric)} — " + "; ".join(parts) + "."


# 2: per-group error, groups ordered by size.


def group_tick(group: str, size: int) -> str:
    """A group's axis label with its size: ``White<br>× Male<br>n = 19,174``."""
    return f"{wrap_label(group)}<br>n = {int(size):,}"


def group_error_figure(
    groups: pd.DataFrame, *, log_y: bool = False, measure: str = "relative"
) -> dict[str, Any]:
    """Mean error per group (%) with 5–95% bars, one marker series per strategy; a figure spec.

    ``groups`` is a stacked :func:`strata_ui.pipeline.group_summary` frame: ``strategy``,
    ``group``, ``size``, ``mean``, ``q05``, ``q95``. Groups run from smallest to largest.
    """
    order = groups.drop_duplicates("group").sort_values("size", kind="stable")
    traces = []
    for strategy in _strategies(groups):
        rows = groups[groups["strategy"] == strategy].set_index("group").loc[order["group"]]
        mean, colour = 100 * rows["mean"].to_numpy(), STRATEGY_STYLE.colour(strategy)
        traces.append(
            {
                "type": "scatter",
                "x": [chart_text(g) for g in rows.index],
                "y": mean,
                "name": STRATEGY_STYLE.name(strategy),
                "mode": "markers",
                "marker": {"color": colour, "size": 9},
                "error_y": interval_bars(mean, 100 * rows["q05"], 100 * rows["q95"], colour),
                "customdata": np.column_stack(
                    [rows["size"], 100 * rows["q05"], 100 * rows["q95"], rows["abs_mean"]]
                ),
                "hovertemplate": (
                    "%{x}<br>n = %{customdata[0]:,}<br>mean error %{y:,.3r}% "
                    "(±%{customdata[3]:,.3r} in the value's units)"
                    "<br>5–95%: %{customdata[1]:,.3r}% – %{customdata[2]:,.3r}%"
                    f"<extra>{STRATEGY_STYLE.name(strategy)}</extra>"
                ),
            }
        )
    ticks = [group_tick(g, n) for g, n in zip(order["group"], order["size"], strict=True)]
    return _figure(
        traces,
        "Error in each group, smallest group first (bars: 5–95% of releases)",
        "Group, smallest to largest (n = people in the group)",
        PER_GROUP[measure],
        xaxis={
            "categoryorder": "array", "categoryarray": [chart_text(g) for g in order["group"]],
            "tickvals": [chart_text(g) for g in order["group"]], "ticktext": ticks, "tickangle": 0,
            "tickfont": {"size": 11},
        },
        # Labelled ticks over the markers and bars: Plotly's own log axis labelled its minor
        # ticks with bare digits (2, 5).
        yaxis=log_axis(100 * groups[["mean", "q05", "q95"]].to_numpy()) if log_y else {
            "type": "linear"
        },
        bottom=LINE_PX * max((tick.count("<br>") + 1 for tick in ticks), default=1) + LEGEND_PX,
        scattermode="group",
        height=440 + LINE_PX * 4,
    )  # fmt: skip


def many_groups_figure(
    groups: pd.DataFrame, selection: GroupSelection, *, log_x: bool = False,
    measure: str = "relative",
) -> go.Figure:  # fmt: skip
    """Mean error per group (%) with 5–95% bars for the groups of ``selection``, in its sections
    (all groups; or the smallest, the largest errors and a search's matches), one row each."""
    table = groups.assign(
        mean=100 * groups["mean"], low=100 * groups["q05"], high=100 * groups["q95"]
    )
    return group_sections_figure(
        table, selection, style=STRATEGY_STYLE, log_x=log_x, extra=("abs_mean",),
        title=(
            f"Error in each of the {selection.total:,} groups" if selection.complete
            else f"Error in {len(selection.shown):,} of the {selection.total:,} groups"
        ),
        x_title=f"{PER_GROUP[measure]} (5–95% bars)",
        hover=(
            "n = %{customdata[0]:,}<br>mean error %{x:,.3r}% "
            "(±%{customdata[3]:,.3r} in the value's units)"
            "<br>5–95%: %{customdata[1]:,.3r}% – %{customdata[2]:,.3r}%"
        ),
    )  # fmt: skip


def many_groups_summary(groups: pd.DataFrame, selection: GroupSelection) -> str:
    """The spread of the groups' errors in one sentence: how many groups the chart shows (when
    not all), and the median and 90th percentile over all groups of each strategy's mean
    error."""
    parts = []
    for strategy in _strategies(groups):
        errors = groups.loc[groups["strategy"] == strategy, "mean"]
        median, p90 = np.quantile(errors, [0.5, 0.9])
        parts.append(
            f"{STRATEGY_STYLE.name(strategy)}: median {percent_text(median)}, "
            f"90th percentile {percent_text(p90)}"
        )
    spread = "; ".join(parts)
    if selection.complete:
        return f"Mean error per group over the {selection.total:,} groups — {spread}."
    return (
        f"The chart shows {len(selection.shown):,} of {selection.total:,} groups. Mean error "
        f"per group over all of them — {spread}."
    )


def group_error_summary(groups: pd.DataFrame, unit: str = "") -> str:
    """The smallest and largest groups' mean errors under every strategy, relative and (with
    ``abs_mean`` in ``groups``) in the value's units: ``… 20% (±8.1 hours_per_week)``."""

    def error_text(rows: pd.DataFrame) -> str:
        text = percent_text(float(rows["mean"].iloc[0]))
        if "abs_mean" in rows:
            text += f" (±{plain_number(float(rows['abs_mean'].iloc[0]), 3)}{' ' + unit if unit else ''})"
        return text

    order = groups.drop_duplicates("group").sort_values("size", kind="stable")
    sentences = []
    for which, row in (("Smallest", order.iloc[0]), ("largest", order.iloc[-1])):
        rows = groups[groups["group"] == row["group"]]
        errors = ", ".join(
            f"{STRATEGY_STYLE.name(s)} {error_text(rows[rows['strategy'] == s])}"
            for s in _strategies(groups)
        )
        sentences.append(f"{which} group ({row['group']}, n = {int(row['size']):,}): {errors}")
    return "Mean group error — " + "; ".join(sentences) + "."


# 4: the privacy–utility curve.


def sweep_figure(
    sweep: pd.DataFrame, metric: str, *, symbol: str = "ε", measure: str = "relative"
) -> dict[str, Any]:
    """Mean ``metric`` (%) against the budget on log–log axes, with a 5–95% band per strategy;
    a figure spec."""
    traces = []
    rows = sweep[sweep["metric"] == metric].sort_values("budget")
    for strategy in _strategies(rows):
        part = rows[rows["strategy"] == strategy]
        x = part["budget"].to_numpy()
        colour, name = STRATEGY_STYLE.colour(strategy), STRATEGY_STYLE.name(strategy)
        traces += spread_band(
            x, 100 * part["q05"].to_numpy(), 100 * part["q95"].to_numpy(), colour=colour,
            group=strategy, names=(f"{name} 5%", f"{name} 95%"),
        )  # fmt: skip
        traces.append(
            {
                "type": "scatter", "x": x, "y": 100 * part["mean"].to_numpy(),
                "mode": "lines+markers", "name": name, "legendgroup": strategy,
                "line": {"color": colour, "width": 2.5},
                "hovertemplate": f"{symbol} = %{{x:,.3r}}<br>mean %{{y:,.3r}}%<extra>{name}</extra>",
            }
        )  # fmt: skip
    unit = "ε, pure DP" if symbol == "ε" else "ρ, zCDP"
    # Label whole decades only: minor log ticks (2, 5) crowd the axis.
    return _figure(
        traces,
        # The band on a line of its own: on a narrow screen the one-line title was cut.
        f"Privacy–utility curve: mean {METRIC_NAMES.get(metric, metric)} as the budget grows"
        "<br><sup>band: 5–95% of releases</sup>",
        f"Privacy budget per release ({unit}, log scale)",
        f"Average error, % of the {'true value' if measure == 'relative' else 'public range'} "
        "(log scale)",
        xaxis={"type": "log", "dtick": 1},
        yaxis={"type": "log", "dtick": 1},
        bottom=LINE_PX + LEGEND_PX,
        height=480,
    )


def sweep_summary(sweep: pd.DataFrame, metric: str, *, symbol: str = "ε") -> str:
    """Each strategy's mean error at the smallest and largest budget of the sweep."""
    rows = sweep[sweep["metric"] == metric]
    low, high = rows["budget"].min(), rows["budget"].max()
    parts = []
    for strategy in _strategies(rows):
        part = rows[rows["strategy"] == strategy].set_index("budget")
        ends = [
            "no estimate"
            if np.isnan(part.at[budget, "mean"])
            else percent_text(part.at[budget, "mean"])
            for budget in (low, high)
        ]
        parts.append(f"{STRATEGY_STYLE.name(strategy)} {ends[0]} → {ends[1]}")
        if "published" in part and (part["published"] < 1).any():
            parts[-1] += (
                " (over the releases that published one; up to "
                f"{percent_text(1 - part['published'].min())} of them publish nothing, at "
                f"{symbol} = {part['published'].idxmin():g}: every group's noisy count fell "
                "below the minimum group size)"
            )
    return (
        f"Mean {METRIC_NAMES.get(metric, metric)} from {symbol} = {low:g} to {symbol} = {high:g} — "
        + "; ".join(parts)
        + "."
    )
