"""The ledger under concurrency and crashes: threads and processes never overspend, racing
creators record one key once, and a SIGKILL inside a spend leaves the ledger consistent."""

from __future__ import annotations

import contextlib
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
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.ledger import BudgetExceededError, Ledger


def recorded_sum(ledger: Ledger, component: str) -> Decimal:
    """Exact sum of one component over the ledger's history (all costs share the total's kind)."""
    return sum(
        (Decimal(repr(r.cost.components()[component])) for r in ledger.history()), Decimal(0)
    )


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
