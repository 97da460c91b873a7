"""What every browser test does: open the app, follow sidebar links, wait for a script run to
end, save full-page screenshots and read a downloaded file."""

from pathlib import Path

import pandas as pd
from playwright.sync_api import Locator, Page, expect

SCREENSHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"
LOAD_TIMEOUT_MS = 30_000  # how long any expectation waits (conftest makes it the default)
# A frame or two for the browser to paint what has just been drawn.
PAINT_MS = 100
# True once every Plotly chart in the window has drawn its SVG (charts below the fold draw
# only when scrolled or grown into view, so only those in the window are waited for).
CHARTS_IN_VIEW_DRAWN = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
    .filter(chart => {
        const box = chart.getBoundingClientRect();
        return box.height > 0 && box.bottom > 0 && box.top < window.innerHeight;
    })
    .every(chart => chart.querySelector('.main-svg') !== null)"""


def expect_title(page: Page, title: str) -> None:
    """Wait until the page's own heading (level 1) shows."""
    expect(page.get_by_role("heading", name=title, exact=True, level=1)).to_be_visible()


def settle(page: Page, viewport: dict | None = None) -> None:
    """Wait for the script run to end and the charts to paint; with ``viewport``, at that size
    first (a full-page screenshot grows the viewport, which would pad the next, shorter page)."""
    if viewport is not None:
        page.set_viewport_size(viewport)
    # The app's own record of its script run: the status widget shows a run only after a
    # moment, and a Compare screenshot caught the privacy-utility sweep still at 2 of 16.
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning")
    # Widgets whose code is still loading show grey placeholders (a Strata screenshot had them).
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0)
    charts_drawn(page)


def rerun_started(page: Page) -> None:
    """Wait (briefly) for the rerun an input starts: read at once, the script state may still be
    the previous run's "notRunning", and on a loaded machine a test then measured the previous
    explainer's chart, or found a box twice (the stale one and its replacement). A run too quick
    to be seen has ended by the timeout."""
    try:
        expect(page.get_by_test_id("stApp")).to_have_attribute(
            "data-test-script-state", "running", timeout=RERUN_START_MS
        )
    except AssertionError:
        pass


RERUN_START_MS = 2000


def charts_drawn(page: Page) -> None:
    """Wait until the charts in the window have drawn, then for the browser to paint them."""
    page.wait_for_function(CHARTS_IN_VIEW_DRAWN, timeout=LOAD_TIMEOUT_MS)
    page.wait_for_timeout(PAINT_MS)


def open_app(page: Page, url: str, viewport: dict) -> None:
    """Open the app at its root, the Data page, in a window of ``viewport``."""
    page.set_viewport_size(viewport)
    page.goto(url)
    expect_title(page, "Data")


