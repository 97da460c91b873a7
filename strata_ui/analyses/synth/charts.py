"""Plotly figures and one-sentence summaries for synthetic data (Compare and Release pages).

Builders take the tidy frames of :func:`dpcore.analyses.synth.sweep_errors` and
:func:`dpcore.analyses.synth.sweep_metrics` (or a release's rows) and return a figure or a sentence;
nothing here imports streamlit, so they are unit-tested directly. Errors are Def. 14's 3-way
workload error (AAAI 2024 arXiv, appendix C): the average L1 distance between the real and the
synthetic marginal proportions, from 0 (identical) to 2 (disjoint). Colours are Okabe–Ito, with
stratified in the same blue as on the mean's Compare page.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from strata_ui.charts_common import (
    budget_marker,
    group_sections_figure,
    interval_bars,
    spread_band,
)
from strata_ui.group_selection import GroupSelection
from strata_ui.style import FONT, PALETTE, SeriesStyle, plain_number, wrap_label
from strata_ui.text import chart_text

STRATEGY_NAMES = {"stratified": "One model per group", "vanilla": "One model for everyone"}
STRATEGY_COLOURS = {"stratified": PALETTE[0], "vanilla": PALETTE[1]}
STRATEGY_STYLE = SeriesStyle(STRATEGY_NAMES, STRATEGY_COLOURS)
MARKER_COLOUR = PALETTE[3]
METRIC_TITLES = {
    "overall": "3-way error on all rows",
    "worst group": "worst-group 3-way error",
    "parity": "parity error",
    "disparity": "max disparity between groups",
}
ERROR_AXIS = "3-way error (0 = exact, 2 = disjoint)"
METRIC_AXES = {
    "overall": ERROR_AXIS,
    "worst group": ERROR_AXIS,
    "parity": "Parity error (lower is fairer)",
    "disparity": "Largest − smallest group error",
}


def _num(value: float) -> str:
    return f"{plain_number(value, 3)}"


def _eps_list(values: list[float]) -> str:
    text = [f"{v:g}" for v in values]
    return text[0] if len(text) == 1 else ", ".join(text[:-1]) + " and " + text[-1]


def _strategies(frame: pd.DataFrame) -> list[str]:
    order = [s for s in STRATEGY_NAMES if s in set(frame["strategy"])]
    return order + [s for s in dict.fromkeys(frame["strategy"]) if s not in order]


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str, height: int) -> go.Figure:
    fig.update_layout(
        title={"text": title},
        xaxis_title={"text": x_title},
        yaxis_title={"text": y_title},
        font=FONT,
        height=height,
        legend={"title": {"text": "Synthesis"}},
        margin={"t": 60, "b": 40},
    )
    return fig


def nearest_epsilon(frame: pd.DataFrame, epsilon: float) -> float:
    """The ε of ``frame`` closest to ``epsilon`` on a log scale."""
    values = np.unique(frame["epsilon"].to_numpy(dtype=float))
    return float(values[np.argmin(np.abs(np.log(values) - np.log(epsilon)))])


def group_table(errors: pd.DataFrame, epsilon: float) -> pd.DataFrame:
    """Per group and strategy at ``epsilon``: size, mean error over runs, lowest and highest run.

    Groups run from smallest to largest; ``errors`` is a :func:`~dpcore.analyses.synth.sweep_errors`
    frame.
    """
    rows = errors[(errors["level"] == "group") & np.isclose(errors["epsilon"], epsilon)]
    table = (
        rows.groupby(["group", "strategy"], sort=False)
        .agg(
            size=("size", "first"),
            mean=("error", "mean"),
            low=("error", "min"),
            high=("error", "max"),
            runs=("run", "nunique"),
        )  # fmt: skip
        .reset_index()
    )
    return table.sort_values(["size", "group"], kind="stable", ignore_index=True)


def group_error_figure(errors: pd.DataFrame, epsilon: float) -> go.Figure:
    """Mean 3-way error per group at ``epsilon``, vanilla and stratified, with run ranges."""
    table = group_table(errors, epsilon)
    order = table.drop_duplicates("group")
    fig = go.Figure()
    for strategy in _strategies(table):
        rows = table[table["strategy"] == strategy].set_index("group").loc[order["group"]]
        mean = rows["mean"].to_numpy()
        fig.add_trace(
            go.Scatter(
                x=[chart_text(g) for g in rows.index], y=mean, name=STRATEGY_STYLE.name(strategy), mode="markers",
                marker={"color": STRATEGY_STYLE.colour(strategy), "size": 10,
                        "symbol": "circle" if strategy == "stratified" else "diamond"},
                error_y=interval_bars(mean, rows["low"], rows["high"],
                                      STRATEGY_STYLE.colour(strategy)),
                customdata=np.column_stack([rows["size"], rows["low"], rows["high"]]),
                hovertemplate=(
                    "%{x}<br>n = %{customdata[0]:,}<br>mean error %{y:,.3r}"
                    "<br>runs: %{customdata[1]:,.3r} – %{customdata[2]:,.3r}"
                    f"<extra>{STRATEGY_STYLE.name(strategy)}</extra>"
                ),
            )
        )  # fmt: skip
    fig.update_layout(scattermode="group")
    fig.update_xaxes(
        categoryorder="array",
        categoryarray=[chart_text(g) for g in order["group"]],
        tickvals=[chart_text(g) for g in order["group"]],
        ticktext=[
            f"{wrap_label(g)}<br>n = {int(n):,}"
            for g, n in zip(order["group"], order["size"], strict=True)
        ],
        tickangle=0,
        tickfont={"size": 11},
    )
    runs = int(table["runs"].max()) if len(table) else 0
    return _layout(
        fig,
        f"3-way error in each group at ε = {epsilon:g}: mean of {runs} run{'s' * (runs != 1)}, "
        "bars from lowest to highest",
        "Group, smallest to largest (n = real rows in the group)",
        ERROR_AXIS,
        460,
    )


def many_groups_figure(
    errors: pd.DataFrame, epsilon: float, selection: GroupSelection
) -> go.Figure:
    """:func:`group_error_figure` for too many groups to stand side by side: the groups of
    ``selection`` (:func:`group_table`'s rows, chosen by
    :func:`~strata_ui.group_selection.select_from_table`), one row each, in its sections."""
    table = group_table(errors, epsilon)
    runs = int(table["runs"].max()) if len(table) else 0
    return group_sections_figure(
        table, selection, style=STRATEGY_STYLE, x_title=f"{ERROR_AXIS}, bars from lowest to highest run",
        title=(
            f"3-way error in each of the {selection.total:,} groups"
            if selection.complete
            else f"3-way error in {len(selection.shown):,} of the {selection.total:,} groups"
        ) + f" at ε = {epsilon:g}: mean of {runs} run{'s' * (runs != 1)}",
        hover="n = %{customdata[0]:,}<br>mean error %{x:,.3r}"
        "<br>runs: %{customdata[1]:,.3r} – %{customdata[2]:,.3r}",
    )  # fmt: skip


def group_error_summary(errors: pd.DataFrame, epsilon: float) -> str:
    """How many groups each strategy serves better at ``epsilon``, and the smallest group's errors.

    Says plainly when stratification does worse.
    """
    table = group_table(errors, epsilon)
    wide = table.pivot(index="group", columns="strategy", values="mean")
    sizes = table.drop_duplicates("group").set_index("group")["size"]
    if not {"stratified", "vanilla"} <= set(wide.columns):
        return f"At ε = {epsilon:g}, only {', '.join(map(STRATEGY_STYLE.name, wide.columns))} was simulated."
    better = int((wide["stratified"] < wide["vanilla"]).sum())
    worse = int((wide["stratified"] > wide["vanilla"]).sum())
    smallest = sizes.index[0]
    s, v = wide.loc[smallest, "stratified"], wide.loc[smallest, "vanilla"]
    verdict = (
        "stratification does worse for it"
        if s > v
        else "stratification helps it"
        if s < v
        else "the two tie"
    )
    return (
        f"At ε = {epsilon:g}, one model per group has the lower error in {better} of "
        f"{len(wide)} groups and the higher in {worse}; for the smallest group ({smallest}, "
        f"n = {int(sizes[smallest]):,}) it scores {_num(s)} against {_num(v)} for one model "
        "for everyone: "
        f"{verdict}."
    )


def sweep_table(metrics: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per ε and strategy: mean, lowest and highest of ``metric`` over runs."""
    return (
        metrics.groupby(["epsilon", "strategy"], sort=True)[metric]
        .agg(["mean", "min", "max"])
        .reset_index()
    )


