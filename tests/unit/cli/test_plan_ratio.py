"""``strata-lab plan --analysis ratio``: the library's answer for the calibration ratio, in ε or
ρ, always a curator preview; missing and misplaced options and unreachable targets explained in
one line; a ledger compared with the release's exact cost."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses import RATIO
from dpcore.analyses.ratio import RatioSettings
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.ledger import Ledger
from dpcore.planner import AccuracyTarget, smallest_budget
from strata_cli.main import main
from tests.unit.cli.helpers import assert_one_error_line

ROWS = {"a": 400, "b": 1500}


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """The ratio paper's simulation (§3) in two groups: s ~ Beta(2, 2), y ~ Bernoulli(s/1.1)."""
    rng = np.random.default_rng(1)
    groups = np.repeat(list(ROWS), list(ROWS.values()))
    s = rng.beta(2, 2, size=len(groups))
    y = (rng.random(len(s)) < s / 1.1).astype(int)
    return pd.DataFrame({"g": groups, "s": s, "y": y, "t": 2.0 * y})


@pytest.fixture
def table(tmp_path, frame) -> str:
    path = tmp_path / "scores.csv"
    frame.to_csv(path, index=False)
    return str(path)


def ratio_args(table: str, *extra: str, target: str = "--target-abs=0.2") -> list[str]:
    return [
        "plan", table, "--by", "g", "--analysis", "ratio", "--score", "s", "--label", "y",
        "--score-bound", "1", "--estimator", "gaussian", target, "--check-replicates", "400",
        *extra,
    ]  # fmt: skip


def run_json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def library_answer(frame, settings: RatioSettings, target: AccuracyTarget):
    stats = RATIO.statistics(frame, GroupingSpec(by=("g",)).build(frame), settings)
    return smallest_budget(RATIO.error_model(stats, settings), target)


def test_the_ratio_plan_is_the_library_answer_and_a_curator_preview(capsys, table, frame):
    """The command reads the file through an engine, whose sums equal those of the rows in
    memory to rounding: the same answer to rounding."""
    document = run_json(capsys, ratio_args(table))
    settings = RatioSettings(s_column="s", y_column="y")
    answer = library_answer(frame, settings, AccuracyTarget(0.2))
    assert document["analysis"] == "ratio" and "strategy" not in document
    assert document["epsilon"] == pytest.approx(answer.budget.epsilon, rel=1e-12)
    assert document["binding_group"] == answer.binding == "a"
    assert [g["expected_error"] for g in document["groups"]] == pytest.approx(
        list(answer.table["error at budget"]), rel=1e-12
    )
    assert all("size" not in g for g in document["groups"])  # sizes are not declared public
    assert document["curator_preview"] is True
    binding = next(row for row in document["check"] if row["label"] == "a")
    assert binding["band_low"] <= binding["met"] <= binding["band_high"]


def test_zcdp_accounting_answers_in_rho_and_a_numeric_label_takes_its_bound(capsys, table, frame):
    document = run_json(capsys, ratio_args(table, "--composition", "zcdp"))
    settings = RatioSettings(s_column="s", y_column="y", composition="zcdp")
    answer = library_answer(frame, settings, AccuracyTarget(0.2))
    assert document["rho"] == pytest.approx(answer.budget.rho, rel=1e-12)
    argv = ratio_args(table, "--label-bound", "2", "--composition", "zcdp")
    argv[argv.index("y")] = "t"
    numeric = run_json(capsys, argv)
    settings = RatioSettings(s_column="s", y_column="t", y_bound=2.0, binary_y=False,
                             composition="zcdp")  # fmt: skip
    answer = library_answer(frame, settings, AccuracyTarget(0.2))
    assert numeric["rho"] == pytest.approx(answer.budget.rho, rel=1e-12)


def test_a_target_beyond_the_classic_gaussian_prints_the_answer_then_says_what_to_switch(
    capsys, table
):
    assert main(ratio_args(table, target="--target-abs=0.01")) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["epsilon"] is None
    assert "runs only below ε = 5" in captured.err and captured.err.count("\n") == 1
    # the way out in the command line's words, not the app's pages
    assert "page" not in captured.err and "page" not in captured.out
    assert "with the budget options (--epsilon or --rho)" in captured.err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: a[: a.index("--score-bound")] + a[a.index("--score-bound") + 2 :],
         "the ratio needs --score-bound"),
        (lambda a: [*a, "--weight", "s"], "the ratio needs --weight-bound"),
        (lambda a: [*a, "--value", "s"], "--value is for the mean"),
        (lambda a: [*a[:4], "--value", "s", "--estimator", "laplace", "--target-abs=1"],
         "the mean needs --bounds"),
        (lambda a: [a[0], a[1], "--by", "g", "--analysis", "ratio", "--score", "s", "--label",
                    "g", "--score-bound", "1", "--estimator", "laplace", "--target-abs=1"],
         "The label column `g` is not numeric (its values are text). Choose a column of "
         "numbers for the label."),
    ],
    ids=["no-score-bound", "no-weight-bound", "value-with-ratio", "mean-without-bounds",
         "text-label"],
)  # fmt: skip
def test_missing_and_misplaced_options_are_one_line(capsys, table, change, message):
    assert_one_error_line(capsys, change(ratio_args(table)), 1, message)


def test_a_bound_that_is_not_a_number_is_a_usage_error(capsys, table):
    argv = ratio_args(table)
    argv[argv.index("--score-bound") + 1] = "x"
    assert main(argv) == 2
    assert "expected a public upper bound" in capsys.readouterr().err


def test_the_ledger_is_compared_with_the_release_s_exact_cost(capsys, table, tmp_path):
    path = tmp_path / "l.sqlite"
    Ledger(path, "pure", PureDP(1.0))
    argv = ratio_args(table, "--ledger", str(path), "--ledger-name", "pure")
    assert_one_error_line(capsys, argv, 1, "cannot run under the ε-DP budget of ledger 'pure'")
    Ledger(path, "default", ZCDP(0.05))
    document = run_json(capsys, ratio_args(table, "--ledger", str(path)))
    # The classic Gaussian at ε ≈ 1.9 costs far less than ε²/2 in ρ: exactly what it charges.
    epsilon = document["epsilon"]
    cost = RATIO.cost(RatioSettings(s_column="s", y_column="y"), PureDP(epsilon))
    assert cost.rho < 0.05 < epsilon**2 / 2
    assert document["ledger"]["affordable"] is True
    assert math.isclose(document["ledger"]["remaining"]["rho"], 0.05)
