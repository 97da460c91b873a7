"""Where the ledger lives and what its file allows: the default path (environment, XDG, home), a
different total or newer schema refused, reading while another process writes, a read-only file
and a full disk refusing spends with a message and keeping what they had."""

from __future__ import annotations

import contextlib
import pathlib
import sqlite3

import pytest

from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.ledger import (
    LEDGER_PATH_ENV,
    Ledger,
    LedgerUnavailableError,
    default_ledger_path,
)


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