def sweep_figure(metrics: pd.DataFrame, metric: str, *, current: float | None = None) -> go.Figure:
    """Mean ``metric`` against ε (log axis) per strategy, with the range over runs as a band."""
    table = sweep_table(metrics, metric)
    fig = go.Figure()
    for strategy in _strategies(table):
        part = table[table["strategy"] == strategy]
        x = part["epsilon"].to_numpy()
        colour, name = STRATEGY_STYLE.colour(strategy), STRATEGY_STYLE.name(strategy)
        fig.add_traces(
            spread_band(
                x, part["min"], part["max"], colour=colour, group=strategy,
                names=(f"{name} lowest run", f"{name} highest run"),
            )
        )  # fmt: skip
        fig.add_trace(
            go.Scatter(
                x=x, y=part["mean"], mode="lines+markers", name=name, legendgroup=strategy,
                line={"color": colour, "width": 2.5,
                      "dash": "solid" if strategy == "stratified" else "dash"},
                marker={"symbol": "circle" if strategy == "stratified" else "diamond"},
                hovertemplate=f"ε = %{{x:,.3r}}<br>mean %{{y:,.3r}}<extra>{name}</extra>",
            )
        )  # fmt: skip
    fig.update_xaxes(type="log", dtick=1)
    if current is not None and len(table):
        low = float(min(table["min"].min(), 0))
        high = float(table["max"].max())
        fig.add_trace(budget_marker(current, low, high, symbol="ε", colour=MARKER_COLOUR))
    title = METRIC_TITLES.get(metric, metric)
    return _layout(
        fig,
        f"{title[:1].upper() + title[1:]} as ε grows (band: lowest to highest run)",
        "Privacy budget ε (pure DP, log scale)",
        METRIC_AXES.get(metric, metric),
        420,
    )


