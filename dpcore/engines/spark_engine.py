"""The Spark engine: the pass over a table in a Spark cluster (or ``local[*]`` on one machine).

Only the cells come back to Python. The DataFrame expressions compute what
:class:`~dpcore.engines.pandas_engine.PandasEngine` and the DuckDB SQL compute: the same labels,
clipping before any sum, the same contribution bound and the same kept rows, so that a release
is the same on every engine (to the rounding of Spark's sums of doubles, which depend on the
partitioning).

PySpark is imported when an engine is made, so the rest of dpcore never needs a JVM. Never
imports streamlit or plotly.
"""

from __future__ import annotations

import functools
import operator

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
    CHUNK_BITS,
    CHUNKS_PER_HASH,
    K_COLUMN,
    POISSON_ONE_STEPS,
    SCALE_COLUMN,
    SUBSET,
    BlbQuery,
)
from dpcore.engines.spark_identity import checked_declaration, find_identity
from dpcore.engines.spark_session import MASTER_EXAMPLES, spark_session
from dpcore.foundations.grouping import bucket_labels
from dpcore.foundations.labels import MISSING_LABEL
from dpcore.foundations.privacy_unit import GOLDEN_RATIO_FRACTION, BoundPreview, PrivacyUnit

__all__ = ["MASTER_EXAMPLES", "SparkEngine", "spark_session"]

KINDS = {
    "boolean": "yes / no",
    **dict.fromkeys(("tinyint", "smallint", "int", "bigint"), "whole number"),
    **dict.fromkeys(("float", "double"), "decimal number"),
}
"""Spark's simple type names in :func:`dpcore.foundations.validation.column_kind`'s words (decimal(p, s) is
a decimal number; everything else is text to us)."""


