"""The SQLite privacy-budget ledger: round trip, exact accounting, atomic spends that refuse
overspend and write nothing, argument validation, idempotency keys and mixed budget kinds.
Concurrency and crashes are in test_ledger_concurrency.py, where the file lives and what it does
when it cannot be written in test_ledger_storage.py."""

from __future__ import annotations

import dataclasses
import json
import pathlib

import pytest

from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP
from dpcore.foundations.ledger import BudgetExceededError, Ledger, LedgerRecord
from dpcore.foundations.ledger import ledger as ledger_module


def test_spend_remaining_history_round_trip_and_reopen(db: pathlib.Path) -> None:
    ledger = Ledger(db, "survey", ZCDP(1.0))
    first = ledger.spend("mean", ZCDP(0.25), {"mean": 41.5, "groups": ["a", "b"]}, key="k1")
    second = ledger.spend("count", ZCDP(0.125), {"count": 7})

    assert isinstance(first, LedgerRecord)
    assert (first.ledger, first.label, first.cost, first.key) == (
        "survey",
        "mean",
        ZCDP(0.25),
        "k1",
    )
    assert first.payload == {"mean": 41.5, "groups": ["a", "b"]}
    assert second.key is None and second.id > first.id
    assert first.created_at.endswith("+00:00")  # ISO-8601 in UTC
    assert ledger.remaining() == {"rho": 0.625}
    assert ledger.spent() == {"rho": 0.375}
    assert ledger.history() == [first, second]
    assert ledger.get("k1") == first
    assert ledger.get("missing") is None

    reopened = Ledger(str(db), "survey", ZCDP(1.0))
    assert (reopened.name, reopened.total) == ("survey", ZCDP(1.0))
    assert reopened.history() == [first, second]
    assert reopened.remaining() == {"rho": 0.625}
    assert reopened.spent() == {"rho": 0.375}


def test_new_ledger_has_full_budget_and_empty_history(db: pathlib.Path) -> None:
    ledger = Ledger(db, "fresh", ApproxDP(2.0, 1e-6))
    assert ledger.remaining() == {"epsilon": 2.0, "delta": 1e-6}
    assert ledger.spent() == {"epsilon": 0.0, "delta": 0.0}
    assert ledger.history() == []


