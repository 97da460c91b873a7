"""Figures of the mean's Learn items: group errors against size, share profiles, Figure 1, CoinPress
steps and Figure 3.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpcore.analyses.mean.teaching import FIGURE3_STRATEGIES, Figure1Reading
from dpcore.foundations import theory
from strata_ui import charts_strata
from strata_ui.charts_common import dotted_line
from strata_ui.constants import (
    LEARN_CHART_HEIGHT,
)
from strata_ui.learn_charts import fmt_number, fmt_percent, learn_layout
from strata_ui.style import BLACK, BLUE, FONT, GREEN, LEGEND_BELOW, ORANGE, SKY, VERMILLION
from strata_ui.text import as_text, chart_text


def group_error_figure(
    curve: pd.DataFrame,
    groups: pd.DataFrame | None,
    *,
    epsilon: float,
    bounds: tuple[float, float],
    chosen: tuple[float, float],
    unit: str,
) -> go.Figure:
    """Expected error of a group's Laplace mean against group size, log–log, groups marked.

    ``curve`` is :func:`dpcore.analyses.mean.teaching.error_curve`; ``groups`` has ``group``, ``size``,
    ``error`` (or is None); ``chosen`` is the slider's (size, error).
    """
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=curve["size"], y=curve["error"], mode="lines",
            name=f"expected error (U − L)/(n_g·ε) at ε = {epsilon:g}",
            line={"color": BLUE, "width": 3},
            hovertemplate="n_g = %{x:,.0f}<br>expected error ±%{y:.3g}<extra></extra>",
        )
    )  # fmt: skip
    if groups is not None and not groups.empty:
        order = groups.sort_values("size", ignore_index=True)
        text, position = _end_labels(order)
        fig.add_trace(
            go.Scatter(
                x=order["size"], y=order["error"],
                mode="markers+text",
                name="groups of the current strata",
                marker={"color": ORANGE, "size": 11, "line": {"color": BLACK, "width": 1}},
                text=text,
                textposition=position,
                textfont={"size": 11},
                cliponaxis=False,  # a label near the plot's edge is drawn whole
                customdata=[chart_text(group) for group in order["group"]],
                hovertemplate="%{customdata}<br>n_g = %{x:,}<br>expected error ±%{y:.3g}"
                "<extra></extra>",
            )
        )  # fmt: skip
    size, error = chosen
    fig.add_trace(
        go.Scatter(
            x=[size], y=[error], mode="markers+text", name=f"your group: n_g = {size:,.0f}",
            marker={"color": VERMILLION, "size": 16, "symbol": "diamond"},
            text=[f"n_g = {size:,.0f}: ±{fmt_number(error)} {unit}"], textposition="top right",
            textfont={"color": VERMILLION, "size": 13},
            hovertemplate="n_g = %{x:,}<br>expected error ±%{y:.3g}<extra></extra>",
        )
    )  # fmt: skip
    low, high = bounds
    fig = learn_layout(
        fig,
        "Smaller groups get noisier means",
        "group size n_g (people, log scale)",
        f"expected error ({unit})",
        subtitle=f"Expected error of a Laplace mean ∝ 1/n_g; ε = {epsilon:g}, bounds {low:g} to "
        f"{high:g}",
    )
    fig.update_xaxes(type="log", dtick=1, tickformat=",")
    fig.update_yaxes(type="log", dtick=1, tickformat="~g")
    return fig


def _end_labels(order: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Names for markers sorted by size: the smallest group's above and right of it, the
    largest's below and left of it, on the sides of the line where no other marker lies (the
    markers fall along a line down to the right) and inside the plot (a label left of the
    smallest group ran over the axis' ticks); the others are named in the hover and in the
    chart's summary. Labels thinned by size overlapped when names were long or sizes close."""
    last = len(order) - 1
    names = [chart_text(str(group).replace(" × ", "×")) for group in order["group"]]
    text = [name if i in (0, last) else "" for i, name in enumerate(names)]
    position = ["bottom left" if i == last and i else "top right" for i in range(len(names))]
    return text, position


