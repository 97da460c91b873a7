"""The engine boundary: the one pass over raw rows, and everything above it engine-free.

An :class:`Engine` answers two questions about a table it holds (in memory, in files on disk, or
in a cluster):

- :meth:`Engine.cells`: per *cell* — each combination of the grouping columns' labels — the row
  count, the rows with a usable value, and (after the privacy unit's contribution bound, per row
  clipping first) the usable rows kept and their sum clipped to the public bounds; plus an
  order-independent digest of the columns read, which identifies the data in the ledger.
- :meth:`Engine.clipped_sums`: the kept rows' sums per group at other bounds, one more pass
  (CoinPress' next interval).

:func:`aggregate_mean` turns the cells into the groups of a :class:`~dpcore.grouping.GroupingSpec`
(the same groups, merges and shares the rows would give in memory, since grouping weighted
cells is grouping their rows) and a :class:`~dpcore.analyses.mean.sums.GroupSums` that the
estimators, plans and releases use without knowing which engine ran.

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import abc
import hashlib
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpcore.analyses.mean.estimators import validate_bounds
from dpcore.analyses.mean.sums import GroupSums, fixed_bounds_sums
from dpcore.grouping import MAX_CODE_VALUES, MISSING_LABEL, GroupingSpec, check_edges
from dpcore.privacy_unit import ROW, PrivacyUnit, dropped_rows_notes, missing_person_message
from dpcore.release.plan import DatasetRef

__all__ = ["AggregatedMean", "Cells", "Engine", "EngineError", "MeanQuery", "aggregate_mean"]

NUMBER_KINDS = ("whole number", "decimal number", "yes / no")
"""Column kinds (:func:`dpcore._validate.column_kind`'s words) a value can be averaged over."""
CELL_COLUMNS = ("rows", "finite", "usable", "clipped_sum")
RESERVED = (*CELL_COLUMNS, "digest", "missing_person")
"""Names of the cells' statistics, which a grouping column cannot have."""
NOT_WHOLE_LABEL = "\x00not a whole number"
"""The label an engine's pass gives a decimal that is not a whole number in a grouping column
without edges (a column that check_codes then refuses); whole ones are labelled as integers
("1", not "1.0"), as :func:`~dpcore.grouping.cell_labels` labels codes in memory."""
LARGEST_CODE = 2**53
"""Whole numbers below this in magnitude are exact as doubles and labelled as integers."""
GROUP = "__group"
"""The group column of the cell-to-group map :meth:`Engine.clipped_sums` receives."""


class EngineError(ValueError):
    """The data cannot be read or aggregated as asked; the message says what and how to fix it."""


@dataclass(frozen=True)
class MeanQuery:
    """What the pass over the rows computes for the mean: the cells of ``by`` (numeric columns
    bucketed at ``edges``), and the values of ``value`` clipped to ``bounds`` after the
    contribution bound of ``unit``."""

    by: tuple[str, ...]
    edges: tuple[tuple[str, tuple[float, ...]], ...]
    value: str
    bounds: tuple[float, float]
    unit: PrivacyUnit = ROW

    def __post_init__(self) -> None:
        object.__setattr__(self, "bounds", validate_bounds(self.bounds))
        # Bucket edges become labels and SQL: refuse unsorted or non-finite ones up front.
        object.__setattr__(self, "edges", tuple(check_edges(dict(self.edges), self.by).items()))

    @property
    def edges_of(self) -> dict[str, tuple[float, ...]]:
        return dict(self.edges)

    @property
    def columns_read(self) -> tuple[str, ...]:
        """Every column the pass reads (what the digest covers)."""
        person = () if self.unit.column is None else (self.unit.column,)
        return (*self.by, self.value, *person)


@dataclass(frozen=True, eq=False)
class Cells:
    """The result of one pass: ``table`` has the grouping columns (labels) and
    :data:`CELL_COLUMNS`; ``digest`` identifies the columns read; ``missing_person`` counts rows
    without a person id."""

    table: pd.DataFrame
    digest: str
    missing_person: int = 0


class Engine(abc.ABC):
    """Where the rows are, and the one pass over them (module doc)."""

    name: str
    """``"pandas"``, ``"duckdb"``, ``"spark"``."""

    @property
    @abc.abstractmethod
    def source(self) -> str:
        """The data's name, for a release's review (a file name, a folder, a table)."""

    @property
    @abc.abstractmethod
    def expression(self) -> str:
        """Python that builds this engine again, for a release's script."""

    @abc.abstractmethod
    def column_kinds(self) -> dict[str, str]:
        """Every column's kind in :func:`dpcore._validate.column_kind`'s words."""

    @abc.abstractmethod
    def cells(self, query: MeanQuery) -> Cells:
        """One pass over the rows (module doc)."""

    @abc.abstractmethod
    def clipped_sums(
        self, query: MeanQuery, cell_groups: pd.DataFrame, low: np.ndarray, high: np.ndarray
    ) -> np.ndarray:
        """Sums of the kept rows' values clipped to ``[low[g], high[g]]`` per group g, where
        ``cell_groups`` maps cells (label columns) to groups (column :data:`GROUP`)."""


@dataclass(frozen=True, eq=False)
class AggregatedMean:
    """The mean's statistics from an engine, and the data reference a release records."""

    stats: GroupSums
    dataset: DatasetRef


def aggregate_mean(
    engine: Engine,
    spec: GroupingSpec,
    value: str,
    bounds: tuple[float, float],
    unit: PrivacyUnit = ROW,
) -> AggregatedMean:
    """The groups of ``spec`` and the mean's statistics of ``value``, from one pass of ``engine``.

    Rows whose value is missing or infinite are left out within their group; a group left with
    no usable value is left out with its share (as :meth:`GroupValues.from_grouping` does).

    Raises
    ------
    EngineError
        An unknown column, a column of the wrong kind, rows without a person id, or data the
        engine cannot read.
    ValueError
        Groups the spec cannot build (too few, too many) or shares it cannot find.
    """
    query = MeanQuery(spec.by, spec.edges, value, bounds, unit)
    kinds = engine.column_kinds()
    check_query(query, kinds)
    cells = engine.cells(query)
    check_codes(query, kinds, cells.table)
    if cells.missing_person:
        raise EngineError(missing_person_message(cells.missing_person, unit.column))
    table = cells.table
    grouping = spec.build(table[list(spec.by)], weights=table["rows"].to_numpy(np.int64))
    stats = _group_sums(engine, query, table, grouping)
    dataset = DatasetRef(
        name=engine.source, fingerprint=_fingerprint(engine, query, cells),
        rows=int(table["rows"].sum()),
    )  # fmt: skip
    return AggregatedMean(stats, dataset)


def check_query(query: MeanQuery, kinds: dict[str, str]) -> None:
    """Refuse unknown columns and columns of the wrong kind before any pass, naming the fix."""
    available = ", ".join(kinds)
    for role, column in (
        *(("grouping", c) for c in query.by),
        ("value", query.value),
        *((("person", query.unit.column),) if query.unit.column else ()),
    ):
        if column not in kinds:
            raise EngineError(
                f"The {role} column `{column}` is not in the data; its columns are: {available}."
            )
    edges = query.edges_of
    for column in query.by:
        if column in RESERVED:
            raise EngineError(
                f"A grouping column may not be called `{column}` (a name the engines use for "
                "their counts); rename it in the data."
            )
        numeric = kinds[column] in ("whole number", "decimal number")
        # Numbers without edges may be category codes (0/1, or 0.0/1.0 as a file wrote them):
        # the pass labels them and check_codes refuses more distinct values, or a decimal that
        # is not whole, as the grouping of a frame in memory does.
        if column in edges and not numeric:
            raise EngineError(
                f"Bucket edges were given for `{column}`, but it holds {kinds[column]}, not "
                "numbers; edges apply to numeric columns only."
            )
    if kinds[query.value] not in NUMBER_KINDS:
        raise EngineError(
            f"The value column `{query.value}` holds {kinds[query.value]}; choose a column of "
            "numbers (or 0/1, yes/no)."
        )
    roles = [*query.by, query.value, *([query.unit.column] if query.unit.column else [])]
    if len(set(roles)) != len(roles):
        raise EngineError(
            "The grouping, value and person columns must be different columns, got "
            f"{', '.join(roles)}."
        )


def check_codes(query: MeanQuery, kinds: dict[str, str], cells: pd.DataFrame) -> None:
    """Refuse a numeric grouping column without edges that is not category codes: a decimal
    that is not a whole number (labelled :data:`NOT_WHOLE_LABEL` by the pass), or more
    distinct values than codes may have (:data:`~dpcore.grouping.MAX_CODE_VALUES`), as the
    grouping of a frame in memory does (:func:`~dpcore.grouping.is_category_codes`)."""
    for column in query.by:
        if kinds[column] not in ("whole number", "decimal number") or column in query.edges_of:
            continue
        labels = cells[column]
        if (labels == NOT_WHOLE_LABEL).any():
            raise EngineError(edges_needed(column, "numbers that are not whole"))
        if labels[labels != MISSING_LABEL].nunique() > MAX_CODE_VALUES:
            raise EngineError(
                edges_needed(column, f"more than {MAX_CODE_VALUES} distinct whole numbers")
            )


def edges_needed(column: str, holds: str) -> str:
    """Why the grouping column ``column``, which holds ``holds``, needs edges, and how to give
    them (the command line's words)."""
    return (
        f"The grouping column `{column}` holds {holds}. Give public bucket edges for it (e.g. "
        f"--edges {column}=25;45;65): edges read off the private data would leak information "
        f"about individuals. Whole numbers with at most {MAX_CODE_VALUES} distinct values "
        "(codes such as 0/1) group as they are, their list treated as public."
    )


def _group_sums(engine: Engine, query: MeanQuery, table: pd.DataFrame, grouping) -> GroupSums:
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
            f"The value column `{query.value}` has no usable value in any group: every value "
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

    sums = totals["clipped_sum"][has_values]
    dropped_by_bound = int(round(totals["finite"].sum() - totals["usable"].sum()))
    notes = (*grouping.report.messages(), *dropped_rows_notes(query.unit, dropped_by_bound))
    labels = np.asarray(grouping.labels, dtype=object)
    return GroupSums(
        value=query.value, labels=tuple(labels[has_values]),
        sizes=totals["usable"][has_values].round().astype(np.int64),
        sums_at=fixed_bounds_sums(query.bounds, sums, requery),
        pooled_sums_at=fixed_bounds_sums(query.bounds, np.array([sums.sum()]), pooled_requery),
        shares=grouping.shares.restricted(has_values),
        n_missing=int(round(totals["rows"].sum() - totals["finite"].sum())),
        empty_groups=tuple(labels[~has_values]), by=query.by, notes=notes,
        unit=query.unit, recipe=_recipe(engine, query), engine=engine.name,
    )  # fmt: skip


def _recipe(engine: Engine, query: MeanQuery) -> str:
    unit = query.unit
    unit_code = (
        "" if unit.column is None
        else f", PrivacyUnit({unit.column!r}, max_groups={unit.max_groups}, "
        f"max_rows={unit.max_rows})"
    )  # fmt: skip
    return (
        f"from dpcore.engines import {type(engine).__name__}, aggregate_mean\n"
        f"{'' if unit.column is None else 'from dpcore.privacy_unit import PrivacyUnit'}\n"
        f"aggregated = aggregate_mean({engine.expression}, spec, {query.value!r}, "
        f"{query.bounds!r}{unit_code})\n"
    )


def _fingerprint(engine: Engine, query: MeanQuery, cells: Cells) -> str:
    """SHA-256 of the columns read, their kinds and the engine's order-independent row digest:
    the same data gives the same fingerprint whatever the order of its rows or files. It is a
    function of every row read, so it stays with the curator (ledger, review), as
    :func:`~dpcore.release.plan.fingerprint_frame` does. Engines hash rows differently, so one
    table has one fingerprint per engine."""
    kinds = engine.column_kinds()
    header = [[column, kinds[column]] for column in query.columns_read]
    text = json.dumps({"engine": engine.name, "columns": header, "rows": cells.digest})
    return hashlib.sha256(text.encode()).hexdigest()
