"""Browser tests: every page loads in chromium without an exception; screenshots are saved."""

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from strata_ui.constants import PAGES

SCREENSHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"
LOAD_TIMEOUT_MS = 30_000
# Lets data grids and charts finish painting after the script run ends.
SETTLE_MS = 750
VIEWPORT = {"width": 1280, "height": 720}  # Playwright's default window


def grow_to_content(page: Page) -> None:
    """Grow the viewport to the page's content, so that charts below the fold draw.

    Streamlit scrolls inside its main and sidebar containers, so `full_page=True` alone captures
    one screen. Charts below the fold draw only once visible and then lengthen the page: grow
    until the content height stops changing (a few rounds at most).
    """
    width = page.viewport_size["width"]
    for _ in range(4):
        content_height = page.evaluate(
            """() => Math.max(...['stMain', 'stSidebarContent'].map(
                id => document.querySelector(`[data-testid="${id}"]`)?.scrollHeight ?? 0))"""
        )
        if content_height <= page.viewport_size["height"]:
            break
        page.set_viewport_size({"width": width, "height": content_height})
        page.wait_for_timeout(SETTLE_MS)


def save_full_page_screenshot(page: Page, path: Path) -> None:
    """Screenshot the whole app, not just the viewport."""
    grow_to_content(page)
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=path, full_page=True)


@pytest.mark.e2e
def test_every_page_loads_without_exception(page: Page, app_url: str):
    """Open the app at its root (the first page), then every page from the sidebar, as a user
    does; deep links are checked below."""
    page.goto(app_url)
    for spec in PAGES:
        if spec != PAGES[0]:
            page.get_by_test_id("stSidebarNav").get_by_role("link", name=spec.title).click()
        expect(page.get_by_role("heading", name=spec.title, exact=True, level=1)).to_be_visible(
            timeout=LOAD_TIMEOUT_MS
        )
        expect(page.get_by_test_id("stStatusWidget")).to_be_hidden(timeout=LOAD_TIMEOUT_MS)
        page.wait_for_timeout(SETTLE_MS)
        save_full_page_screenshot(page, SCREENSHOTS / f"{spec.url_path}.png")
        expect(page.get_by_test_id("stException")).to_have_count(0)
        page.set_viewport_size(VIEWPORT)


@pytest.mark.e2e
def test_deep_link_is_the_first_visit_to_a_fresh_server(page: Page, fresh_app_url: str):
    page.goto(f"{fresh_app_url}/budget")
    expect(page.get_by_role("heading", name="Budget", exact=True, level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS
    )
    expect(page.get_by_text("who pays for DP noise?")).to_be_visible()
