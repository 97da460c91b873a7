"""The Spark engine: odd column names, its counts against DuckDB's, progress of its own pass,
the plan key of a table, and the masters and Java it refuses, with what to do."""

from __future__ import annotations

import threading

import pandas as pd
import pytest

from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.engines import DuckDBEngine, EngineError, PandasEngine, SparkEngine, spark_session
from dpcore.foundations.grouping import GroupingSpec
from tests.unit.dpcore.engines.helpers import BOUNDS, assert_same_statistics


def test_spark_reads_columns_with_dots_and_backticks(spark, tmp_path, frame):
    odd = frame.rename(columns={"region": "re.gion", "v": "v`alue"})
    odd.to_parquet(tmp_path / "odd.parquet")
    stats = aggregate_mean(
        SparkEngine(str(tmp_path / "odd.parquet"), session=spark), GroupingSpec(by=("re.gion",)),
        "v`alue", BOUNDS,
    ).stats  # fmt: skip
    expected = aggregate_mean(PandasEngine(odd), GroupingSpec(by=("re.gion",)), "v`alue", BOUNDS)
    assert_same_statistics(expected.stats, stats)


def test_spark_names_what_it_cannot_read(spark, tmp_path, frame):
    with pytest.raises(EngineError, match="Spark at local.2. has no table “no_such_table”"):
        SparkEngine("spark:no_such_table", session=spark)
    with pytest.raises(EngineError, match="Spark could not read .*missing.parquet"):
        SparkEngine(str(tmp_path / "missing.parquet"), session=spark)
    spark.range(3).createOrReplaceTempView("three")
    with pytest.raises(EngineError, match="no table “thre”. Its tables are: .*three"):
        SparkEngine("spark:thre", session=spark)


def test_spark_counts_rows_cells_and_labels_as_duckdb_does(spark, parquet_folder, frame):
    duck, spark_engine = (
        DuckDBEngine(parquet_folder),
        SparkEngine(str(parquet_folder), session=spark),
    )
    assert spark_engine.row_count() == duck.row_count() == len(frame)
    for by, edges in ((("region", "flag"), {}), (("age",), {"age": (30.0, 60.0)})):
        key = list(by)
        expected = duck.cell_counts(by, edges).sort_values(key, ignore_index=True)
        found = spark_engine.cell_counts(by, edges).sort_values(key, ignore_index=True)
        pd.testing.assert_frame_equal(found, expected, check_dtype=False)
    # A few whole numbers are codes, a decimal is not; at most one more label than asked for.
    assert sorted(spark_engine.distinct_labels("flag", 5)) == ["False", "True"]
    assert len(spark_engine.distinct_labels("person", 5)) == 6
    with pytest.raises(EngineError, match="The column `nope` is not in the data"):
        spark_engine.cell_counts(("nope",), {})


def test_spark_reports_the_progress_of_its_own_pass_only(spark):
    spark.range(0, 4_000_000, numPartitions=16).createOrReplaceTempView("many")
    engine, other = (SparkEngine("spark:many", session=spark) for _ in range(2))
    assert engine.progress() is None  # no pass runs
    seen = []
    counting = threading.Thread(target=engine.row_count)
    counting.start()
    while counting.is_alive():
        seen.append((engine.progress(), other.progress()))
    counting.join()
    shares = [mine for mine, _ in seen if mine is not None]
    assert shares and all(0.0 <= share <= 1.0 for share in shares)
    assert all(theirs is None for _, theirs in seen)  # another engine's pass is not its own
    assert engine.progress() is None
    assert "master='local[2]'" in engine.expression and engine.source == "many (Spark at local[2])"


def test_the_plan_key_follows_a_replaced_table(spark):
    spark.range(5).createOrReplaceTempView("changing")
    first = SparkEngine("spark:changing", session=spark).plan_key()
    assert SparkEngine("spark:changing", session=spark).plan_key() == first
    spark.range(6).createOrReplaceTempView("changing")
    assert SparkEngine("spark:changing", session=spark).plan_key() != first


@pytest.mark.parametrize(
    ("master", "message"),
    [
        ("sparc://host:7077", "is not a Spark master URL. Give local"),
        ("local[two]", "is not a Spark master URL"),
        ("spark://host", "is not a Spark master URL"),
        ("spark://127.0.0.1:9", "master at spark://127.0.0.1:9 does not answer"),
    ],
)
def test_a_bad_master_is_refused_before_spark_starts(master, message):
    with pytest.raises(EngineError, match=message):
        spark_session(master)


def test_without_java_spark_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(EngineError, match="needs Java 17.*no `java` on the PATH.*openjdk-17"):
        spark_session("local[1]")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(EngineError, match=f"JAVA_HOME is {tmp_path}, which holds no bin/java"):
        spark_session("local[1]")


def test_a_second_master_is_refused_while_one_runs(spark):
    assert spark_session("local[2]") is spark
    with pytest.raises(EngineError, match="already connected to Spark at local.2."):
        spark_session("local[1]")