def open_page(page: Page, title: str) -> None:
    """Follow the sidebar link (a full reload would start a new session) and wait for the run."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=title).click()
    expect_title(page, title)
    settle(page)


def enter_and_press(page: Page, box: str, value: str, button: str) -> None:
    """Type ``value`` in the text box named ``box``, send it, and press the button ``button``."""
    text_box = page.get_by_role("textbox", name=box)
    text_box.fill(value)
    text_box.press("Enter")  # a text box sends its value on Enter (or when it loses focus)
    settle(page)
    page.get_by_test_id("stButton").get_by_role("button", name=button, exact=True).click()


def type_into(page: Page, box: Locator, *values: str) -> None:
    """Type each of ``values`` into ``box`` in turn, each sent with Enter and its run waited for
    (a user changes a widget more than once in a row)."""
    box.scroll_into_view_if_needed()
    for value in values:
        box.fill(value)
        box.press("Enter")
        settle(page)


def type_number(page: Page, label: str, *values: str) -> None:
    """:func:`type_into` the number box labelled ``label``."""
    type_into(page, page.get_by_role("spinbutton", name=label), *values)


def open_select(page: Page, label: str) -> None:
    """Open the list of the select box labelled ``label``."""
    box = page.get_by_test_id("stSelectbox").filter(has=page.get_by_text(label, exact=True))
    # Scrolled first: on a long page, a list opened while the click scrolls it closed at once.
    box.scroll_into_view_if_needed()
    settle(page)
    box.click()


def choose(page: Page, label: str, option: str) -> None:
    """Pick ``option`` in the select box labelled ``label``."""
    open_select(page, label)
    page.get_by_role("option", name=option, exact=True).click()
    settle(page)


def add_to_multiselect(page: Page, label: str, option: str) -> None:
    """Type ``option`` into the multiselect labelled ``label``, pick it, and check it was
    picked (its tag shows in the box)."""
    box = page.get_by_test_id("stMultiSelect").filter(has=page.get_by_text(label, exact=True))
    picked = box.locator("[data-tag]").filter(has_text=option)
    # On a loaded machine a pick typed while the box was being redrawn was lost (a clean-clone
    # run went on to Compare with no grouping): the user would see no tag and type it again.
    for _ in range(2):
        box.scroll_into_view_if_needed()
        box.locator("input").fill(option)
        page.keyboard.press("Enter")
        page.keyboard.press("Escape")  # close the list, as a user clicking elsewhere would
        settle(page)
        if picked.count():
            break
    expect(picked).to_have_count(1)


def written_csv(frame: pd.DataFrame, folder: Path, name: str = "survey.csv") -> Path:
    """``frame`` saved as the CSV file ``folder/name``, for a test to upload."""
    path = folder / name
    frame.to_csv(path, index=False)
    return path


def no_exception(page: Page) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)


def grow_to_content(page: Page) -> None:
    """Grow the viewport to the page's content, so that charts below the fold draw.

    Streamlit scrolls inside its main and sidebar containers, so `full_page=True` alone captures
    one screen. Charts below the fold draw only once visible and then lengthen the page: grow
    until the content height stops changing (a few rounds at most).
    """
    width = page.viewport_size["width"]
    for _ in range(4):
        content_height = page.evaluate(
            """() => Math.max(...['stMain', 'stSidebarContent'].map(
                id => document.querySelector(`[data-testid="${id}"]`)?.scrollHeight ?? 0))"""
        )
        if content_height <= page.viewport_size["height"]:
            break
        page.set_viewport_size({"width": width, "height": content_height})
        charts_drawn(page)


def screenshot(page: Page, name: str) -> None:
    """Save the whole app, not just the viewport, as ``SCREENSHOTS/<name>.png``, then give the
    window back its size and wait for the charts to redraw.

    Clicking soon after the window had grown to a long page's height missed its target on a
    busy machine (the page was still laying out after the resize): a download never started.
    """
    size = page.viewport_size
    grow_to_content(page)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{name}.png", full_page=True)
    page.set_viewport_size(size)
    charts_drawn(page)


def save_screen(page: Page, name: str, viewport: dict) -> None:
    """Once the run ends at ``viewport`` size (so short pages stay short), check the page shows
    no exception and save it as ``SCREENSHOTS/<name>.png``."""
    settle(page, viewport)
    no_exception(page)
    screenshot(page, name)


def charts_then_save(page: Page, charts: int, name: str, viewport: dict) -> None:
    """Once the run ends, the page shows ``charts`` charts and no exception; save it as
    ``SCREENSHOTS/<name>.png``."""
    settle(page, viewport)
    expect(page.locator(".js-plotly-plot")).to_have_count(charts)
    save_screen(page, name, viewport)


def downloaded_text(page: Page, button_text: str) -> str:
    """Click the first download button showing ``button_text``; return the file's text."""
    button = page.get_by_test_id("stDownloadButton").filter(has_text=button_text).first
    with page.expect_download() as download:
        button.click()
    return Path(download.value.path()).read_text()


def downloaded_report(page: Page) -> str:
    """Prepare the HTML report (a button: it draws its chart first), download it, and return
    its text."""
    page.get_by_role("button", name="HTML report", exact=True).first.click()
    download = (
        page.get_by_test_id("stDownloadButton").filter(has_text="Download the HTML report").first
    )
    expect(download).to_be_visible(timeout=90_000)
    with page.expect_download() as report:
        download.click()
    return Path(report.value.path()).read_text()


