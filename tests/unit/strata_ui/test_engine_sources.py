"""The engine sources' own rules, without starting Spark: each source's address opens it again,
a Spark table is told from a path, and an installation that keeps its data in one folder holds
Spark's paths to it too."""

from __future__ import annotations

import threading

import pytest

from dpcore.engines import EngineError
from strata_ui import spark
from strata_ui.files import DATA_ROOT_ENV, FilesSource
from strata_ui.spark import SparkSource
from strata_ui.url_state import _source_of


@pytest.mark.parametrize(
    "source",
    [
        FilesSource("/data/survey/*.parquet"),
        SparkSource("spark://head:7077", "survey"),
        SparkSource("local[*]", "/data/survey/"),
    ],
)
def test_a_sources_address_opens_it_again(source):
    address = source.address()
    assert address["data"] == source.kind
    assert _source_of(address) == source
    assert _source_of({"data": "upload", "file": "x.csv"}) is None


@pytest.mark.parametrize(
    ("typed", "location"),
    [
        ("survey", "spark:survey"),
        ("warehouse.survey", "spark:warehouse.survey"),
        ("/data/survey/", "/data/survey/"),
        ("survey.parquet", "survey.parquet"),
        ("hdfs://head/data/survey", "hdfs://head/data/survey"),
        ("C:\\data\\survey", "C:\\data\\survey"),
    ],
)
def test_a_table_is_told_from_a_path(typed, location):
    source = SparkSource("local[*]", typed)
    assert source.location == location
    files = f"in the files at {typed}, which Spark at local[*] reads"
    assert source.place == ("in Spark at local[*]" if location.startswith("spark:") else files)


def test_nothing_typed_is_refused_before_anything_is_opened():
    with pytest.raises(EngineError, match="Type the path of a CSV or Parquet file"):
        FilesSource("  ").fingerprint()
    with pytest.raises(EngineError, match="Type the name of a table in Spark"):
        SparkSource("local[*]", " ").fingerprint()


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("{elsewhere}/survey/", "is not under {root}"),
        ("file://{elsewhere}/survey/", "is not under {root}"),
        ("hdfs://head/data/survey", "is not a folder on this machine.*reads files from {root}"),
        ("{root}/../survey/", "is not under {root}"),
    ],
)
def test_with_a_data_folder_spark_reads_no_path_outside_it(tmp_path, monkeypatch, path, message):
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    monkeypatch.setenv(DATA_ROOT_ENV, str(root))
    source = SparkSource("local[*]", path.format(root=root, elsewhere=elsewhere))
    with pytest.raises(EngineError, match=message.format(root=root)):
        source.fingerprint()  # refused before Spark is asked for anything
    spark._check_path(f"{root}/survey/")  # under the folder: allowed
    monkeypatch.delenv(DATA_ROOT_ENV)
    spark._check_path("hdfs://head/data/survey")  # no folder set: any path Spark reads


def test_a_spark_that_does_not_start_in_time_is_given_up_on(monkeypatch):
    never = threading.Event()
    monkeypatch.setattr(spark, "_session", lambda master: never.wait(5))
    monkeypatch.setattr(spark, "START_TIMEOUT_S", 0.2)
    with pytest.raises(EngineError, match="Spark at spark://head:7077 did not start within 0.2 s"):
        spark.session("spark://head:7077")
    never.set()
