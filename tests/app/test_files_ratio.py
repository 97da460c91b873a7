"""The calibration ratio on data in files read where it lies by DuckDB: Estimator, Compare, Plan
and Release without loading the rows; the release records the engine and the same sums as the
engine's pass; a text score or a label that is not 0/1 says what to fix; the bootstrap, which
needs the rows, says so plainly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.ratio import RatioBounds, RatioSettings
from dpcore.analyses.ratio.aggregate import aggregate_ratio
from dpcore.engines import DuckDBEngine
from dpcore.foundations.grouping import GroupingSpec
from strata_ui.files import FilesSource
from tests.app import helpers
from tests.app.test_files_on_disk import opened_by_region, released_from_the_files
from tests.frames import write_seeded_parts

ROWS_PER_PART = 300


def scored(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    score = rng.beta(2, 3, rows)
    return pd.DataFrame({
        "region": rng.choice(["North", "South", "East"], rows), "score": score,
        "outcome": (rng.random(rows) < score).astype(int), "spend": rng.uniform(0, 5, rows),
        "note": "text",
    })  # fmt: skip


@pytest.fixture
def folder(tmp_path) -> Path:
    return write_seeded_parts(tmp_path / "scores", lambda i: scored(ROWS_PER_PART, seed=i))


def ratio_on(folder: Path):
    """The files opened, grouped by region, the ratio of score to outcome chosen."""
    at = opened_by_region(folder, "ratio")
    at.selectbox(key="ratio.s_column").set_value("score").run()
    at.selectbox(key="ratio.y_column").set_value("outcome").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_ratio_runs_estimator_compare_plan_and_release_on_the_files(folder):
    at = ratio_on(folder)
    assert not at.main.error, helpers.errors(at)
    assert "needs the rows in memory" not in helpers.text(at.main.info)
    # Only numbers may be a score or a label.
    assert at.selectbox(key="ratio.s_column").options == ["score", "outcome", "spend"]
    [preview] = helpers.charts(at)
    assert preview["layout"]["title"]["text"].startswith("Calibration ratio per group")

    helpers.go(at, "compare")
    assert not at.main.error, helpers.errors(at)
    assert "resampling the rows (a bootstrap) needs the rows in memory" in helpers.text(
        at.main.caption
    )
    first = helpers.charts(at)[0]
    for budget in (0.2, 2.0):  # moved twice in a row
        at.select_slider(key="compare.ratio.budget.pure").set_value(budget).run()
        assert not at.main.error, helpers.errors(at)
    assert helpers.charts(at)[0] != first

    helpers.go(at, "plan")
    assert not at.main.error, helpers.errors(at)
    # A target the small files can meet, changed twice in a row.
    answers = helpers.answers_to_targets(at, helpers.RATIO_HALF_WIDTH, (0.5, 0.3))
    assert answers[0] != answers[1]

    record = released_from_the_files(at, "aggregate_ratio")
    metadata = record.payload["metadata"]
    expected = aggregate_ratio(
        DuckDBEngine(folder), GroupingSpec(by=("region",)), s_column="score",
        y_column="outcome", bounds=RatioBounds(1.0, 1.0), binary_y=True,
    ).dataset  # fmt: skip
    assert metadata["plan"]["dataset"]["identity"] == expected.identity
    assert metadata["plan"]["estimator"]["class"] == "RatioPlan"


def test_a_label_that_is_not_0_1_on_the_files_says_what_to_fix(folder):
    """Only numeric columns are offered (a text score cannot be chosen); a label declared 0/1
    that is not is found by the engine's pass, and the message says what to change."""
    at = ratio_on(folder)
    for label in ("spend", "outcome", "spend"):  # changed again and again
        at.selectbox(key="ratio.y_column").set_value(label).run()
    assert "label column `spend` has values other than 0 and 1" in helpers.errors(at)
    assert "untick “Label is binary (0/1)”" in helpers.errors(at)
    at.checkbox(key="ratio.binary_y").uncheck().run()
    at.number_input(key="ratio.y_bound").set_value(5.0).run()
    assert not at.main.error, helpers.errors(at)
    assert helpers.settings_of(at, RatioSettings).y_bound == 5.0
    assert helpers.state_of(at).source == FilesSource(str(folder))
