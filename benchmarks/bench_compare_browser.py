"""How long people wait on the Compare page, measured in a real browser (issue 14 item 8).

Serves the app on the demo data, opens it in Debian's chromium (Playwright) and prints:

- **first chart**: from the click on "Compare" in the sidebar (the Data page already open, as a
  new user arrives) to the first Plotly chart drawn (floor: ≤ 2 s);
- **ε slider**: from a click on the ε slider's track at a new value to the end of the run and
  the next painted frame; the slider's fragment (sections 1–2, the charts at that budget) reruns,
  the privacy–utility curve (every budget) does not (floor: ≤ 0.3 s);
- **log-scale toggle** and **error to plot** radio: each redraws only its own section (a
  ``st.fragment``), timed the same way (floor: ≤ 0.3 s).

Each interaction is repeated and the median and maximum are printed. AppTest times the script
alone (``bench_compare_rerun.py``); this adds the websocket, the browser's layout and Plotly.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from playwright.sync_api import Locator, Page, sync_playwright

from tests.e2e.conftest import running_app
from tests.e2e.helpers import budget_slider_point, open_app, settle

FIRST_CHART_FLOOR_S, INTERACTION_FLOOR_S = 2.0, 0.3
REPEATS = 6
VIEWPORT = {"width": 1280, "height": 900}

# Records in the window when the next script run (or fragment run) ends, and when the browser
# has painted after it: two animation frames after the app reports it is no longer running.
WATCH_RUN = """() => {
    window.__runEnded = null;
    window.__runStarted = null;
    const app = document.querySelector('[data-testid="stApp"]');
    const observer = new MutationObserver(() => {
        const running = app.getAttribute('data-test-script-state') === 'running';
        if (running && window.__runStarted === null) window.__runStarted = performance.now();
        if (window.__runStarted !== null && !running) {
            observer.disconnect();
            requestAnimationFrame(() => requestAnimationFrame(() => {
                window.__runEnded = performance.now();
            }));
        }
    });
    observer.observe(app, {attributes: true});
    window.__actionAt = performance.now();
}"""
RUN_SECONDS = """() => window.__runEnded && [
    (window.__runEnded - window.__actionAt) / 1000, (window.__runStarted - window.__actionAt) / 1000
]"""
FIRST_CHART_SECONDS = """() => {
    const drawn = document.querySelector('[data-testid="stPlotlyChart"] .main-svg');
    return drawn && (performance.now() - window.__actionAt) / 1000;
}"""


def timed_click(page: Page, x: float, y: float) -> tuple[float, float]:
    """Seconds from a click at (``x``, ``y``) to the end of the run it starts, painted; and of
    those, the seconds before the run started (the browser handling the input and sending it).
    The caller finds the point before the clock starts: the user's wait begins at the click, not
    at the benchmark's own questions to the browser about where things are."""
    page.evaluate(WATCH_RUN)
    page.mouse.click(x, y)
    total, before_run = page.wait_for_function(RUN_SECONDS, timeout=60_000).json_value()
    settle(page)
    return total, before_run


def first_chart(page: Page) -> float:
    """Seconds from the click on the sidebar's Compare link to the first chart drawn."""
    page.evaluate(WATCH_RUN)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Compare").click()
    seconds = page.wait_for_function(FIRST_CHART_SECONDS, timeout=60_000).json_value()
    settle(page)
    return seconds


def centre_of(locator: Locator) -> tuple[float, float]:
    """The middle of ``locator`` on the page, scrolled into view, to click with the mouse once
    the clock runs (a locator's own click first waits for the element to hold still over two
    animation frames)."""
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def report(what: str, timings: list, floor: float) -> None:
    """Median and maximum of ``timings`` (seconds, or pairs of total and time before the run
    started) against ``floor``."""
    totals = [t[0] if isinstance(t, tuple) else t for t in timings]
    worst = max(totals)
    line = (
        f"{what}: median {statistics.median(totals) * 1000:.0f} ms, max {worst * 1000:.0f} ms "
        f"over {len(totals)} (floor {floor:g} s) — {'OK' if worst <= floor else 'TOO SLOW'}"
    )
    if isinstance(timings[0], tuple):
        before = statistics.median(t[1] for t in timings)
        line += f"; median {before * 1000:.0f} ms of it before the app's run started"
    print(line)


def main() -> None:
    with (
        running_app(Path(tempfile.mkdtemp())) as url,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
        )
        firsts = []
        for _ in range(REPEATS):  # each a new browser session: nothing cached in the page
            page = browser.new_page()
            open_app(page, url, VIEWPORT)
            settle(page)
            firsts.append(first_chart(page))
            page.close()
        report("First Compare chart after the click", firsts, FIRST_CHART_FLOOR_S)

        page = browser.new_page()
        open_app(page, url, VIEWPORT)
        first_chart(page)
        moves = [
            timed_click(page, *budget_slider_point(page, fraction))
            for fraction in (0.3, 0.7, 0.45, 0.9, 0.15, 0.6)  # a new ε each time: fresh runs
        ]
        report("ε slider moved", moves, INTERACTION_FLOOR_S)
        toggle = page.get_by_text("Log scale for the error axis")
        report(
            "Log-scale toggle",
            [timed_click(page, *centre_of(toggle)) for _ in range(REPEATS)],
            INTERACTION_FLOOR_S,
        )
        radio = page.get_by_test_id("stRadio").filter(has_text="Error to plot")
        choices = [
            radio.get_by_text(label, exact=True) for label in ("Population error", "Parity error")
        ]
        report(
            "Error-to-plot radio",
            [timed_click(page, *centre_of(choices[i % 2])) for i in range(REPEATS)],
            INTERACTION_FLOOR_S,
        )
        browser.close()


if __name__ == "__main__":
    main()
