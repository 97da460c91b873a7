"""The calibration ratio on DuckDB (issue 16): a release of the ratio per race × sex on a folder of
1e7 rows in 8 Parquet parts, read where it lies.

Writes the folder once into ``$STRATA_BENCH_DIR`` (default a folder under the system's temporary
directory; about 0.2 GB), then runs each release in a fresh process so that its peak memory is
its own, and prints its wall time and peak RSS (no floor: figures to compare over time):

- unweighted, the label declared 0/1 (5 sums per group);
- weighted, the label up to 1 but not declared 0/1 (7 sums per group);
- unweighted with a person column bounding 2 rows per person (an aggregate per (person, cell),
  which spills to disk beyond DuckDB's memory limit of 2 GB).

Each row: race (7 categories), sex (2), a score in [0, 1), a 0/1 outcome, a weight in [0.5, 3.5)
and a person id owning 1 to 3 rows. Run from the repository root:
``PYTHONPATH=. python benchmarks/bench_ratio_engines.py``.
"""

from __future__ import annotations

import time
from pathlib import Path

from benchmarks import _parts

ROWS, PARTS = 10_000_000, 8
CASES = {
    "unweighted, 0/1 label": {"weighted": False, "person": False},
    "weighted, 7 sums": {"weighted": True, "person": False},
    "unweighted, 2 rows per person": {"weighted": False, "person": True},
}


def write_parts(rows: int, parts: int) -> Path:
    """Scores, 0/1 outcomes, weights and a person owning about two rows, by race and sex."""
    return _parts.write_parts(f"scores-{rows}", rows, parts, f"""{_parts.RACE_AND_SEX},
        (hash(i + 2) % 10000) / 10000.0 AS score,
        CASE WHEN (hash(i + 4) % 10000) / 10000.0 < (hash(i + 2) % 10000) / 10000.0
             THEN 1 ELSE 0 END AS outcome,
        0.5 + (hash(i + 5) % 3000) / 1000.0 AS weight,
        i // 2 + (hash(i + 3) % 2) AS person""")  # fmt: skip


def release_in_process(folder: Path, weighted: bool, person: bool) -> tuple[float, float]:
    """One seeded dry-run release of the ratio in this process: (seconds, peak RSS in GB)."""
    from dpcore.analyses.ratio import RatioBounds, RatioPlan
    from dpcore.analyses.ratio.aggregate import aggregate_ratio
    from dpcore.engines import DuckDBEngine
    from dpcore.foundations.accounting import ZCDP
    from dpcore.foundations.grouping import GroupingSpec
    from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
    from dpcore.release import PlanHeader

    started = time.perf_counter()
    spec = GroupingSpec(by=("race", "sex"))
    unit = PrivacyUnit("person", max_groups=1, max_rows=2) if person else ROW
    aggregated = aggregate_ratio(
        DuckDBEngine(folder), spec, s_column="score", y_column="outcome",
        w_column="weight" if weighted else None,
        bounds=RatioBounds(1.0, 1.0, 3.5 if weighted else 1.0), binary_y=not weighted, unit=unit,
    )  # fmt: skip
    header = PlanHeader(dataset=aggregated.dataset, spec=spec, budget=ZCDP(0.5))
    plan = RatioPlan(sums=aggregated.stats, header=header)
    record = _parts.release_in_scratch_ledger(plan)
    assert len(record.outputs) == aggregated.stats.k + 1
    seconds = time.perf_counter() - started
    return seconds, _parts.peak_rss_gb()


def measured(folder: Path, case: str) -> str:
    seconds, peak = release_in_process(folder, **CASES[case])
    return f"{seconds:6.1f} s, peak RSS {peak:.2f} GB"


def main() -> None:
    title = f"Ratio release per race × sex with DuckDB on {ROWS:.0e} rows in {PARTS} Parquet parts:"
    _parts.run_benchmark(__file__, title, CASES, lambda: write_parts(ROWS, PARTS), measured)


if __name__ == "__main__":
    main()
