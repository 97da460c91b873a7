"""``strata-lab plan --analysis synth``: synthetic data planned on each group's workload error,
the library's answer, its time said on stderr before the syntheses run, a curator preview
checked by fresh syntheses; what it cannot take refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpcore.analyses import SYNTH
from dpcore.analyses.synth import SynthSettings
from dpcore.foundations.grouping import GroupingSpec
from dpcore.planner import AccuracyTarget, smallest_budget
from strata_cli.main import main
from tests.unit.cli.helpers import assert_one_error_line
from tests.unit.dpcore.analyses.synth.test_accuracy import survey

SETTINGS = SynthSettings(method="independent", columns=("job", "car", "pet"), n_rows=400)


@pytest.fixture
def people(tmp_path) -> Path:
    path = tmp_path / "people.csv"
    survey().to_csv(path, index=False)
    return path


def synth_args(data: Path, *extra: str, synthesizer: str = "independent") -> list[str]:
    return [
        "plan", str(data), "--by", "region", "--analysis", "synth", "--synthesizer", synthesizer,
        "--columns", "job,car,pet", "--synth-rows", "400", "--estimator", "laplace",
        "--target-abs=0.6", "--level", "0.9", "--check-replicates", "10", "--seed", "3", *extra,
    ]  # fmt: skip


def test_the_answer_is_the_library_s_checked_and_its_time_said_first(capsys, people):
    assert main(synth_args(people)) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    frame = survey()
    stats = SYNTH.statistics(frame, GroupingSpec(by=("region",)).build(frame), SETTINGS)
    answer = smallest_budget(SYNTH.error_model(stats, SETTINGS), AccuracyTarget(0.6, level=0.9))
    assert document["analysis"] == "synth" and document["strategy"] == "stratified"
    assert document["epsilon"] == pytest.approx(answer.budget.epsilon, rel=1e-12)
    assert document["binding_group"] == answer.binding
    assert document["curator_preview"] is True
    assert "3-way workload error within ±0.6" in document["target"]["description"]
    assert len(document["check"]) == 3 and {"met", "band_low"} <= set(document["check"][0])
    assert "204 syntheses (12 at each of 17 budgets) with independent marginals" in captured.err
    assert "for the check of 10" in captured.err


@pytest.mark.parametrize(
    ("change", "text"),
    [
        ({"--estimator": "gaussian"}, "pass --estimator laplace"),
        ({"--strategy": "global_and_groups"}, "choose one --strategy"),
        ({"--columns": "job,boat"}, "no column 'boat'"),
        ({"--value": "job"}, "--value is for the mean"),
        ({"--target-rel": "0.1"}, "no true value to take a percentage of"),
    ],
)
def test_what_it_cannot_take_is_one_line(capsys, people, change, text):
    argv = synth_args(people)
    for option, value in change.items():
        if option == "--target-rel":
            argv.remove("--target-abs=0.6")
        if option in argv:
            argv[argv.index(option) + 1] = value
        else:
            argv += [option, value]
    assert_one_error_line(capsys, argv, 1, text)


def test_a_synthesizer_too_slow_to_simulate_is_refused_with_what_to_plan_with(capsys, people):
    argv = synth_args(people, synthesizer="aim")
    argv[argv.index("--estimator") + 1] = "gaussian"
    argv[argv.index("--columns") + 1] = "job,pet,region"  # AIM: 90 s a column and group
    argv[argv.index("--by") + 1] = "car"
    assert_one_error_line(capsys, argv, 1, "Plan with MWEM instead")
