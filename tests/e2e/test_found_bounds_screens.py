"""Browser test of bounds found privately, as a user goes (issue 39): the Estimator page's
choice changed back and forth, the search range typed, the share of the budget moved twice; a
refresh mid-flow keeps the choices (they live in the address); the Compare page's cost of the
bounds; the Plan page's split; the Release page's review and commit; bucket edges found
privately on the Strata page; the Learn page's clipping picture.

Saves ``tests/artifacts/screenshots/found-bounds-*.png`` for a person to look at.
"""

import pytest
from playwright.sync_api import Page, expect

from tests.e2e import helpers

VIEWPORT = {"width": 1400, "height": 900}


def choose(page: Page, label: str) -> None:
    page.get_by_text(label, exact=True).click()
    helpers.settle(page, VIEWPORT)


@pytest.mark.e2e
def test_bounds_found_privately_from_estimator_to_release(page: Page, app_url: str):
    helpers.open_app(page, app_url, VIEWPORT)
    helpers.open_page(page, "Estimator")
    for label in ("Find them privately (paid from the budget)", "Type public bounds",
                  "Find them privately (paid from the budget)"):  # fmt: skip
        choose(page, label)
    search = page.get_by_role("spinbutton", name="Search up to (highest possible value)")
    search.fill("1000")
    search.press("Enter")
    helpers.settle(page, VIEWPORT)
    # Sizes are private by default (issue 37): the bounds aim at a share of the values, which
    # the user chooses; until then the page says what to choose and no search is shown.
    asked = page.get_by_test_id("stAlertContentError").get_by_text("choose the share of values")
    expect(asked).to_be_visible()
    tail = page.get_by_test_id("stSelectbox").filter(
        has=page.get_by_text("Values to leave beyond each bound", exact=True)
    )
    tail.scroll_into_view_if_needed()  # a list opened while the click scrolls closes at once
    helpers.settle(page, VIEWPORT)
    tail.click()
    page.get_by_role("option", name="1% of the values", exact=True).click()
    helpers.settle(page, VIEWPORT)
    expect(page.get_by_text("log-spaced within [0, 1000]")).to_be_visible()
    expect(page.get_by_text("1.0% of the values beyond each bound")).to_be_visible()
    share = page.get_by_role("slider", name="Share of the release's budget that finds the bounds")
    share.focus()
    for key in ("ArrowRight", "ArrowRight"):  # 20% → 25% → 30%
        page.keyboard.press(key)
        helpers.settle(page, VIEWPORT)
    expect(page.get_by_text("the means run at ε = 0.7 (pure DP)").first).to_be_visible()
    helpers.no_exception(page)
    helpers.save_screen(page, "found-bounds-estimator", VIEWPORT)

    page.reload()  # a refresh mid-flow: the choices come back from the address
    helpers.settle(page, VIEWPORT)
    expect(page.get_by_text("log-spaced within [0, 1000]")).to_be_visible()

    helpers.open_page(page, "Compare")
    expect(page.get_by_text("What the bounds cost: typed range or found privately")).to_be_visible()
    helpers.save_screen(page, "found-bounds-compare", VIEWPORT)

    helpers.open_page(page, "Plan")
    expect(page.get_by_text("How the budget splits:")).to_be_visible()
    helpers.save_screen(page, "found-bounds-plan", VIEWPORT)

    helpers.open_page(page, "Release")
    expect(page.get_by_text("found privately on the whole population").first).to_be_visible()
    helpers.save_screen(page, "found-bounds-release-review", VIEWPORT)
    helpers.commit_release(page)
    # The released table carries the bounds found (a data grid: its headers are in the page's
    # accessibility tree, drawn on a canvas).
    expect(page.locator("th", has_text="clip_low").first).to_be_attached()
    helpers.save_screen(page, "found-bounds-released", VIEWPORT)


@pytest.mark.e2e
def test_bucket_edges_found_privately_and_the_clipping_picture(page: Page, app_url: str):
    helpers.open_app(page, app_url, VIEWPORT)
    helpers.open_page(page, "Strata")
    columns = page.get_by_role("combobox", name="Grouping columns")
    columns.click()
    page.get_by_role("option", name="age", exact=True).click()
    page.keyboard.press("Escape")
    helpers.settle(page, VIEWPORT)
    page.get_by_text("Find edges for age privately (paid from the budget)").click()
    helpers.settle(page, VIEWPORT)
    high = page.get_by_role("spinbutton", name="Search up to", exact=True)
    high.fill("150")
    high.press("Enter")
    helpers.settle(page, VIEWPORT)
    page.get_by_text("I understand this spends").click()
    helpers.settle(page, VIEWPORT)
    page.get_by_role("button", name="Release the edges").click()
    helpers.settle(page, VIEWPORT)
    expect(page.get_by_text("Edges released:")).to_be_visible()
    expect(page.get_by_text("Found privately in the release")).to_be_visible()
    helpers.no_exception(page)
    helpers.save_screen(page, "found-bounds-strata-edges", VIEWPORT)

    helpers.open_page(page, "Learn")
    page.get_by_text("Too narrow or too wide: where to clip, and bounds found privately").click()
    helpers.settle(page, VIEWPORT)
    expect(page.get_by_text("The error is smallest at U")).to_be_visible()
    helpers.save_screen(page, "found-bounds-learn", VIEWPORT)
