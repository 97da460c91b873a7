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
from dpcore.analyses.gvdp.teaching import LOOSE_MEAN, LOOSE_METHODS
from dpcore.analyses.mean.teaching import FIGURE3_STRATEGIES, Figure1Reading
from dpcore.teaching import NeighbourNoise
from strata_ui import charts_ratio, charts_strata
from strata_ui.charts_compare import FONT, rgba
from strata_ui.charts_ratio import (
    METHOD_COLOURS,
    METHOD_NAMES,
    METHOD_SYMBOLS,
    binomial_band,
    log_ticks,
    method_in_text,
)
from strata_ui.charts_strata import BLACK, BLUE, GREEN, ORANGE, SKY, VERMILLION
from strata_ui.constants import (
    LEARN_CHART_HEIGHT,
    LEARN_FONT_SIZE,
    WORKSHOP_CHART_HEIGHT,
    WORKSHOP_FONT_SIZE,
)

# Above this many groups, markers on the error curve are not labelled (the labels would overlap).
MAX_LABELLED_GROUPS = 12


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
                fillcolor=rgba(VERMILLION, 0.45), hoverinfo="skip",
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
                fillcolor=rgba(GREEN, 0.15), name=band, legendgroup=band, showlegend=col == 1,
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
        f"which D produces with probability {noise.tail_probability:.2g}. Only the part of that "
        "probability above e^ε times D′'s counts against the guarantee, and it is at most "
        f"δ = {_delta(noise.delta)} (Balle & Wang 2018, Thm. 5)."
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


# ---- Why confidence intervals break under DP (Miao & Li 2022) -----------------------------------

RATIO_CI_ORDER = ("none", "monte_carlo", "analytical", "public")


def _ratio_setting(n: int, weighted: bool) -> str:
    return f"n = {n:,} {'weighted' if weighted else 'unweighted'} rows"


def _epsilon_axis(fig: go.Figure, epsilons, **where) -> None:
    values = sorted({float(e) for e in epsilons})
    fig.update_xaxes(type="log", tickvals=values, ticktext=[f"{e:g}" for e in values], **where)


def _band(
    fig: go.Figure,
    x: list[float],
    low: float,
    high: float,
    name: str,
    *,
    legend: bool = True,
    **where,
) -> None:
    """A shaded horizontal band [low, high] over ``x`` (the binomial band around the nominal)."""
    for y, fill, show in ((low, None, False), (high, "tonexty", legend)):
        fig.add_trace(
            go.Scatter(
                x=x, y=[y, y], mode="lines", fill=fill, fillcolor=rgba(BLACK, 0.1),
                line={"color": BLACK, "width": 0}, name=name, legendgroup=name, showlegend=show,
                hoverinfo="skip",
            ),
            **where,
        )  # fmt: skip


def _nominal(fig: go.Figure, x: list[float], level: float, *, legend: bool = True, **where) -> None:
    """The nominal coverage (in %) as a dotted black line over ``x``."""
    name = f"nominal {level:.0%}"
    fig.add_trace(
        go.Scatter(
            x=x, y=[100 * level] * 2, mode="lines", name=name, legendgroup=name,
            showlegend=legend, line={"color": BLACK, "dash": "dot", "width": 2},
            hoverinfo="skip",
        ),
        **where,
    )  # fmt: skip


