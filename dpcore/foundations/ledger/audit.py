"""The audit trail of a dataset's people: every start, release, raise and approval, downloadable
as CSV or JSON with a digest chain, and checked by ``strata-lab ledger verify``.

A trail lists, in the order they were made, the records of every ledger of a population
(:mod:`dpcore.foundations.ledger.population`): who made each, when, what it cost or granted,
and the people's loss and total after it. Each entry carries the digest of the previous entry
and its own: the SHA-256 of the previous digest and of the entry's fields (as written, cells
escaped for spreadsheets). :func:`verify_audit` names an entry that was edited, deleted,
inserted or moved; :func:`compare_with_ledger` names, field by field, what differs from the
ledger file.

A trail names data by the names it was released under, never by its identity (a function of
the confidential rows): it can be handed to an auditor.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import pathlib
from dataclasses import dataclass

from dpcore.foundations.accounting import Budget, cumulative
from dpcore.foundations.cells import escape_cell
from dpcore.foundations.ledger.population import population_of
from dpcore.foundations.ledger.records import ENTRIES, GENESIS, LedgerRecord, read_records
from dpcore.foundations.ledger.store import connect
from dpcore.foundations.ledger.verify import ChainReport, Problem

__all__ = [
    "AUDIT_FIELDS",
    "AuditTrail",
    "audit_trail",
    "compare_with_ledger",
    "read_audit",
    "to_audit_csv",
    "to_audit_json",
    "verify_audit",
]

FORMAT = "strata-lab audit trail"
AUDIT_FIELDS = (
    "entry", "record", "when", "what", "ledger", "who", "description", "reason", "cost",
    "loss_after", "total_after",
)  # fmt: skip
"""Each entry's fields, in order; ``previous`` and ``digest`` follow them."""
_COMPARED = tuple(f for f in AUDIT_FIELDS if f not in ("entry", "record"))


@dataclass(frozen=True)
class AuditTrail:
    """The entries of one population's trail (``rows``: :data:`AUDIT_FIELDS`, ``previous``
    and ``digest``), the names of its data and its ledgers, and the last digest (``head``)."""

    datasets: tuple[str, ...]
    ledgers: tuple[str, ...]
    rows: tuple[dict, ...]

    @property
    def head(self) -> str:
        return self.rows[-1]["digest"] if self.rows else GENESIS


def audit_trail(
    path: str | os.PathLike, *, identity: str | None = None, ledger: str | None = None
) -> AuditTrail:
    """The trail of the people of the data ``identity``, or of ``ledger`` (one of them)."""
    with connect(pathlib.Path(path)) as conn:
        people = population_of(conn, identity=identity, ledger=ledger)
        if not people.ledgers:
            return AuditTrail(tuple(d.name for d in people.datasets), (), ())
        marks = ", ".join("?" * len(people.ledgers))
        records = read_records(conn, f"ledger IN ({marks})", people.ledgers, payloads=False)
    return AuditTrail(
        tuple(d.name for d in people.datasets), people.ledgers, tuple(_chained(records))
    )


def _chained(records: list[LedgerRecord]) -> list[dict]:
    rows, previous = [], GENESIS
    costs: list[Budget] = []
    granted: list[Budget] = []
    for number, record in enumerate(records, start=1):
        if record.entry == "release":
            costs.append(record.cost)
        elif record.entry in ("start", "raise"):
            granted.append(record.cost)
        fields = {
            "entry": number,
            "record": record.id,
            "when": record.created_at,
            "what": ENTRIES[record.entry],
            "ledger": record.ledger,
            "who": record.actor,
            "description": record.label,
            "reason": record.reason,
            "cost": "" if record.cost is None else str(record.cost),
            "loss_after": str(cumulative(*costs)) if costs else "none",
            "total_after": str(cumulative(*granted)) if granted else "none",
        }
        fields = {name: escape_cell(value) for name, value in fields.items()}
        digest = _digest(previous, fields)
        rows.append({**fields, "previous": previous, "digest": digest})
        previous = digest
    return rows


