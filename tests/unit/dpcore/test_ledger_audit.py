"""A record people can audit: every record is sealed into a digest chain, so that an edited,
deleted or reordered record in the ledger file, or an entry of a downloaded audit trail, is
named with what changed; and a trail never carries a dataset's identity."""

from __future__ import annotations

import contextlib
import json
import sqlite3

import pytest

from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.ledger import (
    Ledger,
    LedgerDataset,
    audit_trail,
    compare_with_ledger,
    read_audit,
    to_audit_csv,
    to_audit_json,
    verify_audit,
    verify_ledger_file,
)

SURVEY = LedgerDataset("content:" + "5e" * 32, "survey.csv")


@pytest.fixture
def db(tmp_path):
    """A start, three releases on one dataset, a raise and an approval of other data."""
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path, "project", ZCDP(1.0), actor="ana")
    for i in range(3):
        ledger.spend(f"mean {i}", PureDP(0.5), {"outputs": [i]}, key=f"k{i}", dataset=SURVEY)
    ledger.raise_total(ZCDP(1.0), reason="second study", actor="bo")
    ledger.spend("other", ZCDP(0.1), {}, dataset=LedgerDataset("content:77", "extract.csv"),
                 allow_other_dataset=True, actor="ana")  # fmt: skip
    return path


def sql(path, statement: str, *params) -> None:
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute(statement, params)


def problems(path) -> list[str]:
    return [str(p) for p in verify_ledger_file(path).problems]


# --- the ledger file --------------------------------------------------------------------------


def test_an_untouched_history_verifies_and_every_record_is_chained(db) -> None:
    report = verify_ledger_file(db)
    assert report.ok and report.records == 7  # start, 3 releases, raise, approval, release
    assert len(report.head) == 64


def test_an_edited_cost_is_named_with_what_it_read_and_what_was_sealed(db) -> None:
    sql(db, "UPDATE records SET cost = '{\"epsilon\": 0.01}' WHERE id = 3")
    assert problems(db) == [
        "record #3: its cost reads ε = 0.01 (pure DP) but was sealed as ε = 0.5 (pure DP): the "
        "history was edited"
    ]
    assert Ledger(db, "project", ZCDP(1.0)).remaining()  # the ledger still opens: verify warns


@pytest.mark.parametrize(
    ("column", "value", "named"),
    [("actor", "someone else", "its actor reads 'someone else' but was sealed as 'local user'"),
     ("reason", "none", "its reason reads 'none' but was sealed as 'second study'"),
     ("payload", '{"outputs": [42]}', "its results (the stored outputs and metadata) were edited"),
     ("created_at", "2020-01-01", "its created_at reads '2020-01-01'")],
)  # fmt: skip
def test_every_edited_field_is_named(db, column, value, named) -> None:
    record = 5 if column == "reason" else 2
    sql(db, f"UPDATE records SET {column} = ? WHERE id = ?", value, record)
    [problem] = problems(db)
    assert problem.startswith(f"record #{record}: {named}")


EDITS_AND_WHAT_THE_AUDIT_SAYS = {
    # Clearing a release's data would let a new ledger take the people on without a raise; the
    # data is named without printing its identity.
    "data unbound": (
        "UPDATE records SET dataset = NULL WHERE id = 2",
        "record #2: its data (“survey.csv”) is not the data it was sealed with: the history was "
        "edited",
    ),
    "a deleted record": (
        "DELETE FROM records WHERE id = 3",
        "record #4: record #3 was deleted: it was sealed after a record that is no longer there",
    ),
    "records deleted at the end, named by the chain's head": (
        "DELETE FROM records WHERE id >= 6",
        "records #6 to #7 were deleted from the end of the history (the chain's head names "
        "record #7)",
    ),
}


@pytest.mark.parametrize(
    ("edit", "problem"), EDITS_AND_WHAT_THE_AUDIT_SAYS.values(), ids=EDITS_AND_WHAT_THE_AUDIT_SAYS
)
def test_an_edit_is_named(db, edit: str, problem: str) -> None:
    sql(db, edit)
    assert problems(db) == [problem]


def test_an_edit_of_the_sealed_copy_too_breaks_its_digest(db) -> None:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        sealed = json.loads(conn.execute("SELECT sealed FROM records WHERE id = 3").fetchone()[0])
    sealed["cost"] = '{"epsilon": 0.01}'
    sql(db, "UPDATE records SET cost = ?, sealed = ? WHERE id = 3", sealed["cost"],
        json.dumps(sealed, sort_keys=True, separators=(",", ":"), ensure_ascii=False))  # fmt: skip
    assert problems(db) == [
        "record #3: its sealed copy was edited as well: it no longer matches its digest"
    ]


