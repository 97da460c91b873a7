"""Plotly figures for the Strata page: group sizes and the paper's Figure 1 for this dataset.

Builders take plain arrays or tidy frames and return ``plotly.graph_objects.Figure``; they never
import streamlit. The curves come from :mod:`dpcore.foundations.theory` (Rosenblatt, Stoyanovich & Musco,
AAAI 2024, Prop. 8 and Thm. 9). Colours are the colour-blind-safe Okabe–Ito palette.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpcore.foundations import theory
from dpcore.foundations.labels import plural
from strata_ui.charts_common import log_axis
from strata_ui.constants import ALPHA_AXIS, SMALL_GROUP_SHARE
from strata_ui.style import BLACK, BLUE, GREEN, VERMILLION, three_digits
from strata_ui.text import as_written, chart_text

# Above this many groups the bar labels would overlap; the axis then just counts groups.
MAX_LABELLED_BARS = 40

WORST = "Most extra noise: every group the same size"
EXPECTED = "Typical for groups as uneven as α"
BEST = "Least extra noise: one group holds almost everyone"
CURVES = (WORST, EXPECTED, BEST)
FORMULAS = {
    WORST: "k·log(n/k), Prop. 8",
    EXPECTED: "k(ψ(α) − ψ(kα) + log n) if the shares were Dirichlet(α), Thm. 9",
    BEST: "(k − 1) + log(n − k)",
}
"""The paper's formula of each curve (AAAI 2024), shown when the pointer is on it."""
_CURVE_STYLE = {
    WORST: {"color": VERMILLION, "dash": "dash"},
    EXPECTED: {"color": BLUE, "dash": "solid"},
    BEST: {"color": GREEN, "dash": "dot"},
}


