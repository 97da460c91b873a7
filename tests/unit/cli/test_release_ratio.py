"""``strata-lab release --analysis ratio`` and ``strata-lab plan --analysis ratio`` on files
through an engine: the same seeded release on pandas, a Parquet file and a folder of parts read
by DuckDB; the ledger charged once, never by a dry run or a refused command; only DP outputs and
public metadata printed; every mistake one line on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.ledger import Ledger
from tests.unit.cli.helpers import (
    assert_mistake_spends_nothing,
    release_twice,
    replace,
    run,
    without,
)

SIZES = {"a": 600, "b": 300, "c": 150}


@pytest.fixture
def data(tmp_path) -> Path:
    """Groups a, b, c of ``g``; a score ``s`` in [0, 1], a 0/1 label ``y`` drawn from it, a
    label ``t`` up to 2, a weight ``w``; people ``pid`` owning 1 to 4 rows; one Parquet file."""
    rng = np.random.default_rng(0)
    groups = np.repeat(list(SIZES), list(SIZES.values()))
    score = rng.beta(2, 3, len(groups))
    score[::70] = np.nan
    label = (rng.random(len(groups)) < score).astype(float)
    frame = pd.DataFrame({
        "g": groups, "s": score, "y": label, "t": 2 * label, "w": rng.uniform(1, 3, len(groups)),
        "pid": rng.integers(0, 500, len(groups)), "note": "x",
    })  # fmt: skip
    path = tmp_path / "data.parquet"
    frame.to_parquet(path)
    return path


def ratio_args(data: Path, *extra: str) -> list[str]:
    return [
        "release", str(data), "--by", "g", "--analysis", "ratio", "--score", "s", "--label", "y",
        "--score-bound", "1", "--estimator", "gaussian", "--rho", "0.5", "--sizes-public",
        *extra,
    ]  # fmt: skip


def released(document: dict) -> np.ndarray:
    """Each row's ratio, interval and noisy sums."""
    return np.array(
        [[r["estimate"], r["low"], r["high"], *(r[k] for k in r if k.startswith("noisy_sum_"))]
         for r in document["outputs"]],
        dtype=float,
    )  # fmt: skip


@pytest.mark.parametrize(
    "extra",
    [[], ["--person", "pid", "--max-rows", "2"],
     ["--weight", "w", "--weight-bound", "3", "--label", "t", "--label-bound", "2",
      "--estimator", "laplace"]],
    ids=["rows", "person", "weighted-laplace"],
)  # fmt: skip
def test_a_dry_run_is_the_same_on_pandas_a_file_and_a_folder(capsys, data, tmp_path, extra):
    folder = tmp_path / "parts"
    folder.mkdir()
    frame = pd.read_parquet(data).sample(frac=1.0, random_state=3)
    for i, part in enumerate(np.array_split(np.arange(len(frame)), 3)):
        frame.iloc[part].to_parquet(folder / f"p{i}.parquet")
    argv = ratio_args(data, "--dry-run", "--seed", "4", *extra)
    runs = [
        run(capsys, [*argv, "--engine", "pandas"])[0],
        run(capsys, [*argv, "--engine", "duckdb"])[0],
        run(capsys, [argv[0], str(folder), *argv[2:]])[0],  # a folder defaults to duckdb
    ]
    for other in runs[1:]:
        np.testing.assert_allclose(released(other), released(runs[0]), rtol=1e-9, atol=1e-9)
    assert [r["group"] for r in runs[0]["outputs"]] == ["a", "b", "c", "All groups"]
    assert np.isfinite(released(runs[0])[:, 0]).all()
    assert "dry run" in runs[0]["metadata"]["noise"]
    other_seed = run(capsys, [*replace(argv, "--seed", "5"), "--engine", "duckdb"])[0]
    assert not np.allclose(released(other_seed), released(runs[1]))


def test_a_release_spends_once_and_a_repeat_prints_the_record(capsys, data, tmp_path):
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path, "default", ZCDP(1.0))
    argv = ratio_args(data, "--ledger", str(path))
    first, second, err = release_twice(capsys, ledger, argv, {"rho": pytest.approx(0.5)})
    assert "released before" in err and second["outputs"] == first["outputs"]
    assert "OpenDP" in first["metadata"]["noise"]
    run(capsys, ratio_args(data, "--dry-run", "--ledger", str(path)))
    assert ledger.remaining() == {"rho": pytest.approx(0.5)}


