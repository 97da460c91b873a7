"""Browser tests: every page loads in chromium without an exception; screenshots are saved."""

import pytest
from playwright.sync_api import Page, expect

from strata_ui.constants import PAGES
from tests.e2e.helpers import expect_title, no_exception, screenshot, settle

VIEWPORT = {"width": 1280, "height": 720}  # Playwright's default window


@pytest.mark.e2e
def test_every_page_loads_without_exception(page: Page, app_url: str):
    """Open the app at its root (the first page), then every page from the sidebar, as a user
    does; deep links are checked below."""
    page.goto(app_url)
    for spec in PAGES:
        if spec != PAGES[0]:
            page.get_by_test_id("stSidebarNav").get_by_role("link", name=spec.title).click()
        expect_title(page, spec.title)
        settle(page)
        screenshot(page, spec.url_path)
        no_exception(page)
        page.set_viewport_size(VIEWPORT)


@pytest.mark.e2e
def test_deep_link_is_the_first_visit_to_a_fresh_server(page: Page, fresh_app_url: str):
    page.goto(f"{fresh_app_url}/budget")
    expect_title(page, "Budget")
    expect(page.get_by_text("who pays for DP noise?")).to_be_visible()