def commit_release(page: Page) -> None:
    """Tick the acknowledgement, press Commit, and wait for the recorded release."""
    commit = page.get_by_role("button", name="Commit release")
    expect(commit).to_be_disabled()
    page.get_by_text("I understand that committing spends this budget for good.").click()
    expect(commit).to_be_enabled()
    commit.click()
    expect(page.get_by_text("Released and recorded")).to_be_visible()
    settle(page)


def metric_value(page: Page, label: str):
    """The value of the main area's metric labelled exactly ``label``, as a locator to assert on.
    (A substring filter also caught a stale copy left mid-rerun, and labels such as "Groups" are
    substrings of others.)"""
    label_element = page.get_by_test_id("stMetricLabel").get_by_text(label, exact=True)
    metric = page.get_by_test_id("stMain").get_by_test_id("stMetric").filter(has=label_element)
    return metric.get_by_test_id("stMetricValue")


def commit_and_download_csv(page: Page, review: str, left: str, name: str) -> str:
    """Commit the release the Release page reviews (waiting for ``review`` on it), check the
    sidebar then shows ``left`` of the budget, save ``SCREENSHOTS/<name>.png``, and return the
    released CSV's text as its download button gives it."""
    open_page(page, "Release")
    expect(page.get_by_text(review)).to_be_visible()
    commit_release(page)
    expect(sidebar_remaining(page)).to_have_text(left)
    screenshot(page, name)
    no_exception(page)
    return downloaded_text(page, "CSV")


def sidebar_remaining(page: Page):
    """The sidebar's remaining-budget figure, as a locator to assert on."""
    return page.get_by_test_id("stSidebar").get_by_test_id("stMetricValue")


def choose_analysis(page: Page, url: str, name: str, preview: str, viewport: dict) -> None:
    """Open the app, choose the analysis ``name`` on the Estimator page and wait for the
    ``preview`` caption its first run draws."""
    open_app(page, url, viewport)
    open_page(page, "Estimator")
    page.get_by_text(name, exact=True).click()
    expect(page.get_by_text(preview)).to_be_visible()
    settle(page, viewport)


def preview_offers_no_download(page: Page, shows: str, name: str) -> None:
    """The Estimator page's preview shows ``shows`` and offers nothing to download (a preview
    is no release); save ``SCREENSHOTS/<name>.png``."""
    expect(page.get_by_text(shows)).to_be_visible()
    expect(page.get_by_test_id("stDownloadButton")).to_have_count(0)
    screenshot(page, name)
    no_exception(page)


def budget_slider_point(page: Page, fraction: float) -> tuple[float, float]:
    """Where on the page a click sets a Compare page's ε (or ρ) slider at ``fraction`` of its
    track: one new value, one run (arrow keys would commit every stop they pass and queue a run
    for each)."""
    slider = page.get_by_test_id("stSlider").filter(has_text="per release (log scale)")
    track, handle = slider.bounding_box(), slider.get_by_role("slider").bounding_box()
    return track["x"] + fraction * track["width"], handle["y"] + handle["height"] / 2


def click_budget_slider(page: Page, fraction: float) -> None:
    """Click a Compare page's ε (or ρ) slider at ``fraction`` of its track."""
    page.mouse.click(*budget_slider_point(page, fraction))


def choose_hours_by_race(page: Page, screen_name: str, viewport: dict) -> None:
    """On data just opened, which starts without a value column or bounds, choose them as a
    user would: the value hours_per_week on the Data page (screenshot ``screen_name``), the
    bounds 0 and 100 on the Estimator page, and race on the Strata page."""
    choose(page, "Value column", "hours_per_week")
    save_screen(page, screen_name, viewport)
    open_page(page, "Estimator")
    for label, bound in (("Lower bound L", "0"), ("Upper bound U", "100")):
        type_number(page, label, bound)
        expect(page.get_by_role("spinbutton", name=label)).to_have_value(f"{bound}.00")
    open_page(page, "Strata")
    add_to_multiselect(page, "Grouping columns", "race")
