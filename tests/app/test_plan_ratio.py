"""The Plan page with the calibration ratio as the analysis: the answer follows the target
changed twice in a row, is labelled a curator preview, checked by simulation, and says when the
classic Gaussian cannot reach a target; in ρ the ratio plans with zCDP accounting."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.analyses import RATIO
from strata_ui.style import rounded_up
from tests.app.helpers import (
    HOURS_HALF_WIDTH,
    RATIO_HALF_WIDTH,
    answer_shown,
    demo_budget,
    errors,
    go,
    start,
    state_of,
    text,
)


def expected(half_width: float, by: tuple[str, ...] = ("sex",), kind: str = "pure"):
    """The demo's answer, computed outside the app from the same library calls."""
    return demo_budget("ratio", RATIO.default_settings(), half_width, by=by, budget_kind=kind)


def ratio_plan(columns: list[str], kind: str = "pure") -> AppTest:
    at = start()
    state = state_of(at)
    state.analysis, state.strata_columns, state.budget_kind = "ratio", columns, kind
    return go(at, "plan")


@pytest.fixture
def plan() -> AppTest:
    at = ratio_plan(["sex"])
    assert not at.main.error, errors(at)
    return at


def test_the_ratio_starts_from_its_own_target_and_the_mean_keeps_its_own():
    """±2 hours is no target for a ratio: each analysis starts from a target in its own units,
    and a target typed for one is still there after a visit to the other."""
    at = start("plan")
    at.number_input(key=HOURS_HALF_WIDTH).set_value(3.0).run()
    state_of(at).analysis = "ratio"
    at.run()
    box = at.number_input(key=RATIO_HALF_WIDTH)
    assert box.label == "Within ± (in units of the ratio)" and box.value == 0.05
    box.set_value(0.1).run()
    state_of(at).analysis = "mean"
    at.run()
    assert at.number_input(key=HOURS_HALF_WIDTH).value == 3.0
    state_of(at).analysis = "ratio"
    at.run()
    assert at.number_input(key=RATIO_HALF_WIDTH).value == 0.1


def test_the_ratio_s_answer_follows_the_target_twice_in_a_row(plan):
    for half_width in (0.1, 0.05):
        plan.number_input(key=RATIO_HALF_WIDTH).set_value(half_width).run()
        assert answer_shown(plan) == f"ε = {rounded_up(expected(half_width).epsilon):g}"
        assert "Set by **Female**" in text(plan.main.markdown)
    assert not plan.exception
    page = text(plan.main.markdown)
    assert "simulated releases at this budget, **Female** met the target" in page
    assert "reads each group's exact Σ label and ratio" in text(plan.info)
    assert "delta method" in page  # what the planner assumes
    assert "covers the mean per group so far" in text(plan.info)  # no frontier for the ratio
    assert not plan.main.error, errors(plan)


def test_the_clipping_bias_is_not_offered_and_a_percentage_works(plan):
    assert not [c for c in plan.checkbox if c.key == "planner_view.include_bias"]
    plan.radio(key="planner_view.relative").set_value(True).run()
    for percent in (10.0, 5.0):
        plan.number_input(key="planner_view.percent").set_value(percent).run()
        assert answer_shown(plan).startswith("ε = ")
    assert not plan.main.error, errors(plan)


def test_a_target_beyond_the_classic_gaussian_says_what_to_switch():
    at = ratio_plan(["race", "sex"])
    assert "runs only below ε = 5" in text(at.warning)
    assert "ρ-zCDP on the Budget page" in text(at.warning)
    assert not at.main.error, errors(at)


def test_in_rho_the_ratio_plans_with_zcdp_accounting():
    at = ratio_plan(["race", "sex"], kind="zcdp")
    at.number_input(key=RATIO_HALF_WIDTH).set_value(0.5).run()
    assert answer_shown(at) == f"ρ = {rounded_up(expected(0.5, ('race', 'sex'), 'zcdp').rho):g}"
    assert not at.main.error, errors(at)
