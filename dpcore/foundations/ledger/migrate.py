"""Creating a ledger file's schema, and bringing a file written by an older version up to date.

- Schema 1 recorded spends only; schema 2 added the datasets each ledger is bound to; both
  reset a ledger by moving its history to an archived ledger ("<name> (archived <time>)") and
  starting it afresh.
- Schema 3 (:data:`~dpcore.foundations.ledger.store.SCHEMA_VERSION`) records every event as a
  sealed record in one digest chain (:mod:`dpcore.foundations.ledger.records`).

Migrating keeps every record and its number, and adds what the older file implied:

1. each spend's data, from the plan its release recorded, or from the ledger's binding of
   schema 2; a binding no spend explains becomes an approval. Old fingerprints keep their value
   with the prefix ``legacy:`` (the new identities are computed otherwise, so a release on the
   same file asks once whether it is the same data);
2. a start record for every ledger, with its total;
3. for a ledger that was reset (its archives ``<name> (archived …)`` released on data it is
   not bound to), a raise taking that data on: the archives count toward the data's cumulative
   loss, and the ledger goes on releasing on it;
4. for a ledger that released on data another ledger had released on first, a raise saying so.

Records added by the migration name :data:`MIGRATED` as their actor. It runs in the transaction
that opens the file for writing, so a crash leaves the old file as it was.
"""

from __future__ import annotations

import json
import re
import sqlite3

from dpcore.foundations.dataset import LEGACY
from dpcore.foundations.ledger.records import append
from dpcore.foundations.ledger.store import (
    SCHEMA,
    SCHEMA_VERSION,
    decode_budget,
    schema_version,
)

__all__ = ["MIGRATED", "prepare"]

MIGRATED = "unknown (recorded before ledger schema 3)"
"""The actor of records the migration adds, and of the older file's spends."""


def prepare(conn: sqlite3.Connection, path: str) -> None:
    """Create the schema of a new file, or migrate an older one; call inside a write
    transaction. A file of a newer schema is refused."""
    version = schema_version(conn)
    if version > SCHEMA_VERSION:
        raise ValueError(
            f"`path` {path!r} has ledger schema version {version}; this version of Strata Lab "
            f"reads versions up to {SCHEMA_VERSION}"
        )
    if version == SCHEMA_VERSION:
        return
    older = _has_table(conn, "spends")
    if older:
        conn.execute("ALTER TABLE spends RENAME TO old_spends")
    for statement in SCHEMA:
        conn.execute(statement)
    if older:
        _migrate(conn)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
    return found.fetchone() is not None


def _migrate(conn: sqlite3.Connection) -> None:
    bindings = _schema2_bindings(conn)
    explained = set()
    for row in conn.execute(
        "SELECT id, ledger, label, kind, cost, payload, key, created_at FROM old_spends ORDER BY id"
    ).fetchall():
        id_, ledger, label, kind, cost, payload, key, created_at = row
        dataset = _released_dataset(payload) or bindings.get((ledger, created_at))
        if dataset is not None:
            explained.add((ledger, dataset[0]))
        append(
            conn, ledger=ledger, entry="release", label=label, cost=decode_budget(kind, cost),
            payload=payload, key=key, actor=MIGRATED, created_at=created_at, record_id=id_,
            dataset=None if dataset is None else dataset[0],
            dataset_name="" if dataset is None else dataset[1],
        )  # fmt: skip
    for (ledger, added_at), (identity, name) in bindings.items():
        if (ledger, identity) not in explained:
            cost = _total(conn, ledger)
            append(
                conn, ledger=ledger, entry="cover", label=f"covers “{name}”", cost=cost,
                actor=MIGRATED, reason="bound to this ledger before ledger schema 3",
                dataset=identity, dataset_name=name, created_at=added_at,
            )  # fmt: skip
    _start_records(conn)
    _reset_archives_taken_on(conn)
    _shared_data_taken_on(conn)
    conn.execute("DROP TABLE old_spends")
    if _has_table(conn, "datasets"):
        conn.execute("DROP TABLE datasets")


