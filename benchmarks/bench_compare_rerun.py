"""Rerun time of the Compare page after the budget moves (AppTest, demo data, 1000 replicates).

Opens the Compare page once (warm: GroupValues built, privacy–utility sweep simulated), then moves the
ε slider to several new values and times each ``at.run()``. Each new ε runs a fresh vectorized Monte
Carlo for both strategies; the Strata and the sweep come from the cache. Prints the median and the
maximum rerun time (floor: ≤ 1 s).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from dpcore.ledger import LEDGER_PATH_ENV

REPO = Path(__file__).resolve().parents[1]
EPSILONS = (0.5, 2.0, 0.1, 5.0, 0.03, 1.5, 0.2, 7.0)
FLOOR_SECONDS = 1.0


def main() -> None:
    os.environ.setdefault(LEDGER_PATH_ENV, str(Path(tempfile.mkdtemp()) / "ledger.sqlite"))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("app_pages/compare.py")
    start = time.perf_counter()
    at.run()
    print(f"first (cold) Compare run: {time.perf_counter() - start:.2f} s")
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.get("plotly_chart")) == 4

    timings = []
    for epsilon in EPSILONS:
        at.select_slider(key="compare.budget.pure").set_value(epsilon)
        start = time.perf_counter()
        at.run()
        timings.append(time.perf_counter() - start)
        assert not at.exception, [e.value for e in at.exception]
        print(f"  rerun at ε = {epsilon:g}: {timings[-1] * 1000:.0f} ms")
    median, worst = statistics.median(timings), max(timings)
    print(
        f"rerun after moving ε ({len(timings)} values): median {median * 1000:.0f} ms, "
        f"max {worst * 1000:.0f} ms (floor {FLOOR_SECONDS:g} s) — "
        f"{'OK' if worst <= FLOOR_SECONDS else 'TOO SLOW'}"
    )


if __name__ == "__main__":
    main()
