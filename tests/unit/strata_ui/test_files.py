"""The app's data layer for files on this machine (an engine source): a fingerprint that
follows the files, and the groups, categories and grouping rules of the Strata page from
DuckDB's passes, equal to what the same rows give in memory."""

from __future__ import annotations

import os
import threading

import numpy as np
import pandas as pd
import pytest
import streamlit as st

from dpcore.engines import EngineError
from dpcore.foundations.grouping import GroupingSpec
from strata_ui import engine_sources, files
from strata_ui.files import FilesSource
from strata_ui.pipeline import _data_categories


def people(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "region": rng.choice(["North", "South", "East", None], rows),
            "paid": rng.integers(0, 2, rows),
            "age": rng.integers(18, 90, rows),
            "hours": rng.normal(38, 12, rows),
            "urban": rng.integers(0, 2, rows).astype(float),  # codes written as 0.0/1.0
        }
    )


@pytest.fixture
def folder(tmp_path):
    st.cache_data.clear()
    st.cache_resource.clear()
    for i in range(2):
        people(300, i).to_parquet(tmp_path / f"part-{i}.parquet")
    return tmp_path


def frame_of(folder) -> pd.DataFrame:
    return pd.concat(people(300, i) for i in range(2))


def test_the_fingerprint_follows_the_files_not_the_way_they_are_named(folder):
    first = files.files_fingerprint(str(folder))
    assert first.startswith("files:")
    assert files.files_fingerprint(str(folder / "*.parquet")) == first
    assert files.files_fingerprint(str(folder) + "/") == first
    part = folder / "part-1.parquet"
    people(301, 1).to_parquet(part)  # another size
    assert files.files_fingerprint(str(folder)) != first
    second = files.files_fingerprint(str(folder))
    stat = part.stat()
    os.utime(part, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # touched
    assert files.files_fingerprint(str(folder)) != second
    with pytest.raises(EngineError, match="No data at"):
        files.files_fingerprint(str(folder / "missing"))


def test_opened_files_know_their_columns_and_rows(folder):
    opened = engine_sources.opened(FilesSource(str(folder)), files.files_fingerprint(str(folder)))
    assert opened.rows == 600
    assert opened.kinds == {
        "region": "text", "paid": "whole number", "age": "whole number", "hours": "decimal number",
        "urban": "decimal number",
    }  # fmt: skip


def test_grouping_rules_follow_the_engines(folder):
    location, key = FilesSource(str(folder)), files.files_fingerprint(str(folder))
    rules = {
        column: engine_sources.column_rule(location, key, column) for column in people(1, 0).columns
    }
    assert rules == {
        "region": "values", "paid": "codes", "age": "edges", "hours": "edges", "urban": "codes",
    }  # fmt: skip


@pytest.mark.parametrize(
    "spec",
    [
        GroupingSpec(by=("region", "paid"), min_group_size=60),
        GroupingSpec(by=("urban",)),
        GroupingSpec(
            by=("age",), edges=(("age", (30.0, 60.0)),), small_groups="drop", min_group_size=100
        ),  # fmt: skip
        GroupingSpec(
            by=("region",),
            share_source="table",
            share_table=(("North", 1.0), ("South", 2.0), ("East", 1.0), ("(missing)", 1.0)),
        ),  # fmt: skip
    ],
)
def test_groups_and_categories_are_those_of_the_rows(folder, spec):
    location, key = FilesSource(str(folder)), files.files_fingerprint(str(folder))
    frame = frame_of(folder)
    grouping, in_memory = engine_sources.grouping(location, key, spec), spec.build(frame)
    assert grouping.labels == in_memory.labels
    np.testing.assert_array_equal(grouping.sizes, in_memory.sizes)
    np.testing.assert_allclose(grouping.shares.values, in_memory.shares.values)
    assert [m for m in grouping.report.messages()] == in_memory.report.messages()
    column = spec.by[0]
    edges = dict(spec.edges).get(column)
    assert engine_sources.categories_found(location, key, column, edges) == _data_categories(
        frame, "test", column, edges
    )


def test_a_holdout_cannot_be_drawn_from_files(folder):
    spec = GroupingSpec(by=("region",), share_source="holdout", holdout_fraction=0.1)
    with pytest.raises(ValueError, match="holdout is drawn row by row"):
        engine_sources.grouping(
            FilesSource(str(folder)), files.files_fingerprint(str(folder)), spec
        )


class Polled:
    """An engine that is always half-way through a pass, and counts how often it was asked."""

    def __init__(self) -> None:
        self.asked = 0
        self.asked_twice = threading.Event()

    def progress(self) -> float:
        self.asked += 1
        if self.asked >= 2:
            self.asked_twice.set()
        return 0.5


def test_a_slow_pass_shows_its_progress_and_a_cached_one_comes_back_at_once():
    slow, quick = Polled(), Polled()
    # The pass ends once its progress was asked twice: the page polls while it runs.
    assert (
        engine_sources.with_progress(slow, "Reading", lambda: slow.asked_twice.wait(30) and 7) == 7
    )
    assert engine_sources.with_progress(quick, "Reading", lambda: 8) == 8
    assert quick.asked == 0


def test_an_error_of_a_pass_comes_back_to_the_page():
    def unreadable():
        raise EngineError("Could not read /data/x: cut short.")

    with pytest.raises(EngineError, match="cut short"):
        engine_sources.with_progress(Polled(), "Reading", unreadable)


def test_an_installation_may_keep_files_under_one_folder(folder, tmp_path_factory, monkeypatch):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    people(10, 0).to_parquet(elsewhere / "x.parquet")
    monkeypatch.setenv(files.DATA_ROOT_ENV, str(folder))
    assert files.files_fingerprint(str(folder / "part-0.parquet")).startswith("files:")
    for outside in (elsewhere, folder / ".." / elsewhere.name / "x.parquet"):
        with pytest.raises(EngineError, match=f"not under {folder}, the only folder"):
            files.files_fingerprint(str(outside))
    (folder / "link.parquet").symlink_to(elsewhere / "x.parquet")  # a way out is still outside
    with pytest.raises(EngineError, match="STRATA_LAB_DATA_ROOT"):
        files.files_fingerprint(str(folder))


def test_nothing_outside_the_folder_is_listed_or_named(folder, tmp_path_factory, monkeypatch):
    """A glob or a path outside the root is refused before any listing: the refusal names what
    the user typed, never a file found there, and says nothing of whether it exists."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "id_rsa").write_text("secret")
    monkeypatch.setenv(files.DATA_ROOT_ENV, str(folder))
    for typed in (f"{elsewhere}/*", f"{elsewhere}/no-such-thing", f"{folder}/../*/id_rsa", "/*"):
        with pytest.raises(EngineError, match="only folder this installation opens") as refused:
            files.files_fingerprint(typed)
        assert "id_rsa" not in str(refused.value).replace(typed, "")
    assert files.files_fingerprint(f"{folder}/*.parquet").startswith("files:")


def test_a_link_out_of_the_folder_is_refused_alike_whether_or_not_its_target_exists(
    folder, tmp_path_factory, monkeypatch
):
    """A listing follows only links to files that exist: a link out of the root is refused
    before it, so a dangling link and a live one get the same answer."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "real.parquet").write_bytes((folder / "part-0.parquet").read_bytes())
    monkeypatch.setenv(files.DATA_ROOT_ENV, str(folder))
    answers = []
    for target in ("real.parquet", "absent.parquet"):
        inside = folder / "inside"
        inside.mkdir()
        (inside / "link.parquet").symlink_to(elsewhere / target)
        for typed in (str(inside), f"{inside}/*.parquet"):
            with pytest.raises(EngineError) as refused:
                files.files_fingerprint(typed)
            answers.append(str(refused.value).replace(typed, "TYPED"))
        (inside / "link.parquet").unlink()
        inside.rmdir()
    assert len(set(answers)) == 1 and "not under" in answers[0]
