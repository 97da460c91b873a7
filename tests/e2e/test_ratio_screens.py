"""Browser test of the calibration-ratio screens: Estimator preview, Compare views, Table 1.

Saves ``tests/artifacts/screenshots/ratio-*.png`` for a person to look at.
"""

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import charts_then_save, choose_analysis, open_page, save_screen

VIEWPORT = {"width": 1400, "height": 900}
PREVIEW_LABEL = "Preview — uses the confidential data; not a release."


@pytest.mark.e2e
def test_ratio_estimator_compare_and_table1_screens(page: Page, app_url: str):
    choose_analysis(page, app_url, "Ratio of sums (calibration ratio)", PREVIEW_LABEL, VIEWPORT)
    page.get_by_text("Noise per released sum and what the ledger is charged").click()
    expect(page.get_by_text("The ledger adds up ρ-zCDP.")).to_be_visible()
    charts_then_save(page, 1, "ratio-estimator", VIEWPORT)

    open_page(page, "Compare")
    expect(
        page.get_by_text("1. Coverage: how often the interval contains the exact ratio")
    ).to_be_visible()
    charts_then_save(page, 3, "ratio-compare", VIEWPORT)

    page.get_by_role("button", name="Reproduce the paper's Table 1").click()
    expect(page.get_by_text("Coverage agrees within")).to_be_visible()
    charts_then_save(page, 4, "ratio-table1", VIEWPORT)

    open_page(page, "Release")
    expect(page.get_by_text("calibration ratio Σscore/Σincome_over_50k per group")).to_be_visible()
    save_screen(page, "ratio-release", VIEWPORT)
