"""The pandas engine: the pass over a frame in memory (the default for uploads), on codes.

Each grouping column becomes integer codes once (a categorical column's own codes, or pandas'
``factorize`` of its values: :func:`~dpcore.foundations.grouping.column_codes`), a cell is the
mixed-radix combination of its columns' codes, and every count and sum is an
``np.bincount`` over the cells; labels are attached once per cell, not per row. It computes
exactly what the DuckDB and Spark engines compute, with the same labels and the same
contribution bound (:func:`~dpcore.foundations.privacy_unit.bounded_weights`), so that a
release is the same on every engine.

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
from dpcore.engines.blb import BlbQuery, row_bag_sums
from dpcore.foundations.dataset import frame_identity
from dpcore.foundations.grouping import cell_labels, column_codes, needs_edges
from dpcore.foundations.labels import MISSING_LABEL
from dpcore.foundations.privacy_unit import (
    BoundPreview,
    PrivacyUnit,
    bounded_weights,
    cell_ranks,
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
        cells = rows.labels.shape[0]
        counted = rows.counted
        cell = rows.cell if counted is None else rows.cell[counted]
        clipped = {
            clipped.column: np.clip(
                rows.values[:, i] if counted is None else rows.values[counted, i],
                clipped.low, clipped.high,
            )
            for i, clipped in enumerate(query.inputs)
        }  # fmt: skip
        weights = None if rows.weights is None else rows.weights[counted]
        sums = {
            name: np.bincount(cell, weights=_product(clipped, factors, weights, cell.shape[0]),
                              minlength=cells)
            for name, factors in query.sums
        }  # fmt: skip
        binary = {}
        if query.binary:
            chosen = rows.values[:, [query.columns.index(c) for c in query.binary]]
            odd = ~np.isin(chosen, (0.0, 1.0)).all(axis=1)
            odd &= True if rows.finite is None else rows.finite
            binary["not_binary"] = np.bincount(rows.cell[odd], minlength=cells)
        every = np.bincount(rows.cell, minlength=cells)
        finite = (
            every if rows.finite is None else np.bincount(rows.cell[rows.finite], minlength=cells)
        )
        usable = finite if weights is None else np.bincount(cell, weights, cells).round()
        table = rows.labels.assign(
            rows=every, finite=finite, usable=usable.astype(np.int64), **sums, **binary
        )
        return Cells(table, missing_person=rows.missing_person)

    def clipped_sums(
        self, query: SumsQuery, cell_groups: pd.DataFrame, low: np.ndarray, high: np.ndarray
    ) -> np.ndarray:
        rows = self._rows(query)
        group_of_cell = rows.labels.merge(cell_groups, on=list(query.by), how="left")[GROUP]
        group = group_of_cell.to_numpy(dtype=float, na_value=-1).astype(np.int64)[rows.cell]
        use = group >= 0
        if rows.counted is not None:
            use &= rows.counted
        g = group[use]
        clipped = np.clip(rows.values[use, 0], low[g], high[g])
        if rows.weights is not None:
            clipped *= rows.weights[use]
        return np.bincount(g, weights=clipped, minlength=low.shape[0])

    def bound_preview(
        self, by: tuple[str, ...], edges: dict[str, tuple[float, ...]], unit: PrivacyUnit
    ) -> BoundPreview:
        check_person(unit, self.column_kinds(), by)
        labels = cell_labels(self._frame, by, edges) if by else self._frame.iloc[:, :0]
        return preview_bound(labels, self._frame[unit.column], unit)

    def blb_sums(self, query: BlbQuery, mapping: pd.DataFrame) -> pd.DataFrame:
        rows = self._rows(query.rows)
        group_of_cell = rows.labels.merge(mapping, on=list(query.rows.by), how="left")[GROUP]
        group = group_of_cell.to_numpy(dtype=float, na_value=-1).astype(np.int64)[rows.cell]
        counted = np.ones(len(group), dtype=bool) if rows.counted is None else rows.counted
        weights = np.ones(len(group)) if rows.weights is None else rows.weights
        column = query.rows.unit.column
        owners = None if column is None else self._frame[column][counted].reset_index(drop=True)
        return row_bag_sums(
            query, group[counted], rows.values[counted], weights[counted], owners, mapping
        )

    @functools.lru_cache(maxsize=4)  # noqa: B019 - one engine per frame, a handful of queries
    def _rows(self, query: SumsQuery) -> _Rows:
        cell, labels = self._cells_of_rows(query)
        values = np.column_stack([
            numeric_values(self._frame, clipped.role, clipped.column) for clipped in query.inputs
        ]) if query.inputs else np.empty((len(self._frame), 0))  # fmt: skip
        finite = np.isfinite(values).all(axis=1)
        unit = query.unit
        if unit.column is None:  # every finite row counts once
            all_finite = bool(finite.all())
            return _Rows(cell, labels, values, None if all_finite else finite,
                         None if all_finite else finite, None, 0)  # fmt: skip
        person = pd.factorize(self._frame[unit.column], use_na_sentinel=True)[0]
        ranks = cell_ranks(labels)[cell]
        weights = bounded_weights(ranks, finite, person, unit.max_rows, unit.max_groups)
        return _Rows(cell, labels, values, finite, weights > 0, weights, int(np.sum(person < 0)))

    def _cells_of_rows(self, query: SumsQuery) -> tuple[np.ndarray, pd.DataFrame]:
        """Each row's cell (0, 1, ... in the order of the columns' codes) and each cell's
        labels, one column per grouping column."""
        if not query.by:
            return np.zeros(len(self._frame), dtype=np.int64), pd.DataFrame(index=[0])
        combined = np.zeros(len(self._frame), dtype=np.int64)
        radices, names = [], []
        for column in query.by:  # in the command line's words, as the other engines say it
            series = self._frame[column]
            if column not in query.edges_of and needs_edges(series):
                raise EngineError(edges_needed(column, "numbers that are not category codes"))
            codes, found = _column_codes(series, column, query.edges_of.get(column))
            combined = combined * len(found) + codes
            radices.append(len(found))
            names.append(np.asarray(found, dtype=object))
        possible = int(np.prod(radices, dtype=float))
        if possible <= max(len(combined), 1 << 20):  # present cells by counting, not hashing
            present = np.flatnonzero(np.bincount(combined, minlength=possible))
            compact = np.zeros(possible, dtype=np.int64)
            compact[present] = np.arange(present.size)
            cell, digits = compact[combined], present
        else:
            cell, combos = pd.factorize(combined)
            cell, digits = np.asarray(cell, dtype=np.int64), np.asarray(combos, dtype=np.int64)
        columns = {}
        for column, radix, found in zip(query.by[::-1], radices[::-1], names[::-1], strict=True):
            digits, code = np.divmod(digits, radix)
            columns[column] = found[code]
        labels = pd.DataFrame({column: columns[column] for column in query.by})
        return cell, labels


def _column_codes(
    series: pd.Series, column: str, edges: tuple[float, ...] | None
) -> tuple[np.ndarray, list[str]]:
    """A grouping column's codes and labels (:func:`~dpcore.foundations.grouping.column_codes`);
    a categorical column's own codes when its categories' labels are distinct."""
    if edges is None and isinstance(series.dtype, pd.CategoricalDtype):
        labels = [str(c) for c in series.cat.categories]
        if len(set(labels)) == len(labels) and MISSING_LABEL not in labels:
            codes = series.cat.codes.to_numpy().astype(np.int64)
            codes[codes < 0] = len(labels)
            return codes, [*labels, MISSING_LABEL]
    return column_codes(series, column, edges)


@dataclass(frozen=True, eq=False)
class _Rows:
    """A frame's rows as a pass sees them: each row's ``cell`` and each cell's ``labels``, the
    inputs' values (one column per input), which rows have finite inputs (None: all), which
    rows count (None: all) and each row's weight under the contribution bound (None: each
    counted row counts once)."""

    cell: np.ndarray
    labels: pd.DataFrame
    values: np.ndarray
    finite: np.ndarray | None
    counted: np.ndarray | None
    weights: np.ndarray | None
    missing_person: int


def _product(
    clipped: dict[str, np.ndarray], factors: tuple[str, ...], weights: np.ndarray | None, n: int
) -> np.ndarray | None:
    """The product of the named clipped columns, left to right (as the SQL engines multiply),
    times each row's weight; no column and no weight: None (``np.bincount`` counts rows)."""
    out = weights
    for column in factors:
        out = clipped[column] if out is None else out * clipped[column]
    return out
