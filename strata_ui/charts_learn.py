"""Plotly figures and one-sentence summaries for the Learn page's explainers and presets.

Builders take the tidy frames and small result objects of :mod:`dpcore.teaching` and return a
``plotly.graph_objects.Figure`` or a sentence; nothing here imports streamlit, so every title, axis
label and plotted number is unit-tested. Every figure has a title and axis titles with units; colours
are the colour-blind-safe Okabe–Ito palette; :func:`sized` fits a figure to a projector.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore import theory
from dpcore.teaching import FIGURE3_STRATEGIES, Figure1Reading, NeighbourNoise
from strata_ui import charts_strata
from strata_ui.charts_compare import FONT
from strata_ui.charts_strata import BLACK, BLUE, GREEN, ORANGE, SKY, VERMILLION
from strata_ui.constants import (
    LEARN_CHART_HEIGHT,
    LEARN_FONT_SIZE,
    WORKSHOP_CHART_HEIGHT,
    WORKSHOP_FONT_SIZE,
)

# Above this many groups, markers on the error curve are not labelled (the labels would overlap).
MAX_LABELLED_GROUPS = 12


def _rgba(hex_colour: str, alpha: float) -> str:
    red, green, blue = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, {alpha})"


def _style(
    fig: go.Figure, title: str, x_title: str, y_title: str, *, subtitle: str = ""
) -> go.Figure:
    """Title (short, so that it fits a projector) and subtitle (the settings), axis titles with
    units, the shared font, and a legend under the chart."""
    fig.update_layout(
        title={"text": title, "subtitle": {"text": subtitle}},
        font=FONT,
        height=LEARN_CHART_HEIGHT,
        # The legend sits at the bottom of the figure, under the x-axis title, whatever the height.
        margin={"t": 90, "b": 110, "l": 70, "r": 20},
        legend={
            "orientation": "h",
            "yref": "container",
            "yanchor": "bottom",
            "y": 0.01,
            "xanchor": "left",
            "x": 0,
        },
    )
    fig.update_xaxes(title={"text": x_title})
    fig.update_yaxes(title={"text": y_title})
    return fig


def sized(fig: go.Figure, *, workshop: bool) -> go.Figure:
    """Fit ``fig`` to the screen: in workshop mode, at most :data:`WORKSHOP_CHART_HEIGHT` pixels
    high with :data:`WORKSHOP_FONT_SIZE` text, so it reads on a projector."""
    if not workshop:
        fig.update_layout(font={"size": LEARN_FONT_SIZE})
        return fig
    height = fig.layout.height or LEARN_CHART_HEIGHT
    top = fig.layout.margin.t if fig.layout.margin.t is not None else 90
    fig.update_layout(
        height=min(height, WORKSHOP_CHART_HEIGHT),
        font={"size": WORKSHOP_FONT_SIZE},
        title={"font": {"size": WORKSHOP_FONT_SIZE + 2}},
        margin={"t": top + 20},  # the bigger title and subtitle need more room
        legend={"font": {"size": WORKSHOP_FONT_SIZE - 3}},  # fewer wrapped legend lines
    )
    return fig


def _fmt(value: float) -> str:
    """Three significant digits, without scientific notation for everyday magnitudes."""
    if value == 0 or 1e-3 <= abs(value) < 1e6:
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{value:.2g}"


def _pct(fraction: float) -> str:
    return f"{100 * fraction:.3g}%"


# ---- What ε means -------------------------------------------------------------------------------

D_NAME = "dataset D"
D_PRIME_NAME = "neighbour D′ (one more person)"


def _delta(delta: float) -> str:
    """``1e-6`` rather than Python's ``1e-06``."""
    mantissa, exponent = f"{delta:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _mechanism_titles(noise: NeighbourNoise) -> tuple[str, str]:
    return (
        f"Laplace, b = Δ/ε = {_fmt(noise.laplace_b)}",
        f"Gaussian, σ = {_fmt(noise.gaussian_sigma)}, δ = {_delta(noise.delta)}",
    )


