"""The pandas engine: the pass over a frame in memory (the default for uploads).

It computes exactly what the DuckDB and Spark engines compute, with the same labels, the same
contribution bound and the same kept rows, so that a release is the same on every engine.

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpcore.engines.base import (
    GROUP,
    Cells,
    Engine,
    EngineError,
    SumsQuery,
    check_person,
    edges_needed,
)
from dpcore.engines.blb import BlbQuery, double_keys, row_bag_sums
from dpcore.foundations.dataset import frame_identity
from dpcore.foundations.grouping import cell_labels, needs_edges
from dpcore.foundations.privacy_unit import (
    BoundPreview,
    PrivacyUnit,
    bound_contributions,
    preview_bound,
)
from dpcore.foundations.validation import column_kind, data_frame, numeric_values

__all__ = ["PandasEngine"]


class PandasEngine(Engine):
    """Aggregates a :class:`pandas.DataFrame` held in memory.

    ``identity`` is the identity of the file the frame was read from
    (:func:`~dpcore.foundations.dataset.bytes_identity`), so that the frame is the same data as
    the file read by another engine; without it, the frame's cells identify it
    (:func:`~dpcore.foundations.dataset.frame_identity`)."""

    name = "pandas"

    def __init__(
        self, frame: pd.DataFrame, source: str = "data frame", *, identity: str | None = None
    ) -> None:
        self._frame = data_frame("frame", frame)
        self._source = source
        self._identity = identity
        self._from_cells = identity is None

    @property
    def source(self) -> str:
        return self._source

    @property
    def expression(self) -> str:
        # A frame read from a file is that file's data: the script reads the file as a
        # ``frame`` and its ``dataset`` (dpcore.foundations.dataset.read_dataset).
        identity = "" if self._from_cells else ", identity=dataset.identity"
        return f"PandasEngine(frame, {self._source!r}{identity})"

    def identity(self) -> str:
        if self._identity is None:
            self._identity = frame_identity(self._frame)
        return self._identity

    def column_kinds(self) -> dict[str, str]:
        return {str(name): column_kind(self._frame[name]) for name in self._frame.columns}

    def cells(self, query: SumsQuery) -> Cells:
        rows = self._rows(query)
        labels = list(query.by)
        clipped = {
            clipped.column: np.clip(rows.values[:, i], clipped.low, clipped.high)
            for i, clipped in enumerate(query.inputs)
        }
        sums = {name: np.where(rows.kept, _product(clipped, factors, rows.kept.shape[0]), 0.0)
                for name, factors in query.sums}  # fmt: skip
        binary = {}
        if query.binary:
            chosen = rows.values[:, [query.columns.index(c) for c in query.binary]]
            binary["not_binary"] = rows.finite & ~np.isin(chosen, (0.0, 1.0)).all(axis=1)
        frame = rows.labels.assign(finite=rows.finite, usable=rows.kept, **sums, **binary)
        grouped = frame.groupby(labels, sort=False, observed=True)
        table = grouped.agg(
            rows=("finite", "size"), finite=("finite", "sum"), usable=("usable", "sum"),
            **{name: (name, "sum") for name in (*sums, *binary)},
        ).reset_index()  # fmt: skip
        return Cells(table, missing_person=rows.missing_person)

    def clipped_sums(
        self, query: SumsQuery, cell_groups: pd.DataFrame, low: np.ndarray, high: np.ndarray
    ) -> np.ndarray:
        rows = self._rows(query)
        group_of_row = rows.labels.merge(cell_groups, on=list(query.by), how="left")[GROUP]
        group = group_of_row.to_numpy(dtype=float, na_value=-1).astype(np.int64)
        use = rows.kept & (group >= 0)
        g = group[use]
        clipped = np.clip(rows.values[use, 0], low[g], high[g])
        return np.bincount(g, weights=clipped, minlength=low.shape[0])

    def bound_preview(
        self, by: tuple[str, ...], edges: dict[str, tuple[float, ...]], unit: PrivacyUnit
    ) -> BoundPreview:
        check_person(unit, self.column_kinds(), by)
        labels = cell_labels(self._frame, by, edges) if by else self._frame.iloc[:, :0]
        return preview_bound(labels, self._frame[unit.column], unit)

    def blb_sums(self, query: BlbQuery, mapping: pd.DataFrame) -> pd.DataFrame:
        rows = self._rows(query.rows)
        kept = rows.kept
        column = query.rows.unit.column
        owners = None if column is None else _owner_keys(self._frame[column].to_numpy()[kept])
        return row_bag_sums(query, rows.labels.loc[kept], rows.values[kept], owners, mapping)

    @functools.lru_cache(maxsize=4)  # noqa: B019 - one engine per frame, a handful of queries
    def _rows(self, query: SumsQuery) -> _Rows:
        for column in query.by:  # in the command line's words, as the other engines say it
            if column not in query.edges_of and needs_edges(self._frame[column]):
                raise EngineError(edges_needed(column, "numbers that are not category codes"))
        labels = cell_labels(self._frame, query.by, query.edges_of).reset_index(drop=True)
        values = np.column_stack([
            numeric_values(self._frame, clipped.role, clipped.column) for clipped in query.inputs
        ]) if query.inputs else np.empty((len(self._frame), 0))  # fmt: skip
        owners = None if query.unit.column is None else self._frame[query.unit.column]
        bounded = bound_contributions(labels, values, owners, query.unit)
        finite = np.isfinite(values).all(axis=1)
        return _Rows(labels, values, finite, bounded.kept, bounded.missing_person)


@dataclass(frozen=True, eq=False)
class _Rows:
    """A frame's rows as a pass sees them: cell labels, the inputs' values (one column per
    input), and which rows are used."""

    labels: pd.DataFrame
    values: np.ndarray
    finite: np.ndarray
    kept: np.ndarray
    missing_person: int


def _product(clipped: dict[str, np.ndarray], factors: tuple[str, ...], n: int) -> np.ndarray:
    """The product of the named clipped columns, left to right (as the SQL engines multiply);
    no column: ones (the sum counts rows)."""
    out = np.ones(n)
    for column in factors:
        out = out * clipped[column]
    return out


def _owner_keys(owners: np.ndarray) -> np.ndarray:
    """Person ids as text, as the SQL engines write them (:mod:`dpcore.engines.blb`): decimals
    exactly, the rest as written."""
    if owners.dtype.kind == "f":
        return double_keys(owners).astype(str)
    return np.array([str(owner) for owner in owners], dtype=str)
