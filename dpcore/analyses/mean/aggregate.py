"""The mean's statistics from an engine's pass: each group's size and clipped sum, for data
that stays where it lies (files on disk, a Spark table), as
:meth:`~dpcore.analyses.mean.statistics.GroupValues.from_grouping` computes them from rows in
memory.

The query (:func:`mean_query`) sums one value per cell, clipped per row to the public bounds;
the cells are grouped as every analysis groups them (:func:`~dpcore.engines.aggregate_cells`),
and CoinPress' later intervals ask the engine again for sums at other bounds
(:meth:`~dpcore.engines.Engine.clipped_sums`).

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpcore.analyses.base import EngineStatistics
from dpcore.analyses.mean.sums import GroupSums, fixed_bounds_sums
from dpcore.engines.base import (
    GROUP,
    Clipped,
    Engine,
    EngineError,
    SumsQuery,
    aggregate_cells,
    count_query,
)
from dpcore.foundations.grouping import GroupingSpec, bucket_labels
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit, dropped_rows_notes
from dpcore.foundations.validation import validate_bounds

__all__ = ["aggregate_mean", "mean_query"]

CELL_COLUMNS = ("rows", "finite", "usable", "clipped_sum")
"""The mean's statistics of each cell (:func:`mean_query`)."""


def mean_query(
    by: tuple[str, ...],
    edges: tuple[tuple[str, tuple[float, ...]], ...],
    value: str,
    bounds: tuple[float, float],
    unit: PrivacyUnit = ROW,
) -> SumsQuery:
    """The mean's pass: the values of ``value`` clipped to ``bounds``, summed per cell as
    ``clipped_sum``."""
    low, high = validate_bounds(bounds)
    return SumsQuery(by, edges, (Clipped(value, low, high),), (("clipped_sum", (value,)),),
                     unit=unit)  # fmt: skip


def aggregate_mean(
    engine: Engine,
    spec: GroupingSpec,
    value: str,
    bounds: tuple[float, float],
    unit: PrivacyUnit = ROW,
) -> EngineStatistics[GroupSums]:
    """The groups of ``spec`` and the mean's statistics of ``value``, from one pass of ``engine``.

    Rows whose value is missing or infinite are left out within their group; a group left with
    no usable value is left out with its share (as :meth:`GroupValues.from_grouping` does).

    Raises
    ------
    EngineError
        Data the pass cannot read as asked (:func:`~dpcore.engines.base.aggregate_cells`).
    ValueError
        Groups the spec cannot build or shares it cannot find (the pass again).
    """
    query = mean_query(spec.by, spec.edges, value, bounds, unit)
    cells, grouping, dataset = aggregate_cells(engine, spec, query)
    return EngineStatistics(_group_sums(engine, query, cells.table, grouping), dataset)


def _group_sums(engine: Engine, query: SumsQuery, table: pd.DataFrame, grouping) -> GroupSums:
    """The mean's :class:`GroupSums` from the cells of :func:`mean_query`."""
    (value,) = query.inputs
    codes = grouping.codes
    inside = codes >= 0
    totals = {
        name: np.bincount(codes[inside], weights=table[name].to_numpy(float)[inside],
                          minlength=grouping.k)
        for name in CELL_COLUMNS
    }  # fmt: skip
    has_values = totals["usable"] > 0
    if not has_values.any():
        raise EngineError(
            f"The value column `{value.column}` has no usable value in any group: every value "
            "is missing or infinite. Choose another value column."
        )
    if (
        grouping.spec.built_small_groups == "keep"
    ):  # as GroupValues.from_grouping: every group stays
        has_values = np.ones(grouping.k, dtype=bool)
    renumbered = np.cumsum(has_values) - 1
    kept = inside & has_values[np.maximum(codes, 0)]
    cell_groups = table.loc[kept, list(query.by)].reset_index(drop=True)
    cell_groups[GROUP] = renumbered[codes[kept]]

    def requery(low: np.ndarray, high: np.ndarray) -> np.ndarray:
        return engine.clipped_sums(query, cell_groups, low, high)

    def pooled_requery(low: np.ndarray, high: np.ndarray) -> np.ndarray:
        return engine.clipped_sums(query, cell_groups.assign(**{GROUP: 0}), low, high)

    def buckets_at(candidates: np.ndarray) -> np.ndarray:
        return grid_buckets(engine, query, cell_groups, int(has_values.sum()), candidates)

    sums = totals["clipped_sum"][has_values]
    dropped_by_bound = int(round(totals["finite"].sum() - totals["usable"].sum()))
    notes = (*grouping.report.messages(), *dropped_rows_notes(query.unit, dropped_by_bound))
    labels = np.asarray(grouping.labels, dtype=object)
    return GroupSums(
        value=value.column, labels=tuple(labels[has_values]),
        sizes=totals["usable"][has_values].round().astype(np.int64),
        sums_at=fixed_bounds_sums((value.low, value.high), sums, requery),
        pooled_sums_at=fixed_bounds_sums((value.low, value.high), np.array([sums.sum()]),
                                         pooled_requery),
        shares=grouping.shares.restricted(has_values),
        n_missing=_rows_missing(grouping, totals),
        empty_groups=tuple(labels[~has_values]), by=query.by, notes=notes,
        unit=query.unit, recipe=_recipe(engine, query), engine=engine.name,
        buckets_at=buckets_at,
    )  # fmt: skip


