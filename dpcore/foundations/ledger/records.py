"""The ledger's records, each sealed into one digest chain.

Everything that changes a budget is a record, appended in the order it happens and never
changed or removed: a ledger's start (its total), a release (its cost), a raise of a total, a
ledger taking on data another ledger released on (a raise of that population's total), and an
approval that a ledger covers other data about the same people. Each names who made it.

Sealing: when a record is written, its content (every column, with the SHA-256 of its payload)
and the previous record's digest are written as canonical JSON (``sealed``), and its digest is
the SHA-256 of that text; the chain's head (table ``chain``) keeps the last digest and the
number of records. An edited, deleted, inserted or reordered record then no longer fits the
chain, and :mod:`dpcore.foundations.ledger.verify` names it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass

from dpcore.foundations.accounting import Budget
from dpcore.foundations.ledger.store import decode_budget, encode_budget, utc_now

__all__ = [
    "ENTRIES",
    "GENESIS",
    "LOCAL_USER",
    "LedgerRecord",
    "append",
    "digest_of",
    "read_records",
    "seal",
]

LOCAL_USER = "local user"
"""Who acts when nobody is signed in (the app in single-user mode, the command line)."""
ENTRIES = {
    "start": "ledger started",
    "release": "release",
    "raise": "raise",
    "join": "raise (takes data on)",
    "cover": "approval (same people)",
}
"""Each kind of record, in the audit trail's words."""
GENESIS = "0" * 64
"""The digest the first record's ``prev`` names."""
NO_COST = "none"
"""The kind stored for a record that costs nothing and grants nothing (an approval)."""

COLUMNS = (
    "id", "ledger", "entry", "label", "kind", "cost", "payload", "key", "actor", "reason",
    "dataset", "dataset_name", "cumulative", "created_at",
)  # fmt: skip
"""What a record holds; the seal covers each (the payload by its SHA-256)."""
SEALED_FIELDS = tuple(c for c in COLUMNS if c != "payload")


@dataclass(frozen=True)
class LedgerRecord:
    """One record of a ledger.

    Attributes
    ----------
    id : int
        Its place in the file's history (every ledger's records share one sequence).
    ledger : str
        The ledger it belongs to.
    label : str
        What it is: a release's title, a raise's description.
    cost : Budget or None
        A release's cost, a raise's amount or a start's total, in its own kind (None for an
        approval).
    payload : dict
        The JSON payload (a release's outputs and metadata), as read back from storage.
    key : str or None
        A release's idempotency key.
    created_at : str
        ISO-8601 timestamp in UTC.
    entry : str
        ``"start"``, ``"release"``, ``"raise"``, ``"join"`` or ``"cover"`` (:data:`ENTRIES`).
    actor : str
        Who made it (the signed-in user; :data:`LOCAL_USER` when nobody signs in).
    reason : str
        Why, for a raise or an approval.
    dataset : str or None
        The identity of the data it concerns (curator-side only).
    dataset_name : str
        The name that data had.
    cumulative : dict or None
        For a release: the loss of its people in all after it (a budget's components with
        ``kind``, ``releases`` and ``ledgers``).
    """

    id: int
    ledger: str
    label: str
    cost: Budget | None
    payload: dict
    key: str | None
    created_at: str
    entry: str = "release"
    actor: str = LOCAL_USER
    reason: str = ""
    dataset: str | None = None
    dataset_name: str = ""
    cumulative: dict | None = None


def seal(row: dict, prev: str) -> str:
    """The canonical text a record's digest covers: its columns (text exactly as stored), the
    SHA-256 of its payload and the previous record's digest."""
    content = {field: row[field] for field in SEALED_FIELDS}
    content["payload_sha256"] = hashlib.sha256(row["payload"].encode()).hexdigest()
    content["prev"] = prev
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest_of(sealed: str) -> str:
    return hashlib.sha256(sealed.encode()).hexdigest()


def append(
    conn: sqlite3.Connection,
    *,
    ledger: str,
    entry: str,
    label: str,
    cost: Budget | None,
    payload: str = "{}",
    key: str | None = None,
    actor: str,
    reason: str = "",
    dataset: str | None = None,
    dataset_name: str = "",
    cumulative: dict | None = None,
    created_at: str | None = None,
    record_id: int | None = None,
) -> LedgerRecord:
    """Append a record and seal it into the chain; call inside a write transaction.
    ``created_at`` and ``record_id`` are given only by a migration (an older file's record
    keeps its time and number)."""
    if entry not in ENTRIES:
        raise ValueError(f"`entry` must be one of {', '.join(ENTRIES)}, got {entry!r}")
    head = conn.execute("SELECT last_id, records, digest FROM chain WHERE id = 1").fetchone()
    last_id, count, prev = head if head is not None else (0, 0, GENESIS)
    # After the last id ever written, even if later rows were deleted: the gap shows.
    last_id = max(last_id, conn.execute("SELECT coalesce(max(id), 0) FROM records").fetchone()[0])
    row = {
        "id": last_id + 1 if record_id is None else record_id, "ledger": ledger,
        "entry": entry, "label": label, "kind": NO_COST if cost is None else cost.kind,
        "cost": "null" if cost is None else encode_budget(cost), "payload": payload, "key": key,
        "actor": actor,
        "reason": reason, "dataset": dataset, "dataset_name": dataset_name,
        "cumulative": None if cumulative is None else json.dumps(cumulative, sort_keys=True),
        "created_at": created_at or utc_now(),
    }  # fmt: skip
    sealed = seal(row, prev)
    digest = digest_of(sealed)
    conn.execute(
        f"INSERT INTO records ({', '.join(COLUMNS)}, sealed, digest) "
        f"VALUES ({', '.join('?' * (len(COLUMNS) + 2))})",
        (*(row[c] for c in COLUMNS), sealed, digest),
    )
    conn.execute(
        "INSERT OR REPLACE INTO chain (id, last_id, records, digest) VALUES (1, ?, ?, ?)",
        (row["id"], count + 1, digest),
    )
    return _record(row, json.loads(payload))


def read_records(
    conn: sqlite3.Connection, where: str = "1", params: tuple = (), *, payloads: bool = True
) -> list[LedgerRecord]:
    """The records matching the SQL condition ``where``, in the order they were made.
    ``payloads=False`` reads no payload (``{}``): listing never decodes large results."""
    columns = [c if c != "payload" or payloads else "'{}' AS payload" for c in COLUMNS]
    cursor = conn.execute(
        f"SELECT {', '.join(columns)} FROM records WHERE {where} ORDER BY id", params
    )
    return [_record(dict(zip(COLUMNS, values, strict=True))) for values in cursor]


def _record(row: dict, payload: dict | None = None) -> LedgerRecord:
    return LedgerRecord(
        id=row["id"], ledger=row["ledger"], label=row["label"],
        cost=None if row["kind"] == NO_COST else decode_budget(row["kind"], row["cost"]),
        payload=json.loads(row["payload"]) if payload is None else payload,
        key=row["key"], created_at=row["created_at"], entry=row["entry"], actor=row["actor"],
        reason=row["reason"], dataset=row["dataset"], dataset_name=row["dataset_name"],
        cumulative=None if row["cumulative"] is None else json.loads(row["cumulative"]),
    )  # fmt: skip