def test_creates_missing_parent_folders(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "a" / "b" / "ledger.sqlite"
    Ledger(path, "x", PureDP(1.0)).spend("s", PureDP(0.5), {})
    assert path.is_file()
    assert Ledger(path, "x", PureDP(1.0)).remaining() == {"epsilon": 0.5}


def test_relative_path_is_fixed_at_construction(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    ledger = Ledger("relative.sqlite", "x", PureDP(1.0))
    monkeypatch.chdir(tmp_path / "elsewhere")
    ledger.spend("s", PureDP(0.5), {})
    assert ledger.path == tmp_path / "relative.sqlite"
    assert not (tmp_path / "elsewhere" / "relative.sqlite").exists()
    assert Ledger(tmp_path / "relative.sqlite", "x", PureDP(1.0)).remaining() == {"epsilon": 0.5}


def test_several_ledgers_share_one_file_independently(db: pathlib.Path) -> None:
    a = Ledger(db, "a", PureDP(1.0))
    b = Ledger(db, "b", ZCDP(0.5))
    a.spend("s", PureDP(0.75), {}, key="same")
    # The same key in another ledger is a different spend.
    b.spend("s", ZCDP(0.25), {}, key="same")
    assert a.remaining() == {"epsilon": 0.25}
    assert b.remaining() == {"rho": 0.25}
    assert [r.ledger for r in a.history()] == ["a"]
    assert [r.ledger for r in b.history()] == ["b"]


# --- exact accounting and overspend ---------------------------------------------------------------


def test_ten_tenths_use_up_the_total_exactly_and_an_eleventh_is_refused(db: pathlib.Path) -> None:
    ledger = Ledger(db, "tenths", PureDP(1.0))
    for i in range(10):
        ledger.spend(f"release {i}", PureDP(0.1), {"i": i})
    assert ledger.remaining() == {"epsilon": 0.0}
    assert ledger.spent() == {"epsilon": 1.0}

    with pytest.raises(BudgetExceededError) as excinfo:
        ledger.spend("one too many", PureDP(0.1), {})
    message = str(excinfo.value)
    assert "Requested" in message and "Remaining" in message and "Difference" in message
    assert excinfo.value.requested == {"epsilon": 0.1}
    assert excinfo.value.remaining == {"epsilon": 0.0}
    assert len(ledger.history()) == 10


def test_overspend_writes_nothing(db: pathlib.Path) -> None:
    ledger = Ledger(db, "x", PureDP(1.0))
    ledger.spend("first", PureDP(0.75), {})
    before = ledger.history()
    with pytest.raises(BudgetExceededError, match="Remaining ε = 0.25"):
        ledger.spend("too much", PureDP(0.5), {"big": True}, key="big")
    assert ledger.history() == before
    assert ledger.get("big") is None
    assert ledger.remaining() == {"epsilon": 0.25}
    # The refused spend left no lock or half-state behind: an affordable one still goes through.
    ledger.spend("fits", PureDP(0.25), {})
    assert ledger.remaining() == {"epsilon": 0.0}


def test_error_after_insert_rolls_back(db: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = Ledger(db, "x", PureDP(1.0))
    insert = ledger_module.append

    def insert_then_fail(*args: object, **kwargs: object) -> LedgerRecord:
        insert(*args, **kwargs)
        raise KeyboardInterrupt  # e.g. Ctrl-C between the INSERT and the COMMIT

    monkeypatch.setattr(ledger_module, "append", insert_then_fail)
    with pytest.raises(KeyboardInterrupt):
        ledger.spend("interrupted", PureDP(0.5), {}, key="k")
    monkeypatch.undo()
    assert ledger.history() == []
    assert ledger.remaining() == {"epsilon": 1.0}
    assert ledger.spend("retry", PureDP(0.5), {}, key="k").label == "retry"


@pytest.mark.parametrize(
    "payload",
    [{"when": object()}, {"values": {1, 2}}, {"bytes": b"raw"}],
    ids=["object", "set", "bytes"],
)
def test_non_json_payload_raises_type_error_and_writes_nothing(
    db: pathlib.Path, payload: dict
) -> None:
    ledger = Ledger(db, "x", PureDP(1.0))
    with pytest.raises(TypeError, match="`payload` must be JSON-serialisable"):
        ledger.spend("s", PureDP(0.5), payload, key="k")
    assert ledger.history() == []
    assert ledger.remaining() == {"epsilon": 1.0}


def test_circular_payload_raises_type_error(db: pathlib.Path) -> None:
    payload: dict = {}
    payload["self"] = payload
    with pytest.raises(TypeError, match="`payload` must be JSON-serialisable"):
        Ledger(db, "x", PureDP(1.0)).spend("s", PureDP(0.5), payload)


def test_payload_is_returned_as_stored(db: pathlib.Path) -> None:
    ledger = Ledger(db, "x", PureDP(1.0))
    record = ledger.spend(
        "s", PureDP(0.5), {"n": 3, "x": 0.1, "tuple": (1, 2), "nan": float("nan")}
    )
    # JSON has lists, not tuples; the returned record matches what history() reads back.
    assert record.payload["tuple"] == [1, 2]
    assert record.payload["x"] == 0.1
    assert ledger.history()[0].payload["tuple"] == [1, 2]
    assert json.dumps(ledger.history()[0].payload) == json.dumps(record.payload)


# --- argument validation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"path": 3}, TypeError, "`path` must be a str, an os.PathLike or None, got int 3"),
        ({"name": 7}, TypeError, "`name` must be a str, got int 7"),
        ({"name": None}, TypeError, "`name` must be a str, got NoneType None"),
        ({"name": ""}, ValueError, "`name` must be a non-empty str, got ''"),
        ({"name": "  "}, ValueError, "`name` must be a non-empty str, got '  '"),
        ({"total": 1.0}, TypeError, "`total` must be a PureDP, ApproxDP or ZCDP budget, got float"),
    ],
)
def test_constructor_rejects_bad_arguments(
    db: pathlib.Path, kwargs: dict, error: type[Exception], fragment: str
) -> None:
    args = {"path": db, "name": "x", "total": PureDP(1.0)} | kwargs
    with pytest.raises(error) as excinfo:
        Ledger(**args)
    assert fragment in str(excinfo.value)


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"label": None}, TypeError, "`label` must be a str, got NoneType None"),
        ({"label": ""}, ValueError, "`label` must be a non-empty str, got ''"),
        ({"cost": 0.1}, TypeError, "`cost` must be a PureDP, ApproxDP or ZCDP budget, got float"),
        ({"payload": [1, 2]}, TypeError, "`payload` must be a dict, got list [1, 2]"),
        ({"payload": None}, TypeError, "`payload` must be a dict, got NoneType None"),
        ({"key": 5}, TypeError, "`key` must be a str, got int 5"),
        ({"key": ""}, ValueError, "`key` must be a non-empty str, got ''"),
    ],
)
def test_spend_rejects_bad_arguments_and_writes_nothing(
    db: pathlib.Path, kwargs: dict, error: type[Exception], fragment: str
) -> None:
    ledger = Ledger(db, "x", PureDP(1.0))
    args = {"label": "s", "cost": PureDP(0.5), "payload": {}, "key": "k"} | kwargs
    with pytest.raises(error) as excinfo:
        ledger.spend(**args)
    assert fragment in str(excinfo.value)
    assert ledger.history() == []


