"""Figures of GVDP's Learn items: loose bounds against clipping, and the OLS experiment."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore.analyses.gvdp.teaching import LOOSE_MEAN, LOOSE_METHODS
from dpcore.foundations.metrics import binomial_band
from strata_ui.charts_common import dotted_line, interval_bars, log_ticks
from strata_ui.learn_charts import (
    coverage_canvas,
    fmt_number,
    fmt_percent,
    learn_layout,
)
from strata_ui.style import BLACK, BLUE, ORANGE, VERMILLION, rgba

_LOOSE_STYLE = {
    "gvdp": {"color": BLUE, "symbol": "circle", "offset": 1 / 1.12},
    "clipped": {"color": VERMILLION, "symbol": "diamond", "offset": 1.12},
}


def loose_bounds_figure(study: pd.DataFrame, *, rho: float, n: int) -> go.Figure:
    """One release per factor: GVDP's and the clipped mean's estimates with their 95% intervals
    against the overestimation factor (log x), the true mean marked (``study`` is
    :func:`dpcore.analyses.gvdp.teaching.loose_bounds_study`)."""
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
                error_y=interval_bars(part["estimate"], part["low"], part["high"],
                                      style["color"], thickness=2.5, width=6),
                customdata=np.column_stack([part["factor"], part["low"], part["high"]]),
                hovertemplate="bounds %{customdata[0]:g}× too loose<br>estimate %{y:.4g}<br>"
                "95% interval [%{customdata[1]:.4g}, %{customdata[2]:.4g}]<extra>" + name
                + "</extra>",
            )
        )  # fmt: skip
    x = [factors[0] / 1.4, factors[-1] * 1.4]
    fig.add_trace(dotted_line(x, [LOOSE_MEAN] * 2, f"true mean μ = {LOOSE_MEAN:g}"))
    fig = learn_layout(
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
        f"{fmt_number(width('gvdp', tight))} to {fmt_number(width('gvdp', loose))} "
        f"({width('gvdp', loose) / width('gvdp', tight):.3g}×) and the clipped mean's from "
        f"{fmt_number(width('clipped', tight))} to {fmt_number(width('clipped', loose))} "
        f"({width('clipped', loose) / width('clipped', tight):.3g}×, its noise grows with the "
        f"range); at {tight:g}× the range clips {fmt_percent(clipped['clipped_share'])} of the rows and "
        f"biases the clipped mean by {bias}. Widths are medians over {int(clipped['reps'])} "
        "data sets."
    )


def loose_coverage_figure(study: pd.DataFrame, *, rho: float, level: float = 0.95) -> go.Figure:
    """Coverage of the true mean over the simulated data sets, per factor and method, with the
    nominal level and its binomial band."""
    reps = int(study["reps"].iloc[0])
    factors = sorted(study["factor"].unique())
    x = [factors[0] / 1.4, factors[-1] * 1.4]
    fig = coverage_canvas(x, level, reps, "data sets")
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
    fig = learn_layout(
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
        f"GVDP's intervals hold the true mean in {fmt_percent(gvdp.min())}–{fmt_percent(gvdp.max())} of the "
        f"data sets at every factor (nominal {level:.0%}); the clipped mean's in "
        f"{fmt_percent(clipped['coverage'].iloc[0])} at {clipped['factor'].iloc[0]:g}×, where clipping "
        f"biases it, and {fmt_percent(rest.min())}–{fmt_percent(rest.max())} once the range is wide enough."
    )


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
                error_y=interval_bars(part["estimate_c"], part["low_c"], part["high_c"],
                                      rgba(colour, 0.55), thickness=1.2, width=0),
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
            dotted_line([q * total + 0.5] * 2, [-span, span], name, width=1.5,
                        showlegend=q == tail, legendgroup="ranks")
        )  # fmt: skip
    fig.add_hline(y=0, line={"color": BLACK, "width": 1})
    fig = learn_layout(
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
        f"{fmt_percent(pooled['coverage'])} of the {int(pooled['intervals'])} GVDP intervals contain "
        f"the true coefficient (non-private OLS: {fmt_percent(pooled['np_coverage'])}); {where}. The "
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
    fig = learn_layout(
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
        f"Per coefficient, GVDP covers {fmt_percent(coefficients['coverage'].min())} to "
        f"{fmt_percent(coefficients['coverage'].max())} over {int(coefficients['intervals'].iloc[0])} "
        f"runs, and its median interval is {coefficients['width_ratio'].min():.3g} to "
        f"{coefficients['width_ratio'].max():.3g} times as wide as non-private OLS's: the price "
        "of privacy here, set by k rather than by n."
    )
