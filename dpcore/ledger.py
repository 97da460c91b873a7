"""A persistent privacy-budget ledger in SQLite, safe across threads and processes.

A :class:`Ledger` is a named total budget plus the list of every release spent against it. Each
:meth:`Ledger.spend` checks the cost against what remains and records it in one SQLite
transaction, so concurrent callers — threads or separate processes sharing the file — can never
overspend, and a process killed mid-spend leaves either the whole record or nothing. Budget
arithmetic is the exact-decimal arithmetic of :mod:`dpcore.accounting`.

Where the ledger lives
----------------------
One SQLite file can hold several named ledgers. Passing ``path=None`` uses
:func:`default_ledger_path`:

1. the file named by the environment variable ``STRATA_LAB_LEDGER`` (:data:`LEDGER_PATH_ENV`),
   if it is set and not empty;
2. otherwise ``$XDG_DATA_HOME/strata-lab/ledger.sqlite``, if ``XDG_DATA_HOME`` is an absolute path;
3. otherwise ``~/.local/share/strata-lab/ledger.sqlite``.

Missing parent folders, the database file and its tables are created on first use.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import reprlib
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from dpcore.accounting import (
    Budget,
    BudgetExceededError,
    budget_from_components,
    check_affordable,
    check_budget,
    exact_components,
    remaining_after,
)

__all__ = [
    "LEDGER_PATH_ENV",
    "BudgetExceededError",
    "Ledger",
    "LedgerRecord",
    "LedgerSummary",
    "LedgerUnavailableError",
    "default_ledger_path",
    "list_ledgers",
]

LEDGER_PATH_ENV = "STRATA_LAB_LEDGER"

_SCHEMA_VERSION = 1
# Separate statements rather than one script: executescript() would COMMIT the open transaction.
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS ledgers (
        name       TEXT PRIMARY KEY,
        kind       TEXT NOT NULL,
        total      TEXT NOT NULL,  -- JSON object of budget components
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS spends (
        id         INTEGER PRIMARY KEY,
        ledger     TEXT NOT NULL REFERENCES ledgers (name),
        label      TEXT NOT NULL,
        kind       TEXT NOT NULL,
        cost       TEXT NOT NULL,  -- JSON object of budget components, in the cost's own kind
        payload    TEXT NOT NULL,  -- JSON object
        key        TEXT,           -- idempotency key; NULLs never collide under UNIQUE
        created_at TEXT NOT NULL,
        UNIQUE (ledger, key)
    )""",
)
# Long enough to queue behind any realistic spend; a spend holds the write lock for milliseconds.
_BUSY_TIMEOUT_SECONDS = 30.0
# Reads (every page shows the balance) wait briefly: in WAL mode they are blocked only by a
# writer recovering or checkpointing the file, and a page should say so rather than hang.
_READ_TIMEOUT_SECONDS = 2.0


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


def _unavailable(path: pathlib.Path, exc: sqlite3.OperationalError) -> LedgerUnavailableError:
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


@dataclass(frozen=True)
class LedgerRecord:
    """One recorded spend.

    Attributes
    ----------
    id : int
        Row id; increases with every spend in the file, so it orders the history.
    ledger : str
        Name of the ledger the spend was charged to.
    label : str
        Human-readable description of the release.
    cost : Budget
        The cost as it was passed to :meth:`Ledger.spend`, in its own kind.
    payload : dict
        The JSON payload, as read back from storage.
    key : str or None
        Idempotency key, if one was given.
    created_at : str
        ISO-8601 timestamp in UTC.
    """

    id: int
    ledger: str
    label: str
    cost: Budget
    payload: dict
    key: str | None
    created_at: str


