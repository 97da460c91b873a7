"""Browser test of the whole release flow: demo data → strata → estimator → budget → release →
download, checking the downloaded file and that the budget dropped by exactly the cost, once."""

import io
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from dpcore.accounting import ZCDP
from dpcore.ledger import Ledger
from strata_ui.constants import DEFAULT_LEDGER_NAME
from tests.e2e.test_pages import LOAD_TIMEOUT_MS, SCREENSHOTS, save_full_page_screenshot


def open_page(page: Page, title: str) -> None:
    """Follow the sidebar link (a full reload would start a new session)."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=title).click()
    expect(page.get_by_role("heading", name=title, exact=True, level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS
    )
    expect(page.get_by_test_id("stStatusWidget")).to_be_hidden(timeout=LOAD_TIMEOUT_MS)


def sidebar_remaining(page: Page) -> str:
    return page.get_by_test_id("stSidebar").get_by_test_id("stMetricValue").inner_text()


@pytest.mark.e2e
def test_release_spends_once_and_downloads(page: Page, fresh_app_url: str, tmp_path: Path):
    page.goto(fresh_app_url)
    expect(page.get_by_role("heading", name="Data", exact=True, level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS
    )
    for title in ("Strata", "Estimator", "Budget"):
        open_page(page, title)
    expect(page.get_by_text("ε per release (log scale)")).to_be_visible()
    open_page(page, "Release")
    assert sidebar_remaining(page) == "1 of 1"

    commit = page.get_by_role("button", name="Commit release")
    expect(commit).to_be_disabled()
    page.get_by_text("I understand that committing spends this budget for good.").click()
    expect(commit).to_be_enabled()
    commit.click()
    expect(page.get_by_text("Released and recorded")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    expect(page.get_by_test_id("stStatusWidget")).to_be_hidden(timeout=LOAD_TIMEOUT_MS)
    # ε = 1 (pure DP) is charged as ρ = ε²/2 = 0.5 against the ρ = 1 ledger.
    expect(page.get_by_test_id("stSidebar").get_by_test_id("stMetricValue")).to_have_text(
        "0.5 of 1"
    )

    csv_button = page.get_by_test_id("stDownloadButton").filter(has_text="CSV").first
    with page.expect_download() as download_info:
        csv_button.click()
    text = Path(download_info.value.path()).read_text()
    assert text.startswith("# release: Mean of hours_per_week by race × sex\n")
    assert "# mechanism: OpenDP vetted samplers" in text
    table = pd.read_csv(io.StringIO(text), comment="#")
    assert list(table.columns) == ["level", "group", "estimate", "low", "high", "public_share"]
    assert len(table) == 11  # ten race × sex groups and the whole population
    assert table["estimate"].between(table["low"], table["high"]).all()
    assert table["estimate"].between(0, 100).all()
    save_full_page_screenshot(page, SCREENSHOTS / "release-committed.png")

    # A browser refresh starts a new session on the same plan: nothing more is spent.
    page.reload()
    expect(page.get_by_text("This plan was released on")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    expect(page.get_by_role("button", name="Commit release")).to_have_count(0)

    ledger = Ledger(tmp_path / "ledger.sqlite", DEFAULT_LEDGER_NAME, ZCDP(1.0))
    assert ledger.remaining() == {"rho": 0.5}
    assert len(ledger.history()) == 1