def _rows_missing(grouping, totals: dict[str, np.ndarray]) -> int:
    """Rows left out for a missing or infinite value: before grouping when the groups count
    the rows with a value (:attr:`~dpcore.foundations.grouping.GroupingSpec.needs_values`),
    else within the groups."""
    if grouping.spec.needs_values:
        return grouping.report.n_rows_without_values
    return int(round(totals["rows"].sum() - totals["finite"].sum()))


LARGEST = float(np.finfo(np.float64).max)


def grid_buckets(
    engine: Engine, query: SumsQuery, cell_groups: pd.DataFrame, k: int, candidates: np.ndarray
) -> np.ndarray:
    """Each group's finite values counted per bucket of ``candidates`` (shape (k, C + 1):
    below the first, between each two, at or above the last), from one more pass of ``engine``
    counting rows per cell of the grouping columns and the value bucketed at the candidates
    (:func:`~dpcore.engines.base.count_query`): what bounds found privately score
    (:mod:`dpcore.foundations.private_bounds`). Two outer edges at ±the largest float set the
    infinite values apart, as the mean leaves them out.

    With a person column the count would not bound each person's rows (a count query counts
    every row), so it is refused with the way out."""
    (value,) = query.inputs
    if query.unit.column is not None:
        raise EngineError(
            "Bounds found privately count the values per bucket of a grid, and on data read "
            "where it lies that count cannot bound each person's rows yet. Type public bounds, "
            "or load the data into memory, where the bound applies first."
        )
    edges = (-LARGEST, *(float(c) for c in candidates), LARGEST)
    histogram = count_query((*query.by, value.column), (*query.edges, (value.column, edges)))
    table = engine.cells(histogram).table
    bucket = {label: i for i, label in enumerate(bucket_labels(edges))}
    cells = table.merge(cell_groups, on=list(query.by), how="inner") if query.by else (
        table.assign(**{GROUP: 0})
    )  # fmt: skip
    index = cells[value.column].map(bucket)
    finite = index.between(1, len(edges) - 1)  # not missing (NaN), nor below or above ±largest
    counts = np.zeros((k, len(edges) + 1), dtype=np.int64)
    np.add.at(
        counts,
        (cells.loc[finite, GROUP].to_numpy(np.int64), index[finite].to_numpy(np.int64)),
        cells.loc[finite, "rows"].to_numpy(np.int64),
    )
    return counts[:, 1:-1]


def _recipe(engine: Engine, query: SumsQuery) -> str:
    (value,) = query.inputs
    unit = query.unit
    unit_code = (
        "" if unit.column is None
        else f", PrivacyUnit({unit.column!r}, max_groups={unit.max_groups}, "
        f"max_rows={unit.max_rows})"
    )  # fmt: skip
    return (
        f"from dpcore.engines import {type(engine).__name__}\n"
        "from dpcore.analyses.mean.aggregate import aggregate_mean\n"
        f"{'' if unit.column is None else 'from dpcore.foundations.privacy_unit import PrivacyUnit'}\n"
        f"aggregated = aggregate_mean({engine.expression}, spec, {value.column!r}, "
        f"{(value.low, value.high)!r}{unit_code})\n"
    )
