"""The DuckDB engine: the pass over Parquet or CSV files on disk, however large.

DuckDB streams the files, aggregates in parallel and spills to a temporary folder beyond its
memory limit, so the rows never need to fit in memory: only the cells (one row per combination
of the grouping columns' labels) come back. The SQL computes exactly what
:class:`~dpcore.engines.pandas_engine.PandasEngine` computes: the same labels, the same clipping
before any sum, the same contribution bound, and sums by ``fsum`` (compensated summation, so
that the result hardly depends on the order in which threads meet the rows).

Pure Python over DuckDB; never imports streamlit or plotly.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from dpcore.engines.base import GROUP, Cells, Engine, EngineError, SumsQuery, check_person
from dpcore.engines.blb import K_COLUMN, BlbQuery, weigh
from dpcore.engines.cell_groups import add_by_rank, group_columns, with_group_bounds
from dpcore.engines.cell_keys import cell_labels_of_keys
from dpcore.engines.duckdb_confine import confine
from dpcore.engines.duckdb_sql import (
    RANK,
    all_finite,
    base_sql,
    blb_people_sql,
    blb_rows_sql,
    bound_sql,
    cell_name,
    cell_names,
    ident,
    key_sql,
    literal,
    preview_sql,
    product,
    row_cells_sql,
    totals_sql,
    value_name,
)
from dpcore.engines.parts import data_files, parts_identity
from dpcore.foundations.privacy_unit import BoundPreview, PrivacyUnit, cell_ranks

__all__ = ["DEFAULT_MEMORY_LIMIT", "DuckDBEngine", "data_files"]

DEFAULT_MEMORY_LIMIT = "2GB"
"""DuckDB's memory limit; beyond it, DuckDB spills to a temporary folder."""

KINDS = {
    "BOOLEAN": "yes / no",
    **dict.fromkeys(
        ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
         "UINTEGER", "UBIGINT", "UHUGEINT"),
        "whole number",
    ),
    **dict.fromkeys(("FLOAT", "DOUBLE", "REAL"), "decimal number"),
}  # fmt: skip
"""DuckDB types in :func:`dpcore.foundations.validation.column_kind`'s words (DECIMAL(p, s) is a decimal
number too; everything else is text to us)."""


