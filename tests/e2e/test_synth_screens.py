"""Browser test of the synthetic-data screens: Estimator preview, Compare charts, a committed
release with its CSV download.

Saves ``tests/artifacts/screenshots/synth-*.png`` for a person to look at.
"""

import io

import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from tests.e2e import helpers

VIEWPORT = {"width": 1400, "height": 900}
PREVIEW_LABEL = (
    "Differentially private synthetic rows, ε = 1, MWEM, one model per group of race × sex; simulation "
    "noise — a preview, not a release."
)


def choose_synthetic_data(page: Page, url: str) -> None:
    helpers.choose_analysis(page, url, "Synthetic data", PREVIEW_LABEL, VIEWPORT)


@pytest.mark.e2e
def test_synth_estimator_and_compare_screens(page: Page, app_url: str):
    choose_synthetic_data(page, app_url)
    helpers.preview_offers_no_download(
        page, "20 of 10,000 rows, picked at random.", "synth-estimator"
    )

    helpers.open_page(page, "Compare")
    expect(page.get_by_text("4. Parity error")).to_be_visible()
    helpers.settle(page, VIEWPORT)
    expect(page.locator(".js-plotly-plot")).to_have_count(4)
    expect(page.get_by_text("At ε = 1, one model per group has the lower error in")).to_be_visible()
    helpers.screenshot(page, "synth-compare")
    helpers.no_exception(page)


@pytest.mark.e2e
def test_synth_release_commits_and_downloads_the_rows(page: Page, fresh_app_url: str):
    choose_synthetic_data(page, fresh_app_url)
    review = "synthetic data, 10,000 rows of"
    text = helpers.commit_and_download_csv(page, review, "1.5 of 2", "synth-release")
    assert text.startswith("# release: Synthetic data (MWEM), stratified by race × sex\n")
    assert "# mechanism: OpenDP vetted samplers" in text
    table = pd.read_csv(io.StringIO(text), comment="#")
    assert len(table) == 10_000
    assert list(table.columns) == [
        "age", "workclass", "education", "marital_status", "hours_per_week",
        "income_over_50k", "race", "sex",
    ]  # fmt: skip
