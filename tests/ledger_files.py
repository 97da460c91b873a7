"""Ledger files as older versions of Strata Lab wrote them, for the migration tests.

Schema 1 (spends only) and schema 2 (spends and the datasets each ledger is bound to, reset by
archiving) are rebuilt here statement by statement from the code that wrote them (schema 2 is
the ledger of the version before issue 36): the same tables, the same payloads a release
recorded, the same archive on reset.
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import sqlite3

SCHEMA_1 = (
    """CREATE TABLE ledgers (name TEXT PRIMARY KEY, kind TEXT NOT NULL, total TEXT NOT NULL,
        created_at TEXT NOT NULL)""",
    """CREATE TABLE spends (id INTEGER PRIMARY KEY, ledger TEXT NOT NULL REFERENCES ledgers
        (name), label TEXT NOT NULL, kind TEXT NOT NULL, cost TEXT NOT NULL, payload TEXT NOT
        NULL, key TEXT, created_at TEXT NOT NULL, UNIQUE (ledger, key))""",
)
SCHEMA_2 = (
    *SCHEMA_1,
    """CREATE TABLE datasets (ledger TEXT NOT NULL REFERENCES ledgers (name), fingerprint TEXT
        NOT NULL, name TEXT NOT NULL, added_at TEXT NOT NULL, PRIMARY KEY (ledger, fingerprint))""",
)


def release_payload(fingerprint: str, name: str, rows: int = 9) -> str:
    """What ``release()`` recorded: the plan's dataset under ``metadata.plan.dataset``."""
    plan = {"dataset": {"name": name, "fingerprint": fingerprint, "rows": rows}}
    return json.dumps({"outputs": [], "metadata": {"plan": plan}})


class OlderLedgerFile:
    """A ledger file of schema ``version`` (1 or 2), written as that version wrote it."""

    def __init__(self, path: pathlib.Path, version: int) -> None:
        self.path, self.version = path, version
        self._clock = 0
        with self._connect() as conn:
            for statement in SCHEMA_1 if version == 1 else SCHEMA_2:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version}")

    def _connect(self):
        return contextlib.closing(sqlite3.connect(self.path, isolation_level=None))

    def now(self) -> str:
        self._clock += 1
        return f"2024-01-01T00:{self._clock // 60:02d}:{self._clock % 60:02d}+00:00"

    def start(self, name: str, rho: float) -> None:
        with self._connect() as conn:
            conn.execute(
                "INSERT INTO ledgers VALUES (?, 'zcdp', ?, ?)",
                (name, json.dumps({"rho": rho}), self.now()),
            )

    def spend(self, ledger: str, cost: dict, payload: str, *, kind: str = "pure",
              key: str | None = None, dataset: tuple[str, str] | None = None) -> None:  # fmt: skip
        """A spend; with ``dataset`` (fingerprint, name) on schema 2, the binding the first
        release on it made, as ``Ledger.spend`` inserted it."""
        at = self.now()
        with self._connect() as conn:
            conn.execute(
                "INSERT INTO spends (ledger, label, kind, cost, payload, key, created_at) "
                "VALUES (?, 'mean', ?, ?, ?, ?, ?)",
                (ledger, kind, json.dumps(cost), payload, key, at),
            )
            if dataset is not None and self.version == 2:
                conn.execute(
                    "INSERT OR IGNORE INTO datasets VALUES (?, ?, ?, ?)", (ledger, *dataset, at)
                )

    def release(self, ledger: str, fingerprint: str, name: str, epsilon: float = 1.0) -> None:
        self.spend(ledger, {"epsilon": epsilon}, release_payload(fingerprint, name),
                   dataset=(fingerprint, name))  # fmt: skip

    def archive(self, name: str) -> str:
        """What “Archive and reset” did: the history moves to an archived ledger, and the live
        ledger starts afresh, bound to no data."""
        archived = f"{name} (archived {self.now()[:19]}Z)"
        with self._connect() as conn:
            conn.execute(
                "INSERT INTO ledgers (name, kind, total, created_at) "
                "SELECT ?, kind, total, created_at FROM ledgers WHERE name = ?",
                (archived, name),
            )
            for table in ("spends", "datasets") if self.version == 2 else ("spends",):
                conn.execute(f"UPDATE {table} SET ledger = ? WHERE ledger = ?", (archived, name))
            conn.execute("UPDATE ledgers SET created_at = ? WHERE name = ?", (self.now(), name))
        return archived
