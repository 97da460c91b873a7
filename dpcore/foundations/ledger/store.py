"""The ledger file: where it lives, how it is opened and locked, and its schema.

One SQLite file holds every ledger of an installation. Every operation opens its own
connection (connections must not cross threads, and short-lived ones hold no lock between
calls); a write takes SQLite's write lock before it reads anything (``BEGIN IMMEDIATE``), so a
check and the record it allows see the same history, in WAL mode with ``synchronous=FULL``.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal

from dpcore.foundations.accounting import Budget, budget_from_components
from dpcore.foundations.validation import shown

__all__ = [
    "LEDGER_PATH_ENV",
    "SCHEMA_VERSION",
    "LedgerUnavailableError",
    "connect",
    "decode_budget",
    "default_ledger_path",
    "encode_budget",
    "enable_wal",
    "non_empty_str",
    "schema_version",
    "transaction",
    "utc_now",
]

LEDGER_PATH_ENV = "STRATA_LAB_LEDGER"

SCHEMA_VERSION = 3
"""Version 2 bound each ledger to the data of its releases; version 3 made every event a sealed
record in one digest chain (starts, releases, raises, approvals), each naming who made it and,
for a release, the identity of its data (:mod:`dpcore.foundations.ledger.migrate`)."""

# Separate statements rather than one script: executescript() would COMMIT the open transaction.
SCHEMA = (
    """CREATE TABLE IF NOT EXISTS ledgers (
        name       TEXT PRIMARY KEY,
        kind       TEXT NOT NULL,
        total      TEXT NOT NULL,  -- JSON object of budget components: the total it started with
        created_at TEXT NOT NULL
    )""",
    # Every event, in the order it happened (id), each sealed into the chain (records.py).
    """CREATE TABLE IF NOT EXISTS records (
        id           INTEGER PRIMARY KEY,
        ledger       TEXT NOT NULL REFERENCES ledgers (name),
        entry        TEXT NOT NULL,  -- start, release, raise, join or cover
        label        TEXT NOT NULL,
        kind         TEXT NOT NULL,
        cost         TEXT NOT NULL,  -- JSON components, in the amount's own kind
        payload      TEXT NOT NULL,  -- JSON object
        key          TEXT,           -- a release's idempotency key; NULLs never collide
        actor        TEXT NOT NULL,
        reason       TEXT NOT NULL DEFAULT '',
        dataset      TEXT,           -- the data's identity: curator-side, never exported
        dataset_name TEXT NOT NULL DEFAULT '',
        cumulative   TEXT,           -- JSON: the people's loss after this release
        created_at   TEXT NOT NULL,
        sealed       TEXT NOT NULL,  -- the canonical content the digest covers
        digest       TEXT NOT NULL,
        UNIQUE (ledger, key)
    )""",
    "CREATE INDEX IF NOT EXISTS records_by_key ON records (key)",
    "CREATE INDEX IF NOT EXISTS records_by_dataset ON records (dataset)",
    # The chain's head: how many records there are and the last one's digest, so that records
    # deleted at the end of the history are noticed too.
    """CREATE TABLE IF NOT EXISTS chain (
        id      INTEGER PRIMARY KEY CHECK (id = 1),
        last_id INTEGER NOT NULL,
        records INTEGER NOT NULL,
        digest  TEXT NOT NULL
    )""",
)
# Long enough to queue behind any realistic spend; a spend holds the write lock for milliseconds.
BUSY_TIMEOUT_SECONDS = 30.0
# Reads (every page shows the balance) wait briefly: in WAL mode they are blocked only by a
# writer recovering or checkpointing the file, and a page should say so rather than hang.
READ_TIMEOUT_SECONDS = 2.0


class LedgerUnavailableError(ValueError):
    """The ledger file cannot be used now, and nothing was spent: ``reason`` is ``"busy"``
    (another process holds it), ``"read-only"`` (its history can still be read), ``"full"``
    (the disk is) or ``"unavailable"`` (it cannot be opened). The message says what to do."""

    def __init__(self, message: str, *, path: str | os.PathLike, reason: str) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason


# What to tell the user for each reason a ledger file cannot be used.
_UNAVAILABLE_MESSAGES = {
    "busy": (
        "The budget ledger ({path}) is busy: another release is being recorded in it, or another "
        "program holds the file. Nothing was spent. Wait a moment and try again."
    ),
    "read-only": (
        "The budget ledger ({path}) is read-only here: its history can be read, but no release "
        "can be recorded in it, and nothing was spent. Ask for write access to the file, or set "
        "{variable} to a ledger file you can write."
    ),
    "full": (
        "The disk that holds the budget ledger ({path}) is full: nothing could be recorded, and "
        "nothing was spent. Free some space and try again."
    ),
    "unavailable": (
        "The budget ledger ({path}) cannot be used ({error}). Nothing was spent. Check the file "
        "and its folder, or set {variable} to another ledger file."
    ),
}


def unavailable(path: pathlib.Path, exc: sqlite3.OperationalError) -> LedgerUnavailableError:
    """The error to raise for SQLite's ``exc`` on the ledger file at ``path``."""
    code = exc.sqlite_errorname or ""
    if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        reason = "busy"
    elif code.startswith("SQLITE_READONLY"):
        reason = "read-only"
    elif code == "SQLITE_FULL":
        reason = "full"
    else:
        reason = "unavailable"
    message = _UNAVAILABLE_MESSAGES[reason].format(path=path, error=exc, variable=LEDGER_PATH_ENV)
    return LedgerUnavailableError(message, path=path, reason=reason)


