"""Browser test of the Strata page's declared list of groups: switch to a declared list, type a
category the data has no row of, keep every group; the page says what it did at each step."""

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import (
    metric_value,
    no_exception,
    open_app,
    open_page,
    screenshot,
    settle,
)

VIEWPORT = {"width": 1280, "height": 900}


@pytest.mark.e2e
def test_a_declared_list_with_a_new_category_kept_as_a_group(page: Page, app_url: str):
    open_app(page, app_url, VIEWPORT)
    open_page(page, "Strata")
    page.get_by_text("A declared list of categories (a public codebook)").click()
    settle(page)
    expect(page.get_by_text("Prefilled from the data (race, sex)")).to_be_visible()
    sex = page.get_by_test_id("stMultiSelect").filter(has_text="Categories of sex")
    sex.locator("input").fill("Another")
    page.keyboard.press("Enter")
    settle(page)
    expect(page.get_by_text("5 declared groups have no rows", exact=False)).to_be_visible()
    page.get_by_text("Keep every group", exact=True).click()
    settle(page)
    expect(page.get_by_text("Policy: every group is kept, whatever its size.")).to_be_visible()
    # The caption is drawn early in the run; wait for its end before reading the metrics.
    settle(page)
    expect(metric_value(page, "Groups")).to_have_text("15")
    no_exception(page)
    screenshot(page, "strata-declared")


@pytest.mark.e2e
def test_a_codebook_declares_the_lists(page: Page, app_url: str, tmp_path):
    codebook = tmp_path / "codebook.csv"
    codebook.write_text(
        "column,category\nsex,Female\nsex,Male\nsex,Another\nrace,White\nrace,Black\n"
        "occupation,Sales\n"
    )
    open_app(page, app_url, VIEWPORT)
    open_page(page, "Strata")
    page.get_by_text("A declared list of categories (a public codebook)").click()
    settle(page)
    page.get_by_test_id("stFileUploader").locator("input[type=file]").set_input_files(codebook)
    settle(page)
    expect(
        page.get_by_text("Loaded the categories of race, sex; ignored occupation")
    ).to_be_visible()
    expect(page.get_by_text("Loaded from a codebook: a declared public list.")).to_be_visible()
    settle(page)
    expect(metric_value(page, "Groups")).to_have_text("4")
    no_exception(page)
    screenshot(page, "strata-codebook")
