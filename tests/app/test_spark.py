"""Data in Spark, read where it lies: connect to a local Spark, choose a table registered in its
session (twice in a row), group, compare, plan and release the mean and the ratio without loading
the rows; a bad master, a missing table and missing Java say what is wrong and keep the data in
use; a refresh connects again. Every Spark test of the app is here: one local Spark per module (it takes
seconds to start)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.mean import MeanSettings
from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.analyses.ratio import RatioBounds
from dpcore.analyses.ratio.aggregate import aggregate_ratio
from dpcore.engines import SparkEngine, spark_session
from dpcore.foundations.grouping import GroupingSpec, cell_labels
from dpcore.foundations.ledger import Ledger
from dpcore.foundations.privacy_unit import PrivacyUnit, preview_bound
from strata_ui import spark
from strata_ui.spark import SparkSource
from tests.app import helpers
from tests.app.helpers import (
    charts,
    errors,
    go,
    mean_end_to_end,
    ratio_end_to_end,
    settings_of,
    start,
    state_of,
    text,
)
from tests.app.test_files_on_disk import mean_hours_by_region
from tests.app.test_files_ratio import scored

MASTER = "local[2]"  # the master of the engines' tests: one Spark per test process


def people(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "region": rng.choice(["North", "South", "East"], rows),
            "paid": rng.integers(0, 2, rows),
            "hours": rng.normal(38, 12, rows).round(1),
        }
    )


def scores() -> pd.DataFrame:
    """600 scored rows in households of 1 to 4 rows (a column `household`)."""
    frame = scored(600, 3).drop(columns="note")
    sizes = np.random.default_rng(3).integers(1, 5, 600)
    return frame.assign(household=np.repeat(np.arange(600), sizes)[:600])


def register(session, name: str, frame: pd.DataFrame) -> None:
    """``frame`` as a table of the session (plain rows: PySpark's pandas conversion does not
    support pandas 3 yet)."""
    rows = list(frame.itertuples(index=False, name=None))
    session.createDataFrame(rows, schema=list(frame.columns)).createOrReplaceTempView(name)


@pytest.fixture(scope="module")
def session():
    """The local Spark of this module, with three small tables in its session."""
    started = spark_session(MASTER)
    for name, rows, seed in (("people", 600, 0), ("people_b", 90, 1), ("people_c", 70, 2)):
        register(started, name, people(rows, seed))
    register(started, "scores", scores())
    return started


def connect(at, master: str, table: str, declared: str = "") -> None:
    """Type the master, the table and (``declared``) what the table is on the Data page and
    press Connect."""
    [master_box] = [t for t in at.text_input if t.key.startswith("data.spark_master")]
    [table_box] = [t for t in at.text_input if t.key.startswith("data.spark_table")]
    [identity_box] = [t for t in at.text_input if t.key.startswith("data.spark_identity")]
    master_box.input(master)
    identity_box.input(declared)
    table_box.input(table).run()
    at.button(key="data.spark_connect").click().run()
    assert not at.exception, [e.value for e in at.exception]


def connected(session, table: str = "people", declared: str = ""):
    """The Data page connected to ``table`` (a view: no snapshot, so what it is may be
    ``declared``), grouped by region, hours in [0, 80]."""
    at = start("data")
    connect(at, MASTER, table, declared)
    return mean_hours_by_region(at)


def test_connecting_shows_the_columns_kinds_and_the_curators_row_count(session):
    at = start("data")
    assert at.text_input(key="data.spark_master_0").value == spark.DEFAULT_MASTER
    connect(at, MASTER, "people")
    state = state_of(at)
    assert state.source == SparkSource(MASTER, "people") and state.uploaded is None
    rows = at.main.metric[0]
    assert rows.label == "Rows (curator's view)" and rows.value == "600"
    [columns] = [d.value for d in at.main.dataframe]
    assert dict(zip(columns["column"], columns["type"], strict=True)) == {
        "region": "text", "paid": "whole number", "hours": "decimal number",
    }  # fmt: skip
    assert f"they stay in Spark at {MASTER}" in text(at.main.caption)
    assert f"in Spark at {MASTER}" in text(at.sidebar.markdown)
    assert at.selectbox(key="mean.value").options == ["paid", "hours"]


def test_changing_the_table_twice_in_a_row_connects_each_and_resets_the_columns(session):
    at = connected(session)
    go(at, "data")
    connect(at, MASTER, "people_b")
    assert state_of(at).source == SparkSource(MASTER, "people_b")
    assert state_of(at).strata_columns == [] and at.main.metric[0].value == "90"
    connect(at, MASTER, "people_c")
    assert state_of(at).source == SparkSource(MASTER, "people_c")
    assert at.main.metric[0].value == "70"
    # The boxes show what is connected, and the same table again keeps the choices.
    assert at.text_input(key=f"data.spark_table_{state_of(at).upload_generation}").value == (
        "people_c"
    )
    at.selectbox(key="mean.value").set_value("hours").run()
    connect(at, MASTER, "people_c")
    assert settings_of(at, MeanSettings).value == "hours"


def test_the_strata_page_groups_from_sparks_counts(session):
    at = connected(session)
    sizes = people(600, 0)["region"].value_counts()
    assert at.main.metric[0].value == "3"
    assert at.main.metric[2].value == f"{int(sizes.min()):,} rows"
    at.main.multiselect[0].set_value(["region", "paid"]).run()
    assert "`paid`: whole numbers" in text(at.main.caption)
    assert at.main.metric[0].value == "6"


def test_a_release_on_a_view_nobody_declared_says_what_to_declare_and_spends_nothing(session):
    at = connected(session)
    assert "no identity yet: declare one before a release" in text(go(at, "release").main.markdown)
    helpers.commit(at)
    assert "“people (Spark at local[2])” has no identity" in errors(at)
    assert "declare what the data is" in errors(at)
    assert Ledger.open(None, "default").history() == []


def test_compare_and_release_run_on_spark_and_record_the_engine(session):
    at = connected(session, declared="people, seed 0")
    review, ledger, record = mean_end_to_end(at)
    assert (
        "**Data:** people (Spark at local[2]), 600 rows (identified by what the curator declared"
        in review
    )
    assert "**Read by:** the spark engine, where the data lies" in review
    script = record.payload["metadata"]["script"]
    assert "SparkEngine('spark:people', master='local[2]', declared_identity='people, seed 0')" in (
        script
    )
    # The release knows the table as the curator declared it, as the exported script will.
    expected = aggregate_mean(
        SparkEngine("spark:people", session=session, declared_identity="people, seed 0"),
        GroupingSpec(by=("region",)), "hours", (0.0, 80.0),
    ).dataset  # fmt: skip
    assert record.payload["metadata"]["plan"]["dataset"]["identity"] == expected.identity
    at.run()  # a rerun commits nothing more
    assert len(ledger.history()) == 1


def test_the_ratio_runs_every_page_on_spark_and_records_the_engine(session):
    at = start("data")
    connect(at, MASTER, "scores", "scores, seed 3")
    go(at, "strata").main.multiselect[0].set_value(["region"]).run()
    go(at, "estimator").radio(key="estimator.analysis").set_value("ratio").run()
    at.selectbox(key="ratio.s_column").set_value("score").run()
    at.selectbox(key="ratio.y_column").set_value("outcome").run()
    review, ledger, record = ratio_end_to_end(at)
    assert "**Data:** scores (Spark at local[2]), 600 rows" in review
    assert "**Read by:** the spark engine, where the data lies" in review
    metadata = record.payload["metadata"]
    assert "aggregate_ratio(SparkEngine('spark:scores', master='local[2]'" in metadata["script"]
    expected = aggregate_ratio(
        SparkEngine("spark:scores", session=session, declared_identity="scores, seed 3"),
        GroupingSpec(by=("region",)),
        s_column="score", y_column="outcome", bounds=RatioBounds(1.0, 1.0), binary_y=True,
    ).dataset  # fmt: skip
    assert metadata["plan"]["dataset"]["identity"] == expected.identity
    at.run()  # a rerun commits nothing more
    assert len(ledger.history()) == 1


def test_the_person_preview_is_counted_in_spark_as_in_memory(session):
    """The Data page's "What the bounds leave out" on a Spark table: Spark's one aggregation
    gives the counts of the same rows in memory, and follows M changed twice in a row."""
    at = start("data")
    connect(at, MASTER, "scores")
    go(at, "strata").main.multiselect[0].set_value(["region"]).run()
    go(at, "data")
    fingerprint = state_of(at).dataset_fingerprint
    at.selectbox(key=f"data.person_column.{fingerprint}").set_value("household").run()
    frame = scores()
    for m in (2, 1):
        at.number_input(key=f"data.max_rows_per_person.{fingerprint}").set_value(m).run()
        assert not at.main.error, errors(at)
        expected = preview_bound(
            cell_labels(frame, ("region",)), frame["household"], PrivacyUnit("household", 1, m)
        )
        shown = {metric.label: metric.value for metric in at.main.metric}
        assert shown["Rows left out"] == f"{expected.dropped:,}" and expected.dropped > 0
        assert shown["People affected"] == f"{expected.people_affected:,}"
    assert "curator's view" in text(at.main.markdown)


def test_a_refresh_connects_again_with_the_choices(session):
    at = connected(session)
    go(at, "compare")
    link = dict(at.query_params.items())
    assert (link["data"], link["master"], link["table"]) == ("spark", MASTER, "people")
    assert "identity" not in link  # nothing declared: nothing in the address
    again = start("compare", **link)
    state = state_of(again)
    assert state.source == SparkSource(MASTER, "people") and state.strata_columns == ["region"]
    assert settings_of(again, MeanSettings).value == "hours"
    assert not again.main.error, errors(again)
    assert len(charts(again)) == 3
    gone = start(**{**link, "table": "dropped"})
    assert "could not be opened again" in errors(gone) and "no table “dropped”" in errors(gone)
    assert state_of(gone).source is None


def test_a_missing_table_lists_the_tables_there_are(session):
    at = connected(session)
    go(at, "data")
    connect(at, MASTER, "peple")
    assert "Spark at local[2] has no table “peple”. Its tables are: " in errors(at)
    assert "people, people_b, people_c" in errors(at)
    assert "Still using “people (Spark at local[2])”" in errors(at)
    connect(at, MASTER, "")
    assert "Type the name of a table" in errors(at)
    assert state_of(at).source == SparkSource(MASTER, "people")
    assert state_of(at).strata_columns == ["region"]


def test_a_master_that_does_not_answer_is_named_within_seconds(session):
    at = start("data")
    connect(at, "spark://127.0.0.1:9", "people")  # the discard port: nothing listens
    assert "The Spark master at spark://127.0.0.1:9 does not answer" in errors(at)
    assert "Still using the demo data" in errors(at)
    connect(at, "sparc://host", "people")
    assert "is not a Spark master URL" in errors(at)
    connect(at, "local[1]", "people")  # Spark allows one session per program
    assert f"already connected to Spark at {MASTER}" in errors(at)
    assert state_of(at).source is None and at.main.metric[0].value == "32,561"


def test_without_java_the_page_says_how_to_install_it(session, monkeypatch):
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    at = start("data")
    connect(at, "local[1]", "people")  # a master not started yet
    assert "Spark needs Java 17" in errors(at) and "openjdk-17-jre-headless" in errors(at)
