"""The Plan page with the general estimator (GVDP): each interval's half-width → the budget,
the target changed twice in a row and the answer following each time, checked by simulated
releases; curator preview labels; no frontier promised."""

from __future__ import annotations

from dpcore.analyses.gvdp import GvdpSettings
from strata_ui.style import plain_number, rounded_up
from tests.app import helpers


def expected_rho(half_width: float, level: float = 0.95) -> float:
    """The demo's GVDP answer (race × sex), computed outside the app by the library."""
    # The app's default groups: a declared list prefilled from the data (the model's simulated
    # streams follow the groups' order).
    return helpers.demo_budget(
        "gvdp", GvdpSettings(), half_width, level=level, spec=helpers.demo_spec()
    ).rho


def test_each_target_change_moves_the_answer_and_the_check_follows():
    at = helpers.declare_exact_counts(helpers.start())
    helpers.state_of(at).analysis = "gvdp"
    helpers.go(at, "plan")
    assert not at.main.error, helpers.errors(at)
    assert (
        helpers.answer_shown(at) == f"ρ = {plain_number(rounded_up(expected_rho(5.0)))}"
    )  # the first target: ±5% of [0, 100]
    assert "bag of little bootstraps" in helpers.text(at.info)  # a curator preview, and why
    for half_width in (10.0, 20.0):
        at.number_input(key=helpers.HOURS_HALF_WIDTH).set_value(half_width).run()
        assert (
            helpers.answer_shown(at) == f"ρ = {plain_number(rounded_up(expected_rho(half_width)))}"
        )
        assert "Set by **Other × Female**" in helpers.text(at.main.markdown)
        assert "**Other × Female** met the target" in helpers.text(at.main.markdown)
    at.select_slider(key="planner_view.level").set_value(0.9).run()
    assert helpers.answer_shown(at) == f"ρ = {plain_number(rounded_up(expected_rho(20.0, 0.9)))}"
    assert "counting how often each published interval is within the target" in helpers.text(
        at.caption
    )
    assert "frontier of groupings covers the mean per group so far" in helpers.text(at.info)
    assert not at.exception and not at.main.error, helpers.errors(at)


def test_a_target_below_the_sampling_error_says_no_budget_removes_it():
    at = helpers.declare_exact_counts(helpers.start())
    helpers.state_of(at).analysis = "gvdp"
    helpers.go(at, "plan")
    at.number_input(key=helpers.HOURS_HALF_WIDTH).set_value(1.0).run()
    warnings = helpers.text(at.warning)
    assert "No budget meets this target" in warnings
    assert "sampling error, which no budget removes" in warnings
    # the advice fits the reason: not the closed forms' "widen the public bounds"
    assert "Widen the public bounds" not in warnings
    assert "Merge the smaller groups or choose a coarser grouping" in warnings
    assert not at.exception


def test_a_planned_release_whose_share_withholds_groups_says_so_in_words():
    at = helpers.declare_exact_counts(helpers.start())
    helpers.state_of(at).analysis = "gvdp"
    # k = 1,000 typed: small groups get too few subsets to be published (the default k, chosen
    # per group from its rows, gives them enough; issue 42).
    helpers.change_settings(at, GvdpSettings, ks=(("mean", 1000),))
    helpers.go(at, "plan")
    at.number_input(key=helpers.HOURS_HALF_WIDTH).set_value(20.0).run()
    at.button(key="plan.portfolio.add").click().run()
    assert not at.exception and not at.main.error, helpers.errors(at)
    helpers.go(at, "release")
    assert "some estimates would be withheld (not published at all)" in helpers.text(at.info)
    assert "±inf" not in helpers.text(at.info)