def ratio_coverage_figure(sweep: pd.DataFrame, *, level: float = 0.95) -> go.Figure:
    """Coverage of 95% ratio intervals against ε for each method, with the nominal level and the
    binomial band that simulation error alone would leave (``sweep`` is
    :func:`dpcore.teaching.ratio_coverage_sweep`)."""
    reps, n = int(sweep["reps"].iloc[0]), int(sweep["n"].iloc[0])
    weighted = bool(sweep["weighted"].iloc[0])
    epsilons = sorted(sweep["epsilon"].unique())
    x = [epsilons[0] / 1.15, epsilons[-1] * 1.15]
    fig = go.Figure()
    low, high = binomial_band(level, reps)
    _band(fig, x, 100 * low, 100 * high, f"simulation error band ({reps:,} releases)")
    _nominal(fig, x, level)
    for method in RATIO_CI_ORDER:
        part = sweep[sweep["method"] == method].sort_values("epsilon")
        name = METHOD_NAMES[method] + (" — non-private" if method == "public" else "")
        fig.add_trace(
            go.Scatter(
                x=part["epsilon"], y=100 * part["coverage"], mode="lines+markers", name=name,
                line={"color": METHOD_COLOURS[method], "width": 2.5,
                      "dash": "dot" if method == "public" else "solid"},
                marker={"symbol": METHOD_SYMBOLS[method], "size": 10,
                        "color": METHOD_COLOURS[method]},
                error_y={"type": "data", "array": 200 * part["coverage_se"], "visible": True,
                         "thickness": 1},
                hovertemplate="ε = %{x:g}<br>coverage %{y:.1f}%<extra>" + name + "</extra>",
            )
        )  # fmt: skip
    fig = _style(
        fig,
        "Ignoring the noise breaks the 95% promise",
        "privacy budget ε (log scale)",
        "coverage of 95% intervals (%)",
        subtitle=f"Ratio Σs/Σy, {_ratio_setting(n, weighted)}, {reps:,} simulated releases per ε; "
        "bars ±2 SE",
    )
    _epsilon_axis(fig, epsilons)
    fig.update_yaxes(range=[0, 102], dtick=10)
    return fig


def ratio_coverage_summary(sweep: pd.DataFrame, *, level: float = 0.95) -> str:
    """One sentence: the worst coverage without correction, and the corrected coverage there."""
    by = sweep.set_index(["method", "epsilon"])["coverage"]
    none = sweep[sweep["method"] == "none"]
    worst = none.loc[none["coverage"].idxmin()]
    eps = float(worst["epsilon"])
    largest = float(sweep["epsilon"].max())
    reps = int(sweep["reps"].iloc[0])
    low, high = binomial_band(level, reps)
    return (
        f"Intervals that ignore the DP noise cover the true ratio only {_pct(worst['coverage'])} "
        f"of the time at ε = {eps:g} (and {_pct(by[('none', largest)])} at ε = {largest:g}); the "
        f"Monte Carlo and analytical corrections cover {_pct(by[('monte_carlo', eps)])} and "
        f"{_pct(by[('analytical', eps)])} there, inside the band {_pct(low)}–{_pct(high)} that "
        f"{reps:,} simulated releases leave around the nominal {level:.0%}."
        if low <= by[("analytical", eps)] <= high
        else f"Intervals that ignore the DP noise cover the true ratio only "
        f"{_pct(worst['coverage'])} of the time at ε = {eps:g}; the corrections cover "
        f"{_pct(by[('monte_carlo', eps)])} (Monte Carlo) and {_pct(by[('analytical', eps)])} "
        f"(analytical) there, against the nominal {level:.0%} (band {_pct(low)}–{_pct(high)})."
    )


def ratio_width_figure(sweep: pd.DataFrame) -> go.Figure:
    """Mean interval width against ε, log–log, for each method: the price of honest intervals."""
    reps, n = int(sweep["reps"].iloc[0]), int(sweep["n"].iloc[0])
    weighted = bool(sweep["weighted"].iloc[0])
    fig = go.Figure()
    for method in RATIO_CI_ORDER:
        part = sweep[sweep["method"] == method].sort_values("epsilon")
        name = METHOD_NAMES[method] + (" — non-private" if method == "public" else "")
        fig.add_trace(
            go.Scatter(
                x=part["epsilon"], y=part["width"], mode="lines+markers", name=name,
                line={"color": METHOD_COLOURS[method], "width": 2.5,
                      "dash": "dot" if method == "public" else "solid"},
                marker={"symbol": METHOD_SYMBOLS[method], "size": 10,
                        "color": METHOD_COLOURS[method]},
                hovertemplate="ε = %{x:g}<br>mean width %{y:.3g}<extra>" + name + "</extra>",
            )
        )  # fmt: skip
    fig = _style(
        fig,
        "Honest intervals are wider",
        "privacy budget ε (log scale)",
        "mean width (ratio units, log scale)",
        subtitle=f"Ratio Σs/Σy (true value 1.1), {_ratio_setting(n, weighted)}, {reps:,} "
        "releases per ε",
    )
    _epsilon_axis(fig, sweep["epsilon"])
    widths = sweep["width"].dropna()
    fig.update_yaxes(type="log", tickvals=log_ticks(widths.min(), widths.max()), tickformat="~g")
    return fig