@pytest.mark.parametrize(
    ("key", "error", "fragment"),
    [
        (5, TypeError, "`key` must be a str, got int 5"),
        ("", ValueError, "`key` must be a non-empty"),
    ],
)
def test_get_rejects_bad_key(
    db: pathlib.Path, key: object, error: type[Exception], fragment: str
) -> None:
    with pytest.raises(error, match=fragment):
        Ledger(db, "x", PureDP(1.0)).get(key)  # type: ignore[arg-type]


def test_file_that_is_not_a_database_raises_value_error(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a database " * 200)
    with pytest.raises(ValueError, match="`path` must be an SQLite ledger file, got .*notes.txt"):
        Ledger(path, "x", PureDP(1.0))


# --- idempotency --------------------------------------------------------------------------------


def test_idempotency_key_spends_once(db: pathlib.Path) -> None:
    ledger = Ledger(db, "x", PureDP(1.0))
    first = ledger.spend("release", PureDP(0.25), {"attempt": 1}, key="release-42")
    again = ledger.spend("release", PureDP(0.25), {"attempt": 2}, key="release-42")
    assert again.id == first.id
    assert again == first  # the stored record, not the retried arguments
    assert ledger.remaining() == {"epsilon": 0.75}
    assert len(ledger.history()) == 1
    assert ledger.get("release-42") == first


def test_idempotent_retry_succeeds_even_when_budget_is_used_up(db: pathlib.Path) -> None:
    ledger = Ledger(db, "x", PureDP(1.0))
    first = ledger.spend("everything", PureDP(1.0), {}, key="all")
    assert ledger.spend("everything", PureDP(1.0), {}, key="all") == first
    assert ledger.remaining() == {"epsilon": 0.0}


# --- mixed budget kinds -------------------------------------------------------------------------


def test_pure_cost_against_zcdp_total_counts_eps_squared_over_two(db: pathlib.Path) -> None:
    ledger = Ledger(db, "x", ZCDP(1.0))
    record = ledger.spend("laplace", PureDP(0.5), {})
    assert record.cost == PureDP(0.5)  # stored as given, converted only for accounting
    assert ledger.remaining() == {"rho": 0.875}
    assert ledger.spent() == {"rho": 0.125}
    assert Ledger(db, "x", ZCDP(1.0)).history()[0].cost == PureDP(0.5)


def test_pure_cost_against_approx_total_counts_delta_zero(db: pathlib.Path) -> None:
    ledger = Ledger(db, "x", ApproxDP(1.0, 1e-6))
    ledger.spend("laplace", PureDP(0.5), {})
    assert ledger.remaining() == {"epsilon": 0.5, "delta": 1e-6}


def test_zcdp_cost_against_approx_total_raises_and_writes_nothing(db: pathlib.Path) -> None:
    ledger = Ledger(db, "x", ApproxDP(1.0, 1e-6))
    ledger.spend("ok", ApproxDP(0.5, 1e-7), {}, key="k")
    with pytest.raises(ValueError, match="cannot be expressed as 'approx'"):
        # Same key as an existing record: the kind error must not be masked by the key lookup.
        ledger.spend("gaussian", ZCDP(0.01), {}, key="k")
    assert [r.label for r in ledger.history()] == ["ok"]


def test_history_without_payloads_lists_the_same_spends_and_reads_no_results(db) -> None:
    ledger = Ledger(db, "survey", ZCDP(1.0))
    ledger.spend("big", ZCDP(0.25), {"rows": list(range(1000))}, key="k1")
    ledger.spend("small", ZCDP(0.125), {"count": 7})
    full, light = ledger.history(), ledger.history(payloads=False)
    assert [r.payload for r in light] == [{}, {}]
    assert [dataclasses.replace(r, payload={}) for r in full] == light
    assert ledger.get("k1").payload == {"rows": list(range(1000))}