class DuckDBEngine(Engine):
    """Aggregates Parquet or CSV files with an embedded DuckDB (module doc).

    Parameters
    ----------
    location
        A file, a glob, or a folder of files (:func:`data_files`).
    memory_limit
        DuckDB's memory limit (e.g. ``"2GB"``); larger work spills to a temporary folder.
    threads
        DuckDB's worker threads; None for DuckDB's default (one per core).
    """

    name = "duckdb"
    identity_beside_pass = True  # the files' bytes are read apart from DuckDB, under a lock

    def __init__(
        self,
        location: str | os.PathLike,
        *,
        memory_limit: str = DEFAULT_MEMORY_LIMIT,
        threads: int | None = None,
    ) -> None:
        self._location = os.fspath(location)
        files, file_format = data_files(location)
        # One connection answers one query at a time; the app shares an engine between its
        # sessions' threads.
        self._lock = threading.RLock()
        self._spill = tempfile.TemporaryDirectory(prefix="strata-duckdb-")
        self._con = duckdb.connect()
        try:
            self._con.execute(f"SET memory_limit = {literal(memory_limit)}")
            self._con.execute(f"SET temp_directory = {literal(self._spill.name)}")
            # Rows need no order (every sum is over a group), and the pass may print nothing:
            # a command's output is the release. Its progress is kept for :meth:`progress`.
            self._con.execute("SET preserve_insertion_order = false")
            self._con.execute("SET enable_progress_bar = true")
            self._con.execute("SET enable_progress_bar_print = false")
            if threads is not None:
                self._con.execute(f"SET threads = {int(threads)}")
            readable = {str(p) for p in files} | {str(p.resolve()) for p in files}
            confine(self._con, readable, self._spill.name)  # these files only, for good
        except duckdb.Error as exc:
            raise EngineError(
                f"DuckDB refused its settings (memory limit {memory_limit!r}, threads "
                f"{threads!r}): {_first_line(exc)}. Give a memory limit such as 2GB."
            ) from None
        self._files = [str(p) for p in files]
        self._paths = "[" + ", ".join(literal(p) for p in self._files) + "]"
        self._format = file_format
        reader = "read_parquet" if file_format == "parquet" else "read_csv"
        self._from = f"{reader}({self._paths})"
        self._kinds = self._read_kinds()
        if self._not_varchar_text:  # a date, ...: read as its text, the key of a text column
            casts = ", ".join(f"CAST({ident(c)} AS VARCHAR) AS {ident(c)}"
                              for c in self._not_varchar_text)  # fmt: skip
            self._from = f"(SELECT * REPLACE ({casts}) FROM {self._from})"
        # Each query's cells (keys, ranks, labels) from its pass, for the passes that follow.
        self._keys: dict[tuple, tuple[pa.Table, pd.DataFrame]] = {}
        self._identity: str | None = None
        self._identity_lock = threading.Lock()  # one read, whichever session asks first

    @property
    def source(self) -> str:
        return self._location

    @property
    def expression(self) -> str:
        return f"DuckDBEngine({self._location!r})"

    def identity(self) -> str:
        """The bytes of the files read (:func:`~dpcore.engines.parts.parts_identity`),
        hashed on first use: one read, shared by every later pass."""
        with self._identity_lock:
            if self._identity is None:
                self._identity = parts_identity(self._files)
            return self._identity

    def column_kinds(self) -> dict[str, str]:
        return dict(self._kinds)

    def close(self) -> None:
        self._con.close()
        self._spill.cleanup()

    def progress(self) -> float | None:
        """The share of the pass running now that DuckDB has done, from 0 to 1; None when no
        pass runs or DuckDB cannot tell yet. Safe to call from another thread while the pass
        runs (that is what it is for: a progress bar)."""
        done = self._con.query_progress()
        return None if done < 0 else min(done / 100, 1.0)

    def row_count(self) -> int:
        """The number of rows in every file together (a curator's view: exact, not for
        publication). Reads each Parquet file's footer first, so that an unreadable part, or a
        part whose columns differ from the first file's, is named before any pass.

        Raises
        ------
        EngineError
            A part that is not a complete Parquet or CSV file, or whose columns differ.
        """
        self._check_parts()
        return int(self._fetch(f"SELECT count(*) AS n FROM {self._from}")["n"].iloc[0])

    def cell_counts(self, by: tuple[str, ...], edges: dict[str, tuple[float, ...]]) -> pd.DataFrame:
        """The rows of each cell of ``by`` (labels as :meth:`cells` gives them, numeric columns
        bucketed at ``edges``): one column per grouping column and ``rows``. Grouping them with
        their row counts as weights (:meth:`~dpcore.foundations.grouping.GroupingSpec.build`) gives the
        groups the rows would, without the value column that :meth:`cells` also reads."""
        self._check_columns(by)
        keys = ", ".join(
            f"{key_sql(column, self._kinds[column], edges.get(column))} AS {cell_name(i)}"
            for i, column in enumerate(by)
        )
        found = self._fetch_arrow(f"SELECT {keys}, count(*) AS rows FROM {self._from} GROUP BY ALL")
        labels = self._labels(found, by, edges)
        return labels.assign(rows=found.column("rows").to_numpy())

    def bound_preview(
        self, by: tuple[str, ...], edges: dict[str, tuple[float, ...]], unit: PrivacyUnit
    ) -> BoundPreview:
        check_person(unit, self._kinds, by)
        self._check_columns(by)
        found = self._fetch(preview_sql(by, edges, unit, self._kinds, self._from))
        return BoundPreview(**{name: int(value) for name, value in found.iloc[0].items()})

    def distinct_labels(self, column: str, at_most: int) -> list[str]:
        """Up to ``at_most + 1`` distinct labels of ``column`` without edges, as :meth:`cells`
        labels it, missing aside: enough to tell category codes (at most ``at_most`` whole
        numbers, :func:`~dpcore.engines.base.check_codes`) from measurements without listing
        an id column's values."""
        self._check_columns((column,))
        key = key_sql(column, self._kinds[column], None)
        found = self._fetch_arrow(
            f"SELECT DISTINCT {key} AS {cell_name(0)} FROM {self._from} "
            f"WHERE {key} IS NOT NULL LIMIT {int(at_most) + 1}"
        )
        return self._labels(found, (column,), {})[column].tolist()

    def _check_parts(self) -> None:
        """Every Parquet part readable and with the first part's columns (module doc)."""
        if self._format != "parquet":
            return  # a CSV file's columns are checked as DuckDB reads it
        schema = self._fetch(
            f"SELECT file_name, name FROM parquet_schema({self._paths}) "
            "WHERE coalesce(num_children, 0) = 0"
        )
        columns = schema.groupby("file_name")["name"].agg(frozenset)
        first = columns[self._files[0]]
        for file_name in self._files:  # in the files' order (DuckDB's rows have none)
            names = columns[file_name]
            if names != first:
                missing, extra = sorted(first - names), sorted(names - first)
                differences = "; ".join(
                    part for part in (
                        f"it lacks {', '.join(missing)}" if missing else "",
                        f"it has {', '.join(extra)} besides" if extra else "",
                    ) if part
                )  # fmt: skip
                raise EngineError(
                    f"The part {file_name} does not have the same columns as "
                    f"{self._files[0]} ({differences}). Every part must have the same "
                    "columns: fix or leave out the odd part."
                )

    def cells(self, query: SumsQuery) -> Cells:
        if query.unit.column is None:
            found = self._fetch_arrow(row_cells_sql(query, self._kinds, self._from))
            keys, table = self._keyed_cells(query, found)
            return Cells(table)
        found = self._fetch_arrow(totals_sql(query, self._kinds, self._from))
        keys, table = self._keyed_cells(query, found)
        missing_person = int(table.pop("missing_person").sum())
        summands = [(name, product(query, factors)) for name, factors in query.sums]
        with self._registered(keys.select([*cell_names(query), RANK])) as name:
            bound = self._fetch(
                bound_sql(query, self._kinds, self._from, name, len(table), summands)
            ).set_index(RANK)
        ranks = keys.column(RANK).to_numpy()
        table["usable"] = bound["usable"].reindex(ranks, fill_value=0).to_numpy(np.int64)
        for sum_name, _ in summands:
            table[sum_name] = bound[sum_name].reindex(ranks, fill_value=0.0).to_numpy(float)
        return Cells(table, missing_person)

    def _keyed_cells(self, query: SumsQuery, found: pa.Table) -> tuple[pa.Table, pd.DataFrame]:
        """The cells of a pass (``found``: keys and counts): their keys with each cell's rank
        in label order (:data:`~dpcore.engines.duckdb_sql.RANK`), kept for the passes that
        follow (:meth:`clipped_sums`, :meth:`blb_sums`), and the table :meth:`cells` returns
        (labels, then counts and sums, missing sums as 0)."""
        labels = self._labels(found, query.by, query.edges_of)
        names = cell_names(query)
        ranks = cell_ranks(labels) if query.by else np.zeros(len(labels), dtype=np.int64)
        keys = found.select(names).append_column(RANK, pa.array(ranks, pa.int64()))
        self._keys[(query.by, query.edges)] = (keys, labels)
        stats = found.drop_columns(names).to_pandas()
        counts = [c for c in stats.columns if c in ("rows", "finite", "usable", "not_binary")]
        stats = stats.fillna(0.0).astype(dict.fromkeys(counts, np.int64))
        return keys, pd.concat([labels, stats], axis=1)

    def _labels(
        self, found: pa.Table, by: tuple[str, ...], edges: dict[str, tuple[float, ...]]
    ) -> pd.DataFrame:
        keys = {column: found.column(cell_name(i)).to_pylist() for i, column in enumerate(by)}
        if not by:
            return pd.DataFrame(index=range(found.num_rows))
        return cell_labels_of_keys(keys, by, self._kinds, edges)

    def _cell_table(self, query: SumsQuery, cell_groups: pd.DataFrame) -> pa.Table:
        """Every cell's keys and rank (from the pass of :meth:`cells`, run first if it was
        not) with its group (:data:`GROUP`, −1 for a cell in no group) and the columns of
        ``cell_groups`` (keyed by labels) beside."""
        if (query.by, query.edges) not in self._keys:
            self.cells(query)
        keys, labels = self._keys[(query.by, query.edges)]
        extra = group_columns(labels, cell_groups, query.by)
        for column in extra.columns:
            whole = column in (GROUP, K_COLUMN)
            values = extra[column].to_numpy(np.int64 if whole else float)
            keys = keys.append_column(column, pa.array(values))
        return keys

    def clipped_sums(
        self, query: SumsQuery, cell_groups: pd.DataFrame, low: np.ndarray, high: np.ndarray
    ) -> np.ndarray:
        table = self._cell_table(query, with_group_bounds(cell_groups, low, high))
        clip = f"least(greatest({value_name(0)}, __low), __high)"
        out = np.zeros(low.shape[0])
        with self._registered(table) as name:
            if query.unit.column is None:
                same_cell = " AND ".join(
                    f"d.{c} IS NOT DISTINCT FROM t.{c}" for c in cell_names(query)
                )
                sums = self._fetch(f"""
                    SELECT t.{GROUP} AS g, fsum({clip}) AS s
                    FROM ({base_sql(query, self._kinds, self._from)}) d JOIN {name} t
                    ON {same_cell} WHERE {all_finite(query)} AND t.{GROUP} >= 0 GROUP BY ALL
                """)  # fmt: skip
                out[sums["g"].to_numpy(np.int64)] = sums["s"].to_numpy(float)
                return out
            bound = self._fetch(
                bound_sql(query, self._kinds, self._from, name, table.num_rows, [("s", clip)])
            )
        group_of_rank = dict(zip(table.column(RANK).to_pylist(), table.column(GROUP).to_pylist(),
                                 strict=True))  # fmt: skip
        return add_by_rank(out, group_of_rank, bound[RANK], bound["s"])

    def blb_sums(self, query: BlbQuery, mapping: pd.DataFrame) -> pd.DataFrame:
        table = self._cell_table(query.rows, mapping)
        with self._registered(table) as name:
            if query.rows.unit.column is None:
                sql = blb_rows_sql(query, self._kinds, self._from, name)
            else:
                sql = blb_people_sql(query, self._kinds, self._from, name, table.num_rows)
            return weigh(self._fetch(sql), query, mapping)

    @contextlib.contextmanager
    def _registered(self, table: pa.Table):
        """``table`` registered on the connection under a name, for one query (the lock held:
        the name is the connection's until unregistered)."""
        with self._lock:
            self._con.register("__strata_cells", table)
            try:
                yield "__strata_cells"
            finally:
                self._con.unregister("__strata_cells")

    def _read_kinds(self) -> dict[str, str]:
        described = self._fetch(f"DESCRIBE SELECT * FROM {self._from}")
        types = dict(zip(described["column_name"], described["column_type"], strict=True))
        kinds = {
            str(name): "decimal number" if str(kind).startswith("DECIMAL")
            else KINDS.get(str(kind), "text")
            for name, kind in types.items()
        }  # fmt: skip
        self._not_varchar_text = [
            name for name, kind in kinds.items() if kind == "text" and types[name] != "VARCHAR"
        ]
        return kinds

    def _fetch(self, sql: str) -> pd.DataFrame:
        return self._fetch_arrow(sql).to_pandas()

    def _fetch_arrow(self, sql: str) -> pa.Table:
        try:
            with self._lock:
                return self._con.sql(sql).to_arrow_table()
        except duckdb.Error as exc:
            raise EngineError(_plain_error(exc, self._location)) from None


def _plain_error(exc: duckdb.Error, location: str) -> str:
    """DuckDB's message, first line only and without its class prefix, and what to do."""
    message = _first_line(exc)
    if "schema mismatch" in str(exc) or "could not be found in file" in str(exc):
        return (
            f"The files at {location} do not all have the same columns ({message}). Every "
            "part must have the same columns: fix or leave out the odd part."
        )
    if "Out of Memory" in str(exc):
        return f"DuckDB ran out of memory reading {location} ({message}); raise its memory limit."
    return f"Could not read {location}: {message}. Check that every file is a complete Parquet or CSV file."


def _first_line(exc: duckdb.Error) -> str:
    """DuckDB's message without its class prefix ("Invalid Input Error: ..."), first line."""
    first = str(exc).strip().splitlines()[0]
    return first.split(": ", 1)[1] if ": " in first else first