def group_size_frame(
    labels: Sequence[str], sizes: Sequence[int], *, small_share: float = SMALL_GROUP_SHARE
) -> pd.DataFrame:
    """One row per group, largest first: ``group``, ``size``, ``share`` and ``small``.

    ``small`` flags groups holding less than ``small_share`` of all rows: their DP estimates
    are the noisiest.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if len(labels) != sizes.size:
        raise ValueError(f"need one size per label, got {len(labels)} labels, {sizes.size} sizes")
    frame = pd.DataFrame({"group": list(labels), "size": sizes})
    frame["share"] = frame["size"] / frame["size"].sum()
    frame["small"] = frame["share"] < small_share
    return frame.sort_values(["size", "group"], ascending=[False, True], ignore_index=True)


def group_size_chart(frame: pd.DataFrame, *, small_share: float = SMALL_GROUP_SHARE) -> go.Figure:
    """Bar chart of group sizes (log scale), largest first, small groups in a second colour.

    ``frame`` is the output of :func:`group_size_frame`.
    """
    k = len(frame)
    fig = go.Figure()
    names = {
        False: f"Groups with ≥ {small_share:.0%} of rows",
        True: f"Small groups (< {small_share:.0%} of rows)",
    }
    for small, colour in ((False, BLUE), (True, VERMILLION)):
        part = frame[frame["small"] == small]
        if part.empty:
            continue
        fig.add_trace(
            go.Bar(
                x=[chart_text(group) for group in part["group"]],
                y=part["size"],
                customdata=part["share"],
                name=names[small],
                marker_color=colour,
                hovertemplate="<b>%{x}</b><br>%{y:,} rows<br>%{customdata:.2%} of all rows"
                "<extra></extra>",
            )
        )
    labelled = k <= MAX_LABELLED_BARS
    empty = int((frame["size"] == 0).sum())
    # A log axis has no 0: a declared group with no rows has no bar, and the title says so.
    without_rows = f"; {empty:,} with no rows, no bar" if empty else ""
    fig.update_layout(
        title=f"How many people each group holds ({k:,} groups, largest first{without_rows})",
        xaxis={
            "title": "group" if labelled else f"groups, largest first ({k:,} groups)",
            "categoryorder": "array",
            "categoryarray": [chart_text(group) for group in frame["group"]],
            "showticklabels": labelled,
            "tickangle": -30 if labelled else 0,
        },
        yaxis={"title": "rows (log scale)", **_size_axis(frame["size"])},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "left", "x": 0},
        bargap=0.15,
        margin={"t": 90},
        height=460,
    )
    return fig


def _size_axis(sizes: pd.Series) -> dict:
    """A log axis of group sizes from a labelled tick below the smallest bar to one above the
    largest: left to itself, Plotly started the bars of groups of 32 to 62 rows at 32 (the
    smallest bar a sliver) and labelled one tick. Half the smallest and twice the largest size
    set the ends, so that groups of equal size still get ticks on both sides."""
    occupied = sizes[sizes > 0]
    if occupied.empty:
        return {"type": "log"}
    axis = log_axis([occupied.min() / 2, occupied.max() * 2])
    ticks = axis["tickvals"]
    return {
        **axis,
        "ticktext": [f"{t:,.0f}" if t >= 1 else f"{t:g}" for t in ticks],  # 100,000 not 1e+05
        "range": [math.log10(ticks[0]), math.log10(ticks[-1])],
    }


def _label_side(alpha: float, alphas: pd.Series) -> str:
    """Where the dataset's label goes: towards the middle of the log α axis, so that a
    dataset near either end (equal groups fit α in the hundreds) keeps its label in view."""
    middle = (np.log10(alphas.min()) + np.log10(alphas.max())) / 2
    return "top left" if np.log10(alpha) > middle else "top right"


def _one_three_ticks(low: float, high: float) -> list[float]:
    """Ticks 0.01, 0.03, 0.1, 0.3, 1, 3, 10, ... within [low, high]."""
    ticks = [m * 10.0**e for e in range(-4, 5) for m in (1, 3)]
    return [t for t in ticks if low * (1 - 1e-9) <= t <= high * (1 + 1e-9)]


def log_size_curves(n: int, k: int, alphas: np.ndarray) -> pd.DataFrame:
    """Tidy frame (``alpha``, ``curve``, ``value``) of the three Figure-1 curves for ``n``, ``k``.

    The curves are named in words on screen (:data:`WORST`, :data:`EXPECTED`, :data:`BEST`); their
    formulas are in the hover (:data:`FORMULAS`).

    Values are :math:`\\sum_i \\log|G_i|`: Prop. 8's :math:`k\\log(n/k)`, Thm. 9's
    :math:`k(\\psi(\\alpha) - \\psi(k\\alpha) + \\log n)` and the benchmark
    :math:`(k - 1) + \\log(n - k)`.
    """
    alphas = np.asarray(alphas, dtype=float)
    worst = theory.worst_case_log_sizes(n, k)
    best = theory.best_case_log_sizes(n, k)
    expected = [theory.dirichlet_expected_log_sizes(n, k, a) for a in alphas]
    return pd.concat(
        [
            pd.DataFrame({"alpha": alphas, "curve": WORST, "value": worst}),
            pd.DataFrame({"alpha": alphas, "curve": EXPECTED, "value": expected}),
            pd.DataFrame({"alpha": alphas, "curve": BEST, "value": best}),
        ],
        ignore_index=True,
    )


def alpha_grid(alpha_fit: float | None = None, points: int = 200) -> np.ndarray:
    """α values on a log grid over :data:`ALPHA_AXIS`, widened to include ``alpha_fit``."""
    low, high = ALPHA_AXIS
    if alpha_fit is not None:
        low, high = min(low, alpha_fit / 2), max(high, alpha_fit * 2)
    return np.logspace(np.log10(low), np.log10(high), points)


def figure1_chart(
    curves: pd.DataFrame, *, n: int, k: int, alpha_fit: float, observed: float, empty: int = 0
) -> go.Figure:
    """The paper's Figure 1 for this dataset, with the dataset marked at (α̂, Σ log n_g).

    ``curves`` is the output of :func:`log_size_curves`. The y axis spans the best- to the
    worst-case line (plus a margin): below it Thm. 9's bound falls under the best case and says
    nothing more. ``k`` counts the groups with rows; ``empty`` declared groups without rows
    (no size to take the log of) are named as left out.
    """
    fig = go.Figure()
    for name in CURVES:
        part = curves[curves["curve"] == name]
        style = _CURVE_STYLE[name]
        fig.add_trace(
            go.Scatter(
                x=part["alpha"],
                y=part["value"],
                mode="lines",
                name=name,
                line={"color": style["color"], "dash": style["dash"], "width": 2.5},
                hovertemplate=f"{name}<br>{FORMULAS[name]}<br>"
                "α = %{x:,.3r}, Σ log|G_i| = %{y:.1f}<extra></extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=[alpha_fit],
            y=[observed],
            mode="markers+text",
            name="This dataset",
            marker={"color": BLACK, "size": 12, "symbol": "diamond"},
            text=[f"this dataset: α ≈ {three_digits(alpha_fit)}"],
            textposition=_label_side(alpha_fit, curves["alpha"]),
            hovertemplate="This dataset<br>fitted α = %{x:,.3r}<br>Σ log|G_i| = %{y:.1f}"
            "<extra></extra>",
        )
    )
    worst = theory.worst_case_log_sizes(n, k)
    best = theory.best_case_log_sizes(n, k)
    low, high = min(best, observed), max(worst, observed)
    pad = 0.12 * (high - low) if high > low else 1.0
    alphas = curves["alpha"]
    ticks = _one_three_ticks(alphas.min(), alphas.max())
    fig.update_layout(
        # With groups left out the title takes two lines: on one it ran past a 1280 px page.
        title=f"Extra error from stratifying, for this dataset's n = {n:,} rows"
        f"{'<br>' if empty else ' '}and {_groups_counted(k, empty)}",
        xaxis={
            "title": "How uneven the group sizes are, α (log scale; small = a few big groups)",
            "type": "log",
            "range": [np.log10(alphas.min()) - 0.03, np.log10(alphas.max()) + 0.03],
            "tickvals": ticks,
            "ticktext": [f"{t:g}" for t in ticks],
        },
        yaxis={
            "title": "Extra noise from stratifying (higher = more)",
            "range": [low - pad, high + 1.6 * pad],
        },
        legend={"orientation": "h", "yanchor": "top", "y": -0.22, "xanchor": "left", "x": 0},
        margin={"b": 150},
        height=540,
    )
    return fig


def group_size_summary(sizes: pd.DataFrame) -> str:
    """The size chart in words (:func:`group_size_frame`), for a reader who cannot see it: the
    largest and the smallest group, and how many times larger the one is (labels are data,
    escaped for markdown)."""
    largest, smallest = sizes.iloc[0], sizes.iloc[-1]
    ratio = largest["size"] / smallest["size"] if smallest["size"] else math.inf
    times = (
        f"; the largest is {ratio:,.0f} times the smallest"
        if math.isfinite(ratio) and ratio >= 2
        else ""
    )
    largest_rows, smallest_rows = (
        plural(int(largest["size"]), "row"),
        plural(int(smallest["size"]), "row"),
    )
    return (
        f"Largest group: {as_written(str(largest['group']))}, {largest_rows}; "
        f"smallest: {as_written(str(smallest['group']))}, {smallest_rows}{times}."
    )


def _groups_counted(k: int, empty: int) -> str:
    """ "k = 4 groups", or with declared groups without rows "k = 4 groups with rows (2 groups
    without rows left out)", so that k reads next to the page's count of every group."""
    if not empty:
        return f"k = {k:,} groups"
    return f"k = {k:,} groups with rows ({plural(empty, 'group')} without rows left out)"


def figure1_summary(n: int, k: int, alpha: float, observed: float, empty: int = 0) -> str:
    """Figure 1 in words: where this dataset's Σ log|G_i| sits between the best and the worst
    case for its n and k (Rosenblatt, Stoyanovich & Musco, AAAI 2024, Prop. 8); ``empty`` as in
    :func:`figure1_chart`."""
    worst, best = theory.worst_case_log_sizes(n, k), theory.best_case_log_sizes(n, k)
    where = (observed - best) / (worst - best) if worst > best else 0.0
    return (
        f"This dataset (n = {n:,} rows, {_groups_counted(k, empty)}, "
        f"α ≈ {three_digits(alpha)}): "
        f"Σ log|G_i| = {observed:,.1f}, between {best:,.1f} when one group holds almost everyone "
        f"and {worst:,.1f} when all groups are the same size ({where:.0%} of the way up)."
    )
