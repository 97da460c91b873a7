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

__all__ = ["emit", "records", "text_table"]


def json_ready(value: object) -> object:
    """``value`` with numpy scalars as Python numbers, tuples as lists and NaN or ±inf as None."""
    if isinstance(value, dict):
        return {str(key): json_ready(item) for key, item in value.items()}
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
