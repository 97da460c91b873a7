"""GVDP's engine statistics on DuckDB (issue 16): the bag of little bootstraps of a release per
race × sex on a folder of 1e7 rows in 8 Parquet parts, read where it lies.

Writes the folder once into ``$STRATA_BENCH_DIR`` (default a folder under the system's temporary
directory; about 0.2 GB), then runs each case in a fresh process so that its peak memory is its
own, and prints its wall time and peak RSS (no floor: figures to compare over time). Each case is
the first pass (every group's rows and sums, :func:`~dpcore.analyses.gvdp.aggregate.aggregate_gvdp`) and the
bag's pass of one stratified seeded dry-run release (:mod:`dpcore.engines.blb`: one salted
integer hash per row and copy, r = 10 resamples from its bits), then the release itself:

- the mean of hours (3 sums per (group, subset, resample));
- OLS of hours on age and a 0/1 degree (9 sums per (group, subset, resample)).

Rows are continuous (hours and age with decimals), so each row's content is its key; k = 1,000
subsets of the population. Also times the pandas engine's bag of 1e6 rows in memory (the same
hash in numpy). Run from the repository root:
``PYTHONPATH=. python benchmarks/bench_gvdp_engines.py``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from benchmarks import _parts

ROWS, PARTS = 10_000_000, 8
CASES = ("mean", "ols")
PANDAS_ROWS = 1_000_000


def write_parts(rows: int, parts: int) -> Path:
    """Hours linear in age and a 0/1 degree plus noise, by race and sex."""
    return _parts.write_parts(
        f"hours-{rows}", rows, parts,
        f"""{_parts.RACE_AND_SEX}, 18 + (hash(i + 2) % 470000) / 10000.0 AS age,
            CAST(hash(i + 3) % 5 < 2 AS INTEGER) AS degree""",
        derived="20 + 0.3 * age + 6 * degree + (hash(i + 9) % 1000) / 50.0 AS hours",
    )  # fmt: skip


def settings_for(kind: str):
    from dpcore.analyses.gvdp import GvdpSettings

    return GvdpSettings(
        model=kind, outcomes=((kind, "hours"),), covariates=(("ols", ("age", "degree")),),
        ks=((kind, 1000),),
    )  # fmt: skip


def release_in_process(folder: Path, kind: str) -> tuple[float, float, float]:
    """One seeded dry-run release in this process: (seconds of the first pass, seconds of the
    bag's pass and the release, peak RSS in GB)."""
    from dpcore.analyses.gvdp import GVDP
    from dpcore.engines import DuckDBEngine
    from dpcore.foundations.accounting import ZCDP
    from dpcore.foundations.grouping import GroupingSpec
    from dpcore.release import PlanHeader

    started = time.perf_counter()
    spec, settings = GroupingSpec(by=("race", "sex")), settings_for(kind)
    aggregated = GVDP.engine_statistics(DuckDBEngine(folder), spec, settings)
    first = time.perf_counter() - started
    header = PlanHeader(aggregated.dataset, spec, ZCDP(1.0), label=f"bench gvdp {kind}")
    plan = GVDP.plan(aggregated.stats, settings, header)
    _parts.release_in_scratch_ledger(plan)
    total = time.perf_counter() - started
    peak_gb = _parts.peak_rss_gb()
    return first, total - first, peak_gb


def pandas_hashing() -> float:
    """Seconds of the pandas engine's bag pass on ``PANDAS_ROWS`` rows in memory."""
    import numpy as np
    import pandas as pd

    from dpcore.analyses.gvdp import GvdpModel
    from dpcore.analyses.gvdp.aggregate import aggregate_gvdp
    from dpcore.engines import PandasEngine
    from dpcore.foundations.grouping import GroupingSpec

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"g": rng.choice(["a", "b"], PANDAS_ROWS), "y": rng.normal(size=PANDAS_ROWS)}
    )
    data = aggregate_gvdp(
        PandasEngine(frame), GroupingSpec(by=("g",)), GvdpModel("mean", "y")
    ).stats
    started = time.perf_counter()
    data.bags.population("salt", 1000, 10, data.rows)
    return time.perf_counter() - started


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        print(*release_in_process(write_parts(ROWS, PARTS), sys.argv[2]))
        return
    if len(sys.argv) == 2 and sys.argv[1] == "--pandas":
        print(pandas_hashing())
        return
    write_parts(ROWS, PARTS)  # once, before the timed cases
    print(f"GVDP on DuckDB, {ROWS:,} rows in {PARTS} Parquet parts, race × sex, k = 1,000, r = 10")
    for kind in CASES:
        out = subprocess.run([sys.executable, __file__, "--case", kind], check=True,
                             capture_output=True, text=True).stdout.split()  # fmt: skip
        first, bag, peak = (float(x) for x in out)
        print(f"  {kind:5s}: first pass {first:6.1f} s, bag's pass + release {bag:6.1f} s, "
              f"peak RSS {peak:4.2f} GB")  # fmt: skip
    out = subprocess.run([sys.executable, __file__, "--pandas"], check=True, capture_output=True,
                         text=True).stdout  # fmt: skip
    print(f"pandas engine: the bag's pass on {PANDAS_ROWS:,} rows in memory {float(out):.1f} s")


if __name__ == "__main__":
    main()
