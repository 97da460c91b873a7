"""The SQLite privacy-budget ledger: exact accounting, atomic spends, concurrency and crashes."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import multiprocessing
import multiprocessing.synchronize
import os
import pathlib
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from multiprocessing.queues import Queue

import pytest

import dpcore
from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP
from dpcore.foundations.ledger import (
    LEDGER_PATH_ENV,
    BudgetExceededError,
    Ledger,
    LedgerRecord,
    LedgerUnavailableError,
    default_ledger_path,
)
from dpcore.foundations.ledger import ledger as ledger_module


@pytest.fixture
def db(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "ledger.sqlite"


def recorded_sum(ledger: Ledger, component: str) -> Decimal:
    """Exact sum of one component over the ledger's history (all costs share the total's kind)."""
    return sum(
        (Decimal(repr(r.cost.components()[component])) for r in ledger.history()), Decimal(0)
    )


# --- round trip ---------------------------------------------------------------------------------


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


# --- where the ledger lives ---------------------------------------------------------------------


def test_env_var_sets_default_path(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "from-env" / "ledger.sqlite"
    monkeypatch.setenv(LEDGER_PATH_ENV, str(target))
    assert LEDGER_PATH_ENV == "STRATA_LAB_LEDGER"
    assert default_ledger_path() == target

    ledger = Ledger(None, "env", PureDP(1.0))
    ledger.spend("s", PureDP(0.5), {})
    assert ledger.path == target
    assert target.is_file()
    assert Ledger(target, "env", PureDP(1.0)).remaining() == {"epsilon": 0.5}


def test_default_path_falls_back_to_xdg_then_home(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(LEDGER_PATH_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_ledger_path() == tmp_path / "xdg" / "strata-lab" / "ledger.sqlite"

    home_default = tmp_path / "home" / ".local" / "share" / "strata-lab" / "ledger.sqlite"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")  # ignored, per the XDG spec
    assert default_ledger_path() == home_default
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_ledger_path() == home_default
    monkeypatch.setenv(LEDGER_PATH_ENV, "")  # empty counts as unset
    assert default_ledger_path() == home_default


def test_reopening_with_a_different_total_raises(db: pathlib.Path) -> None:
    Ledger(db, "survey", PureDP(1.0))
    with pytest.raises(ValueError) as excinfo:
        Ledger(db, "survey", PureDP(1.0000001))  # shown in full, not rounded to "ε = 1"
    message = str(excinfo.value)
    assert "'survey'" in message
    assert "already has total PureDP(epsilon=1.0)" in message
    assert "`total` is PureDP(epsilon=1.0000001)" in message
    with pytest.raises(ValueError, match=r"`total` is ZCDP\(rho=1.0\)"):
        Ledger(db, "survey", ZCDP(1.0))
    assert Ledger(db, "survey", PureDP(1)).total == PureDP(1.0)


def test_newer_schema_version_is_refused(db: pathlib.Path) -> None:
    Ledger(db, "x", PureDP(1.0))
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA user_version = 4")
    with pytest.raises(ValueError, match="has ledger schema version 4; .* reads versions up to 3"):
        Ledger(db, "x", PureDP(1.0))


def test_an_existing_ledger_opens_and_reads_while_another_process_holds_the_write_lock(
    db: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening writes nothing once the ledger exists, so a spend in progress elsewhere (which
    holds SQLite's write lock) does not make every page of the app wait for it."""
    Ledger(db, "survey", PureDP(1.0)).spend("first", PureDP(0.25), {})
    monkeypatch.setattr("dpcore.foundations.ledger.store.BUSY_TIMEOUT_SECONDS", 0.2)
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")
        ledger = Ledger(db, "survey", PureDP(1.0))
        assert ledger.remaining() == {"epsilon": 0.75}
        assert [r.label for r in ledger.history()] == ["first"]
        with pytest.raises(LedgerUnavailableError, match="is busy: another release") as busy:
            ledger.spend("second", PureDP(0.25), {})
        assert busy.value.reason == "busy" and busy.value.path == db.absolute()
        writer.execute("ROLLBACK")
    assert [r.label for r in ledger.history()] == ["first"]  # nothing was spent
    assert ledger.spend("second", PureDP(0.25), {}).label == "second"


# --- concurrency --------------------------------------------------------------------------------


