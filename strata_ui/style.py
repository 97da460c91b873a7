"""The look every chart shares: the Okabe–Ito colour-blind-safe palette, the font, translucent
colours and group labels wrapped for an axis; and text from a user's file shown as written."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

import pandas as pd

from dpcore.foundations.labels import MAX_DECIMALS
from dpcore.foundations.labels import plain_number as plain_number  # one home, shared here
from strata_ui.text import chart_text

# Okabe & Ito (2008), "Color Universal Design".
BLUE = "#0072B2"
ORANGE = "#E69F00"
GREEN = "#009E73"
VERMILLION = "#D55E00"
PURPLE = "#CC79A7"
SKY = "#56B4E9"
YELLOW = "#F0E442"
BLACK = "#000000"

PALETTE = (BLUE, ORANGE, GREEN, VERMILLION, PURPLE)
"""Blue, orange, bluish green, vermillion, reddish purple (Okabe & Ito 2008)."""

FONT = {"family": "sans-serif", "size": 14}
TICK_WIDTH = 12  # characters per line of a group label


def rgba(hex_colour: str, alpha: float) -> str:
    """``"#0072B2"`` with opacity ``alpha`` as a CSS ``rgba(...)`` colour."""
    red, green, blue = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, {alpha})"


def wrap_label(group: str) -> str:
    """A group label on short lines for an axis: ``White<br>× Male`` (each line shown as text,
    never as HTML)."""
    lines = []
    for i, part in enumerate(str(group).split(" × ")):
        wrapped = textwrap.wrap(part, TICK_WIDTH, break_on_hyphens=True) or [part]
        lines += [("× " if i and j == 0 else "") + line for j, line in enumerate(wrapped)]
    return "<br>".join(map(chart_text, lines))


def wrap_label_wide(group: str, width: int = 36) -> str:
    """A group label on lines of about ``width`` characters, broken only between its parts, for
    a horizontal chart's group axis: ``Private × HS-grad<br>× Married-civ-spouse``. A part
    longer than ``width`` keeps its own whole line: a label is never cut."""
    lines: list[str] = []
    for i, part in enumerate(str(group).split(" × ")):
        piece = part if i == 0 else f"× {part}"
        if lines and len(lines[-1]) + 1 + len(piece) <= width:
            lines[-1] += f" {piece}"
        else:
            lines.append(piece)
    return "<br>".join(map(chart_text, lines))


LEGEND_BELOW = {"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.01,
                "xanchor": "left", "x": 0}  # fmt: skip
"""A horizontal legend at the bottom of the figure, under the x-axis title, whatever the height."""


@dataclass(frozen=True)
class SeriesStyle:
    """Display names and colours of a chart's series (e.g. strategies); an unknown series keeps
    its own name and gets the palette's last colour."""

    names: Mapping[str, str]
    colours: Mapping[str, str]

    def name(self, series: str) -> str:
        return self.names.get(series, series)

    def colour(self, series: str) -> str:
        return self.colours.get(series, PALETTE[-1])


def rounded_up(x: float, digits: int = 3) -> float:
    """``x > 0`` rounded up to ``digits`` significant digits (1.37419 → 1.38; 1.23 stays 1.23):
    a budget that meets a target still meets it when read off the screen. Decimal, so that a
    value written with fewer digits is not pushed up by its binary rounding."""
    exact = Decimal(repr(float(x)))
    quantum = Decimal(1).scaleb(exact.adjusted() - digits + 1)
    return float(exact.quantize(quantum, rounding=ROUND_CEILING))


def three_digits(x: float) -> str:
    """Three significant digits without exponents for the sizes people read (1,000 not
    1e+03); exponents only beyond a million or below 0.001."""
    rounded = float(f"{x:.3g}")
    if not 1e-3 <= abs(rounded) < 1e6:
        return f"{x:.3g}"
    return f"{rounded:,.0f}" if rounded.is_integer() else f"{rounded:,}"


def decimals_for(width: float) -> int:
    """Decimals that show an estimate as precisely as an interval of ``width`` can tell it:
    two significant digits of the width (±1,030 → none; ±2.3 → one; ±0.04 → three)."""
    if not (math.isfinite(width) and width > 0):
        return 2
    return min(max(1 - math.floor(math.log10(width)), 0), MAX_DECIMALS)


def at_precision(x: float, width: float) -> str:
    """``x`` with the decimals an interval of ``width`` supports (:func:`decimals_for`), with
    thousands separators: 31,490.6899 with a width of 2,060 → ``31,491``."""
    return f"{x:,.{decimals_for(width)}f}"


def by_interval_width(
    table: pd.DataFrame, values: Sequence[str], widths: pd.Series
) -> pd.DataFrame:
    """``table`` written for reading: in each row the ``values`` columns (an estimate and its
    interval ends) as text with the decimals that row's interval width supports
    (:func:`at_precision`), "—" where a value is missing (a table shows a missing cell as
    "None" whatever its format). ``widths`` is indexed like ``table`` (NaN: two decimals)."""
    written = table.copy()
    for column in (c for c in values if c in table):
        written[column] = [
            "—" if pd.isna(value) else at_precision(float(value), float(width))
            for value, width in zip(table[column], widths, strict=True)
        ]
    return written


def written_or_dash(values: pd.Series, digits: int = 3) -> list[str]:
    """Each of ``values`` in plain notation to ``digits`` significant digits, "—" if missing."""
    return ["—" if pd.isna(v) else plain_number(float(v), digits) for v in values]
