"""Plotly figures and one-sentence summaries for the general estimator with valid CIs (GVDP).

Every builder takes the tidy frames of :mod:`dpcore.analyses.gvdp` and returns a figure or a
sentence; nothing here imports streamlit, so the figures are unit-tested directly. Colours are
the Okabe–Ito palette of :data:`strata_ui.style.PALETTE`: DP results blue, non-private orange,
recombined (population) vermillion.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dpcore.analyses.gvdp.groups import ALL, DP, NON_PRIVATE
from dpcore.analyses.gvdp.model import INTERCEPT, GvdpBoundsSpec
from dpcore.release import ReleaseRecord
from strata_ui.charts_common import interval_bars
from strata_ui.charts_release import release_traces
from strata_ui.style import FONT, PALETTE, plain_number, wrap_label
from strata_ui.text import chart_text

METHOD_COLOURS = {DP: PALETTE[0], NON_PRIVATE: PALETTE[1]}
RECOMBINED_COLOUR = PALETTE[3]
REFERENCE_COLOUR = PALETTE[3]
BAND_COLOUR = "rgba(0, 158, 115, 0.18)"  # Okabe–Ito bluish green, light
NOMINAL_COLOUR = PALETTE[2]
AXIS_WIDTH = 28  # characters per line of a wrapped axis title


def _fmt(value: float) -> str:
    """Four significant digits, with thousands separators for large numbers."""
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{plain_number(value, 4)}"


def _wrap(text: str, width: int = AXIS_WIDTH) -> str:
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "<br>".join([*lines, line])


def coefficient_unit(kind: str, outcome: str, coefficient: str) -> str:
    """What a coefficient measures, with its unit, for an axis title."""
    if kind == "mean":
        return f"Mean of {outcome} (units of {outcome})"
    if kind == "ols":
        if coefficient == INTERCEPT:
            return f"{outcome} when every covariate is 0 (units of {outcome})"
        return f"Change in {outcome} per unit of {coefficient}"
    if coefficient == INTERCEPT:
        return f"Log-odds of {outcome} = 1 when every covariate is 0"
    return f"Change in log-odds of {outcome} = 1 per unit of {coefficient}"


def coefficient_units(kind: str, outcome: str, coefficient: str) -> str:
    """A coefficient's unit, short: ``"hours_per_week per unit of age"``, ``"log-odds"``."""
    base = outcome if kind in ("mean", "ols") else "log-odds"
    if kind == "mean" or coefficient == INTERCEPT:
        return base
    return f"{base} per unit of {coefficient}"


LEGEND_TOP = {
    "orientation": "h", "yanchor": "bottom", "y": 1.01, "xanchor": "right", "x": 1,
    "title": {"text": ""},
}  # fmt: skip
LEGEND_BOTTOM = {
    "orientation": "h", "yanchor": "top", "y": -0.3, "xanchor": "left", "x": 0,
    "title": {"text": ""},
}  # fmt: skip


def _layout(fig: go.Figure, title: str, *, legend: str = "top", **extra) -> go.Figure:
    """Title, font, and a legend above the plot (``"top"``) or below the axis (``"bottom"``)."""
    fig.update_layout(
        title={"text": title},
        font=FONT,
        margin={"t": 100, "b": 60 if legend == "top" else 120},
        legend=LEGEND_TOP if legend == "top" else LEGEND_BOTTOM,
        **extra,
    )
    return fig


_BAR_STYLE = {"thickness": 2, "width": 8}  # bolder interval bars than Plotly's default


def _error_bars(part: pd.DataFrame, colour: str) -> dict:
    return interval_bars(part["estimate"], part["low"], part["high"], colour, **_BAR_STYLE)


# 1. DP against non-private, one panel per coefficient.


