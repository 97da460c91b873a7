"""The ``strata-lab`` command line: its numbers are the library's, confidential sizes stay out of
its output unless declared public, every error is one line with the right exit status, and the
installed entry point runs."""

from __future__ import annotations

import contextlib
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses import MEAN
from dpcore.analyses.mean import MeanSettings
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.datasets import DEMO_DATA_PATH, load_demo
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.ledger import Ledger
from dpcore.planner import AccuracyTarget, shortfall, smallest_budget
from strata_cli.main import main
from tests.unit.cli.helpers import assert_one_error_line

BOUNDS = (0.0, 10.0)
SIZES = {"a": 40, "b": 10}
DEMO_PLAN = [
    "plan", str(DEMO_DATA_PATH), "--by", "race,sex", "--value", "hours_per_week",
    "--bounds", "0,100", "--estimator", "laplace", "--target-abs", "2", "--level", "0.95",
]  # fmt: skip


@pytest.fixture
def table(tmp_path) -> Path:
    """Groups a (40 rows) and b (10 rows) of ``g``, two halves of ``h``, numeric ``age`` and a
    value ``v`` in [1, 9]."""
    rng = np.random.default_rng(0)
    groups = np.repeat(list(SIZES), list(SIZES.values()))
    frame = pd.DataFrame({
        "g": groups, "h": np.resize(["x", "y"], len(groups)),
        "age": rng.integers(18, 80, len(groups)), "v": rng.uniform(1, 9, len(groups)),
    })  # fmt: skip
    path = tmp_path / "table.csv"
    frame.to_csv(path, index=False)
    return path


def plan_args(table: Path, *extra: str, target: str = "--target-abs=1") -> list[str]:
    return [
        "plan", str(table), "--by", "g", "--value", "v", "--bounds", "0,10",
        "--estimator", "laplace", target, "--check-replicates", "0", *extra,
    ]  # fmt: skip


def frontier_args(table: Path, by: str, *extra: str, budget: str = "--epsilon=1") -> list[str]:
    return [
        "frontier", str(table), "--by", by, "--value", "v", "--bounds", "0,10",
        "--estimator", "laplace", budget, "--replicates", "20", *extra,
    ]  # fmt: skip


def run_json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def library_answer(frame: pd.DataFrame, by: tuple[str, ...], settings, target):
    stats = MEAN.statistics(frame, GroupingSpec(by=by).build(frame), settings)
    model = MEAN.error_model(stats, settings)
    return stats, model, smallest_budget(model, target)


