"""Every ledger of a file, and bringing a file written by an older version up to date."""

from __future__ import annotations

import os
import pathlib
import sqlite3
from dataclasses import dataclass

from dpcore.foundations.accounting import Budget
from dpcore.foundations.ledger.migrate import prepare
from dpcore.foundations.ledger.population import granted_total, owners_of
from dpcore.foundations.ledger.refusals import LedgerDataset
from dpcore.foundations.ledger.store import (
    READ_TIMEOUT_SECONDS,
    SCHEMA_VERSION,
    connect,
    decode_budget,
    default_ledger_path,
    enable_wal,
    schema_version,
    transaction,
    unavailable,
)

__all__ = ["DatasetSummary", "LedgerSummary", "list_datasets", "list_ledgers", "upgrade"]


@dataclass(frozen=True)
class LedgerSummary:
    """One ledger in a file: its name, the total it started with, its creation time, number of
    releases, the name of the dataset of its first release (``None`` before its first release on
    data) and its whole total with raises (``granted``)."""

    name: str
    total: Budget
    created_at: str
    releases: int
    dataset: str | None = None
    granted: Budget | None = None


def upgrade(path: str | os.PathLike | None = None) -> None:
    """Bring the ledger file at ``path`` to the current schema (a no-op when it is, or when
    there is no file)."""
    file = pathlib.Path(default_ledger_path() if path is None else path).expanduser()
    if not file.exists():
        return
    with connect(file) as conn:
        if schema_version(conn) == SCHEMA_VERSION:
            return
    with connect(file, writing=True) as conn:
        enable_wal(conn)
        with transaction(conn):
            prepare(conn, str(file))


def list_ledgers(path: str | os.PathLike | None = None) -> list[LedgerSummary]:
    """Every ledger in the file at ``path`` (default :func:`default_ledger_path`), oldest first.

    An absent file has no ledgers; it is not created. A file of an older schema is migrated.
    """
    file = pathlib.Path(default_ledger_path() if path is None else path).expanduser()
    if not file.exists():
        return []
    try:
        upgrade(file)
        conn = sqlite3.connect(file, timeout=READ_TIMEOUT_SECONDS)
    except sqlite3.OperationalError as exc:
        raise unavailable(file, exc) from exc
    try:
        rows = conn.execute(
            "SELECT l.name, l.kind, l.total, l.created_at, "
            "(SELECT COUNT(*) FROM records r WHERE r.ledger = l.name AND r.entry = 'release'), "
            "(SELECT r.dataset_name FROM records r WHERE r.ledger = l.name "
            " AND r.dataset IS NOT NULL ORDER BY r.id LIMIT 1) "
            "FROM ledgers l ORDER BY l.created_at, l.name"
        ).fetchall()
        granted = {name: granted_total(conn, name, decode_budget(kind, total))
                   for name, kind, total, *_ in rows}  # fmt: skip
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # a new file whose tables are not there yet
            return []
        raise unavailable(file, exc) from exc
    finally:
        conn.close()
    return [
        LedgerSummary(name, decode_budget(kind, total), created, count, dataset, granted[name])
        for name, kind, total, created, count, dataset in rows
    ]


@dataclass(frozen=True)
class DatasetSummary:
    """A dataset some ledger of a file released on (curator-side: it holds the identity), and
    the ledgers bound to it, the first to release on it first."""

    dataset: LedgerDataset
    ledgers: tuple[str, ...]


def list_datasets(path: str | os.PathLike | None = None) -> list[DatasetSummary]:
    """Every dataset released on in the file at ``path``, in the order of its first release
    (an absent file has none)."""
    file = pathlib.Path(default_ledger_path() if path is None else path).expanduser()
    if not file.exists():
        return []
    upgrade(file)
    with connect(file) as conn:
        firsts = conn.execute(
            "SELECT dataset, dataset_name, created_at FROM records WHERE id IN (SELECT min(id) "
            "FROM records WHERE dataset IS NOT NULL GROUP BY dataset) ORDER BY id"
        ).fetchall()
        return [
            DatasetSummary(LedgerDataset(*row), tuple(owners_of(conn, row[0]))) for row in firsts
        ]
