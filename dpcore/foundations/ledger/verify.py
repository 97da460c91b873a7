"""Checking a ledger file's history against its digest chain, and naming what was changed.

Each record keeps a sealed copy of its content and the digest of that copy, which covers the
previous record's digest (:mod:`dpcore.foundations.ledger.records`). :func:`verify_ledger_file`
reads every record in order and reports, per record:

- a field that no longer reads as sealed (the cost, the actor, the results, ...), with both
  values: an edit of the history;
- a sealed copy that no longer matches its digest: the copy was edited too;
- a record that holds another record's sealed content: records were swapped (reordered);
- a record sealed after a record that is no longer there: records were deleted (or replaced);
- a chain head that names later records: records were deleted from the end;
- a ledger whose total is not the total it was started with.

Whoever can write the file can also rebuild the whole chain after an edit; the chain's head
(shown on the Budget page and by ``strata-lab ledger verify``) kept elsewhere detects that.
"""

from __future__ import annotations

import json
import os
import pathlib
from dataclasses import dataclass

from dpcore.foundations.accounting import format_components
from dpcore.foundations.ledger.records import COLUMNS, GENESIS, SEALED_FIELDS, digest_of, seal
from dpcore.foundations.ledger.store import connect, decode_budget

__all__ = ["ChainReport", "Problem", "verify_ledger_file"]


@dataclass(frozen=True)
class Problem:
    """What is wrong, and where: ``record`` is the record's (or an export's entry's) number,
    None for the file as a whole."""

    record: int | None
    message: str
    where: str = "record"

    def __str__(self) -> str:
        return (
            self.message if self.record is None else f"{self.where} #{self.record}: {self.message}"
        )


@dataclass(frozen=True)
class ChainReport:
    """The result of a check: how many records were read, the chain's last digest, and every
    problem found (none: the history is as it was recorded)."""

    records: int
    head: str
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_ledger_file(path: str | os.PathLike) -> ChainReport:
    """Check every record of the ledger file at ``path`` against the chain (module doc)."""
    file = pathlib.Path(path).expanduser()
    if not file.is_file():
        raise ValueError(f"no ledger file at {file}")
    with connect(file) as conn:
        rows = conn.execute(
            f"SELECT {', '.join(COLUMNS)}, sealed, digest FROM records ORDER BY id"
        ).fetchall()
        head = conn.execute("SELECT last_id, records, digest FROM chain WHERE id = 1").fetchone()
        ledgers = conn.execute("SELECT name, kind, total FROM ledgers ORDER BY name").fetchall()
    problems: list[Problem] = []
    previous, previous_id = GENESIS, 0
    starts: dict[str, tuple[str, str]] = {}
    for values in rows:
        row = dict(zip((*COLUMNS, "sealed", "digest"), values, strict=True))
        problems += _record_problems(row, previous, previous_id)
        if row["entry"] == "start":
            starts.setdefault(row["ledger"], (row["kind"], row["cost"]))
        previous, previous_id = row["digest"], row["id"]
    if not problems or head is None or head[2] != previous:  # else the breaks above say it
        problems += _head_problems(head, len(rows), previous, previous_id)
    problems += _total_problems(ledgers, starts)
    return ChainReport(len(rows), previous, tuple(problems))


def _record_problems(row: dict, previous: str, previous_id: int) -> list[Problem]:
    number = row["id"]
    try:
        sealed = json.loads(row["sealed"])
    except (TypeError, ValueError):
        return [Problem(number, "its sealed copy is unreadable: the record was tampered with")]
    if sealed.get("id") != number:
        return [
            Problem(
                number,
                f"it holds the content sealed as record #{sealed.get('id')}: records were "
                "reordered or renumbered",
            )
        ]
    found = json.loads(seal(row, sealed.get("prev", "")))
    problems = [
        Problem(number, _edited(field, found.get(field), sealed.get(field), row))
        for field in (*SEALED_FIELDS, "payload_sha256")
        if found.get(field) != sealed.get(field)
    ]
    if digest_of(row["sealed"]) != row["digest"]:
        problems.append(
            Problem(number, "its sealed copy was edited as well: it no longer matches its digest")
        )
    if sealed.get("prev") != previous:
        if number > previous_id + 1:
            gone = _numbers(previous_id + 1, number - 1)
            message = f"{gone} deleted: it was sealed after a record that is no longer there"
        else:
            message = (
                f"it was sealed after another record than the #{previous_id} there now: "
                f"record #{previous_id} was replaced, or records were inserted before it"
            )
        problems.append(Problem(number, message))
    return problems


def _edited(field: str, now: object, sealed: object, row: dict) -> str:
    """What an edit of ``field`` changed, in words."""
    if field == "payload_sha256":
        return "its results (the stored outputs and metadata) were edited"
    if field == "dataset":  # identities stay unprinted: a hash of the confidential rows
        return (
            f"its data (“{row['dataset_name']}”) is not the data it was sealed with: the "
            "history was edited"
        )
    if field == "key":  # a release's key hashes its data's identity: unprinted too
        return "its key is not the key it was sealed with: the history was edited"
    if field == "cost":
        return (
            f"its cost reads {_amount(row['kind'], now)} but was sealed as "
            f"{_amount(row['kind'], sealed)}: the history was edited"
        )
    return f"its {field} reads {now!r} but was sealed as {sealed!r}: the history was edited"


def _amount(kind: str, components: object) -> str:
    try:
        return str(decode_budget(kind, str(components)))
    except (TypeError, ValueError):
        return repr(components)


def _numbers(first: int, last: int) -> str:
    return f"record #{first} was" if first == last else f"records #{first} to #{last} were"


def _head_problems(head, count: int, last_digest: str, last_id: int) -> list[Problem]:
    if head is None:
        return [] if count == 0 else [Problem(None, "the chain's head is missing: it was deleted")]
    head_id, head_count, head_digest = head
    if head_digest == last_digest and head_count == count:
        return []
    if head_id > last_id:
        gone = _numbers(last_id + 1, head_id)
        return [Problem(None, f"{gone} deleted from the end of the history (the chain's head "
                              f"names record #{head_id})")]  # fmt: skip
    return [
        Problem(
            None,
            f"the chain's head names {head_count} records ending with another digest than "
            f"record #{last_id}'s: records were deleted, inserted or rewritten",
        )
    ]


def _total_problems(ledgers: list, starts: dict[str, tuple[str, str]]) -> list[Problem]:
    problems = []
    for name, kind, total in ledgers:
        if name not in starts:
            problems.append(
                Problem(
                    None,
                    f"ledger “{name}” has no start record: it was added outside the "
                    "ledger, and its total is unaccounted for",
                )  # fmt: skip
            )
        elif (kind, json.loads(total)) != (starts[name][0], json.loads(starts[name][1])):
            started = format_components(json.loads(starts[name][1]))
            problems.append(
                Problem(
                    None,
                    f"ledger “{name}”: its total reads "
                    f"{format_components(json.loads(total))} but it was started with "
                    f"{started}: the total was edited",
                )  # fmt: skip
            )
    return problems