class SparkEngine(Engine):
    """Aggregates a Spark DataFrame: a table of the session's catalog (``spark:TABLE``) or
    Parquet or CSV files that Spark reads.

    Parameters
    ----------
    location
        ``"spark:TABLE"`` for a table, or a path Spark can read (a Parquet file or folder, or
        ``.csv`` files).
    session
        A running ``SparkSession``; default :func:`spark_session` at ``master``.
    master
        Where to start a session when none is given.
    declared_identity
        For a table whose catalog keeps no snapshot (a view, a table of plain files) or a
        remote path: the curator's name for the data as it is now (e.g. ``"survey 2024, extract
        of 1 March"``), its identity (:meth:`identity`). Refused for a path on this machine,
        which its files' bytes identify.
    """

    name = "spark"

    def __init__(
        self,
        location: str,
        *,
        session=None,
        master: str = "local[*]",
        declared_identity: str | None = None,
    ) -> None:
        self._location = str(location)
        self._declared = checked_declaration(self._location, declared_identity)
        self._identity: str | None = None
        self._spark = session if session is not None else spark_session(master)
        # The passes' jobs carry this group, so that :meth:`progress` follows them alone.
        self._jobs = f"strata-lab-{id(self):x}"
        self._check_table()
        try:
            self._frame = self._read(self._location)
            self._kinds = {
                name: KINDS.get(kind, "decimal number" if kind.startswith("decimal") else "text")
                for name, kind in self._frame.dtypes
            }
        except Exception as exc:
            raise EngineError(
                f"Spark could not read {self._location}: {_first_line(exc)}. Give spark:TABLE "
                "for a table of the session's catalog, or a Parquet or CSV path."
            ) from None

    def _check_table(self) -> None:
        """Name the tables there are when ``spark:TABLE`` names none (Spark's own message is a
        page of SQL analysis)."""
        if not self._location.startswith("spark:"):
            return
        table = self._location.removeprefix("spark:")
        if table and self._spark.catalog.tableExists(table):
            return
        tables = sorted(t.name for t in self._spark.catalog.listTables())
        found = (
            f"Its tables are: {', '.join(tables)}." if tables
            else "It has no tables: register one, or give the path of Parquet files instead."
        )  # fmt: skip
        raise EngineError(
            f"Spark at {self._spark.sparkContext.master} has no table “{table}”. {found}"
        )

    def _read(self, location: str):
        if location.startswith("spark:"):
            return self._spark.table(location.removeprefix("spark:"))
        if location.lower().endswith((".csv", ".csv.gz")):
            return self._spark.read.csv(location, header=True, inferSchema=True)
        return self._spark.read.parquet(location)

    @property
    def source(self) -> str:
        """The table (or path) and the master: ``people (Spark at spark://host:7077)``."""
        return f"{self._location.removeprefix('spark:')} (Spark at {self.master})"

    @property
    def master(self) -> str:
        """The master URL of the session this engine runs on."""
        return self._spark.sparkContext.master

    @property
    def expression(self) -> str:
        declared = "" if self._declared is None else f", declared_identity={self._declared!r}"
        return f"SparkEngine({self._location!r}, master={self.master!r}{declared})"

    def identity(self) -> str:
        """The data's identity (:func:`~dpcore.engines.spark_identity.find_identity`): a
        path's bytes, a table's snapshot, else the declared identity; empty without one."""
        if self._identity is None:
            self._identity = find_identity(self._spark, self._location, self._declared)
        return self._identity

    def column_kinds(self) -> dict[str, str]:
        return dict(self._kinds)

    def plan_key(self) -> str:
        """What Spark will read, as a key (not a digest of the rows, which takes a pass): the
        hash of its query plan, which covers a table's definition, and the names of its input
        files (Spark names the files it writes anew on every write). A table replaced by other
        rows, or files rewritten, give another key."""
        return f"{self._frame.semanticHash()}:{sorted(self._frame.inputFiles())}"

    def progress(self) -> float | None:
        """The share of tasks done in the stages of this engine's running pass, from 0 to 1;
        None when no pass runs. Safe to call from another thread while the pass runs."""
        tracker = self._spark.sparkContext.statusTracker()
        jobs = (tracker.getJobInfo(job) for job in tracker.getJobIdsForGroup(self._jobs))
        stages = [
            stage
            for job in jobs if job is not None and job.status == "RUNNING"
            for stage in map(tracker.getStageInfo, job.stageIds) if stage is not None
        ]  # fmt: skip
        tasks = sum(stage.numTasks for stage in stages)
        return sum(stage.numCompletedTasks for stage in stages) / tasks if tasks else None

    def row_count(self) -> int:
        """The number of rows (a curator's view: exact, not for publication)."""
        from pyspark.sql import functions as F

        return int(self._collect(self._frame.agg(F.count(F.lit(1)).alias("n")))["n"].iloc[0])

    def cell_counts(self, by: tuple[str, ...], edges: dict[str, tuple[float, ...]]) -> pd.DataFrame:
        """The rows of each cell of ``by``, as
        :meth:`DuckDBEngine.cell_counts <dpcore.engines.DuckDBEngine.cell_counts>` gives them."""
        from pyspark.sql import functions as F

        self._check_columns(by)
        names = [f"__cell{i}" for i in range(len(by))]
        labels = [self._label(c, edges.get(c)).alias(n) for c, n in zip(by, names, strict=True)]
        counts = self._frame.select(*labels).groupBy(*names).agg(F.count(F.lit(1)).alias("rows"))
        table = self._collect(counts).rename(columns=dict(zip(names, by, strict=True)))
        return table.astype({"rows": np.int64})

    def distinct_labels(self, column: str, at_most: int) -> list[str]:
        """Up to ``at_most + 1`` distinct labels of ``column`` without edges, missing aside, as
        :meth:`DuckDBEngine.distinct_labels <dpcore.engines.DuckDBEngine.distinct_labels>`."""
        from pyspark.sql import functions as F

        self._check_columns((column,))
        labels = self._frame.select(self._label(column, None).alias("label")).distinct()
        found = labels.where(F.col("label") != F.lit(MISSING_LABEL)).limit(int(at_most) + 1)
        return self._collect(found)["label"].tolist()

    def bound_preview(
        self, by: tuple[str, ...], edges: dict[str, tuple[float, ...]], unit: PrivacyUnit
    ) -> BoundPreview:
        """As :meth:`DuckDBEngine.bound_preview <dpcore.engines.DuckDBEngine.bound_preview>`."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        check_person(unit, self._kinds, by)
        self._check_columns(by)
        cells = [f"__cell{i}" for i in range(len(by))]
        labels = [self._label(c, edges.get(c)).alias(n) for c, n in zip(by, cells, strict=True)]
        base = self._frame.select(*labels, self._owner(unit).alias("__owner"))
        pairs = (
            base.where(F.col("__owner").isNotNull()).groupBy("__owner", *cells)
            .agg(F.count(F.lit(1)).alias("n"))
            .withColumn("capped", F.least(F.col("n"), F.lit(unit.max_rows)))
        )  # fmt: skip
        # Which of a person's cells tie does not change how many rows are kept.
        ranked = pairs.withColumn(
            "r", F.row_number().over(Window.partitionBy("__owner").orderBy(F.desc("capped")))
        )
        kept = F.when(F.col("r") <= unit.max_groups, F.col("capped")).otherwise(0)
        people = ranked.groupBy("__owner").agg(
            F.sum("n").alias("rows"), F.sum(kept).alias("kept"), F.count(F.lit(1)).alias("groups"),
            F.max("n").alias("most"),
        )  # fmt: skip
        totals = people.agg(
            F.coalesce(F.sum("rows"), F.lit(0)).alias("rows"),
            F.count(F.lit(1)).alias("people"),
            F.coalesce(F.sum(F.col("rows") - F.col("kept")), F.lit(0)).alias("dropped"),
            F.sum((F.col("rows") > F.col("kept")).cast("long")).alias("people_affected"),
            F.coalesce(F.max("most"), F.lit(0)).alias("most_rows_in_a_group"),
            F.coalesce(F.max("groups"), F.lit(0)).alias("most_groups"),
        )
        missing = base.agg(F.sum(F.col("__owner").isNull().cast("long")).alias("missing_person"))
        found = self._collect(totals.crossJoin(missing)).fillna(0).iloc[0]
        return BoundPreview(**{name: int(value) for name, value in found.items()})

    def _check_columns(self, columns: tuple[str, ...]) -> None:
        for column in columns:
            if column not in self._kinds:
                raise EngineError(
                    f"The column `{column}` is not in the data; its columns are: "
                    f"{', '.join(self._kinds)}."
                )

    def cells(self, query: SumsQuery) -> Cells:
        from pyspark.sql import functions as F

        cells = _cell_names(query)
        base = self._base(query)
        finite = _all_finite(query)
        binary = []
        if query.binary:
            odd = [~F.col(_value_name(query.columns.index(c))).isin(0.0, 1.0) for c in query.binary]
            not_binary = finite & functools.reduce(operator.or_, odd)
            binary = [F.sum(not_binary.cast("long")).alias("not_binary")]
        totals = base.groupBy(*cells).agg(
            F.count(F.lit(1)).alias("rows"),
            F.sum(finite.cast("long")).alias("finite"),
            F.sum(F.col("__owner").isNull().cast("long")).alias("missing_person"),
            *binary,
        )
        names = [name for name, _ in query.sums]
        sums = (
            self._kept(query, base).groupBy(*cells)
            .agg(F.count(F.lit(1)).alias("usable"),
                 *(F.sum(_product(query, factors)).alias(name) for name, factors in query.sums))
        )  # fmt: skip
        table = self._collect(totals.join(sums, on=cells, how="left"))
        table = table.fillna({"usable": 0, **dict.fromkeys(names, 0.0)})
        missing_person = int(table.pop("missing_person").sum()) if query.unit.column else 0
        table = table.rename(columns=dict(zip(cells, query.by, strict=True)))
        for column in ("rows", "finite", "usable", *(["not_binary"] if query.binary else [])):
            table[column] = table[column].astype(np.int64)
        return Cells(table, missing_person)

    def clipped_sums(
        self, query: SumsQuery, cell_groups: pd.DataFrame, low: np.ndarray, high: np.ndarray
    ) -> np.ndarray:
        from pyspark.sql import functions as F

        cells = _cell_names(query)
        group = cell_groups[GROUP].to_numpy()
        mapping = cell_groups.rename(columns=dict(zip(query.by, cells, strict=True))).assign(
            __low=low[group].astype(float), __high=high[group].astype(float)
        )
        # Plain Python rows: PySpark's pandas conversion does not support pandas 3 yet.
        rows = list(zip(*(mapping[c].tolist() for c in mapping.columns), strict=True))
        bounds = F.broadcast(self._spark.createDataFrame(rows, schema=list(mapping.columns)))
        clipped = F.least(F.greatest(_value_name(0), "__low"), "__high")
        sums = self._collect(
            self._kept(query, self._base(query)).join(bounds, on=cells)
            .groupBy(GROUP).agg(F.sum(clipped).alias("s"))
        )  # fmt: skip
        out = np.zeros(low.shape[0])
        out[sums[GROUP].to_numpy(np.int64)] = sums["s"].to_numpy(float)
        return out

    def blb_sums(self, query: BlbQuery, mapping: pd.DataFrame) -> pd.DataFrame:
        from pyspark.sql import functions as F

        rows = query.rows
        cells = _cell_names(rows)
        renamed = mapping.rename(columns=dict(zip(rows.by, cells, strict=True)))
        # Plain Python rows: PySpark's pandas conversion does not support pandas 3 yet.
        records = [
            (*(str(v) for v in row[:-3]), int(row[-3]), int(row[-2]), float(row[-1]))
            for row in renamed[[*cells, GROUP, K_COLUMN, SCALE_COLUMN]].itertuples(index=False)
        ]
        groups = F.broadcast(self._spark.createDataFrame(
            records, schema=[*cells, GROUP, K_COLUMN, SCALE_COLUMN]
        ))  # fmt: skip
        mapped = self._kept(rows, self._base(rows)).join(groups, on=cells)
        keyed = self._keyed(query, mapped)
        salt = F.lit(query.salt + ":")
        blocks = -(-(query.resamples + 1) // CHUNKS_PER_HASH)
        hashed = keyed.select(
            GROUP, K_COLUMN, SCALE_COLUMN, *(_value_name(i) for i in range(len(rows.inputs))),
            *(F.md5(F.concat(salt, "__key", F.lit(f":{b}"))).alias(f"__h{b}")
              for b in range(blocks)),
        )  # fmt: skip
        chunked = hashed.select(
            GROUP, K_COLUMN, SCALE_COLUMN, *(_value_name(i) for i in range(len(rows.inputs))),
            *(_chunk(c).alias(f"__a{c}") for c in range(query.resamples + 1)),
        )  # fmt: skip
        weights = [
            _poisson_weight(F.col(f"__a{j + 1}"), F.col(SCALE_COLUMN)).alias(f"__w{j}")
            for j in range(query.resamples)
        ]
        # ⌊a₀·k / 2³²⌋ in integers (a₀·k < 2⁶³: no overflow, no rounding).
        subset = F.shiftright(F.col("__a0") * F.col(K_COLUMN), CHUNK_BITS).alias(SUBSET)
        drawn = chunked.select(
            GROUP, subset, *(_value_name(i) for i in range(len(rows.inputs))), *weights
        )
        sums = []
        for name, j, factors in query.sums:
            product = F.col(f"__w{j}")
            for i in factors:
                product = product * F.col(_value_name(i))
            sums.append(F.sum(product).alias(name))
        table = self._collect(
            drawn.groupBy(GROUP, SUBSET).agg(F.count(F.lit(1)).alias("rows"), *sums)
        )
        return table.astype({GROUP: np.int64, SUBSET: np.int64, "rows": np.int64})

    def _keyed(self, query: BlbQuery, mapped):
        """Every kept row with its key (:mod:`dpcore.engines.blb`), as the DuckDB engine
        writes it."""
        from pyspark.sql import functions as F

        rows = query.rows
        values = [_value_name(i) for i in range(len(rows.inputs))]
        if rows.unit.column is not None:
            owner = _owner_key(F.col("__owner"), self._kinds[rows.unit.column])
            return mapped.withColumn("__key", F.concat(F.lit("p|"), owner))
        cells = _cell_names(rows)
        contents = mapped.groupBy(*cells, *values, GROUP, K_COLUMN, SCALE_COLUMN).agg(
            F.count(F.lit(1)).alias("__copies")
        )
        copies = contents.withColumn("__copy", F.explode(F.sequence(F.lit(1), "__copies")))
        parts = [F.col(c) for c in cells] + [_double_key(F.col(v)) for v in values]
        content = F.concat_ws("|", *parts)
        key = F.concat(F.lit("r|"), content, F.lit("#"), F.col("__copy").cast("string"))
        return copies.withColumn("__key", key)

    # ---- the rows -----------------------------------------------------------------------------

    def _base(self, query: SumsQuery):
        """Every row: its cell labels, its inputs as ``__v0``, ``__v1``, ... and its person as
        ``__owner``."""
        from pyspark.sql import functions as F

        columns = [
            self._label(column, query.edges_of.get(column)).alias(name)
            for column, name in zip(query.by, _cell_names(query), strict=True)
        ]
        owner = self._owner(query.unit)
        values = [
            F.col(_quoted(column)).cast("double").alias(_value_name(i))
            for i, column in enumerate(query.columns)
        ]
        return self._frame.select(
            *columns, *values, owner.alias("__owner"),
            *(F.col(_quoted(c)) for c in query.columns_read),
        )  # fmt: skip

    def _owner(self, unit: PrivacyUnit):
        """A row's person id (null without a person column, or for a missing or NaN id)."""
        from pyspark.sql import functions as F

        if unit.column is None:
            return F.lit(None)
        owner = F.col(_quoted(unit.column))
        if self._kinds[unit.column] == "decimal number":
            return F.when(F.isnan(owner), F.lit(None)).otherwise(owner)  # NaN: no id
        return owner

    def _kept(self, query: SumsQuery, base):
        """The rows with finite inputs that the contribution bound keeps
        (:mod:`dpcore.foundations.privacy_unit`)."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        finite = base.where(_all_finite(query))
        unit = query.unit
        if unit.column is None:
            return finite
        cells = _cell_names(query)
        scaled = F.col(_value_name(0)) * F.lit(GOLDEN_RATIO_FRACTION)
        # Spark's floor is a long (which overflows); beyond 2**52 every double is whole, so its
        # fractional part is 0, as numpy's x - floor(x) gives.
        fraction = F.when(F.abs(scaled) < 2.0**52, scaled - F.floor(scaled)).otherwise(0.0)
        # Then the other inputs: only rows equal in every input tie (either may be kept).
        values = [_value_name(i) for i in range(len(query.inputs))]
        in_cell = Window.partitionBy("__owner", *cells).orderBy(fraction, *values)
        capped = (
            finite.where(F.col("__owner").isNotNull())
            .withColumn("__row", F.row_number().over(in_cell))
            .where(F.col("__row") <= unit.max_rows)
        )  # fmt: skip
        by_person = Window.partitionBy("__owner").orderBy(F.desc("__n"), *cells)
        chosen = (
            capped.groupBy("__owner", *cells).agg(F.count(F.lit(1)).alias("__n"))
            .withColumn("__rank", F.row_number().over(by_person))
            .where(F.col("__rank") <= unit.max_groups).select("__owner", *cells)
        )  # fmt: skip
        return capped.join(chosen, on=["__owner", *cells])

    def _label(self, column: str, edges: tuple[float, ...] | None):
        """A row's label in one grouping column, as :func:`dpcore.foundations.grouping.cell_labels` gives it."""
        from pyspark.sql import functions as F

        col = F.col(_quoted(column))
        missing = F.lit(MISSING_LABEL)
        if edges is not None:
            x = col.cast("double")
            names = F.array(*(F.lit(label) for label in bucket_labels(edges)))
            bucket = sum((x >= F.lit(e)).cast("int") for e in edges)
            return F.when(x.isNull() | F.isnan(x), missing).otherwise(
                F.element_at(names, bucket + 1)
            )
        if self._kinds[column] == "yes / no":  # Python's str(True), not Spark's 'true'
            return F.when(col.isNull(), missing).when(col, "True").otherwise("False")
        if self._kinds[column] == "decimal number":  # codes written as 0.0/1.0 label as 0/1
            x = col.cast("double")
            whole = (x == F.floor(x)) & (F.abs(x) < F.lit(LARGEST_CODE))
            return (
                F.when(x.isNull() | F.isnan(x), missing)
                .when(whole, x.cast("long").cast("string"))
                .otherwise(F.lit(NOT_WHOLE_LABEL))
            )
        return F.coalesce(col.cast("string"), missing)

    def _collect(self, frame) -> pd.DataFrame:
        try:
            self._spark.sparkContext.setJobGroup(self._jobs, "a pass of Strata Lab")
            rows = frame.collect()
        except Exception as exc:
            raise EngineError(
                f"Spark failed reading {self._location}: {_first_line(exc)}"
            ) from None
        return pd.DataFrame([row.asDict() for row in rows], columns=frame.columns)