def comparison_figure(frame: pd.DataFrame, *, kind: str, outcome: str, level: float) -> go.Figure:
    """Per coefficient, the DP estimate and the non-private estimate with their intervals.

    ``frame`` is :func:`dpcore.analyses.gvdp.comparison_frame`: ``coefficient``, ``method``,
    ``estimate``, ``low``, ``high``. One panel (own y-axis) per coefficient: coefficients have
    different units and scales.
    """
    coefficients = list(dict.fromkeys(frame["coefficient"]))
    fig = make_subplots(
        rows=1,
        cols=len(coefficients),
        subplot_titles=coefficients,
        horizontal_spacing=min(0.12, 0.6 / max(len(coefficients), 1)),
    )
    for col, coefficient in enumerate(coefficients, start=1):
        for method, colour in METHOD_COLOURS.items():
            part = frame[(frame["coefficient"] == coefficient) & (frame["method"] == method)]
            fig.add_trace(
                go.Scatter(
                    x=[method],
                    y=part["estimate"],
                    mode="markers",
                    name=method,
                    legendgroup=method,
                    showlegend=col == 1,
                    marker={"color": colour, "size": 11},
                    error_y=_error_bars(part, colour),
                    customdata=part[["low", "high"]].to_numpy(),
                    hovertemplate=(
                        f"{coefficient}<br>{method}: %{{y:,.4r}}<br>"
                        f"{level:.0%} interval %{{customdata[0]:,.4r}} to %{{customdata[1]:,.4r}}"
                        "<extra></extra>"
                    ),
                ),
                row=1,
                col=col,
            )
        fig.update_yaxes(
            title={"text": _wrap(coefficient_unit(kind, outcome, coefficient))},
            row=1,
            col=col,
        )
        fig.update_xaxes(title={"text": "Estimate"}, row=1, col=col)
    fig.update_layout(height=460)
    return _layout(
        fig,
        f"DP estimate (GVDP) beside the non-private estimate, with {level:.0%} intervals",
        legend="bottom",
    )


def comparison_summary(frame: pd.DataFrame) -> str:
    """How much wider the DP intervals are than the non-private ones, and whether they overlap."""
    parts, apart = [], []
    for coefficient in dict.fromkeys(frame["coefficient"]):
        rows = frame[frame["coefficient"] == coefficient].set_index("method")
        dp, ref = rows.loc[DP], rows.loc[NON_PRIVATE]
        ratio = (dp["high"] - dp["low"]) / max(ref["high"] - ref["low"], np.finfo(float).tiny)
        parts.append(f"{plain_number(ratio, 3)}× for {coefficient}")
        if dp["high"] < ref["low"] or dp["low"] > ref["high"]:
            apart.append(coefficient)
    overlap = (
        "every DP interval overlaps its non-private interval"
        if not apart
        else f"the DP and non-private intervals do not overlap for {', '.join(apart)}"
    )
    return f"The DP intervals are {'; '.join(parts)} as wide as the non-private ones; {overlap}."


# 2. Per group: estimates and interval widths.


def _group_order(part: pd.DataFrame) -> pd.DataFrame:
    groups = part[part["level"] == "group"].drop_duplicates("group")
    return groups.sort_values("rows", kind="stable")


def _tick(group: str, rows: int, subsets: int) -> str:
    return f"{wrap_label(group)}<br>n = {int(rows):,}<br>k = {int(subsets):,}"