def epsilon_density_figure(noise: NeighbourNoise) -> go.Figure:
    """The output densities on D and D′ side by side, Laplace left and Gaussian right.

    On the Gaussian side, outputs whose ratio passes e^ε (the part δ pays for) are shaded.
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=_mechanism_titles(noise))
    for col, mechanism in ((1, "Laplace"), (2, "Gaussian")):
        part = noise.frame[noise.frame["mechanism"] == mechanism]
        for column, name, colour, dash in (
            ("p_d", D_NAME, BLUE, "solid"),
            ("p_d_prime", D_PRIME_NAME, ORANGE, "dash"),
        ):
            fig.add_trace(
                go.Scatter(
                    x=part["x"], y=part[column], mode="lines", name=name, legendgroup=name,
                    showlegend=col == 1, line={"color": colour, "dash": dash, "width": 2.5},
                    hovertemplate="output %{x:.4g}<br>density %{y:.3g}<extra>" + name + "</extra>",
                ),
                row=1, col=col,
            )  # fmt: skip
    gaussian = noise.frame[noise.frame["mechanism"] == "Gaussian"]
    name = "outputs where the ratio passes e^ε (covered by δ)"
    for mask, column, first in (
        (gaussian["x"] <= noise.low_cut, "p_d", True),
        (gaussian["x"] >= noise.high_cut, "p_d_prime", False),
    ):
        tail = gaussian[mask]
        if tail.empty:
            continue
        fig.add_trace(
            go.Scatter(
                x=tail["x"], y=tail[column], mode="lines", fill="tozeroy", name=name,
                legendgroup=name, showlegend=first, line={"color": VERMILLION, "width": 0},
                fillcolor=_rgba(VERMILLION, 0.45), hoverinfo="skip",
            ),
            row=1, col=2,
        )  # fmt: skip
    fig = _style(
        fig,
        "What one person changes",
        "released count (people)",
        "density (per person)",
        subtitle=f"Noisy counts on D (true count {noise.centre:g}) and D′ "
        f"({noise.centre + noise.sensitivity:g}) at ε = {noise.epsilon:g}",
    )
    fig.update_xaxes(title={"text": "released count (people)"})
    fig.update_yaxes(title={"text": "density (per person)"}, col=1)
    fig.update_yaxes(title={"text": ""}, col=2)
    fig.update_layout(height=440)
    return fig


def epsilon_density_summary(noise: NeighbourNoise) -> str:
    """One sentence: the two noise scales and how much the curves overlap."""
    return (
        f"At ε = {noise.epsilon:g}, Laplace noise has scale b = {_fmt(noise.laplace_b)} and the "
        f"Gaussian σ = {_fmt(noise.gaussian_sigma)} (δ = {_delta(noise.delta)}); both are wide compared "
        f"with the one-person difference between D and D′, so the two curves "
        + ("almost coincide." if noise.epsilon <= 1 else "are visibly apart but still overlap.")
    )


def _ratio_ticks(epsilon: float) -> tuple[list[float], list[str]]:
    """Ticks at e^−2ε, e^−ε, 1, e^ε, e^2ε, labelled with their symbols and values."""
    names = {-2: "e^−2ε", -1: "e^−ε", 1: "e^ε", 2: "e^2ε"}
    values = [math.exp(m * epsilon) for m in (-2, -1, 0, 1, 2)]
    text = [
        f"{names[m]} = {v:.3g}" if m else "1"
        for m, v in zip((-2, -1, 0, 1, 2), values, strict=True)
    ]
    return values, text


def epsilon_ratio_figure(noise: NeighbourNoise) -> go.Figure:
    """p(x | D) / p(x | D′) on a log axis, with the band [e^−ε, e^ε] that ε-DP allows shaded.

    Laplace stays inside the band and touches e^ε (annotated); the Gaussian ratio leaves it in the
    tails (in vermillion), which is why the Gaussian mechanism needs δ > 0.
    """
    eps = noise.epsilon
    fig = make_subplots(rows=1, cols=2, subplot_titles=_mechanism_titles(noise), shared_yaxes=True)
    # Headroom so that the Gaussian's excursions beyond the band show, and the band fills ~half.
    low, high = math.exp(-2.2 * eps), math.exp(2.2 * eps)
    for col, mechanism in ((1, "Laplace"), (2, "Gaussian")):
        part = noise.frame[noise.frame["mechanism"] == mechanism]
        x = part["x"].to_numpy()
        band = "allowed by ε: between e^−ε and e^ε"
        fig.add_trace(
            go.Scatter(
                x=[x[0], x[-1]], y=[math.exp(-eps)] * 2, mode="lines", showlegend=False,
                legendgroup=band, line={"color": GREEN, "dash": "dot", "width": 1.5},
                hoverinfo="skip", name=band,
            ),
            row=1, col=col,
        )  # fmt: skip
        fig.add_trace(
            go.Scatter(
                x=[x[0], x[-1]], y=[math.exp(eps)] * 2, mode="lines", fill="tonexty",
                fillcolor=_rgba(GREEN, 0.15), name=band, legendgroup=band, showlegend=col == 1,
                line={"color": GREEN, "dash": "dot", "width": 1.5}, hoverinfo="skip",
            ),
            row=1, col=col,
        )  # fmt: skip
        ratio = part["ratio"].to_numpy()
        name = "ratio p(x | D) / p(x | D′)"
        fig.add_trace(
            go.Scatter(
                x=x, y=np.clip(ratio, low, high), mode="lines", name=name, legendgroup=name,
                showlegend=col == 1, line={"color": BLACK, "width": 2.5}, customdata=ratio,
                hovertemplate="output %{x:.4g}<br>ratio %{customdata:.4g}<extra></extra>",
            ),
            row=1, col=col,
        )  # fmt: skip
        outside = (ratio > math.exp(eps) * (1 + 1e-9)) | (ratio < math.exp(-eps) * (1 - 1e-9))
        if outside.any():
            name_out = "ratio beyond e^ε (needs δ)"
            fig.add_trace(
                go.Scatter(
                    x=np.where(outside, x, np.nan), y=np.where(outside, np.clip(ratio, low, high), np.nan),
                    mode="lines", name=name_out, legendgroup=name_out,
                    line={"color": VERMILLION, "width": 4}, hoverinfo="skip", connectgaps=False,
                ),
                row=1, col=col,
            )  # fmt: skip
    tickvals, ticktext = _ratio_ticks(eps)
    fig.add_annotation(
        x=noise.centre - 1.5 * noise.laplace_b, y=math.log10(math.exp(eps)), xref="x", yref="y",
        text=f"max ratio = e^ε = {math.exp(eps):.3g}", showarrow=True, arrowhead=2, ax=0, ay=-28,
        font={"color": BLACK},
    )  # fmt: skip
    fig = _style(
        fig,
        "How much likelier under D than under D′",
        "released count (people)",
        "",
        subtitle=f"p(x | D) ÷ p(x | D′) at ε = {eps:g}; green band: what ε allows",
    )
    fig.update_yaxes(
        type="log",
        range=[math.log10(low), math.log10(high)],
        tickvals=tickvals,
        ticktext=ticktext,
    )
    fig.update_yaxes(title={"text": "ratio (log scale)"}, col=1)
    fig.update_layout(height=440)
    return fig


def epsilon_ratio_summary(noise: NeighbourNoise) -> str:
    """One sentence: Laplace's ratio never passes e^ε; the Gaussian's does, with small probability."""
    laplace = noise.frame[noise.frame["mechanism"] == "Laplace"]["ratio"]
    return (
        f"Laplace: the largest ratio anywhere is e^ε = {laplace.max():.3g}, so no output makes "
        "D more than e^ε times likelier than D′. Gaussian: the ratio passes e^ε for "
        f"outputs below {_fmt(noise.low_cut)} (or above {_fmt(noise.high_cut)} the other way), "
        f"which D produces with probability {noise.tail_probability:.2g}; δ = {_delta(noise.delta)} "
        "accounts for that small chance."
    )


# ---- Why small groups pay more ------------------------------------------------------------------


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

    ``curve`` is :func:`dpcore.teaching.error_curve`; ``groups`` has ``group``, ``size``,
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
        text = _thinned_labels(order) if len(order) <= MAX_LABELLED_GROUPS else None
        fig.add_trace(
            go.Scatter(
                x=order["size"], y=order["error"],
                mode="markers+text" if text else "markers",
                name="groups of the current strata",
                marker={"color": ORANGE, "size": 11, "line": {"color": BLACK, "width": 1}},
                text=text,
                textposition=["bottom left" if i % 2 else "top right" for i in range(len(order))],
                textfont={"size": 11},
                customdata=order["group"],
                hovertemplate="%{customdata}<br>n_g = %{x:,}<br>expected error ±%{y:.3g}"
                "<extra></extra>",
            )
        )  # fmt: skip
    size, error = chosen
    fig.add_trace(
        go.Scatter(
            x=[size], y=[error], mode="markers+text", name=f"your group: n_g = {size:,.0f}",
            marker={"color": VERMILLION, "size": 16, "symbol": "diamond"},
            text=[f"n_g = {size:,.0f}: ±{_fmt(error)} {unit}"], textposition="top right",
            textfont={"color": VERMILLION, "size": 13},
            hovertemplate="n_g = %{x:,}<br>expected error ±%{y:.3g}<extra></extra>",
        )
    )  # fmt: skip
    low, high = bounds
    fig = _style(
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


def _thinned_labels(order: pd.DataFrame, min_gap: float = 0.12) -> list[str]:
    """Group names for markers sorted by size, blank where a marker sits within ``min_gap``
    decades of the last labelled one (its name is still in the hover)."""
    labels, last = [], -math.inf
    for group, size in zip(order["group"], order["size"], strict=True):
        position = math.log10(size)
        if position - last >= min_gap:
            labels.append(str(group).replace(" × ", "×"))
            last = position
        else:
            labels.append("")
    return labels


def group_error_summary(
    groups: pd.DataFrame | None, *, epsilon: float, chosen: tuple[float, float], unit: str
) -> str:
    """One or two sentences: the slider's group, and the smallest vs largest current group."""
    size, error = chosen
    text = (
        f"At ε = {epsilon:g}, a group of {size:,.0f} people gets an expected error of "
        f"±{_fmt(error)} {unit}; ten times the people means a tenth of the error."
    )
    if groups is not None and len(groups) >= 2:
        order = groups.sort_values("size", ignore_index=True)
        small, large = order.iloc[0], order.iloc[-1]
        text += (
            f" The smallest current group ({small['group']}, {int(small['size']):,} people) gets "
            f"±{_fmt(small['error'])}, {small['error'] / large['error']:.3g} times the error of the "
            f"largest ({large['group']}, {int(large['size']):,} people)."
        )
    return text