def _finite(x):
    from pyspark.sql import functions as F

    return x.isNotNull() & ~F.isnan(x) & (F.abs(x) != F.lit(float("inf")))


def _value_name(i: int) -> str:
    return f"__v{i}"


def _all_finite(query: SumsQuery):
    """True where every input of ``query`` is finite; a counting query, without inputs, uses
    every row."""
    from pyspark.sql import functions as F

    checks = [_finite(F.col(_value_name(i))) for i in range(len(query.inputs))]
    return functools.reduce(operator.and_, checks, F.lit(True))


def _product(query: SumsQuery, factors: tuple[str, ...]):
    """The product of the named inputs, each clipped to its bounds, left to right as the other
    engines multiply; no input: 1.0 (a count)."""
    from pyspark.sql import functions as F

    out = F.lit(1.0)
    for column in factors:
        i = query.columns.index(column)
        clipped = query.inputs[i]
        low, high = F.lit(float(clipped.low)), F.lit(float(clipped.high))
        out = out * F.least(F.greatest(F.col(_value_name(i)), low), high)
    return out


def _cell_names(query: SumsQuery) -> list[str]:
    return [f"__cell{i}" for i in range(len(query.by))]


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _chunk(c: int):
    """Chunk c of a row's hash as an integer (:mod:`dpcore.engines.blb`): the little-endian
    32-bit word of the md5 digest, from its hex digits, byte by byte in reverse."""
    from pyspark.sql import functions as F

    block, offset = divmod(c, CHUNKS_PER_HASH)
    digest = F.col(f"__h{block}")
    start = 1 + 8 * offset  # 8 hex digits per 4-byte word
    reversed_bytes = F.concat(*(F.substring(digest, start + 2 * b, 2) for b in (3, 2, 1, 0)))
    return F.conv(reversed_bytes, 16, 10).cast("long")


