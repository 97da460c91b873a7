"""The Plan page as a user meets it: a target in hours → the budget, changed twice in a row; bad
targets; the ledger's shortfall; adopting the answer and a frontier candidate; analyses the
planner does not cover."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.analyses.mean import MeanSettings
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.ledger import Ledger
from strata_ui import constants
from strata_ui.planner import PlannerView
from strata_ui.style import rounded_up
from tests.app.helpers import (
    HOURS_HALF_WIDTH,
    answer_shown,
    change_settings,
    demo_budget,
    errors,
    go,
    start,
    state_of,
    text,
    titles,
)


def expected_epsilon(half_width: float, level: float = 0.95) -> float:
    """The demo's answer, computed outside the app from the same library call."""
    return demo_budget("mean", MeanSettings(), half_width, level=level).epsilon


@pytest.fixture
def plan() -> AppTest:
    at = start("plan")
    assert not at.main.error, errors(at)
    return at


def test_the_page_answers_names_the_binding_group_and_checks_itself(plan):
    assert answer_shown(plan) == f"ε = {rounded_up(expected_epsilon(2.0)):g}"
    page = text(plan.main.markdown)
    assert "Set by **Other × Female**" in page
    assert "simulated releases at this budget, **Other × Female** met the target" in page
    assert titles(plan)[0].startswith("The ε each estimate needs")
    assert titles(plan)[1].startswith("Population error against the worst group's error")
    assert "can afford it" in text(plan.success)


def test_every_change_of_the_target_sticks(plan):
    for half_width in (1.0, 0.5, 3.0):
        plan.number_input(key=HOURS_HALF_WIDTH).set_value(half_width).run()
        assert answer_shown(plan) == f"ε = {rounded_up(expected_epsilon(half_width)):g}"
    for level in (0.9, 0.99):
        plan.select_slider(key="planner_view.level").set_value(level).run()
        assert answer_shown(plan) == f"ε = {rounded_up(expected_epsilon(3.0, level)):g}"
    assert not plan.exception


def test_a_zero_target_is_explained_and_a_good_one_brings_the_answer_back(plan):
    plan.number_input(key=HOURS_HALF_WIDTH).set_value(0.0).run()
    assert "must be above 0" in errors(plan)
    assert not plan.exception
    plan.number_input(key=HOURS_HALF_WIDTH).set_value(2.0).run()
    assert not plan.main.error
    assert answer_shown(plan) == f"ε = {rounded_up(expected_epsilon(2.0)):g}"


def test_relative_targets_and_the_clipping_bias_are_labelled_curator_previews(plan):
    assert "Curator preview, not differentially private: this answer" not in text(plan.info)
    plan.radio(key="planner_view.relative").set_value(True).run()
    assert "each group's true value" in text(plan.info)
    for percent in (10.0, 2.0):
        plan.number_input(key="planner_view.percent").set_value(percent).run()
        assert answer_shown(plan).startswith("ε = ")
    plan.checkbox(key="planner_view.include_bias").check().run()
    assert "the clipping bias" in text(plan.info)
    assert not plan.main.error, errors(plan)


def test_a_target_the_ledger_cannot_afford_says_what_would_meet_it(plan):
    plan.number_input(key=HOURS_HALF_WIDTH).set_value(0.5).run()
    warnings = text(plan.warning)
    assert "has only ρ = 2 left" in warnings
    assert "would need about 300 rows each" in warnings  # the noise-only closed form
    assert "A large budget for one release" in warnings


def test_using_the_answer_sets_the_budget_page_to_the_next_step(plan):
    plan.button(key="plan.adopt_budget").click().run()
    answer = expected_epsilon(2.0)
    step = min(o for o in constants.EPSILON_OPTIONS if o >= answer)
    assert state_of(plan).epsilon == step
    go(plan, "budget")
    assert plan.select_slider(key="budget.epsilon").value == step


def test_in_rho_the_answer_is_given_in_rho():
    at = start()
    state_of(at).budget_kind = "zcdp"
    go(at, "plan")
    assert answer_shown(at) == f"ρ = {rounded_up(ZCDP(expected_epsilon(2.0) ** 2 / 2).rho):g}"


def test_adopting_a_frontier_candidate_changes_the_strata_and_the_strategy(plan):
    plan.selectbox(key="plan.adopt_choice").set_value("sex: one estimate for everyone").run()
    plan.button(key="plan.adopt").click().run()
    assert not plan.exception
    assert state_of(plan).strata_columns == ["sex"]
    assert (
        plan.session_state[
            "_strata_lab_settings.dpcore.analyses.mean.analysis.MeanSettings"
        ].strategy
        == "global_only"
    )  # noqa: E501
    assert "Now grouping by sex, one estimate for everyone" in text(plan.success)
    # One estimate for everyone publishes only the population: the answer is for it.
    assert "Set by **Whole population**" in text(plan.main.markdown)
    go(plan, "strata")
    key = f"strata.columns.{state_of(plan).dataset_fingerprint}"
    assert plan.multiselect(key=key).value == ["sex"]


