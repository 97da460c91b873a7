"""Synthetic data on files read where they lie by DuckDB: Estimator, Compare, Plan and Release
from each cell's count, never the rows; the release records the engine's pass and its script
runs it again; MST and a numeric column without edges say plainly what to do instead."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses import SYNTH
from dpcore.analyses.synth import SynthSettings
from dpcore.analyses.synth.accuracy import MEASURED_IN
from dpcore.engines import DuckDBEngine
from dpcore.foundations.grouping import GroupingSpec
from strata_ui import planner
from tests.app import helpers
from tests.app.test_files_on_disk import opened_by_region, released_from_the_files
from tests.frames import write_seeded_parts

HALF_WIDTH = f"planner_view.half_widths.{MEASURED_IN}"
SETTINGS = SynthSettings(
    method="independent", columns=("age", "job", "owns", "paid"),
    edges=(("age", (30.0, 50.0)),), categorical=("paid",), n_rows=200,
)  # fmt: skip


def people(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "region": rng.choice(["North", "South"], rows), "age": rng.integers(18, 80, rows),
        "job": rng.choice(["clerk", "nurse", "farmer"], rows), "owns": rng.random(rows) < 0.5,
        "paid": rng.integers(0, 2, rows),
    })  # fmt: skip


@pytest.fixture
def folder(tmp_path) -> Path:
    return write_seeded_parts(tmp_path / "people", lambda i: people(200, seed=i))


def synth_on(folder: Path):
    """The files opened, grouped by region, synthetic data with independent marginals."""
    at = opened_by_region(folder, "synth", timeout_s=90)  # a cold Compare sweep on two cores
    helpers.change_settings(
        at, SynthSettings, edges=SETTINGS.edges, categorical=SETTINGS.categorical
    )
    at.radio(key="synth.method").set_value(SETTINGS.method).run()
    at.number_input(key="synth.n_rows").set_value(SETTINGS.n_rows).run()
    [columns] = [m for m in at.main.multiselect if m.label == "Columns to synthesize"]
    columns.set_value(list(SETTINGS.columns)).run()
    assert not at.exception, [e.value for e in at.exception]
    assert helpers.settings_of(at, SynthSettings) == SETTINGS, helpers.settings_of(
        at, SynthSettings
    )
    return at


def test_synthetic_data_runs_estimator_compare_plan_and_release_on_the_files(folder, monkeypatch):
    monkeypatch.setattr(planner, "QUICK_MODEL_S", 60.0)  # built on opening, however busy
    at = synth_on(folder)
    assert not at.main.error, helpers.errors(at)
    assert "needs the rows in memory" not in helpers.text(at.main.info)
    [preview] = [d.value for d in at.main.dataframe if "region" in d.value.columns]
    assert set(preview.columns) == {"age", "job", "owns", "paid", "region"}
    assert "category lists of `job`, `owns`, `paid`" in helpers.text(
        at.main.caption
    )  # said unprotected

    helpers.go(at, "compare")
    assert not at.main.error, helpers.errors(at)
    first = helpers.charts(at)
    for runs in (2, 1):  # changed twice in a row
        at.slider(key="synth_view.runs").set_value(runs).run()
        assert not at.main.error, helpers.errors(at)
    assert helpers.charts(at) and helpers.charts(at) != first

    helpers.go(at, "plan")
    assert not at.main.error, helpers.errors(at)
    shown = {helpers.answer_shown(at)}
    for half_width in (1.0, 0.8):  # changed twice in a row
        at.number_input(key=HALF_WIDTH).set_value(half_width).run()
        assert not at.main.error, helpers.errors(at)
        shown.add(helpers.answer_shown(at))
    assert len(shown) == 3

    record = released_from_the_files(at, "aggregate_synth")
    metadata = record.payload["metadata"]
    config = SYNTH.config(SETTINGS, DuckDBEngine(folder).column_kinds(), ("region",))
    expected = SYNTH.engine_statistics(DuckDBEngine(folder), GroupingSpec(by=("region",)), SETTINGS)
    assert metadata["plan"]["dataset"]["identity"] == expected.dataset.identity
    assert metadata["plan"]["estimator"]["columns"] == list(config.columns)
    assert len(record.payload["outputs"]) == SETTINGS.n_rows


def test_mst_and_a_numeric_column_without_edges_say_what_to_do(folder):
    at = synth_on(folder)
    helpers.state_of(at).budget_kind = "zcdp"  # the budget MST runs at
    for method in ("mst", "independent", "mst"):  # changed again and again
        at.radio(key="synth.method").set_value(method).run()
    assert "MST and AIM are fitted by OpenDP" in helpers.errors(at)
    assert "Choose MWEM, independent marginals or the full histogram" in helpers.errors(at)
    at.radio(key="synth.method").set_value("mwem").run()
    assert not at.main.error, helpers.errors(at)
    [edges] = [t for t in at.text_input if t.label == "Bucket edges for age"]
    for typed in ("40", ""):  # new edges, then none
        edges.set_value(typed).run()
    assert "Column `age` is numeric: type public bucket edges for it" in helpers.errors(at)
    assert not at.exception