def _digest(previous: str, fields: dict) -> str:
    text = json.dumps({k: fields[k] for k in AUDIT_FIELDS}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(f"{previous}\n{text}".encode()).hexdigest()


def to_audit_json(trail: AuditTrail) -> str:
    return json.dumps(
        {
            "format": FORMAT, "data": list(trail.datasets), "ledgers": list(trail.ledgers),
            "entries": list(trail.rows), "head": trail.head,
        },
        indent=2, ensure_ascii=False,
    )  # fmt: skip


def to_audit_csv(trail: AuditTrail) -> str:
    """The trail as CSV, after ``#`` lines naming the data, the ledgers and the head digest;
    read it back with :func:`read_audit`."""
    buffer = io.StringIO()
    data = " and ".join(f"“{name}”" for name in trail.datasets) or "no data yet"
    for name, value in (
        ("format", FORMAT), ("data", data), ("ledgers", ", ".join(trail.ledgers)),
        ("head", trail.head), ("verify", "strata-lab ledger verify THIS_FILE"),
    ):  # fmt: skip
        buffer.write(f"# {name}: {escape_cell(value)}\n")
    writer = csv.DictWriter(
        buffer, fieldnames=[*AUDIT_FIELDS, "previous", "digest"], quoting=csv.QUOTE_ALL,
        lineterminator="\n",
    )  # fmt: skip
    writer.writeheader()
    writer.writerows(trail.rows)
    return buffer.getvalue()


def read_audit(text: str) -> tuple[list[dict], str | None]:
    """The entries of a trail written by :func:`to_audit_json` or :func:`to_audit_csv`, and its
    head digest (None if the file names none).

    Raises
    ------
    ValueError
        Text that is neither, naming what is missing.
    """
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not an audit trail: its JSON does not parse ({exc})") from None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise ValueError(f'not an audit trail: its JSON has no "format": "{FORMAT}"')
        entries = document.get("entries")
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise ValueError('not an audit trail: its JSON has no list of "entries"')
        return entries, document.get("head")
    lines = text.splitlines()
    comments = {}
    for line in lines:
        if not line.startswith("# "):
            break
        name, _, value = line[2:].partition(": ")
        comments[name] = value
    if comments.get("format") != FORMAT:
        raise ValueError(f"not an audit trail: no “# format: {FORMAT}” line at the top")
    reader = csv.DictReader(io.StringIO("\n".join(lines[len(comments) :])))
    missing = [
        f for f in (*AUDIT_FIELDS, "previous", "digest") if f not in (reader.fieldnames or [])
    ]
    if missing:
        raise ValueError(f"not an audit trail: its header lacks {', '.join(missing)}")
    rows = []
    for row in reader:
        for number in ("entry", "record"):
            try:
                row[number] = int(row[number])
            except (TypeError, ValueError):
                pass  # left as text: verify_audit says it does not fit
        rows.append(row)
    return rows, comments.get("head")


def verify_audit(text: str) -> ChainReport:
    """Check a downloaded trail against its digests (module doc)."""
    rows, head = read_audit(text)
    problems: list[Problem] = []
    previous, previous_number = GENESIS, 0
    for position, row in enumerate(rows, start=1):
        number = row.get("entry")
        fields = {f: row.get(f) for f in AUDIT_FIELDS}
        if _digest(str(row.get("previous")), fields) != row.get("digest"):
            problems.append(_entry(number, f"{_named(row)} was edited: it no longer matches its "
                                           "digest"))  # fmt: skip
        if row.get("previous") != previous:
            problems.append(_entry(number, _break(number, previous_number, position)))
        previous, previous_number = row.get("digest"), number
    if head is not None and head != previous:
        problems.append(
            Problem(
                None,
                f"the file's head names another last entry than entry "
                f"#{previous_number}: entries were deleted from its end",
            )  # fmt: skip
        )
    return ChainReport(len(rows), previous, tuple(problems))


def _break(number: object, previous_number: object, position: int) -> str:
    """Why an entry does not follow the one before it in the file."""
    if isinstance(number, int) and isinstance(previous_number, int):
        if number < previous_number:
            return f"it comes after entry #{previous_number}: the entries were reordered"
        if number > previous_number + 1:
            first, last = previous_number + 1, number - 1
            gone = f"entry #{first} was" if first == last else f"entries #{first} to #{last} were"
            return f"{gone} deleted: it was sealed after an entry no longer in the file"
    return (
        f"it was not sealed after the entry before it in the file (line {position} of the "
        "entries): an entry was inserted, replaced or moved"
    )


def _named(row: dict) -> str:
    return f"its {row.get('what', 'entry')} “{row.get('description', '')}” (record #{row.get('record')})"


def _entry(number: object, message: str) -> Problem:
    return Problem(number if isinstance(number, int) else None, message, where="entry")


def compare_with_ledger(text: str, path: str | os.PathLike) -> tuple[Problem, ...]:
    """What differs, field by field, between a downloaded trail and the ledger file at
    ``path``: the trail is rebuilt from the ledger for the people of the trail's first
    record, and each entry is compared with the ledger's record of the same number."""
    rows, _ = read_audit(text)
    if not rows:
        return ()
    with connect(pathlib.Path(path).expanduser()) as conn:
        found = conn.execute("SELECT ledger FROM records WHERE id = ?", (rows[0].get("record"),))
        first = found.fetchone()
    if first is None:
        return (Problem(None, f"the ledger file holds no record #{rows[0].get('record')}: this "
                              "trail is not from this file"),)  # fmt: skip
    kept = {row["record"]: row for row in audit_trail(path, ledger=first[0]).rows}
    problems = []
    for row in rows:
        original = kept.pop(row.get("record"), None)
        if original is None:
            problems.append(_entry(row.get("entry"), f"record #{row.get('record')} is not in "
                                                     "the ledger file"))  # fmt: skip
            continue
        for field in _COMPARED:
            if str(row.get(field)) != str(original[field]):
                problems.append(
                    _entry(
                        row.get("entry"),
                        f"its {field} reads {row.get(field)!r} in the file "
                        f"but {original[field]!r} in the ledger",
                    )  # fmt: skip
                )
    problems += [
        Problem(
            None,
            f"record #{number} ({original['what']} “{original['description']}”, "
            f"{original['when'][:19]}) is in the ledger but not in the file",
        )  # fmt: skip
        for number, original in kept.items()
    ]
    return tuple(problems)
