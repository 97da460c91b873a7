"""Browser tests of what a new user met (issue 41): every page with a keyboard only and with an
accessibility-tree reader, the layout of the pages that cut or overlapped things, the waits that
said nothing, and a link clicked while a box held typed text (screenshots:
tests/artifacts/screenshots/a11y-*.png and new-user-*.png)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from strata_ui.release_ui import REPORT_WAIT
from strata_ui.starting import STARTING_MESSAGE
from tests.e2e.helpers import (
    commit_release,
    expect_title,
    metric_value,
    open_app,
    open_page,
    open_select,
    save_screen,
    settle,
    type_number,
    written_csv,
)
from tests.frames import survey_frame

VIEWPORT = {"width": 1280, "height": 900}
PAGES = ("Data", "Strata", "Estimator", "Budget", "Plan", "Compare", "Release", "Learn")
ANALYSES = {  # what the Estimator page calls each analysis, and its name (address, screenshots)
    "Ratio of sums (calibration ratio)": "ratio",
    "General estimator with valid CIs": "gvdp",
    "Synthetic data": "synth",
    "Private sample": "sample",
}
INTERACTIVE = {
    "button", "link", "textbox", "spinbutton", "combobox", "checkbox", "radio", "slider",
    "switch", "tab", "searchbox", "listbox",
}  # fmt: skip
# Markup a label's author meant for the eye, which a screen reader reads out.
MARKUP = re.compile(r"`|\*\*|\\[_*$`]|:material/")

# Every control the keyboard can reach: visible, enabled, in the tab order. Streamlit's own
# helpers outside it (a number box's ± buttons, a select box's chevron, a tag's remove cross)
# have keyboard equivalents on the control itself (arrows, Backspace).
FOCUSABLE = """() => {
  const selector = 'a[href], button, input, select, textarea, summary, [tabindex]';
  const visible = e => { const r = e.getBoundingClientRect(), s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.opacity !== '0'; };
  const found = [...document.querySelectorAll(selector)].filter(e =>
    e.tabIndex >= 0 && !e.disabled && visible(e) && !e.closest('details:not([open]) > :not(summary)')
    && !e.closest('[data-testid="stSidebarCollapseButton"], [data-testid="stToolbar"], header'));
  found.forEach((e, i) => e.setAttribute('data-a11y-id', String(i)));
  return found.length;
}"""
FOCUSED = "() => document.activeElement?.getAttribute('data-a11y-id')"
DESCRIBED = """index => { const e = document.querySelector(`[data-a11y-id="${index}"]`);
  return `${e.tagName} ${e.getAttribute('aria-label') ?? e.innerText.slice(0, 40)} in `
    + e.closest('[data-testid]')?.getAttribute('data-testid'); }"""
# Each chart's title and the text that follows it in the page: its summary in words. A chart
# folded in a closed expander keeps its size, but Chromium lays out none of the text beside it
# (innerText is empty): its summary is read from the text the expander holds.
CHART_SUMMARIES = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
  .filter(chart => chart.getBoundingClientRect().height > 0)
  .map(chart => {
    const folded = chart.closest('details:not([open])') !== null;
    const said = element => (folded ? element.textContent : element.innerText).trim();
    let next = chart.closest('[data-testid="stElementContainer"]')?.nextElementSibling;
    let text = '';
    while (next && !text) { text = said(next); next = next.nextElementSibling; }
    return {title: chart.querySelector('.gtitle')?.textContent ?? '(no title)', text};
  })"""
# The boxes of a chart's point labels, to find two that overlap.
LABEL_BOXES = """chart => [...chart.querySelectorAll('.textpoint text')]
  .filter(t => t.textContent.trim())
  .map(t => { const r = t.getBoundingClientRect();
              return {text: t.textContent, x0: r.left, x1: r.right, y0: r.top, y1: r.bottom}; })"""
PLOT_AREA = """chart => { const r = chart.querySelector('.nsewdrag').getBoundingClientRect();
  return {x0: r.left, x1: r.right, y0: r.top, y1: r.bottom}; }"""
# A table (Glide data grid) larger than its place scrolls and hides columns or rows.
TABLE_OVERFLOW = """grid => { const s = grid.querySelector('.dvn-scroller');
  return s ? Math.max(s.scrollWidth - s.clientWidth, s.scrollHeight - s.clientHeight) : 0; }"""


