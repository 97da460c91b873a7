"""``strata-lab plan --analysis gvdp``: the general estimator's mean planned on its intervals'
half-widths, the library's answer in ρ, a curator preview checked by simulated releases; the
options it cannot take refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from dpcore.analyses import GVDP
from dpcore.analyses.gvdp import GvdpSettings
from dpcore.foundations.grouping import GroupingSpec
from dpcore.planner import AccuracyTarget, smallest_budget
from strata_cli.main import main
from tests.unit.cli.helpers import assert_one_error_line
from tests.unit.cli.test_cli import table  # noqa: F401 (fixture)


def gvdp_args(data: Path, *extra: str, estimator: str = "gaussian") -> list[str]:
    return [
        "plan", str(data), "--by", "g", "--value", "v", "--bounds", "0,10", "--analysis", "gvdp",
        "--estimator", estimator, "--subsets", "10", "--spread", "4", "--target-abs=3",
        "--check-replicates", "400", "--seed", "3", *extra,
    ]  # fmt: skip


def test_the_answer_is_the_library_s_in_rho_and_checked(capsys, table):  # noqa: F811
    assert main(gvdp_args(table)) == 0
    document = json.loads(capsys.readouterr().out)
    settings = GvdpSettings(
        outcomes=(("mean", "v"),), ks=(("mean", 10),), box=((("mean", "v", "v"), (0, 10, 4)),)
    )
    frame = pd.read_csv(table)
    stats = GVDP.statistics(frame, GroupingSpec(by=("g",)).build(frame), settings)
    answer = smallest_budget(GVDP.error_model(stats, settings), AccuracyTarget(3.0))
    assert document["analysis"] == "gvdp" and document["strategy"] == "stratified"
    assert document["rho"] == pytest.approx(answer.budget.rho, rel=1e-12)
    assert document["binding_group"] == answer.binding == "b"  # 10 rows against 40
    assert document["curator_preview"] is True
    assert "interval within ±3" in document["target"]["description"]
    check = {row["label"]: row for row in document["check"]}
    assert check["b"]["met"] >= check["b"]["band_low"] - 0.05 and check["a"]["met"] == 1.0
    assert any("Thm. 2.12" in line for line in document["assumptions"])


def test_everyone_at_once_publishes_the_population_only(capsys, table):  # noqa: F811
    assert main(gvdp_args(table, "--strategy", "global_only", "--check-replicates", "0")) == 0
    document = json.loads(capsys.readouterr().out)
    assert [row["label"] for row in document["groups"]] == ["Whole population"]


@pytest.mark.parametrize(
    ("extra", "estimator", "text"),
    [
        ((), "laplace", "pass --estimator gaussian"),
        (("--strategy", "global_and_groups"), "gaussian", "choose one --strategy"),
        (("--bounds", "5,5"), "gaussian", "L must be below the upper bound U"),
        (("--subsets", "1000"), "gaussian", "use k ≤ 10"),
    ],
)
def test_what_it_cannot_take_is_one_line(capsys, table, extra, estimator, text):  # noqa: F811
    argv = gvdp_args(table, estimator=estimator)
    for option, value in zip(extra[::2], extra[1::2], strict=True):
        if option in argv:
            argv[argv.index(option) + 1] = value
        else:
            argv += [option, value]
    # Bounds are checked as the command line is read (a usage error), the rest by the library.
    assert_one_error_line(capsys, argv, 2 if "--bounds" in extra else 1, text)
