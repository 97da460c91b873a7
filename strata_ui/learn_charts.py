"""Figures the Learn page's explainers share: sizing for a projector, the ε explainer's figures, and
the nominal level with its binomial band on coverage charts.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore.foundations.metrics import binomial_band
from dpcore.foundations.teaching import NeighbourNoise
from strata_ui.charts_common import dotted_line
from strata_ui.constants import (
    LEARN_CHART_HEIGHT,
    LEARN_FONT_SIZE,
    WORKSHOP_CHART_HEIGHT,
    WORKSHOP_FONT_SIZE,
)
from strata_ui.style import BLACK, BLUE, FONT, GREEN, LEGEND_BELOW, ORANGE, VERMILLION, rgba

# Above this many groups, markers on the error curve are not labelled (the labels would overlap).
MAX_LABELLED_GROUPS = 12


def learn_layout(
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
        legend=LEGEND_BELOW,
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


def fmt_number(value: float) -> str:
    """Three significant digits, without scientific notation for everyday magnitudes."""
    if value == 0 or 1e-3 <= abs(value) < 1e6:
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{value:.2g}"


def fmt_percent(fraction: float) -> str:
    return f"{100 * fraction:.3g}%"


D_NAME = "dataset D"


D_PRIME_NAME = "neighbour D′ (one more person)"


def _delta(delta: float) -> str:
    """``1e-6`` rather than Python's ``1e-06``."""
    mantissa, exponent = f"{delta:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _mechanism_titles(noise: NeighbourNoise) -> tuple[str, str]:
    return (
        f"Laplace, b = Δ/ε = {fmt_number(noise.laplace_b)}",
        f"Gaussian, σ = {fmt_number(noise.gaussian_sigma)}, δ = {_delta(noise.delta)}",
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
    fig = learn_layout(
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
        f"At ε = {noise.epsilon:g}, Laplace noise has scale b = {fmt_number(noise.laplace_b)} and the "
        f"Gaussian σ = {fmt_number(noise.gaussian_sigma)} (δ = {_delta(noise.delta)}); both are wide compared "
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
        for y, fill, show in ((math.exp(-eps), None, False), (math.exp(eps), "tonexty", col == 1)):
            fig.add_trace(
                dotted_line(
                    [x[0], x[-1]], [y, y], band, colour=GREEN, width=1.5, fill=fill,
                    fillcolor=rgba(GREEN, 0.15) if fill else None, legendgroup=band,
                    showlegend=show,
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
    fig = learn_layout(
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
        f"outputs below {fmt_number(noise.low_cut)} (or above {fmt_number(noise.high_cut)} the other way), "
        f"which D produces with probability {noise.tail_probability:.2g}. Only the part of that "
        "probability above e^ε times D′'s counts against the guarantee, and it is at most "
        f"δ = {_delta(noise.delta)} (Balle & Wang 2018, Thm. 5)."
    )


def epsilon_axis(fig: go.Figure, epsilons, **where) -> None:
    values = sorted({float(e) for e in epsilons})
    fig.update_xaxes(type="log", tickvals=values, ticktext=[f"{e:g}" for e in values], **where)


def add_band(
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


def add_nominal(
    fig: go.Figure, x: list[float], level: float, *, legend: bool = True, **where
) -> None:
    """The nominal coverage (in %) as a dotted black line over ``x``."""
    name = f"nominal {level:.0%}"
    fig.add_trace(
        dotted_line(x, [100 * level] * 2, name, legendgroup=name, showlegend=legend), **where
    )


def coverage_canvas(x: list[float], level: float, reps: int, runs: str) -> go.Figure:
    """A new coverage figure (in %) over ``x``: the nominal level and the binomial band that
    ``reps`` simulated ``runs`` alone would leave around it (:func:`dpcore.foundations.metrics.binomial_band`)."""
    fig = go.Figure()
    low, high = binomial_band(level, reps)
    add_band(fig, x, 100 * low, 100 * high, f"simulation error band ({reps:,} {runs})")
    add_nominal(fig, x, level)
    return fig