def accessibility_problems(page: Page) -> list[str]:
    """Controls without a name, or whose name carries markup, in Chromium's accessibility tree
    (what a screen reader reads)."""
    session = page.context.new_cdp_session(page)
    try:
        nodes = session.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        session.detach()
    problems = []
    for node in nodes:
        role = node.get("role", {}).get("value")
        name = (node.get("name") or {}).get("value", "")
        if node.get("ignored") or role not in INTERACTIVE:
            continue
        if not name.strip():
            problems.append(f"a {role} without a name")
        elif MARKUP.search(name):
            problems.append(f"a {role} named with markup: {name!r}")
    return problems


def keyboard_misses(page: Page) -> list[str]:
    """Press Tab through the page; return the focusable controls it never reached."""
    count = page.evaluate(FOCUSABLE)
    page.evaluate("() => document.activeElement?.blur()")
    wanted, reached = set(map(str, range(count))), set()
    # Tab starts from wherever the focus was and passes the browser's own controls when it
    # wraps: twice round the page is enough to reach everything once.
    for _ in range(2 * count + 20):
        page.keyboard.press("Tab")
        reached.add(page.evaluate(FOCUSED))
        if wanted <= reached:
            break
    return [page.evaluate(DESCRIBED, index) for index in sorted(wanted - reached, key=int)]


def group_by(page: Page, *columns: str) -> None:
    """Type each grouping column on the Strata page, then close the list as a keyboard user
    would (Escape), once the page has drawn the groups."""
    grouping = page.get_by_test_id("stMultiSelect").first
    for column in columns:
        grouping.locator("input").fill(column)
        page.keyboard.press("Enter")
        settle(page)
    for _ in range(3):  # a list opened again by a rerun's redraw needs another Escape
        page.keyboard.press("Escape")
        settle(page)
        if page.get_by_role("listbox").count() == 0:
            break
    expect(page.get_by_role("listbox")).to_have_count(0)


def check_page(page: Page, name: str) -> None:
    """Names, keyboard reach and chart summaries of the page on screen; a full screenshot."""
    settle(page, VIEWPORT)
    assert not accessibility_problems(page), (name, accessibility_problems(page))
    missed = keyboard_misses(page)
    assert not missed, (name, missed)
    for chart in page.evaluate(CHART_SUMMARIES):
        assert len(chart["text"]) > 30, (name, chart)  # a sentence, not a stray word
    save_screen(page, f"a11y-{name}", VIEWPORT)


@pytest.mark.e2e
def test_every_page_is_named_reached_by_keyboard_and_its_charts_said_in_words(
    page: Page, app_url: str
):
    open_app(page, app_url, VIEWPORT)
    open_page(page, "Strata")  # the demo grouped by race × sex: every page has something to show
    group_by(page, "race", "sex")
    for title in PAGES:
        open_page(page, title)
        check_page(page, title.lower())
    for label, name in ANALYSES.items():
        open_page(page, "Estimator")
        page.get_by_text(label, exact=True).click()
        # The address names the analysis once the run the click starts has ended: waiting for
        # it, not for the run state, which still read "not running" just after the click.
        page.wait_for_url(re.compile(rf"[?&]analysis={name}\b"))
        check_page(page, f"estimator-{name}")
        open_page(page, "Compare")
        check_page(page, f"compare-{name}")


@pytest.mark.e2e
def test_a_link_clicked_while_a_box_holds_typed_text_is_followed_and_the_text_kept(
    page: Page, app_url: str
):
    open_app(page, app_url, VIEWPORT)
    for typed, link in (("120", "Budget"), ("140", "Compare")):
        open_page(page, "Estimator")
        box = page.get_by_role("spinbutton", name="Upper bound U")
        box.fill(typed)  # no Enter, no Tab: the box still holds the text
        page.get_by_test_id("stSidebarNav").get_by_role("link", name=link).click()
        expect_title(page, link)
        settle(page)
        assert f"mean.clip_high={typed}" in page.url
        open_page(page, "Estimator")
        expect(page.get_by_role("spinbutton", name="Upper bound U")).to_have_value(f"{typed}.00")


