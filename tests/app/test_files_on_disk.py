"""Data in files on this machine, read where it lies by DuckDB: open a folder of Parquet parts,
group, estimate, compare, plan and release the mean without loading the rows; bad paths say
what is wrong and keep the data in use; a refresh opens the files again."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.mean import MeanSettings
from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.engines import DuckDBEngine
from dpcore.foundations.grouping import GroupingSpec
from strata_ui.files import DATA_ROOT_ENV, FilesSource
from strata_ui.learn import all_explainers as every_explainer
from tests.app.helpers import (
    TIMEOUT_S,
    change_settings,
    charts,
    choose_analysis,
    commit_once,
    errors,
    go,
    mean_end_to_end,
    settings_of,
    start,
    state_of,
    text,
)

ROWS_PER_PART = 400


def people(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "region": rng.choice(["North", "South", "East"], rows),
            "paid": rng.integers(0, 2, rows),
            "age": rng.integers(18, 90, rows),
            "hours": rng.normal(38, 12, rows).round(1),
        }
    )


@pytest.fixture
def folder(tmp_path) -> Path:
    """A folder of three Parquet parts, one in a subfolder, as a cluster job writes them."""
    parts = tmp_path / "people"
    (parts / "year=2024").mkdir(parents=True)
    for i, name in enumerate(["part-0.parquet", "part-1.parquet", "year=2024/part-2.parquet"]):
        people(ROWS_PER_PART, seed=i).to_parquet(parts / name)
    return parts


def open_files(at, location) -> None:
    """Type ``location`` on the Data page and press Open."""
    [path_box] = [t for t in at.text_input if t.key.startswith("data.path")]
    path_box.input(str(location)).run()
    at.button(key="data.open").click().run()
    assert not at.exception, [e.value for e in at.exception]


def opened_by_region(folder: Path, analysis: str, *, timeout_s: float = TIMEOUT_S):
    """The Estimator page with ``analysis`` chosen on the files in ``folder``, grouped by their
    ``region``."""
    at = start("data")
    at.default_timeout = timeout_s
    open_files(at, folder)
    go(at, "strata").main.multiselect[0].set_value(["region"]).run()
    return choose_analysis(go(at, "estimator"), analysis)


def released_from_the_files(at, aggregate: str):
    """Open the Release page, check its review says DuckDB reads the data where it lies, commit
    once, and check the recorded script calls ``aggregate`` on a DuckDB engine; the record."""
    review = text(go(at, "release").main.markdown)
    assert not at.main.error, errors(at)
    assert "**Read by:** the duckdb engine, where the data lies" in review
    _, record = commit_once(at)
    assert f"{aggregate}(DuckDBEngine(" in record.payload["metadata"]["script"]
    return record


def opened(folder: Path):
    """The Data page with ``folder`` opened, grouped by region, hours in [0, 80]."""
    at = start("data")
    open_files(at, folder)
    return mean_hours_by_region(at)


def mean_hours_by_region(at):
    """On the Data page of a source just opened: the mean of ``hours`` in [0, 80], grouped by
    ``region`` (the columns every on-disk and Spark fixture holds)."""
    at.selectbox(key="mean.value").set_value("hours").run()
    go(at, "strata")
    at.main.multiselect[0].set_value(["region"]).run()
    change_settings(at, MeanSettings, clip_low=0.0, clip_high=80.0)
    return at


def test_opening_a_folder_shows_its_columns_kinds_and_the_curators_row_count(folder):
    at = start("data")
    open_files(at, folder)
    state = state_of(at)
    assert state.source == FilesSource(str(folder)) and state.uploaded is None
    rows = at.main.metric[0]
    assert rows.label == "Rows (curator's view)" and rows.value == f"{3 * ROWS_PER_PART:,}"
    [columns] = [d.value for d in at.main.dataframe]
    assert dict(zip(columns["column"], columns["type"], strict=True)) == {
        "region": "text", "paid": "whole number", "age": "whole number", "hours": "decimal number",
    }  # fmt: skip
    assert "machine that runs the app" in text(at.main.markdown)
    assert "What next" in text(at.main.markdown)  # the page goes on to the next steps
    sidebar = text(at.sidebar.markdown)
    assert f"{3 * ROWS_PER_PART:,} rows" in sidebar
    # The folder's path is said once, in where the rows stay.
    assert f"Read where it lies, in the files at {folder}" in sidebar
    assert sidebar.count(str(folder)) == 1, sidebar
    # Only numbers can be averaged.
    assert at.selectbox(key="mean.value").options == ["paid", "age", "hours"]
    # Bounds are still to be typed: the Estimator page asks for them, without an error.
    at.selectbox(key="mean.value").set_value("hours").run()
    go(at, "strata").main.multiselect[0].set_value(["region"]).run()
    assert not go(at, "estimator").main.error, errors(at)


def test_the_strata_page_groups_from_the_engines_counts(folder):
    at = opened(folder)
    frame = pd.concat(people(ROWS_PER_PART, seed=i) for i in range(3))
    sizes = frame["region"].value_counts()
    assert at.main.metric[1].value == f"{len(frame):,}"
    assert at.main.metric[2].value == f"{int(sizes.min()):,} rows"
    # Whole numbers with few values are codes; many values need public edges.
    at.main.multiselect[0].set_value(["region", "paid"]).run()
    assert "`paid`: whole numbers" in text(at.main.caption)
    assert at.main.metric[0].value == "6"
    at.main.multiselect[0].set_value(["age"]).run()
    assert "enter bucket edges for it" in text(at.main.warning)
    at.text_input(key=f"strata.edges.age.{state_of(at).dataset_fingerprint}").input("30, 60").run()
    assert at.main.metric[0].value == "3"
    assert not at.exception


def test_compare_plan_and_release_run_on_the_files_and_record_the_engine(folder):
    at = opened(folder)
    review, ledger, record = mean_end_to_end(at)
    assert str(folder) in review and "**Read by:** the duckdb engine, where the data lies" in review
    assert "DuckDBEngine(" in record.payload["metadata"]["script"]
    # The release knows the files by their bytes, as the engine and the exported script do.
    expected = aggregate_mean(
        DuckDBEngine(folder), GroupingSpec(by=("region",)), "hours", (0.0, 80.0)
    ).dataset
    assert record.payload["metadata"]["plan"]["dataset"]["identity"] == expected.identity
    # A rerun commits nothing more.
    at.run()
    assert len(ledger.history()) == 1


def test_coinpress_releases_and_simulates_on_the_files(folder):
    """CoinPress's windows are cut to the public range (issue 42): with σ = 15 on hours in
    [0, 80] every window is the range itself, whose clipped sums the engine already has, so
    its simulations need no rows in memory (a narrower window would need them, and say so)."""
    at = opened(folder)
    at.radio(key="strata.share_source").set_value("data").run()  # CoinPress's sizes are public
    change_settings(at, MeanSettings, estimator="coinpress")
    go(at, "budget")
    at.radio(key="budget.kind").set_value("zcdp").run()
    assert not go(at, "estimator").main.error, errors(at)
    assert not go(at, "compare").main.error, errors(at)
    go(at, "release")
    assert not at.main.error, errors(at)
    _, record = commit_once(at)
    assert record.payload["metadata"]["plan"]["estimator"]["class"] == "CoinPressMean"


def test_analyses_that_need_the_rows_say_so_on_every_page(folder):
    at = opened(folder)
    go(at, "estimator")
    # The mean, the ratio, GVDP and synthetic data run on files; drawing a sample needs the rows.
    at.radio(key="estimator.analysis").set_value("sample").run()
    assert "needs the rows in memory" in text(at.main.info)
    for page in ("compare", "plan", "release"):
        assert "needs the rows in memory" in text(go(at, page).main.info)
    go(at, "estimator")
    at.radio(key="estimator.analysis").set_value("mean").run()
    assert "needs the rows in memory" not in text(at.main.info)


def test_bad_paths_say_what_is_wrong_and_keep_the_data_in_use(folder, tmp_path):
    at = opened(folder)
    go(at, "data")
    open_files(at, tmp_path / "nowhere")
    assert "No data at" in errors(at) and f"Still using “{folder}”" in errors(at)
    (folder / "part-9.parquet").write_bytes(b"not parquet")
    odd = tmp_path / "odd"
    odd.mkdir()
    people(10, 0).to_parquet(odd / "a.parquet")
    people(10, 1).drop(columns="age").to_parquet(odd / "b.parquet")
    open_files(at, odd)
    assert "does not have the same columns" in errors(at) and "lacks age" in errors(at)
    open_files(at, folder / "part-9.parquet")
    assert "part-9.parquet" in errors(at)
    state = state_of(at)
    assert state.source == FilesSource(str(folder)) and state.strata_columns == ["region"]


def test_an_installation_that_keeps_data_in_one_folder_opens_nothing_else(
    folder, tmp_path, monkeypatch
):
    monkeypatch.setenv(DATA_ROOT_ENV, str(folder))
    at = start("data")
    assert f"This installation opens files under `{folder}` only" in text(at.main.markdown)
    elsewhere = tmp_path / "elsewhere.parquet"
    people(10, 0).to_parquet(elsewhere)
    open_files(at, elsewhere)
    assert f"is not under {folder}" in errors(at) and "Still using the demo data" in errors(at)
    open_files(at, folder)
    assert state_of(at).source == FilesSource(str(folder))


def test_changing_the_path_twice_in_a_row_opens_each_and_resets_the_columns(folder, tmp_path):
    at = opened(folder)
    go(at, "data")
    one = tmp_path / "one.parquet"
    people(50, 5).to_parquet(one)
    open_files(at, one)
    assert state_of(at).source == FilesSource(str(one)) and state_of(at).strata_columns == []
    assert at.main.metric[0].value == "50"
    csv = tmp_path / "two.csv"
    people(70, 6).to_csv(csv, index=False)
    open_files(at, csv)
    assert state_of(at).source == FilesSource(str(csv)) and at.main.metric[0].value == "70"
    at.button[[b.label for b in at.button].index("Use the demo data again")].click().run()
    assert state_of(at).source is None and at.main.metric[0].value == "32,561"


def test_a_refresh_opens_the_files_again_with_the_choices(folder):
    at = opened(folder)
    go(at, "compare")
    link = dict(at.query_params.items())
    assert link["data"] == "files" and link["path"] == str(folder)
    again = start("compare", **link)
    state = state_of(again)
    assert state.source == FilesSource(str(folder)) and state.strata_columns == ["region"]
    assert settings_of(again, MeanSettings).value == "hours"
    assert not again.main.error, errors(again)
    assert len(charts(again)) == 3
    gone = start(**{**link, "path": str(folder / "missing")})
    assert "could not be opened again" in errors(gone) and "No data at" in errors(gone)
    assert state_of(gone).source is None
    assert not go(gone, "compare").main.error  # the demo data, as the notice said


def test_the_learn_page_explains_on_the_files_or_says_what_it_needs(folder):
    at = opened(folder)
    go(at, "learn")
    for item in every_explainer():
        at.session_state[f"learn.open.{item.key}"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "runs CoinPress step by step on one group's rows" in text(at.main.info)


def test_workshop_mode_puts_the_files_away_and_offers_no_path(folder):
    at = opened(folder)
    at.toggle(key="workshop").set_value(True).run()
    assert state_of(at).source is None
    go(at, "data")
    assert not [t for t in at.text_input if t.key.startswith("data.path")]
    assert at.main.metric[0].value == "32,561"