def group_error_summary(
    groups: pd.DataFrame | None, *, epsilon: float, chosen: tuple[float, float], unit: str
) -> str:
    """One or two sentences: the slider's group, and the smallest vs largest current group."""
    size, error = chosen
    text = (
        f"At ε = {epsilon:g}, a group of {size:,.0f} people gets an expected error of "
        f"±{fmt_number(error)} {unit}; ten times the people means a tenth of the error."
    )
    if groups is not None and len(groups) >= 2:
        order = groups.sort_values("size", ignore_index=True)
        small, large = order.iloc[0], order.iloc[-1]
        text += (
            f" The smallest current group ({as_text(str(small['group']))}, {int(small['size']):,} people) gets "
            f"±{fmt_number(small['error'])}, {small['error'] / large['error']:.3g} times the error of the "
            f"largest ({as_text(str(large['group']))}, {int(large['size']):,} people)."
        )
    return text


def share_profile_figure(
    sizes: pd.DataFrame, expected_shares: np.ndarray, *, alpha: float
) -> go.Figure:
    """The current group sizes (bars, :func:`strata_ui.charts_strata.group_size_chart`) with the
    typical sorted sizes of Dirichlet(α) shares over as many groups (line).

    ``sizes`` is :func:`strata_ui.charts_strata.group_size_frame` output.
    """
    fig = charts_strata.group_size_chart(sizes)
    n = float(sizes["size"].sum())
    typical = np.asarray(expected_shares) * n
    fig.add_trace(
        go.Scatter(
            x=list(sizes["group"]), y=typical, mode="lines+markers",
            name=f"typical sizes if shares were Dirichlet(α = {alpha:g})",
            line={"color": BLACK, "dash": "dash", "width": 2}, marker={"size": 7},
            hovertemplate="typical size %{y:,.0f}<extra></extra>",
        )
    )  # fmt: skip
    low = max(float(sizes["size"].min()) / 3, 0.5)
    high = float(sizes["size"].max()) * 1.5
    fig.update_yaxes(
        range=[math.log10(low), math.log10(high)], title={"text": "people (log scale)"}
    )
    fig.update_layout(
        title={
            "text": "How big each group is",
            "subtitle": {
                "text": f"{len(sizes):,} groups, largest first; dashed: typical sizes at α = "
                f"{alpha:g}"
            },
        },
        font=FONT,
        height=LEARN_CHART_HEIGHT + 60,
        margin={"t": 90, "b": 190},  # rotated group names, then the legend at the bottom
        legend=LEGEND_BELOW,
    )
    return fig


def share_profile_summary(sizes: pd.DataFrame, *, alpha_fit: float) -> str:
    """One sentence: how dominant the largest group is, and the fitted α."""
    largest = sizes.iloc[0]
    unevenness = (
        "a few groups dominate" if alpha_fit < 1 else "the groups are of fairly similar size"
    )
    return (
        f"The largest group ({largest['group']}) holds {fmt_percent(float(largest['share']))} of the "
        f"people; the fitted Dirichlet α = {alpha_fit:.2g} says {unevenness}."
    )


def figure1_with_alpha(
    curves: pd.DataFrame,
    *,
    n: int,
    k: int,
    alpha_fit: float,
    observed: float,
    alpha_marks: dict[str, float],
    title: str = "Extra error from stratifying",
    subtitle: str | None = None,
) -> go.Figure:
    """:func:`strata_ui.charts_strata.figure1_chart` plus a marker on Thm. 9's curve at each α of
    ``alpha_marks`` (name → α)."""
    fig = charts_strata.figure1_chart(curves, n=n, k=k, alpha_fit=alpha_fit, observed=observed)
    symbols = ("circle", "square", "triangle-up")
    colours = (VERMILLION, SKY, ORANGE)
    for i, (name, alpha) in enumerate(alpha_marks.items()):
        value = theory.dirichlet_expected_log_sizes(n, k, alpha)
        fig.add_trace(
            go.Scatter(
                x=[alpha], y=[value], mode="markers", name=name,
                marker={"color": colours[i % 3], "size": 13, "symbol": symbols[i % 3],
                        "line": {"color": BLACK, "width": 1}},
                hovertemplate="α = %{x:.3g}<br>Thm. 9 bound %{y:.1f}<extra></extra>",
            )
        )  # fmt: skip
    if subtitle is None:
        subtitle = f"n = {n:,} rows, k = {k:,} groups (after the paper's Figure 1)"
    fig.update_layout(
        font=FONT, title={"text": title, "subtitle": {"text": subtitle}}, margin={"t": 90}
    )
    fig.update_yaxes(title={"text": "Σ log|G_i| (higher = more noise)"})
    return fig


