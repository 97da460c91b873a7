"""Printing a subcommand's result: the JSON document, or a short text view of the same document.

Each subcommand builds one JSON-ready document and, for ``--format text``, a function that
renders that document, so the two formats always show the same numbers. JSON has no NaN or
infinity: both become ``null``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from strata_cli.words import in_cli_words

__all__ = ["emit", "records", "text_table"]


LABEL_KEYS = frozenset({"label", "binding_group", "group", "labels", "by"})
"""Keys whose text comes from the data (group labels, column names): printed as they are."""


def json_ready(value: object) -> object:
    """``value`` with numpy scalars as Python numbers, tuples as lists, NaN or ±inf as None,
    and the app's words said as the command line says them (:func:`in_cli_words`; not in a
    group's label or a column's name, which come from the data)."""
    if isinstance(value, dict):
        return {
            str(key): item if key in LABEL_KEYS else json_ready(item) for key, item in value.items()
        }
    if isinstance(value, str):
        return in_cli_words(value)
    if isinstance(value, list | tuple):
        return [json_ready(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def records(table: pd.DataFrame, columns: dict[str, str]) -> list[dict]:
    """The rows of ``table``'s ``columns`` (keys), renamed to their values, as dictionaries."""
    return table[list(columns)].rename(columns=columns).to_dict("records")


def text_table(rows: list[dict], headers: dict[str, str] | None = None) -> str:
    """Rows of a document as aligned columns, numbers to 4 significant digits, keys renamed by
    ``headers``."""
    table = pd.DataFrame(rows).rename(columns=headers or {}).fillna(np.nan)
    return table.to_string(index=False, float_format="{:.4g}".format, na_rep="—")


def emit(document: dict, output_format: str, render_text: Callable[[dict], str]) -> None:
    document = json_ready(document)
    if output_format == "json":
        print(json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False))
    else:
        print(render_text(document))
