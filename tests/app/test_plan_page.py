"""The Plan page as a user meets it: a target in hours → the budget, changed twice in a row; bad
targets; the ledger's shortfall; adopting the answer and a frontier candidate; analyses the
planner does not cover."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.analyses.mean import MeanSettings
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.ledger import Ledger
from strata_ui.planner import PlannerView
from strata_ui.style import plain_number, rounded_up
from tests.app.helpers import (
    HOURS_HALF_WIDTH,
    answer_shown,
    change_settings,
    declare_exact_counts,
    demo_budget,
    demo_spec,
    errors,
    exact_sizes_public,
    go,
    start,
    state_of,
    text,
    titles,
    upload,
)
from tests.frames import tiny_groups_survey_frame


def expected_epsilon(half_width: float, level: float = 0.95) -> float:
    """The demo's answer, computed outside the app from the same library call."""
    return demo_budget("mean", MeanSettings(n_public=True), half_width, level=level).epsilon


@pytest.fixture
def plan() -> AppTest:
    at = go(exact_sizes_public(start()), "plan")
    assert not at.main.error, errors(at)
    return at


def test_the_page_answers_names_the_binding_group_and_checks_itself(plan):
    assert answer_shown(plan) == f"ε = {plain_number(rounded_up(expected_epsilon(2.0)))}"
    page = text(plan.main.markdown)
    assert "Set by **Other × Female**" in page
    assert "simulated releases at this budget, **Other × Female** met the target" in page
    assert titles(plan)[0].startswith("The ε each estimate needs")
    assert titles(plan)[1].startswith("Population error against the worst group's error")
    assert "can afford it" in text(plan.success)


def test_every_change_of_the_target_sticks(plan):
    for half_width in (1.0, 0.5, 3.0):
        plan.number_input(key=HOURS_HALF_WIDTH).set_value(half_width).run()
        assert answer_shown(plan) == f"ε = {plain_number(rounded_up(expected_epsilon(half_width)))}"
    for level in (0.9, 0.99):
        plan.select_slider(key="planner_view.level").set_value(level).run()
        expected = rounded_up(expected_epsilon(3.0, level))
        assert answer_shown(plan) == f"ε = {plain_number(expected)}"
    assert not plan.exception


def test_a_zero_target_is_explained_and_a_good_one_brings_the_answer_back(plan):
    plan.number_input(key=HOURS_HALF_WIDTH).set_value(0.0).run()
    assert "must be above 0" in errors(plan)
    assert not plan.exception
    plan.number_input(key=HOURS_HALF_WIDTH).set_value(2.0).run()
    assert not plan.main.error
    assert answer_shown(plan) == f"ε = {plain_number(rounded_up(expected_epsilon(2.0)))}"


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
    assert "is more than one release may use" in warnings
    assert "The most that fits in what “default” has left is **ε = 2**" in warnings
    assert "would need about 300 rows each" in warnings  # the noise-only closed form
    assert "A large budget for one release" in warnings


def test_using_the_answer_sets_the_budget_page_to_exactly_the_number_shown(plan):
    """Issue 37: one number, rounded up once, on the metric, the button and the Budget page."""
    answer = rounded_up(expected_epsilon(2.0))
    assert answer_shown(plan) == f"ε = {plain_number(answer)}"
    assert (
        plan.button(key="plan.adopt_budget").label
        == f"Use ε = {plain_number(answer)} on the Budget page"
    )
    plan.button(key="plan.adopt_budget").click().run()
    assert state_of(plan).epsilon == answer
    go(plan, "budget")
    assert plan.number_input(key="budget.epsilon").value == answer


def test_an_answer_more_than_one_release_may_use_says_what_fits_and_offers_no_button():
    """The issue's answer of ε = 5 (ρ = 12.5) beyond the largest ledger (ρ = 10): said, with
    the most that fits and what it misses, and no button that could not be carried out."""
    at = go(exact_sizes_public(start()), "plan")
    at.number_input(key=HOURS_HALF_WIDTH).set_value(0.2).run()
    warning = text(at.warning)
    assert "is more than one release may use" in warning
    assert "The most that fits in what “default” has left is **ε = 2**" in warning
    assert not [b for b in at.button if b.key == "plan.adopt_budget"]


