"""Cell keys: what the SQL engines group rows by, and the labels they stand for.

Writing every row's label as text before grouping (``coalesce(CAST(x AS VARCHAR), ...)``)
doubled the cost of DuckDB's group-by: the hash table then keyed strings built row by row. The
DuckDB and Spark engines group by a *key* per grouping column instead, as cheap as the column
allows, and label the few cells that come back here, once each:

- a column with bucket edges: the bucket's index (0 below the first edge; NULL if missing);
- a yes/no or whole-number column, or a text column: its own values (NULL if missing);
- a decimal column without edges (category codes written as 0.0/1.0): its value when whole
  (+0.0 for −0.0), NULL if missing or NaN, +∞ for a number that is not whole (which
  :func:`~dpcore.engines.base.check_codes` then refuses);
- any other type (a date, ...): its text, as the database writes it.

Each key has one value per label, so a person's rows in one labelled cell share one key (the
contribution bound counts cells by key). :func:`cell_labels_of_keys` gives the labels
:func:`~dpcore.foundations.grouping.cell_labels` gives the rows in memory.

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from dpcore.engines.base import NOT_WHOLE_LABEL
from dpcore.foundations.grouping import bucket_labels
from dpcore.foundations.labels import MISSING_LABEL

__all__ = ["cell_labels_of_keys", "key_kind"]


def key_kind(kind: str, edges: tuple[float, ...] | None) -> str:
    """The kind of key of a grouping column of ``kind`` (the engines' words for column types)
    with ``edges`` or none."""
    if edges is not None:
        return "bucket"
    return {"yes / no": "boolean", "whole number": "integer", "decimal number": "decimal code"}.get(
        kind, "text"
    )


def cell_labels_of_keys(
    keys: dict[str, Sequence], by: tuple[str, ...], kinds: dict[str, str],
    edges: dict[str, tuple[float, ...]],
) -> pd.DataFrame:  # fmt: skip
    """The labels of cells given by their ``keys`` (per grouping column, one Python value per
    cell: None for NULL), one column per grouping column of ``by``."""
    return pd.DataFrame({
        column: [_label(key, key_kind(kinds[column], edges.get(column)), edges.get(column))
                 for key in keys[column]]
        for column in by
    })  # fmt: skip


def _label(key: object, kind: str, edges: tuple[float, ...] | None) -> str:
    if key is None or (isinstance(key, float) and math.isnan(key)):
        return MISSING_LABEL
    if kind == "bucket":
        return bucket_labels(edges)[int(key)]
    if kind == "boolean":  # Python's str(True), not SQL's 'true'
        return "True" if key else "False"
    if kind == "decimal code":
        return NOT_WHOLE_LABEL if math.isinf(key) else str(int(key))
    if kind == "integer":
        return str(int(key))
    return str(key)
