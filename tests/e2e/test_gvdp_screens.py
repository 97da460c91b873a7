"""Browser test of the general estimator (GVDP): choose it on the Estimator page, see the
previews and the k diagnostic, open Compare for the coverage study; screenshots are saved."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import open_app, open_page, save_screen, settle

ANALYSIS = "General estimator with valid CIs"
VIEWPORT = {"width": 1400, "height": 900}
# GVDP treats group sizes as public; with sizes private by default (issue 37) the user declares
# the data's own counts public before it previews anything.
DECLARE_COUNTS = re.compile("Declare the data's own group counts public")


@pytest.mark.e2e
def test_gvdp_estimator_and_compare_screens(page: Page, app_url: str):
    open_app(page, app_url, VIEWPORT)
    open_page(page, "Estimator")
    page.get_by_text(ANALYSIS, exact=True).click()
    page.get_by_role("button", name=DECLARE_COUNTS).click()
    expect(page.get_by_role("heading", name="6. Preview")).to_be_visible()
    expect(page.get_by_text("Preview — uses the confidential data; not a release")).to_be_visible()
    settle(page)
    save_screen(page, "gvdp-estimator-mean", VIEWPORT)

    page.get_by_text("Linear regression (OLS)", exact=True).click()
    expect(page.get_by_role("heading", name="6. Preview")).to_be_visible()
    settle(page)
    expect(page.get_by_text("Lowest plausible coefficient of income_over_50k")).to_be_visible()
    save_screen(page, "gvdp-estimator-ols", VIEWPORT)

    open_page(page, "Compare")
    expect(page.get_by_text("Do the intervals cover as often as they claim?")).to_be_visible()
    expect(page.get_by_text("Over R = ")).to_be_visible()
    save_screen(page, "gvdp-compare", VIEWPORT)

    page.get_by_text("Synthetic data with a known truth", exact=True).click()
    settle(page)
    expect(page.get_by_text("the true synthetic coefficients")).to_be_visible()
    save_screen(page, "gvdp-compare-synthetic", VIEWPORT)

    open_page(page, "Release")
    expect(page.get_by_text("GVDP (Covington et al.)")).to_be_visible()
    save_screen(page, "gvdp-release", VIEWPORT)
