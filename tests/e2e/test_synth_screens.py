"""Browser test of the synthetic-data screens: Estimator preview, Compare charts, a committed
release with its CSV download.

Saves ``tests/artifacts/screenshots/synth-*.png`` for a person to look at.
"""

import io
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_pages import LOAD_TIMEOUT_MS, SCREENSHOTS, SETTLE_MS, save_full_page_screenshot
from tests.e2e.test_release_flow import open_page

VIEWPORT = {"width": 1400, "height": 900}
PREVIEW_LABEL = (
    "Differentially private synthetic rows, ε = 1, MWEM, stratified by race × sex; simulation "
    "noise — a preview, not a release."
)


def settle(page: Page) -> None:
    """Wait for the run to end and the charts to paint, at the standard viewport size."""
    page.set_viewport_size(VIEWPORT)
    expect(page.get_by_test_id("stStatusWidget")).to_be_hidden(timeout=LOAD_TIMEOUT_MS)
    page.wait_for_timeout(SETTLE_MS)


def choose_synthetic_data(page: Page, url: str) -> None:
    page.set_viewport_size(VIEWPORT)
    page.goto(url)
    expect(page.get_by_role("heading", name="Data", exact=True, level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS
    )
    open_page(page, "Estimator")
    page.get_by_text("Synthetic data", exact=True).click()
    expect(page.get_by_text(PREVIEW_LABEL)).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    settle(page)


@pytest.mark.e2e
def test_synth_estimator_and_compare_screens(page: Page, app_url: str):
    choose_synthetic_data(page, app_url)
    expect(page.get_by_text("20 of 10,000 rows, picked at random.")).to_be_visible()
    expect(page.get_by_test_id("stDownloadButton")).to_have_count(0)
    save_full_page_screenshot(page, SCREENSHOTS / "synth-estimator.png")
    expect(page.get_by_test_id("stException")).to_have_count(0)

    open_page(page, "Compare")
    expect(page.get_by_text("4. Parity error")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    settle(page)
    expect(page.locator(".js-plotly-plot")).to_have_count(4)
    expect(
        page.get_by_text("At ε = 1, stratified synthesis has the lower error in")
    ).to_be_visible()
    save_full_page_screenshot(page, SCREENSHOTS / "synth-compare.png")
    expect(page.get_by_test_id("stException")).to_have_count(0)


@pytest.mark.e2e
def test_synth_release_commits_and_downloads_the_rows(
    page: Page, fresh_app_url: str, tmp_path: Path
):
    choose_synthetic_data(page, fresh_app_url)
    open_page(page, "Release")
    expect(page.get_by_text("synthetic data, 10,000 rows of")).to_be_visible()
    page.get_by_text("I understand that committing spends this budget for good.").click()
    page.get_by_role("button", name="Commit release").click()
    expect(page.get_by_text("Released and recorded")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    settle(page)
    expect(page.get_by_test_id("stSidebar").get_by_test_id("stMetricValue")).to_have_text(
        "0.5 of 1"
    )
    save_full_page_screenshot(page, SCREENSHOTS / "synth-release.png")
    expect(page.get_by_test_id("stException")).to_have_count(0)

    csv_button = page.get_by_test_id("stDownloadButton").filter(has_text="CSV").first
    with page.expect_download() as download_info:
        csv_button.click()
    text = Path(download_info.value.path()).read_text()
    assert text.startswith("# release: Synthetic data (MWEM), stratified by race × sex\n")
    assert "# mechanism: OpenDP vetted samplers" in text
    table = pd.read_csv(io.StringIO(text), comment="#")
    assert len(table) == 10_000
    assert list(table.columns) == [
        "age", "workclass", "education", "marital_status", "hours_per_week",
        "income_over_50k", "race", "sex",
    ]  # fmt: skip