def sweep_summary(metrics: pd.DataFrame, metric: str, *, current: float | None = None) -> str:
    """Where one model per group is lower or higher than one for everyone on ``metric``, over ε."""
    table = sweep_table(metrics, metric).pivot(index="epsilon", columns="strategy", values="mean")
    title = METRIC_TITLES.get(metric, metric)
    title = title[:1].upper() + title[1:]
    if not {"stratified", "vanilla"} <= set(table.columns):
        return f"{title}: only one strategy was simulated."
    lower = [float(e) for e in table.index if table.loc[e, "stratified"] < table.loc[e, "vanilla"]]
    higher = [float(e) for e in table.index if table.loc[e, "stratified"] > table.loc[e, "vanilla"]]
    if not higher:
        verdict = "one model per group is lower than one for everyone at every ε simulated"
    elif not lower:
        verdict = "one model per group is higher (worse) than one for everyone at every ε simulated"
    else:
        verdict = (
            f"one model per group is lower than one for everyone at ε = {_eps_list(lower)} but "
            f"higher (worse) at ε = {_eps_list(higher)}"
        )
    text = f"{title}: {verdict}"
    if current is not None:
        at = nearest_epsilon(table.reset_index(), current)
        text += (
            f"; at ε = {at:g}, {_num(table.loc[at, 'stratified'])} per group against "
            f"{_num(table.loc[at, 'vanilla'])} for everyone"
        )
    return text + "."


def category_shares(frame: pd.DataFrame, column: str) -> pd.Series:
    """Share of rows in each category of ``column``, in category order when there is one."""
    values = frame[column].astype(str)
    counts = values.value_counts(sort=False)
    return (counts / max(len(values), 1)).rename("share")


def category_figure(frame: pd.DataFrame, column: str, *, title_prefix: str = "") -> go.Figure:
    """Bar chart of the share of (synthetic) rows in each category of ``column`` (%)."""
    shares = category_shares(frame, column).sort_index()
    fig = go.Figure(
        go.Bar(
            x=[wrap_label(str(c)) for c in shares.index],
            y=100 * shares.to_numpy(),
            marker_color=PALETTE[0],
            hovertemplate="%{x}<br>%{y:,.3r}% of rows<extra></extra>",
            name=column,
        )
    )
    fig.update_layout(showlegend=False)
    fig.update_xaxes(tickangle=0, tickfont={"size": 11})
    return _layout(
        fig,
        f"{title_prefix}Share of synthetic rows in each category of {column}",
        f"{column} (category)",
        "Share of synthetic rows (%)",
        400,
    )


def category_summary(frame: pd.DataFrame, column: str) -> str:
    """The most and least common category of ``column`` in the rows."""
    shares = category_shares(frame, column).sort_values(ascending=False, kind="stable")
    top, bottom = shares.index[0], shares.index[-1]
    return (
        f"In these {len(frame):,} synthetic rows the most common {column} is “{top}” "
        f"({plain_number(100 * shares.iloc[0], 3)}%) and the least common “{bottom}” "
        f"({plain_number(100 * shares.iloc[-1], 3)}%)."
    )