# --------------------------------------------------------------------------------------------
# plan
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_plan() -> dict:
    """The demo plan with public sizes and its default check of 1000 simulated releases."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*DEMO_PLAN, "--sizes-public"]) == 0
    return json.loads(out.getvalue())


def test_demo_plan_is_the_library_answer(demo_plan):
    settings = MeanSettings(value="hours_per_week", clip_low=0, clip_high=100, n_public=True)
    target = AccuracyTarget(2.0, level=0.95)
    stats, model, answer = library_answer(load_demo(), ("race", "sex"), settings, target)
    assert demo_plan["epsilon"] == answer.budget.epsilon
    assert demo_plan["binding_group"] == answer.binding == "Other × Female"
    assert demo_plan["target"] | {"description": ""} == {
        "amount": 2.0, "relative": False, "level": 0.95, "include_bias": False, "description": "",
    }  # fmt: skip
    assert [g["label"] for g in demo_plan["groups"]] == list(answer.table["estimate"])
    assert [g["size"] for g in demo_plan["groups"]] == list(answer.table["size"])
    assert [g["needed"] for g in demo_plan["groups"]] == list(answer.table["needed ε"])
    assert [g["expected_error"] for g in demo_plan["groups"]] == list(
        answer.table["error at budget"]
    )
    assert demo_plan["assumptions"] == list(model.assumptions)
    assert demo_plan["unreachable"] == [] and demo_plan["curator_preview"] is False
    check = MEAN.check_accuracy(stats, settings, answer.budget, target, replicates=1000, rng=0)
    assert [c["met"] for c in demo_plan["check"]] == list(check["met"])
    binding = demo_plan["check"][-2]  # Other × Female: should sit in its band
    assert binding["label"] == "Other × Female"
    assert binding["band_low"] <= binding["met"] <= binding["band_high"]


def test_laplace_with_public_sizes_is_the_closed_form_of_the_smallest_group(capsys, table):
    level, half = 0.9, 1.5
    argv = plan_args(table, "--sizes-public", "--level", str(level), target=f"--target-abs={half}")
    document = run_json(capsys, argv)
    expected = (BOUNDS[1] - BOUNDS[0]) * math.log(1 / (1 - level)) / (min(SIZES.values()) * half)
    assert document["epsilon"] == pytest.approx(expected, rel=1e-12)
    assert document["binding_group"] == "b"
    assert {g["label"]: g["size"] for g in document["groups"]} == {**SIZES, "Whole population": 50}


def test_sizes_are_left_out_unless_declared_public(capsys, table, tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite", "default", PureDP(0.1))
    argv = plan_args(table, "--ledger", str(ledger.path))
    document = run_json(capsys, argv)
    assert document["groups"] and document["shortfall"]["groups"]
    for group in document["groups"] + document["shortfall"]["groups"]:
        assert "size" not in group
    assert document["curator_preview"] is True  # the private-size model divides by true sizes
    assert main([*argv, "--format", "text"]) == 0
    headers = [line for line in capsys.readouterr().out.splitlines() if "label" in line.split()]
    assert len(headers) == 2 and not any("size" in line for line in headers)


@pytest.mark.parametrize(
    ("target", "flags"), [("--target-rel=0.1", []), ("--target-abs=1", ["--include-bias"])]
)
def test_confidential_targets_make_a_curator_preview(capsys, table, target, flags):
    document = run_json(capsys, plan_args(table, "--sizes-public", *flags, target=target))
    assert document["curator_preview"] is True


def test_gaussian_plan_is_in_rho_and_checked_with_the_seed(capsys, table):
    argv = plan_args(table, "--sizes-public", "--check-replicates", "200", "--seed", "7")
    argv[argv.index("laplace")] = "gaussian"
    document = run_json(capsys, argv + ["--strategy", "global_and_groups"])
    frame = pd.read_csv(table)
    settings = MeanSettings(
        value="v", estimator="gaussian", clip_low=0, clip_high=10, n_public=True,
        strategy="global_and_groups",
    )  # fmt: skip
    target = AccuracyTarget(1.0)
    stats, _, answer = library_answer(frame, ("g",), settings, target)
    assert "epsilon" not in document and document["rho"] == answer.budget.rho
    check = MEAN.check_accuracy(stats, settings, answer.budget, target, replicates=200, rng=7)
    assert [c["met"] for c in document["check"]] == list(check["met"])
    assert [c["label"] for c in document["check"]] == ["a", "b", "Whole population"]


def test_check_is_left_out_with_zero_replicates(capsys, table):
    assert "check" not in run_json(capsys, plan_args(table))


def test_text_format_is_a_readable_table(capsys, table):
    assert main(plan_args(table, "--sizes-public", "--format", "text")) == 0
    out = capsys.readouterr().out
    assert out.startswith("ε = ") and "Binding: b." in out
    assert "needed ε" in out and "Assumptions:" in out and "Curator preview" not in out


# --------------------------------------------------------------------------------------------
# plan against a ledger
# --------------------------------------------------------------------------------------------


def test_a_ledger_that_affords_the_answer_says_so(capsys, table, tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite", "big", PureDP(100.0))
    document = run_json(capsys, plan_args(table, "--ledger", str(ledger.path), "--ledger-name=big"))
    expected = {"name": "big", "remaining": {"epsilon": 100.0}, "affordable": True}
    assert document["ledger"] == expected
    assert "shortfall" not in document


def test_a_short_ledger_gives_the_errors_and_rows_at_what_is_left(capsys, table, tmp_path):
    Ledger(tmp_path / "l.sqlite", "default", ZCDP(0.02))  # runs the Laplace mean at ε = 0.2
    argv = plan_args(table, "--sizes-public", "--ledger", str(tmp_path / "l.sqlite"))
    document = run_json(capsys, argv)
    settings = MeanSettings(value="v", clip_low=0, clip_high=10, n_public=True)
    _, model, answer = library_answer(pd.read_csv(table), ("g",), settings, AccuracyTarget(1.0))
    expected = shortfall(model, answer.target, ZCDP(0.02)).table
    part = document["shortfall"]
    assert document["ledger"]["affordable"] is False
    assert part["available"] == {"rho": 0.02}
    assert [g["error_at_available"] for g in part["groups"]] == list(
        expected["error at available budget"]
    )
    # Groups get the rows they would need; the whole population is no group (null).
    assert [g["rows_needed"] for g in part["groups"]] == [*expected["rows needed"].iloc[:-1], None]
    assert (
        "ρ = 0.02 (zCDP) left" in part["message"]
        and "target: a, b, Whole population;" in part["message"]
    )


def test_an_empty_ledger_has_no_release_left(capsys, table, tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite", "default", PureDP(0.5))
    ledger.spend("earlier release", PureDP(0.5), {})
    document = run_json(capsys, plan_args(table, "--ledger", str(ledger.path)))
    assert document["shortfall"]["groups"] == []
    assert "no budget left" in document["shortfall"]["message"]
    assert ledger.remaining() == {"epsilon": 0.0}  # the plan spent nothing


# --------------------------------------------------------------------------------------------
# frontier
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("by", ["g", "g,h"])
def test_frontier_scores_every_subset_with_every_strategy(capsys, table, by):
    document = run_json(capsys, frontier_args(table, by, "--sizes-public", "--seed", "3"))
    candidates = document["candidates"]
    columns = by.split(",")
    assert len(candidates) == (2 ** len(columns) - 1) * 3
    assert document["curator_preview"] is True and document["budget"] == {"epsilon": 1.0}
    frame = pd.read_csv(table)
    settings = MeanSettings(value="v", clip_low=0, clip_high=10, n_public=True)
    grouping = GroupingSpec(by=tuple(columns))
    expected = MEAN.frontier(frame, columns, settings, PureDP(1.0), grouping, replicates=20, rng=3)
    assert [c["worst_group_error"] for c in candidates] == list(expected["worst_group_error"])
    pareto = [c["pareto"] for c in candidates]
    assert all(isinstance(flag, bool) for flag in pareto) and any(pareto)
    assert pareto == list(expected["pareto"])


def test_frontier_candidates_it_cannot_group_are_skipped_with_nulls(capsys, table):
    document = run_json(capsys, frontier_args(table, "g,age"))
    skipped = [c for c in document["candidates"] if c["by"] == ["age"]]
    assert len(skipped) == 3
    assert all(c["global_error"] is None and c["pareto"] is False for c in skipped)
    assert all("pass public bucket edges" in c["skipped"] for c in skipped)
    grouped = run_json(capsys, frontier_args(table, "g,age", "--edges", "age=40;60"))
    assert all(c["skipped"] == "" for c in grouped["candidates"])


def test_frontier_scores_coinpress_by_its_simulated_releases(capsys, table):
    argv = frontier_args(table, "g,h", "--sizes-public", "--sigma", "3", "--steps", "2",
                         "--seed", "2", budget="--rho=0.5")  # fmt: skip
    document = run_json(capsys, replace(argv, "--estimator", "coinpress"))
    settings = MeanSettings(
        value="v", estimator="coinpress", clip_low=0, clip_high=10, n_public=True,
        coinpress_sigma=3.0, coinpress_steps=2,
    )  # fmt: skip
    expected = MEAN.frontier(
        pd.read_csv(table), ["g", "h"], settings, ZCDP(0.5), GroupingSpec(by=("g", "h")),
        replicates=20, rng=2,
    )  # fmt: skip
    candidates = document["candidates"]
    assert [c["global_error"] for c in candidates] == list(expected["global_error"])
    assert [c["pareto"] for c in candidates] == list(expected["pareto"])
    assert all(c["skipped"] == "" for c in candidates) and document["curator_preview"] is True


@pytest.mark.parametrize("estimator", ["gaussian", "coinpress"])
def test_a_gaussian_frontier_at_epsilon_runs_at_rho_of_epsilon_squared_over_two(
    capsys, table, estimator
):
    """One budget language (issue 37, item 1): ε = 1 runs a Gaussian noise at ρ = ε²/2 = 0.5,
    so its candidates are those at ρ = 0.5 (it was refused)."""

    def frontier_at(budget: str) -> dict:
        argv = frontier_args(table, "g,h", "--sizes-public", "--seed", "4", budget=budget)
        return run_json(capsys, replace(argv, "--estimator", estimator))

    at_epsilon, at_rho = frontier_at("--epsilon=1"), frontier_at("--rho=0.5")
    assert at_epsilon["budget"] == {"epsilon": 1.0} and at_rho["budget"] == {"rho": 0.5}
    assert at_epsilon["candidates"] == at_rho["candidates"]


def test_frontier_text_format(capsys, table):
    assert main(frontier_args(table, "g,h", "--format", "text", budget="--rho=0.5")) == 0
    out = capsys.readouterr().out
    assert out.startswith("Candidates at ρ = 0.5") and "g × h: both, budget split" in out


# --------------------------------------------------------------------------------------------
# errors: one line on stderr, status 2 for the command line, 1 for everything else
# --------------------------------------------------------------------------------------------


def replace(argv: list[str], option: str, value: str) -> list[str]:
    argv = list(argv)
    argv[argv.index(option) + 1] = value
    return argv


ERRORS = {
    "missing file": (lambda t: plan_args(t.with_name("none.csv")), 1, "No data at"),
    "unknown group column": (lambda t: replace(plan_args(t), "--by", "nope"), 1, "'nope'"),
    "unknown value column": (lambda t: replace(plan_args(t), "--value", "nope"), 1, "'nope'"),
    "bounds out of order": (lambda t: replace(plan_args(t), "--bounds", "5,1"), 2, "below"),
    "bounds not numbers": (lambda t: replace(plan_args(t), "--bounds", "x"), 2, "two numbers"),
    "target of zero": (lambda t: plan_args(t, target="--target-abs=0"), 1, "above 0"),
    "level of one": (lambda t: plan_args(t, "--level", "1"), 1, "strictly between"),
    "two targets": (lambda t: plan_args(t, "--target-rel=0.1"), 2, "not allowed"),
    "coinpress, private sizes": (
        lambda t: replace(plan_args(t), "--estimator", "coinpress"), 1, "needs --sizes-public"),
    "coinpress frontier, private sizes": (
        lambda t: replace(frontier_args(t, "g", budget="--rho=1"), "--estimator", "coinpress"), 1,
        "needs --sizes-public"),
    "no estimator": (lambda t: [a for a in plan_args(t) if a not in ("--estimator", "laplace")],
                     1, "the mean needs --estimator laplace, gaussian or coinpress"),
    "no subcommand": (lambda t: [], 2, "COMMAND"),
    "missing option": (lambda t: ["plan", str(t)], 2, "required"),
    "global fraction of one": (lambda t: plan_args(t, "--global-fraction", "1"), 2, "between"),
    "bad edges": (lambda t: frontier_args(t, "age", "--edges", "age"), 2, "COL=E1"),
    "no ledger file": (lambda t: plan_args(t, "--ledger", str(t.with_name("l.sqlite"))), 1,
                       "no ledger file"),
    "not a ledger": (lambda t: plan_args(t, "--ledger", str(t)), 1, "not a Strata Lab ledger"),
}  # fmt: skip


@pytest.mark.parametrize("case", ERRORS)
def test_errors_are_one_line_with_their_status(capsys, table, case):
    make_argv, status, text = ERRORS[case]
    assert_one_error_line(capsys, make_argv(table), status, text)


def test_a_ledger_must_hold_the_named_ledger_of_a_kind_the_estimator_runs_under(
    capsys, table, tmp_path
):
    Ledger(tmp_path / "l.sqlite", "pure", PureDP(1.0))
    argv = plan_args(table, "--ledger", str(tmp_path / "l.sqlite"))
    assert_one_error_line(capsys, argv, 1, "no ledger named 'default'; it has: 'pure'")
    argv = replace(argv + ["--ledger-name", "pure"], "--estimator", "gaussian")
    assert_one_error_line(capsys, argv, 1, "cannot run under the ε-DP budget of ledger 'pure'")


def test_a_target_no_budget_reaches_prints_the_answer_then_fails(capsys, table):
    # Values in [1, 9] clipped to [0, 0.5]: a clipping bias of about 4 against a target of 1.
    argv = replace(plan_args(table, "--include-bias"), "--bounds", "0,0.5")
    assert main(argv) == 1
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["epsilon"] is None and document["binding_group"] is None
    assert len(document["unreachable"]) == 3
    assert all(group["expected_error"] is None for group in document["groups"])
    assert captured.err.startswith("strata-lab: error: no budget meets the target: a: its")
    assert captured.err.count("\n") == 1


# --------------------------------------------------------------------------------------------
# the installed entry point
# --------------------------------------------------------------------------------------------


def test_the_installed_script_runs(table):
    script = Path(sys.executable).with_name("strata-lab")
    help_text = subprocess.run([script, "--help"], capture_output=True, text=True, check=True)
    assert "plan" in help_text.stdout and "frontier" in help_text.stdout
    result = subprocess.run([script, *plan_args(table, "--sizes-public")], capture_output=True,
                            text=True, check=True)  # fmt: skip
    assert json.loads(result.stdout)["binding_group"] == "b"
