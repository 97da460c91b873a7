"""A release's CSV and JSON exports: formula cells escaped, numbers kept, metadata carried, no
hash of the data, and where the list of groups came from."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.mean.estimators import LaplaceMean
from dpcore.foundations.accounting import PureDP
from dpcore.release.commit import ReleaseRecord, release
from dpcore.release.exports import (
    declared_public_statement,
    escape_cell,
    public_metadata,
    shares_statement,
    to_csv,
    to_json,
)
from tests.unit.dpcore.release_helpers import assert_no_data_hash, make_plan

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


@pytest.mark.parametrize(
    "cell, expected",
    [
        ("=SUM(A1)", "'=SUM(A1)"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@x", "'@x"),
        ("\t=1", "\\t=1"),
        ("\r=1", "\\r=1"),
        ("a\r=HYPERLINK(x)", "a\\r=HYPERLINK(x)"),
        ("line\u2028=1\x1b", "line\\u2028=1\\x1b"),
        ("White × Male", "White × Male"),
        ("a=b", "a=b"),
        ("", ""),
    ],
)
def test_escape_cell_neutralises_text_formulas(cell, expected):
    assert escape_cell(cell) == expected


@pytest.mark.parametrize("number", [-1.5, -3, 0, 2.25, np.float64(-0.5), np.int64(-7)])
def test_escape_cell_leaves_numbers_alone(number):
    escaped = escape_cell(number)
    assert escaped == number
    assert type(escaped) is type(number)


@pytest.fixture
def formula_record(ledger) -> ReleaseRecord:
    """A release whose group labels look like spreadsheet formulas and whose estimates are < 0."""
    labels = ["=SUM(A1)", "+cmd", "-2", "@x", "plain", "Apt #4"]
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {"group": np.repeat(labels, 30), "change": rng.uniform(-100.0, 0.0, 30 * len(labels))}
    )
    plan = make_plan(frame, name="changes.csv", by=("group",), value="change",
                     estimator=LaplaceMean(bounds=(-100.0, 0.0)),
                     label="=HYPERLINK(\"http://example.com\")")  # fmt: skip
    return release(plan, ledger, noise="simulation", rng=6)


def test_csv_escapes_formula_cells_keeps_numbers_and_carries_metadata(formula_record):
    text = to_csv(formula_record)
    comments = [line for line in text.splitlines() if line.startswith("#")]
    metadata = formula_record.metadata
    for expected in (
        '# release: \'=HYPERLINK("http://example.com")',
        "# dataset: changes.csv",
        "# budget: ε = 1, ρ = 0.5",
        f"# mechanism: {metadata['noise']}",
    ):
        assert expected in comments, expected
    assert_no_data_hash(text, formula_record)

    rows = list(csv.reader(line for line in io.StringIO(text) if not line.startswith("#")))
    assert rows[0] == ["level", "group", "estimate", "low", "high", "public_share"]
    for row in rows[1:]:
        for cell in row:
            try:
                float(cell)
            except ValueError:
                assert not cell.startswith(FORMULA_PREFIXES), f"unescaped formula cell {cell!r}"
    groups = {row[1] for row in rows[1:]}
    assert groups == {"'=SUM(A1)", "'+cmd", "'-2", "'@x", "plain", "Apt #4", "All"}

    table = pd.read_csv(io.StringIO(text), comment="#")  # the documented way to read it back
    assert len(table) == 7
    for column in ("estimate", "low", "high"):
        assert pd.api.types.is_float_dtype(table[column]), column
        assert table[column].notna().all(), column
    assert (table["estimate"] < 0).all()  # negative numbers were not escaped
    np.testing.assert_allclose(table["estimate"], formula_record.frame["estimate"], rtol=1e-15)
    assert table.loc[table["group"] == "Apt #4", "public_share"].item() == pytest.approx(1 / 6)


def test_no_physical_line_of_the_csv_starts_a_formula_whatever_the_names_hold(ledger):
    """Control characters in a column name, the group labels, the file name and the title are
    escaped on every line, metadata included: none can start a line with a formula."""
    frame = pd.DataFrame({
        "group\r=cmd()": np.repeat(["a\r=HYPERLINK(x)", "b\n@SUM(1)", "c\u2028+1"], 20),
        "hours\r-2": np.linspace(1.0, 9.0, 60),
    })  # fmt: skip
    plan = make_plan(frame, name="data\r=1.csv", by=("group\r=cmd()",), value="hours\r-2",
                     estimator=LaplaceMean(bounds=(0.0, 10.0)), label="title\r@x")  # fmt: skip
    text = to_csv(release(plan, ledger, noise="simulation", rng=3))
    lines = re.split("\r\n|\r|\n|\x0b|\x0c|\x1c|\x1d|\x1e|\x85|\u2028|\u2029", text)
    assert lines[-1] == ""
    for line in lines[:-1]:
        assert line and not line.startswith((*FORMULA_PREFIXES, "\t")), repr(line)
    assert "# release: title\\r@x" in lines
    table = pd.read_csv(io.StringIO(text), comment="#")
    assert sorted(table["group"]) == ["All", "a\\r=HYPERLINK(x)", "b\\n@SUM(1)", "c\\u2028+1"]


def test_json_round_trips_without_the_script(formula_record):
    text = to_json(formula_record)

    def refuse(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")

    loaded = json.loads(text, parse_constant=refuse)
    # Group rows publish their shares, so the metadata says where they come from.
    shares = {"shares": shares_statement(formula_record.metadata["plan"]["strata"])}
    declared = {"declared_public_statement": declared_public_statement(formula_record.metadata)}
    assert loaded == {
        "metadata": public_metadata(formula_record.metadata) | declared | shares,
        "outputs": formula_record.outputs,
    }
    assert loaded["metadata"]["plan"]["dataset"] == {"name": "changes.csv"}
    assert not {"key", "run_id", "script"} & set(loaded["metadata"])
    assert_no_data_hash(text, formula_record)


def test_csv_header_is_escaped_like_the_cells(formula_record):
    outputs = [{"=HYPERLINK(1)" if k == "group" else k: v for k, v in row.items()}
               for row in formula_record.outputs]  # fmt: skip
    record = dataclasses.replace(formula_record, outputs=outputs)
    header = next(line for line in to_csv(record).splitlines() if not line.startswith("#"))
    assert '"\'=HYPERLINK(1)"' in header.split(",")


def test_every_export_says_where_the_list_of_groups_came_from(demo, ledger):
    """Groups from the data, a list prefilled from the data and accepted as public, and a
    declared list: the CSV's groups line and the review say which, truthfully."""
    sex = (("sex", ("Female", "Male")),)
    cases = {
        "the combinations present in the data": {},
        "prefilled from the categories found in the data": {
            "categories": sex, "categories_source": "data",
        },
        "a declared public list": {"categories": sex},
    }  # fmt: skip
    for said, options in cases.items():
        plan = make_plan(demo, by=("sex",), spec_options=options, label=said, budget=PureDP(0.1))
        record = release(plan, ledger, noise="simulation", rng=1)
        groups = next(line for line in to_csv(record).splitlines() if line.startswith("# groups"))
        assert said in groups, groups