def group_figure(
    frame: pd.DataFrame,
    coefficient: str,
    *,
    unit: str,
    level: float,
    y_range: tuple[float, float] | None = None,
) -> go.Figure:
    """Each group's DP and non-private estimate of ``coefficient``, smallest group first, and the
    recombined population estimate at the right.

    ``frame`` is :func:`dpcore.analyses.gvdp.groups_frame`. ``y_range`` (e.g. the public range of
    the coefficient) fixes the axis; intervals running past it are cut at the edge, and their
    ends are in the hover text.
    """
    part = frame[frame["coefficient"] == coefficient]
    order = _group_order(part)
    categories = [*order["group"], ALL]
    ticks = [_tick(g, n, k) for g, n, k in zip(order["group"], order["rows"], order["subsets"], strict=True)]  # fmt: skip
    recombined = part[part["level"] == "population"]
    if not recombined.empty:
        ticks.append(f"{ALL}<br>(recombined)")
    else:
        categories = categories[:-1]
    fig = go.Figure()
    for method, colour in METHOD_COLOURS.items():
        rows = part[part["method"] == method].set_index("group").reindex(categories)
        fig.add_trace(
            go.Scatter(
                x=categories,
                y=rows["estimate"],
                mode="markers",
                name=method,
                marker={
                    "color": [RECOMBINED_COLOUR if g == ALL else colour for g in categories],
                    "size": 10,
                    "symbol": "circle" if method == DP else "diamond",
                    "line": {"color": colour, "width": 2},
                },
                offsetgroup=method,
                error_y=_error_bars(rows.reset_index(), colour),
                customdata=rows[["low", "high"]].to_numpy(),
                hovertemplate=(
                    f"%{{x}}<br>{method}: %{{y:,.4r}}<br>{level:.0%} interval "
                    "%{customdata[0]:,.4r} to %{customdata[1]:,.4r}<extra></extra>"
                ),
            )
        )
    if y_range is not None:
        _mark_beyond(fig, part, categories, y_range)
    fig.update_layout(scattermode="group", height=500)
    fig.update_xaxes(
        categoryorder="array",
        categoryarray=categories,
        tickvals=categories,
        ticktext=ticks,
        tickangle=0,
        tickfont={"size": 11},
        title={"text": "Group, smallest to largest (n = rows, k = BLB subsets)"},
    )
    fig.update_yaxes(title={"text": _wrap(unit, 40)})
    if y_range is not None:
        fig.update_yaxes(range=list(y_range))
    title = f"{coefficient}: DP and non-private estimate in each group, {level:.0%} intervals"
    return _layout(fig, title)


def _mark_beyond(
    fig: go.Figure, part: pd.DataFrame, categories: list[str], y_range: tuple[float, float]
) -> None:
    """Triangles at the axis edge for estimates beyond ``y_range`` (their value on hover)."""
    low, high = y_range
    for method, colour in METHOD_COLOURS.items():
        rows = part[part["method"] == method].set_index("group").reindex(categories)
        estimate = rows["estimate"].to_numpy()
        outside = (estimate > high) | (estimate < low)
        if not outside.any():
            continue
        fig.add_trace(
            go.Scatter(
                x=[c for c, o in zip(categories, outside, strict=True) if o],
                y=np.where(estimate[outside] > high, high, low),
                mode="markers",
                name=f"{method} estimate beyond the axis",
                marker={
                    "color": colour,
                    "size": 13,
                    "symbol": np.where(estimate[outside] > high, "triangle-up", "triangle-down"),
                },
                offsetgroup=method,
                cliponaxis=False,
                customdata=estimate[outside],
                hovertemplate=f"%{{x}}<br>{method}: %{{customdata:,.4r}} (beyond the axis)"
                "<extra></extra>",
            )
        )


def group_width_figure(frame: pd.DataFrame, coefficient: str, *, unit: str) -> go.Figure:
    """Width of each group's DP and non-private interval for ``coefficient``, log scale."""
    part = frame[(frame["coefficient"] == coefficient) & (frame["level"] == "group")]
    order = _group_order(part)
    fig = go.Figure()
    for method, colour in METHOD_COLOURS.items():
        rows = part[part["method"] == method].set_index("group").loc[order["group"]]
        fig.add_trace(
            go.Bar(
                x=[chart_text(g) for g in rows.index],
                y=(rows["high"] - rows["low"]).to_numpy(),
                name=method,
                marker_color=colour,
                hovertemplate=f"%{{x}}<br>{method}: width %{{y:,.3r}}<extra></extra>",
            )
        )
    fig.update_layout(barmode="group", height=480)
    fig.update_xaxes(
        categoryorder="array",
        categoryarray=[chart_text(g) for g in order["group"]],
        tickvals=[chart_text(g) for g in order["group"]],
        ticktext=[
            _tick(g, n, k)
            for g, n, k in zip(order["group"], order["rows"], order["subsets"], strict=True)
        ],  # fmt: skip
        tickangle=0,
        tickfont={"size": 11},
        title={"text": "Group, smallest to largest (n = rows, k = BLB subsets)"},
    )
    # Whole decades only: minor log ticks (2, 5) crowd the axis.
    fig.update_yaxes(
        type="log", dtick=1, title={"text": _wrap(f"Interval width ({unit}, log scale)", 40)}
    )
    return _layout(fig, f"{coefficient}: how wide each group's interval is (log scale)")


