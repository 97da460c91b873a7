"""Rerun time of the Compare page after the budget moves (AppTest, 1000 replicates).

Opens the Compare page once (warm: groups and statistics built, privacy–utility sweep simulated),
then moves the ε slider to several new values and times each ``at.run()``. Each new ε runs a fresh
vectorized Monte Carlo for both strategies; the groups, the statistics and the sweep come from
the caches. Prints the median and the maximum rerun time:

- on the demo data (32,561 rows; floor: ≤ 1 s);
- on 10,000,000 rows, the demo's rows drawn with replacement and held as an upload would be
  (issue 16: 3.2–3.6 s when every cache hit unpickled a copy of the grouped data; floor ≤ 0.5 s).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

import pandas as pd

from benchmarks import _parts
from dpcore.foundations.datasets import load_demo
from dpcore.foundations.ledger import LEDGER_PATH_ENV
from strata_ui.state import AppState, settings_key

EPSILONS = (0.5, 2.0, 0.1, 5.0, 0.03, 1.5, 0.2, 7.0)
DEMO_FLOOR_S, LARGE_FLOOR_S, LARGE_ROWS = 1.0, 0.5, 10_000_000


def large_frame(rows: int) -> pd.DataFrame:
    """The columns the Compare page reads by default (race × sex, hours per week), ``rows``
    demo rows drawn with replacement."""
    demo = load_demo()[["race", "sex", "hours_per_week"]]
    return demo.sample(n=rows, replace=True, random_state=0, ignore_index=True)


def time_slider_moves(what: str, state: AppState | None, epsilons, floor: float) -> None:
    at = _parts.app_test(default_timeout=600)
    if state is not None:
        at.session_state[settings_key(AppState)] = state
    at.run()
    at.switch_page("app_pages/compare.py")
    start = time.perf_counter()
    at.run()
    print(f"{what}: first (cold) Compare run: {time.perf_counter() - start:.2f} s")
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.get("plotly_chart")) == 3  # two-panel distributions, groups, curve

    timings = []
    for epsilon in epsilons:
        at.select_slider(key="compare.budget.pure").set_value(epsilon)
        start = time.perf_counter()
        at.run()
        timings.append(time.perf_counter() - start)
        assert not at.exception, [e.value for e in at.exception]
        print(f"  rerun at ε = {epsilon:g}: {timings[-1] * 1000:.0f} ms")
    median, worst = statistics.median(timings), max(timings)
    print(
        f"{what}: rerun after moving ε ({len(timings)} values): median {median * 1000:.0f} ms, "
        f"max {worst * 1000:.0f} ms (floor {floor:g} s) — "
        f"{'OK' if worst <= floor else 'TOO SLOW'}"
    )


def main() -> None:
    os.environ.setdefault(LEDGER_PATH_ENV, str(Path(tempfile.mkdtemp()) / "ledger.sqlite"))
    time_slider_moves("demo data", None, EPSILONS, DEMO_FLOOR_S)
    large = AppState(
        uploaded=large_frame(LARGE_ROWS), dataset_name=f"{LARGE_ROWS:,} rows",
        dataset_fingerprint=f"resampled-demo-{LARGE_ROWS}",
    )  # fmt: skip
    time_slider_moves(f"{LARGE_ROWS:,} rows", large, EPSILONS[:4], LARGE_FLOOR_S)


if __name__ == "__main__":
    main()
