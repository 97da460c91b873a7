"""Figures of the ratio's Learn items: coverage and width across ε, and Table 1 beside the paper."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore.foundations.metrics import binomial_band
from strata_ui.analyses.ratio import compare_charts
from strata_ui.analyses.ratio.charts import (
    METHOD_COLOURS,
    METHOD_NAMES,
    METHOD_SYMBOLS,
    method_in_text,
)
from strata_ui.charts_common import log_ticks
from strata_ui.constants import (
    LEARN_CHART_HEIGHT,
)
from strata_ui.learn_charts import (
    add_nominal,
    coverage_canvas,
    epsilon_axis,
    fmt_number,
    fmt_percent,
    learn_layout,
)
from strata_ui.style import BLACK, LEGEND_BELOW

RATIO_CI_ORDER = ("none", "monte_carlo", "analytical", "public")


def _ratio_setting(n: int, weighted: bool) -> str:
    return f"n = {n:,} {'weighted' if weighted else 'unweighted'} rows"


def ratio_coverage_figure(sweep: pd.DataFrame, *, level: float = 0.95) -> go.Figure:
    """Coverage of 95% ratio intervals against ε for each method, with the nominal level and the
    binomial band that simulation error alone would leave (``sweep`` is
    :func:`dpcore.analyses.ratio.teaching.ratio_coverage_sweep`)."""
    reps, n = int(sweep["reps"].iloc[0]), int(sweep["n"].iloc[0])
    weighted = bool(sweep["weighted"].iloc[0])
    epsilons = sorted(sweep["epsilon"].unique())
    x = [epsilons[0] / 1.15, epsilons[-1] * 1.15]
    fig = coverage_canvas(x, level, reps, "releases")
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
    fig = learn_layout(
        fig,
        "Ignoring the noise breaks the 95% promise",
        "privacy budget ε (log scale)",
        "coverage of 95% intervals (%)",
        subtitle=f"Ratio Σs/Σy, {_ratio_setting(n, weighted)}, {reps:,} simulated releases per ε; "
        "bars ±2 SE",
    )
    epsilon_axis(fig, epsilons)
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
        f"Intervals that ignore the DP noise cover the true ratio only {fmt_percent(worst['coverage'])} "
        f"of the time at ε = {eps:g} (and {fmt_percent(by[('none', largest)])} at ε = {largest:g}); the "
        f"Monte Carlo and analytical corrections cover {fmt_percent(by[('monte_carlo', eps)])} and "
        f"{fmt_percent(by[('analytical', eps)])} there, inside the band {fmt_percent(low)}–{fmt_percent(high)} that "
        f"{reps:,} simulated releases leave around the nominal {level:.0%}."
        if low <= by[("analytical", eps)] <= high
        else f"Intervals that ignore the DP noise cover the true ratio only "
        f"{fmt_percent(worst['coverage'])} of the time at ε = {eps:g}; the corrections cover "
        f"{fmt_percent(by[('monte_carlo', eps)])} (Monte Carlo) and {fmt_percent(by[('analytical', eps)])} "
        f"(analytical) there, against the nominal {level:.0%} (band {fmt_percent(low)}–{fmt_percent(high)})."
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
    fig = learn_layout(
        fig,
        "Honest intervals are wider",
        "privacy budget ε (log scale)",
        "mean width (ratio units, log scale)",
        subtitle=f"Ratio Σs/Σy (true value 1.1), {_ratio_setting(n, weighted)}, {reps:,} "
        "releases per ε",
    )
    epsilon_axis(fig, sweep["epsilon"])
    widths = sweep["width"].dropna()
    fig.update_yaxes(type="log", tickvals=log_ticks(widths.min(), widths.max()), tickformat="~g")
    return fig


def ratio_width_summary(sweep: pd.DataFrame) -> str:
    """One sentence: corrected vs non-private width at the smallest and largest ε."""
    by = sweep.set_index(["method", "epsilon"])["width"]
    small, large = float(sweep["epsilon"].min()), float(sweep["epsilon"].max())
    public = float(by[("public", small)])
    return (
        f"The analytical correction's interval is {fmt_number(by[('analytical', small)])} wide at "
        f"ε = {small:g}, {by[('analytical', small)] / public:.3g} times the non-private "
        f"{fmt_number(public)}, and {by[('analytical', large)] / public:.3g} times at ε = {large:g}; "
        "the uncorrected interval keeps the non-private width whatever ε, which is why it misses."
    )


def table1_overview_figure(comparison: pd.DataFrame) -> go.Figure:
    """The ratio Compare page's Table 1 chart (:func:`strata_ui.analyses.ratio.compare_charts.table1_figure`:
    every setting's coverage, ours against the paper's, and a zoom on 90–100%), restyled like the
    Learn page's charts: a short title with the settings as subtitle and the legend underneath, so
    it also fits a projector."""
    fig = compare_charts.table1_figure(comparison)
    fig.update_layout(
        title={
            "text": "Table 1 rebuilt: our coverage against the paper's",
            "subtitle": {"text": "95% intervals, 16 settings × 4 methods; dashed: same as paper"},
            "y": None, "yref": "container", "yanchor": None, "pad": None,
        },
        height=LEARN_CHART_HEIGHT + 40,
        margin={"t": 100, "b": 140, "l": 70, "r": 20},
        legend=LEGEND_BELOW,
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
    add_nominal(fig, x, 0.95, row=1, col=1)
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
    fig = learn_layout(
        fig,
        "Table 1, one setting: ours against the paper's",
        "privacy budget ε (log scale)",
        "",
        subtitle=f"{_ratio_setting(n, weighted)}: our run beside the paper's Table 1",
    )
    epsilon_axis(fig, epsilons)
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
        f"{fmt_percent(worst['ours_coverage'])} vs {fmt_percent(worst['paper_coverage'])}); the corrected "
        f"intervals' mean widths are {ratio.min():.2f} to {ratio.max():.2f} times the paper's."
    )
