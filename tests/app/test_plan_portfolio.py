"""A plan of several releases as a user builds it on the Plan page (add, lock, change a target
twice in a row, remove) and commits it one release at a time on the Release page: each at its
planned budget, the rest rebalanced against what the ledger has left, nothing spent twice."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.foundations.accounting import PureDP
from dpcore.foundations.ledger import Ledger
from strata_ui.portfolio import PlanOfReleases
from tests.app.helpers import commit, errors, exact_sizes_public, go, start, state_of, text

BY_RACE_SEX = "Mean of hours_per_week by race × sex"
BY_SEX = "Mean of hours_per_week by sex"


def plan_of(at: AppTest) -> PlanOfReleases:
    return at.session_state["_strata_lab_settings.strata_ui.portfolio.PlanOfReleases"]


def shown_plan(at: AppTest):
    """The plan's table as the page shows it, indexed by release."""
    [table] = [d.value for d in at.main.dataframe if "release" in d.value.columns]
    return table.set_index("release")


def locked(at: AppTest) -> list[bool]:
    """Whether each planned release is locked, as its status line under its name says."""
    return [" · locked" in c.value for c in at.main.caption if c.value.startswith("Budget ")]


def add(at: AppTest, *columns: str) -> AppTest:
    state_of(at).strata_columns = list(columns)
    at.run()
    at.button(key="plan.portfolio.add").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def entry_id(at: AppTest, label: str) -> int:
    return next(e.id for e in plan_of(at).entries if e.label == label)


@pytest.fixture
def two() -> AppTest:
    """The Plan page with two planned releases: by race × sex, then by sex."""
    # Sizes and the data's counts declared public, as these budgets were worked out with.
    at = add(add(exact_sizes_public(start("plan")), "race", "sex"), "sex")
    assert not at.main.error, errors(at)
    return at


def test_two_releases_share_what_the_ledger_has_left(two):
    assert f"Added “{BY_SEX}” to your plan." in text(two.info)
    table = shown_plan(two)
    assert list(table.index) == [BY_RACE_SEX, BY_SEX]
    assert table["charge (ρ)"].sum() == pytest.approx(2.0)  # the default ledger's ρ = 2
    factor = table["charge (ρ)"] / table["needs (ρ)"]
    assert factor.iloc[0] == pytest.approx(factor.iloc[1]) and factor.iloc[0] > 1
    assert table["meets target"].all()
    assert "what the ledger “default” has left: ρ = 2" in text(two.caption)
    # The same release again is refused, not planned twice.
    two.button(key="plan.portfolio.add").click().run()
    assert "already in your plan as release 2" in text(two.info)
    assert len(plan_of(two).entries) == 2


def test_a_target_changed_twice_in_a_row_rebalances_each_time(two):
    key = f"plan.portfolio.target.{entry_id(two, BY_SEX)}"
    shares = []
    for half_width in (0.2, 0.1):
        two.number_input(key=key).set_value(half_width).run()
        assert two.number_input(key=key).value == half_width
        table = shown_plan(two)
        assert table.loc[BY_SEX, "target (±)"] == half_width
        shares.append(table.loc[BY_SEX, "charge (ρ)"])
        assert table["charge (ρ)"].sum() == pytest.approx(2.0)
    assert shares[1] > shares[0]  # a tighter target takes a larger share
    assert not two.exception


def test_a_locked_release_keeps_its_budget_while_the_other_target_changes(two):
    lock = f"plan.portfolio.lock.{entry_id(two, BY_RACE_SEX)}"
    before = shown_plan(two).loc[BY_RACE_SEX, "charge (ρ)"]
    two.toggle(key=lock).set_value(True).run()
    assert two.toggle(key=lock).value
    target = f"plan.portfolio.target.{entry_id(two, BY_SEX)}"
    for half_width in (0.5, 0.05):
        two.number_input(key=target).set_value(half_width).run()
        table = shown_plan(two)
        assert table.loc[BY_RACE_SEX, "charge (ρ)"] == pytest.approx(before)
        assert locked(two) == [True, False]
    assert not shown_plan(two).loc[BY_SEX, "meets target"]  # ±0.05 needs more than is left
    assert "1 of 2 releases miss their target" in text(two.warning)
    two.toggle(key=lock).set_value(False).run()
    assert locked(two) == [False, False]


def test_removing_a_release_gives_the_rest_all_that_is_left(two):
    two.button(key=f"plan.portfolio.remove.{entry_id(two, BY_RACE_SEX)}").click().run()
    assert f"Removed “{BY_RACE_SEX}” from your plan." in text(two.info)
    table = shown_plan(two)
    assert list(table.index) == [BY_SEX]
    assert table.loc[BY_SEX, "charge (ρ)"] == pytest.approx(2.0)


