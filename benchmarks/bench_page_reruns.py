"""Rerun times of the pages whose reruns should be served from caches (AppTest, demo data).

- Learn page with every explainer and preset open: the first run fills the caches, the timed
  reruns change nothing (floor: ≤ 1 s each; lazy expanders and cached simulations).
- Ratio Compare page: its first load (simulations of coverage, width and score; floor ≤ 15 s on
  a loaded machine) and a rerun with nothing changed (floor ≤ 3 s).

These timings used to be assertions inside the app tests, where a busy CI machine made them
flaky; here they are printed against their floors.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from benchmarks import _parts
from dpcore.foundations.ledger import LEDGER_PATH_ENV
from strata_ui.learn import all_explainers, all_presets

RERUNS = 5
LEARN_FLOOR_S = 1.0
RATIO_FIRST_FLOOR_S = 15.0
RATIO_RERUN_FLOOR_S = 3.0


def timed(at: AppTest) -> float:
    started = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - started
    assert not at.exception, [e.value for e in at.exception]
    return elapsed


def verdict(seconds: float, floor: float) -> str:
    return f"(floor {floor:g} s) — {'OK' if seconds <= floor else 'TOO SLOW'}"


def app_on(page: str) -> AppTest:
    at = _parts.app_test(default_timeout=300)
    at.run()
    at.switch_page(f"app_pages/{page}.py")
    at.run()
    return at


def report_reruns(at: AppTest, what: str, floor: float) -> None:
    reruns = [timed(at) for _ in range(RERUNS)]
    worst = max(reruns)
    print(
        f"{what} reruns ({RERUNS}): median {statistics.median(reruns) * 1000:.0f} ms, "
        f"max {worst * 1000:.0f} ms {verdict(worst, floor)}"
    )


def learn_page() -> None:
    at = app_on("learn")
    for item in all_explainers():
        at.session_state[f"learn.open.{item.key}"] = True
    for item in all_presets():
        at.session_state[f"learn.preset.open.{item.key}"] = True
    print(f"Learn page, everything open, first run: {timed(at):.1f} s")
    report_reruns(at, "Learn page", LEARN_FLOOR_S)


def ratio_compare_page() -> None:
    at = app_on("estimator")
    at.radio(key="estimator.analysis").set_value("ratio").run()
    at.switch_page("app_pages/compare.py")
    first = timed(at)
    print(f"Ratio Compare page, first load: {first:.1f} s {verdict(first, RATIO_FIRST_FLOOR_S)}")
    report_reruns(at, "Ratio Compare page", RATIO_RERUN_FLOOR_S)


def main() -> None:
    os.environ.setdefault(LEDGER_PATH_ENV, str(Path(tempfile.mkdtemp()) / "ledger.sqlite"))
    learn_page()
    ratio_compare_page()


if __name__ == "__main__":
    main()
