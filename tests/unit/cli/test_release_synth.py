"""``strata-lab release --analysis synth`` and ``plan --analysis synth`` through an engine: the
same seeded synthetic rows on pandas, a Parquet file and a folder read by DuckDB; the rows as
CSV, JSON or a text summary; the ledger charged once, never by a dry run or a refused command;
every mistake one line on stderr."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.ledger import Ledger
from strata_cli.main import main
from tests.unit.cli.helpers import (
    assert_mistake_spends_nothing,
    release_twice,
    replace,
    without,
)


@pytest.fixture
def data(tmp_path) -> Path:
    """Groups North, South, East; an age to bucket, a job, a yes/no, 0/1 codes; a person id."""
    rng = np.random.default_rng(0)
    n = 900
    frame = pd.DataFrame({
        "region": rng.choice(["North", "South", "East"], n), "age": rng.integers(18, 80, n),
        "job": rng.choice(["clerk", "nurse", "farmer"], n), "owns": rng.random(n) < 0.5,
        "paid": rng.integers(0, 2, n), "pid": rng.integers(0, 300, n),
    })  # fmt: skip
    frame["town"] = "town " + frame["pid"].astype(str)
    path = tmp_path / "people.parquet"
    frame.to_parquet(path)
    return path


def parts(data: Path, drop: str | None = None) -> Path:
    """The file in three shuffled parts (the last without ``drop``)."""
    folder = data.parent / f"parts-{drop}"
    folder.mkdir()
    frame = pd.read_parquet(data).sample(frac=1.0, random_state=4)
    for i, part in enumerate(np.array_split(np.arange(len(frame)), 3)):
        piece = frame.iloc[part]
        (piece.drop(columns=drop) if drop and i == 2 else piece).to_parquet(folder / f"{i}.parquet")
    return folder


def synth_args(data: Path, *extra: str) -> list[str]:
    return [
        "release", str(data), "--by", "region", "--analysis", "synth", "--synthesizer", "mwem",
        "--columns", "age,job,owns,paid", "--synth-edges", "age=30;50", "--categorical", "paid",
        "--synth-rows", "60", "--estimator", "laplace", "--epsilon", "1", "--sizes-public",
        *extra,
    ]  # fmt: skip


def run(capsys, argv: list[str]) -> tuple[str, str]:
    assert main(argv) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def rows(csv_text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(csv_text), comment="#", dtype=str)


def test_a_dry_run_gives_the_same_rows_on_pandas_a_file_and_a_folder(capsys, data):
    argv = synth_args(data, "--dry-run", "--seed", "4", "--format", "csv")
    found = [
        rows(run(capsys, [*argv, "--engine", "pandas"])[0]),
        rows(run(capsys, [*argv, "--engine", "duckdb"])[0]),
        rows(run(capsys, [argv[0], str(parts(data)), *argv[2:]])[0]),  # a folder: DuckDB
    ]
    for other in found[1:]:
        pd.testing.assert_frame_equal(other, found[0])
    assert list(found[0].columns) == ["age", "job", "owns", "paid", "region"]
    assert len(found[0]) == 60 and set(found[0]["age"]) <= {"< 30", "[30, 50)", "≥ 50"}
    other_seed = rows(run(capsys, replace(argv, "--seed", "5"))[0])
    assert not other_seed.equals(found[0])


def test_json_and_text_say_what_was_released(capsys, data):
    document = json.loads(run(capsys, synth_args(data, "--dry-run"))[0])
    metadata = document["metadata"]
    assert len(document["outputs"]) == 60 and "dry run" in metadata["noise"]
    assert metadata["plan"]["estimator"]["categories_treated_as_public"] == ["job", "owns", "paid"]
    assert "fingerprint" not in json.dumps(document)
    text = run(capsys, synth_args(data, "--dry-run", "--format", "text"))[0]
    assert text.startswith("Synthetic data (MWEM), stratified by region")
    assert "… and 40 more rows (60 in all; --format csv or json gives every row)" in text


def test_a_release_spends_once_and_a_repeat_prints_the_record(capsys, data, tmp_path):
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path, "default", ZCDP(1.0))
    argv = synth_args(parts(data), "--ledger", str(path), "--format", "csv")
    first, second, err = release_twice(capsys, ledger, argv, {"rho": pytest.approx(0.5)})
    assert "released before" in err and rows(second).equals(rows(first))
    run(capsys, synth_args(data, "--dry-run", "--ledger", str(path)))
    assert ledger.remaining() == {"rho": pytest.approx(0.5)}


FINE_AGE = "age=" + ";".join(f"{x / 5:g}" for x in range(90, 400))
"""310 public edges: 311 buckets, which with the towns exceed the histogram's cells."""

