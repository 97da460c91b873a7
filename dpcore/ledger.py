"""A persistent privacy-budget ledger in SQLite, safe across threads and processes.

A :class:`Ledger` is a named total budget plus the list of every release spent against it. Each
:meth:`Ledger.spend` checks the cost against what remains and records it in one SQLite
transaction, so concurrent callers — threads or separate processes sharing the file — can never
overspend, and a process killed mid-spend leaves either the whole record or nothing. Budget
arithmetic is the exact-decimal arithmetic of :mod:`dpcore.foundations.accounting`.

Where the ledger lives
----------------------
One SQLite file can hold several named ledgers. Passing ``path=None`` uses
:func:`default_ledger_path`:

1. the file named by the environment variable ``STRATA_LAB_LEDGER`` (:data:`LEDGER_PATH_ENV`),
   if it is set and not empty;
2. otherwise ``$XDG_DATA_HOME/strata-lab/ledger.sqlite``, if ``XDG_DATA_HOME`` is an absolute path;
3. otherwise ``~/.local/share/strata-lab/ledger.sqlite``.

Missing parent folders, the database file and its tables are created on first use.

One ledger per dataset
----------------------
A ledger is the budget of one project: the people in one dataset. Its first release binds it to
that release's dataset (its fingerprint, see :func:`dpcore.release.fingerprint_frame`), and a
spend on other data is refused with :class:`OtherDatasetError` unless the caller confirms that the
ledger covers both (``allow_other_dataset=True``): two files about the same people (a corrected
file, another extract of the same survey) must share one budget, because releases about the same
people add up (sequential composition); files about different people call for a ledger each. The
fingerprints are a function of the confidential rows, so they stay in the ledger file, which is
the curator's; nothing here is exported.
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

from dpcore.foundations.accounting import (
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
    "LedgerDataset",
    "LedgerUnavailableError",
    "OtherDatasetError",
    "default_ledger_path",
    "list_ledgers",
]

LEDGER_PATH_ENV = "STRATA_LAB_LEDGER"

# Version 2 added the datasets each ledger covers; a version-1 file is migrated on opening.
_SCHEMA_VERSION = 2
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
    # The data a ledger's releases may be made on: the first release's, then any the user
    # confirmed. Fingerprints hash the confidential rows: curator-side only, never exported.
    """CREATE TABLE IF NOT EXISTS datasets (
        ledger      TEXT NOT NULL REFERENCES ledgers (name),
        fingerprint TEXT NOT NULL,
        name        TEXT NOT NULL,
        added_at    TEXT NOT NULL,
        PRIMARY KEY (ledger, fingerprint)
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


@dataclass(frozen=True)
class LedgerDataset:
    """A dataset a ledger covers: its fingerprint (a hash of the confidential rows, kept in the
    ledger only), the name it was released under, and when the ledger took it on (empty for a
    dataset that is only being asked about)."""

    fingerprint: str
    name: str
    added_at: str = ""


class OtherDatasetError(ValueError):
    """A release on data the ledger does not cover; nothing was spent.

    ``ledger`` is the ledger's name, ``covered`` the datasets it covers (its first release's
    first) and ``dataset`` the name of the release's data. :meth:`advice` words the message for
    the caller's way of confirming (a keyword, a command-line flag, a checkbox).
    """

    def __init__(self, ledger: str, covered: list[LedgerDataset], dataset: str) -> None:
        self.ledger, self.covered, self.dataset = ledger, covered, dataset
        super().__init__(self.advice("pass `allow_other_dataset=True`"))

    def advice(
        self, confirm: str, *, start: str = "start a new ledger for it", refused: bool = True
    ) -> str:
        """The situation and both ways on: ``start`` (a ledger for data about other people)
        and ``confirm`` (charge this one, for data about the same people). ``refused=False``
        words it as a notice before a release rather than a refusal."""
        names = " and ".join(f"“{d.name}”" for d in self.covered)
        other = f"“{self.dataset}”"
        if self.dataset in {d.name for d in self.covered}:
            other += " with other contents (rows changed, or other columns read)"
        situation = (
            f"ledger “{self.ledger}” is the budget of {names} (the data of its releases so far), "
            f"and this release is on {other}."
        )
        lead = f"Release refused: {situation} Nothing was spent." if refused else situation
        return (
            f"{lead[0].upper()}{lead[1:]} If the new data is about other people, {start}. If it "
            "is about the same people (a corrected file, another extract of the same survey), "
            f"the releases must share one budget: to charge them to this ledger, {confirm}."
        )


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
    >>> from dpcore.foundations.accounting import PureDP
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
                return None  # a new file, or an older schema that _create migrates
            row = conn.execute(
                "SELECT kind, total FROM ledgers WHERE name = ?", (self._name,)
            ).fetchone()
        return None if row is None else _decode_budget(*row)

    def _create(self) -> Budget:
        """Create the schema (a new file) or migrate an older one, and this ledger's row if
        missing; return its total."""
        with self._connect(writing=True) as conn:
            _enable_wal(conn)
            with _transaction(conn):
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version > _SCHEMA_VERSION:
                    raise ValueError(
                        f"`path` {str(self._path)!r} has ledger schema version {version}; this "
                        f"version of Strata Lab reads versions up to {_SCHEMA_VERSION}"
                    )
                for statement in _SCHEMA:
                    conn.execute(statement)
                if version == 1:
                    _bind_past_releases(conn)
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
        self,
        label: str,
        cost: Budget,
        payload: dict,
        *,
        key: str | None = None,
        dataset: LedgerDataset | None = None,
        allow_other_dataset: bool = False,
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
        dataset : LedgerDataset or None, keyword-only
            The data the release is made on (its ``added_at`` is ignored). The ledger's first
            release on data binds the ledger to it; a spend on data the ledger does not cover
            is refused unless ``allow_other_dataset``. ``None``: a spend on no dataset.
        allow_other_dataset : bool, keyword-only
            The caller confirms that ``dataset`` is about the same people as the data the ledger
            covers, so that they share its budget; the ledger then covers ``dataset`` too.

        Returns
        -------
        LedgerRecord
            The new record, or the existing one for ``key``.

        Raises
        ------
        BudgetExceededError
            If ``cost`` exceeds what remains; the message gives Requested, Remaining and
            Difference. Nothing is recorded.
        OtherDatasetError
            If ``dataset`` is not one the ledger covers and ``allow_other_dataset`` is false.
            Nothing is recorded.
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
        if dataset is not None:
            _check_dataset_type(dataset)
        with self._connect(writing=True) as conn, _transaction(conn):
            if key is not None and (existing := self._records(conn, with_key=key)):
                return existing[0]
            if dataset is not None:
                self._check_dataset(conn, dataset, allow_other_dataset)
            check_affordable(self._total, self._costs(conn), cost)
            record = self._insert(conn, label, cost, payload_json, key)
            if dataset is not None:
                conn.execute(
                    "INSERT OR IGNORE INTO datasets (ledger, fingerprint, name, added_at) "
                    "VALUES (?, ?, ?, ?)",
                    (self._name, dataset.fingerprint, dataset.name, record.created_at),
                )
            return record

    def check_dataset(self, dataset: LedgerDataset, *, allow_other_dataset: bool = False) -> None:
        """Raise :class:`OtherDatasetError` if a release on ``dataset`` would be refused now.
        Records nothing: :meth:`spend` checks again inside its transaction."""
        _check_dataset_type(dataset)
        with self._connect() as conn:
            self._check_dataset(conn, dataset, allow_other_dataset)

    def covers(self, dataset: LedgerDataset) -> bool:
        """Whether a release on ``dataset`` may be charged here without a confirmation: the
        ledger covers it, or has no release on any data yet."""
        covered = self.datasets()
        return not covered or dataset.fingerprint in {d.fingerprint for d in covered}

    def datasets(self) -> list[LedgerDataset]:
        """The datasets this ledger covers, the one it was first released on first."""
        with self._connect() as conn:
            return self._datasets(conn)

    def _datasets(self, conn: sqlite3.Connection) -> list[LedgerDataset]:
        rows = conn.execute(
            "SELECT fingerprint, name, added_at FROM datasets WHERE ledger = ? ORDER BY rowid",
            (self._name,),
        )
        return [LedgerDataset(*row) for row in rows]

    def _check_dataset(
        self, conn: sqlite3.Connection, dataset: LedgerDataset, allow_other_dataset: bool
    ) -> None:
        covered = self._datasets(conn)
        known = {d.fingerprint for d in covered}
        if covered and dataset.fingerprint not in known and not allow_other_dataset:
            raise OtherDatasetError(self._name, covered, dataset.name)

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

        In one transaction the spends and the datasets covered move to
        ``"<name> (archived <UTC time>)"`` (with ``#2``, ``#3``, ... added if the ledger was
        archived before within the same second), a ledger with the same total, and this ledger's
        creation time is reset; its next release binds it to a dataset again. Nothing is deleted.
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
            for table in ("spends", "datasets"):  # the fresh ledger is bound to no data yet
                conn.execute(
                    f"UPDATE {table} SET ledger = ? WHERE ledger = ?", (archived, self._name)
                )
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
    """One ledger in a file: its name, total, creation time, number of releases, and the name
    of the dataset of its first release (``None`` before its first release on data)."""

    name: str
    total: Budget
    created_at: str
    releases: int
    dataset: str | None = None


def list_ledgers(path: str | os.PathLike | None = None) -> list[LedgerSummary]:
    """Every ledger in the file at ``path`` (default :func:`default_ledger_path`), oldest first.

    An absent file has no ledgers; it is not created.
    """
    file = pathlib.Path(default_ledger_path() if path is None else path).expanduser()
    if not file.exists():
        return []
    conn = sqlite3.connect(file, timeout=_READ_TIMEOUT_SECONDS)
    try:
        # A file of schema 1 (not opened by a Ledger since) has no datasets table yet.
        bound = conn.execute("PRAGMA user_version").fetchone()[0] >= 2
        first_dataset = (
            "(SELECT d.name FROM datasets d WHERE d.ledger = l.name ORDER BY d.rowid LIMIT 1)"
            if bound
            else "NULL"
        )
        rows = conn.execute(
            f"SELECT l.name, l.kind, l.total, l.created_at, COUNT(s.id), {first_dataset} "
            "FROM ledgers l LEFT JOIN spends s ON s.ledger = l.name GROUP BY l.name "
            "ORDER BY l.created_at, l.name"
        ).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # a new file whose tables are not there yet
            return []
        raise _unavailable(file, exc) from exc
    finally:
        conn.close()
    return [
        LedgerSummary(name, _decode_budget(kind, total), created, count, dataset)
        for name, kind, total, created, count, dataset in rows
    ]


def _bind_past_releases(conn: sqlite3.Connection) -> None:
    """Migrate schema 1 to 2: each ledger covers the datasets its past releases were made on
    (read from the plans recorded with them), in the order of their first release. Those data
    already share the ledger's budget, so later releases on any of them need no confirmation."""
    rows = conn.execute("SELECT ledger, payload, created_at FROM spends ORDER BY id")
    for ledger, payload, created_at in rows.fetchall():
        if (dataset := _released_dataset(payload)) is not None:
            conn.execute(
                "INSERT OR IGNORE INTO datasets (ledger, fingerprint, name, added_at) "
                "VALUES (?, ?, ?, ?)",
                (ledger, dataset["fingerprint"], str(dataset.get("name", "")), created_at),
            )


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


def _released_dataset(payload: str) -> dict | None:
    """The ``dataset`` entry of the plan a release recorded (``metadata.plan.dataset``), or
    ``None`` for a spend that is not a release on data (other tools may record any payload)."""
    node = json.loads(payload)
    for key in ("metadata", "plan", "dataset"):
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) and node.get("fingerprint") else None


def _check_dataset_type(dataset: object) -> None:
    if not isinstance(dataset, LedgerDataset):
        raise TypeError(
            f"`dataset` must be a LedgerDataset, got {type(dataset).__name__} {dataset!r}"
        )
    _non_empty_str("dataset.fingerprint", dataset.fingerprint)


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