def group_estimates_summary(frame: pd.DataFrame, coefficient: str, *, level: float) -> str:
    """How many group DP intervals contain the group's non-private estimate, and the recombined
    estimate against its non-private counterpart."""
    part = frame[frame["coefficient"] == coefficient]
    groups = part[part["level"] == "group"]
    dp = groups[groups["method"] == DP].set_index("group")
    reference = groups[groups["method"] == NON_PRIVATE].set_index("group")["estimate"]
    inside = int(((dp["low"] <= reference) & (reference <= dp["high"])).sum())
    text = (
        f"{inside} of {len(dp)} group DP intervals contain the group's non-private estimate "
        f"of {coefficient}."
    )
    whole = part[part["group"] == ALL].set_index("method")
    if not whole.empty:
        row = whole.loc[DP]
        text += (
            f" Recombined over the groups: {_fmt(row['estimate'])} ({level:.0%} interval "
            f"{_fmt(row['low'])} to {_fmt(row['high'])}) against "
            f"{_fmt(whole.loc[NON_PRIVATE, 'estimate'])} without privacy."
        )
    return text


def group_summary(frame: pd.DataFrame, coefficient: str) -> str:
    """The smallest and largest group's interval widths, and the recombined one."""
    part = frame[frame["coefficient"] == coefficient]
    order = _group_order(part)

    def width(group: str, method: str) -> float:
        row = part[(part["group"] == group) & (part["method"] == method)].iloc[0]
        return float(row["high"] - row["low"])

    sentences = []
    for which, row in (("Smallest group", order.iloc[0]), ("largest", order.iloc[-1])):
        group = row["group"]
        sentences.append(
            f"{which} ({group}, n = {int(row['rows']):,}, k = {int(row['subsets']):,}): DP "
            f"interval {_fmt(width(group, DP))} wide against {_fmt(width(group, NON_PRIVATE))} "
            "without privacy"
        )
    text = "; ".join(sentences) + "."
    if (part["group"] == ALL).any():
        text += (
            f" Recombined: {_fmt(width(ALL, DP))} against {_fmt(width(ALL, NON_PRIVATE))}. "
            "Fewer rows mean fewer subsets k, and GVDP's noise shrinks only like 1/k."
        )
    return text


# 3. Coverage over replications.


