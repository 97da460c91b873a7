"""``strata-lab plan`` of the mean on a folder of Parquet files (issue 37, item 5): it read the
folder as one file and failed with "Is a directory"; it now plans from an engine's pass, with
the same answer as for the same rows in one file."""

from __future__ import annotations

import json

import pytest

from strata_cli.main import main
from tests.frames import tiny_groups_survey_frame, write_shuffled_parts

PLAN = ["--by", "region", "--value", "hours", "--bounds", "0,80", "--estimator", "laplace",
        "--target-abs", "2", "--small-groups", "keep", "--check-replicates", "0"]  # fmt: skip


def answer(capsys, data: str, *extra: str) -> dict:
    assert main(["plan", data, *PLAN, *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_mean_is_planned_on_a_folder_as_on_one_file(tmp_path, capsys):
    frame = tiny_groups_survey_frame()
    folder = write_shuffled_parts(frame, tmp_path / "survey", seed=3)
    one_file = tmp_path / "survey.parquet"
    frame.to_parquet(one_file)
    from_folder, from_file = answer(capsys, str(folder)), answer(capsys, str(one_file))
    assert from_folder["epsilon"] == pytest.approx(from_file["epsilon"], rel=1e-9)
    assert from_folder["binding_group"] == from_file["binding_group"]
    assert [g["label"] for g in from_folder["groups"]] == [g["label"] for g in from_file["groups"]]


def test_a_wrong_column_on_a_folder_is_named_with_the_folder_s_columns(tmp_path, capsys):
    folder = write_shuffled_parts(tiny_groups_survey_frame(), tmp_path / "survey", seed=3)
    assert main(["plan", str(folder), *PLAN[:2], "--value", "wage", *PLAN[4:]]) != 0
    error = capsys.readouterr().err
    assert "wage" in error and "income" in error and "Is a directory" not in error
