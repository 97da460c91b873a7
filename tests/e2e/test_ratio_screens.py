"""Browser test of the calibration-ratio screens: Estimator preview, Compare views, Table 1.

Saves ``tests/artifacts/screenshots/ratio-*.png`` for a person to look at.
"""

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_pages import LOAD_TIMEOUT_MS, SCREENSHOTS, SETTLE_MS, save_full_page_screenshot
from tests.e2e.test_release_flow import open_page

VIEWPORT = {"width": 1400, "height": 900}


def settle(page: Page) -> None:
    """Wait for the script run to end and the charts to paint, at the standard viewport size
    (a full-page screenshot grows the viewport, which would pad the next, shorter page)."""
    page.set_viewport_size(VIEWPORT)
    expect(page.get_by_test_id("stStatusWidget")).to_be_hidden(timeout=LOAD_TIMEOUT_MS)
    page.wait_for_timeout(SETTLE_MS)


@pytest.mark.e2e
def test_ratio_estimator_compare_and_table1_screens(page: Page, app_url: str):
    page.set_viewport_size(VIEWPORT)
    page.goto(app_url)
    expect(page.get_by_role("heading", name="Data", exact=True, level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS
    )
    open_page(page, "Estimator")
    page.get_by_text("Ratio of sums (calibration ratio)").click()
    expect(page.get_by_text("Preview — uses the confidential data; not a release.")).to_be_visible(
        timeout=LOAD_TIMEOUT_MS
    )
    page.get_by_text("Noise per released sum and what the ledger is charged").click()
    expect(page.get_by_text("The ledger adds up ρ-zCDP.")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    settle(page)
    expect(page.locator(".js-plotly-plot")).to_have_count(1)
    save_full_page_screenshot(page, SCREENSHOTS / "ratio-estimator.png")
    expect(page.get_by_test_id("stException")).to_have_count(0)

    open_page(page, "Compare")
    expect(
        page.get_by_text("1. Coverage: how often the interval contains the exact ratio")
    ).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    settle(page)
    expect(page.locator(".js-plotly-plot")).to_have_count(3)
    save_full_page_screenshot(page, SCREENSHOTS / "ratio-compare.png")

    page.get_by_role("button", name="Reproduce the paper's Table 1").click()
    expect(page.get_by_text("Coverage agrees within")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    settle(page)
    expect(page.locator(".js-plotly-plot")).to_have_count(4)
    save_full_page_screenshot(page, SCREENSHOTS / "ratio-table1.png")
    expect(page.get_by_test_id("stException")).to_have_count(0)

    open_page(page, "Release")
    expect(page.get_by_text("calibration ratio Σscore/Σincome_over_50k per group")).to_be_visible(
        timeout=LOAD_TIMEOUT_MS
    )
    settle(page)
    save_full_page_screenshot(page, SCREENSHOTS / "ratio-release.png")
    expect(page.get_by_test_id("stException")).to_have_count(0)
