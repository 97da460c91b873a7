"""Browser test of the private sample's screens: Estimator preview, Compare chart, a committed
release with its CSV download, and the Learn explainer.

Saves ``tests/artifacts/screenshots/sample-*.png`` for a person to look at.
"""

import io

import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import (
    charts_then_save,
    choose_analysis,
    commit_and_download_csv,
    open_app,
    open_page,
    preview_offers_no_download,
)

VIEWPORT = {"width": 1400, "height": 900}
PREVIEW_LABEL = (
    "5 private records of “Whole population”, drawn with simulation noise — a preview, not a "
    "release."
)


def choose_private_sample(page: Page, url: str) -> None:
    choose_analysis(page, url, "Private sample", PREVIEW_LABEL, VIEWPORT)


@pytest.mark.e2e
def test_sample_estimator_and_compare_screens(page: Page, app_url: str):
    choose_private_sample(page, app_url)
    preview_offers_no_download(page, "read from the data, treated as public", "sample-estimator")

    open_page(page, "Compare")
    charts_then_save(page, 1, "sample-compare", VIEWPORT)


@pytest.mark.e2e
def test_sample_release_commits_and_downloads_the_records(page: Page, fresh_app_url: str):
    choose_private_sample(page, fresh_app_url)
    text = commit_and_download_csv(page, "Treated as public:", "1.5 of 2", "sample-release")
    assert text.startswith("# release: Private sample of marital_status (Whole population)\n")
    assert "# mechanism: OpenDP vetted samplers" in text
    table = pd.read_csv(io.StringIO(text), comment="#", dtype=str)
    assert list(table.columns) == ["group", "record", "marital_status"]
    assert len(table) == 5


@pytest.mark.e2e
def test_sample_learn_explainer(page: Page, app_url: str):
    open_app(page, app_url, VIEWPORT)
    open_page(page, "Learn")
    page.get_by_text("Private sampling: fewer records than learning").click()
    expect(page.get_by_text("Algorithm 4")).to_be_visible()
    charts_then_save(page, 2, "sample-learn", VIEWPORT)
