"""One ledger per dataset: the first release binds a ledger to its data, a release on other data
is refused unless confirmed, and ledger files of schema 1 are migrated with their past data."""

from __future__ import annotations

import contextlib
import json
import pathlib
import sqlite3

import pandas as pd
import pytest
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.ledger import Ledger, LedgerDataset, OtherDatasetError, list_ledgers

from dpcore.analyses.mean.estimators import LaplaceMean
from dpcore.analyses.mean.plan import MeanPlan
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.release import DatasetRef, PlanHeader, ReleaseRecord, plan_key, release

SURVEY = LedgerDataset("a" * 64, "survey.csv")
FOLLOW_UP = LedgerDataset("b" * 64, "follow-up.csv")
COST = ZCDP(0.25)


@pytest.fixture
def db(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "ledger.sqlite"


@pytest.fixture
def ledger(db: pathlib.Path) -> Ledger:
    return Ledger(db, "project", ZCDP(1.0))


def people(extra: int = 0) -> pd.DataFrame:
    """Forty people in two regions; ``extra`` more people make a neighbouring dataset."""
    rows = 40 + extra
    return pd.DataFrame(
        {"region": ["north", "south"] * (rows // 2) + ["north"] * (rows % 2),
         "hours": [float(10 + i % 50) for i in range(rows)]}
    )  # fmt: skip


def plan_on(frame: pd.DataFrame, name: str) -> MeanPlan:
    spec = GroupingSpec(by=("region",))
    header = PlanHeader(dataset=DatasetRef.of(frame, name), spec=spec, budget=PureDP(0.5))
    values = GroupValues.from_grouping(spec.build(frame), frame, "hours")
    return MeanPlan(values=values, header=header, estimator=LaplaceMean(bounds=(0.0, 100.0)))


# --- the ledger ---------------------------------------------------------------------------------


def test_the_first_spend_on_data_binds_the_ledger_and_later_ones_on_it_pass(ledger) -> None:
    assert ledger.datasets() == [] and ledger.covers(FOLLOW_UP)  # unbound: any data may come
    first = ledger.spend("mean", COST, {}, dataset=SURVEY)
    ledger.spend("median", COST, {}, dataset=SURVEY)
    [bound] = ledger.datasets()
    assert (bound.fingerprint, bound.name, bound.added_at) == (
        SURVEY.fingerprint, "survey.csv", first.created_at,
    )  # fmt: skip
    assert ledger.covers(SURVEY) and not ledger.covers(FOLLOW_UP)
    assert ledger.remaining() == {"rho": 0.5}


def test_a_spend_on_other_data_is_refused_naming_the_ledger_and_records_nothing(ledger) -> None:
    ledger.spend("mean", COST, {}, dataset=SURVEY)
    with pytest.raises(OtherDatasetError) as refused:
        ledger.check_dataset(FOLLOW_UP)
    with pytest.raises(OtherDatasetError) as refused_in_spend:
        ledger.spend("mean", COST, {}, key="k", dataset=FOLLOW_UP)
    message = str(refused_in_spend.value)
    assert message == str(refused.value)
    assert "ledger “project” is the budget of “survey.csv”" in message
    assert "this release is on “follow-up.csv”" in message
    assert "Nothing was spent" in message and "start a new ledger" in message
    assert message.endswith("pass `allow_other_dataset=True`.")
    assert refused.value.advice("tick the box").endswith("tick the box.")
    assert (refused.value.ledger, refused.value.dataset) == ("project", "follow-up.csv")
    assert len(ledger.history()) == 1 and ledger.get("k") is None
    assert ledger.remaining() == {"rho": 0.75}
    assert [d.name for d in ledger.datasets()] == ["survey.csv"]


def test_the_same_name_with_other_contents_is_called_so(ledger) -> None:
    ledger.spend("mean", COST, {}, dataset=SURVEY)
    changed = LedgerDataset("c" * 64, SURVEY.name)
    with pytest.raises(OtherDatasetError, match="on “survey.csv” with other contents"):
        ledger.spend("mean", COST, {}, dataset=changed)


def test_a_confirmed_spend_on_other_data_adds_it_to_the_ledger_for_good(ledger) -> None:
    ledger.spend("mean", COST, {}, dataset=SURVEY)
    ledger.spend("mean", COST, {}, dataset=FOLLOW_UP, allow_other_dataset=True)
    ledger.spend("median", COST, {}, dataset=FOLLOW_UP)  # covered now: no confirmation needed
    assert [d.name for d in ledger.datasets()] == ["survey.csv", "follow-up.csv"]
    assert ledger.remaining() == {"rho": 0.25}  # both data share the one budget
    with pytest.raises(OtherDatasetError, match="budget of “survey.csv” and “follow-up.csv”"):
        ledger.spend("mean", COST, {}, dataset=LedgerDataset("d" * 64, "third.csv"))


def test_a_retry_of_a_recorded_key_returns_it_before_any_dataset_check(ledger) -> None:
    first = ledger.spend("mean", COST, {}, key="k", dataset=SURVEY)
    assert ledger.spend("mean", COST, {}, key="k", dataset=FOLLOW_UP) == first
    assert len(ledger.history()) == 1


def test_spends_on_no_data_neither_bind_nor_are_refused(ledger) -> None:
    ledger.spend("by hand", COST, {})
    assert ledger.datasets() == []
    ledger.spend("mean", COST, {}, dataset=SURVEY)
    ledger.spend("by hand", COST, {})
    assert [d.name for d in ledger.datasets()] == ["survey.csv"]


def test_a_reset_unbinds_the_ledger_and_the_archive_keeps_its_data(db, ledger) -> None:
    ledger.spend("mean", COST, {}, dataset=SURVEY)
    archived = ledger.archive()
    assert ledger.datasets() == []
    ledger.spend("mean", COST, {}, dataset=FOLLOW_UP)  # the fresh ledger binds anew
    assert [d.name for d in Ledger.open(db, archived).datasets()] == ["survey.csv"]
    summaries = {s.name: s.dataset for s in list_ledgers(db)}
    assert summaries == {"project": "follow-up.csv", archived: "survey.csv"}


@pytest.mark.parametrize(
    ("dataset", "error"),
    [("survey.csv", TypeError), (LedgerDataset("", "x.csv"), ValueError)],
)
def test_a_malformed_dataset_is_refused_and_records_nothing(ledger, dataset, error) -> None:
    with pytest.raises(error, match="`dataset"):
        ledger.spend("mean", COST, {}, dataset=dataset)
    assert ledger.history() == []


# --- releases -----------------------------------------------------------------------------------


def test_a_release_on_a_second_dataset_is_refused_before_any_noise_then_allowed(ledger) -> None:
    survey, larger = plan_on(people(), "survey.csv"), plan_on(people(extra=1), "survey.csv")
    first = release(survey, ledger, noise="simulation", rng=1)
    with pytest.raises(OtherDatasetError, match="ledger “project”"):
        release(larger, ledger, noise="simulation", rng=2)
    assert ledger.history() == [first.ledger_record] and ledger.remaining() == {"rho": 0.875}

    confirmed = release(larger, ledger, noise="simulation", rng=2, allow_other_dataset=True)
    assert confirmed.spent and ledger.remaining() == {"rho": 0.75}
    assert len(ledger.datasets()) == 2
    # The exported script finds each recorded release under its plan's key.
    assert ledger.get(plan_key(survey, "simulation")) == first.ledger_record
    assert ReleaseRecord.from_ledger(ledger.get(plan_key(larger, "simulation"))).outputs == (
        confirmed.outputs
    )


def test_a_repeat_of_a_recorded_release_on_its_data_spends_nothing(ledger) -> None:
    plan = plan_on(people(), "survey.csv")
    release(plan, ledger, noise="simulation", rng=1)
    again = release(plan, ledger, noise="simulation", rng=1)
    assert not again.spent and len(ledger.history()) == 1


# --- migration of schema 1 ----------------------------------------------------------------------

SCHEMA_1 = (
    """CREATE TABLE ledgers (name TEXT PRIMARY KEY, kind TEXT NOT NULL, total TEXT NOT NULL,
        created_at TEXT NOT NULL)""",
    """CREATE TABLE spends (id INTEGER PRIMARY KEY, ledger TEXT NOT NULL REFERENCES ledgers
        (name), label TEXT NOT NULL, kind TEXT NOT NULL, cost TEXT NOT NULL, payload TEXT NOT
        NULL, key TEXT, created_at TEXT NOT NULL, UNIQUE (ledger, key))""",
)


def release_payload(dataset: LedgerDataset) -> str:
    plan = {"dataset": {"name": dataset.name, "fingerprint": dataset.fingerprint, "rows": 9}}
    return json.dumps({"outputs": [], "metadata": {"plan": plan}})


def write_schema_1(path: pathlib.Path) -> None:
    """A ledger file as version 1 wrote it: two ledgers, releases on two data in the first (it
    was not refused then), a spend by another tool, and none in the second."""
    spends = [
        ("old", release_payload(SURVEY), "2024-01-01T00:00:00+00:00"),
        ("old", json.dumps({"note": "by hand", "metadata": "not a release"}), "2024-01-02"),
        ("old", release_payload(FOLLOW_UP), "2024-01-03T00:00:00+00:00"),
        ("old", release_payload(SURVEY), "2024-01-04T00:00:00+00:00"),
    ]
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        for statement in SCHEMA_1:
            conn.execute(statement)
        for name in ("old", "empty"):
            conn.execute(
                "INSERT INTO ledgers VALUES (?, 'zcdp', '{\"rho\": 1.0}', '2024-01-01')", (name,)
            )
        conn.executemany(
            "INSERT INTO spends (ledger, label, kind, cost, payload, key, created_at) "
            "VALUES (?, 'x', 'zcdp', '{\"rho\": 0.1}', ?, NULL, ?)",
            spends,
        )
        conn.execute("PRAGMA user_version = 1")


def test_a_schema_1_file_is_listed_as_it_is_then_migrated_with_its_past_data(db) -> None:
    write_schema_1(db)
    assert [(s.name, s.releases, s.dataset) for s in list_ledgers(db)] == [
        ("empty", 0, None), ("old", 4, None),
    ]  # fmt: skip  # listing reads and never migrates

    old = Ledger.open(db, "old")
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    assert old.datasets() == [
        LedgerDataset(SURVEY.fingerprint, "survey.csv", "2024-01-01T00:00:00+00:00"),
        LedgerDataset(FOLLOW_UP.fingerprint, "follow-up.csv", "2024-01-03T00:00:00+00:00"),
    ]
    assert old.remaining() == {"rho": 0.6} and len(old.history()) == 4
    old.spend("mean", COST, {}, dataset=FOLLOW_UP)  # data it already covered
    with pytest.raises(OtherDatasetError, match="budget of “survey.csv” and “follow-up.csv”"):
        old.spend("mean", COST, {}, dataset=LedgerDataset("d" * 64, "third.csv"))
    assert Ledger.open(db, "empty").datasets() == []
    assert {s.name: s.dataset for s in list_ledgers(db)} == {"empty": None, "old": "survey.csv"}
