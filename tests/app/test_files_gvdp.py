"""The general estimator (GVDP) on a folder of Parquet files read where it lies by DuckDB: the
mean and OLS through Estimator, Compare, Plan and Release without loading the rows; the release
records the engine's passes in its script; views that replay the rows say so plainly, and a
logistic model says it needs the rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.gvdp import GvdpSettings
from tests.app import helpers
from tests.app.test_files_on_disk import opened_by_region, released_from_the_files
from tests.frames import write_seeded_parts

ROWS_PER_PART = 400


def survey(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.uniform(20, 65, rows).round()
    degree = (rng.random(rows) < 0.4).astype(int)
    hours = (25 + 0.2 * age + 6 * degree + rng.normal(0, 8, rows)).clip(0, 99).round()
    return pd.DataFrame({"region": rng.choice(["North", "South"], rows), "age": age,
                         "degree": degree, "hours_per_week": hours, "note": "text"})  # fmt: skip


@pytest.fixture
def folder(tmp_path) -> Path:
    return write_seeded_parts(tmp_path / "survey", lambda i: survey(ROWS_PER_PART, seed=i))


def gvdp_on(folder: Path):
    """The files opened, grouped by region, GVDP chosen with k = 30 (the demo's k needs more
    rows)."""
    at = helpers.declare_exact_counts(opened_by_region(folder, "gvdp"))  # GVDP's sizes are public
    at.run()
    assert "needs the rows in memory" not in helpers.text(at.main.info)
    for model in ("ols", "mean"):  # each model's k, the last one chosen
        at.radio(key="gvdp.model").set_value(model).run()
        at.number_input(key=f"gvdp.ks.{model}").set_value(30).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_gvdp_runs_estimator_compare_plan_and_release_on_the_files(folder):
    at = gvdp_on(folder)
    assert not at.main.error, helpers.errors(at)
    outcome = next(s for s in at.selectbox if s.key.startswith("gvdp.outcomes.mean"))
    assert "note (text — not usable)" in outcome.options
    assert len(helpers.charts(at)) >= 2  # the preview per group and on the whole population
    assert "reads every row again and again" in helpers.text(at.main.info)  # the k diagnostic
    at.radio(key="gvdp.model").set_value("ols").run()
    covariates = next(m for m in at.multiselect if m.key.startswith("gvdp.covariates.ols"))
    covariates.set_value(["age", "degree"]).run()
    assert not at.main.error, helpers.errors(at)
    assert helpers.settings_of(at, GvdpSettings).covariate_columns == ("age", "degree")
    assert "the classical standard error" in helpers.text(at.main.caption)

    helpers.go(at, "compare")
    assert "reads every row again and again" in helpers.text(at.main.info)
    for source in ("synthetic", "data", "synthetic"):  # changed again and again
        at.radio(key="gvdp_view.coverage_source").set_value(source).run()
        assert not at.main.error, helpers.errors(at)
    assert helpers.charts(at)

    helpers.go(
        at, "plan"
    )  # uploaded data starts from a box found privately, which is not planned yet
    assert helpers.settings_of(at, GvdpSettings).box_source == "private"
    assert "does not cover a box found privately" in helpers.text(at.main.info)
    helpers.go(at, "estimator")
    at.radio(key="gvdp.box_source").set_value("typed").run()
    helpers.go(at, "plan")
    assert not at.main.error, helpers.errors(at)
    half_width = next(n for n in at.number_input if n.key.startswith("planner_view.half_widths"))
    # Changed twice in a row (the groups need ±5 at any budget).
    answers = helpers.answers_to_targets(at, half_width.key, (12.0, 8.0))
    assert answers[0] != answers[1]

    helpers.go(at, "release")
    # At ρ = 0.5 every group has too few subsets: nothing informative, so no commit (issue 37).
    assert "Nothing informative would be published" in helpers.errors(at)
    assert at.button(key="release.commit").disabled
    # The whole ledger's ρ = 2 and twice the subsets (k = 60: 30 per region) inform it.
    helpers.state_of(at).budget_kind, helpers.state_of(at).rho = "zcdp", 2.0
    helpers.go(at, "estimator").number_input(key="gvdp.ks.ols").set_value(60).run()
    record = released_from_the_files(at, "aggregate_gvdp")
    metadata = record.payload["metadata"]
    assert metadata["plan"]["estimator"]["class"] == "GvdpPlan"
    outputs = record.payload["outputs"]
    assert len(outputs) == 3 * 3  # North, South and All × intercept, age, degree
    for row in outputs:  # published with DP numbers, or withheld saying why
        assert (row["estimate"] is None) == bool(row["flag"]), row
        assert row["estimate"] is None or np.isfinite(row["estimate"])


def test_a_logistic_model_on_the_files_says_it_needs_the_rows(folder):
    at = gvdp_on(folder)
    for model in ("logistic", "mean", "logistic"):
        at.radio(key="gvdp.model").set_value(model).run()
    outcome = next(s for s in at.selectbox if s.key.startswith("gvdp.outcomes.logistic"))
    outcome.set_value("degree").run()
    assert "logistic regression needs the rows in memory" in helpers.errors(at)
    assert not at.exception