def test_threads_sharing_a_ledger_never_overspend(db: pathlib.Path) -> None:
    ledger = Ledger(db, "threads", PureDP(1.0))
    start = threading.Barrier(8)

    def worker(t: int) -> int:
        start.wait(timeout=10)
        ok = 0
        for i in range(20):
            try:
                ledger.spend(f"t{t}-{i}", PureDP(0.01), {"thread": t, "i": i})
                ok += 1
            except BudgetExceededError:
                pass
        return ok

    with ThreadPoolExecutor(max_workers=8) as pool:
        successes = sum(pool.map(worker, range(8)))  # re-raises any unexpected error

    assert successes == 100
    assert len(ledger.history()) == 100
    assert recorded_sum(ledger, "epsilon") == Decimal("1.00")
    assert ledger.remaining() == {"epsilon": 0.0}


def test_threads_racing_to_create_a_ledger_and_spend_one_key_record_it_once(
    tmp_path: pathlib.Path,
) -> None:
    # Several rounds on fresh files: the creation race (two connections switching a new file to
    # WAL at once) only bites now and then.
    for round_ in range(10):
        db = tmp_path / f"race-{round_}.sqlite"
        start = threading.Barrier(8)

        def worker(_: int, db: pathlib.Path = db, start: threading.Barrier = start) -> int:
            start.wait(timeout=10)
            ledger = Ledger(db, "race", PureDP(1.0))
            return ledger.spend("once", PureDP(0.5), {}, key="once").id

        with ThreadPoolExecutor(max_workers=8) as pool:
            ids = set(pool.map(worker, range(8)))  # re-raises any unexpected error

        assert len(ids) == 1
        assert Ledger(db, "race", PureDP(1.0)).remaining() == {"epsilon": 0.5}


def _hammer(
    path: str, start: multiprocessing.synchronize.Barrier, attempts: int, results: Queue
) -> None:
    """Process body for the multi-process test: spend as often as the budget allows."""
    try:
        start.wait(timeout=60)
        ledger = Ledger(path, "procs", ZCDP(1.0))
        ok = 0
        for i in range(attempts):
            try:
                ledger.spend(f"pid {os.getpid()} #{i}", ZCDP(0.03), {"i": i})
                ok += 1
            except BudgetExceededError:
                pass
        results.put(ok)
    except BaseException as exc:  # report instead of dying silently in the child
        results.put(repr(exc))


@pytest.mark.slow
def test_processes_never_overspend(db: pathlib.Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    n_procs, attempts = 3, 15
    start, results = ctx.Barrier(n_procs), ctx.Queue()
    procs = [
        ctx.Process(target=_hammer, args=(str(db), start, attempts, results))
        for _ in range(n_procs)
    ]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=10)

    assert all(isinstance(o, int) for o in outcomes), outcomes
    expected = int(Decimal("1.0") / Decimal(repr(0.03)))  # 33 spends fit; 45 are attempted
    assert sum(outcomes) == expected
    ledger = Ledger(db, "procs", ZCDP(1.0))
    assert len(ledger.history()) == expected
    assert recorded_sum(ledger, "rho") <= Decimal("1.0")
    assert ledger.remaining() == {"rho": float(Decimal("1.0") - expected * Decimal("0.03"))}


# The child hooks the ledger's append: after the INSERT, before COMMIT, it signals and hangs.
_KILL_CHILD = """
import pathlib, sys, time
from dpcore.foundations.accounting import PureDP
from dpcore.foundations.ledger import Ledger
from dpcore.foundations.ledger import ledger as ledger_module

path, marker = sys.argv[1], pathlib.Path(sys.argv[2])
insert = ledger_module.append

def insert_then_hang(*args, **kwargs):
    record = insert(*args, **kwargs)
    if record.entry == "release":
        marker.write_text(str(record.id))
        time.sleep(120)
    return record

ledger_module.append = insert_then_hang
Ledger(path, "kill", PureDP(1.0)).spend("doomed", PureDP(0.5), {"partial": True}, key="doomed")
"""


