"""Browser test of the Strata page's declared list of groups: switch to a declared list, type a
category the data has no row of, keep every group; the page says what it did at each step."""

import pytest
from playwright.sync_api import Page, expect

from tests.e2e import helpers

VIEWPORT = {"width": 1280, "height": 900}


def declare_exact_counts_public(page: Page) -> None:
    """Choose the data's own group counts as the shares, the explicit choice that lets exact
    sizes decide the small groups on screen (sizes are private by default, issue 37: then the
    noisy counts decide at release and the page cannot say beforehand which groups go)."""
    page.get_by_text("The data's own group counts, declared public", exact=False).click()
    helpers.settle(page)


@pytest.mark.e2e
def test_a_declared_list_with_a_new_category_kept_as_a_group(page: Page, app_url: str):
    helpers.open_app(page, app_url, VIEWPORT)
    helpers.open_page(page, "Strata")
    declare_exact_counts_public(page)
    # A declared list is the default (issue 37); choosing it again keeps it.
    page.get_by_text("A declared list of categories (a public codebook)").click()
    helpers.settle(page)
    expect(page.get_by_text("Prefilled from the data (race, sex)")).to_be_visible()
    sex = page.get_by_test_id("stMultiSelect").filter(has_text="Categories of sex")
    sex.locator("input").fill("Another")
    page.keyboard.press("Enter")
    helpers.settle(page)
    expect(page.get_by_text("5 declared groups have no rows", exact=False)).to_be_visible()
    page.get_by_text("Keep every group", exact=True).click()
    helpers.settle(page)
    expect(page.get_by_text("Policy: every group is kept, whatever its size.")).to_be_visible()
    # The caption is drawn early in the run; wait for its end before reading the metrics.
    helpers.settle(page)
    expect(helpers.metric_value(page, "Groups")).to_have_text("15")
    helpers.no_exception(page)
    helpers.screenshot(page, "strata-declared")


@pytest.mark.e2e
def test_a_codebook_declares_the_lists(page: Page, app_url: str, tmp_path):
    codebook = tmp_path / "codebook.csv"
    codebook.write_text(
        "column,category\nsex,Female\nsex,Male\nsex,Another\nrace,White\nrace,Black\n"
        "occupation,Sales\n"
    )
    helpers.open_app(page, app_url, VIEWPORT)
    helpers.open_page(page, "Strata")
    page.get_by_text("A declared list of categories (a public codebook)").click()
    helpers.settle(page)
    page.get_by_test_id("stFileUploader").locator("input[type=file]").set_input_files(codebook)
    helpers.settle(page)
    expect(
        page.get_by_text("Loaded the categories of race, sex; ignored occupation")
    ).to_be_visible()
    expect(page.get_by_text("Loaded from a codebook: a declared public list.")).to_be_visible()
    helpers.settle(page)
    # 2 races × 3 sexes: with private sizes (the default, issue 37) every declared combination
    # is a group, the two with no rows released from noise alone.
    expect(helpers.metric_value(page, "Groups")).to_have_text("6")
    expect(page.get_by_text("(6 groups, largest first; 2 with no rows, no bar)")).to_be_visible()
    helpers.no_exception(page)
    helpers.screenshot(page, "strata-codebook")