def _schema2_bindings(conn: sqlite3.Connection) -> dict[tuple[str, str], tuple[str, str]]:
    """Schema 2's bindings, keyed by ledger and the time of the spend that made each."""
    if not _has_table(conn, "datasets"):
        return {}
    rows = conn.execute("SELECT ledger, fingerprint, name, added_at FROM datasets ORDER BY rowid")
    return {(ledger, added): (LEGACY + fp, name) for ledger, fp, name, added in rows}


def _released_dataset(payload: str) -> tuple[str, str] | None:
    """The identity and name of the data of the plan a release recorded
    (``metadata.plan.dataset``), or None for a spend that is not a release on data."""
    node = json.loads(payload)
    for key in ("metadata", "plan", "dataset"):
        node = node.get(key) if isinstance(node, dict) else None
    if not isinstance(node, dict) or not node.get("fingerprint"):
        return None
    return LEGACY + str(node["fingerprint"]), str(node.get("name", ""))


def _total(conn: sqlite3.Connection, ledger: str):
    kind, total = conn.execute(
        "SELECT kind, total FROM ledgers WHERE name = ?", (ledger,)
    ).fetchone()
    return decode_budget(kind, total)


def _start_records(conn: sqlite3.Connection) -> None:
    ledgers = conn.execute("SELECT name, created_at FROM ledgers ORDER BY created_at, name")
    for name, created_at in ledgers.fetchall():
        total = _total(conn, name)
        append(
            conn, ledger=name, entry="start", label=f"started with {total}", cost=total,
            actor=MIGRATED, created_at=created_at,
        )  # fmt: skip


def _reset_archives_taken_on(conn: sqlite3.Connection) -> None:
    """A reset moved a ledger's history to ``<name> (archived <time>)``; the ledger takes the
    archives' data on, so that they count toward its people's loss."""
    names = [name for (name,) in conn.execute("SELECT name FROM ledgers ORDER BY created_at")]
    for name in names:
        archive = re.compile(re.escape(name) + r" \(archived [^)]*\)")
        for archived in (other for other in names if archive.fullmatch(other)):
            for identity, data_name in _data_of(conn, archived):
                if identity not in dict(_data_of(conn, name)):
                    _take_on(conn, name, identity, data_name, f"reset before ledger schema 3: "
                             f"its earlier history is kept as “{archived}”")  # fmt: skip


def _shared_data_taken_on(conn: sqlite3.Connection) -> None:
    """A ledger that released on data another ledger released on first (before a new ledger
    needed a raise for it) is recorded as having taken it on."""
    firsts = conn.execute(
        "SELECT ledger, dataset, dataset_name, entry FROM records WHERE id IN (SELECT min(id) "
        "FROM records WHERE dataset IS NOT NULL GROUP BY ledger, dataset) ORDER BY id"
    ).fetchall()
    first_owner: dict[str, str] = {}
    for ledger, identity, data_name, entry in firsts:
        owner = first_owner.setdefault(identity, ledger)
        if owner != ledger and entry == "release":
            _take_on(conn, ledger, identity, data_name,
                     f"released on data first released under “{owner}” before ledger schema 3")  # fmt: skip


def _data_of(conn: sqlite3.Connection, ledger: str) -> list[tuple[str, str]]:
    rows = conn.execute(
        "SELECT dataset, dataset_name FROM records WHERE id IN (SELECT min(id) FROM records "
        "WHERE ledger = ? AND dataset IS NOT NULL GROUP BY dataset) ORDER BY id",
        (ledger,),
    )
    return rows.fetchall()


def _take_on(conn: sqlite3.Connection, ledger: str, identity: str, name: str, reason: str) -> None:
    total = _total(conn, ledger)
    append(
        conn, ledger=ledger, entry="join", label=f"takes on “{name}”: its people's total rises "
        f"by {total}", cost=total, actor=MIGRATED, reason=reason, dataset=identity,
        dataset_name=name,
    )  # fmt: skip