def figure1_summary(reading: Figure1Reading) -> str:
    """One sentence: where the data and the bound at the chosen α sit between worst and best."""
    return (
        f"With n = {reading.n:,} and k = {reading.k}, Σ log n_g runs from {reading.best:.1f} (one "
        f"majority group) to {reading.worst:.1f} (equal groups). This data's {reading.observed:.1f} "
        f"is {fmt_percent(reading.better_observed)} of the way from the worst to the best case; Thm. 9 at "
        f"α = {reading.alpha_read:g} gives {reading.expected_at_read:.1f}, "
        f"{fmt_percent(reading.better_at_read)} of the way."
    )


def coinpress_figure(
    steps: pd.DataFrame,
    *,
    group: str,
    size: int,
    true_mean: float,
    value: str,
    unit: str,
) -> go.Figure:
    """One horizontal bar per step: the interval [ℓ_i, r_i], the prior on top, the final
    estimate (its midpoint) and the group's true mean (curator's view, not private) marked."""
    labels = ["prior [ℓ, r]"] + [
        f"step {int(s)} (ρ_{int(s)} = {r:.2g})"
        for s, r in zip(steps["step"][1:], steps["rho"][1:], strict=True)
    ]
    last = len(steps) - 1
    # Wide bars carry their width inside (right-aligned), narrow ones just outside.
    span = float(steps["high"].max() - steps["low"].min())
    positions = ["inside" if w > 0.4 * span else "outside" for w in steps["width"]]
    colours = [ORANGE] + [SKY] * (last - 1) + [BLUE]
    fig = go.Figure(
        go.Bar(
            y=labels, x=steps["width"], base=steps["low"], orientation="h", marker_color=colours,
            name="interval after each step (orange: the public prior)",
            text=[f"width {fmt_number(w)}" for w in steps["width"]], textposition=positions,
            insidetextanchor="end", cliponaxis=False,
            customdata=np.column_stack([steps["low"], steps["high"]]),
            hovertemplate="%{y}<br>[%{customdata[0]:.4g}, %{customdata[1]:.4g}]<extra></extra>",
        )
    )  # fmt: skip
    final = steps.iloc[-1]
    estimate = (final["low"] + final["high"]) / 2
    fig.add_trace(
        go.Scatter(
            x=[estimate], y=[labels[-1]], mode="markers", name=f"private estimate {estimate:.4g}",
            marker={"color": VERMILLION, "size": 15, "symbol": "diamond",
                    "line": {"color": BLACK, "width": 1}},
            hovertemplate="private estimate %{x:.4g}<extra></extra>",
        )
    )  # fmt: skip
    fig.add_trace(
        dotted_line([true_mean, true_mean], [labels[0], labels[-1]],
                    f"true group mean {true_mean:.4g} (curator's view, not private)")
    )  # fmt: skip
    fig = learn_layout(
        fig,
        "CoinPress narrows the interval",
        f"mean of {value} ({unit})",
        "step (its share of ρ)",
        subtitle=f"{group}, n = {size:,}: the interval after each of {last} step"
        f"{'' if last == 1 else 's'}",
    )
    fig.update_yaxes(autorange="reversed", categoryorder="array", categoryarray=labels)
    low = min(float(steps["low"].min()), true_mean)
    high = max(float(steps["high"].max()), true_mean)
    span = high - low
    fig.update_xaxes(range=[low - 0.03 * span, high + 0.12 * span])  # room for outside labels
    fig.update_layout(height=min(LEARN_CHART_HEIGHT + 60, 290 + 40 * len(labels)), bargap=0.35)
    return fig


