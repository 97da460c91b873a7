"""Unit tests of strata_ui.uploads: what an upload does to the session, and typed bucket edges."""

import pandas as pd
import pytest
import streamlit as st

from dpcore.analyses.mean import MeanSettings
from dpcore.foundations.datasets import DEMO_DATASET_NAME
from strata_ui import roles
from strata_ui.files import FilesSource
from strata_ui.state import AppState, get_settings, update_settings
from strata_ui.uploads import (
    fingerprint,
    format_edges,
    handle_upload,
    open_source,
    parse_edges,
    restore_demo,
)
from tests.frames import BAD_FILES

GOOD = b"id,group,hours\n1,a,40\n2,b,35\n3,a,50\n"


@pytest.fixture(autouse=True)
def fresh_session():
    """Each test starts from the default settings of every analysis, used by the curator of
    single-user mode (uploads and opening data are a curator's; test_roles checks the others)."""
    st.session_state.clear()
    roles.set_current_user(roles.single_user())
    yield
    st.session_state.clear()


def mean() -> MeanSettings:
    return get_settings(MeanSettings)


def choose(state: AppState, value: str, strata: list[str]) -> None:
    update_settings(MeanSettings, value=value)
    state.strata_columns = strata


def uploaded_state() -> AppState:
    state = AppState()
    assert handle_upload(state, GOOD, "good.csv") is None
    return state


def test_good_upload_replaces_the_dataset_and_resets_column_choices():
    state = AppState()
    assert handle_upload(state, GOOD, "good.csv") is None
    assert list(state.uploaded.columns) == ["id", "group", "hours"]
    assert state.dataset_name == "good.csv"
    assert state.dataset_fingerprint == fingerprint(GOOD)
    assert len(state.dataset_fingerprint) == 16
    assert mean().value is None
    assert state.strata_columns == []
    assert state.bucket_edges == {}
    assert mean().clip_low is None and mean().clip_high is None


def test_same_file_again_keeps_the_choices():
    state = uploaded_state()
    choose(state, "hours", ["group"])
    state.bucket_edges = {"id": [2.0]}
    assert handle_upload(state, GOOD, "good.csv") is None
    assert (mean().value, state.strata_columns) == ("hours", ["group"])
    assert state.bucket_edges == {"id": [2.0]}


def test_a_different_file_resets_the_choices():
    state = uploaded_state()
    choose(state, "hours", ["group"])
    assert handle_upload(state, GOOD + b"4,b,20\n", "other.csv") is None
    assert (mean().value, state.strata_columns, state.dataset_name) == (
        None,
        [],
        "other.csv",
    )


@pytest.mark.parametrize("case", BAD_FILES, ids=str)
def test_bad_file_returns_a_message_and_keeps_the_demo(case):
    data, name, words = BAD_FILES[case]
    state = AppState()
    before = AppState()
    message = handle_upload(state, data, name)
    assert message is not None and words in message
    assert state == before  # nothing changed: the demo and its defaults are still in use
    assert mean() == MeanSettings()


@pytest.mark.parametrize("case", BAD_FILES, ids=str)
def test_bad_file_keeps_the_previous_upload(case):
    data, name, words = BAD_FILES[case]
    state = uploaded_state()
    choose(state, "hours", ["group"])
    frame = state.uploaded
    assert words in handle_upload(state, data, name)
    assert state.uploaded is frame
    assert (state.dataset_name, state.dataset_fingerprint) == ("good.csv", fingerprint(GOOD))
    assert (mean().value, state.strata_columns) == ("hours", ["group"])


def test_restore_demo_brings_back_the_demo_defaults_and_empties_the_uploader():
    state = uploaded_state()
    generation = state.upload_generation
    restore_demo(state)
    assert state.uploaded is None
    assert state.dataset_name == DEMO_DATASET_NAME
    assert state.dataset_fingerprint == "demo"
    assert mean().value == "hours_per_week"
    assert state.strata_columns == ["race", "sex"]
    assert (mean().clip_low, mean().clip_high) == (0.0, 100.0)
    assert state.upload_generation == generation + 1


def test_upload_after_demo_restore_is_read_again():
    state = uploaded_state()
    restore_demo(state)
    assert handle_upload(state, GOOD, "good.csv") is None
    assert isinstance(state.uploaded, pd.DataFrame)


@pytest.mark.parametrize(
    ("text", "edges"),
    [
        ("25, 35, 50, 65", [25.0, 35.0, 50.0, 65.0]),
        ("", []),
        (" 1.5;2 ,", [1.5, 2.0]),
        ("25 35  50", [25.0, 35.0, 50.0]),
    ],
)
def test_parse_edges(text, edges):
    assert parse_edges(text, "age") == edges
    assert parse_edges(format_edges(edges), "age") == edges


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("25, thirty, 50", "“thirty” is not a number"),
        ("25, inf", "“inf” is not a finite number"),
        ("25, 20", "must increase"),
        ("25, 25", "must increase"),
    ],
)
def test_parse_edges_names_the_problem(text, words):
    with pytest.raises(ValueError, match="`age`") as info:
        parse_edges(text, "age")
    assert words in str(info.value)


def test_opening_files_makes_them_the_dataset_and_a_bad_path_changes_nothing(tmp_path):
    st.cache_resource.clear()
    pd.DataFrame({"group": ["a", "b"] * 5, "hours": range(10)}).to_parquet(tmp_path / "p.parquet")
    state = AppState()
    choose(state, "hours_per_week", ["race"])
    assert open_source(state, FilesSource("  ")).startswith("Type the path")
    assert "No data at" in open_source(state, FilesSource(str(tmp_path / "missing")))
    assert state.source is None and state.strata_columns == ["race"]  # the demo, untouched

    assert open_source(state, FilesSource(str(tmp_path))) is None
    assert state.source == FilesSource(str(tmp_path)) and state.dataset_name == str(tmp_path)
    assert state.dataset_fingerprint.startswith("files:") and state.uploaded is None
    assert state.strata_columns == [] and mean().value is None and mean().clip_low is None
    choose(state, "hours", ["group"])
    assert open_source(state, FilesSource(str(tmp_path / "*.parquet"))) is None  # same files: kept
    assert state.strata_columns == ["group"] and mean().value == "hours"

    assert handle_upload(state, GOOD, "mine.csv") is None  # an upload replaces the files
    assert state.source is None and state.uploaded is not None
    open_source(state, FilesSource(str(tmp_path)))
    restore_demo(state)
    assert state.source is None and state.dataset_name == DEMO_DATASET_NAME