def coverage_figure(frame: pd.DataFrame, *, title: str) -> go.Figure:
    """Observed coverage per coefficient (Clopper–Pearson 95% bars) against the nominal level and
    the binomial band of coverages consistent with it (``dpcore.analyses.gvdp.coverage_frame``)."""
    coefficients = list(frame["coefficient"])
    first = frame.iloc[0]
    nominal, low, high = (100 * float(first[c]) for c in ("nominal", "band_low", "band_high"))
    R = int(first["replications"])
    fig = go.Figure()
    fig.add_hrect(
        y0=low, y1=high, fillcolor=BAND_COLOUR, line_width=0, layer="below", showlegend=True,
        name=f"Range consistent with {nominal:.0f}% (binomial, R = {R})",
    )  # fmt: skip
    fig.add_hline(
        y=nominal, line={"color": NOMINAL_COLOUR, "dash": "dash", "width": 2},
        showlegend=True, name=f"Nominal {nominal:.0f}%",
    )  # fmt: skip
    coverage = 100 * frame["coverage"].to_numpy()
    fig.add_trace(
        go.Scatter(
            x=coefficients,
            y=coverage,
            mode="markers",
            name="Observed coverage (95% Clopper–Pearson)",
            marker={"color": PALETTE[0], "size": 12},
            error_y=interval_bars(coverage, 100 * frame["low"], 100 * frame["high"], PALETTE[0]),
            hovertemplate="%{x}: %{y:,.3r}% covered<extra></extra>",
        )
    )
    floor = min(float(100 * frame["low"].min()), low) - 5
    fig.update_yaxes(range=[max(0.0, floor), 101], title={"text": "Intervals covering (%)"})
    fig.update_xaxes(title={"text": "Coefficient"})
    fig.update_layout(height=440)
    return _layout(fig, title, legend="bottom")


def coverage_summary(frame: pd.DataFrame, truth: str) -> str:
    """Observed coverage of ``truth`` per coefficient against the nominal band."""
    first = frame.iloc[0]
    R, nominal = int(first["replications"]), float(first["nominal"])
    band = (
        f"{plain_number(100 * first['band_low'], 3)}–{plain_number(100 * first['band_high'], 3)}%"
    )
    parts = [f"{plain_number(100 * c, 3)}% for {name}" for name, c in zip(frame["coefficient"], frame["coverage"], strict=True)]  # fmt: skip
    below = frame.loc[frame["coverage"] < frame["band_low"], "coefficient"].tolist()
    verdict = (
        "all inside or above the band"
        if not below
        else f"below the band for {', '.join(below)}: those intervals miss too often"
    )
    return (
        f"Over R = {R:,} replications the DP intervals covered {truth} {'; '.join(parts)} "
        f"(nominal {nominal:.0%}, band {band}): {verdict}."
    )


# 4. Choosing k: the BLB subset estimates at several k (curator diagnostic).


def k_diagnostic_figure(
    frame: pd.DataFrame,
    coefficient: str,
    *,
    reference_estimate: float,
    reference_se: float,
    chosen_k: int,
    unit: str,
) -> go.Figure:
    """Violins of the BLB subset estimates (left) and of the subsets' standard errors relative to
    the full-data standard error (right) of ``coefficient`` at each k, with the full-data
    non-private values as dashed lines (paper Fig. 3 and App. G.4).

    ``frame`` is :attr:`dpcore.analyses.gvdp.BlbDiagnostic.frame`.
    """
    part = frame[frame["coefficient"] == coefficient]
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=(
            "Subset estimates (spread grows like √k)",
            "Subset SE ÷ full-data SE (ideal: 1)",
        ),
        horizontal_spacing=0.12,
    )
    ks = sorted(part["k"].unique())
    labels = {k: f"k = {k:,}<br>b = {int(part.loc[part['k'] == k, 'b'].iloc[0]):,}" for k in ks}
    scale = max(reference_se, np.finfo(float).tiny)
    for col, values_of, reference in (
        (1, lambda rows: rows["estimate"].to_numpy(), reference_estimate),
        (2, lambda rows: rows["se"].to_numpy() / scale, 1.0),
    ):
        for k in ks:
            values = values_of(part[part["k"] == k])
            colour = PALETTE[0] if k == chosen_k else PALETTE[4]
            fig.add_trace(
                go.Violin(
                    x=[labels[k]] * values.size,
                    y=values,
                    name=labels[k].replace("<br>", ", "),
                    line_color=colour,
                    fillcolor=colour,
                    opacity=0.6,
                    width=0.8,
                    box_visible=True,
                    meanline_visible=True,
                    points=False,
                    showlegend=False,
                    hoverinfo="y",
                ),
                row=1,
                col=col,
            )
        fig.add_hline(
            y=reference, row=1, col=col, line={"color": REFERENCE_COLOUR, "dash": "dash", "width": 2},
            name="Full-data non-private value", showlegend=col == 1,
        )  # fmt: skip
        fig.update_xaxes(title={"text": "Subsets k (b = rows per subset)"}, row=1, col=col)
    fig.update_yaxes(title={"text": _wrap(f"Subset estimate ({unit})", 40)}, row=1, col=1)
    fig.update_yaxes(title={"text": "Standard error ratio"}, row=1, col=2)
    fig.update_layout(height=480)
    return _layout(
        fig,
        f"{coefficient}: BLB subsets at several k — non-private curator diagnostic "
        f"(the k in use, {chosen_k:,}, in blue)",
        legend="bottom",
    )


