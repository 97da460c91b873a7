"""Browser test of the Plan page: a target typed twice, the answer adopted on the Budget page,
a frontier candidate adopted on the Strata page, and a refresh mid-flow (a new session: the
analysis state does not live in the URL yet); synthetic data with MWEM, simulated after its
button, two targets typed and the answer checked.

Saves ``tests/artifacts/screenshots/plan-*.png`` for a person to look at.
"""

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import (
    choose_analysis,
    no_exception,
    open_app,
    open_page,
    rerun_started,
    save_screen,
    settle,
)

VIEWPORT = {"width": 1400, "height": 900}
ANSWER = "Smallest budget that meets the target"


def type_target(page: Page, hours: str) -> None:
    box = page.get_by_label("Within ± (in hours_per_week)")
    box.fill(hours)
    box.press("Enter")
    settle(page, VIEWPORT)


@pytest.mark.e2e
def test_plan_target_budget_and_frontier(page: Page, app_url: str):
    open_app(page, app_url, VIEWPORT)
    open_page(page, "Plan")
    expect(page.get_by_text(ANSWER)).to_be_visible()
    settle(page, VIEWPORT)
    expect(page.locator(".js-plotly-plot")).to_have_count(2)
    save_screen(page, "plan", VIEWPORT)

    # Group sizes are private by default (issue 37): each group's noisy count takes part of the
    # budget, so a target costs more than with public sizes, and these two do not fit.
    type_target(page, "1")
    expect(page.get_by_text("ε = 7.55", exact=True)).to_be_visible()
    expect(page.get_by_text("would need about 412 rows each")).to_be_visible()
    type_target(page, "0.5")
    expect(page.get_by_text("ε = 15.1", exact=True)).to_be_visible()
    expect(page.get_by_text("would need about 823 rows each")).to_be_visible()
    # An answer beyond what fits offers no button to use it.
    expect(page.get_by_role("button", name="on the Budget page")).to_have_count(0)
    save_screen(page, "plan-shortfall", VIEWPORT)

    type_target(page, "4")
    page.get_by_role("button", name="Use ε = 1.89 on the Budget page").click()
    expect(page.get_by_text("The next release's budget is now ε = 1.89")).to_be_visible()
    open_page(page, "Budget")
    expect(page.get_by_text("ε = 1.89: any one person")).to_be_visible()

    open_page(page, "Plan")
    settle(page, VIEWPORT)
    page.get_by_label("Adopt a candidate").click()
    page.keyboard.type("sex: one estimate per")  # the list is long: filter it as a user would
    page.get_by_role("option", name="sex: one estimate per group", exact=True).click()
    page.get_by_role("button", name="Use this grouping and strategy").click()
    expect(page.get_by_text("Now grouping by sex, one estimate per group")).to_be_visible()
    settle(page, VIEWPORT)
    save_screen(page, "plan-adopted", VIEWPORT)
    open_page(page, "Strata")
    settle(page, VIEWPORT)
    chips = page.locator(".stMultiSelect").first.locator("[data-tag]")
    expect(chips).to_have_text(["sex"])

    # A refresh mid-flow starts a new session: the page answers again, without an error.
    page.reload()
    settle(page, VIEWPORT)
    open_page(page, "Plan")
    expect(page.get_by_text(ANSWER)).to_be_visible()
    expect(page.locator(".stException")).to_have_count(0)


SYNTH_PREVIEW = "a preview, not a release."
SYNTH_TARGET = "Within ± (in workload error, 0 to 2)"


def type_synth_target(page: Page, amount: str) -> None:
    box = page.get_by_label(SYNTH_TARGET)
    box.fill(amount)
    box.press("Enter")
    rerun_started(page)  # else the next call may find this box and its replacement
    settle(page, VIEWPORT)


@pytest.mark.e2e
def test_plan_synthetic_data_with_mwem_after_its_simulation(page: Page, app_url: str):
    choose_analysis(page, app_url, "Synthetic data", SYNTH_PREVIEW, VIEWPORT)
    open_page(page, "Plan")
    simulate = page.get_by_role("button", name="Simulate (about")
    expect(simulate).to_be_visible()
    expect(page.get_by_text("54 syntheses (6 at each of 9 budgets) with MWEM")).to_be_visible()
    expect(page.get_by_text(ANSWER)).to_have_count(0)  # nothing slow runs before the click
    save_screen(page, "plan-synth-ask", VIEWPORT)

    simulate.click()
    expect(page.get_by_text(ANSWER)).to_be_visible(timeout=180_000)
    settle(page, VIEWPORT)
    expect(simulate).to_have_count(0)
    for amount in ("1.3", "1.4"):
        type_synth_target(page, amount)
        expect(page.get_by_text(ANSWER)).to_be_visible()
    page.get_by_role("button", name="Check it (about").click()
    expect(page.get_by_text("simulated releases at this budget")).to_be_visible(timeout=120_000)
    settle(page, VIEWPORT)
    save_screen(page, "plan-synth", VIEWPORT)
    no_exception(page)