# ---- Stratify or not ----------------------------------------------------------------------------


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
        legend={
            "orientation": "h",
            "yref": "container",
            "yanchor": "bottom",
            "y": 0.01,
            "xanchor": "left",
            "x": 0,
        },
    )
    return fig


def share_profile_summary(sizes: pd.DataFrame, *, alpha_fit: float) -> str:
    """One sentence: how dominant the largest group is, and the fitted α."""
    largest = sizes.iloc[0]
    unevenness = (
        "a few groups dominate" if alpha_fit < 1 else "the groups are of fairly similar size"
    )
    return (
        f"The largest group ({largest['group']}) holds {_pct(float(largest['share']))} of the "
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
        f"is {_pct(reading.better_observed)} of the way from the worst to the best case; Thm. 9 at "
        f"α = {reading.alpha_read:g} gives {reading.expected_at_read:.1f}, "
        f"{_pct(reading.better_at_read)} of the way."
    )


# ---- CoinPress step by step ---------------------------------------------------------------------


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
            text=[f"width {_fmt(w)}" for w in steps["width"]], textposition=positions,
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
        go.Scatter(
            x=[true_mean, true_mean], y=[labels[0], labels[-1]], mode="lines",
            name=f"true group mean {true_mean:.4g} (curator's view, not private)",
            line={"color": BLACK, "dash": "dot", "width": 2}, hoverinfo="skip",
        )
    )  # fmt: skip
    fig = _style(
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
        f"For {group}, the interval shrank from width {_fmt(first['width'])} to "
        f"{_fmt(final['width'])} {unit} in {len(steps) - 1} step"
        f"{'' if len(steps) == 2 else 's'}; the private estimate {estimate:.4g} is "
        f"{_fmt(abs(estimate - true_mean))} {unit} from the true mean, which the final interval "
        + ("contains." if covered else "misses (this happens with probability at most β).")
    )


# ---- Preset: Figure 3 ---------------------------------------------------------------------------

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
        go.Scatter(
            x=[sizes.min(), sizes.max()], y=[1, 1], mode="lines", name="1% error (the paper's mark)",
            line={"color": BLACK, "dash": "dot", "width": 1.5}, hoverinfo="skip",
        )
    )  # fmt: skip
    fig = _style(
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
    fig.add_trace(
        go.Scatter(
            x=[gap["n"].min(), gap["n"].max()], y=[0, 0], mode="lines", name="no gap",
            line={"color": BLACK, "dash": "dot", "width": 1.5}, hoverinfo="skip",
        )
    )  # fmt: skip
    fig = _style(
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
        f"{label.split(' (')[0]} {_pct(by[(s, small)])} → {_pct(by[(s, large)])}"
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