def test_in_rho_the_answer_is_given_in_rho():
    at = exact_sizes_public(start())
    state_of(at).budget_kind = "zcdp"
    go(at, "plan")
    expected = rounded_up(ZCDP(expected_epsilon(2.0) ** 2 / 2).rho)
    assert answer_shown(at) == f"ρ = {plain_number(expected)}"


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
    settings = MeanSettings(estimator="coinpress")
    return demo_budget("mean", settings, half_width, spec=demo_spec()).rho


def test_coinpress_is_planned_by_simulation_and_every_target_change_sticks():
    at = declare_exact_counts(start())  # CoinPress treats group sizes as public
    state_of(at).budget_kind = "zcdp"
    change_settings(at, MeanSettings, estimator="coinpress")
    go(at, "plan")
    assert not at.main.error, errors(at)
    assert "each group's values, to which CoinPress adapts every step" in text(at.info)
    # Its simulated error is measured against the true mean: no clipping bias to add.
    assert not [box for box in at.checkbox if "clipping bias" in box.label]
    for half_width in (1.0, 0.5, 3.0):
        at.number_input(key=HOURS_HALF_WIDTH).set_value(half_width).run()
        expected = rounded_up(expected_rho_coinpress(half_width))
        assert answer_shown(at) == f"ρ = {plain_number(expected)}"
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
    at = exact_sizes_public(start())
    Ledger(None, "pure", PureDP(1.0))
    state_of(at).ledger_name = "pure"
    change_settings(at, MeanSettings, estimator="gaussian")
    go(at, "plan")
    assert answer_shown(at).startswith("ρ = ")
    assert "counts pure ε-DP, which Gaussian noise cannot meet" in text(at.warning)


def test_using_a_rho_answer_switches_the_budget_page_to_rho():
    at = exact_sizes_public(start())
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
    at = declare_exact_counts(start())  # CoinPress treats group sizes as public
    state_of(at).budget_kind = "zcdp"
    change_settings(at, MeanSettings, estimator="coinpress")
    go(at, "plan")
    key = f"plan.frontier_columns.{state_of(at).dataset_fingerprint}"
    for column, groupings in (("workclass", 7), ("marital_status", 15)):
        at.multiselect(key=key).select(column).run()
        assert len(at.selectbox(key="plan.adopt_choice").options) == groupings * 3
    assert any(t.startswith("Population error against the worst group's error") for t in titles(at))
    assert not at.exception and not at.main.error, errors(at)


def test_the_survey_s_answer_reads_as_one_number_and_no_miss_beyond_the_public_range():
    """Issue 37's survey (income in [0, 250,000], groups of one and two): the answer, its row
    in the table and its charge read as one number; at the most that fits, an estimate that
    misses is off by at most the whole public range (a release clamps into it), never by the
    raw noise's ±1,028,251."""
    at = upload(start(), tiny_groups_survey_frame().to_csv(index=False).encode(), "survey.csv")
    change_settings(at, MeanSettings, value="income", clip_low=0.0, clip_high=250_000.0)
    state = state_of(at)
    state.strata_columns, state.bucket_edges = ["region", "age"], {"age": [18.0, 40.0, 65.0]}
    go(at, "plan")
    at.number_input(key="planner_view.half_widths.`income`").set_value(30_000.0).run()
    assert not at.exception and not at.main.error, errors(at)
    answer = answer_shown(at)
    [table] = [d.value for d in at.main.dataframe if "needed ε" in d.value.columns]
    needed = table.set_index("estimate")["needed ε"]
    assert answer == f"ε = {plain_number(rounded_up(needed.max()))}"
    warning = text(at.warning)
    assert "the most that fits in" in warning.lower()
    assert "up to ±250,000, the whole public range" in warning
    assert "e+" not in warning and "1,028,251" not in warning