@pytest.mark.e2e
def test_a_new_users_survey_counts_the_rows_it_uses_and_lays_out_its_charts(
    page: Page, app_url: str, tmp_path
):
    open_app(page, app_url, VIEWPORT)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        written_csv(survey_frame(), tmp_path)
    )
    expect(page.get_by_text("Using “survey.csv”.")).to_be_visible()
    settle(page)
    open_select(page, "Value column")
    expect(page.get_by_role("option")).to_have_count(2)  # age and income: not rownames
    page.get_by_role("option", name="income", exact=True).click()
    settle(page)
    open_page(page, "Estimator")
    type_number(page, "Lower bound L", "0")
    type_number(page, "Upper bound U", "200000")
    open_page(page, "Strata")
    group_by(page, "region", "sex", "education")
    answered = survey_frame().dropna(subset=["income"])
    expect(metric_value(page, "Rows used")).to_have_text(f"{len(answered):,}")
    save_screen(page, "new-user-strata", VIEWPORT)

    # Why small groups pay more: 24 groups of close sizes, and no two labels overlap.
    open_page(page, "Learn")
    expander = page.get_by_test_id("stExpander").filter(has_text="Why small groups pay more")
    expander.locator("summary").click()
    settle(page)
    chart = expander.get_by_test_id("stPlotlyChart").first
    chart.scroll_into_view_if_needed()
    settle(page)
    boxes = chart.evaluate(LABEL_BOXES)
    area = chart.evaluate(PLOT_AREA)
    assert len(boxes) >= 2
    for box in boxes:  # inside the plot: not over the axis' ticks, not cut at an edge
        assert area["x0"] <= box["x0"] and box["x1"] <= area["x1"], (box, area)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            apart = (
                a["x1"] <= b["x0"] or b["x1"] <= a["x0"] or a["y1"] <= b["y0"] or b["y1"] <= a["y0"]
            )
            assert apart, (a, b)
    save_screen(page, "new-user-learn", VIEWPORT)

    open_page(page, "Release")
    preview = page.get_by_test_id("stDataFrame").first
    assert preview.evaluate(TABLE_OVERFLOW) <= 1  # every column and row in view
    save_screen(page, "new-user-release", VIEWPORT)


@pytest.mark.e2e
def test_gvdps_page_is_shorter_and_its_withheld_groups_are_said_in_full(page: Page, app_url: str):
    open_app(page, app_url, VIEWPORT)
    open_page(page, "Estimator")
    page.get_by_text("General estimator with valid CIs", exact=True).click()
    # GVDP treats group sizes as public: with sizes private by default (issue 37) the user
    # declares the data's own counts public before the page previews anything.
    page.get_by_role(
        "button", name=re.compile("Declare the data's own group counts public")
    ).click()
    settle(page)
    save_screen(page, "new-user-gvdp", VIEWPORT)
    height = page.evaluate("() => document.querySelector('[data-testid=stMain]').scrollHeight")
    assert height < 4_600, height  # 5,480 px before its tabs and the folded diagnostic
    open_page(page, "Release")  # ε = 1: the smallest groups' intervals pass their public range
    expect(page.get_by_text("Why withheld")).to_be_visible()
    assert page.get_by_test_id("stDataFrame").first.evaluate(TABLE_OVERFLOW) <= 1
    save_screen(page, "new-user-gvdp-release", VIEWPORT)


@pytest.mark.e2e
def test_a_cold_start_and_the_html_report_say_what_they_wait_for(page: Page, fresh_app_url: str):
    # Remember whether the starting message was ever on the page: it may come and go fast.
    page.add_init_script(
        f"""window.startingSeen = false;
        new MutationObserver(() => {{
          if (document.body?.innerText.includes({STARTING_MESSAGE[:40]!r})) window.startingSeen = true;
        }}).observe(document, {{subtree: true, childList: true, characterData: true}});"""
    )
    open_app(page, fresh_app_url, VIEWPORT)
    assert page.evaluate("window.startingSeen")
    expect(page.get_by_text(STARTING_MESSAGE[:40])).to_have_count(0)  # gone once the page is up

    open_page(page, "Release")
    commit_release(page)
    prepare = page.get_by_role("button", name="HTML report", exact=True).first
    prepare.click()
    expect(page.get_by_text(REPORT_WAIT[:40])).to_be_visible()  # said at once, while it draws
    started = time.monotonic()
    download = (
        page.get_by_test_id("stDownloadButton").filter(has_text="Download the HTML report").first
    )
    expect(download).to_be_visible(timeout=90_000)
    prepared_s = time.monotonic() - started
    with page.expect_download() as report:
        download.click()
    html = Path(report.value.path()).read_text()
    assert "<h1>" in html and "<th>Method</th>" in html, prepared_s
    save_screen(page, "new-user-report", VIEWPORT)
