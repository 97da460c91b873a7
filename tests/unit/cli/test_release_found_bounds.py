"""``strata-lab release --bounds auto``: the mean finds its bounds privately within a search
range, pays its share of the budget, publishes the bounds on every row and says so in its
metadata; the same dry run on pandas and DuckDB; every mistake one line on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore.foundations.accounting import PureDP
from dpcore.foundations.ledger import Ledger
from strata_cli.main import main


@pytest.fixture
def data(tmp_path) -> Path:
    """Groups a and b of ``g``, an income-like value ``v`` (log-normal, a few blanks)."""
    rng = np.random.default_rng(3)
    groups = np.repeat(["a", "b"], [3000, 1500])
    value = rng.lognormal(10, 0.7, groups.size)
    value[::97] = np.nan
    path = tmp_path / "data.parquet"
    pd.DataFrame({"g": groups, "v": value}).to_parquet(path)
    return path


def release_args(data: Path, bounds: str, *extra: str) -> list[str]:
    return [
        "release", str(data), "--by", "g", "--value", "v", "--bounds", bounds,
        "--estimator", "laplace", "--epsilon", "1", "--sizes-public", "--dry-run", *extra,
    ]  # fmt: skip


def released(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("bounds", "extra", "fraction", "scope"),
    [
        ("auto", ["--search-range", "0,10000000"], 0.2, "pooled"),
        ("auto:0.3", ["--search-range", "0,10000000", "--bounds-per-group"], 0.3, "per_group"),
        ("auto", [], 0.2, "pooled"),
    ],
)
def test_bounds_auto_finds_the_bounds_within_the_search_range_and_publishes_them(
    capsys, data, bounds, extra, fraction, scope
):
    document = released(capsys, release_args(data, bounds, *extra))
    facts = document["metadata"]["plan"]["bounds"]
    assert facts["source"] == "private" and facts["fraction"] == fraction
    assert facts["scope"] == scope
    assert facts["cost"] == {"kind": "pure", "epsilon": pytest.approx(fraction)}
    search = [0.0, 1e7] if extra else [-1e9, 1e9]
    assert facts["search_range"] == search
    assert "found privately" in document["metadata"]["intervals"]
    frame = pd.read_parquet(data)
    for row in document["outputs"]:
        assert search[0] <= row["clip_low"] <= row["estimate"] <= row["clip_high"] <= search[1]
        # A range that keeps most of an income whose values run from about 2,000 to 200,000.
        assert row["clip_low"] < 15_000 and 60_000 < row["clip_high"] < 2e6
    assert frame["v"].max() > 0  # the data was read


def test_the_found_bounds_are_the_same_on_pandas_and_duckdb(capsys, data):
    argv = release_args(data, "auto", "--search-range", "0,1e7", "--seed", "2")
    runs = [released(capsys, [*argv, "--engine", engine]) for engine in ("pandas", "duckdb")]
    rows = [
        [(r["clip_low"], r["clip_high"], r["estimate"]) for r in doc["outputs"]] for doc in runs
    ]
    np.testing.assert_allclose(rows[0], rows[1], rtol=1e-9)


def test_a_real_release_charges_the_whole_budget_once(capsys, data, tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", "default", PureDP(3.0))
    argv = [
        a for a in release_args(data, "auto:0.25", "--search-range", "0,1e7") if a != "--dry-run"
    ]
    document = released(capsys, [*argv, "--ledger", str(tmp_path / "ledger.sqlite")])
    assert document["metadata"]["noise_kind"] == "secure"
    assert ledger.remaining() == {"epsilon": pytest.approx(2.0)}
    assert all(r["clip_low"] < r["clip_high"] for r in document["outputs"])


def without(argv: list[str], *dropped: str) -> list[str]:
    return [a for a in argv if a not in dropped]


def coinpress(data: Path) -> list[str]:
    argv = release_args(data, "auto")
    argv[argv.index("laplace")] = "coinpress"
    argv[argv.index("--epsilon")] = "--rho"
    return argv


ERRORS = {
    "bad share": (lambda d: release_args(d, "auto:1.5"), "auto:F with F the share", 2),
    "typed bounds with a search range": (
        lambda d: release_args(d, "0,10", "--search-range", "0,100"),
        "--search-range is where --bounds auto searches", 1),
    "per group without auto": (lambda d: release_args(d, "0,10", "--bounds-per-group"),
                               "apply to bounds found privately", 1),
    "coinpress": (coinpress, "--estimator laplace or gaussian", 1),
    "private sizes without a tail": (
        lambda d: without(release_args(d, "auto", "--shares", "noisy-counts", "--small-groups",
                                       "keep"), "--sizes-public"),
        "--bounds-tail T", 1),
    "tail out of range": (lambda d: release_args(d, "auto", "--bounds-tail", "0.7"),
                          "strictly between 0 and 0.5", 2),  # checked as the line is read
}  # fmt: skip


@pytest.mark.parametrize("case", ERRORS)
def test_mistakes_are_one_line_and_spend_nothing(capsys, data, tmp_path, case):
    make_argv, text, status = ERRORS[case]
    ledger = Ledger(tmp_path / "ledger.sqlite", "default", PureDP(3.0))
    argv = [*make_argv(data), "--ledger", str(tmp_path / "ledger.sqlite")]
    assert main(argv) == status  # 2: a usage error, said by argparse
    err = capsys.readouterr().err
    assert err.startswith("strata-lab: error: ") and err.count("\n") == 1, err
    assert text in err, err
    assert ledger.remaining() == {"epsilon": 3.0}


def test_plan_chooses_the_split_and_prints_both_parts(capsys, data):
    argv = [
        "plan", str(data), "--by", "g", "--value", "v", "--bounds", "auto", "--search-range",
        "0,10000000", "--estimator", "laplace", "--sizes-public", "--target-abs=5000",
        "--check-replicates", "1000", "--seed", "3",
    ]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    document = json.loads(capsys.readouterr().out)
    parts = {part["part"]: part for part in document["split"]}
    assert set(parts) == {"finding the bounds", "the means"}
    share = parts["finding the bounds"]["share"]
    assert document["settings"] == {"bounds_fraction": share}
    assert sum(p["epsilon"] for p in parts.values()) == pytest.approx(document["epsilon"])
    assert document["curator_preview"] is True
    check = {row["label"]: row for row in document["check"]}
    assert check[document["binding_group"]]["met"] >= check[document["binding_group"]]["band_low"]
    assert main([*argv, "--format", "text"]) == 0
    assert f"Split: {share:.0%} finding the bounds" in capsys.readouterr().out
