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

import numpy as np
import pandas as pd

from dpcore.engines.base import GROUP, Cells, Engine, EngineError, SumsQuery, check_person
from dpcore.engines.blb import K_COLUMN, BlbQuery, weigh
from dpcore.engines.cell_groups import add_by_rank, group_columns, with_group_bounds
from dpcore.engines.cell_keys import cell_labels_of_keys
from dpcore.engines.spark_columns import (
    RANK,
    all_finite,
    base,
    blb_people,
    blb_rows,
    bound,
    cell_names,
    join_cells,
    key_column,
    owner_column,
    product,
    row_cells,
    totals,
    value_name,
)
from dpcore.engines.spark_identity import checked_declaration, find_identity
from dpcore.engines.spark_session import MASTER_EXAMPLES, spark_session
from dpcore.foundations.privacy_unit import BoundPreview, PrivacyUnit, cell_ranks

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
        self._keys: dict[tuple, tuple[pd.DataFrame, pd.DataFrame]] = {}
        self._key_types: dict[str, object] = {}
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
        names = cell_names(by)
        keys = [key_column(c, self._kinds[c], edges.get(c)).alias(n)
                for c, n in zip(by, names, strict=True)]  # fmt: skip
        found = self._collect(self._frame.select(*keys).groupBy(*names).agg(
            F.count(F.lit(1)).alias("rows")))  # fmt: skip
        labels = self._labels(found, by, edges)
        return labels.assign(rows=found["rows"].to_numpy(np.int64))

    def distinct_labels(self, column: str, at_most: int) -> list[str]:
        """Up to ``at_most + 1`` distinct labels of ``column`` without edges, missing aside, as
        :meth:`DuckDBEngine.distinct_labels <dpcore.engines.DuckDBEngine.distinct_labels>`."""
        from pyspark.sql import functions as F

        self._check_columns((column,))
        (name,) = cell_names((column,))
        keys = self._frame.select(key_column(column, self._kinds[column], None).alias(name))
        found = keys.where(F.col(name).isNotNull()).distinct().limit(int(at_most) + 1)
        return self._labels(self._collect(found), (column,), {})[column].tolist()

    def bound_preview(
        self, by: tuple[str, ...], edges: dict[str, tuple[float, ...]], unit: PrivacyUnit
    ) -> BoundPreview:
        """As :meth:`DuckDBEngine.bound_preview <dpcore.engines.DuckDBEngine.bound_preview>`."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        check_person(unit, self._kinds, by)
        self._check_columns(by)
        cells = cell_names(by)
        keys = [key_column(c, self._kinds[c], edges.get(c)).alias(n)
                for c, n in zip(by, cells, strict=True)]  # fmt: skip
        base = self._frame.select(*keys, owner_column(unit, self._kinds).alias("__owner"))
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
        totals_ = people.agg(
            F.coalesce(F.sum("rows"), F.lit(0)).alias("rows"),
            F.count(F.lit(1)).alias("people"),
            F.coalesce(F.sum(F.col("rows") - F.col("kept")), F.lit(0)).alias("dropped"),
            F.sum((F.col("rows") > F.col("kept")).cast("long")).alias("people_affected"),
            F.coalesce(F.max("most"), F.lit(0)).alias("most_rows_in_a_group"),
            F.coalesce(F.max("groups"), F.lit(0)).alias("most_groups"),
        )
        missing = base.agg(F.sum(F.col("__owner").isNull().cast("long")).alias("missing_person"))
        found = self._collect(totals_.crossJoin(missing)).fillna(0).iloc[0]
        return BoundPreview(**{name: int(value) for name, value in found.items()})

    def cells(self, query: SumsQuery) -> Cells:
        if query.unit.column is None:
            found = self._collect(row_cells(self._frame, query, self._kinds))
            keys, table = self._keyed_cells(query, found)
            missing_person = 0
        else:
            found = self._collect(totals(self._frame, query, self._kinds))
            keys, table = self._keyed_cells(query, found)
            missing_person = int(table.pop("missing_person").sum())
            summands = [(name, product(query, factors)) for name, factors in query.sums]
            counted = self._collect(bound(
                self._frame, query, self._kinds, self._table(keys), len(table), summands
            )).set_index(RANK)  # fmt: skip
            ranks = keys[RANK].to_numpy()
            table["usable"] = counted["usable"].reindex(ranks, fill_value=0).to_numpy(np.int64)
            for name, _ in summands:
                table[name] = counted[name].reindex(ranks, fill_value=0.0).to_numpy(float)
        return Cells(table, missing_person)

    def _keyed_cells(
        self, query: SumsQuery, found: pd.DataFrame
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The cells of a pass (``found``: keys and counts): their keys with each cell's rank in
        label order, kept for the passes that follow, and the table :meth:`cells` returns."""
        labels = self._labels(found, query.by, query.edges_of)
        names = cell_names(query.by)
        ranks = cell_ranks(labels) if query.by else np.zeros(len(labels), dtype=np.int64)
        keys = found[names].assign(**{RANK: ranks})
        self._keys[(query.by, query.edges)] = (keys, labels)
        stats = found.drop(columns=names).fillna(0)
        counts = [c for c in stats.columns if c in ("rows", "finite", "usable", "not_binary",
                                                    "missing_person")]  # fmt: skip
        stats = stats.astype({**dict.fromkeys(counts, np.int64)})
        return keys, pd.concat([labels, stats.reset_index(drop=True)], axis=1)

    def _labels(
        self, found: pd.DataFrame, by: tuple[str, ...], edges: dict[str, tuple[float, ...]]
    ) -> pd.DataFrame:
        if not by:
            return pd.DataFrame(index=range(len(found)))
        keys = {column: list(found[name]) for column, name in zip(by, cell_names(by), strict=True)}
        return cell_labels_of_keys(keys, by, self._kinds, edges)

    def _table(self, keys: pd.DataFrame):
        """A Spark DataFrame of the cells' ``keys`` (and columns beside them), of the types the
        pass's keys had."""
        from pyspark.sql.types import DoubleType, LongType, StructField, StructType

        fields = []
        for column in keys.columns:
            if column in self._key_types:
                fields.append(StructField(column, self._key_types[column], True))
            else:
                whole = keys[column].dtype.kind in "iu"
                fields.append(StructField(column, LongType() if whole else DoubleType(), True))
        # Plain Python rows: PySpark's pandas conversion does not support pandas 3 yet.
        rows = [tuple(_plain(v) for v in row) for row in keys.itertuples(index=False)]
        return self._spark.createDataFrame(rows, schema=StructType(fields))

    def _cell_table(self, query: SumsQuery, cell_groups: pd.DataFrame) -> pd.DataFrame:
        """Every cell's keys and rank with its group (−1 for a cell in no group) and the
        columns of ``cell_groups`` (keyed by labels) beside."""
        if (query.by, query.edges) not in self._keys:
            self.cells(query)
        keys, labels = self._keys[(query.by, query.edges)]
        extra = group_columns(labels, cell_groups, query.by)
        for column in (GROUP, K_COLUMN):
            if column in extra:
                extra[column] = extra[column].astype(np.int64)
        return pd.concat([keys.reset_index(drop=True), extra.astype(
            {c: float for c in extra.columns if c not in (GROUP, K_COLUMN)})], axis=1)  # fmt: skip

    def clipped_sums(
        self, query: SumsQuery, cell_groups: pd.DataFrame, low: np.ndarray, high: np.ndarray
    ) -> np.ndarray:
        from pyspark.sql import functions as F

        table = self._cell_table(query, with_group_bounds(cell_groups, low, high))
        clip = F.least(F.greatest(F.col(value_name(0)), F.col("__low")), F.col("__high"))
        out = np.zeros(low.shape[0])
        if query.unit.column is None:
            rows = base(self._frame, query, self._kinds).where(all_finite(query))
            joined = join_cells(rows, self._table(table), cell_names(query.by))
            sums = self._collect(joined.where(F.col(GROUP) >= 0).groupBy(GROUP).agg(
                F.sum(clip).alias("s")))  # fmt: skip
            out[sums[GROUP].to_numpy(np.int64)] = sums["s"].to_numpy(float)
            return out
        counted = self._collect(
            bound(self._frame, query, self._kinds, self._table(table), len(table), [("s", clip)])
        )
        group_of_rank = dict(zip(table[RANK], table[GROUP], strict=True))
        return add_by_rank(out, group_of_rank, counted[RANK], counted["s"])

    def blb_sums(self, query: BlbQuery, mapping: pd.DataFrame) -> pd.DataFrame:
        table = self._cell_table(query.rows, mapping)
        cells = self._table(table)
        if query.rows.unit.column is None:
            sums = blb_rows(self._frame, query, self._kinds, cells)
        else:
            sums = blb_people(self._frame, query, self._kinds, cells, len(table))
        return weigh(self._collect(sums), query, mapping)

    def _collect(self, frame) -> pd.DataFrame:
        try:
            self._spark.sparkContext.setJobGroup(self._jobs, "a pass of Strata Lab")
            for field in frame.schema.fields:  # the types of the cell keys, for _table
                if field.name.startswith("__cell"):
                    self._key_types[field.name] = field.dataType
            rows = frame.collect()
        except Exception as exc:
            raise EngineError(
                f"Spark failed reading {self._location}: {_first_line(exc)}"
            ) from None
        found = pd.DataFrame([tuple(row) for row in rows], columns=frame.columns, dtype=object)
        # Cell keys stay Python values (None for null: a key, not a missing number); the
        # counts and sums take their own types.
        values = [c for c in found.columns if not c.startswith("__cell")]
        return found.astype({c: found[c].infer_objects().dtype for c in values})


def _plain(value: object) -> object:
    """A numpy scalar as the Python value Spark's rows take."""
    return value.item() if isinstance(value, np.generic) else value


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
