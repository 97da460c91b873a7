"""Plotly figures and one-sentence summaries of the private sample (Estimator, Compare and Learn
pages). No streamlit here, so the builders are unit-tested directly. Colours are Okabe–Ito: the
group's own distribution in blue, the sampler's in orange, the paper's guarantee in black."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from strata_ui.charts_common import dotted_line
from strata_ui.style import FONT, LEGEND_BELOW, PALETTE, plain_number
from strata_ui.text import chart_text

GROUP, SAMPLER, LEARNING = PALETTE[0], PALETTE[1], PALETTE[3]
MAX_BARS = 15
"""Most outcomes a comparison chart shows; the rest are summed into one bar."""


def _layout(fig: go.Figure, **layout) -> go.Figure:
    fig.update_layout(font=FONT, legend=LEGEND_BELOW, margin={"t": 50, "b": 90}, **layout)
    return fig


def comparison_frame(result: dict) -> pd.DataFrame:
    """The group's and the sampler's probability of each outcome, largest first; past
    :data:`MAX_BARS` outcomes, the rest in one row."""
    frame = pd.DataFrame(
        {"outcome": result["labels"], "group": result["group"], "sampler": result["output"]}
    ).sort_values("group", ascending=False, kind="stable")
    if len(frame) <= MAX_BARS:
        return frame.reset_index(drop=True)
    head, tail = frame.iloc[: MAX_BARS - 1], frame.iloc[MAX_BARS - 1 :]
    rest = {"outcome": f"{len(tail)} other combinations", "group": tail["group"].sum(),
            "sampler": tail["sampler"].sum()}  # fmt: skip
    return pd.concat([head, pd.DataFrame([rest])], ignore_index=True)


def comparison_figure(result: dict, *, product: bool) -> go.Figure:
    """Bars: each outcome's share in the group against its chance in one sampled record."""
    frame = comparison_frame(result)
    outcomes = [chart_text(outcome) for outcome in frame["outcome"]]  # labels from the data
    fig = go.Figure(
        [
            go.Bar(x=outcomes, y=frame["group"], name="The group's rows (confidential)",
                   marker_color=GROUP),
            go.Bar(x=outcomes, y=frame["sampler"], marker_color=SAMPLER,
                   name="One private record (simulated)"),
        ]
    )  # fmt: skip
    title = (
        "Share of each yes/no attribute: the group against one private record"
        if product
        else "Each combination's share: the group against one private record"
    )
    return _layout(
        fig, title=title, barmode="group", yaxis_title="Share" if product else "Probability",
        xaxis_title=None, height=460,
    )  # fmt: skip


def comparison_summary(result: dict) -> str:
    """One sentence reading :func:`comparison_figure`."""
    return (
        f"A record drawn privately from {result['part_rows']:,} rows is within "
        f"{plain_number(result['distance'], 3)} of the group's distribution (total variation, simulated; "
        f"Monte Carlo error about {plain_number(result['floor'], 1)}); the paper guarantees at most "
        f"{plain_number(min(result['guarantee'], 1), 3)} for the population it was drawn from."
    )


def sweep_figure(frame: pd.DataFrame, *, symbol: str, current: float) -> go.Figure:
    """Simulated distance and the paper's guarantee across budgets (log-log)."""
    fig = go.Figure(
        [
            go.Scatter(x=frame["budget"], y=frame["distance"], mode="lines+markers",
                       name="Simulated distance to the group", line={"color": SAMPLER}),
            dotted_line(frame["budget"], frame["guarantee"].clip(upper=1.0),
                        "The paper's guarantee (Thm. 1.4 / 6.4)"),
        ]
    )  # fmt: skip
    low = float(np.nanmin(frame[["distance", "guarantee"]].to_numpy().clip(1e-6)))
    fig.add_trace(dotted_line([current, current], [low, 1.0], f"your {symbol} = {current:g}",
                              colour=GROUP))  # fmt: skip
    return _layout(
        fig, title="How close one private record is to the group, by budget",
        xaxis={"type": "log", "title": symbol}, height=460,
        yaxis={"type": "log", "title": "Total variation distance (0 = identical)"},
    )  # fmt: skip


def learning_figure(frame: pd.DataFrame, k: int, epsilon: float) -> go.Figure:
    """The Learn explainer: the sampler's error and the learning error of the same private
    distribution against n, with the guarantee 2K/(εn) (log-log)."""
    fig = go.Figure(
        [
            go.Scatter(x=frame["n"], y=frame["learning"], mode="lines+markers",
                       name="Learning: error of the private distribution itself",
                       line={"color": LEARNING}),
            go.Scatter(x=frame["n"], y=frame["sampling"].clip(lower=frame["floor"]),
                       mode="lines+markers", name="Sampling: error of one record's distribution",
                       line={"color": SAMPLER}),
            dotted_line(frame["n"], frame["guarantee"], "Sampling guarantee 2K/(εn) (Thm. 1.4)"),
            dotted_line(frame["n"], frame["floor"], "Simulation's own error (below: noise)",
                        colour=GROUP, width=1),
        ]
    )  # fmt: skip
    return _layout(
        fig, title=f"Sampling needs far fewer records than learning (K = {k}, ε = {epsilon:g})",
        xaxis={"type": "log", "title": "Records in the data (n)"}, height=480,
        yaxis={"type": "log", "title": "Total variation distance"},
    )  # fmt: skip


def learning_summary(frame: pd.DataFrame, alpha: float = 0.05) -> str:
    """The records each task needs to reach ``alpha`` in the simulation."""

    def first(column: str) -> str:
        reached = frame.loc[frame[column] <= alpha, "n"]
        return f"{int(reached.iloc[0]):,}" if len(reached) else f"more than {frame['n'].max():,}"

    hidden = frame.loc[frame["sampling"] <= frame["floor"], "n"]
    beyond = (
        f" From about n = {int(hidden.iloc[0]):,} on, the sampler's error is smaller than the "
        "simulation can measure (the dotted blue line), far under its guarantee."
        if len(hidden)
        else ""
    )
    return (
        f"To come within {alpha:g} in total variation, one private record needed about "
        f"**{first('sampling')}** records of data here; learning the distribution with the same "
        f"private estimate needed **{first('learning')}**.{beyond}"
    )


def needed_figure(frame: pd.DataFrame) -> go.Figure:
    """Records needed against the number of yes/no attributes d (log-log)."""
    colours = {"learning (private)": LEARNING, "learning (not private)": PALETTE[4],
               "sampling (order √d/ε)": PALETTE[2], "our product sampler": SAMPLER}  # fmt: skip
    fig = go.Figure(
        [
            go.Scatter(x=frame["d"], y=frame[c], mode="lines+markers", name=c,
                       line={"color": colour, "dash": "dot" if "order" in c else "solid"})
            for c, colour in colours.items()
        ]
    )  # fmt: skip
    return _layout(
        fig, title="Records needed for d yes/no attributes with biases in [1/3, 2/3]",
        xaxis={"type": "log", "title": "Attributes (d)"}, height=460,
        yaxis={"type": "log", "title": "Records needed"},
    )  # fmt: skip
