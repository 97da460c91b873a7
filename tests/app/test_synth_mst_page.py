"""App tests of MST (OpenDP) on the synthetic-data pages: its budget in ρ, and under an ε budget
the same ρ = ε²/2, the time estimate and button before a fit, a fit with its preview, the Compare page at
the chosen budget only, and a release with its progress bar.

These test the pages' flow, so OpenDP's fit is replaced by a fast stand-in (:func:`fake_mst`):
a real fit costs seconds per group (and a first one 15 s more while JAX compiles), and the
Compare page fits 9 models. The real fit is tested in
``tests/unit/dpcore/analyses/synth/test_mbi.py``, which also checks that it keeps the contract
the stand-in keeps (a distribution over the columns' codes)."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from dpcore.analyses.synth import SynthSettings, synthesizers
from strata_ui.analyses.synth.settings import SynthView
from tests.app.helpers import (
    change_settings,
    commit_once,
    errors,
    go,
    settings_of,
    state_of,
    text,
    use_frame,
)
from tests.app.test_synth_page import start
from tests.frames import pets_frame

RHO = 0.5  # the tiny upload's ρ-zCDP budget
MODEL_SIZES = (2, 3, 2)  # job, pet and car: the columns of one model per group
GROUP_ROWS = [200, 100]  # north and south


@pytest.fixture
def fitted(monkeypatch) -> list[tuple[str, tuple[int, ...], float, int]]:
    """Replace OpenDP's MST or AIM fit with the rows' exact shares (no noise, instant); return
    the fits asked for, as (method, column sizes, ε, rows), for the tests to check what the
    pages asked of the fitter."""
    calls = []

    def fake_mst(codes: np.ndarray, sizes: tuple[int, ...], method: str, epsilon: float):
        calls.append((method, tuple(sizes), epsilon, len(codes)))
        cells = np.ravel_multi_index(tuple(codes.T), sizes)
        counts = np.bincount(cells, minlength=math.prod(sizes)).reshape(sizes)
        return counts / counts.sum()

    monkeypatch.setattr(synthesizers, "fit_joint", fake_mst)
    return calls


def tiny_upload(at) -> None:
    """300 rows, 3 small columns and 2 groups of region (:data:`GROUP_ROWS`), at ρ = 0.5."""
    frame = pets_frame(
        {"north": 200, "south": 100}, ["cat", "dog", "none"], np.random.default_rng(0)
    )
    app = use_frame(at, frame, "tiny.csv", ["region"])
    # Rows per group from the data's own counts, declared public: every model gets the whole ρ
    # (by default a tenth of it buys noisy counts for the rows per group, issue 37).
    app.share_source = "data"
    app.budget_kind, app.rho = "zcdp", RHO
    change_settings(at, SynthSettings, columns=None, n_rows=200)
    at.run()


def test_mst_shows_its_rho_and_a_time_estimate_then_fits_on_a_click(fitted):
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
    assert not fitted
    at.button(key="synth.preview.run").click().run()
    assert not at.exception and not at.main.error, errors(at)
    [table] = [d.value for d in at.main.dataframe if "region" in d.value.columns]
    assert list(table.columns) == ["job", "pet", "car", "region"]
    assert "ρ = 0.5 (zCDP), MST, one model per group of region" in text(at.info)
    # One MST model per group, at ε = √(2ρ), the ε whose ρ the page states.
    assert fitted == [
        ("mst", MODEL_SIZES, pytest.approx(math.sqrt(2 * RHO)), n) for n in GROUP_ROWS
    ]
    at.run()  # a rerun shows the kept fit without asking again
    assert any("region" in d.value.columns for d in at.main.dataframe)
    assert len(fitted) == 2


def test_mst_under_an_epsilon_budget_runs_at_rho_eps2_over_2(fitted):
    """One budget language: at ε = 1 MST is charged what an ε = 1 release of any analysis is,
    ρ = ε²/2 = 0.5, and its preview is offered (nothing fitted before the click)."""
    at = start()
    tiny_upload(at)
    state_of(at).budget_kind, state_of(at).epsilon = "pure", 1.0
    at.radio(key="synth.method").set_value("mst").run()
    assert not at.main.error, errors(at)
    assert "MST runs at ρ = 0.5 (zCDP, Gaussian noise)" in text(at.caption)
    assert [b for b in at.button if b.key == "synth.preview.run"]
    assert not fitted


def test_mst_compare_runs_vanilla_and_stratified_at_the_chosen_budget_only(fitted):
    at = start()
    tiny_upload(at)
    at.radio(key="synth.method").set_value("mst").run()
    go(at, "compare")
    assert "compared at the Budget page's budget only" in text(at.info)
    assert not fitted  # nothing slow runs before the click
    at.button(key="synth.compare.run").click().run()
    assert not at.exception and not at.main.error, errors(at)
    [figure] = [c for c in at.get("plotly_chart")]
    assert "3-way error in each group" in figure.proto.spec
    # Each run fits one model per group and one for everyone (region a column of its own),
    # all at the chosen ρ only.
    runs = settings_of(at, SynthView).runs
    assert sorted((m, sizes, rows) for m, sizes, _, rows in fitted) == sorted(
        [("mst", MODEL_SIZES, n) for n in GROUP_ROWS] * runs
        + [("mst", (*MODEL_SIZES, 2), sum(GROUP_ROWS))] * runs
    )
    assert [epsilon for _, _, epsilon, _ in fitted] == [pytest.approx(math.sqrt(2 * RHO))] * (
        3 * runs
    )


def test_an_mst_release_moves_a_progress_bar_once_per_group_then_removes_it(monkeypatch, fitted):
    bar_moves = []
    package = importlib.import_module("dpcore.release")  # `dpcore.release` is the function
    commit_release = package.release

    def spy(plan, ledger, **options):
        bar = options.pop("progress")

        def progress(done: int, total: int) -> None:
            bar_moves.append((done, total))
            bar(done, total)  # the page's own bar, drawn as the release runs

        return commit_release(plan, ledger, progress=progress, **options)

    monkeypatch.setattr(package, "release", spy)  # the page imports it on each run
    at = start()
    tiny_upload(at)
    at.radio(key="synth.method").set_value("mst").run()
    go(at, "release")
    commit_once(at)
    assert bar_moves == [(0, 2), (1, 2), (2, 2)]  # north and south, one model each
    assert [(method, rows) for method, _, _, rows in fitted] == [("mst", n) for n in GROUP_ROWS]
    assert not at.main.get("progress")  # the bar is gone once the release is recorded
