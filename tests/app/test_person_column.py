"""App tests of "Who is one person?" on the Data page: a person column and its bounds, the
curator's preview of what they leave out, the mean released with each person's rows bounded
(its metadata names the unit), the analyses that cannot honour a person column refusing
plainly, every bad input, and a refresh that brings the choice back."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.analyses.mean import MeanSettings
from dpcore.foundations.datasets import load_demo
from dpcore.foundations.grouping import cell_labels
from dpcore.foundations.ledger import Ledger
from dpcore.foundations.privacy_unit import PrivacyUnit, preview_bound
from dpcore.release import public_metadata
from tests.app.helpers import (
    change_settings,
    commit,
    commit_once,
    errors,
    go,
    release_review,
    start,
    state_of,
    text,
    upload,
)

NAME = "households.csv"


@functools.cache
def households() -> bytes:
    """2,000 rows of the demo data in households of 1 to 4 rows (a column `household`), some
    households spread over several race × sex groups: a demo-like frame whose rows are not
    people."""
    rng = np.random.default_rng(3)
    frame = load_demo().sample(2000, random_state=3).reset_index(drop=True)
    sizes = rng.integers(1, 5, 2000)
    frame["household"] = np.repeat(np.arange(2000), sizes)[:2000]
    return frame[["race", "sex", "hours_per_week", "household"]].to_csv(index=False).encode()


def fingerprint(at: AppTest) -> str:
    return state_of(at).dataset_fingerprint


def uploaded(data: bytes = b"") -> AppTest:
    """The households uploaded, grouped by race × sex, hours per week in 0–100."""
    at = upload(start("data"), data or households(), NAME)
    at.main.selectbox[0].select("hours_per_week").run()
    go(at, "strata")
    at.multiselect(key=f"strata.columns.{fingerprint(at)}").set_value(["race", "sex"]).run()
    change_settings(at, MeanSettings, clip_low=0.0, clip_high=100.0)
    return go(at, "data")


def choose_person(at: AppTest, column: str | None = "household") -> AppTest:
    at.selectbox(key=f"data.person_column.{fingerprint(at)}").set_value(column).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def set_bound(at: AppTest, name: str, value: int) -> AppTest:
    at.number_input(key=f"data.{name}.{fingerprint(at)}").set_value(value).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.main.metric}


def test_the_person_column_its_bounds_and_the_preview_stick_and_move():
    at = choose_person(uploaded())
    state = state_of(at)
    assert (state.person_column, state.max_rows_per_person, state.max_groups_per_person) == (
        "household",
        1,
        1,
    )
    page = text(at.main.markdown) + text(at.main.caption)
    assert "curator's view" in page and "never part of a release" in page
    left_out = [int(metrics(at)["Rows left out"].replace(",", ""))]
    for m in (2, 4):  # M changed twice in a row: the second value sticks
        set_bound(at, "max_rows_per_person", m)
        left_out.append(int(metrics(at)["Rows left out"].replace(",", "")))
    assert state_of(at).max_rows_per_person == 4
    assert at.number_input(key=f"data.max_rows_per_person.{fingerprint(at)}").value == 4
    assert left_out[0] > left_out[1] > left_out[2] > 0  # a larger M keeps more rows
    for g in (2, 4):
        set_bound(at, "max_groups_per_person", g)
    assert state_of(at).max_groups_per_person == 4
    assert metrics(at)["Rows left out"] == "0"  # households hold at most 4 rows
    assert "up to 16 rows" in text(at.main.caption)
    choose_person(at, None)
    choose_person(at, "household")
    assert state_of(at).person_column == "household" and not at.main.error


def test_the_mean_is_compared_and_released_with_each_household_bounded():
    at = choose_person(uploaded())
    set_bound(at, "max_rows_per_person", 2)
    go(at, "estimator")
    assert "Bounding each person to 1 group and 2 rows per group left out" in text(at.main.info)
    go(at, "budget")
    assert "each noisy sum runs at ε = 0.5" in text(at.main.caption)
    go(at, "compare")
    assert not at.main.error, errors(at)
    assert at.get("plotly_chart")
    for page in ("strata", "plan"):
        go(at, page)
        assert not at.main.error, errors(at)
    assert "up to 2 rows" in text(at.main.markdown) + text(at.main.caption)  # the planner's
    go(at, "release")
    assert not at.main.error, errors(at)
    assert "Privacy unit:** one person per value of `household`" in text(at.main.markdown)
    commit(at)
    [record] = Ledger.open(None, "default").history()
    unit = {"column": "household", "max_groups": 1, "max_rows": 2}
    metadata = record.payload["metadata"]
    assert metadata["plan"]["privacy_unit"] == unit
    assert public_metadata(metadata)["plan"]["privacy_unit"] == unit  # what the exports carry
    assert "PrivacyUnit('household', max_groups=1, max_rows=2)" in metadata["script"]


# Not `page`, which pytest-playwright would parametrize by browser (see tests/app/test_pages.py).
@pytest.mark.parametrize("page_name", ["estimator", "compare", "release"])
def test_an_analysis_that_counts_rows_says_so_and_releases_nothing(page_name):
    at = choose_person(uploaded())
    go(at, "estimator")
    at.radio(key="estimator.analysis").set_value("gvdp").run()
    go(at, page_name)
    warning = text(at.main.warning)
    assert "counts each row as one person" in warning and "Each row is one person" in warning
    assert not any(b.key == "release.commit" for b in at.button)


def test_bad_choices_say_what_is_wrong_and_how_to_fix_it():
    at = choose_person(uploaded())
    set_bound(at, "max_rows_per_person", 0)
    assert "“At most M rows per person in a group” must be a whole number of 1 or more, got 0" in (
        errors(at)
    )
    set_bound(at, "max_rows_per_person", 1)
    assert not at.main.error
    choose_person(at, "hours_per_week")
    assert "also the value to estimate" in errors(at)
    choose_person(at, "race")
    assert "also a grouping column" in errors(at) and "Strata page" in errors(at)
    go(at, "compare")
    assert "also a grouping column" in errors(at)  # nothing simulated, nothing released


def test_missing_ids_are_counted_and_refused():
    frame = pd.read_csv(pd.io.common.BytesIO(households()))
    frame.loc[[5, 9, 11], "household"] = np.nan
    at = choose_person(uploaded(frame.to_csv(index=False).encode()))
    assert "3 rows of the data have no id in the person column `household`" in errors(at)
    go(at, "release")
    assert "3 rows of the data have no id" in errors(at)
    assert not any(b.key == "release.commit" and not b.disabled for b in at.button)


def test_a_refresh_brings_the_person_column_and_its_bounds_back():
    at = choose_person(uploaded())
    set_bound(at, "max_rows_per_person", 2)
    set_bound(at, "max_groups_per_person", 3)
    link = dict(at.query_params.items())
    assert link["person_column"] == "household" and link["max_groups_per_person"] == "3"
    again = upload(go(start("data", **link), "data"), households(), NAME)
    state = state_of(again)
    assert (state.person_column, state.max_rows_per_person, state.max_groups_per_person) == (
        "household",
        2,
        3,
    )
    assert again.number_input(key=f"data.max_groups_per_person.{fingerprint(again)}").value == 3
    # The value column comes back in its widget too, not only in the settings.
    assert again.main.selectbox[0].value == "hours_per_week" and not again.main.warning


def test_files_read_where_they_lie_bound_each_household_in_the_engine(tmp_path):
    """The households as Parquet opened by path: DuckDB counts what the bounds leave out as
    the rows in memory count it, bounds each household's rows, the release records the unit,
    and its statistics are the engine's."""
    frame = pd.read_csv(pd.io.common.BytesIO(households()))
    frame.to_parquet(tmp_path / "households.parquet")
    at = start("data")
    [path_box] = [t for t in at.text_input if t.key.startswith("data.path")]
    path_box.input(str(tmp_path / "households.parquet")).run()
    at.button(key="data.open").click().run()
    at.selectbox(key="mean.value").set_value("hours_per_week").run()
    go(at, "strata")
    at.multiselect(key=f"strata.columns.{fingerprint(at)}").set_value(["race", "sex"]).run()
    change_settings(at, MeanSettings, clip_low=0.0, clip_high=100.0)
    go(at, "data")
    choose_person(at)
    set_bound(at, "max_groups_per_person", 2)
    # The preview, counted by DuckDB where the rows lie, is the count of the rows in memory.
    expected = preview_bound(
        cell_labels(frame, ("race", "sex")), frame["household"], PrivacyUnit("household", 2, 1)
    )
    assert expected.dropped > 0
    shown = {
        "Rows left out": f"{expected.dropped:,}",
        "People affected": f"{expected.people_affected:,}",
        "Most rows of one person in a group": f"{expected.most_rows_in_a_group:,}",
    }
    assert {label: metrics(at).get(label) for label in shown} == shown
    assert "curator's view" in text(at.main.markdown)
    go(at, "estimator")
    assert "Bounding each person to 2 groups and 1 row per group left out" in text(at.main.info)
    review = release_review(at)
    assert "**Read by:** the duckdb engine" in review and "one person per value" in review
    _, record = commit_once(at)
    metadata = record.payload["metadata"]
    assert metadata["plan"]["privacy_unit"] == {
        "column": "household", "max_groups": 2, "max_rows": 1,
    }  # fmt: skip
    assert "PrivacyUnit('household', max_groups=2, max_rows=1)" in metadata["script"]