def test_the_frontier_columns_change_twice_and_stick(plan):
    key = f"plan.frontier_columns.{state_of(plan).dataset_fingerprint}"
    plan.multiselect(key=key).select("workclass").run()
    plan.multiselect(key=key).select("marital_status").run()
    assert plan.multiselect(key=key).value == ["race", "sex", "workclass", "marital_status"]
    assert not plan.main.error, errors(plan)
    labels = plan.selectbox(key="plan.adopt_choice").options
    assert len(labels) == 15 * 3


def expected_rho_coinpress(half_width: float) -> float:
    """The demo's CoinPress answer (race × sex), computed outside the app by the library."""
    return demo_budget("mean", MeanSettings(estimator="coinpress"), half_width).rho


def test_coinpress_is_planned_by_simulation_and_every_target_change_sticks():
    at = start()
    state_of(at).budget_kind = "zcdp"
    change_settings(at, MeanSettings, estimator="coinpress")
    go(at, "plan")
    assert not at.main.error, errors(at)
    assert "each group's values, to which CoinPress adapts every step" in text(at.info)
    # Its simulated error is measured against the true mean: no clipping bias to add.
    assert not [box for box in at.checkbox if "clipping bias" in box.label]
    for half_width in (1.0, 0.5, 3.0):
        at.number_input(key=HOURS_HALF_WIDTH).set_value(half_width).run()
        assert answer_shown(at) == f"ρ = {rounded_up(expected_rho_coinpress(half_width)):g}"
        assert "Set by **Other × Female**" in text(at.main.markdown)
    assert "**Other × Female** met the target" in text(at.main.markdown)
    assert not at.exception and not at.main.error, errors(at)


def test_the_planner_says_which_analyses_it_covers():
    at = start()
    state_of(at).analysis = "sample"
    go(at, "plan")
    assert (
        "covers the mean per group, the ratio of sums, the general estimator and synthetic data"
        in text(at.info)
    )
    assert not at.main.error


def test_workshop_mode_shows_no_ledger():
    at = start("plan", workshop="true")
    assert "ledger" not in text(at.success).lower()
    assert "ledger" not in text(at.warning).lower()


def test_a_spent_ledger_is_named(plan):
    Ledger(None, "default", ZCDP(2.0)).spend("all of it", ZCDP(2.0), {})
    plan.run()
    assert "used up" in text(plan.warning)
    change_settings(plan, PlannerView, half_widths=(("`hours_per_week`", 4.0),))
    plan.run()
    assert not plan.exception


def test_a_gaussian_answer_against_an_epsilon_ledger_is_explained():
    at = start()
    Ledger(None, "pure", PureDP(1.0))
    state_of(at).ledger_name = "pure"
    change_settings(at, MeanSettings, estimator="gaussian")
    go(at, "plan")
    assert answer_shown(at).startswith("ρ = ")
    assert "counts pure ε-DP, which Gaussian noise cannot meet" in text(at.warning)


def test_using_a_rho_answer_switches_the_budget_page_to_rho():
    at = start()
    change_settings(at, MeanSettings, estimator="gaussian")
    go(at, "plan")
    assert state_of(at).budget_kind == "pure"
    at.button(key="plan.adopt_budget").click().run()
    assert state_of(at).budget_kind == "zcdp"
    assert "the Budget page now counts in ρ" in text(at.success)
    assert not at.main.error, errors(at)  # the frontier now runs at a ρ budget


def test_a_numeric_candidate_with_edges_is_scored():
    at = start()
    state_of(at).bucket_edges = {"age": [30.0, 50.0]}
    go(at, "plan")
    key = f"plan.frontier_columns.{state_of(at).dataset_fingerprint}"
    assert "age" in at.multiselect(key=key).options
    at.multiselect(key=key).select("age").run()
    assert "Not scored" not in text(at.caption)
    assert "age: one estimate per group" in at.selectbox(key="plan.adopt_choice").options


def test_the_frontier_scores_coinpress_and_its_columns_change_twice():
    at = start()
    state_of(at).budget_kind = "zcdp"
    change_settings(at, MeanSettings, estimator="coinpress")
    go(at, "plan")
    key = f"plan.frontier_columns.{state_of(at).dataset_fingerprint}"
    for column, groupings in (("workclass", 7), ("marital_status", 15)):
        at.multiselect(key=key).select(column).run()
        assert len(at.selectbox(key="plan.adopt_choice").options) == groupings * 3
    assert any(t.startswith("Population error against the worst group's error") for t in titles(at))
    assert not at.exception and not at.main.error, errors(at)
