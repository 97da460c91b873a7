"""``strata-lab release --analysis sample``: a few private records of one group, drawn by the
registry's sample analysis from one file in memory; seeded dry runs repeat, a real release
charges the ledger once; what it cannot take is one line on stderr, nothing spent; ``plan``
says the planner does not cover it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses import get
from dpcore.foundations.accounting import PureDP
from dpcore.foundations.ledger import Ledger
from strata_cli.main import main
from tests.unit.cli.helpers import (
    assert_mistake_spends_nothing,
    assert_one_error_line,
    replace,
    without,
)


@pytest.fixture
def data(tmp_path) -> Path:
    """Groups North (600 rows) and South (300) of ``region``; a job of three categories, a
    yes/no ``owns``, a person id; one CSV file."""
    rng = np.random.default_rng(0)
    region = np.repeat(["North", "South"], [600, 300])
    frame = pd.DataFrame({
        "region": region, "job": rng.choice(["clerk", "nurse", "farmer"], len(region)),
        "owns": rng.choice(["yes", "no"], len(region)), "pid": rng.integers(0, 400, len(region)),
    })  # fmt: skip
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    return path


def sample_args(data: Path, *extra: str) -> list[str]:
    return [
        "release", str(data), "--by", "region", "--analysis", "sample", "--sample-columns", "job",
        "--sample-group", "South", "--records", "4", "--epsilon", "1", "--sizes-public", *extra,
    ]  # fmt: skip


def run(capsys, argv: list[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def records(csv_text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(csv_text), comment="#", dtype=str)


def test_a_seeded_dry_run_draws_the_records_of_the_group_asked_for(capsys, data):
    argv = sample_args(data, "--dry-run", "--seed", "3", "--format", "csv")
    drawn = records(run(capsys, argv))
    assert list(drawn.columns) == ["group", "record", "job"]
    assert list(drawn["group"]) == ["South"] * 4 and list(drawn["record"]) == ["1", "2", "3", "4"]
    assert set(drawn["job"]) <= {"clerk", "nurse", "farmer"}
    assert records(run(capsys, argv)).equals(drawn)  # the seed repeats the draw
    others = [records(run(capsys, replace(argv, "--seed", str(seed)))) for seed in range(4, 9)]
    assert any(not other.equals(drawn) for other in others)


def test_the_output_says_what_was_released_and_holds_no_fingerprint(capsys, data):
    declared = "job=clerk;nurse;farmer;baker"
    document = json.loads(run(capsys, sample_args(data, "--dry-run",
                                                  "--sample-categories", declared)))  # fmt: skip
    estimator = document["metadata"]["plan"]["estimator"]
    assert estimator["sampler"] == "kary" and estimator["group"] == "South"
    assert estimator["categories"] == {"job": ["clerk", "nurse", "farmer", "baker"]}
    assert estimator["categories_treated_as_public"] == []
    assert "replace-one" in estimator["neighbours"]
    assert len(document["outputs"]) == 4 and "dry run" in document["metadata"]["noise"]
    assert "fingerprint" not in json.dumps(document)


def test_the_product_sampler_draws_yes_no_columns(capsys, data):
    argv = replace(sample_args(data, "--dry-run", "--sampler", "product", "--format", "csv"),
                   "--sample-columns", "owns")  # fmt: skip
    drawn = records(run(capsys, argv))
    assert set(drawn["owns"]) <= {"yes", "no"} and len(drawn) == 4


def test_a_release_spends_once_and_a_repeat_prints_the_record(capsys, data, tmp_path):
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path, "default", PureDP(3.0))
    argv = sample_args(data, "--ledger", str(path), "--format", "csv")
    first = run(capsys, argv)
    assert ledger.remaining() == {"epsilon": pytest.approx(2.0)}
    assert records(run(capsys, argv)).equals(records(first))
    assert ledger.remaining() == {"epsilon": pytest.approx(2.0)}


def folder_of(data: Path) -> Path:
    folder = data.parent / "parts"
    folder.mkdir()
    pd.read_csv(data).to_parquet(folder / "p0.parquet")
    return folder


ERRORS = {
    "private sizes": (lambda a, d: without(a, "--sizes-public"), "pass --sizes-public"),
    "value": (lambda a, d: [*a, "--value", "pid"], "--value is for the other analyses"),
    "estimator": (lambda a, d: [*a, "--estimator", "laplace"], "noise follows --sampler"),
    "shares": (lambda a, d: [*a, "--shares", "noisy-counts"], "--shares is for"),
    "person": (lambda a, d: [*a, "--person", "pid"], "counts each row as one person"),
    "folder": (lambda a, d: [a[0], str(folder_of(d)), *a[2:]], "give one CSV or Parquet file"),
    "too many records": (lambda a, d: replace(a, "--records", "50"), "between 1 and 20"),
    "absent column": (lambda a, d: replace(a, "--sample-columns", "boat"), "`boat`"),
    "product of three": (lambda a, d: [*a, "--sampler", "product"], "exactly two categories"),
}  # fmt: skip


@pytest.mark.parametrize("case", ERRORS.values(), ids=ERRORS.keys())
def test_mistakes_are_one_line_and_spend_nothing(capsys, data, tmp_path, case):
    assert_mistake_spends_nothing(capsys, tmp_path, PureDP(1.0), sample_args, data, case)


def test_plan_says_the_planner_does_not_cover_the_sample(capsys, data):
    argv = ["plan", str(data), "--by", "region", "--analysis", "sample", "--sizes-public",
            "--target-abs", "0.1"]  # fmt: skip
    with pytest.raises(Exception, match="not the private sample") as refusal:
        get("sample").error_model(None, get("sample").default_settings())
    assert_one_error_line(capsys, argv, 1, str(refusal.value))
    assert "page" not in str(refusal.value)