def ratio_width_summary(sweep: pd.DataFrame) -> str:
    """One sentence: corrected vs non-private width at the smallest and largest ε."""
    by = sweep.set_index(["method", "epsilon"])["width"]
    small, large = float(sweep["epsilon"].min()), float(sweep["epsilon"].max())
    public = float(by[("public", small)])
    return (
        f"The analytical correction's interval is {_fmt(by[('analytical', small)])} wide at "
        f"ε = {small:g}, {by[('analytical', small)] / public:.3g} times the non-private "
        f"{_fmt(public)}, and {by[('analytical', large)] / public:.3g} times at ε = {large:g}; "
        "the uncorrected interval keeps the non-private width whatever ε, which is why it misses."
    )


# ---- Loose bounds, still valid (Covington et al.) -----------------------------------------------

_LOOSE_STYLE = {
    "gvdp": {"color": BLUE, "symbol": "circle", "offset": 1 / 1.12},
    "clipped": {"color": VERMILLION, "symbol": "diamond", "offset": 1.12},
}


def loose_bounds_figure(study: pd.DataFrame, *, rho: float, n: int) -> go.Figure:
    """One release per factor: GVDP's and the clipped mean's estimates with their 95% intervals
    against the overestimation factor (log x), the true mean marked (``study`` is
    :func:`dpcore.teaching.loose_bounds_study`)."""
    fig = go.Figure()
    factors = sorted(study["factor"].unique())
    for method, style in _LOOSE_STYLE.items():
        part = study[study["method"] == method].sort_values("factor")
        name = LOOSE_METHODS[method]
        fig.add_trace(
            go.Scatter(
                x=part["factor"] * style["offset"], y=part["estimate"], mode="markers",
                name=name,
                marker={"color": style["color"], "symbol": style["symbol"], "size": 11,
                        "line": {"color": BLACK, "width": 1}},
                error_y={"type": "data", "symmetric": False,
                         "array": part["high"] - part["estimate"],
                         "arrayminus": part["estimate"] - part["low"],
                         "color": style["color"], "thickness": 2.5, "width": 6},
                customdata=np.column_stack([part["factor"], part["low"], part["high"]]),
                hovertemplate="bounds %{customdata[0]:g}× too loose<br>estimate %{y:.4g}<br>"
                "95% interval [%{customdata[1]:.4g}, %{customdata[2]:.4g}]<extra>" + name
                + "</extra>",
            )
        )  # fmt: skip
    x = [factors[0] / 1.4, factors[-1] * 1.4]
    fig.add_trace(
        go.Scatter(
            x=x, y=[LOOSE_MEAN] * 2, mode="lines", name=f"true mean μ = {LOOSE_MEAN:g}",
            line={"color": BLACK, "dash": "dot", "width": 2}, hoverinfo="skip",
        )
    )  # fmt: skip
    fig = _style(
        fig,
        "Loose bounds: GVDP stays valid, clipping pays",
        "how many times too loose the public range [−c, c] is, c (log scale)",
        "estimate of the mean (units of x)",
        subtitle=f"One simulated data set, n = {n:,} rows x ~ N(1, 1), ρ = {rho:g} zCDP; "
        "bars: 95% intervals",
    )
    fig.update_xaxes(type="log", tickvals=factors, ticktext=[f"{f:g}×" for f in factors])
    return fig


def loose_bounds_summary(study: pd.DataFrame) -> str:
    """One sentence: how each method's interval width changes from the tightest to the loosest
    bounds, and the clipped mean's bias at the tightest."""
    by = study.set_index(["method", "factor"])
    tight, loose = float(study["factor"].min()), float(study["factor"].max())

    def width(method: str, factor: float) -> float:
        return float(by.loc[(method, factor), "median_width"])

    clipped = by.loc[("clipped", tight)]
    bias = f"{clipped['bias']:+.2g}".replace("-", "−")
    return (
        f"From bounds {tight:g}× to {loose:g}× too loose, GVDP's interval widens from "
        f"{_fmt(width('gvdp', tight))} to {_fmt(width('gvdp', loose))} "
        f"({width('gvdp', loose) / width('gvdp', tight):.3g}×) and the clipped mean's from "
        f"{_fmt(width('clipped', tight))} to {_fmt(width('clipped', loose))} "
        f"({width('clipped', loose) / width('clipped', tight):.3g}×, its noise grows with the "
        f"range); at {tight:g}× the range clips {_pct(clipped['clipped_share'])} of the rows and "
        f"biases the clipped mean by {bias}. Widths are medians over {int(clipped['reps'])} "
        "data sets."
    )