def _write_lock_is_free(path: pathlib.Path) -> bool:
    conn = sqlite3.connect(path, timeout=0.2, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError as exc:
        assert "locked" in str(exc)
        return False
    finally:
        conn.close()


@pytest.mark.slow
def test_sigkill_inside_a_spend_leaves_the_ledger_consistent(tmp_path: pathlib.Path) -> None:
    db, marker = tmp_path / "ledger.sqlite", tmp_path / "inside-transaction"
    ledger = Ledger(db, "kill", PureDP(1.0))
    committed = ledger.spend("committed", PureDP(0.25), {})

    env = dict(os.environ)
    repo_root = str(pathlib.Path(dpcore.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [repo_root, env.get("PYTHONPATH")]))
    child = subprocess.Popen(
        [sys.executable, "-c", _KILL_CHILD, str(db), str(marker)],
        env=env,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not marker.exists():
            if child.poll() is not None:
                pytest.fail(f"child exited early: {child.stderr.read().decode()}")
            assert time.monotonic() < deadline, "child never reached the hook"
            time.sleep(0.02)
        # The child really is mid-transaction: it holds the write lock and its row is invisible.
        assert not _write_lock_is_free(db)
        assert ledger.history() == [committed]
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL

    reopened = Ledger(db, "kill", PureDP(1.0))
    assert reopened.history() == [committed]
    assert reopened.get("doomed") is None
    assert reopened.remaining() == {"epsilon": 0.75}
    assert _write_lock_is_free(db)
    retry = reopened.spend("doomed", PureDP(0.5), {"partial": False}, key="doomed")
    assert reopened.history() == [committed, retry]
    assert reopened.remaining() == {"epsilon": 0.25}
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_history_without_payloads_lists_the_same_spends_and_reads_no_results(db) -> None:
    ledger = Ledger(db, "survey", ZCDP(1.0))
    ledger.spend("big", ZCDP(0.25), {"rows": list(range(1000))}, key="k1")
    ledger.spend("small", ZCDP(0.125), {"count": 7})
    full, light = ledger.history(), ledger.history(payloads=False)
    assert [r.payload for r in light] == [{}, {}]
    assert [dataclasses.replace(r, payload={}) for r in full] == light
    assert ledger.get("k1").payload == {"rows": list(range(1000))}


# --- a ledger that can be read but not written ------------------------------------------------


def _connect_with(monkeypatch: pytest.MonkeyPatch, uri_mode: str = "", pragma: str = "") -> None:
    """Make every ledger connection open the file as ``uri_mode`` (e.g. read-only, as for a file
    without write permission; tests run as root, which permissions do not stop) or run
    ``pragma`` first (e.g. a page limit, as on a full disk)."""
    real_connect = sqlite3.connect

    def connect(path, **options):
        if uri_mode:
            path, options["uri"] = f"file:{path}?mode={uri_mode}", True
        conn = real_connect(path, **options)
        if pragma:
            conn.execute(pragma)
        return conn

    monkeypatch.setattr("dpcore.foundations.ledger.store.sqlite3.connect", connect)


def test_a_read_only_ledger_shows_its_history_and_refuses_spends_with_a_message(
    db: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Ledger(db, "survey", PureDP(1.0)).spend("first", PureDP(0.25), {"mean": 1.0})
    _connect_with(monkeypatch, uri_mode="ro")
    ledger = Ledger(db, "survey", PureDP(1.0))
    assert [r.label for r in ledger.history()] == ["first"]
    assert ledger.remaining() == {"epsilon": 0.75}
    with pytest.raises(LedgerUnavailableError, match="read-only here: its history can be read"):
        ledger.spend("second", PureDP(0.25), {})
    with pytest.raises(LedgerUnavailableError, match="read-only") as refused:
        Ledger(db, "another", PureDP(1.0))  # creating a ledger writes
    assert refused.value.reason == "read-only"
    monkeypatch.undo()
    assert [r.label for r in Ledger(db, "survey", PureDP(1.0)).history()] == ["first"]


def test_a_ledger_on_a_full_disk_refuses_spends_and_keeps_what_it_had(
    db: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = Ledger(db, "survey", PureDP(1.0))
    ledger.spend("first", PureDP(0.25), {})
    pages = sqlite3.connect(db).execute("PRAGMA page_count").fetchone()[0]
    _connect_with(monkeypatch, pragma=f"PRAGMA max_page_count = {pages}")
    with pytest.raises(LedgerUnavailableError, match="is full: nothing could be recorded"):
        ledger.spend("second", PureDP(0.25), {"rows": "x" * 100_000})
    assert [r.label for r in ledger.history()] == ["first"]
    assert ledger.remaining() == {"epsilon": 0.75}
