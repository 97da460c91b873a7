"""App tests of the calibration ratio with a person column ("Who is one person?" on the Data
page): Estimator, Compare, Plan and Release with each household's rows bounded, in memory and on
a folder of Parquet files read by DuckDB; the noise follows the bounds changed twice in a row;
the release's metadata and script record the unit and each sum's sensitivity is c times one
row's."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.analyses.ratio import RatioSettings
from dpcore.foundations.datasets import load_demo
from dpcore.foundations.ledger import Ledger
from dpcore.release import public_metadata
from tests.app.helpers import (
    charts,
    errors,
    go,
    ratio_end_to_end,
    settings_of,
    start,
    state_of,
    text,
    upload,
)
from tests.app.test_files_on_disk import open_files

NAME = "scored_households.csv"
ROWS = 8000
HALF_WIDTHS = (2.0, 1.0)
"""Targets on the Plan page that the bounded households can meet (a person's 4 rows get four
times one row's noise, and the women's Σ label is small)."""
UNIT = {"column": "household", "max_groups": 2, "max_rows": 2}


@functools.cache
def households() -> pd.DataFrame:
    """8,000 rows of the demo data (its classifier's score and 0/1 income label) in households
    of 1 to 4 rows, some spread over both sexes: demo-like data whose rows are not people."""
    rng = np.random.default_rng(5)
    frame = load_demo().sample(ROWS, random_state=5).reset_index(drop=True)
    frame["household"] = np.repeat(np.arange(ROWS), rng.integers(1, 5, ROWS))[:ROWS]
    return frame[["sex", "race", "score", "income_over_50k", "household"]]


def fingerprint(at: AppTest) -> str:
    return state_of(at).dataset_fingerprint


def ratio_by_sex(at: AppTest) -> AppTest:
    go(at, "strata").multiselect(key=f"strata.columns.{fingerprint(at)}").set_value(["sex"]).run()
    go(at, "estimator").radio(key="estimator.analysis").set_value("ratio").run()
    assert not at.main.error, errors(at)
    return at


def bound_households(at: AppTest) -> AppTest:
    """Each household bounded to M = 2 rows in G = 2 groups (each set twice in a row: the
    second value sticks)."""
    go(at, "data")
    at.selectbox(key=f"data.person_column.{fingerprint(at)}").set_value("household").run()
    for name, values in (("max_rows_per_person", (3, 2)), ("max_groups_per_person", (1, 2))):
        for value in values:
            at.number_input(key=f"data.{name}.{fingerprint(at)}").set_value(value).run()
            assert not at.exception, [e.value for e in at.exception]
    state = state_of(at)
    assert (state.max_rows_per_person, state.max_groups_per_person) == (2, 2)
    assert "up to 4 rows" in text(at.main.caption) and not at.main.error, errors(at)
    return at


def noise_on_the_sums(at: AppTest) -> float:
    """The Estimator page's σ on Σws and Σwy at the Budget page's budget."""
    [table] = [d.value for d in at.main.dataframe if "Noise σ on Σws and Σwy" in d.value]
    return float(table["Noise σ on Σws and Σwy"].iloc[0])


def check_the_release(review: str, record) -> None:
    assert "**Privacy unit:** one person per value of `household`" in review
    assert "each sum's sensitivity is 4 times one row's" in review
    metadata = record.payload["metadata"]
    assert metadata["plan"]["privacy_unit"] == UNIT
    assert public_metadata(metadata)["plan"]["privacy_unit"] == UNIT  # what the exports carry
    assert "PrivacyUnit('household', max_groups=2, max_rows=2)" in metadata["script"]


def test_the_ratio_with_households_in_memory_runs_every_page_and_releases_once():
    at = upload(start("data"), households().to_csv(index=False).encode(), NAME)
    one_row = noise_on_the_sums(ratio_by_sex(at))
    bound_households(at)
    go(at, "estimator")
    assert not at.main.error, errors(at)
    assert "Bounding each person to 2 groups and 2 rows per group left out" in text(at.main.warning)
    assert noise_on_the_sums(at) == pytest.approx(4 * one_row)  # c = 4 rows per person
    go(at, "compare")
    at.checkbox(key="ratio_view.bootstrap").check().run()  # households redrawn whole
    assert (
        not at.main.error and "noise and rows resampled" in charts(at)[0]["layout"]["title"]["text"]
    )
    at.checkbox(key="ratio_view.bootstrap").uncheck().run()
    review, _, record = ratio_end_to_end(at, HALF_WIDTHS)
    check_the_release(review, record)
    assert "unit=PrivacyUnit(" in record.payload["metadata"]["script"]
    assert settings_of(at, RatioSettings) == RatioSettings()


def test_the_ratio_with_households_on_parquet_files_bounds_them_in_duckdb(tmp_path: Path):
    folder = tmp_path / "households"
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(ROWS), 3)):
        households().iloc[rows].to_parquet(folder / f"part-{i}.parquet")
    at = start("data")
    open_files(at, folder)
    bound_households(ratio_by_sex(at))
    review, _, record = ratio_end_to_end(at, HALF_WIDTHS)
    assert "**Read by:** the duckdb engine" in review
    check_the_release(review, record)
    assert "aggregate_ratio(DuckDBEngine(" in record.payload["metadata"]["script"]


def test_a_person_column_that_also_groups_stops_the_ratio_and_spends_nothing():
    at = upload(start("data"), households().to_csv(index=False).encode(), NAME)
    bound_households(ratio_by_sex(at))
    at.selectbox(key=f"data.person_column.{fingerprint(at)}").set_value("sex").run()
    assert "also a grouping column" in errors(at) and "Strata page" in errors(at)
    for page in ("estimator", "compare", "release"):
        go(at, page)
        assert "also a grouping column" in errors(at), page
    assert not any(b.key == "release.commit" and not b.disabled for b in at.button)


def test_missing_ids_in_files_are_named_on_every_page_and_nothing_is_spent(tmp_path: Path):
    frame = households().assign(household=households()["household"].astype(float))
    frame.loc[[5, 9, 11], "household"] = np.nan
    frame.to_parquet(tmp_path / "households.parquet")
    at = start("data")
    open_files(at, tmp_path / "households.parquet")
    ratio_by_sex(at)
    go(at, "data")
    at.selectbox(key=f"data.person_column.{fingerprint(at)}").set_value("household").run()
    message = "3 rows of the data have no id in the person column `household`"
    assert message in errors(at) and "Fill in their ids, or remove those rows" in errors(at)
    for page in ("estimator", "compare", "release"):
        go(at, page)
        assert message in errors(at), page
    assert not any(b.key == "release.commit" and not b.disabled for b in at.button)
    assert not Ledger.open(None, "default").history()