def loose_coverage_figure(study: pd.DataFrame, *, rho: float, level: float = 0.95) -> go.Figure:
    """Coverage of the true mean over the simulated data sets, per factor and method, with the
    nominal level and its binomial band."""
    reps = int(study["reps"].iloc[0])
    factors = sorted(study["factor"].unique())
    x = [factors[0] / 1.4, factors[-1] * 1.4]
    fig = go.Figure()
    low, high = binomial_band(level, reps)
    _band(fig, x, 100 * low, 100 * high, f"simulation error band ({reps:,} data sets)")
    _nominal(fig, x, level)
    for method, style in _LOOSE_STYLE.items():
        part = study[study["method"] == method].sort_values("factor")
        name = LOOSE_METHODS[method]
        fig.add_trace(
            go.Scatter(
                x=part["factor"], y=100 * part["coverage"], mode="lines+markers", name=name,
                line={"color": style["color"], "width": 2.5},
                marker={"color": style["color"], "symbol": style["symbol"], "size": 11},
                hovertemplate="bounds %{x:g}× too loose<br>coverage %{y:.0f}%<extra>" + name
                + "</extra>",
            )
        )  # fmt: skip
    fig = _style(
        fig,
        "Still valid: how often the interval holds μ",
        "how many times too loose the public range [−c, c] is, c (log scale)",
        "coverage of 95% intervals (%)",
        subtitle=f"{reps:,} simulated data sets per c (the same ones for every c), ρ = {rho:g}",
    )
    fig.update_xaxes(type="log", tickvals=factors, ticktext=[f"{f:g}×" for f in factors])
    fig.update_yaxes(range=[0, 102], dtick=10)
    return fig


def loose_coverage_summary(study: pd.DataFrame, *, level: float = 0.95) -> str:
    """One sentence: GVDP's coverage range, and the clipped mean's at the tightest and the rest."""
    gvdp = study[study["method"] == "gvdp"]["coverage"]
    clipped = study[study["method"] == "clipped"].sort_values("factor")
    rest = clipped["coverage"].iloc[1:]
    return (
        f"GVDP's intervals hold the true mean in {_pct(gvdp.min())}–{_pct(gvdp.max())} of the "
        f"data sets at every factor (nominal {level:.0%}); the clipped mean's in "
        f"{_pct(clipped['coverage'].iloc[0])} at {clipped['factor'].iloc[0]:g}×, where clipping "
        f"biases it, and {_pct(rest.min())}–{_pct(rest.max())} once the range is wide enough."
    )


# ---- Preset: the ratio paper's Table 1 ----------------------------------------------------------


def table1_overview_figure(comparison: pd.DataFrame) -> go.Figure:
    """The ratio Compare page's Table 1 chart (:func:`strata_ui.charts_ratio.table1_figure`:
    every setting's coverage, ours against the paper's, and a zoom on 90–100%), restyled like the
    Learn page's charts: a short title with the settings as subtitle and the legend underneath, so
    it also fits a projector."""
    fig = charts_ratio.table1_figure(comparison)
    fig.update_layout(
        title={
            "text": "Table 1 rebuilt: our coverage against the paper's",
            "subtitle": {"text": "95% intervals, 16 settings × 4 methods; dashed: same as paper"},
            "y": None, "yref": "container", "yanchor": None, "pad": None,
        },
        height=LEARN_CHART_HEIGHT + 40,
        margin={"t": 100, "b": 140, "l": 70, "r": 20},
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.01,
                "xanchor": "left", "x": 0},
    )  # fmt: skip
    fig.update_traces(line_color=BLACK, selector={"name": "same as the paper"})  # Okabe–Ito
    fig.for_each_annotation(
        lambda a: a.update(text="Zoom on 90–100%") if a.text.startswith("Zoom") else None
    )
    fig.update_xaxes(title={"text": "paper's coverage (%)"})
    fig.update_yaxes(title={"text": "our coverage (%)"})
    return fig


TABLE1_SETTINGS = {
    "unweighted-5000": (False, 5000),
    "weighted-5000": (True, 5000),
    "unweighted-10000": (False, 10000),
    "weighted-10000": (True, 10000),
}


