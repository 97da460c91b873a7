"""The team file: read when the app starts, and every mistake named with its file, line and fix."""

from __future__ import annotations

import pytest

from strata_ui.team_config import TeamConfigError, load

GOOD = """\
data_root = "data"
spark_masters = ["local[2]", "spark://spark.internal:7077"]
sign_in_hours = 8

[people]
"Ana@Example.org" = "curator"
"raj@example.org" = "analyst"
"google-oauth2|1180" = "viewer"
"""


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "data").mkdir()
    return tmp_path


def write(folder, text: str):
    path = folder / "team.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_file_gives_roles_data_root_masters_and_sign_in_hours(folder):
    config = load(write(folder, GOOD))
    assert dict(config.people) == {
        "ana@example.org": "curator",
        "raj@example.org": "analyst",
        "google-oauth2|1180": "viewer",
    }
    assert config.data_root == (folder / "data").resolve()  # relative to the file's folder
    assert config.spark_masters == ("local[2]", "spark://spark.internal:7077")
    assert config.sign_in_hours == 8.0


def test_an_identity_is_found_by_email_whatever_its_case_or_by_subject(folder):
    config = load(write(folder, GOOD))
    assert config.role_of("ANA@example.org", "sub-1") == ("ana@example.org", "curator")
    assert config.role_of(None, "google-oauth2|1180") == ("google-oauth2|1180", "viewer")
    assert config.role_of("lee@example.org", "sub-2") is None


@pytest.mark.parametrize(
    ("text", "line", "problem", "fix"),
    [
        (GOOD.replace('"viewer"', '"admin"'), 8, "the role 'admin', which is not a role",
         "Use one of 'curator', 'analyst', 'viewer'."),
        (GOOD + '"ana@example.org" = "viewer"\n', 9, "already named on line 6",
         "delete one of the two"),
        (GOOD + '"raj@example.org" = "viewer"\n', 9, "names an identity (or a setting) a second",
         "Give each person one line"),
        (GOOD.replace('"data"', '"no/such/folder"'), 1, "which is not a folder on this machine",
         "Create the folder"),
        (GOOD.replace("sign_in_hours = 8", "sign_in_hours = -1"), 3, "must be a number of hours",
         "sign_in_hours = 12"),
        (GOOD.replace("sign_in_hours", "sign_in_hour"), 3, "unknown setting `sign_in_hour`",
         "remove or rename it"),
        (GOOD.replace('["local[2]", ', "[2, "), 2, "`spark_masters` must be a list",
         'spark_masters = ["local[2]"'),
        (GOOD.replace('"raj@example.org" = "analyst"', "raj = "), 7, "is not valid TOML",
         "double quotes"),
        ('data_root = "data"\n', None, "names no one", "[people]"),
    ],
)  # fmt: skip
def test_each_mistake_names_the_file_the_line_and_the_fix(folder, text, line, problem, fix):
    path = write(folder, text)
    with pytest.raises(TeamConfigError) as caught:
        load(path)
    message = str(caught.value)
    where = f"{path}, line {line}:" if line else f"{path}:"
    assert message.startswith(where), message
    assert problem in message and fix in message, message
    assert caught.value.line == line


def test_a_missing_file_says_how_to_run_without_one(tmp_path):
    with pytest.raises(TeamConfigError, match="unset it to run on 127.0.0.1"):
        load(tmp_path / "absent.toml")
