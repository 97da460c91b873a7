"""DuckDB engine at scale (issue 16): a stratified mean release on a 1e8-row Parquet file, and on
3e7 rows under a 2.5 GB address-space cap.

Writes the data once into ``$STRATA_BENCH_DIR`` (default a folder under the system's temporary
directory; about 0.5 GB per 1e8 rows), then runs each release in a fresh process so that its
peak memory is its own, and prints:

- the release's wall time (floor: ≤ 60 s at 1e8 rows) and peak RSS (floor: ≤ 4 GB);
- whether the 3e7-row release completes under ``RLIMIT_AS`` = 2.5 GB, and its time;
- the same release on 1e7 rows with Spark in ``local[2]`` (no floor; the time is printed,
  the session's start included);
- the same 1e8-row release with a person column bounding 2 rows per person (no floor here:
  one aggregate per (person, cell) and one per person, spilling beyond DuckDB's memory limit
  of 2 GB).

Each row: race (7 categories), sex (2), hours in [0, 99] and a person id owning 1 to 3 rows.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROWS_LARGE, ROWS_CAPPED, ROWS_SPARK = 100_000_000, 30_000_000, 10_000_000
ADDRESS_SPACE_CAP = int(2.5 * 2**30)
FOLDER = Path(os.environ.get("STRATA_BENCH_DIR", Path(tempfile.gettempdir()) / "strata-bench"))


def write_table(rows: int) -> Path:
    """A Parquet file of ``rows`` rows, written by DuckDB itself (reused when present)."""
    path = FOLDER / f"people-{rows}.parquet"
    if path.exists():
        return path
    FOLDER.mkdir(parents=True, exist_ok=True)
    races = "['White', 'Black', 'Asian', 'Amer-Indian', 'Other', 'Pacific', 'Two or more']"
    duckdb.sql(f"""
        COPY (
            SELECT {races}[1 + (hash(i) % 7)::INTEGER] AS race,
                   CASE WHEN hash(i + 1) % 2 = 0 THEN 'Male' ELSE 'Female' END AS sex,
                   (hash(i + 2) % 10000) / 100.0 AS hours,
                   i // 2 + (hash(i + 3) % 2) AS person
            FROM range({rows}) AS t(i)
        ) TO '{path}' (FORMAT parquet)
    """)  # fmt: skip
    return path


def release_in_process(path: Path, person: bool, engine: str = "duckdb") -> tuple[float, float]:
    """One dry-run release in this process: (seconds, peak RSS in GB of this process; Spark's
    JVM is another process)."""
    from dpcore.analyses.mean import LaplaceMean, MeanPlan
    from dpcore.analyses.mean.aggregate import aggregate_mean
    from dpcore.engines import DuckDBEngine, SparkEngine
    from dpcore.foundations.accounting import PureDP
    from dpcore.foundations.grouping import GroupingSpec
    from dpcore.foundations.mechanisms import SimulationNoise
    from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
    from dpcore.release import PlanHeader

    start = time.perf_counter()
    spec = GroupingSpec(by=("race", "sex"))
    unit = PrivacyUnit("person", max_groups=1, max_rows=2) if person else ROW
    reader = DuckDBEngine(path) if engine == "duckdb" else SparkEngine(str(path), master="local[2]")
    aggregated = aggregate_mean(reader, spec, "hours", (0.0, 100.0), unit)
    header = PlanHeader(dataset=aggregated.dataset, spec=spec, budget=PureDP(1.0))
    plan = MeanPlan(values=aggregated.stats, header=header, estimator=LaplaceMean((0.0, 100.0)))
    rows = plan.run(SimulationNoise(rng=0), None)
    seconds = time.perf_counter() - start
    assert len(rows) == 15, rows
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    return seconds, peak


def child(path: str, person: str, cap: str, engine: str) -> None:
    if cap != "0":
        resource.setrlimit(resource.RLIMIT_AS, (int(cap), int(cap)))
    seconds, peak = release_in_process(Path(path), person == "1", engine)
    print(f"{seconds:.1f} {peak:.2f}")


def run_child(
    path: Path, *, person: bool = False, cap: int = 0, engine: str = "duckdb"
) -> tuple[float, float] | str:
    result = subprocess.run(
        [sys.executable, __file__, "child", str(path), str(int(person)), str(cap), engine],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        return (result.stderr.strip().splitlines() or ["no output"])[-1]
    seconds, peak = result.stdout.split()[-2:]
    return float(seconds), float(peak)


def report(name: str, outcome: tuple[float, float] | str, floor: str) -> None:
    if isinstance(outcome, str):
        print(f"{name}: FAILED ({outcome}); floor {floor}")
    else:
        print(f"{name}: {outcome[0]:.1f} s, peak RSS {outcome[1]:.2f} GB; floor {floor}")


def main() -> None:
    large, capped = write_table(ROWS_LARGE), write_table(ROWS_CAPPED)
    report("1e8 rows, stratified Laplace mean (race × sex)", run_child(large),
           "≤ 60 s and ≤ 4 GB")  # fmt: skip
    report("3e7 rows under a 2.5 GB address-space cap", run_child(capped, cap=ADDRESS_SPACE_CAP),
           "completes")  # fmt: skip
    spark = run_child(write_table(ROWS_SPARK), engine="spark")
    print(f"1e7 rows on Spark local[2]: {spark if isinstance(spark, str) else f'{spark[0]:.1f} s'}"
          " (session start included; no floor)")  # fmt: skip
    report("1e8 rows, one person = at most 2 rows", run_child(large, person=True), "none")


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child(*sys.argv[2:6])
    else:
        main()
