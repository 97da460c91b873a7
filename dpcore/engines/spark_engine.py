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

import os
import re
import shutil
import socket
from pathlib import Path

import numpy as np
import pandas as pd

from dpcore.engines.base import GROUP, Cells, Engine, EngineError, SumsQuery, check_person
from dpcore.engines.blb import K_COLUMN, BlbQuery, weigh
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
from dpcore.foundations.privacy_unit import BoundPreview, PrivacyUnit, cell_ranks

__all__ = ["MASTER_EXAMPLES", "SparkEngine", "spark_session"]

KINDS = {
    "boolean": "yes / no",
    **dict.fromkeys(("tinyint", "smallint", "int", "bigint"), "whole number"),
    **dict.fromkeys(("float", "double"), "decimal number"),
}
"""Spark's simple type names in :func:`dpcore.foundations.validation.column_kind`'s words (decimal(p, s) is
a decimal number; everything else is text to us)."""


MASTER_ANSWER_S = 5.0
"""How long a cluster's master may take to accept a connection before it counts as silent."""
_MASTER = re.compile(
    r"local(\[(\*|\d+)(,\d+)?\])?|spark://[^\s/:,]+:\d+(,[^\s/:,]+:\d+)*|yarn|k8s://\S+"
)
MASTER_EXAMPLES = (
    "local[*] (this machine, all its cores), local[2] (two cores) or spark://host:7077 (a "
    "cluster's master, as its web page shows it)"
)


def spark_session(master: str = "local[*]"):
    """A Spark session at ``master`` (``local[*]`` on this machine, or a cluster's URL such as
    ``spark://host:7077``), quiet and without its web UI.

    A cluster's master is first asked whether it accepts a connection, within
    :data:`MASTER_ANSWER_S` seconds: Spark itself retries a silent master for about a minute
    before it gives up. Spark runs one session per program: while one runs, the same master
    gets it again and another master is refused (``getOrCreate`` would silently return the
    running one).

    Raises
    ------
    EngineError
        A master URL of no known form, Java missing, another master already in use, a master
        that does not answer, or Spark failing to start; each message says how to fix it.
    """
    master = master.strip()
    if not _MASTER.fullmatch(master):
        raise EngineError(f"“{master}” is not a Spark master URL. Give {MASTER_EXAMPLES}.")
    _check_java()
    if master.startswith("spark://"):
        _check_master_answers(master)
    running = _running_master()
    if running is not None and running != master:
        raise EngineError(
            f"Strata Lab is already connected to Spark at {running} here, and Spark allows one "
            f"connection per program. Use {running}, or restart Strata Lab to connect to "
            f"{master}."
        )
    try:
        from pyspark.sql import SparkSession

        session = (
            SparkSession.builder.master(master).appName("strata-lab")
            .config("spark.ui.enabled", "false").config("spark.log.level", "ERROR")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", str(max(4, os.cpu_count() or 1)))
            .getOrCreate()
        )  # fmt: skip
    except Exception as exc:  # the JVM's errors come as many types; each ends here
        raise EngineError(
            f"Could not start Spark at {master}: {_first_line(exc)}. Check that the master "
            "answers (spark://host:7077) and that Java 17 is installed."
        ) from None
    session.sparkContext.setLogLevel("ERROR")
    return session


def _check_java() -> None:
    """Refuse to start Spark without Java, where PySpark looks for it (``JAVA_HOME``, else the
    ``PATH``): PySpark's own error is a failed launch of a gateway."""
    home = os.environ.get("JAVA_HOME", "").strip()
    found = os.access(Path(home, "bin", "java"), os.X_OK) if home else shutil.which("java")
    if not found:
        where = f"JAVA_HOME is {home}, which holds no bin/java" if home else "no `java` on the PATH"
        raise EngineError(
            f"Spark needs Java 17, and this machine has none ({where}). Install it (on Debian: "
            "apt-get install openjdk-17-jre-headless), or set JAVA_HOME to a Java 17 folder, "
            "then restart the program."
        )


def _running_master() -> str | None:
    """The master of the Spark session this program runs, if any."""
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    return None if context is None else context.master


def _check_master_answers(master: str) -> None:
    """Refuse a ``spark://`` master none of whose hosts accepts a connection in time."""
    addresses = master.removeprefix("spark://").split(",")
    for address in addresses:
        host, port = address.rsplit(":", 1)
        try:
            socket.create_connection((host, int(port)), timeout=MASTER_ANSWER_S).close()
            return
        except OSError:
            continue
    raise EngineError(
        f"The Spark master at {master} does not answer (no connection within "
        f"{MASTER_ANSWER_S:g} s). Check the host and port (the master's web page shows its "
        "URL, usually spark://host:7077), that the master is running, and that this machine "
        "may reach it."
    )


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
    """

    name = "spark"

    def __init__(self, location: str, *, session=None, master: str = "local[*]") -> None:
        self._location = str(location)
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
        return f"SparkEngine({self._location!r}, master={self.master!r})"

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

    def _check_columns(self, columns: tuple[str, ...]) -> None:
        for column in columns:
            if column not in self._kinds:
                raise EngineError(
                    f"The column `{column}` is not in the data; its columns are: "
                    f"{', '.join(self._kinds)}."
                )

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
        low, high = (int(table.pop(half).sum()) for half in ("__digest_low", "__digest_high"))
        return Cells(table, str((high << 32) + low), missing_person)

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
        joined = labels.merge(cell_groups, on=list(query.by), how="left")
        extra = joined.drop(columns=list(query.by)).fillna({GROUP: -1}).fillna(0)
        for column in (GROUP, K_COLUMN):
            if column in extra:
                extra[column] = extra[column].astype(np.int64)
        return pd.concat([keys.reset_index(drop=True), extra.astype(
            {c: float for c in extra.columns if c not in (GROUP, K_COLUMN)})], axis=1)  # fmt: skip

    def clipped_sums(
        self, query: SumsQuery, cell_groups: pd.DataFrame, low: np.ndarray, high: np.ndarray
    ) -> np.ndarray:
        from pyspark.sql import functions as F

        group = cell_groups[GROUP].to_numpy()
        bounds = cell_groups.assign(
            __low=low[group].astype(float), __high=high[group].astype(float)
        )
        table = self._cell_table(query, bounds)
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
        for rank, total in zip(counted[RANK], counted["s"], strict=True):
            if group_of_rank[int(rank)] >= 0:
                out[group_of_rank[int(rank)]] += float(total)
        return out

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
