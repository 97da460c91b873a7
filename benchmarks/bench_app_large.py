"""The app on a folder of Parquet parts on disk (issue 16 item 5): 10,000,000 rows opened by path.

Writes the folder once into ``$STRATA_BENCH_DIR`` (default a folder under the system's temporary
directory; 8 parts, about 60 MB), then drives the app with Streamlit's AppTest (the app's own
pages and data layer, no browser): types the path on the Data page and presses Open, chooses
the value column, groups by race × sex, gives bounds, and prints

- the time to open the folder (DuckDB reads every part's footer and counts the rows);
- the time to the first Compare result (one pass for the groups' counts, one for their clipped
  sums, one for the true means, then 1,000 simulated releases per strategy and the
  privacy–utility curve);
- the time of each Compare rerun after a move of ε, and their median and maximum (issue 16's
  floor at 1e7 rows: ≤ 0.5 s per slider move; the rows are never in memory, so this does not
  grow with them).
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import tempfile
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from benchmarks import _parts
from dpcore.analyses.mean import MeanSettings
from dpcore.foundations.ledger import LEDGER_PATH_ENV
from strata_ui.state import settings_key

ROWS, PARTS = 10_000_000, 8
EPSILONS = (0.5, 2.0, 0.1, 5.0, 0.03, 1.5)
FLOOR_S = 0.5


def write_parts(rows: int, parts: int) -> Path:
    """Hours in [0, 99.99] by race (7 categories) and sex (2)."""
    return _parts.write_parts(
        f"people-{rows}-in-{parts}-parts", rows, parts,
        f"{_parts.RACE_AND_SEX}, (hash(i + 2) % 10000) / 100.0 AS hours",
    )  # fmt: skip


def timed(at: AppTest) -> float:
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    assert not at.exception, [e.value for e in at.exception]
    assert not at.main.error, [e.value for e in at.main.error]
    return elapsed


def main() -> None:
    os.environ.setdefault(LEDGER_PATH_ENV, str(Path(tempfile.mkdtemp()) / "ledger.sqlite"))
    folder = write_parts(ROWS, PARTS)
    at = _parts.app_test(default_timeout=600)
    at.run()
    at.switch_page("app_pages/data.py")
    at.run()
    [path_box] = [t for t in at.text_input if t.key.startswith("data.path")]
    path_box.input(str(folder))
    at.button(key="data.open").click()
    print(f"{ROWS:,} rows in {PARTS} Parquet parts at {folder}")
    print(f"open the folder (footers, row count): {timed(at):.2f} s")
    at.selectbox(key="mean.value").set_value("hours").run()
    key = settings_key(MeanSettings)  # public bounds, as typed on the Estimator page
    at.session_state[key] = dataclasses.replace(
        at.session_state[key], clip_low=0.0, clip_high=100.0
    )
    at.switch_page("app_pages/strata.py")
    at.run()
    at.main.multiselect[0].set_value(["race", "sex"])
    print(f"Strata page grouped by race × sex (one counting pass): {timed(at):.2f} s")

    at.switch_page("app_pages/compare.py")
    print(f"first Compare result (statistics, simulations, curve): {timed(at):.2f} s")
    assert len(at.get("plotly_chart")) == 3  # two-panel distributions, groups, curve
    timings = []
    for epsilon in EPSILONS:
        at.select_slider(key="compare.budget.pure").set_value(epsilon)
        timings.append(timed(at))
        print(f"  rerun at ε = {epsilon:g}: {timings[-1] * 1000:.0f} ms")
    median, worst = statistics.median(timings), max(timings)
    print(
        f"Compare rerun after moving ε ({len(timings)} values): median {median * 1000:.0f} ms, "
        f"max {worst * 1000:.0f} ms (floor {FLOOR_S:g} s) — "
        f"{'OK' if worst <= FLOOR_S else 'TOO SLOW'}"
    )


if __name__ == "__main__":
    main()
