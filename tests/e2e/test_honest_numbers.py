"""Browser journeys of issue 37 ("honest numbers"), each in one browser session.

1. A survey unlike the demo (money with blanks, an age band whose income is 0, regions of one and
   two people): every page, every analysis, the widgets it touches each changed twice in a row,
   a commit and every download. No page may show a traceback, numpy's ``array(`` repr of data,
   or a number in ``e+`` notation; each page is saved as a full-page screenshot
   (tests/artifacts/screenshots/honest-*.png).
2. Workshop mode on a projector (1024 × 768 and 1280 × 720): a badge on the page with the
   sidebar folded, and the first chart of Compare and of each explainer in the first screen.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from strata_ui import learn
from strata_ui.workshop import BADGE_TEXT
from tests.e2e.helpers import (
    add_to_multiselect,
    charts_drawn,
    choose,
    click_budget_slider,
    commit_release,
    downloaded_report,
    downloaded_text,
    expect_title,
    no_exception,
    open_app,
    open_page,
    rerun_started,
    screenshot,
    settle,
    type_into,
    type_number,
    written_csv,
)
from tests.frames import tiny_groups_survey_frame

VIEWPORT = {"width": 1280, "height": 900}
PROJECTORS = ({"width": 1024, "height": 768}, {"width": 1280, "height": 720})
E_PLUS = re.compile(r"\d(?:\.\d+)?e\+\d")
DOWNLOADS = ("CSV", "JSON", "Python script")  # and the HTML report, prepared on request


def check_page(page: Page, name: str) -> str:
    """The page drawn without a traceback, a repr of data or an ``e+`` number; saved as
    ``honest-<name>.png``. Returns the main area's text."""
    settle(page)
    no_exception(page)
    text = page.get_by_test_id("stMain").inner_text()
    assert "Traceback" not in text and "array(" not in text, name
    assert not E_PLUS.search(text), (name, E_PLUS.search(text))
    screenshot(page, f"honest-{name}")
    return text


def choose_analysis(page: Page, title: str) -> None:
    open_page(page, "Estimator")
    page.get_by_text(title, exact=True).click()
    settle(page)


@pytest.fixture
def survey_csv(tmp_path: Path) -> Path:
    return written_csv(tiny_groups_survey_frame(), tmp_path)


