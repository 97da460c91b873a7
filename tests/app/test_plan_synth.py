"""The Plan page with synthetic data: each group's workload error → the budget. A quick model
(independent marginals) is built on opening; a slower one (MWEM, the demo's synthesizer) waits
for a button that says how long it takes, runs with a progress bar and is kept; then each
change of the target reads the kept model, and the check by fresh syntheses runs behind its own
button. A simulation too long to offer (stratified MST) says its cost and what to plan with."""

from __future__ import annotations

import pytest

import strata_ui.shared_results
from dpcore.analyses.synth import SynthSettings
from dpcore.analyses.synth.accuracy import (
    CHECK_REPLICATES,
    MEASURED_IN,
    SIMULATION_SIZES,
    TYPICAL_TARGET,
)
from strata_ui import planner
from strata_ui.style import plain_number, rounded_up
from tests.app.helpers import (
    answer_shown,
    change_settings,
    demo_budget,
    demo_spec,
    errors,
    go,
    start,
    state_of,
    text,
)

HALF_WIDTH = f"planner_view.half_widths.{MEASURED_IN}"
INDEPENDENT = SynthSettings(method="independent")
SMALL_MWEM = SynthSettings(
    method="mwem", columns=("workclass", "marital_status", "income_over_50k"), rounds=3
)
"""MWEM on three text columns in 3 rounds: its 54 syntheses take seconds, not minutes."""


def expected_epsilon(half_width: float, settings: SynthSettings = INDEPENDENT) -> float:
    """The demo's answer (race × sex), computed outside the app by the library."""
    spec = demo_spec(share_source="noisy_counts")  # the app's default: rows from noisy counts
    return demo_budget("synth", settings, half_width, spec=spec).epsilon


def test_each_target_change_moves_the_answer_and_the_check_runs_when_asked(monkeypatch):
    monkeypatch.setattr(planner, "QUICK_MODEL_S", 60.0)  # built on opening, however busy the cores
    at = start()
    state_of(at).analysis = "synth"
    change_settings(at, SynthSettings, method="independent")
    go(at, "plan")
    assert not at.main.error, errors(at)
    assert answer_shown(at) == f"ε = {plain_number(rounded_up(expected_epsilon(TYPICAL_TARGET)))}"
    assert "every simulated synthesis is fitted and scored" in text(at.info)  # curator preview
    shown = {answer_shown(at)}
    for half_width in (1.3, 1.2):
        at.number_input(key=HALF_WIDTH).set_value(half_width).run()
        assert answer_shown(at) == f"ε = {plain_number(rounded_up(expected_epsilon(half_width)))}"
        shown.add(answer_shown(at))
        assert "Set by **" in text(at.main.markdown)
        assert "simulated releases at this budget" not in text(at.main.markdown)  # not yet run
    assert len(shown) == 3
    at.button(key="plan.check").click().run()
    assert f"In {CHECK_REPLICATES} simulated releases at this budget" in text(at.main.markdown)
    assert "workload error is within the target" in text(at.caption)
    at.number_input(key=HALF_WIDTH).set_value(0.5).run()  # below what any budget reaches
    warning = text(at.warning)
    assert "No budget meets this target" in warning and "a richer synthesizer" in warning
    assert "public bounds" not in warning  # synthetic data has none to widen
    assert not at.exception and not at.main.error, errors(at)


def test_mwem_simulates_after_its_button_then_two_target_changes_are_instant(monkeypatch):
    monkeypatch.setattr(planner, "QUICK_MODEL_S", 0.0)  # these few seconds count as slow here
    drawn = []

    def recording_bar(label):
        update, clear = bar(label)
        return lambda done, total: (drawn.append((done, total)), update(done, total)), clear

    bar = strata_ui.shared_results.progress_bar
    monkeypatch.setattr(strata_ui.shared_results, "progress_bar", recording_bar)
    at = start()
    state_of(at).analysis = "synth"
    change_settings(at, SynthSettings, **vars(SMALL_MWEM))
    go(at, "plan")
    [button] = [b for b in at.button if b.key == "plan.simulate"]
    assert button.label.startswith("Simulate (about ")
    syntheses = SIMULATION_SIZES["mwem"].syntheses
    assert f"{syntheses} syntheses (6 at each of 9 budgets) with MWEM" in text(at.info)
    assert "curator preview" in text(at.info)
    assert not [m for m in at.metric if m.label == "Smallest budget that meets the target"]
    assert not drawn  # nothing ran before the click

    button.click().run()
    assert drawn[-1][0] == drawn[-1][1] == syntheses * 10  # every group model of every synthesis
    assert not [b for b in at.button if b.key == "plan.simulate"]
    answers = {answer_shown(at)}
    assert (
        answer_shown(at)
        == f"ε = {plain_number(rounded_up(expected_epsilon(TYPICAL_TARGET, SMALL_MWEM)))}"
    )

    fits = len(drawn)
    for half_width in (1.3, 1.4):
        at.number_input(key=HALF_WIDTH).set_value(half_width).run()
        assert (
            answer_shown(at)
            == f"ε = {plain_number(rounded_up(expected_epsilon(half_width, SMALL_MWEM)))}"
        )
        answers.add(answer_shown(at))
        assert at.button(key="plan.check").label.startswith("Check it (about ")
    assert len(answers) == 3 and len(drawn) == fits  # the target changes synthesized nothing
    at.button(key="plan.check").click().run()
    assert f"In {CHECK_REPLICATES} simulated releases at this budget" in text(at.main.markdown)
    assert not [b for b in at.button if b.key == "plan.check"]  # gave way to the result
    checked = len(drawn)
    # The plan of several releases reads the kept model: adding MWEM synthesizes nothing.
    at.button(key="plan.portfolio.add").click().run()
    assert "to your plan." in text(at.info)
    assert len(drawn) == checked
    assert not at.exception and not at.main.error, errors(at)


@pytest.mark.parametrize("method", ["mst", "aim"])
def test_a_simulation_too_long_to_offer_says_its_cost_and_what_to_plan_with(method):
    at = start()
    state = state_of(at)
    state.analysis, state.budget_kind = "synth", "zcdp"
    change_settings(at, SynthSettings, method=method)
    go(at, "plan")
    info = text(at.info)
    assert f"Planning {method.upper()} (one model per group) would take about" in info
    assert "Plan with MWEM instead" in info and "One model for everyone is quicker" in info
    assert not [b for b in at.button if b.key == "plan.simulate"]
    assert not at.exception and not at.main.error, errors(at)
