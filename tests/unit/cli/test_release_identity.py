"""The command line knows a dataset by its content: one file is one release whichever engine reads
it, a new ledger is no new budget for released data, each release states its people's loss in
all, and ``strata-lab ledger`` checks and prints the history."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore.foundations.accounting import PureDP
from dpcore.foundations.dataset import bytes_identity
from dpcore.foundations.ledger import Ledger
from dpcore.release import ReleaseRecord, to_script
from strata_cli.main import main
from tests.scripts import assert_reruns_as_recorded


@pytest.fixture
def data(tmp_path) -> Path:
    rng = np.random.default_rng(1)
    groups = np.repeat(["a", "b", "c"], [300, 120, 60])
    frame = pd.DataFrame({"g": groups, "v": rng.uniform(1, 9, len(groups))})
    path = tmp_path / "survey.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture
def ledger_file(tmp_path) -> Path:
    path = tmp_path / "ledger.sqlite"
    Ledger(path, "default", PureDP(3.0))
    Ledger(path, "fresh", PureDP(10.0))
    return path


def release_args(data: Path, ledger: Path, *extra: str) -> list[str]:
    return [
        "release", str(data), "--by", "g", "--value", "v", "--bounds", "0,10",
        "--estimator", "laplace", "--epsilon", "1", "--sizes-public", "--ledger", str(ledger),
        *extra,
    ]  # fmt: skip


def test_one_file_is_one_release_on_pandas_duckdb_and_after_a_rename(
    capsys, data, ledger_file, tmp_path
):
    assert main(release_args(data, ledger_file, "--engine", "pandas")) == 0
    first = json.loads(capsys.readouterr().out)
    renamed = tmp_path / "elsewhere" / "copy of survey.csv"
    renamed.parent.mkdir()
    renamed.write_bytes(data.read_bytes())
    for path, engine in ((data, "duckdb"), (renamed, "pandas")):
        assert main(release_args(path, ledger_file, "--engine", engine)) == 0
        captured = capsys.readouterr()
        assert "this plan was released before" in captured.err
        assert json.loads(captured.out)["outputs"] == first["outputs"]
    ledger = Ledger.open(ledger_file, "default")
    assert len(ledger.history()) == 1 and ledger.remaining() == {"epsilon": 2.0}


def test_another_ledger_is_refused_in_one_line_naming_the_one_to_use(capsys, data, ledger_file):
    assert main(release_args(data, ledger_file)) == 0
    capsys.readouterr()
    assert main(release_args(data, ledger_file, "--ledger-name", "fresh", "--title", "x")) == 1
    [error] = capsys.readouterr().err.splitlines()
    assert error.startswith("strata-lab: error: Release refused: “survey.csv” was released on "
                            "under ledger “default”")  # fmt: skip
    assert "ε = 1 (pure DP) has been spent on them in all" in error
    assert "pass --ledger-name default" in error and "Budget page" in error
    assert Ledger.open(ledger_file, "fresh").history() == []


def test_each_release_states_the_peoples_loss_and_never_their_identity(capsys, data, ledger_file):
    printed = {}
    for title, output in (("one", "json"), ("two", "csv")):
        assert main(release_args(data, ledger_file, "--title", title, "--format", output)) == 0
        printed[title] = capsys.readouterr().out
    for out in printed.values():
        assert bytes_identity(data.read_bytes()).removeprefix("content:")[:12] not in out
        assert "content:" not in out and "legacy:" not in out
    loss = json.loads(printed["one"])["metadata"]["cumulative_loss"]
    assert (loss["epsilon"], loss["releases"], loss["ledgers"]) == (1.0, 1, ["default"])
    assert "# cumulative_loss: ε = 2 (pure DP) (or ρ = 1 (zCDP)" in printed["two"]


def test_a_declared_identity_is_for_spark_tables_only(capsys, data, ledger_file):
    argv = release_args(data, ledger_file, "--dataset-identity", "survey 2024")
    assert main(argv) == 1
    assert "--dataset-identity names a Spark table" in capsys.readouterr().err


# --- strata-lab ledger ------------------------------------------------------------------------


def test_ledger_verify_passes_an_untouched_file_and_names_an_edited_record(
    capsys, data, ledger_file
):
    assert main(release_args(data, ledger_file)) == 0
    capsys.readouterr()
    assert main(["ledger", "verify", "--ledger", str(ledger_file)]) == 0
    assert "all 3 records are as recorded" in capsys.readouterr().out
    with contextlib.closing(sqlite3.connect(ledger_file, isolation_level=None)) as conn:
        conn.execute("UPDATE records SET cost = '{\"epsilon\": 0.1}' WHERE entry = 'release'")
    assert main(["ledger", "verify", "--ledger", str(ledger_file)]) == 1
    out = capsys.readouterr().out
    assert "1 problem(s) in 3 records" in out
    assert "- record #3: its cost reads ε = 0.1 (pure DP) but was sealed as ε = 1 (pure DP)" in out


def test_ledger_audit_prints_a_trail_that_verify_checks_against_the_ledger(
    capsys, data, ledger_file, tmp_path
):
    assert main(release_args(data, ledger_file)) == 0
    capsys.readouterr()
    assert main(["ledger", "audit", "--ledger", str(ledger_file), "--data", str(data)]) == 0
    trail = capsys.readouterr().out
    assert trail.startswith("# format: strata-lab audit trail\n# data: “survey.csv”")
    assert "content:" not in trail
    saved = tmp_path / "trail.csv"
    saved.write_text(trail)
    verify = ["ledger", "verify", str(saved), "--ledger", str(ledger_file)]
    assert main(verify) == 0
    assert "all 2 entries are as recorded" in capsys.readouterr().out
    saved.write_text(trail.replace('"local user"', '"someone else"', 1))
    assert main(verify) == 1
    out = capsys.readouterr().out
    assert (
        "- entry #1: its ledger started “started with ε = 3 (pure DP)” (record #1) was edited"
        in out
    )
    assert (
        "- entry #1: its who reads 'someone else' in the file but 'local user' in the ledger" in out
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["ledger", "verify", "--ledger", "missing.sqlite"], "no ledger file at missing.sqlite"),
     (["ledger", "audit", "--ledger", "{ledger}", "--ledger-name", "nope"],
      "has no ledger named 'nope'; it has: 'default', 'fresh'"),
     (["ledger", "verify", "{data}"], "not an audit trail")],
)  # fmt: skip
def test_ledger_mistakes_are_one_line(capsys, data, ledger_file, argv, message):
    argv = [a.format(ledger=ledger_file, data=data) for a in argv]
    assert main(argv) == 1
    [error] = capsys.readouterr().err.splitlines()
    assert error.startswith("strata-lab: error: ") and message in error


@pytest.mark.slow
def test_the_script_of_a_pandas_release_reads_the_file_and_finds_the_release(
    capsys, data, ledger_file, tmp_path
):
    assert main(release_args(data, ledger_file, "--engine", "pandas")) == 0
    ledger = Ledger.open(ledger_file, "default")
    record = ReleaseRecord.from_ledger(ledger.history()[0])
    script = to_script(record)
    assert "frame, dataset = read_dataset(PATH)" in script
    assert "PandasEngine(frame, 'survey.csv', identity=dataset.identity)" in script
    assert_reruns_as_recorded(script, record, tmp_path, ledger, data.parent)
