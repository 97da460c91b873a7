"""The planner's speed against issue 17's floors (prints numbers; not a test).

- The stratification frontier for 4 candidate columns of the demo (race, sex, workclass,
  marital_status: 15 stratifications × 3 strategies, 200 simulated releases each), best of 3:
  floor ≤ 2 s.
- The Plan page after a change of the target (AppTest, demo data; the error model and the
  frontier come from their caches, the answer, its chart and the simulation check are redrawn):
  floor ≤ 0.3 s for the worst of 5 changes; for the mean, and for the calibration ratio by
  race × sex in ρ (its Gaussian with zCDP accounting; the ratio has no frontier).
- For scale: the error model and one answer for every text column of the demo grouped
  together (4,802 groups with a minimum group size of 1).

Run: ``.venv/bin/python benchmarks/bench_planner.py``
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from dpcore.accounting import PureDP
from dpcore.analyses.mean import GroupValues, LaplaceMean
from dpcore.analyses.mean.accuracy import mean_error_model
from dpcore.analyses.mean.frontier import stratification_frontier
from dpcore.datasets import load_demo
from dpcore.grouping import GroupingSpec
from dpcore.ledger import LEDGER_PATH_ENV
from dpcore.planner import AccuracyTarget, smallest_budget
from strata_ui.state import AppState, settings_key

REPO = Path(__file__).resolve().parents[1]
FRONTIER_FLOOR_S = 2.0
TARGET_CHANGE_FLOOR_S = 0.3
COLUMNS = ("race", "sex", "workclass", "marital_status")


def verdict(seconds: float, floor: float) -> str:
    return f"(floor {floor:g} s) — {'OK' if seconds <= floor else 'TOO SLOW'}"


def best_of(runs: int, work) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def frontier() -> None:
    frame, estimator = load_demo(), LaplaceMean(bounds=(0.0, 100.0))
    seconds = best_of(
        3,
        lambda: stratification_frontier(
            frame, COLUMNS, "hours_per_week", estimator, PureDP(1.0), rng=0
        ),
    )
    print(f"Frontier, 4 columns × 3 strategies on the demo: {seconds:.2f} s "
          f"{verdict(seconds, FRONTIER_FLOOR_S)}")  # fmt: skip


def target_changes(analysis: str = "mean", targets=(1.0, 3.0, 0.5, 4.0, 2.0)) -> None:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
    at.run()
    if analysis != "mean":
        state = at.session_state[settings_key(AppState)]
        state.analysis, state.budget_kind = analysis, "zcdp"
    at.switch_page("app_pages/plan.py")
    at.run()
    times = []
    for half_width in targets:
        at.number_input(key="planner_view.half_width").set_value(half_width)
        started = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - started)
        assert not at.exception, [e.value for e in at.exception]
    worst = max(times)
    print(f"Plan page ({analysis}), target changed 5 times: median {statistics.median(times) * 1000:.0f} ms, "
          f"max {worst * 1000:.0f} ms {verdict(worst, TARGET_CHANGE_FLOOR_S)}")  # fmt: skip


def many_groups() -> None:
    frame = load_demo()
    by = tuple(c for c in frame.columns if frame[c].dtype == "string")
    grouping = GroupingSpec(by=by, min_group_size=1).build(frame)
    values = GroupValues.from_grouping(grouping, frame, "hours_per_week")
    started = time.perf_counter()
    model = mean_error_model(values, LaplaceMean(bounds=(0.0, 100.0)))
    built = time.perf_counter() - started
    started = time.perf_counter()
    smallest_budget(model, AccuracyTarget(2.0))
    answered = time.perf_counter() - started
    print(f"{values.k:,} groups: error model {built:.2f} s, one answer {answered * 1000:.0f} ms")


def main() -> None:
    os.environ.setdefault(LEDGER_PATH_ENV, str(Path(tempfile.mkdtemp()) / "ledger.sqlite"))
    frontier()
    target_changes()
    target_changes("ratio", (0.5, 0.2, 1.0, 0.3, 0.4))
    many_groups()


if __name__ == "__main__":
    main()