def test_reordered_records_are_named(db) -> None:
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as conn:
        conn.execute("UPDATE records SET id = -1 WHERE id = 2")
        conn.execute("UPDATE records SET id = 2 WHERE id = 3")
        conn.execute("UPDATE records SET id = 3 WHERE id = -1")
    assert problems(db)[:2] == [
        "record #2: it holds the content sealed as record #3: records were reordered or renumbered",
        "record #3: it holds the content sealed as record #2: records were reordered or renumbered",
    ]


def test_a_raised_total_edited_in_the_ledgers_table_is_named(db) -> None:
    sql(db, "UPDATE ledgers SET total = '{\"rho\": 100.0}' WHERE name = 'project'")
    assert problems(db) == [
        "ledger “project”: its total reads ρ = 100 but it was started with ρ = 1: the total was "
        "edited"
    ]


# --- a downloaded audit trail -----------------------------------------------------------------


@pytest.fixture(params=["csv", "json"])
def trail_text(request, db) -> str:
    trail = audit_trail(db, identity=SURVEY.identity)
    return to_audit_csv(trail) if request.param == "csv" else to_audit_json(trail)


def edited(text: str, change) -> str:
    """``text`` (a trail as CSV or JSON) with ``change`` applied to its list of entries."""
    rows, head = read_audit(text)
    change(rows)
    return json.dumps({"format": "strata-lab audit trail", "entries": rows, "head": head})


def test_a_trail_lists_who_when_and_what_and_verifies(db, trail_text) -> None:
    rows, _ = read_audit(trail_text)
    assert [(r["what"], r["who"]) for r in rows] == [
        ("ledger started", "ana"), ("release", "local user"), ("release", "local user"),
        ("release", "local user"), ("raise", "bo"), ("approval (same people)", "ana"),
        ("release", "ana"),
    ]  # fmt: skip
    assert rows[3]["loss_after"] == "ε = 1.5 (pure DP)" and rows[4]["reason"] == "second study"
    assert verify_audit(trail_text).ok
    assert compare_with_ledger(trail_text, db) == ()


def test_no_identity_is_in_a_trail(db, trail_text) -> None:
    assert "5e5e5e5e" not in trail_text and "content:" not in trail_text


def test_an_edited_entry_is_named_and_the_ledger_says_which_field(db, trail_text) -> None:
    def cheaper(rows):
        rows[2]["cost"] = "ε = 0.01 (pure DP)"

    text = edited(trail_text, cheaper)
    assert [str(p) for p in verify_audit(text).problems] == [
        "entry #3: its release “mean 1” (record #3) was edited: it no longer matches its digest"
    ]
    assert [str(p) for p in compare_with_ledger(text, db)] == [
        "entry #3: its cost reads 'ε = 0.01 (pure DP)' in the file but 'ε = 0.5 (pure DP)' in "
        "the ledger"
    ]


def test_a_deleted_entry_is_named(db, trail_text) -> None:
    text = edited(trail_text, lambda rows: rows.pop(2))
    assert [str(p) for p in verify_audit(text).problems] == [
        "entry #4: entry #3 was deleted: it was sealed after an entry no longer in the file"
    ]
    assert "record #3 (release “mean 1”" in str(compare_with_ledger(text, db)[-1])


def test_reordered_entries_are_named(trail_text) -> None:
    def swap(rows):
        rows[2], rows[3] = rows[3], rows[2]

    found = [str(p) for p in verify_audit(edited(trail_text, swap)).problems]
    assert "entry #3: it comes after entry #4: the entries were reordered" in found


def test_entries_deleted_at_the_end_are_named_by_the_head(trail_text) -> None:
    found = [str(p) for p in verify_audit(edited(trail_text, lambda rows: rows.pop())).problems]
    assert found == [
        "the file's head names another last entry than entry #6: entries were deleted from its end"
    ]


def test_text_that_is_no_trail_is_refused_with_what_is_missing() -> None:
    with pytest.raises(ValueError, match="not an audit trail: no “# format"):
        read_audit("a,b\n1,2\n")
    with pytest.raises(ValueError, match="its JSON does not parse"):
        read_audit("{oops")
