"""App tests of MST (OpenDP) on the synthetic-data pages: its budget in ρ, a refusal under an ε
budget, the time estimate and button before a fit, a tiny fit with its preview, the Compare
page at the chosen budget only, and a release with its progress bar."""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.synth import SynthSettings
from tests.app.helpers import change_settings, commit_once, errors, go, state_of, text
from tests.app.test_synth_page import start

pytestmark = pytest.mark.slow  # a fit of OpenDP's MST takes seconds (JAX compiles first)


def tiny_upload(at) -> None:
    """300 rows, 3 small columns and 2 groups: an MST fit of a few seconds."""
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame(
        {
            "region": np.repeat(["north", "south"], [200, 100]),
            "job": rng.choice(["office", "field"], n),
            "pet": rng.choice(["cat", "dog", "none"], n),
            "car": rng.choice(["yes", "no"], n),
        }
    )
    app = state_of(at)
    app.uploaded, app.dataset_name, app.dataset_fingerprint = frame, "tiny.csv", "tiny"
    app.strata_columns, app.bucket_edges = ["region"], {}
    app.budget_kind, app.rho = "zcdp", 0.5
    change_settings(at, SynthSettings, columns=None, n_rows=200)
    at.run()


def test_mst_shows_its_rho_and_a_time_estimate_then_fits_on_a_click():
    at = start()
    tiny_upload(at)
    at.radio(key="synth.method").set_value("mst").run()
    at.radio(key="synth.strategy").set_value("vanilla").run()
    at.radio(key="synth.strategy").set_value("stratified").run()
    at.number_input(key="synth.n_rows").set_value(300).run()
    at.number_input(key="synth.n_rows").set_value(250).run()
    assert not at.main.error, errors(at)
    assert "MST runs at ρ = 0.5 (zCDP, Gaussian noise)" in text(at.caption)
    [estimate] = [i.value for i in at.info if "takes about" in i.value]
    assert "An MST preview (stratified) takes about" in estimate
    assert not any("region" in d.value.columns for d in at.main.dataframe)  # nothing fitted yet
    at.button(key="synth.preview.run").click().run()
    assert not at.exception and not at.main.error, errors(at)
    [table] = [d.value for d in at.main.dataframe if "region" in d.value.columns]
    assert list(table.columns) == ["job", "pet", "car", "region"]
    assert "ρ = 0.5 (zCDP), MST, one model per group of region" in text(at.info)
    at.run()  # a rerun shows the kept fit without asking again
    assert any("region" in d.value.columns for d in at.main.dataframe)


def test_mst_under_an_epsilon_budget_runs_at_rho_eps2_over_2():
    """One budget language: at ε = 1 MST is charged what an ε = 1 release of any analysis is,
    ρ = ε²/2 = 0.5, and its preview is offered."""
    at = start()
    tiny_upload(at)
    state_of(at).budget_kind, state_of(at).epsilon = "pure", 1.0
    at.radio(key="synth.method").set_value("mst").run()
    assert not at.main.error, errors(at)
    assert "MST runs at ρ = 0.5 (zCDP, Gaussian noise)" in text(at.caption)
    assert [b for b in at.button if b.key == "synth.preview.run"]


def test_mst_compare_runs_vanilla_and_stratified_at_the_chosen_budget_only():
    at = start()
    tiny_upload(at)
    at.radio(key="synth.method").set_value("mst").run()
    go(at, "compare")
    assert "compared at the Budget page's budget only" in text(at.info)
    at.button(key="synth.compare.run").click().run()
    assert not at.exception and not at.main.error, errors(at)
    [figure] = [c for c in at.get("plotly_chart")]
    assert "3-way error in each group" in figure.proto.spec


def test_an_mst_release_moves_a_progress_bar_once_per_group_then_removes_it(monkeypatch):
    fitted = []
    package = importlib.import_module("dpcore.release")  # `dpcore.release` is the function
    commit_release = package.release

    def spy(plan, ledger, **options):
        bar = options.pop("progress")

        def progress(done: int, total: int) -> None:
            fitted.append((done, total))
            bar(done, total)  # the page's own bar, drawn as the release runs

        return commit_release(plan, ledger, progress=progress, **options)

    monkeypatch.setattr(package, "release", spy)  # the page imports it on each run
    at = start()
    tiny_upload(at)
    at.radio(key="synth.method").set_value("mst").run()
    go(at, "release")
    commit_once(at)
    assert fitted == [(0, 2), (1, 2), (2, 2)]  # north and south, one model each
    assert not at.main.get("progress")  # the bar is gone once the release is recorded