def test_a_lock_the_ledger_can_no_longer_afford_is_explained_and_fixed_on_the_page(two):
    first = entry_id(two, BY_RACE_SEX)
    two.toggle(key=f"plan.portfolio.lock.{first}").set_value(True).run()
    locked = shown_plan(two).loc[BY_RACE_SEX, "charge (ρ)"]
    Ledger.open(None, "default").spend("elsewhere", PureDP(1.0), {})  # ρ = 0.5 spent meanwhile
    two.run()
    assert f"The locked releases take ρ = {locked:.6g}, more than the ρ = 1.5" in errors(two)
    assert "Unlock one of them or lower its budget" in errors(two)
    assert not two.exception
    two.toggle(key=f"plan.portfolio.lock.{first}").set_value(False).run()
    assert not two.main.error, errors(two)
    assert shown_plan(two)["charge (ρ)"].sum() == pytest.approx(1.5)


def test_workshop_mode_splits_the_budget_page_s_total_and_says_so():
    at = start("plan", workshop="true")
    at.button(key="plan.portfolio.add").click().run()
    assert "Workshop mode charges no ledger: the plan splits the Budget page's total, ρ = 2" in (
        text(at.caption)
    )
    assert shown_plan(at)["charge (ρ)"].sum() == pytest.approx(2.0)


def test_committing_the_plan_one_by_one_spends_each_planned_share_once(two):
    planned = shown_plan(two)["charge (ρ)"]
    # The session's choices now are the second release's (by sex): the Release page says so.
    go(two, "release")
    assert "Release 2 of 2 in your plan, “Mean of hours_per_week by sex”" in text(two.info)
    commit(two)
    ledger = Ledger.open(None, "default")
    [first] = ledger.history()
    assert first.label == BY_SEX
    assert ledger.spent()["rho"] == pytest.approx(planned[BY_SEX], rel=1e-12)
    assert [e.done for e in plan_of(two).entries] == [False, True]

    two.run()  # a rerun spends nothing more and shows the same release
    assert "committing it again would spend nothing" in text(two.info)
    assert len(ledger.history()) == 1

    # The rest is rebalanced against what the ledger has left: all of it, here.
    go(two, "plan")
    table = shown_plan(two)
    assert list(table.index) == [BY_RACE_SEX]
    assert table.loc[BY_RACE_SEX, "charge (ρ)"] == pytest.approx(ledger.remaining()["rho"])
    assert f"Released: ledger record #{first.id}" in text(two.caption)

    go(two, "release")
    two.selectbox(key="release.portfolio.choice").set_value(entry_id(two, BY_RACE_SEX)).run()
    two.button(key="release.portfolio.prepare").click().run()
    assert state_of(two).strata_columns == ["race", "sex"]
    assert "Release 1 of 2 in your plan" in text(two.info)
    commit(two)
    second = ledger.history()[-1]
    assert second.label == BY_RACE_SEX and len(ledger.history()) == 2
    assert ledger.remaining()["rho"] == pytest.approx(0.0, abs=1e-12)
    assert all(e.done for e in plan_of(two).entries)
    assert "Release from your plan" not in [s.label for s in two.selectbox]


def test_a_ratio_out_of_reach_is_locked_at_the_budget_page_s_budget_and_charged_its_cost():
    """The ratio by sex with the classic Gaussian cannot meet ±0.01 below ε = 5: the plan says
    so; at ±0.05 (ε ≈ 1.3) its budgets read confidential sums, which both pages say; locked, it
    takes the Budget page's ε = 1, is released at ε = 1 and charged its exact ρ. (By race × sex
    no target is within its reach: below ε = 5 the smallest groups' ratios are withheld more than
    5% of the time.)"""
    at = exact_sizes_public(start("plan"))
    at.button(key="plan.portfolio.add").click().run()
    state = state_of(at)
    state.analysis, state.strata_columns = "ratio", ["sex"]
    at.run()
    at.number_input(key="planner_view.half_widths.units of the ratio").set_value(0.01).run()
    at.button(key="plan.portfolio.add").click().run()
    ratio = plan_of(at).entries[1]
    assert f"No budget meets the target of “{ratio.label}”: the classic Gaussian" in errors(at)
    assert "Loosen its target, or lock it at a budget." in errors(at)
    at.number_input(key=f"plan.portfolio.target.{ratio.id}").set_value(0.05).run()
    # Reachable now, but the ratio's model reads each group's exact sums: the split says so.
    assert "Curator preview, not differentially private: these budgets read each group's exact" in (
        text(at.info)
    )
    go(at, "release")
    assert "This planned budget was computed from each group's exact Σ label" in text(at.warning)
    go(at, "plan")
    at.toggle(key=f"plan.portfolio.lock.{ratio.id}").set_value(True).run()
    assert not at.main.error, errors(at)
    table = shown_plan(at)
    assert locked(at)[-1] and not table.loc[ratio.label, "meets target"]
    assert table["charge (ρ)"].sum() == pytest.approx(2.0)
    go(at, "release")
    assert f"Release 2 of 2 in your plan, “{ratio.label}”: planned at ε = 1" in text(at.info)
    commit(at)
    [record] = Ledger.open(None, "default").history()
    assert record.cost.rho == pytest.approx(table.loc[ratio.label, "charge (ρ)"], rel=1e-12)
