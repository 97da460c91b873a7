"""Charts of the Plan page: the budget each group needs, and the stratification frontier."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from strata_ui.charts_common import log_axis
from strata_ui.style import FONT, LEGEND_BELOW, PALETTE, plain_number, rounded_up
from strata_ui.text import as_written


def _layout(
    figure: go.Figure, title: str, x_title: str, y_title: str, height: int, bottom: int
) -> None:
    figure.update_layout(
        title={"text": title}, xaxis_title={"text": x_title}, yaxis_title={"text": y_title},
        font=FONT, height=height, legend=LEGEND_BELOW, margin={"t": 60, "b": bottom},
    )  # fmt: skip


def needed_budget_chart(table: pd.DataFrame, symbol: str, binding: str | None) -> go.Figure:
    """One bar per published estimate: the budget it alone needs to meet the target; the one
    that binds (needs the most, so sets the answer) stands out."""
    column = f"needed {symbol}"
    rows = table.sort_values(column, ascending=True, kind="stable")
    colours = [PALETTE[1] if label == binding else PALETTE[0] for label in rows["estimate"]]
    figure = go.Figure(
        go.Bar(
            x=rows[column],
            y=rows["estimate"],
            orientation="h",
            marker_color=colours,
            hovertemplate=f"%{{y}}<br>needs {symbol} = %{{x:,.3r}}<extra></extra>",
        )
    )
    _layout(
        figure, f"The {symbol} each estimate needs (orange: the one that sets the answer)",
        f"{symbol} needed (log scale)", "", max(240, 28 * len(rows) + 120), 50,
    )  # fmt: skip
    figure.update_xaxes(log_axis(rows[column]))
    figure.update_yaxes(automargin=True)
    return figure


def frontier_chart(table: pd.DataFrame, unit: str) -> go.Figure:
    """Population error against the worst group's error, one marker per candidate and
    strategy; the Pareto frontier joined by a line."""
    scored = table[table["skipped"] == ""]
    figure = go.Figure()
    for i, name in enumerate(dict.fromkeys(table["strategy_name"])):
        rows = scored[scored["strategy_name"] == name]
        figure.add_trace(
            go.Scatter(
                x=rows["global_error"],
                y=rows["worst_group_error"],
                mode="markers",
                name=name,
                text=rows["label"],
                marker={
                    "color": PALETTE[i],
                    "size": [14 if p else 8 for p in rows["pareto"]],
                    "line": {"width": [2 if p else 0 for p in rows["pareto"]], "color": "black"},
                },
                hovertemplate="%{text}<br>population error %{x:,.3r}<br>worst group error "
                "%{y:,.3r}<extra></extra>",
            )
        )
    front = scored[scored["pareto"]].sort_values("global_error")
    figure.add_trace(
        go.Scatter(
            x=front["global_error"],
            y=front["worst_group_error"],
            mode="lines",
            name="Pareto frontier",
            line={"color": "black", "dash": "dot"},
            hoverinfo="skip",
        )
    )
    _layout(
        figure, "Population error against the worst group's error (lower left is better)",
        f"Population error ({unit}, log scale)", f"Worst group's error ({unit}, log scale)", 520,
        110,
    )  # fmt: skip
    figure.update_xaxes(log_axis(scored["global_error"]))
    figure.update_yaxes(log_axis(scored["worst_group_error"]))
    return figure


def needed_budget_summary(table: pd.DataFrame, symbol: str, binding: str | None) -> str:
    """The needed-budget chart in words: the estimate that sets the answer and the one that
    needs the least (labels are data, escaped for markdown)."""
    column = f"needed {symbol}"
    rows = table.sort_values(column, kind="stable")
    most, least = rows.iloc[-1], rows.iloc[0]
    setter = binding if binding is not None else most["estimate"]
    return (
        f"The chart: {as_written(str(setter))} needs {symbol} = {needed_text(most[column])}, the most, "
        f"so it sets the answer; {as_written(str(least['estimate']))} needs the least, "
        f"{symbol} = {needed_text(least[column])}."
    )


def needed_text(budget: float) -> str:
    """A needed budget as the Plan page's answer writes it: rounded up once, in plain notation
    (311, not 3.11e+02)."""
    return plain_number(rounded_up(budget)) if 0 < budget < float("inf") else plain_number(budget)


def frontier_summary(table: pd.DataFrame) -> str:
    """The frontier chart in words: how many candidates were scored, and the frontier's two
    ends, the lowest population error and the lowest worst-group error (the table below lists
    every choice on it)."""
    scored = table[table["skipped"] == ""]
    front = scored[scored["pareto"]]
    if front.empty:
        return f"The chart: {len(scored):,} choices scored, none on a frontier."
    population = front.loc[front["global_error"].idxmin()]
    worst = front.loc[front["worst_group_error"].idxmin()]
    return (
        f"The chart: {len(scored):,} choices scored, {len(front):,} on the frontier. Lowest "
        f"population error: {as_written(str(population['label']))} "
        f"({plain_number(population['global_error'], 3)}); lowest worst-group error: "
        f"{as_written(str(worst['label']))} ({plain_number(worst['worst_group_error'], 3)})."
    )