def _poisson_weight(chunk, scale):
    """1 + c·(P − 1), P ~ Poisson(1) by inversion of ``chunk``, as the DuckDB engine draws it."""
    from pyspark.sql import functions as F

    count = F.lit(float(len(POISSON_ONE_STEPS) - 1))
    for t in reversed(range(len(POISSON_ONE_STEPS))):
        count = F.when(chunk < F.lit(POISSON_ONE_STEPS[t]), F.lit(float(t - 1))).otherwise(count)
    return F.lit(1.0) + scale * count


def _double_key(x):
    """The exact text of a double (:func:`dpcore.engines.blb.double_keys`): integers only, so
    nothing depends on how Java prints a double."""
    from pyspark.sql import functions as F

    e0 = F.floor(F.log2(F.abs(x)))
    ratio = F.abs(x) / F.pow(F.lit(2.0), e0)
    e = F.when(x == 0, F.lit(0)).otherwise(
        e0.cast("int") + F.when(ratio >= 2, 1).when(ratio < 1, -1).otherwise(0)
    )
    whole = (x / F.pow(F.lit(2.0), e) * F.lit(4503599627370496.0)).cast("long")
    return F.concat(whole.cast("string"), F.lit("p"), e.cast("string"))


def _owner_key(owner, kind: str):
    """A person id as text, as the DuckDB engine writes it."""
    from pyspark.sql import functions as F

    if kind == "decimal number":
        return _double_key(owner.cast("double"))
    if kind == "yes / no":
        return F.when(owner, "True").otherwise("False")
    return owner.cast("string")
