"""The Plan page with synthetic data: each group's workload error → the budget, the target
changed twice in a row and the answer following each time, checked by fresh syntheses; the slow
synthesizers refused in words."""

from __future__ import annotations

import functools

from dpcore.analyses import SYNTH
from dpcore.analyses.synth import SynthSettings
from dpcore.analyses.synth.accuracy import CHECK_REPLICATES, MEASURED_IN, TYPICAL_TARGET
from dpcore.datasets import load_demo
from dpcore.grouping import GroupingSpec
from dpcore.planner import AccuracyTarget, smallest_budget
from strata_ui.style import rounded_up
from tests.app.helpers import change_settings, errors, go, start, state_of, text
from tests.app.test_plan_page import answer_shown

HALF_WIDTH = f"planner_view.half_widths.{MEASURED_IN}"
INDEPENDENT = SynthSettings(method="independent")


@functools.cache
def demo_model():
    frame = load_demo()
    stats = SYNTH.statistics(frame, GroupingSpec(by=("race", "sex")).build(frame), INDEPENDENT)
    return SYNTH.error_model(stats, INDEPENDENT)


def expected_epsilon(half_width: float) -> float:
    """The demo's answer (race × sex), computed outside the app by the library."""
    return smallest_budget(demo_model(), AccuracyTarget(half_width)).budget.epsilon


def test_each_target_change_moves_the_answer_and_the_check_follows():
    at = start()
    state_of(at).analysis = "synth"
    change_settings(at, SynthSettings, method="independent")
    go(at, "plan")
    assert not at.main.error, errors(at)
    assert answer_shown(at) == f"ε = {rounded_up(expected_epsilon(TYPICAL_TARGET)):g}"
    assert "every simulated synthesis is fitted and scored" in text(at.info)  # curator preview
    shown = {answer_shown(at)}
    for half_width in (1.3, 1.2):
        at.number_input(key=HALF_WIDTH).set_value(half_width).run()
        assert answer_shown(at) == f"ε = {rounded_up(expected_epsilon(half_width)):g}"
        shown.add(answer_shown(at))
        assert "Set by **" in text(at.main.markdown)
        assert f"In {CHECK_REPLICATES} simulated releases at this budget" in text(at.main.markdown)
    assert len(shown) == 3
    assert "workload error is within the target" in text(at.caption)
    assert not at.exception and not at.main.error, errors(at)


def test_a_slow_synthesizer_is_refused_with_what_to_do():
    at = start()
    state_of(at).analysis = "synth"  # the demo's default synthesizer is MWEM
    go(at, "plan")
    info = text(at.info)
    assert "The planner cannot plan MWEM" in info
    assert "Choose independent marginals on the Estimator page" in info
    assert not at.exception and not at.main.error, errors(at)
