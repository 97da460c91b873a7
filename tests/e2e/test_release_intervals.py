"""Browser test of a mean release whose intervals cover sampling error: choose it twice over,
commit, and read what the downloaded CSV says its intervals cover."""

import io

import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import (
    commit_release,
    downloaded_text,
    open_app,
    open_page,
    screenshot,
    settle,
)

VIEWPORT = {"width": 1280, "height": 900}
SAMPLING = "The noise and sampling error (pays for the variances)"
NOISE_ONLY = "The noise only (nothing extra to pay)"
DATA_COUNTS = "The data's own group counts, declared public (publishes every group's exact size)"


@pytest.mark.e2e
def test_intervals_with_sampling_error_are_committed_and_stated(page: Page, fresh_app_url: str):
    open_app(page, fresh_app_url, VIEWPORT)
    # Sizes are private by default (issue 37), and sampling error is read from each group's size:
    # the Release page says what to do, and the user declares the sizes public.
    open_page(page, "Release")
    page.get_by_text(SAMPLING, exact=True).click()
    settle(page)
    expect(page.get_by_text("need group sizes treated as public", exact=False)).to_be_visible()
    open_page(page, "Estimator")
    page.get_by_text("Treat group sizes as public", exact=True).click()
    settle(page)
    open_page(page, "Strata")
    page.get_by_text(DATA_COUNTS, exact=True).click()
    settle(page)
    open_page(page, "Release")
    expect(page.get_by_text("need group sizes treated as public", exact=False)).to_have_count(0)
    for choice, stated in ((SAMPLING, True), (NOISE_ONLY, False), (SAMPLING, True)):
        page.get_by_text(choice, exact=True).click()
        settle(page)
        review = page.get_by_text("population mean of the clipped values", exact=False)
        expect(review).to_have_count(1 if stated else 0)
    expect(page.get_by_text("Share of the budget for the variances")).to_be_visible()
    expect(page.get_by_text("took 20% of the budget", exact=False)).to_be_visible()

    commit_release(page)
    text = downloaded_text(page, "CSV")
    assert "population mean of the clipped values" in text.split("\nlevel,")[0]
    table = pd.read_csv(io.StringIO(text), comment="#")
    assert table["estimate"].between(table["low"], table["high"]).all()
    screenshot(page, "release-sampling-error")