def test_the_output_holds_dp_outputs_and_states_the_privacy_unit(capsys, data):
    out, err = run(capsys, ratio_args(data, "--dry-run", "--person", "pid", "--max-groups", "1",
                                      "--max-rows", "3", "--format", "csv"))  # fmt: skip
    assert "fingerprint" not in out and "release-" not in out
    assert "# privacy_unit: one person (column pid), at most 1 group(s) and 3 row(s)" in out
    assert "noisy_sum_ws" in out and "left out" in err and "curator's view" in err
    text, _ = run(capsys, ratio_args(data, "--dry-run", "--format", "text"))
    assert "Calibration ratio Σs/Σy" in text and "All groups" in text
    document, _ = run(capsys, ratio_args(data, "--dry-run", "--person", "pid"))
    assert document["metadata"]["plan"]["privacy_unit"]["column"] == "pid"
    assert "fingerprint" not in json.dumps(document)
    # The groups' rows stay with the curator: no exact count or sum in the output.
    assert all(k.startswith(("noisy_", "level", "group", "estimate", "low", "high", "variance",
                             "flag")) for k in document["outputs"][0])  # fmt: skip


def mixed_parts(data: Path) -> Path:
    """Two parts, the second without the score column."""
    folder = data.parent / "mixed"
    folder.mkdir()
    frame = pd.read_parquet(data)
    frame.iloc[:500].to_parquet(folder / "p0.parquet")
    frame.iloc[500:].drop(columns="s").to_parquet(folder / "p1.parquet")
    return folder


ERRORS = {
    "text score": (lambda a, d: replace(a, "--score", "note"),
                   "The score column `note` is not numeric (its values are text)"),
    "absent label": (lambda a, d: replace(a, "--label", "z"),
                     "`z` is not in the data in use; its columns are: g, s, y, t"),
    "weight bound below 1": (lambda a, d: [*a, "--weight", "w", "--weight-bound", "0.5"],
                             "--weight-bound must be at least 1"),
    "label not 0/1": (lambda a, d: replace(a, "--label", "t"),
                      "label column `t` has values other than 0 and 1"),
    "score missing from a part": (lambda a, d: [a[0], str(mixed_parts(d)), *a[2:]],
                                  "do not all have the same columns"),
    "coinpress": (lambda a, d: replace(a, "--estimator", "coinpress"),
                  "pass --estimator laplace or --estimator gaussian"),
    "shares": (lambda a, d: [*a, "--shares", "noisy-counts"], "--shares is for the mean"),
    "private sizes": (lambda a, d: without(a, "--sizes-public"),
                      "declare each grouping column's categories with --codebook"),
    "no score bound": (lambda a, d: [x for i, x in enumerate(a)
                                     if "--score-bound" not in a[max(i - 1, 0): i + 1]],
                       "the ratio needs --score-bound"),
    "value with the ratio": (lambda a, d: [*a, "--value", "s"], "--value is for the mean"),
    "mean without value": (lambda a, d: replace(a, "--analysis", "mean"),
                           "the mean needs --value and --bounds"),
}  # fmt: skip


@pytest.mark.parametrize("case", ERRORS.values(), ids=ERRORS.keys())
def test_mistakes_are_one_line_and_spend_nothing(capsys, data, tmp_path, case):
    assert_mistake_spends_nothing(capsys, tmp_path, ZCDP(1.0), ratio_args, data, case)


def test_plan_reads_a_folder_through_duckdb_and_bounds_each_person(capsys, data, tmp_path):
    """The plan on a folder of parts is the plan on the file; a person bound to 2 rows needs
    more budget (each sum's sensitivity doubles)."""
    folder = tmp_path / "parts"
    folder.mkdir()
    frame = pd.read_parquet(data)
    frame.iloc[:400].to_parquet(folder / "p0.parquet")
    frame.iloc[400:].to_parquet(folder / "p1.parquet")
    argv = [
        "plan", str(data), "--by", "g", "--analysis", "ratio", "--score", "s", "--label", "y",
        "--score-bound", "1", "--estimator", "gaussian", "--composition", "zcdp",
        "--target-abs=0.3", "--check-replicates", "0", "--sizes-public",
    ]  # fmt: skip
    on_file = run(capsys, argv)[0]
    on_folder = run(capsys, [argv[0], str(folder), *argv[2:]])[0]
    assert on_folder["rho"] == pytest.approx(on_file["rho"], rel=1e-9)
    person = run(capsys, [*argv, "--person", "pid", "--max-rows", "2"])[0]
    assert person["rho"] > 2 * on_file["rho"]
    # The mean plans from an engine's pass with bounded persons too (issue 37, item 5).
    mean = [*replace(argv, "--analysis", "mean"), "--value", "s", "--bounds", "0,1"]
    alone = run(capsys, mean)[0]
    bounded = run(capsys, [*mean, "--person", "pid", "--max-rows", "2"])[0]
    assert bounded["rho"] > 2 * alone["rho"]