def coinpress_summary(steps: pd.DataFrame, *, true_mean: float, unit: str, group: str) -> str:
    """One sentence: from the prior's width to the final width, and how close the estimate is."""
    first, final = steps.iloc[0], steps.iloc[-1]
    estimate = (final["low"] + final["high"]) / 2
    covered = final["low"] <= true_mean <= final["high"]
    return (
        f"For {group}, the interval shrank from width {fmt_number(first['width'])} to "
        f"{fmt_number(final['width'])} {unit} in {len(steps) - 1} step"
        f"{'' if len(steps) == 2 else 's'}; the private estimate {estimate:.4g} is "
        f"{fmt_number(abs(estimate - true_mean))} {unit} from the true mean, which the final interval "
        + ("contains." if covered else "misses (this happens with probability at most β).")
    )


_F3_COLOURS = {"stratified": BLUE, "global_only": ORANGE}


def figure3_error_figure(study: pd.DataFrame, *, rho: float) -> go.Figure:
    """Mean normalized error of the global mean against n (log–log), ±2 SE over datasets."""
    fig = go.Figure()
    for strategy, label in FIGURE3_STRATEGIES.items():
        part = study[study["strategy"] == strategy]
        fig.add_trace(
            go.Scatter(
                x=part["n"], y=100 * part["error"], mode="lines+markers", name=label,
                line={"color": _F3_COLOURS[strategy], "width": 2.5},
                error_y={"type": "data", "array": 200 * part["se"], "visible": True},
                hovertemplate="n = %{x:,}<br>error %{y:.3g}%<extra>" + label + "</extra>",
            )
        )  # fmt: skip
    sizes = study["n"]
    fig.add_trace(
        dotted_line([sizes.min(), sizes.max()], [1, 1], "1% error (the paper's mark)", width=1.5)
    )
    fig = learn_layout(
        fig,
        "Figure 3 rebuilt: error as n grows",
        "rows in the dataset, n (log scale)",
        "normalized error (%, log scale)",
        subtitle=f"Error of the population mean, synthetic mixture, ρ = {rho:g}; bars ±2 SE",
    )
    _n_ticks(fig, sizes)
    fig.update_yaxes(type="log", dtick=1, tickformat="~g")
    return fig


def _n_ticks(fig: go.Figure, sizes: pd.Series) -> None:
    """A log n axis labelled at the simulated sizes only (minor log ticks crowd it)."""
    values = sorted({int(n) for n in sizes})
    fig.update_xaxes(type="log", tickvals=values, ticktext=[f"{n:,}" for n in values])


def figure3_gap_figure(study: pd.DataFrame, *, rho: float) -> go.Figure:
    """Stratified − vanilla error (percentage points) against n, ±2 SE, with the zero line."""
    gap = study[study["strategy"] == "gap"]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=gap["n"], y=100 * gap["error"], mode="lines+markers",
            name="stratified − vanilla (i), ±2 SE over datasets",
            line={"color": GREEN, "width": 3}, marker={"size": 9},
            error_y={"type": "data", "array": 200 * gap["se"], "visible": True},
            hovertemplate="n = %{x:,}<br>gap %{y:.3g} points<extra></extra>",
        )
    )  # fmt: skip
    fig.add_trace(dotted_line([gap["n"].min(), gap["n"].max()], [0, 0], "no gap", width=1.5))
    fig = learn_layout(
        fig,
        "Figure 3: the price of stratifying",
        "rows in the dataset, n (log scale)",
        "extra error (percentage points)",
        subtitle=f"Stratified minus vanilla (i) error, same datasets, ρ = {rho:g}; bars ±2 SE",
    )
    _n_ticks(fig, gap["n"])
    return fig


def figure3_error_summary(study: pd.DataFrame) -> str:
    """One sentence: both strategies' errors at the smallest and the largest n."""
    by = study.set_index(["strategy", "n"])["error"]
    small, large = study["n"].min(), study["n"].max()
    parts = [
        f"{label.split(' (')[0]} {fmt_percent(by[(s, small)])} → {fmt_percent(by[(s, large)])}"
        for s, label in FIGURE3_STRATEGIES.items()
    ]
    return (
        f"Mean normalized error of the population mean from n = {small:,} to n = {large:,} — "
        + "; ".join(parts)
        + ". Both fall roughly as 1/n; stratifying starts higher and catches up."
    )


