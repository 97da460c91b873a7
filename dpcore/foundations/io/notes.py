"""What reading a table changed, told to the user: :class:`LoadedTable` and its notes' wording."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class LoadedTable:
    """A table read from a file, and what reading it changed (see :func:`load_table`)."""

    frame: pd.DataFrame
    notes: tuple[str, ...] = ()
    """Plain sentences for the user about columns read differently from how the file stores
    them (left out, renamed, or turned into decimals); empty when nothing was."""


def column_list(columns: list[str]) -> str:
    named = ", ".join(f"`{c}`" for c in columns)
    return f"column {named}" if len(columns) == 1 else f"columns {named}"
