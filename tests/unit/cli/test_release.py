"""``strata-lab release``: the same release on pandas and DuckDB, the ledger charged once (never
by a dry run or a refused command), only DP outputs and public metadata printed, and every
mistake one line on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore.foundations.accounting import PureDP
from dpcore.foundations.ledger import Ledger
from strata_cli.main import main
from tests.unit.cli.helpers import release_twice, run

SIZES = {"a": 300, "b": 120, "c": 60}


@pytest.fixture
def data(tmp_path) -> Path:
    """Groups a, b, c of ``g``, a value ``v`` in [1, 9] with a few missing, people ``pid``
    owning 1 to 3 rows; as one Parquet file."""
    rng = np.random.default_rng(0)
    groups = np.repeat(list(SIZES), list(SIZES.values()))
    value = rng.uniform(1, 9, len(groups))
    value[::50] = np.nan
    frame = pd.DataFrame({"g": groups, "v": value, "pid": rng.integers(0, 250, len(groups))})
    path = tmp_path / "data.parquet"
    frame.to_parquet(path)
    return path


def release_args(data: Path, *extra: str) -> list[str]:
    return [
        "release", str(data), "--by", "g", "--value", "v", "--bounds", "0,10",
        "--estimator", "laplace", "--epsilon", "1", "--sizes-public", *extra,
    ]  # fmt: skip


def estimates(document: dict) -> np.ndarray:
    return np.array([[r["estimate"], r["low"], r["high"]] for r in document["outputs"]], float)


@pytest.mark.parametrize("person", [[], ["--person", "pid", "--max-rows", "2"]])
def test_a_dry_run_is_the_same_on_pandas_and_duckdb(capsys, data, person):
    runs = [
        run(capsys, release_args(data, "--dry-run", "--seed", "4", "--engine", e, *person))[0]
        for e in ("pandas", "duckdb")
    ]
    np.testing.assert_allclose(estimates(runs[0]), estimates(runs[1]), rtol=1e-9)
    assert [r["group"] for r in runs[0]["outputs"]] == ["a", "b", "c", "All"]
    assert "dry run" in runs[0]["metadata"]["noise"]


def test_spark_gives_the_dry_run_of_duckdb(capsys, data):
    runs = [
        run(capsys, release_args(data, "--dry-run", "--seed", "2", "--engine", engine,
                                 "--spark-master", "local[2]"))[0]
        for engine in ("duckdb", "spark")
    ]  # fmt: skip
    np.testing.assert_allclose(estimates(runs[0]), estimates(runs[1]), rtol=1e-9)


def test_a_folder_of_parts_is_read_by_duckdb(capsys, data, tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    frame = pd.read_parquet(data)
    frame.iloc[:200].to_parquet(folder / "p0.parquet")
    frame.iloc[200:].to_parquet(folder / "p1.parquet")
    one = run(capsys, release_args(data, "--dry-run", "--engine", "duckdb"))[0]
    parts = run(capsys, release_args(folder, "--dry-run"))[0]  # a folder defaults to duckdb
    np.testing.assert_allclose(estimates(parts), estimates(one), rtol=1e-9)


def test_a_release_spends_once_and_a_repeat_prints_the_record(capsys, data, tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", "default", PureDP(3.0))
    argv = release_args(data, "--ledger", str(tmp_path / "ledger.sqlite"))
    first, second, err = release_twice(capsys, ledger, argv, {"epsilon": pytest.approx(2.0)})
    assert "released before" in err and second["outputs"] == first["outputs"]
    assert "OpenDP" in first["metadata"]["noise"]


def test_a_release_on_other_data_is_refused_in_one_line_unless_the_flag_confirms(
    capsys, data, tmp_path
):
    ledger = Ledger(tmp_path / "ledger.sqlite", "default", PureDP(3.0))
    on_ledger = ["--ledger", str(tmp_path / "ledger.sqlite")]
    run(capsys, release_args(data, *on_ledger))
    frame = pd.read_parquet(data)
    grown = tmp_path / "grown.parquet"  # one person more
    pd.concat([frame, frame.iloc[[0]].assign(pid=999)]).to_parquet(grown)

    assert main(release_args(grown, *on_ledger)) == 1
    [error] = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert error.startswith("strata-lab: error: Release refused: ledger “default”"), error
    assert error.endswith("pass --ledger-covers-new-data.")
    assert len(ledger.history()) == 1 and ledger.remaining() == {"epsilon": pytest.approx(2.0)}

    _, err = run(capsys, release_args(grown, "--dry-run", *on_ledger))
    assert "the real release would fail: Release refused" in err

    run(capsys, release_args(grown, "--ledger-covers-new-data", *on_ledger))
    assert ledger.remaining() == {"epsilon": pytest.approx(1.0)}
    assert [d.name for d in ledger.datasets()] == ["data.parquet", "grown.parquet"]


def test_a_dry_run_never_charges_the_ledger(capsys, data, tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", "default", PureDP(0.5))
    argv = release_args(data, "--dry-run", "--ledger", str(tmp_path / "ledger.sqlite"))
    _, err = run(capsys, argv)
    assert "the real release would fail" in err
    assert ledger.remaining() == {"epsilon": 0.5}


def test_the_output_holds_no_fingerprint_and_states_the_privacy_unit(capsys, data):
    argv = release_args(data, "--dry-run", "--person", "pid", "--max-groups", "1",
                        "--max-rows", "3", "--format", "csv")  # fmt: skip
    out, err = run(capsys, argv)
    assert "fingerprint" not in out and "release-" not in out
    assert "# privacy_unit: one person (column pid), at most 1 group(s) and 3 row(s)" in out
    assert "left out" in err and "curator's view" in err
    document, _ = run(capsys, release_args(data, "--dry-run", "--person", "pid"))
    assert document["metadata"]["plan"]["privacy_unit"]["column"] == "pid"
    assert "fingerprint" not in json.dumps(document)


def test_private_sizes_need_public_shares_and_a_codebook_kept_whole(capsys, data, tmp_path):
    shares = tmp_path / "shares.csv"
    pd.DataFrame({"group": ["a", "b", "c", "d"], "share": [0.5, 0.3, 0.2, 0.0]}).to_csv(
        shares, index=False
    )
    codebook = tmp_path / "codebook.csv"
    pd.DataFrame({"column": ["g"] * 4, "category": ["d", "a", "b", "c"]}).to_csv(
        codebook, index=False
    )
    argv = [a for a in release_args(data, "--dry-run") if a != "--sizes-public"]
    steps = [
        ([], "--shares"),
        (["--shares", str(shares)], "--codebook"),
        (["--shares", str(shares), "--codebook", str(codebook)], "--small-groups keep"),
    ]
    for extra, fix in steps:
        assert main([*argv, *extra]) == 1
        assert fix in capsys.readouterr().err
    document, _ = run(
        capsys, [*argv, "--shares", str(shares), "--codebook", str(codebook), "--small-groups",
                 "keep"],
    )  # fmt: skip
    # Every declared group in the codebook's order, the one with no rows included (from noise
    # alone, within the bounds), recombined with the public shares.
    outputs = document["outputs"]
    assert [r["group"] for r in outputs] == ["d", "a", "b", "c", "All"]
    assert [r["public_share"] for r in outputs[:4]] == [0.0, 0.5, 0.3, 0.2]
    assert 0 <= outputs[0]["estimate"] <= 10
    # Intervals with the release's noisy counts as the sizes (issue 37): no exact size in them,
    # and each inside the public range, around its estimate.
    assert "noisy counts as the group sizes" in document["metadata"]["intervals"]
    assert all(0 <= r["low"] <= r["estimate"] <= r["high"] <= 10 for r in outputs)


def test_a_codebook_that_does_not_fit_is_one_line_on_stderr(capsys, data, tmp_path):
    codebook = tmp_path / "codebook.csv"
    pd.DataFrame({"column": ["h"], "category": ["a"]}).to_csv(codebook, index=False)
    assert main(release_args(data, "--dry-run", "--codebook", str(codebook))) == 1
    err = capsys.readouterr().err
    assert "ignored h (not in --by)" in err and "it lists no category of g" in err
    codebook.write_text("column,category\n")
    assert main(release_args(data, "--dry-run", "--codebook", str(codebook))) == 1
    assert "the codebook has no rows" in capsys.readouterr().err
    codebook.write_text("col,cat\ng,a\n")
    assert main(release_args(data, "--dry-run", "--codebook", str(codebook))) == 1
    assert "needs the columns “column” and “category”" in capsys.readouterr().err


def with_none_person(data: Path) -> Path:
    frame = pd.read_parquet(data)
    frame["pid"] = frame["pid"].astype(float)
    frame.loc[3, "pid"] = np.nan
    path = data.with_name("holes.parquet")
    frame.to_parquet(path)
    return path


def replace(argv: list[str], option: str, value: str) -> list[str]:
    argv = list(argv)
    argv[argv.index(option) + 1] = value
    return argv


def coinpress_with_private_sizes(data: Path) -> list[str]:
    argv = replace(release_args(data), "--estimator", "coinpress")
    argv[argv.index("--epsilon")] = "--rho"
    return [a for a in argv if a != "--sizes-public"]


ERRORS = {
    "missing file": (lambda d: release_args(d.with_name("none.parquet")), "No data at"),
    "person ids missing": (lambda d: release_args(with_none_person(d), "--person", "pid"),
                           "1 row of the data has no id in the person column `pid`"),
    "bound without person": (lambda d: release_args(d, "--max-rows", "2"), "give --person"),
    # Run at ρ = ε²/2 (issue 37's one budget language), which a ledger of ε-DP cannot count.
    "gaussian under epsilon": (lambda d: replace(release_args(d), "--estimator", "gaussian"),
                               "it needs a ρ-zCDP ledger"),
    "numeric group": (lambda d: replace(release_args(d), "--by", "pid"), "holds numbers"),
    "coinpress with private sizes": (coinpress_with_private_sizes, "CoinPress scales its noise"),
    "bad memory limit": (lambda d: release_args(d, "--engine", "duckdb", "--memory-limit", "lots"),
                         "memory limit"),
    "pandas on a folder": (lambda d: release_args(d.parent, "--engine", "pandas"),
                           "reads one file"),
    # DuckDB and Spark would read "3,25" as text or as two fields: the flag is not ignored.
    "decimal comma on duckdb": (lambda d: release_args(d, "--engine", "duckdb", "--decimal-comma"),
                                "--decimal-comma is read by the pandas engine only"),
}  # fmt: skip


@pytest.mark.parametrize("case", ERRORS)
def test_errors_are_one_line_and_spend_nothing(capsys, data, tmp_path, case):
    ledger = Ledger(tmp_path / "ledger.sqlite", "default", PureDP(3.0))
    make_argv, text = ERRORS[case]
    assert main([*make_argv(data), "--ledger", str(tmp_path / "ledger.sqlite")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("strata-lab: error: ") and err.count("\n") == 1, err
    assert text in err
    assert ledger.remaining() == {"epsilon": 3.0}


def test_private_sizes_may_take_their_shares_from_the_release_s_noisy_counts(
    capsys, data, tmp_path
):
    codebook = tmp_path / "codebook.csv"
    pd.DataFrame({"column": ["g"] * 4, "category": ["d", "a", "b", "c"]}).to_csv(
        codebook, index=False
    )
    private = [a for a in release_args(data, "--dry-run") if a != "--sizes-public"]
    noisy = ["--shares", "noisy-counts", "--codebook", str(codebook), "--small-groups", "keep"]
    document, _ = run(capsys, [*private, *noisy])
    groups = document["outputs"][:4]
    assert all("public_share" not in r for r in groups)
    assert sum(r["noisy_share"] for r in groups) == pytest.approx(1.0)
    assert document["metadata"]["shares"].startswith("noisy_share: each group's noisy count")
    assert main([*release_args(data, "--dry-run"), *noisy]) == 1
    assert "leave out --sizes-public" in capsys.readouterr().err


@pytest.mark.parametrize("rule", ["merge", "drop"])
def test_small_groups_decided_by_the_noisy_counts_on_the_command_line(capsys, data, tmp_path, rule):
    """Groups b (120 rows), c (60) and d (none) fall below 150 by their noisy counts (Laplace
    scale 2: off by 30 with probability e^-15), so they are merged (180 rows together, above
    150) or left out, with a flag that says why; a is released as itself."""
    codebook = tmp_path / "codebook.csv"
    pd.DataFrame({"column": ["g"] * 4, "category": ["a", "b", "c", "d"]}).to_csv(
        codebook, index=False
    )
    private = [a for a in release_args(data, "--dry-run", "--seed", "2") if a != "--sizes-public"]
    noisy = ["--shares", "noisy-counts", "--codebook", str(codebook), "--small-groups", rule,
             "--min-group-size", "150"]  # fmt: skip
    document, _ = run(capsys, [*private, *noisy])
    rows = {r["group"]: r for r in document["outputs"]}
    assert rows["a"]["flag"] == "" and np.isfinite(rows["a"]["estimate"])
    for small in ("b", "c", "d"):
        assert rows[small]["estimate"] is None
        assert "noisy count was below 150" in rows[small]["flag"]
    merged = rows.get("Other (merged)")
    assert (merged is not None) == (rule == "merge")
    if merged is not None:
        assert 1 <= merged["estimate"] <= 9
    assert "small_groups" in document["metadata"]