def k_diagnostic_summary(
    frame: pd.DataFrame,
    coefficient: str,
    *,
    reference_estimate: float,
    reference_se: float,
    chosen_k: int,
    failed: dict[int, str] | None = None,
) -> str:
    """At each k, how far the subsets' average estimate and median standard error are from the
    full-data values, in full-data standard errors and percent."""
    part = frame[frame["coefficient"] == coefficient]
    scale = max(reference_se, np.finfo(float).tiny)
    parts = []
    for k in sorted(part["k"].unique()):
        rows = part[part["k"] == k]
        shift = (rows["estimate"].mean() - reference_estimate) / scale
        drift = rows["se"].median() / scale - 1
        mark = " (in use)" if k == chosen_k else ""
        parts.append(f"k = {k:,}{mark}: centre {shift:+.2f} SE, standard error {drift:+.0%}")
    text = (
        f"Distance of the subsets from the full-data estimate {_fmt(reference_estimate)} "
        f"(SE {_fmt(reference_se)}) — " + "; ".join(parts) + "."
    )
    if failed:
        text += " The BLB could not run at k = " + ", ".join(f"{k:,}" for k in sorted(failed))
        text += " (subsets too small)."
    return text


# 5. A committed GVDP release (for the Release page and the HTML report).


def _public_ranges(bounds: dict) -> dict[str, list[float]]:
    """Each coefficient's public range, from the bounds in a release's parameters."""
    spec = GvdpBoundsSpec(
        **{k: v if k in ("mode", "factor") else tuple(v) for k, v in bounds.items()}
    )
    low, high = spec.public_range()
    return {
        c: [float(lo), float(hi)] for c, lo, hi in zip(spec.coefficients, low, high, strict=True)
    }


def release_figure(record: ReleaseRecord) -> go.Figure:
    """Each released estimate with its interval, one panel per coefficient (groups on x), on
    the coefficient's public range. Withheld rows have no point."""
    frame = record.frame
    level = record.metadata["plan"]["level"]
    coefficients = list(dict.fromkeys(frame["coefficient"]))
    fig = make_subplots(
        rows=len(coefficients), cols=1, subplot_titles=coefficients, vertical_spacing=0.12
    )
    ranges = _public_ranges(record.metadata["plan"]["estimator"]["bounds"])
    for row, coefficient in enumerate(coefficients, start=1):
        part = frame[frame["coefficient"] == coefficient]
        for trace in release_traces(part, marker_size=9, **_BAR_STYLE):
            # One legend entry per level for all panels.
            trace.update(legendgroup=trace.name, showlegend=row == 1)
            fig.add_trace(trace, row=row, col=1)
        # The public range, so one wide interval cannot squash the others (issue 13).
        fig.update_yaxes(title={"text": "Estimate"}, range=ranges[coefficient], row=row, col=1)
    fig.update_xaxes(title={"text": "Group"}, row=len(coefficients), col=1)
    fig.update_layout(height=300 * len(coefficients) + 120)
    coverage = record.metadata.get("coverage")
    caveat = "" if coverage is None else f" (some cover ≈{coverage['measured']}: see Coverage)"
    return _layout(
        fig, f"{record.metadata['title']} — DP estimates with {level:.0%} GVDP intervals{caveat}"
    )