class Ledger:
    """A named privacy budget whose spends are recorded durably in an SQLite file.

    Parameters
    ----------
    path : str, os.PathLike or None
        The SQLite file. ``None`` uses :func:`default_ledger_path`. Created, with its parent
        folders, if missing.
    name : str
        Which ledger in the file. Created with ``total`` if missing.
    total : PureDP, ApproxDP or ZCDP
        The total budget. Must equal the stored total when the ledger already exists.

    Raises
    ------
    TypeError
        If ``path``, ``name`` or ``total`` has the wrong type.
    ValueError
        If ``name`` is empty, if the ledger exists with a different total, or if ``path`` is not a
        ledger database.

    Notes
    -----
    Every operation opens its own connection, so one ``Ledger`` may be shared by threads, and any
    number of processes may open the same file. Spends serialise on SQLite's write lock
    (``BEGIN IMMEDIATE``, WAL journal, ``synchronous=FULL``).

    Examples
    --------
    >>> from dpcore.accounting import PureDP
    >>> ledger = Ledger("budget.sqlite", "survey-2024", PureDP(1.0))  # doctest: +SKIP
    >>> record = ledger.spend("mean income", PureDP(0.25), {"mean": 41_200.0})  # doctest: +SKIP
    >>> ledger.remaining()  # doctest: +SKIP
    {'epsilon': 0.75}
    """

    def __init__(self, path: str | os.PathLike | None, name: str, total: Budget) -> None:
        if path is None:
            path = default_ledger_path()
        elif not isinstance(path, str | os.PathLike):
            raise TypeError(
                f"`path` must be a str, an os.PathLike or None, got {type(path).__name__} {path!r}"
            )
        # Absolute, so a later os.chdir cannot point the per-operation connections elsewhere.
        self._path = pathlib.Path(path).expanduser().absolute()
        self._name = _non_empty_str("name", name)
        self._total = check_budget("total", total)
        self._path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._create_or_open()
        except sqlite3.DatabaseError as exc:
            if exc.sqlite_errorname != "SQLITE_NOTADB":
                raise
            raise ValueError(
                f"`path` must be an SQLite ledger file, got {str(self._path)!r}, which is not an "
                "SQLite database"
            ) from exc

    def _create_or_open(self) -> None:
        stored = self._stored_total()
        if stored is None:
            stored = self._create()
        if stored != self._total:
            raise ValueError(
                f"ledger {self._name!r} in {str(self._path)!r} already has total {stored!r}, but "
                f"`total` is {self._total!r}; open it with its stored total or choose another "
                "`name`"
            )

    def _stored_total(self) -> Budget | None:
        """The total of this ledger if the file already holds it, read without writing: opening
        an existing ledger then needs neither the write lock (another process may hold it
        during a spend) nor a writable file, so a read-only ledger can still be viewed."""
        if not self._path.exists():
            return None
        with self._connect() as conn:
            if conn.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA_VERSION:
                return None
            row = conn.execute(
                "SELECT kind, total FROM ledgers WHERE name = ?", (self._name,)
            ).fetchone()
        return None if row is None else _decode_budget(*row)

    def _create(self) -> Budget:
        """Create the schema (a new file) and this ledger's row if missing; return its total."""
        with self._connect(writing=True) as conn:
            _enable_wal(conn)
            with _transaction(conn):
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version not in (0, _SCHEMA_VERSION):
                    raise ValueError(
                        f"`path` {str(self._path)!r} has ledger schema version {version}; this "
                        f"version of Strata Lab reads version {_SCHEMA_VERSION}"
                    )
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
                conn.execute(
                    "INSERT OR IGNORE INTO ledgers (name, kind, total, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (self._name, self._total.kind, _encode_budget(self._total), _utc_now()),
                )
                row = conn.execute(
                    "SELECT kind, total FROM ledgers WHERE name = ?", (self._name,)
                ).fetchone()
        return _decode_budget(*row)

    @property
    def path(self) -> pathlib.Path:
        """Absolute path of the SQLite file."""
        return self._path

    @property
    def name(self) -> str:
        """Name of this ledger within the file."""
        return self._name

    @property
    def total(self) -> Budget:
        """The total budget."""
        return self._total

    def __repr__(self) -> str:
        return f"Ledger({str(self._path)!r}, {self._name!r}, {self._total!r})"

    def spend(
        self, label: str, cost: Budget, payload: dict, *, key: str | None = None
    ) -> LedgerRecord:
        """Charge ``cost`` to the ledger and record it with ``payload``, atomically.

        Parameters
        ----------
        label : str
            Non-empty description of the release.
        cost : PureDP, ApproxDP or ZCDP
            Privacy cost, converted to the total's kind (pure DP counts as ρ = ε²/2 against a
            zCDP total and as δ = 0 against an (ε, δ) total).
        payload : dict
            JSON-serialisable data stored with the spend, typically the released result.
        key : str or None, keyword-only
            Idempotency key. If this ledger already has a record with this key, that record is
            returned and nothing is spent, so a retried release is never charged twice.

        Returns
        -------
        LedgerRecord
            The new record, or the existing one for ``key``.

        Raises
        ------
        BudgetExceededError
            If ``cost`` exceeds what remains; the message gives Requested, Remaining and
            Difference. Nothing is recorded.
        TypeError
            If an argument has the wrong type or ``payload`` is not JSON-serialisable.
        ValueError
            If ``label`` or ``key`` is empty, or ``cost`` cannot be expressed in the total's kind
            (zCDP against (ε, δ) or the reverse).
        LedgerUnavailableError
            If the file is busy beyond the wait, read-only or on a full disk; nothing is
            recorded. Reads (history, remaining) raise it too, after a short wait.
        """
        label = _non_empty_str("label", label)
        check_budget("cost", cost)
        # Fail on an impossible kind before the key lookup could mask it with an old record.
        exact_components(cost, self._total.kind)
        payload_json = _encode_payload(payload)
        if key is not None:
            key = _non_empty_str("key", key)
        with self._connect(writing=True) as conn, _transaction(conn):
            if key is not None and (existing := self._records(conn, with_key=key)):
                return existing[0]
            check_affordable(self._total, self._costs(conn), cost)
            return self._insert(conn, label, cost, payload_json, key)

    def check_affordable(self, cost: Budget) -> None:
        """Raise ``BudgetExceededError`` (Requested / Remaining / Difference) if ``cost`` exceeds
        what remains now. Records nothing: :meth:`spend` checks again inside its transaction."""
        check_budget("cost", cost)
        exact_components(cost, self._total.kind)
        with self._connect() as conn:
            check_affordable(self._total, self._costs(conn), cost)

    @classmethod
    def open(cls, path: str | os.PathLike | None, name: str) -> Ledger:
        """Open an existing ledger with its stored total; ``ValueError`` if there is none."""
        for summary in list_ledgers(path):
            if summary.name == name:
                return cls(path, name, summary.total)
        raise ValueError(f"`name` must be an existing ledger, got {name!r}")

    def archive(self) -> str:
        """Start this ledger afresh, keeping its history under a new name; return that name.

        In one transaction the spends move to ``"<name> (archived <UTC time>)"`` (with ``#2``,
        ``#3``, ... added if the ledger was archived before within the same second), a ledger
        with the same total, and this ledger's creation time is reset. Nothing is deleted.
        Resetting a budget does not undo the privacy loss of past releases; callers must ask for
        explicit confirmation before calling this.
        """
        stamp = f"{self._name} (archived {_utc_now()[:19]}Z"
        with self._connect(writing=True) as conn, _transaction(conn):
            # A second reset within the same second (e.g. a double click) needs a name of its own.
            archived, n = f"{stamp})", 1
            while conn.execute("SELECT 1 FROM ledgers WHERE name = ?", (archived,)).fetchone():
                n += 1
                archived = f"{stamp} #{n})"
            conn.execute(
                "INSERT INTO ledgers (name, kind, total, created_at) "
                "SELECT ?, kind, total, created_at FROM ledgers WHERE name = ?",
                (archived, self._name),
            )
            conn.execute("UPDATE spends SET ledger = ? WHERE ledger = ?", (archived, self._name))
            conn.execute(
                "UPDATE ledgers SET created_at = ? WHERE name = ?", (_utc_now(), self._name)
            )
        return archived

    def remaining(self) -> dict[str, float]:
        """What is left of the total, per component, e.g. ``{"rho": 0.75}`` (exact, may be 0)."""
        with self._connect() as conn:
            left = remaining_after(self._total, self._costs(conn))
        return {k: float(v) for k, v in left.items()}

    def spent(self) -> dict[str, float]:
        """Everything spent so far, per component, in the total's kind (exact, 0 if nothing)."""
        with self._connect() as conn:
            left = remaining_after(self._total, self._costs(conn))
        total = exact_components(self._total, self._total.kind)
        return {k: float(total[k] - left[k]) for k in total}

    def history(self, *, payloads: bool = True) -> list[LedgerRecord]:
        """Every spend recorded in this ledger, oldest first.

        ``payloads=False`` leaves each record's payload empty (``{}``): listing a ledger then
        never reads or decodes the stored results, which may be large (synthetic rows).
        """
        with self._connect() as conn:
            return self._records(conn, payloads=payloads)

    def get(self, key: str) -> LedgerRecord | None:
        """The record spent with idempotency key ``key``, or ``None`` if there is none."""
        key = _non_empty_str("key", key)
        with self._connect() as conn:
            found = self._records(conn, with_key=key)
        return found[0] if found else None

    @contextlib.contextmanager
    def _connect(self, *, writing: bool = False) -> Iterator[sqlite3.Connection]:
        # A fresh connection per operation: sqlite3 connections must not cross threads, and
        # short-lived ones never hold a lock between calls. isolation_level=None leaves
        # transactions to explicit BEGIN/COMMIT; the timeout makes writers queue, not fail.
        timeout = _BUSY_TIMEOUT_SECONDS if writing else _READ_TIMEOUT_SECONDS
        try:
            conn = sqlite3.connect(self._path, timeout=timeout, isolation_level=None)
        except sqlite3.OperationalError as exc:
            raise _unavailable(self._path, exc) from exc
        try:
            conn.execute("PRAGMA synchronous=FULL")  # a committed spend survives power loss
            conn.execute("PRAGMA foreign_keys=ON")
            yield conn
        except sqlite3.OperationalError as exc:
            raise _unavailable(self._path, exc) from exc
        finally:
            conn.close()

    def _costs(self, conn: sqlite3.Connection) -> list[Budget]:
        # A fixed order keeps the decimal sums reproducible whichever index SQLite picks.
        rows = conn.execute(
            "SELECT kind, cost FROM spends WHERE ledger = ? ORDER BY id", (self._name,)
        )
        return [_decode_budget(kind, cost) for kind, cost in rows]

    def _records(
        self, conn: sqlite3.Connection, with_key: str | None = None, *, payloads: bool = True
    ) -> list[LedgerRecord]:
        payload_column = "payload" if payloads else "'{}'"
        sql = (
            f"SELECT id, ledger, label, kind, cost, {payload_column}, key, created_at FROM spends "
            "WHERE ledger = ?"
        )
        params: tuple[str, ...] = (self._name,)
        if with_key is not None:
            sql += " AND key = ?"
            params += (with_key,)
        rows = conn.execute(sql + " ORDER BY id", params)
        return [
            LedgerRecord(
                id_, ledger, label, _decode_budget(kind, cost), json.loads(payload), key, at
            )
            for id_, ledger, label, kind, cost, payload, key, at in rows
        ]

    def _insert(
        self,
        conn: sqlite3.Connection,
        label: str,
        cost: Budget,
        payload_json: str,
        key: str | None,
    ) -> LedgerRecord:
        created_at = _utc_now()
        cursor = conn.execute(
            "INSERT INTO spends (ledger, label, kind, cost, payload, key, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (self._name, label, cost.kind, _encode_budget(cost), payload_json, key, created_at),
        )
        # Decoded from the stored text so the record equals what history() will return.
        payload = json.loads(payload_json)
        return LedgerRecord(cursor.lastrowid, self._name, label, cost, payload, key, created_at)