def table1_setting_figure(comparison: pd.DataFrame, *, weighted: bool, n: int) -> go.Figure:
    """One Table 1 setting: coverage (left) and mean width (right, log) against ε, ours (solid,
    filled) beside the paper's (dashed, open) for each interval method (``comparison`` is
    :func:`dpcore.analyses.ratio.table1_comparison`)."""
    rows = comparison[
        (comparison["weighted"] == weighted)
        & (comparison["n"] == n)
        & (comparison["composition"] == "basic")
    ]
    fig = make_subplots(
        rows=1, cols=2, horizontal_spacing=0.12,
        subplot_titles=("Coverage of 95% intervals", "Mean width (log scale)"),
    )  # fmt: skip
    epsilons = sorted(rows["epsilon"].unique())
    x = [epsilons[0] / 1.15, epsilons[-1] * 1.15]
    _nominal(fig, x, 0.95, row=1, col=1)
    for method in ("none", "monte_carlo", "analytical", "public"):
        part = rows[rows["method"] == method].sort_values("epsilon")
        colour, symbol = METHOD_COLOURS[method], METHOD_SYMBOLS[method]
        for who, dash, marker_symbol in (
            ("ours", "solid", symbol),
            ("paper", "dash", f"{symbol}-open"),
        ):
            # One legend entry per method (colour); the two line styles get their own entries.
            name = METHOD_NAMES[method] if who == "ours" else f"{METHOD_NAMES[method]}, paper"
            hover = f"{METHOD_NAMES[method]}, {'our run' if who == 'ours' else 'paper'}"
            for col, metric, scale in ((1, "coverage", 100), (2, "width", 1)):
                fig.add_trace(
                    go.Scatter(
                        x=part["epsilon"], y=scale * part[f"{who}_{metric}"],
                        mode="lines+markers", name=name, legendgroup=method,
                        showlegend=col == 1 and who == "ours",
                        line={"color": colour, "dash": dash, "width": 2},
                        marker={"color": colour, "symbol": marker_symbol, "size": 9},
                        hovertemplate=f"ε = %{{x:g}}<br>{metric} %{{y:.3g}}"
                        + f"<extra>{hover}</extra>",
                    ),
                    row=1, col=col,
                )  # fmt: skip
    for name, dash, symbol in (
        ("our run (solid, filled)", "solid", "circle"),
        ("the paper (dashed, open)", "dash", "circle-open"),
    ):
        fig.add_trace(
            go.Scatter(
                x=[None], y=[None], mode="lines+markers", name=name,
                line={"color": BLACK, "dash": dash, "width": 2},
                marker={"color": BLACK, "symbol": symbol, "size": 9},
            ),
            row=1, col=1,
        )  # fmt: skip
    fig = _style(
        fig,
        "Table 1, one setting: ours against the paper's",
        "privacy budget ε (log scale)",
        "",
        subtitle=f"{_ratio_setting(n, weighted)}: our run beside the paper's Table 1",
    )
    _epsilon_axis(fig, epsilons)
    fig.update_yaxes(title={"text": "coverage (%)"}, range=[0, 102], row=1, col=1)
    widths = pd.concat([rows["ours_width"], rows["paper_width"]]).dropna()
    fig.update_yaxes(
        title={"text": "mean width (ratio units)"}, type="log",
        tickvals=log_ticks(widths.min(), widths.max()), tickformat="~g", row=1, col=2,
    )  # fmt: skip
    fig.update_layout(height=LEARN_CHART_HEIGHT + 40, margin={"b": 130})
    return fig


def table1_setting_summary(comparison: pd.DataFrame, *, weighted: bool, n: int) -> str:
    """One sentence: the largest coverage gap to the paper in this setting and the width ratio
    range of the corrected methods."""
    rows = comparison[
        (comparison["weighted"] == weighted)
        & (comparison["n"] == n)
        & (comparison["composition"] == "basic")
    ].dropna(subset=["paper_coverage"])
    gap = (rows["ours_coverage"] - rows["paper_coverage"]).abs()
    worst = rows.loc[gap.idxmax()]
    corrected = rows[rows["method"].isin(["monte_carlo", "analytical"])]
    ratio = corrected["ours_width"] / corrected["paper_width"]
    return (
        f"For {_ratio_setting(n, weighted)}, our coverage is within {100 * gap.max():.1f} "
        f"percentage points of the paper's everywhere (largest: "
        f"{method_in_text(worst['method'])} at ε = {worst['epsilon']:g}, "
        f"{_pct(worst['ours_coverage'])} vs {_pct(worst['paper_coverage'])}); the corrected "
        f"intervals' mean widths are {ratio.min():.2f} to {ratio.max():.2f} times the paper's."
    )


