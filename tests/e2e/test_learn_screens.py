"""Browser tests of the Learn page: open every explainer and preset, screenshot each, and check
workshop mode hides the Release page (screenshots: tests/artifacts/screenshots/learn-*.png)."""

import pytest
from playwright.sync_api import Locator, Page, expect

from strata_ui import constants, learn
from strata_ui.analyses import every
from tests.e2e.helpers import (
    SCREENSHOTS,
    charts_drawn,
    expect_title,
    grow_to_content,
    no_exception,
    settle,
)

# The Learn items in groups of one page visit each: the shared ones, then each analysis' own.
ITEM_GROUPS = {"shared": learn.EXPLAINERS} | {
    ui.name: ui.explainers + ui.presets for ui in every() if ui.explainers + ui.presets
}
# The explainers and presets that rebuild the ratio and GVDP papers are opened on a projector
# (test_paper_items_fit_a_projector_in_workshop_mode) rather than at laptop size: each item is
# drawn once, and the projector is where their wide tables and charts could fail to fit.
PAPER_KEYS = {"ratio_ci", "gvdp_bounds", "ratio_table1", "gvdp_ols"}
PRESETS_WITH_TABLES = {"ratio_table1", "gvdp_ols"}
# Presets that fit for minutes (MST) draw their charts only after their Run button.
ON_A_BUTTON = {"figure9"}
PAPER_ITEMS = {
    name: [item for item in ITEM_GROUPS[name] if item.key in PAPER_KEYS]
    for name in ("ratio", "gvdp")
}
LAPTOP_ITEMS = {
    name: [item for item in items if item.key not in PAPER_KEYS]
    for name, items in ITEM_GROUPS.items()
}

# A laptop-sized window; the workshop screenshot uses a projector's 1024 × 768.
VIEWPORT = {"width": 1366, "height": 900}
PROJECTOR = {"width": 1024, "height": 768}


def open_learn(page: Page, url: str, query: str = "") -> None:
    page.goto(f"{url}/learn{query}")
    expect_title(page, "Learn")
    settle(page)


def open_expander(page: Page, title: str, *, charts: bool = True) -> Locator:
    """Click an expander's header, wait for its charts (if it draws them on opening), and
    return the expander."""
    expander = page.get_by_test_id("stExpander").filter(has_text=title)
    summary = expander.locator("summary")
    summary.click()
    # Under load a click on the header was once lost while the charts above it were still
    # laying out (the clean-clone run: the expander stayed closed): click again if so.
    if expander.locator("details[open]").count() == 0:
        summary.click()
    expect(expander.locator("details[open]")).to_have_count(1)
    settle(page)
    if charts:
        expect(expander.get_by_test_id("stPlotlyChart").first).to_be_visible()
        charts_drawn(page)
    else:
        expect(expander.get_by_test_id("stButton").first).to_be_visible()
    return expander


def show_in_workshop(page: Page, title: str) -> Locator:
    """Choose a Learn item at the top of the page in workshop mode (one at a time, drawn right
    under the choice); wait for its charts; return the page's main area."""
    page.get_by_test_id("stMain").get_by_test_id("stSelectbox").first.click()
    page.get_by_role("option", name=title, exact=True).click()
    settle(page)
    main = page.get_by_test_id("stMain")
    expect(main.get_by_test_id("stPlotlyChart").first).to_be_visible()
    charts_drawn(page)
    return main


def close_expander(page: Page, expander: Locator) -> None:
    """Click an open expander's header: its content goes (Learn items draw only while open)."""
    expander.locator("summary").click()
    settle(page)


def check_text(expander: Locator) -> None:
    """The item has text, and every formula is typeset and cites its source (its first shown
    text: in workshop mode the page's first markdown is the badge, fixed over the header)."""
    expect(expander.get_by_test_id("stMarkdown").filter(visible=True).first).to_be_visible()
    expect(expander.locator(".katex").first).to_be_visible()
    expect(expander.get_by_text("Source:").first).to_be_visible()


def check_tables_fit(expander: Locator, key: str) -> None:
    """The setting and claim tables are static tables whose every column shows: nothing is
    cut or scrolled off to the right at this width (a data grid cut its last column at 1024 px)."""
    tables = expander.get_by_test_id("stTable")
    if key in PRESETS_WITH_TABLES:
        expect(tables).to_have_count(2)  # what we set beside the paper, and its claims
    for table in tables.all():
        assert table.evaluate("table => table.scrollWidth <= table.clientWidth + 1")


def screenshot_expander(page: Page, expander: Locator, name: str) -> None:
    """Grow the viewport to the whole page (charts draw lazily), then capture the expander."""
    grow_to_content(page)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    expander.screenshot(path=SCREENSHOTS / f"{name}.png")
    page.set_viewport_size(VIEWPORT)


@pytest.mark.e2e
@pytest.mark.parametrize("group", LAPTOP_ITEMS)
def test_each_explainer_and_preset_opens_and_draws(page: Page, app_url: str, group):
    """Every item of the group, one after the other on one visit to the Learn page."""
    page.set_viewport_size(VIEWPORT)
    open_learn(page, app_url)
    for item in LAPTOP_ITEMS[group]:
        expander = open_expander(page, item.title, charts=item.key not in ON_A_BUTTON)
        check_text(expander)
        screenshot_expander(page, expander, f"learn-{item.key}")
        no_exception(page)
        close_expander(page, expander)


@pytest.mark.e2e
def test_workshop_mode_hides_release_and_sizes_charts_for_a_projector(page: Page, app_url: str):
    page.set_viewport_size(PROJECTOR)
    open_learn(page, app_url)
    nav = page.get_by_test_id("stSidebarNav")
    expect(nav.get_by_role("link", name="Release")).to_be_visible()
    page.get_by_test_id("stSidebar").get_by_text("Workshop mode").click()
    settle(page)
    expect(nav.get_by_role("link", name="Release")).to_have_count(0)
    main = show_in_workshop(page, learn.EXPLAINERS[0].title)
    page.screenshot(path=SCREENSHOTS / "learn-workshop.png")
    # Each chart fits on the projector's screen.
    for chart in main.get_by_test_id("stPlotlyChart").all():
        assert chart.bounding_box()["height"] <= constants.WORKSHOP_CHART_HEIGHT + 1
    # The URL carries workshop mode: a deep link to the Release page shows a notice, no commit.
    assert "workshop=true" in page.url
    page.goto(f"{app_url}/release?workshop=true")
    expect(page.get_by_text("Release is hidden in workshop mode")).to_be_visible()
    expect(page.get_by_role("button", name="Commit release")).to_have_count(0)
    settle(page)
    no_exception(page)


@pytest.mark.e2e
@pytest.mark.parametrize("group", PAPER_ITEMS)
def test_paper_items_fit_a_projector_in_workshop_mode(page: Page, app_url: str, group):
    page.set_viewport_size(PROJECTOR)
    open_learn(page, app_url, f"?{constants.WORKSHOP_QUERY_KEY}=true")
    for item in PAPER_ITEMS[group]:
        main = show_in_workshop(page, item.title)
        check_text(main)
        charts = main.get_by_test_id("stPlotlyChart")
        for chart in charts.all():
            chart.scroll_into_view_if_needed()
            assert chart.bounding_box()["height"] <= constants.WORKSHOP_CHART_HEIGHT + 1
        check_tables_fit(main, item.key)
        screenshot_expander(page, main, f"learn-workshop-{item.key}")
        page.set_viewport_size(PROJECTOR)
        no_exception(page)