@dataclass(frozen=True)
class LedgerSummary:
    """One ledger in a file: its name, total, creation time and number of releases."""

    name: str
    total: Budget
    created_at: str
    releases: int


def list_ledgers(path: str | os.PathLike | None = None) -> list[LedgerSummary]:
    """Every ledger in the file at ``path`` (default :func:`default_ledger_path`), oldest first.

    An absent file has no ledgers; it is not created.
    """
    file = pathlib.Path(default_ledger_path() if path is None else path).expanduser()
    if not file.exists():
        return []
    conn = sqlite3.connect(file, timeout=_READ_TIMEOUT_SECONDS)
    try:
        rows = conn.execute(
            "SELECT l.name, l.kind, l.total, l.created_at, COUNT(s.id) FROM ledgers l "
            "LEFT JOIN spends s ON s.ledger = l.name GROUP BY l.name ORDER BY l.created_at, l.name"
        ).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # a new file whose tables are not there yet
            return []
        raise _unavailable(file, exc) from exc
    finally:
        conn.close()
    return [
        LedgerSummary(name, _decode_budget(kind, total), created, count)
        for name, kind, total, created, count in rows
    ]


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    # IMMEDIATE takes the write lock before anything is read, so the budget check and the insert
    # see the same spends, and competing writers wait on the busy timeout. A deferred transaction
    # would instead fail with SQLITE_BUSY when it tried to upgrade from reading to writing.
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.rollback()
        raise
    conn.execute("COMMIT")


