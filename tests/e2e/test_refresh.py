"""Browser test: a refresh mid-flow keeps the user's choices (they live in the address), and
after an upload it asks for the file again instead of showing the demo data silently; the
upload then brings the choices back (issue 14, item 1; screenshots: refresh-*.png)."""

import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import (
    click_budget_slider,
    expect_title,
    open_app,
    open_page,
    save_screen,
    settle,
)

VIEWPORT = {"width": 1280, "height": 800}
SURVEY = "region,hours,paid\n" + "".join(
    f"{['North', 'South', 'East'][i % 3]},{20 + i % 30},{i % 2}\n" for i in range(300)
)


def add_grouping_column(page: Page, column: str) -> None:
    grouping = page.get_by_test_id("stMultiSelect").first
    grouping.locator("input").fill(column)
    page.keyboard.press("Enter")
    settle(page)


def refresh(page: Page, title: str) -> None:
    page.reload()
    expect_title(page, title)
    settle(page)


def chosen_columns(page: Page):
    return page.get_by_test_id("stMultiSelect").first.locator("[data-tag]")


@pytest.mark.e2e
def test_a_refresh_keeps_the_choices_and_asks_for_an_upload_again(
    page: Page, app_url: str, tmp_path
):
    open_app(page, app_url, VIEWPORT)
    open_page(page, "Strata")
    add_grouping_column(page, "education")
    # The address is written at the end of the run the click starts: wait for it, not the run.
    expect(page).to_have_url(re.compile(r"strata_columns=[^&]*education"))
    refresh(page, "Strata")
    expect(chosen_columns(page)).to_have_text(["race", "sex", "education"])
    save_screen(page, "refresh-strata", VIEWPORT)

    open_page(page, "Data")
    survey = tmp_path / "survey.csv"
    survey.write_text(SURVEY)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(survey)
    expect(page.get_by_text("Using “survey.csv”")).to_be_visible()
    open_page(page, "Strata")
    add_grouping_column(page, "region")
    expect(page).to_have_url(re.compile(r"strata_columns=[^&]*region"))
    expect(page).to_have_url(re.compile(r"file=survey\.csv"))

    refresh(page, "Strata")
    expect(page.get_by_text("Upload it again on the Data page")).to_be_visible()
    expect(page.get_by_text("“survey.csv”", exact=False).first).to_be_visible()
    save_screen(page, "refresh-upload-waiting", VIEWPORT)

    open_page(page, "Data")
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(survey)
    expect(page.get_by_text("Your choices for “survey.csv” are back")).to_be_visible()
    expect(page.get_by_text("Upload it again on the Data page")).to_have_count(0)
    open_page(page, "Strata")
    expect(chosen_columns(page)).to_have_text(["region"])
    save_screen(page, "refresh-upload-restored", VIEWPORT)


def simulated_at(page: Page) -> str:
    """The budget of the Compare page's simulations, from its caption: ``ε = 2``."""
    caption = page.get_by_text(re.compile(r"releases per strategy at ε = ")).inner_text()
    return re.search(r"ε = [^.]+(?:\.\d+)?", caption).group(0)


@pytest.mark.e2e
def test_a_refresh_keeps_the_budget_chosen_on_compare(page: Page, app_url: str):
    """The Compare page's simulations are a fragment: an ε move reruns them without ``app.py``,
    which otherwise writes the address. The move must still reach the address, as the Compare
    page's own ε: it leaves the Budget page's alone (issue 37)."""
    open_app(page, app_url, VIEWPORT)
    open_page(page, "Compare")
    before = simulated_at(page)
    for fraction in (0.8, 0.2):  # twice in a row: the second move must stick too
        click_budget_slider(page, fraction)
        caption = page.get_by_text(re.compile(r"releases per strategy at ε = "))
        expect(caption).not_to_contain_text(f"{before}.")  # the run the click starts has ended
        settle(page)
        chosen = simulated_at(page)
        expect(page).to_have_url(re.compile(r"[?&]compare_epsilon="))
        address = parse_qs(urlparse(page.url).query)
        assert [float(e) for e in address["compare_epsilon"]] == [
            float(chosen.removeprefix("ε = "))
        ]
        assert "epsilon" not in address  # the Budget page's ε stays at its default
        before = chosen
    refresh(page, "Compare")
    assert simulated_at(page) == chosen
    open_page(page, "Budget")  # and the Budget page's ε is still its own
    expect(page.get_by_text("ε = 1: any one person")).to_be_visible()


def in_address(page: Page, name: str) -> str | None:
    values = parse_qs(urlparse(page.url).query).get(name)
    return None if values is None else values[0]


@pytest.mark.e2e
def test_a_bound_entered_just_before_a_page_link_is_clicked_is_kept_and_refreshed(
    page: Page, app_url: str
):
    """A sidebar link clicked at once after Enter sends the page change while the bound's run
    may still be going. The new page must keep the bound, and so must the address, also on a
    page that ends early (no grouping column: a hint and nothing more)."""
    open_app(page, app_url, VIEWPORT)
    open_page(page, "Estimator")
    for bound in ("80", "70"):  # twice in a row: the second change must stick too
        box = page.get_by_role("spinbutton", name="Upper bound U")
        box.fill(bound)
        box.press("Enter")
        open_page(page, "Strata")  # not waiting for the run Enter started
        expect(page).to_have_url(re.compile(rf"mean\.clip_high={bound}"))
        open_page(page, "Estimator")
        expect(page.get_by_role("spinbutton", name="Upper bound U")).to_have_value(f"{bound}.00")

    open_page(page, "Strata")
    grouping = page.get_by_test_id("stMultiSelect").first
    for _ in ("sex", "race"):  # the demo's grouping, removed one at a time
        grouping.locator("input").click()
        page.keyboard.press("Backspace")
        page.keyboard.press("Escape")  # close the list, as a user clicking elsewhere would
        settle(page)
    expect(chosen_columns(page)).to_have_count(0)
    hint = page.get_by_text("Choose one or more grouping columns above")
    expect(hint).to_be_visible()
    open_page(page, "Data")
    open_page(page, "Strata")  # a page change clears the address before the page runs
    expect(page).to_have_url(re.compile(r"strata_columns="))
    assert in_address(page, "mean.clip_high") == "70.0"
    save_screen(page, "refresh-no-grouping", VIEWPORT)
    refresh(page, "Strata")
    expect(hint).to_be_visible()
    expect(chosen_columns(page)).to_have_count(0)
    open_page(page, "Estimator")
    expect(page.get_by_role("spinbutton", name="Upper bound U")).to_have_value("70.00")