ERRORS = {
    "no edges": (lambda a, d: replace(a, "--columns", "age,job,owns,pid"),
                 "Column `pid` is numeric: type public bucket edges for it (e.g. “25, 45, 65”; "
                 "on the command line --synth-edges pid=25;45;65), or treat its values as "
                 "categories"),
    "absent column": (lambda a, d: replace(a, "--columns", "age,job,boat"),
                      "--columns: no column 'boat' in the data"),
    "column missing from a part": (lambda a, d: [a[0], str(parts(d, drop="job")), *a[2:]],
                                   "do not all have the same columns"),
    "mst on a folder": (lambda a, d: [a[0], str(parts(d)), *[
        "--rho" if x == "--epsilon" else x
        for x in replace(replace(a, "--synthesizer", "mst"), "--estimator", "gaussian")[2:]
    ]], "MST and AIM are fitted by OpenDP"),
    "person": (lambda a, d: [*a, "--person", "pid"], "leave out --person"),
    "private sizes": (lambda a, d: without(a, "--sizes-public"), "pass public shares with --shares"),
    "noisy shares": (lambda a, d: [*a, "--shares", "noisy-counts"], "--shares is for the mean"),
    "value": (lambda a, d: [*a, "--value", "age"], "--value is for the mean"),
    "gaussian mwem": (lambda a, d: replace(a, "--estimator", "gaussian"),
                      "pass --estimator laplace"),
    "too many cells": (lambda a, d: replace(replace(replace(replace(
        a, "--synthesizer", "histogram"), "--columns", "age,job,owns,paid,town"),
        "--categorical", "paid"), "--synth-edges", FINE_AGE),
        "cells (age (311) × job (3) × owns (2) × paid (2) × town ("),
    "many codes": (lambda a, d: [a[0], str(parts(d)), *replace(replace(
        a, "--columns", "age,job,owns,pid"), "--categorical", "paid,pid")[2:]],
        "`pid` is treated as categories but holds numbers that are not category codes"),
}  # fmt: skip


@pytest.mark.parametrize("case", ERRORS.values(), ids=ERRORS.keys())
def test_mistakes_are_one_line_and_spend_nothing(capsys, data, tmp_path, case):
    assert_mistake_spends_nothing(capsys, tmp_path, ZCDP(1.0), synth_args, data, case)


def test_plan_reads_a_folder_through_duckdb_as_it_reads_the_file(capsys, data):
    argv = [
        "plan", str(data), "--by", "region", "--analysis", "synth", "--synthesizer",
        "independent", "--columns", "age,job,owns,paid", "--synth-edges", "age=30;50",
        "--categorical", "paid", "--synth-rows", "300", "--estimator", "laplace",
        "--target-abs=0.8", "--check-replicates", "0", "--sizes-public",
    ]  # fmt: skip
    on_file = json.loads(run(capsys, argv)[0])
    on_folder = json.loads(run(capsys, [argv[0], str(parts(data)), *argv[2:], "--engine",
                                        "duckdb"])[0])  # fmt: skip
    assert on_file["epsilon"] is not None
    assert on_folder["epsilon"] == pytest.approx(on_file["epsilon"], rel=1e-12)
    assert on_folder["groups"] == on_file["groups"]