def _enable_wal(conn: sqlite3.Connection) -> None:
    # WAL lets readers proceed while a spend holds the write lock. The mode is stored in the file
    # and can only be changed outside a transaction. Two connections switching a new file at once
    # can deadlock on the upgrade from shared to exclusive lock; SQLite then reports SQLITE_BUSY
    # at once instead of calling the busy handler, so the wait is done here.
    deadline = time.monotonic() + _BUSY_TIMEOUT_SECONDS
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorname != "SQLITE_BUSY" or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def _non_empty_str(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"`{name}` must be a str, got {type(value).__name__} {value!r}")
    if not value.strip():
        raise ValueError(f"`{name}` must be a non-empty str, got {value!r}")
    return value


def _encode_payload(payload: object) -> str:
    if not isinstance(payload, dict):
        raise TypeError(f"`payload` must be a dict, got {type(payload).__name__} {payload!r}")
    try:
        return json.dumps(payload)
    except (TypeError, ValueError) as exc:  # ValueError: circular reference
        raise TypeError(
            f"`payload` must be JSON-serialisable (dict, list, str, int, float, bool, None), "
            f"got {reprlib.repr(payload)}: {exc}"
        ) from None


def _encode_budget(budget: Budget) -> str:
    # json writes floats with repr, the shortest string that reads back as the same float.
    return json.dumps(budget.components())


def _decode_budget(kind: str, components: str) -> Budget:
    return budget_from_components(kind, json.loads(components, parse_float=Decimal))


def _utc_now() -> str:
    return datetime.now(UTC).isoformat()
