"""What reading a table changed, told to the user: :class:`LoadedTable` and its notes' wording."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class LoadedTable:
    """A table read from a file, and what reading it changed (see :func:`load_table`)."""

    frame: pd.DataFrame
    notes: tuple[str, ...] = ()
    """Plain sentences for the user about what reading changed: columns left out or renamed,
    codes kept as text, infinite values read as missing, byte-order marks removed, rows with no
    value left out; empty when nothing was."""


_NAMED = 10  # columns a note names; a wide file's others are counted


def column_list(columns: list[str]) -> str:
    named = ", ".join(f"`{c}`" for c in columns[:_NAMED]) + _and_more(columns)
    return f"column {named}" if len(columns) == 1 else f"columns {named}"


def _and_more(columns: list | dict) -> str:
    more = len(columns) - _NAMED
    return f" and {more:,} more" if more > 0 else ""


def beyond_int64_note(columns: list[str]) -> str:
    return (
        f"The {column_list(columns)} held whole numbers beyond the 64-bit range (about ±9.2 × "
        f"10¹⁸): {'it is' if len(columns) == 1 else 'they are'} kept as text, so that distinct "
        "codes stay distinct (as decimals they would round to equal numbers). Such a column can "
        "group rows but is not a value to estimate."
    )


def infinities_note(found: dict[str, tuple[int, int]]) -> str:
    """``found``: each column's count of infinite values and the first data row holding one."""
    each = "; ".join(
        f"`{column}` {count:,} (first in data row {row:,})"
        for column, (count, row) in list(found.items())[:_NAMED]
    ) + (f"{_and_more(found)} columns" if len(found) > _NAMED else "")
    return (
        f"Infinite values were read as missing values: {each}. A cell such as “inf”, "
        "“-Infinity” or “1e400” (beyond ±1.8 × 10³⁰⁸) is no number a bound can clip or a mean "
        "can use; if it stands for something, write a number or a category in the file."
    )


def boms_note(count: int) -> str:
    many = count > 1
    return (
        f"{count:,} byte-order mark{'s' if many else ''} (U+FEFF, an invisible character that "
        f"belongs only at the very start of a file, as where files were joined) "
        f"{'were' if many else 'was'} removed from inside the file: names and labels are read "
        "without them, so a label with one is not a group apart from the same label without."
    )
