"""The engine boundary: the one pass over raw rows, and everything above it engine-free.

An engine knows rows, cells and sums, never an estimator (as PipelineDP's ``PipelineBackend``
maps, groups by key and combines per key without knowing a metric). An :class:`Engine` answers
four generic questions about a table it holds (in memory, in files on disk, or in a cluster):

- :meth:`Engine.cells`: per *cell* — each combination of the grouping columns' labels — for a
  :class:`SumsQuery`: the row count, the rows whose inputs are all usable (finite), and, under
  the privacy unit's contribution bound (:mod:`dpcore.foundations.privacy_unit`: a person's
  rows in a cell count as at most M rows, their sums scaled alike), the usable rows counted and
  the sums the query names (products of its input columns, each clipped per row to its public
  bounds before any sum).
  Each analysis writes its own query in its ``aggregate`` module (the mean one clipped
  value, the ratio the products of its score, label and weight, synthetic data counts).
- :meth:`Engine.clipped_sums`: the counted rows' sums of a one-input query per group at other
  bounds, one more pass (an adaptive clipping's next interval).
- :meth:`Engine.blb_sums`: per (group, subset, resample) weighted sums, subsets and weights
  drawn from a salted hash of each row (:mod:`dpcore.engines.blb`).
- :meth:`Engine.bound_preview`: what a contribution bound would leave out (a curator's view for
  choosing the bounds, :class:`~dpcore.foundations.privacy_unit.BoundPreview`), from one
  aggregation: per person and cell the rows, then per person what the bound counts.

:func:`aggregate_cells` turns the cells into the groups of a
:class:`~dpcore.foundations.grouping.GroupingSpec` (the same groups, merges and shares the rows
would give in memory, since grouping weighted cells is grouping their rows): what every
analysis on an engine starts from.

Pure numpy/pandas; never imports streamlit or plotly, nor any analysis.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from dpcore.foundations.dataset import DatasetRef
from dpcore.foundations.grouping import (
    MAX_CODE_VALUES,
    MISSING_LABEL,
    Grouping,
    GroupingSpec,
    check_edges,
)
from dpcore.foundations.privacy_unit import (
    ROW,
    BoundPreview,
    PrivacyUnit,
    missing_person_message,
)
from dpcore.foundations.validation import validate_bounds

if TYPE_CHECKING:  # dpcore.engines.blb imports this module
    from dpcore.engines.blb import BlbQuery

__all__ = [
    "Cells", "Clipped", "Engine", "EngineError", "SumsQuery", "aggregate_cells", "count_query",
]  # fmt: skip

NUMBER_KINDS = ("whole number", "decimal number", "yes / no")
"""Column kinds (:func:`dpcore.foundations.validation.column_kind`'s words) a value can be
averaged over."""
NOT_WHOLE_LABEL = "\x00not a whole number"
"""The label an engine's pass gives a decimal that is not a whole number in a grouping column
without edges (a column that check_codes then refuses); whole ones are labelled as integers
("1", not "1.0"), as :func:`~dpcore.foundations.grouping.cell_labels` labels codes in memory."""
LARGEST_CODE = 2**53
"""Whole numbers below this in magnitude are exact as doubles and labelled as integers."""
GROUP = "__group"
"""The group column of the cell-to-group map :meth:`Engine.clipped_sums` receives."""


class EngineError(ValueError):
    """The data cannot be read or aggregated as asked; the message says what and how to fix it."""


@dataclass(frozen=True)
class Clipped:
    """A numeric column the pass reads, clipped per row to ``[low, high]`` before any sum;
    ``role`` names it in messages ("value", "score", ...)."""

    column: str
    low: float
    high: float
    role: str = "value"

    def __post_init__(self) -> None:
        low, high = validate_bounds((self.low, self.high), public=False)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)


@dataclass(frozen=True)
class SumsQuery:
    """What one pass over the rows computes (module doc): the cells of ``by`` (numeric columns
    bucketed at ``edges``) and, over the rows whose ``inputs`` are all finite, weighted by the
    contribution bound of ``unit``, each of ``sums``: a name and the input columns whose
    clipped values multiply per row (no column: the row counts 1). Columns in ``binary`` must
    be 0 or 1; each cell counts its finite rows that are not (``not_binary``).

    The mean sums one clipped value (:func:`~dpcore.analyses.mean.aggregate.mean_query`); the
    ratio sums products of its clipped score, label and weight
    (:func:`~dpcore.analyses.ratio.aggregate.ratio_query`); another analysis plugs in the same
    way, with its own products. A query without inputs counts the rows of each cell
    (:func:`count_query`: synthetic data's marginal counts)."""

    by: tuple[str, ...]
    edges: tuple[tuple[str, tuple[float, ...]], ...]
    inputs: tuple[Clipped, ...]
    sums: tuple[tuple[str, tuple[str, ...]], ...]
    binary: tuple[str, ...] = ()
    unit: PrivacyUnit = ROW

    def __post_init__(self) -> None:
        # Bucket edges become labels and SQL: refuse unsorted or non-finite ones up front.
        object.__setattr__(self, "edges", tuple(check_edges(dict(self.edges), self.by).items()))
        columns = [clipped.column for clipped in self.inputs]
        unknown = {c for _, factors in self.sums for c in factors} | set(self.binary)
        if not unknown <= set(columns):
            raise ValueError(f"every summed column must be an input of the query, got {self!r}")
        # A query without inputs counts rows, each one a person (synthetic data's marginals).
        if not self.inputs and (self.sums or self.unit.column is not None):
            raise ValueError(f"a query without inputs counts rows, one per person, got {self!r}")

    @property
    def edges_of(self) -> dict[str, tuple[float, ...]]:
        return dict(self.edges)

    @property
    def columns(self) -> tuple[str, ...]:
        """The input columns, in order (an engine's ``__v0``, ``__v1``, ...)."""
        return tuple(clipped.column for clipped in self.inputs)

    @property
    def columns_read(self) -> tuple[str, ...]:
        """Every column the pass reads."""
        person = () if self.unit.column is None else (self.unit.column,)
        return (*self.by, *self.columns, *person)

    @property
    def cell_columns(self) -> tuple[str, ...]:
        """The statistics of each cell that :meth:`Engine.cells` returns."""
        binary = ("not_binary",) if self.binary else ()
        return ("rows", "finite", "usable", *(name for name, _ in self.sums), *binary)


def count_query(by: tuple[str, ...], edges: tuple[tuple[str, tuple[float, ...]], ...]) -> SumsQuery:
    """The rows of each cell of ``by`` (numeric columns bucketed at ``edges``), each row one
    person: the marginal counts synthetic data is fitted on
    (:func:`~dpcore.analyses.synth.aggregate.aggregate_synth`)."""
    return SumsQuery(by, edges, inputs=(), sums=())


@dataclass(frozen=True, eq=False)
class Cells:
    """The result of one pass: ``table`` has the grouping columns (labels) and the query's
    :attr:`~SumsQuery.cell_columns`; ``missing_person`` counts rows without a person id."""

    table: pd.DataFrame
    missing_person: int = 0


class Engine(abc.ABC):
    """Where the rows are, and the one pass over them (module doc)."""

    name: str
    """``"pandas"``, ``"duckdb"``, ``"spark"``."""

    identity_beside_pass: bool = False
    """Whether :meth:`identity` may run in a thread while a pass runs (it reads the data by
    other means than the pass, and is safe from two threads): the two then share the wait."""

    @property
    @abc.abstractmethod
    def source(self) -> str:
        """The data's name, for a release's review (a file name, a folder, a table)."""

    @property
    @abc.abstractmethod
    def expression(self) -> str:
        """Python that builds this engine again, for a release's script."""

    @abc.abstractmethod
    def identity(self) -> str:
        """The data's identity (:mod:`dpcore.foundations.dataset`): the bytes of the files read,
        a table's snapshot, or what the curator declared; empty when the data has none yet (a
        release then asks for one). A function of the confidential rows: curator-side only."""

    @abc.abstractmethod
    def column_kinds(self) -> dict[str, str]:
        """Every column's kind in :func:`dpcore.foundations.validation.column_kind`'s words."""

    def _check_columns(self, columns: Iterable[str]) -> None:
        """Refuse, before a pass, a column the data lacks (:func:`check_known`)."""
        check_known(columns, self.column_kinds())

    @abc.abstractmethod
    def cells(self, query: SumsQuery) -> Cells:
        """One pass over the rows (module doc, :class:`SumsQuery`)."""

    @abc.abstractmethod
    def clipped_sums(
        self, query: SumsQuery, cell_groups: pd.DataFrame, low: np.ndarray, high: np.ndarray
    ) -> np.ndarray:
        """Sums of the counted rows' values (weighted by the bound) of the query's one input
        clipped to ``[low[g], high[g]]`` per group g, where ``cell_groups`` maps cells (label
        columns) to groups (column :data:`GROUP`)."""

    @abc.abstractmethod
    def bound_preview(
        self, by: tuple[str, ...], edges: dict[str, tuple[float, ...]], unit: PrivacyUnit
    ) -> BoundPreview:
        """What ``unit``'s contribution bound leaves out of the rows in the cells of ``by``
        (numeric columns bucketed at ``edges``; no columns: one cell), counted as
        :func:`~dpcore.foundations.privacy_unit.preview_bound` counts rows in memory: over every row with a
        person id, whatever its values. One aggregation: per person and cell the rows n, then
        per person the counted rows, min(n, M) summed over the G cells where that is largest. A
        curator's view (exact counts of the confidential rows), never released."""

    @abc.abstractmethod
    def blb_sums(self, query: BlbQuery, mapping: pd.DataFrame) -> pd.DataFrame:
        """A bag of little bootstraps in one pass (:mod:`dpcore.engines.blb`): over the
        counted rows of ``query.rows`` (weighted by the bound), grouped by ``mapping`` (cells →
        :data:`GROUP` and each group's k and 1/√k), per (group, subset) the rows and the sums
        :attr:`BlbQuery.sums <dpcore.engines.blb.BlbQuery.sums>` names."""


def aggregate_cells(
    engine: Engine, spec: GroupingSpec, query: SumsQuery
) -> tuple[Cells, Grouping, DatasetRef]:
    """One pass of ``engine`` for ``query`` (checked first), the groups of ``spec`` built
    from its cells weighted by their rows (grouping weighted cells is grouping their rows), and
    the data reference a release records: what every analysis on an engine starts from.

    Raises
    ------
    EngineError
        An unknown column, a column of the wrong kind, rows without a person id, or data the
        engine cannot read.
    ValueError
        Groups the spec cannot build (too few, too many) or shares it cannot find.
    """
    kinds = engine.column_kinds()
    check_query(query, kinds)
    if engine.identity_beside_pass:
        # The identity is a full read of the data (the files' bytes), about as long as the
        # pass: the two run together. The engine keeps it, so reading it below is free; if it
        # failed in the thread, it is computed again there and its error raised.
        with ThreadPoolExecutor(max_workers=1) as beside:
            beside.submit(engine.identity)
            cells = engine.cells(query)
    else:
        cells = engine.cells(query)
    check_codes(query, kinds, cells.table, spec.by)
    if cells.missing_person:
        raise EngineError(missing_person_message(cells.missing_person, query.unit.column))
    table = cells.table
    if spec.needs_values and set(spec.needs_values) != set(query.columns):
        raise ValueError(
            f"the spec's `needs_values` {spec.needs_values!r} must be the query's input columns "
            f"{query.columns!r}: the engine counts the rows with all of them finite"
        )
    grouping = spec.build(
        table[list(spec.by)], weights=table["rows"].to_numpy(np.int64),
        with_values=table["finite"].to_numpy(np.int64),
    )  # fmt: skip
    dataset = DatasetRef(engine.source, engine.identity(), rows=int(table["rows"].sum()))
    return cells, grouping, dataset


def group_cells(engine: Engine, spec: GroupingSpec) -> Grouping:
    """The groups of ``spec`` from one pass that counts the rows of each cell, and among them
    the rows with a number in every column of
    :attr:`~dpcore.foundations.grouping.GroupingSpec.needs_values`: the groups an analysis'
    own pass makes (:func:`aggregate_cells`), for a page that shows the groups before any
    analysis runs. A column that is not numeric leaves no row out, as in memory."""
    kinds = engine.column_kinds()
    numeric = [c for c in spec.needs_values if kinds.get(c) in NUMBER_KINDS]
    if not numeric:
        cells = engine.cell_counts(spec.by, dict(spec.edges))
        rows = cells["rows"].to_numpy(np.int64)
        return spec.build(cells[list(spec.by)], weights=rows, with_values=rows)
    largest = float(np.finfo(float).max)  # counted, not clipped: only finiteness matters
    inputs = tuple(Clipped(column, -largest, largest) for column in numeric)
    table = engine.cells(SumsQuery(spec.by, spec.edges, inputs, ())).table
    return spec.build(
        table[list(spec.by)], weights=table["rows"].to_numpy(np.int64),
        with_values=table["finite"].to_numpy(np.int64),
    )  # fmt: skip


def check_known(columns: Iterable[str], kinds: dict[str, str], role: str = "") -> None:
    """Refuse the first of ``columns`` the data (whose columns are ``kinds``' keys) lacks,
    listing the columns it has; ``role`` ("grouping", "person", ...) names its part."""
    for column in columns:
        if column not in kinds:
            raise EngineError(
                f"The {role + ' ' if role else ''}column `{column}` is not in the data; its "
                f"columns are: {', '.join(kinds)}."
            )


def check_person(unit: PrivacyUnit, kinds: dict[str, str], by: tuple[str, ...]) -> None:
    """Refuse a preview of the bound (:meth:`Engine.bound_preview`) without a person column,
    with one the data lacks, or with one that also groups the rows, naming the fix."""
    if unit.column is None:
        raise EngineError("A preview of the bound needs a person column.")
    check_known((unit.column,), kinds, "person")
    if unit.column in by:
        raise EngineError(
            f"The person column `{unit.column}` is also a grouping column. It names who owns "
            "each row, so it cannot split them into groups too: choose another column for one "
            "or the other."
        )


def check_query(query: SumsQuery, kinds: dict[str, str]) -> None:
    """Refuse unknown columns and columns of the wrong kind before any pass, naming the fix."""
    inputs = [(clipped.role, clipped.column) for clipped in query.inputs]
    for role, column in (
        *(("grouping", c) for c in query.by),
        *inputs,
        *((("person", query.unit.column),) if query.unit.column else ()),
    ):
        check_known((column,), kinds, role)
    edges = query.edges_of
    for column in query.by:
        if column in (*query.cell_columns, "missing_person"):
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
    for role, column in inputs:
        if kinds[column] not in NUMBER_KINDS:
            raise EngineError(
                f"The {role} column `{column}` holds {kinds[column]}; choose a column of "
                "numbers (or 0/1, yes/no)."
            )
    roles = [*query.by, *query.columns, *([query.unit.column] if query.unit.column else [])]
    if len(set(roles)) != len(roles):
        names = ", ".join(["grouping", *(role for role, _ in inputs)])
        raise EngineError(
            f"The {names} and person columns must be different columns, got {', '.join(roles)}."
        )


def check_codes(
    query: SumsQuery, kinds: dict[str, str], cells: pd.DataFrame, by: tuple[str, ...]
) -> None:
    """Refuse a numeric grouping column of ``by`` without edges that is not category codes: a
    decimal that is not a whole number (labelled :data:`NOT_WHOLE_LABEL` by the pass), or more
    distinct values than codes may have (:data:`~dpcore.foundations.grouping.MAX_CODE_VALUES`), as the
    grouping of a frame in memory does (:func:`~dpcore.foundations.grouping.is_category_codes`). The
    query's other cell columns (synthetic data's categories) are the caller's to check."""
    for column in by:
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
