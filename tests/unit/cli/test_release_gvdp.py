"""``strata-lab release --analysis gvdp``: the general estimator's mean released on files through
an engine: the same seeded release on pandas and on a folder of shuffled Parquet parts read by
DuckDB; a real release charges ρ once; every mistake one line on stderr, nothing spent."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.ledger import Ledger
from strata_cli.main import main
from tests.frames import write_shuffled_parts
from tests.unit.cli.helpers import assert_one_error_line


@pytest.fixture
def data(tmp_path) -> tuple[Path, Path]:
    """Groups a (1,200 rows) and b (600) of ``g``, hours ``v`` in [0, 80] with a few missing;
    one Parquet file, and the same rows shuffled into three parts in a folder."""
    rng = np.random.default_rng(0)
    groups = np.repeat(["a", "b"], [1200, 600])
    hours = rng.normal(40, 10, len(groups)).clip(0, 80).round()
    hours[::97] = np.nan
    frame = pd.DataFrame({"g": groups, "v": hours, "pid": rng.integers(0, 900, len(groups))})
    path = tmp_path / "hours.parquet"
    frame.to_parquet(path)
    return path, write_shuffled_parts(frame, tmp_path / "parts", seed=2)


def gvdp_args(data: Path, *extra: str, rho: str = "0.5") -> list[str]:
    return [
        "release", str(data), "--by", "g", "--value", "v", "--bounds", "0,80", "--analysis",
        "gvdp", "--estimator", "gaussian", "--rho", rho, "--subsets", "60", "--spread", "20",
        "--sizes-public", *extra,
    ]  # fmt: skip


def run(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def released(document: dict) -> np.ndarray:
    return np.array([[r["estimate"], r["low"], r["high"]] for r in document["outputs"]], float)


def test_a_seeded_dry_run_is_the_same_on_pandas_and_on_parquet_parts(capsys, data):
    path, folder = data
    seeded = ("--dry-run", "--seed", "4")
    on_pandas = run(capsys, gvdp_args(path, *seeded, "--engine", "pandas", rho="20"))
    on_parts = run(capsys, gvdp_args(folder, *seeded, "--engine", "duckdb", rho="20"))
    np.testing.assert_allclose(released(on_parts), released(on_pandas), rtol=1e-9)
    assert [r["group"] for r in on_parts["outputs"]] == ["a", "b", "All"]
    assert np.all(np.abs(released(on_parts)[:, 0] - 40) < 3)  # near the hours' mean
    other = run(capsys, gvdp_args(folder, "--dry-run", "--seed", "5", rho="20"))
    assert not np.allclose(released(other), released(on_parts))


def test_a_release_spends_rho_once(capsys, data, tmp_path):
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path, "default", ZCDP(1.0))
    argv = gvdp_args(data[1], "--ledger", str(path))
    first = run(capsys, argv)
    assert ledger.remaining() == {"rho": pytest.approx(0.5)}
    assert "OpenDP" in first["metadata"]["noise"]
    assert run(capsys, argv)["outputs"] == first["outputs"]
    assert ledger.remaining() == {"rho": pytest.approx(0.5)}


@pytest.mark.parametrize(
    ("extra", "text"),
    [
        (("--person", "pid"), "counts each row as one person"),
        (("--subsets", "5000"), "use k ≤"),
        (("--estimator", "laplace"), "pass --estimator gaussian"),
        (("--value", "g"), "`g`"),
    ],
)
def test_mistakes_are_one_line_and_spend_nothing(capsys, data, tmp_path, extra, text):
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path, "default", ZCDP(1.0))
    argv = gvdp_args(data[1], "--ledger", str(path))
    for option, value in zip(extra[::2], extra[1::2], strict=True):
        if option in argv:
            argv[argv.index(option) + 1] = value
        else:
            argv += [option, value]
    assert main(argv) == 1
    err = capsys.readouterr().err.splitlines()  # notes on the rows read may come first
    errors = [line for line in err if line.startswith("strata-lab: error: ")]
    assert len(errors) == 1 and text in errors[0] and err[-1] == errors[0], err
    assert all(line.startswith("strata-lab: note: ") for line in err[:-1])
    assert ledger.remaining() == {"rho": pytest.approx(1.0)}


def test_private_group_sizes_are_refused_before_any_pass(capsys, data):
    argv = [a for a in gvdp_args(data[1]) if a != "--sizes-public"]
    assert_one_error_line(capsys, argv, 1, "treats each group's row count as public")