def figure3_summary(study: pd.DataFrame) -> str:
    """One sentence: the gap at the smallest and the largest n."""
    gap = study[study["strategy"] == "gap"].set_index("n")
    small, large = gap.index.min(), gap.index.max()
    return (
        f"Stratifying costs {100 * gap.loc[small, 'error']:.3g} percentage points of error at "
        f"n = {small:,} and {100 * gap.loc[large, 'error']:.2g} at n = {large:,}: the gap shrinks "
        "roughly as 1/n, so with large samples stratification is almost free for the population "
        "mean."
    )


# ---- the clipping trade-off ---------------------------------------------------------------------


def clipping_figure(
    curve: pd.DataFrame,
    found: dict,
    *,
    typed_high: float,
    group: str,
    size: int,
    epsilon: float,
    fraction: float,
    unit: str,
) -> go.Figure:
    """Error of one group's mean as the upper bound moves (log axes): the clipping bias, the
    noise and their combined error; the typed bound marked; the bounds found privately drawn as
    their median and 5–95% spread over simulated releases, at the error those releases had."""
    fig = go.Figure()
    for column, name, colour, dash in (
        ("rmse", "error (bias and noise together)", BLACK, "solid"),
        ("bias", "clipping bias: too narrow", VERMILLION, "dash"),
        ("noise", "noise: too wide", BLUE, "dot"),
    ):
        values = np.abs(curve[column].to_numpy(float))
        # No clipping, no bias: the line ends there (a log axis has no 0).
        values = np.where(values > 1e-9 * curve["rmse"].max(), values, np.nan)
        fig.add_trace(go.Scatter(
            x=curve["high"], y=values, mode="lines", name=name,
            line={"color": colour, "dash": dash, "width": 3 if column == "rmse" else 2},
            hovertemplate="U = %{x:.4g}<br>" + column + " %{y:.3g}<extra></extra>",
        ))  # fmt: skip
    typed = curve.iloc[int(np.argmin(np.abs(curve["high"] - typed_high)))]
    fig.add_trace(go.Scatter(
        x=[typed_high], y=[typed["rmse"]], mode="markers", name=f"typed U = {typed_high:g}",
        marker={"color": ORANGE, "size": 14, "symbol": "square", "line": {"color": BLACK, "width": 1}},
        hovertemplate="typed U = %{x:.4g}<br>error %{y:.3g}<extra></extra>",
    ))  # fmt: skip
    low, middle, high = np.percentile(found["high"], [5, 50, 95])
    fig.add_trace(go.Scatter(
        x=[middle], y=[found["rmse"]], mode="markers",
        name=f"found privately ({fraction:.0%} of ε): U from {low:.3g} to {high:.3g}",
        marker={"color": GREEN, "size": 15, "symbol": "diamond", "line": {"color": BLACK, "width": 1}},
        error_x={"type": "data", "symmetric": False, "array": [high - middle],
                 "arrayminus": [middle - low], "color": GREEN, "thickness": 3},
        hovertemplate="found U (median) %{x:.4g}<br>error of those releases %{y:.3g}<extra></extra>",
    ))  # fmt: skip
    fig = learn_layout(
        fig,
        "Too narrow or too wide: where to clip",
        f"upper bound U ({unit}, log scale)",
        f"error of the mean ({unit}, log)",
        subtitle=f"{chart_text(group)}, n = {size:,}, ε = {epsilon:g}: bias, noise and both, "
        "as U moves",
    )
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log", exponentformat="none")  # 0.0001, not 100μ, for an error
    return fig


def clipping_summary(curve: pd.DataFrame, found: dict, *, typed_high: float, unit: str) -> str:
    """One sentence: the best U and its error, the typed U's, and the found bounds'."""
    best = curve.iloc[int(np.argmin(curve["rmse"]))]
    typed = curve.iloc[int(np.argmin(np.abs(curve["high"] - typed_high)))]
    return (
        f"The error is smallest at U ≈ {best['high']:.3g} ({best['rmse']:.3g} {unit}); below it "
        f"the clipping bias takes over, above it the noise. Your typed U = {typed_high:g} gives "
        f"{typed['rmse']:.3g}; bounds found privately, paying their share of the same budget, "
        f"land at U ≈ {np.median(found['high']):.3g} with an error of {found['rmse']:.3g}."
    )
