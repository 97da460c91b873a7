"""Synthetic data on DuckDB (issue 16): the counts of a synthetic release per race × sex on a
folder of 1e7 rows in 8 Parquet parts, read where it lies, then an MWEM release from them.

Writes the folder once into ``$STRATA_BENCH_DIR`` (default a folder under the system's temporary
directory; about 0.1 GB), then runs each case in a fresh process so that its peak memory is its
own, and prints the pass's wall time, the release's, and the peak RSS (no floor: figures to
compare over time). Each row: race (7 categories), sex (2), an age bucketed at 5 public edges,
hours bucketed at 4, an education of 16 categories and a 0/1 income treated as categories: the
pass returns at most 7 × 2 × 6 × 5 × 16 × 2 = 13,440 cells. Run from the repository root:
``PYTHONPATH=. python benchmarks/bench_synth_engines.py``.
"""

from __future__ import annotations

import time
from pathlib import Path

from benchmarks import _parts

ROWS, PARTS = 10_000_000, 8
CASES = ("independent", "mwem")


def write_parts(rows: int, parts: int) -> Path:
    """Ages, hours, 16 education levels and a 0/1 income, by race and sex."""
    return _parts.write_parts(f"people-{rows}", rows, parts, f"""{_parts.RACE_AND_SEX},
        17 + hash(i + 2) % 70 AS age,
        (hash(i + 3) % 800) / 10.0 AS hours_per_week,
        'level ' || (hash(i + 4) % 16)::VARCHAR AS education,
        (hash(i + 5) % 4 = 0)::INTEGER AS income_over_50k""")  # fmt: skip


def release_in_process(folder: Path, method: str) -> tuple[float, float, float]:
    """The counts of one pass, then one seeded dry-run release from them, in this process:
    (seconds of the pass, seconds of the release, peak RSS in GB)."""
    from dpcore.analyses import SYNTH
    from dpcore.analyses.synth import SynthSettings
    from dpcore.engines import DuckDBEngine
    from dpcore.foundations.accounting import PureDP
    from dpcore.foundations.grouping import GroupingSpec
    from dpcore.release import PlanHeader

    settings = SynthSettings(
        method=method,
        columns=("age", "hours_per_week", "education", "income_over_50k"),
        rounds=3,
    )
    spec = GroupingSpec(by=("race", "sex"))
    started = time.perf_counter()
    aggregated = SYNTH.engine_statistics(DuckDBEngine(folder), spec, settings)
    counted = time.perf_counter() - started
    header = PlanHeader(dataset=aggregated.dataset, spec=spec, budget=PureDP(1.0))
    plan = SYNTH.plan(aggregated.stats, settings, header)
    record = _parts.release_in_scratch_ledger(plan)
    assert len(record.outputs) == settings.n_rows
    assert aggregated.stats.n_rows == ROWS
    released = time.perf_counter() - started - counted
    return counted, released, _parts.peak_rss_gb()


def measured(folder: Path, method: str) -> str:
    counted, released, peak = release_in_process(folder, method)
    return f"counts {counted:5.1f} s, release {released:5.1f} s, peak RSS {peak:.2f} GB"


def main() -> None:
    title = f"Synthetic release per race × sex with DuckDB on {ROWS:.0e} rows in {PARTS} parts:"
    _parts.run_benchmark(__file__, title, CASES, lambda: write_parts(ROWS, PARTS), measured)


if __name__ == "__main__":
    main()