@pytest.mark.e2e
def test_a_survey_unlike_the_demo_through_every_page_and_analysis(
    page: Page, fresh_app_url: str, survey_csv: Path
):
    open_app(page, fresh_app_url, VIEWPORT)
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(survey_csv)
    expect(page.get_by_text("Using “survey.csv”")).to_be_visible()
    for column in ("hours", "income"):
        choose(page, "Value column", column)
    check_page(page, "data")

    open_page(page, "Strata")
    for column in ("region", "age"):
        add_to_multiselect(page, "Grouping columns", column)
    edges = page.get_by_test_id("stTextInput").filter(has_text="Bucket edges for").locator("input")
    type_into(page, edges, "30, 60", "18, 40, 65")  # the band under 18 earns exactly 0
    for source in ("A table of public shares", "The release's own noisy group counts"):
        page.get_by_text(source, exact=False).first.click()
        settle(page)
    strata = check_page(page, "strata")
    assert "Shares in use: The release's own noisy group counts" in strata

    open_page(page, "Estimator")
    type_number(page, "Lower bound L", "0")
    type_number(page, "Upper bound U", "200000", "250000")
    check_page(page, "estimator-mean")

    open_page(page, "Budget")
    type_number(page, "ε per release", "0.8", "1")
    budget = check_page(page, "budget")
    assert "the ledger is charged ρ = 0.5" in budget  # one line prices it: ρ = ε²/2

    open_page(page, "Plan")
    type_into(page, page.get_by_role("spinbutton", name=re.compile(r"Within ±")), "20000", "30000")
    plan = check_page(page, "plan")
    answer = re.search(r"Smallest budget that meets the target\s+(ε = [\d.,]+)", plan)
    assert answer, plan[:500]
    use = page.get_by_role("button", name=f"Use {answer.group(1)} on the Budget page")
    if use.count():  # one number: the button sets exactly what the metric shows
        use.click()
        settle(page)
        open_page(page, "Budget")
        value = answer.group(1).split("= ")[1].replace(",", "")
        expect(page.get_by_role("spinbutton", name="ε per release")).to_have_value(
            re.compile(rf"^{re.escape(value)}")
        )
        type_number(page, "ε per release", "1")

    open_page(page, "Compare")
    compare = check_page(page, "compare-mean")
    assert "A true mean here is 0" in compare  # the band under 18: absolute errors instead
    for fraction in (0.3, 0.6):  # Compare's own ε: the Budget page keeps ε = 1
        click_budget_slider(page, fraction)
        settle(page)
    expect(page.get_by_text("Here only: the Budget page's ε stays 1.")).to_be_visible()
    check_page(page, "compare-mean-moved")

    open_page(page, "Release")
    release = check_page(page, "release-mean")
    assert "Declared public (not protected by differential privacy):" in release
    assert "share of the rows" not in release  # private by default: no exact share
    commit_release(page)
    committed = check_page(page, "release-mean-committed")
    assert "Whole-population estimate" in committed
    files = {name: downloaded_text(page, name) for name in DOWNLOADS}
    files["HTML report"] = downloaded_report(page)
    for name, text in files.items():
        assert not E_PLUS.search(text.split("<script")[0]), name
    html = files["HTML report"]
    assert "<p>Declared public for this release, not protected by" in html
    assert "the range [0, 250,000] of `income`" in html
    assert "# declared_public: Declared public for this release" in files["CSV"]

    choose_analysis(page, "Ratio of sums (calibration ratio)")
    choose(page, "Score s", "income")
    choose(page, "Label y", "hours")
    page.get_by_text("Label is binary (0/1)", exact=True).click()
    settle(page)
    type_number(page, "Upper bound of the score u_s", "250000")
    type_number(page, "Upper bound of the label u_y", "60", "80")
    ratio = check_page(page, "estimator-ratio")
    assert "Exact ratio (confidential)" not in ratio  # hidden until asked for
    for page_title in ("Budget", "Compare", "Release"):
        open_page(page, page_title)
        check_page(page, f"{page_title.lower()}-ratio")

    choose_analysis(page, "General estimator with valid CIs")
    # GVDP treats group sizes as public: with private shares by default it asks first.
    page.get_by_role(
        "button", name=re.compile("Declare the data's own group counts public")
    ).click()
    settle(page)
    # The default k = 1,000 leaves 2 rows a subset here.
    type_number(page, "k: number of subsets", "300", "200")
    # The pooled small groups hold 3 rows, fewer than GVDP's 5 a subset: the page says so; fit
    # the whole population instead.
    expect(page.get_by_text("group 'Other (merged)' has 3 complete rows")).to_be_visible()
    page.get_by_text("Whole population only", exact=True).click()
    settle(page)
    check_page(page, "estimator-gvdp")
    for page_title in ("Plan", "Compare", "Release"):
        open_page(page, page_title)
        check_page(page, f"{page_title.lower()}-gvdp")

    # Synthetic rows keep region and age as columns: small groups are left out, not merged.
    choose_analysis(page, "Synthetic data")
    open_page(page, "Strata")  # back from GVDP's exact counts to the private default
    page.get_by_text("The release's own noisy group counts", exact=False).first.click()
    settle(page)
    page.get_by_text("Release only the groups that reach it", exact=True).click()
    settle(page)
    open_page(page, "Estimator")
    for method in ("MWEM", "Independent marginals"):
        page.get_by_text(method, exact=True).click()
        settle(page)
    type_number(page, "Synthetic rows", "3000", "2000")
    add_to_multiselect(page, "Columns to synthesize", "employed")  # sex, education: too few
    page.get_by_text("Values are categories", exact=True).click()
    settle(page)
    synth = check_page(page, "estimator-synth")
    assert "not supported between instances" not in synth  # blanks are a category now
    open_page(page, "Release")
    before = check_page(page, "release-synth")
    assert "rows per group in proportion to the release's own noisy group counts" in before
    commit_release(page)
    check_page(page, "release-synth-committed")
    synthetic = downloaded_text(page, "CSV")
    assert "# rows_per_group: rows per group in proportion to the release's own noisy" in synthetic
    assert "(missing)" in synthetic  # the blank education cells, synthesised as a category

    choose_analysis(page, "Private sample")
    check_page(page, "estimator-sample")
    open_page(page, "Release")
    check_page(page, "release-sample")

    open_page(page, "Learn")
    check_page(page, "learn")


def first_chart_in_view(page: Page, name: str, viewport: dict) -> None:
    """The page's first chart ends inside the first screen, and the workshop badge shows."""
    settle(page, viewport)
    expect(page.locator("#workshop-badge")).to_have_text(BADGE_TEXT)
    expect(page.locator("#workshop-badge")).to_be_in_viewport()
    chart = page.get_by_test_id("stMain").get_by_test_id("stPlotlyChart").first
    expect(chart).to_be_visible()
    charts_drawn(page)
    box = chart.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"], (name, box)
    no_exception(page)


@pytest.mark.e2e
def test_workshop_mode_shows_its_badge_and_each_first_chart_in_a_projector_s_first_screen(
    page: Page, app_url: str
):
    for viewport in PROJECTORS:
        size = f"{viewport['width']}x{viewport['height']}"
        page.set_viewport_size(viewport)
        page.goto(f"{app_url}/compare?workshop=true")  # the sidebar folds on a projector link
        expect_title(page, "Compare")
        expect(page.get_by_test_id("stSidebarContent")).not_to_be_in_viewport()
        first_chart_in_view(page, f"compare-{size}", viewport)
        page.screenshot(path=Path("tests/artifacts/screenshots") / f"honest-workshop-{size}.png")
        page.goto(f"{app_url}/learn?workshop=true")
        expect_title(page, "Learn")
        for item in learn.all_explainers():
            chooser = page.get_by_test_id("stMain").get_by_test_id("stSelectbox").first
            chooser.click()
            page.get_by_role("option", name=item.title, exact=True).click()
            rerun_started(page)
            first_chart_in_view(page, f"learn-{item.key}-{size}", viewport)
