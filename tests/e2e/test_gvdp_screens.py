"""Browser test of the general estimator (GVDP): choose it on the Estimator page, see the
previews and the k diagnostic, open Compare for the coverage study; screenshots are saved."""

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_pages import LOAD_TIMEOUT_MS, SCREENSHOTS, save_full_page_screenshot

ANALYSIS = "General estimator with valid CIs"
VIEWPORT = {"width": 1400, "height": 900}


def open_page(page: Page, title: str) -> None:
    """Follow the sidebar link (a full reload would start a new session)."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=title).click()
    expect(page.get_by_role("heading", name=title, exact=True, level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS
    )
    settle(page)


def settle(page: Page) -> None:
    expect(page.get_by_test_id("stStatusWidget")).to_be_hidden(timeout=LOAD_TIMEOUT_MS)
    page.wait_for_timeout(750)


def no_exception(page: Page) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)


def screenshot(page: Page, name: str) -> None:
    """A full-page screenshot; the viewport shrinks back first, so short pages stay short."""
    page.set_viewport_size(VIEWPORT)
    page.wait_for_timeout(500)
    save_full_page_screenshot(page, SCREENSHOTS / f"{name}.png")


@pytest.mark.e2e
def test_gvdp_estimator_and_compare_screens(page: Page, app_url: str):
    page.set_viewport_size(VIEWPORT)
    page.goto(app_url)
    expect(page.get_by_role("heading", name="Data", exact=True, level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS
    )
    open_page(page, "Estimator")
    page.get_by_text(ANALYSIS, exact=True).click()
    expect(page.get_by_role("heading", name="6. Preview")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    expect(page.get_by_text("Preview — uses the confidential data; not a release")).to_be_visible()
    settle(page)
    no_exception(page)
    screenshot(page, "gvdp-estimator-mean")

    page.get_by_text("Linear regression (OLS)", exact=True).click()
    expect(page.get_by_role("heading", name="6. Preview")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    settle(page)
    expect(page.get_by_text("Lowest plausible coefficient of income_over_50k")).to_be_visible()
    no_exception(page)
    screenshot(page, "gvdp-estimator-ols")

    open_page(page, "Compare")
    expect(page.get_by_text("Do the intervals cover as often as they claim?")).to_be_visible()
    expect(page.get_by_text("Over R = ")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    no_exception(page)
    screenshot(page, "gvdp-compare")

    page.get_by_text("Synthetic data with a known truth", exact=True).click()
    settle(page)
    expect(page.get_by_text("the true synthetic coefficients")).to_be_visible(
        timeout=LOAD_TIMEOUT_MS
    )
    no_exception(page)
    screenshot(page, "gvdp-compare-synthetic")

    open_page(page, "Release")
    expect(page.get_by_text("GVDP (Covington et al.)")).to_be_visible()
    no_exception(page)
    screenshot(page, "gvdp-release")