def default_ledger_path() -> pathlib.Path:
    """Where the ledger lives when no path is given.

    Returns
    -------
    pathlib.Path
        ``$STRATA_LAB_LEDGER`` if set and not empty; else
        ``$XDG_DATA_HOME/strata-lab/ledger.sqlite`` if ``XDG_DATA_HOME`` is absolute (the XDG Base
        Directory spec says to ignore relative values); else
        ``~/.local/share/strata-lab/ledger.sqlite``.
    """
    explicit = os.environ.get(LEDGER_PATH_ENV)
    if explicit:
        return pathlib.Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    data_home = (
        pathlib.Path(xdg) if xdg and os.path.isabs(xdg) else pathlib.Path.home() / ".local/share"
    )
    return data_home / "strata-lab" / "ledger.sqlite"


@contextlib.contextmanager
def connect(path: pathlib.Path, *, writing: bool = False) -> Iterator[sqlite3.Connection]:
    """A fresh connection to the ledger file; SQLite's operational errors become
    :class:`LedgerUnavailableError`. ``isolation_level=None`` leaves transactions to explicit
    BEGIN/COMMIT (:func:`transaction`); the timeout makes writers queue, not fail."""
    timeout = BUSY_TIMEOUT_SECONDS if writing else READ_TIMEOUT_SECONDS
    try:
        conn = sqlite3.connect(path, timeout=timeout, isolation_level=None)
    except sqlite3.OperationalError as exc:
        raise unavailable(path, exc) from exc
    try:
        conn.execute("PRAGMA synchronous=FULL")  # a committed spend survives power loss
        conn.execute("PRAGMA foreign_keys=ON")
        yield conn
    except sqlite3.OperationalError as exc:
        raise unavailable(path, exc) from exc
    finally:
        conn.close()


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """IMMEDIATE takes the write lock before anything is read, so a check and the record it
    allows see the same history, and competing writers wait on the busy timeout. A deferred
    transaction would instead fail with SQLITE_BUSY when it tried to upgrade to writing."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.rollback()
        raise
    conn.execute("COMMIT")


def enable_wal(conn: sqlite3.Connection) -> None:
    """WAL lets readers proceed while a spend holds the write lock. The mode is stored in the
    file and can only be changed outside a transaction. Two connections switching a new file at
    once can deadlock on the upgrade from shared to exclusive lock; SQLite then reports
    SQLITE_BUSY at once instead of calling the busy handler, so the wait is done here."""
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorname != "SQLITE_BUSY" or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def schema_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def encode_budget(budget: Budget) -> str:
    # json writes floats with repr, the shortest string that reads back as the same float.
    return json.dumps(budget.components())


def decode_budget(kind: str, components: str) -> Budget:
    return budget_from_components(kind, json.loads(components, parse_float=Decimal))


def utc_now() -> str:
    return datetime.now(UTC).isoformat()


def non_empty_str(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"`{name}` must be a str, got {type(value).__name__} {shown(value)}")
    if not value.strip():
        raise ValueError(f"`{name}` must be a non-empty str, got {shown(value)}")
    return value
