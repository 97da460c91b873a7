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

import os
import tempfile
import threading

import duckdb
import numpy as np
import pandas as pd

from dpcore.engines.base import (
    GROUP,
    LARGEST_CODE,
    NOT_WHOLE_LABEL,
    Cells,
    Engine,
    EngineError,
    SumsQuery,
    check_person,
)
from dpcore.engines.blb import (
    CHUNK,
    CHUNKS_PER_HASH,
    K_COLUMN,
    POISSON_ONE_STEPS,
    SCALE_COLUMN,
    SUBSET,
    BlbQuery,
)
from dpcore.engines.duckdb_confine import confine
from dpcore.engines.parts import data_files, parts_identity
from dpcore.foundations.grouping import bucket_labels
from dpcore.foundations.labels import MISSING_LABEL
from dpcore.foundations.privacy_unit import GOLDEN_RATIO_FRACTION, BoundPreview, PrivacyUnit

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
            self._con.execute(f"SET memory_limit = {_literal(memory_limit)}")
            self._con.execute(f"SET temp_directory = {_literal(self._spill.name)}")
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
        self._paths = "[" + ", ".join(_literal(p) for p in self._files) + "]"
        self._format = file_format
        reader = "read_parquet" if file_format == "parquet" else "read_csv"
        self._from = f"{reader}({self._paths})"
        self._kinds = self._read_kinds()
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
        labels = ", ".join(
            f"{self._label_sql(column, edges.get(column))} AS {_cell_name(i)}"
            for i, column in enumerate(by)
        )
        table = self._fetch(f"SELECT {labels}, count(*) AS rows FROM {self._from} GROUP BY ALL")
        return table.rename(columns={_cell_name(i): c for i, c in enumerate(by)})

    def bound_preview(
        self, by: tuple[str, ...], edges: dict[str, tuple[float, ...]], unit: PrivacyUnit
    ) -> BoundPreview:
        check_person(unit, self._kinds, by)
        self._check_columns(by)
        cells = [_cell_name(i) for i in range(len(by))]
        labels = "".join(
            f"{self._label_sql(column, edges.get(column))} AS {cell}, "
            for column, cell in zip(by, cells, strict=True)
        )
        per_pair = ", ".join(["__owner", *cells])
        # Which of a person's cells tie does not change how many rows are kept: ordered by
        # their kept rows alone, without the labels, the window sorts less.
        found = self._fetch(f"""
            WITH base AS (SELECT {labels}{self._owner_sql(unit)} AS __owner FROM {self._from}),
            pairs AS (
                SELECT __owner, count(*) AS n, least(count(*), {unit.max_rows}) AS capped
                FROM base WHERE __owner IS NOT NULL GROUP BY {per_pair}),
            ranked AS (
                SELECT *, row_number() OVER (PARTITION BY __owner ORDER BY capped DESC) AS r
                FROM pairs),
            people AS (
                SELECT sum(n) AS rows, sum(capped) FILTER (WHERE r <= {unit.max_groups}) AS kept,
                       count(*) AS groups, max(n) AS most
                FROM ranked GROUP BY __owner)
            SELECT coalesce(sum(rows), 0) AS rows, count(*) AS people,
                   coalesce(sum(rows - kept), 0) AS dropped,
                   count(*) FILTER (WHERE rows > kept) AS people_affected,
                   coalesce(max(most), 0) AS most_rows_in_a_group,
                   coalesce(max(groups), 0) AS most_groups,
                   (SELECT count(*) FROM base WHERE __owner IS NULL) AS missing_person
            FROM people
        """)  # fmt: skip
        return BoundPreview(**{name: int(value) for name, value in found.iloc[0].items()})

    def distinct_labels(self, column: str, at_most: int) -> list[str]:
        """Up to ``at_most + 1`` distinct labels of ``column`` without edges, as :meth:`cells`
        labels it, missing aside: enough to tell category codes (at most ``at_most`` whole
        numbers, :func:`~dpcore.engines.base.check_codes`) from measurements without listing
        an id column's values."""
        self._check_columns((column,))
        label = self._label_sql(column, None)
        found = self._fetch(
            f"SELECT DISTINCT {label} AS label FROM {self._from} "
            f"WHERE {label} <> {_literal(MISSING_LABEL)} LIMIT {int(at_most) + 1}"
        )
        return found["label"].tolist()

    def _check_columns(self, columns: tuple[str, ...]) -> None:
        for column in columns:
            if column not in self._kinds:
                raise EngineError(
                    f"The column `{column}` is not in the data; its columns are: "
                    f"{', '.join(self._kinds)}."
                )

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
        cells = ", ".join(_cell_name(i) for i in range(len(query.by)))
        finite = _all_finite(query)
        binary = ""
        if query.binary:
            odd = " OR ".join(
                f"{_value_name(query.columns.index(c))} NOT IN (0, 1)" for c in query.binary
            )
            binary = f", count(*) FILTER (WHERE {finite} AND ({odd})) AS not_binary"
        names = [name for name, _ in query.sums]
        sums = "".join(
            f", fsum({_product(query, factors)}) AS {_ident(name)}" for name, factors in query.sums
        )
        found = "".join(f", coalesce(sums.{_ident(name)}, 0) AS {_ident(name)}" for name in names)
        sql = f"""
            WITH {self._kept_rows_sql(query)},
            totals AS (
                SELECT {cells}, count(*) AS rows, count(*) FILTER (WHERE {finite}) AS finite,
                       count(*) FILTER (WHERE __owner IS NULL) AS missing_person{binary}
                FROM base GROUP BY ALL),
            sums AS (SELECT {cells}, count(*) AS usable{sums} FROM kept GROUP BY ALL)
            SELECT totals.*, coalesce(sums.usable, 0) AS usable{found}
            FROM totals LEFT JOIN sums USING ({cells})
        """
        table = self._fetch(sql)
        missing_person = int(table.pop("missing_person").sum()) if query.unit.column else 0
        table = table.rename(columns={_cell_name(i): c for i, c in enumerate(query.by)})
        return Cells(table, missing_person)

    def clipped_sums(
        self, query: SumsQuery, cell_groups: pd.DataFrame, low: np.ndarray, high: np.ndarray
    ) -> np.ndarray:
        cells = ", ".join(_cell_name(i) for i in range(len(query.by)))
        mapping = cell_groups.rename(columns={c: _cell_name(i) for i, c in enumerate(query.by)})
        group = mapping[GROUP].to_numpy()
        mapping = mapping.assign(__low=low[group], __high=high[group])
        with self._lock:  # the registered mapping is the connection's until unregistered
            try:
                self._con.register("__strata_cell_groups", mapping)
                sums = self._fetch(f"""
                    WITH {self._kept_rows_sql(query)}
                    SELECT m.{GROUP} AS g, fsum(least(greatest(__v0, m.__low), m.__high)) AS s
                    FROM kept JOIN __strata_cell_groups AS m USING ({cells}) GROUP BY ALL
                """)  # fmt: skip
            finally:
                self._con.unregister("__strata_cell_groups")
        out = np.zeros(low.shape[0])
        out[sums["g"].to_numpy(np.int64)] = sums["s"].to_numpy(float)
        return out

    def blb_sums(self, query: BlbQuery, mapping: pd.DataFrame) -> pd.DataFrame:
        rows = query.rows
        cells = ", ".join(_cell_name(i) for i in range(len(rows.by)))
        values = ", ".join(_value_name(i) for i in range(len(rows.inputs)))
        renamed = mapping.rename(columns={c: _cell_name(i) for i, c in enumerate(rows.by)})
        # Each chunk parsed once (DuckDB does not share the 13 comparisons' common parse).
        chunks = ", ".join(f"{_chunk_sql(c)} AS __a{c}" for c in range(query.resamples + 1))
        with self._lock:  # the registered mapping is the connection's until unregistered
            try:
                self._con.register("__strata_blb_groups", renamed)
                return self._fetch(f"""
                    WITH {self._kept_rows_sql(rows)},
                    mapped AS (
                        SELECT kept.*, m.{GROUP}, m.{K_COLUMN}, m.{SCALE_COLUMN}
                        FROM kept JOIN __strata_blb_groups AS m USING ({cells})),
                    keyed AS ({self._keyed_sql(query, cells, values)}),
                    hashed AS (SELECT *, {self._hashes_sql(query)} FROM keyed),
                    chunked AS (
                        SELECT {GROUP}, {K_COLUMN}, {SCALE_COLUMN}, {values}, {chunks}
                        FROM hashed),
                    drawn AS (SELECT {GROUP}, {values}, {self._draws_sql(query)} FROM chunked)
                    SELECT {GROUP}, {SUBSET}, count(*) AS rows,
                           {", ".join(self._sums_sql(query))}
                    FROM drawn GROUP BY ALL
                """)  # fmt: skip
            finally:
                self._con.unregister("__strata_blb_groups")

    def _keyed_sql(self, query: BlbQuery, cells: str, values: str) -> str:
        """Every kept row with its key (:mod:`dpcore.engines.blb`): its person's, or its content
        and copy number."""
        rows = query.rows
        if rows.unit.column is not None:
            owner = _owner_key_sql("__owner", self._kinds[rows.unit.column])
            return f"SELECT *, 'p|' || {owner} AS __key FROM mapped"
        parts = [_cell_name(i) for i in range(len(rows.by))]
        parts += [_double_key_sql(_value_name(i)) for i in range(len(rows.inputs))]
        content = " || '|' || ".join(parts)
        return f"""
            SELECT *, 'r|' || {content} || '#' || CAST(__copy AS VARCHAR) AS __key FROM (
                SELECT *, unnest(range(1, __copies + 1)) AS __copy FROM (
                    SELECT {cells}, {values}, {GROUP}, {K_COLUMN}, {SCALE_COLUMN},
                           count(*) AS __copies
                    FROM mapped GROUP BY ALL))"""

    def _hashes_sql(self, query: BlbQuery) -> str:
        """Each md5 of the row's key (:mod:`dpcore.engines.blb`), as a 128-bit integer."""
        blocks = -(-(query.resamples + 1) // CHUNKS_PER_HASH)
        salt = _literal(query.salt + ":")
        return ", ".join(
            f"md5_number({salt} || __key || ':{block}') AS __n{block}" for block in range(blocks)
        )

    def _draws_sql(self, query: BlbQuery) -> str:
        subset = f"__a0 * {K_COLUMN} // {CHUNK} AS {SUBSET}"
        weights = [
            f"{_poisson_weight_sql(f'__a{j + 1}')} AS __w{j}" for j in range(query.resamples)
        ]
        return ", ".join([subset, *weights])

    def _sums_sql(self, query: BlbQuery) -> list[str]:
        return [
            f"fsum({' * '.join([f'__w{j}', *(_value_name(i) for i in factors)])}) AS {name}"
            for name, j, factors in query.sums
        ]

    # ---- SQL ----------------------------------------------------------------------------------

    def _kept_rows_sql(self, query: SumsQuery) -> str:
        """Two CTEs and more: ``base`` (every row: its cell labels, its inputs as ``__v0``,
        ``__v1``, ... (:func:`_value_name`), its
        person as ``__owner`` (NULL without a person column)) and ``kept``
        (the rows with finite inputs that the contribution bound keeps,
        :mod:`dpcore.foundations.privacy_unit`)."""
        labels = ", ".join(
            f"{self._label_sql(column, query.edges_of.get(column))} AS {_cell_name(i)}"
            for i, column in enumerate(query.by)
        )
        cells = ", ".join(_cell_name(i) for i in range(len(query.by)))
        values = "".join(
            f", CAST({_ident(column)} AS DOUBLE) AS {_value_name(i)}"
            for i, column in enumerate(query.columns)
        )
        unit = query.unit
        owner = self._owner_sql(unit)
        # Parquet is read again at little cost, where DuckDB would otherwise keep every row of
        # `base` (read twice: for the counts and for the kept rows) in memory: with a person
        # bound on 1e7 rows, a peak of 1.6 GB instead of 2.1 GB. A CSV is parsed only once.
        materialized = "NOT MATERIALIZED " if self._format == "parquet" else ""
        base = (
            f"base AS {materialized}(SELECT {labels}{values}, {owner} AS __owner FROM {self._from})"
        )
        if unit.column is None:
            return f"{base}, kept AS (SELECT * FROM base WHERE {_all_finite(query)})"
        phi = _number(GOLDEN_RATIO_FRACTION)
        names = ", ".join(_value_name(i) for i in range(len(query.inputs)))
        # Rows of a person in a cell in the order of frac(x·φ), x (the first input), then the
        # other inputs: only rows equal in every input tie, and either may then be kept.
        return f"""{base},
            owned AS (
                SELECT {cells}, {names}, __owner FROM base
                WHERE {_all_finite(query)} AND __owner IS NOT NULL),
            capped AS (
                SELECT * FROM (
                    SELECT *, row_number() OVER (
                        PARTITION BY __owner, {cells}
                        ORDER BY __v0 * {phi} - floor(__v0 * {phi}), {names}) AS __row
                    FROM owned)
                WHERE __row <= {unit.max_rows}),
            chosen AS (
                SELECT __owner, {cells}, row_number() OVER (
                    PARTITION BY __owner ORDER BY count(*) DESC, {cells}) AS __rank
                FROM capped GROUP BY __owner, {cells}),
            kept AS (
                SELECT capped.* FROM capped JOIN chosen USING (__owner, {cells})
                WHERE __rank <= {unit.max_groups})"""

    def _owner_sql(self, unit: PrivacyUnit) -> str:
        """A row's person id (NULL without a person column, or for a missing or NaN id)."""
        if unit.column is None:
            return "NULL"
        owner = _ident(unit.column)
        if self._kinds[unit.column] == "decimal number":
            return f"CASE WHEN {_is_nan(owner)} THEN NULL ELSE {owner} END"  # NaN: no id
        return owner

    def _label_sql(self, column: str, edges: tuple[float, ...] | None) -> str:
        """A row's label in one grouping column, as :func:`dpcore.foundations.grouping.cell_labels` gives it."""
        col = _ident(column)
        missing = _literal(MISSING_LABEL)
        if edges is not None:
            x = f"CAST({col} AS DOUBLE)"
            names = "[" + ", ".join(_literal(label) for label in bucket_labels(edges)) + "]"
            bucket = " + ".join(f"CAST({x} >= {_number(e)} AS INTEGER)" for e in edges)
            return (
                f"CASE WHEN {x} IS NULL OR {_is_nan(x)} THEN {missing} "
                f"ELSE {names}[1 + {bucket}] END"
            )
        if self._kinds[column] == "yes / no":  # Python's str(True), not SQL's 'true'
            return f"CASE WHEN {col} IS NULL THEN {missing} WHEN {col} THEN 'True' ELSE 'False' END"
        if self._kinds[column] == "decimal number":  # codes written as 0.0/1.0 label as 0/1
            x = f"CAST({col} AS DOUBLE)"
            return (
                f"CASE WHEN {x} IS NULL OR {_is_nan(x)} THEN {missing} "
                f"WHEN {x} = trunc({x}) AND abs({x}) < {LARGEST_CODE} "
                f"THEN CAST(CAST({x} AS BIGINT) AS VARCHAR) ELSE {_literal(NOT_WHOLE_LABEL)} END"
            )
        return f"coalesce(CAST({col} AS VARCHAR), {missing})"

    def _read_kinds(self) -> dict[str, str]:
        described = self._fetch(f"DESCRIBE SELECT * FROM {self._from}")
        return {
            str(name): "decimal number"
            if str(kind).startswith("DECIMAL")
            else KINDS.get(str(kind), "text")
            for name, kind in zip(described["column_name"], described["column_type"], strict=True)
        }

    def _fetch(self, sql: str) -> pd.DataFrame:
        try:
            with self._lock:
                return self._con.sql(sql).df()
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


def _is_nan(x: str) -> str:
    """SQL true where the double ``x`` is NaN. DuckDB's isnan() answers false for the NaN of a
    Parquet column whose statistics leave NaN out (seen with duckdb 2.0), so: neither finite nor
    infinite."""
    return f"(NOT isfinite({x}) AND {x} <> 'inf'::DOUBLE AND {x} <> '-inf'::DOUBLE)"


def _first_line(exc: duckdb.Error) -> str:
    """DuckDB's message without its class prefix ("Invalid Input Error: ..."), first line."""
    first = str(exc).strip().splitlines()[0]
    return first.split(": ", 1)[1] if ": " in first else first


def _value_name(i: int) -> str:
    """The name of the query's i-th input column as a double in the SQL."""
    return f"__v{i}"


def _all_finite(query: SumsQuery) -> str:
    """SQL true where every input of ``query`` is finite (NULL and NaN are not); a counting
    query, without inputs, uses every row."""
    checks = [f"isfinite({_value_name(i)})" for i in range(len(query.inputs))]
    return " AND ".join(checks) or "TRUE"


def _product(query: SumsQuery, factors: tuple[str, ...]) -> str:
    """The product of the named inputs, each clipped to its bounds, left to right as
    :class:`~dpcore.engines.pandas_engine.PandasEngine` multiplies; no input: 1.0 (a count)."""
    terms = ["1.0"]
    for column in factors:
        i = query.columns.index(column)
        clipped = query.inputs[i]
        terms.append(
            f"least(greatest({_value_name(i)}, {_number(clipped.low)}), {_number(clipped.high)})"
        )
    return " * ".join(terms)


def _cell_name(i: int) -> str:
    return f"__cell{i}"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _number(x: float) -> str:
    return repr(float(x))


def _double_key_sql(x: str) -> str:
    """The exact text of the double ``x`` (:func:`dpcore.engines.blb.double_keys`)."""
    e0 = f"floor(log2(abs({x})))"
    ratio = f"abs({x}) / pow(2.0, {e0})"
    e = (
        f"(CASE WHEN {x} = 0 THEN 0 ELSE CAST({e0} AS INTEGER) + "
        f"CASE WHEN {ratio} >= 2 THEN 1 WHEN {ratio} < 1 THEN -1 ELSE 0 END END)"
    )
    return (
        f"(CAST(CAST({x} / pow(2.0, {e}) * 4503599627370496.0 AS BIGINT) AS VARCHAR) || 'p' "
        f"|| CAST({e} AS VARCHAR))"
    )


def _owner_key_sql(owner: str, kind: str) -> str:
    """A person id as text, alike on every engine: decimals exactly, the rest as written."""
    if kind == "decimal number":
        return _double_key_sql(f"CAST({owner} AS DOUBLE)")
    if kind == "yes / no":
        return f"CASE WHEN {owner} THEN 'True' ELSE 'False' END"
    return f"CAST({owner} AS VARCHAR)"


def _chunk_sql(c: int) -> str:
    """Chunk c of a row's hash as an integer (:mod:`dpcore.engines.blb`): a little-endian
    32-bit word of the md5 digest, cut from DuckDB's 128-bit integer of it (``md5_number``
    reads the digest little-endian; parsing hex digits took 5 times longer)."""
    block, offset = divmod(c, CHUNKS_PER_HASH)
    return f"CAST((__n{block} >> {32 * offset}) & 4294967295 AS BIGINT)"


def _poisson_weight_sql(chunk: str) -> str:
    """1 + c·(P − 1), P ~ Poisson(1) by inversion of ``chunk`` (:mod:`dpcore.engines.blb`): a
    chain of comparisons, which DuckDB evaluates only for the rows not yet placed (about two
    per row)."""
    cases = " ".join(f"WHEN {chunk} < {step} THEN {t - 1}.0" for t, step in
                     enumerate(POISSON_ONE_STEPS))  # fmt: skip
    return f"1.0 + {SCALE_COLUMN} * (CASE {cases} ELSE {len(POISSON_ONE_STEPS) - 1}.0 END)"