# ---- Preset: the GVDP paper's OLS demonstration --------------------------------------------------


def gvdp_ols_figure(intervals: pd.DataFrame, *, n: int, k: int, level: float = 0.95) -> go.Figure:
    """Figure 2 of Covington et al. rebuilt for one panel: every interval (all runs and
    coefficients) centred at its true coefficient, sorted by its estimate, with dotted lines at
    the 2.5% and 97.5% ranks — where calibrated intervals stop crossing zero."""
    centred = intervals.assign(
        estimate_c=intervals["estimate"] - intervals["truth"],
        low_c=intervals["low"] - intervals["truth"],
        high_c=intervals["high"] - intervals["truth"],
    ).sort_values("estimate_c", ignore_index=True)
    rank = np.arange(1, len(centred) + 1)
    fig = go.Figure()
    for covered, name, colour in (
        (True, "interval contains the true coefficient", BLUE),
        (False, "interval misses it", VERMILLION),
    ):
        mask = centred["covered"].to_numpy() == covered
        part = centred[mask]
        fig.add_trace(
            go.Scatter(
                x=rank[mask], y=part["estimate_c"], mode="markers", name=name,
                marker={"color": colour, "size": 5},
                error_y={"type": "data", "symmetric": False,
                         "array": part["high_c"] - part["estimate_c"],
                         "arrayminus": part["estimate_c"] - part["low_c"],
                         "color": rgba(colour, 0.55), "thickness": 1.2, "width": 0},
                customdata=np.column_stack([part["run"] + 1, part["coefficient"]]),
                hovertemplate="run %{customdata[0]}, coefficient β%{customdata[1]}<br>"
                "estimate − truth %{y:.4g}<extra></extra>",
            )
        )  # fmt: skip
    tail = (1 - level) / 2
    total = len(centred)
    # Every estimate and a typical interval around it fit; the few enormous intervals (the β
    # failure event) run off the axis rather than squash the rest.
    typical = float(np.median(centred["high_c"] - centred["low_c"])) / 2
    span = (float(centred["estimate_c"].abs().max()) + typical) * 1.08
    name = f"{100 * tail:g}% and {100 * (1 - tail):g}% ranks"
    for q in (tail, 1 - tail):
        fig.add_trace(
            go.Scatter(
                x=[q * total + 0.5] * 2, y=[-span, span], mode="lines", name=name,
                showlegend=q == tail, legendgroup="ranks",
                line={"color": BLACK, "dash": "dot", "width": 1.5}, hoverinfo="skip",
            )
        )  # fmt: skip
    fig.add_hline(y=0, line={"color": BLACK, "width": 1})
    fig = _style(
        fig,
        "Figure 2 rebuilt: every interval, sorted",
        "interval, sorted by its estimate (rank)",
        "estimate − truth (units of β)",
        subtitle=f"n = {n:,}, k = {k:,}: {intervals['run'].nunique()} runs × 5 coefficients, "
        "ρ = 0.1",
    )
    fig.update_yaxes(range=[-span, span])
    fig.update_xaxes(range=[0, total + 1])
    return fig


def gvdp_ols_figure_summary(intervals: pd.DataFrame, summary: pd.DataFrame) -> str:
    """One sentence: pooled coverage, where the misses sit among the sorted estimates, and how
    much wider GVDP's intervals are than OLS's."""
    pooled = summary[summary["coefficient"] == 0].iloc[0]
    centred = (intervals["estimate"] - intervals["truth"]).rank(method="first").to_numpy()
    missed = ~intervals["covered"].to_numpy()
    total = len(intervals)
    in_tails = int(np.sum(missed & ((centred <= 0.025 * total) | (centred > 0.975 * total))))
    where = (
        f"{in_tails} of its {int(missed.sum())} misses lie beyond the dotted lines, among the "
        "2.5% lowest or highest estimates, where calibrated intervals miss"
        if missed.any()
        else "none misses"
    )
    return (
        f"{_pct(pooled['coverage'])} of the {int(pooled['intervals'])} GVDP intervals contain "
        f"the true coefficient (non-private OLS: {_pct(pooled['np_coverage'])}); {where}. The "
        f"median GVDP interval is {pooled['width_ratio']:.3g} times as wide as OLS's."
    )


def gvdp_ols_coverage_figure(
    summary: pd.DataFrame, *, n: int, k: int, level: float = 0.95
) -> go.Figure:
    """Per coefficient: coverage (left, with the nominal level and binomial band) and median
    interval width (right, log), GVDP beside non-private OLS."""
    coefficients = summary[summary["coefficient"] > 0]
    labels = [f"β{c}" for c in coefficients["coefficient"]]
    reps = int(coefficients["intervals"].iloc[0])
    fig = make_subplots(
        rows=1, cols=2, horizontal_spacing=0.14,
        subplot_titles=("Coverage per coefficient", "Median interval width (log scale)"),
    )  # fmt: skip
    low, high = binomial_band(level, reps)
    band = f"simulation error band ({reps} runs)"
    for name, marker in (
        (band, {"symbol": "square", "size": 14, "color": BLACK, "opacity": 0.2}),
        (
            f"nominal {level:.0%}",
            {"symbol": "line-ew", "size": 16, "color": BLACK, "line": {"color": BLACK, "width": 2}},
        ),
    ):
        fig.add_trace(
            go.Scatter(x=[None], y=[None], mode="markers", name=name, marker=marker),
            row=1, col=1,
        )  # fmt: skip
    for column, name, colour, symbol in (
        ("", "GVDP (ρ = 0.1)", BLUE, "circle"),
        ("np_", "non-private OLS", ORANGE, "square"),
    ):
        fig.add_trace(
            go.Scatter(
                x=labels, y=100 * coefficients[f"{column}coverage"], mode="markers", name=name,
                legendgroup=name, marker={"color": colour, "symbol": symbol, "size": 12},
                hovertemplate="%{x}: coverage %{y:.0f}%<extra>" + name + "</extra>",
            ),
            row=1, col=1,
        )  # fmt: skip
        fig.add_trace(
            go.Bar(
                x=labels, y=coefficients[f"{column}width"], name=name, legendgroup=name,
                showlegend=False, marker_color=colour,
                hovertemplate="%{x}: median width %{y:.4g}<extra>" + name + "</extra>",
            ),
            row=1, col=2,
        )  # fmt: skip
    # Shapes go in after the traces: Plotly skips them on a subplot that has no data yet.
    fig.add_hrect(
        y0=100 * low, y1=100 * high, fillcolor=rgba(BLACK, 0.1), line_width=0, layer="below",
        row=1, col=1,
    )  # fmt: skip
    fig.add_hline(y=100 * level, line={"color": BLACK, "dash": "dot", "width": 2}, row=1, col=1)
    fig = _style(
        fig,
        "Coverage and width per coefficient",
        "coefficient",
        "",
        subtitle=f"n = {n:,}, k = {k:,}: {reps} runs; β in units of y per unit of x",
    )
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=labels)
    fig.update_yaxes(title={"text": "coverage (%)"}, range=[0, 102], row=1, col=1)
    widths = pd.concat([coefficients["width"], coefficients["np_width"]])
    fig.update_yaxes(
        title={"text": "median width (units of β)"}, type="log",
        tickvals=log_ticks(widths.min(), widths.max()), tickformat="~g", row=1, col=2,
    )  # fmt: skip
    fig.update_layout(barmode="group")
    return fig


def gvdp_ols_coverage_summary(summary: pd.DataFrame) -> str:
    """One sentence: coverage range over coefficients and the width ratio range."""
    coefficients = summary[summary["coefficient"] > 0]
    return (
        f"Per coefficient, GVDP covers {_pct(coefficients['coverage'].min())} to "
        f"{_pct(coefficients['coverage'].max())} over {int(coefficients['intervals'].iloc[0])} "
        f"runs, and its median interval is {coefficients['width_ratio'].min():.3g} to "
        f"{coefficients['width_ratio'].max():.3g} times as wide as non-private OLS's: the price "
        "of privacy here, set by k rather than by n."
    )
