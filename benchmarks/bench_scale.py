"""Scale to the floor (issue 40): every figure beside the floor it is held to, measured in the
same run on the same data, each case in a fresh process (its wall time and its own peak RSS).

On files (DuckDB, ``ROWS`` rows in 16 Parquet parts; the floors are DuckDB's own queries on the
same files, in a fresh process, in DuckDB's default memory of this machine unless said):

- the mean per race × sex (engine API, a dry-run release)   ≤ 2 × ``GROUP BY race, sex``;
- the mean with a person bound (at most 3 rows per person in 1 group) ≤ 2 × DuckDB's own
  ``GROUP BY person, race, sex`` within the same 2 GB;
- the calibration ratio (command line, dry run)              ≤ 3 × ``GROUP BY race, sex``;
- synthetic data, independent marginals (command line)        ≤ 3 × ``GROUP BY race, sex``;
- GVDP's mean (command line, dry run)                         ≤ 10 × ``GROUP BY race, sex``
  and ≤ 1 GB.

In memory (``MEMORY_ROWS`` rows, a categorical group column):

- the mean over 1,000 groups (the pandas engine, a dry-run release) ≤ 10 × ``np.bincount`` of
  the same columns, and faster than OpenDP's ``dp.Context`` on the same frame (skipped, with a
  note, when polars is not installed);
- 50,000 groups: ≤ 2 GB (time printed, no floor).

Each row of the files: race (7 categories), sex (2), hours (10,000 values in [0, 100)), a score
in [0, 1), a 0/1 label, an age of 17 to 86, 16 education levels and a person owning 3
consecutive rows (each row's cell drawn on its own: a person's rows lie in up to 3 cells).
The files are written once under ``$STRATA_BENCH_DIR`` (default a folder under the system's
temporary directory; about 1 GB per 1e8 rows); delete the folder when done. The engine API's
figures leave Python's imports out (as the floors' own do); the command line's include its
start-up, as a user waits for it. Each case is paired with a floor measured just before it (the
machine's load drifts). The files' identity (SHA-256 of every byte, issue 36) is timed on its
own, read and then remembered (:mod:`dpcore.foundations.identity_cache`); the cases run as a
user's later runs do, with it remembered, and the mean also as a first run does, reading it. Run from the repository root:
``PYTHONPATH=. python benchmarks/bench_scale.py [ROWS]``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dpcore.foundations.identity_cache import CACHE_PATH_ENV

ROWS = int(float(sys.argv[1])) if len(sys.argv) > 1 and sys.argv[1] != "--child" else 10**8
PARTS = 16
MEMORY_ROWS = 10_000_000
FOLDER = Path(os.environ.get("STRATA_BENCH_DIR", Path(tempfile.gettempdir()) / "strata-bench"))
RACES = "['White', 'Black', 'Asian', 'Amer-Indian', 'Other', 'Pacific', 'Two or more']"
PERSON_MEMORY = "2GB"


def write_files(rows: int) -> Path:
    """``rows`` rows in :data:`PARTS` Parquet parts (module doc), written once."""
    import duckdb

    folder = FOLDER / f"scale-{rows:.0e}"
    if folder.exists():
        return folder
    folder.mkdir(parents=True)
    per_part = rows // PARTS
    for part in range(PARTS):
        duckdb.sql(f"""COPY (SELECT {RACES}[1 + (hash(i) % 7)::INTEGER] AS race,
                CASE WHEN hash(i + 1) % 2 = 0 THEN 'Male' ELSE 'Female' END AS sex,
                (hash(i + 2) % 10000) / 100.0 AS hours,
                (hash(i + 3) % 10000) / 10000.0 AS score,
                CAST(hash(i + 4) % 10000 < hash(i + 3) % 10000 AS INTEGER) AS label,
                17 + hash(i + 5) % 70 AS age,
                'level ' || (hash(i + 6) % 16)::VARCHAR AS education,
                i // 3 AS person
            FROM range({part * per_part}, {(part + 1) * per_part}) t(i))
            TO '{folder / f"part-{part:02d}.parquet"}' (FORMAT parquet)""")  # fmt: skip
    return folder


# ---- the cases, each run in a child process --------------------------------------------------


def floor_mean(folder: str) -> None:
    import duckdb

    duckdb.sql(
        f"SELECT race, sex, count(*), sum(hours) FROM '{folder}/*.parquet' GROUP BY ALL"
    ).fetchall()


def floor_pairs(folder: str) -> None:
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{PERSON_MEMORY}'; SET preserve_insertion_order = false")
    con.execute(f"SET temp_directory = '{tempfile.mkdtemp(prefix='bench-spill-')}'")
    con.sql(f"""SELECT count(*), sum(n) FROM (SELECT person, race, sex, count(*) AS n,
        sum(hours) AS s FROM '{folder}/*.parquet' GROUP BY ALL)""").fetchall()


def mean_release(folder: str, person: str = "") -> None:
    from dpcore.analyses.mean import LaplaceMean, MeanPlan
    from dpcore.analyses.mean.aggregate import aggregate_mean
    from dpcore.engines import DuckDBEngine
    from dpcore.foundations.accounting import PureDP
    from dpcore.foundations.grouping import GroupingSpec
    from dpcore.foundations.mechanisms import SimulationNoise
    from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
    from dpcore.release import PlanHeader

    spec = GroupingSpec(by=("race", "sex"))
    unit = PrivacyUnit("person", max_groups=1, max_rows=3) if person else ROW
    engine = DuckDBEngine(folder, memory_limit=PERSON_MEMORY)
    aggregated = aggregate_mean(engine, spec, "hours", (0.0, 100.0), unit)
    header = PlanHeader(dataset=aggregated.dataset, spec=spec, budget=PureDP(1.0))
    plan = MeanPlan(values=aggregated.stats, header=header, estimator=LaplaceMean((0.0, 100.0)))
    assert len(plan.run(SimulationNoise(rng=0), None)) == 15


CLI = {
    "ratio": ["--analysis", "ratio", "--score", "score", "--label", "label", "--score-bound",
              "1", "--estimator", "gaussian", "--rho", "0.5"],
    "synth": ["--analysis", "synth", "--synthesizer", "independent", "--columns",
              "age,education,label", "--synth-edges", "age=30;50;70", "--categorical", "label",
              "--synth-rows", "1000", "--estimator", "laplace", "--epsilon", "1"],
    "gvdp": ["--analysis", "gvdp", "--value", "hours", "--bounds", "0,100", "--estimator",
             "gaussian", "--rho", "1"],
}  # fmt: skip


def files_identity(folder: str) -> None:
    from dpcore.engines import location_identity

    assert location_identity(folder).startswith("content:")


def command_line(folder: str, analysis: str) -> None:
    from strata_cli.main import main

    argv = ["release", folder, "--by", "race,sex", *CLI[analysis], "--sizes-public",
            "--dry-run", "--engine", "duckdb", "--format", "text"]  # fmt: skip
    with open(os.devnull, "w") as quiet:
        sys.stdout = quiet
        status = main(argv)
        sys.stdout = sys.__stdout__
    assert status == 0, argv


def in_memory_frame(groups: int):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    labels = [f"group {g:05d}" for g in range(groups)]
    codes = rng.integers(0, groups, MEMORY_ROWS)
    return pd.DataFrame({
        "g": pd.Categorical.from_codes(codes, labels), "v": rng.uniform(-10, 110, MEMORY_ROWS),
    })  # fmt: skip


def memory_floor(groups: str) -> tuple[float, float]:
    """Wall and CPU seconds of ``np.bincount`` of the group codes and the clipped values."""
    import numpy as np

    frame = in_memory_frame(int(groups))
    started, cpu = time.perf_counter(), time.process_time()
    codes = frame["g"].cat.codes.to_numpy()
    values = np.clip(frame["v"].to_numpy(), 0.0, 100.0)
    np.bincount(codes, minlength=int(groups))
    np.bincount(codes, weights=values, minlength=int(groups))
    return time.perf_counter() - started, time.process_time() - cpu


def memory_mean(groups: str) -> tuple[float, float]:
    """Wall and CPU seconds of the pandas engine's pass and a dry-run release (the frame and
    its identity built first)."""
    from dpcore.analyses.mean import LaplaceMean, MeanPlan
    from dpcore.analyses.mean.aggregate import aggregate_mean
    from dpcore.engines import PandasEngine
    from dpcore.foundations.accounting import PureDP
    from dpcore.foundations.dataset import frame_identity
    from dpcore.foundations.grouping import GroupingSpec
    from dpcore.foundations.mechanisms import SimulationNoise
    from dpcore.release import PlanHeader

    frame = in_memory_frame(int(groups))
    # The identity of data read from a file is its bytes, hashed once when it is read
    # (benchmarks/bench_identity.py times it), not in each pass: given, as the CLI gives it.
    identity = frame_identity(frame)
    started, cpu = time.perf_counter(), time.process_time()
    spec = GroupingSpec(by=("g",))
    engine = PandasEngine(frame, identity=identity)
    aggregated = aggregate_mean(engine, spec, "v", (0.0, 100.0))
    header = PlanHeader(dataset=aggregated.dataset, spec=spec, budget=PureDP(1.0))
    plan = MeanPlan(values=aggregated.stats, header=header, estimator=LaplaceMean((0.0, 100.0)))
    assert len(plan.run(SimulationNoise(rng=0), None)) == int(groups) + 1
    return time.perf_counter() - started, time.process_time() - cpu


def opendp_mean(groups: str) -> tuple[float, float]:
    """Wall and CPU seconds of OpenDP's ``dp.Context`` (Polars) releasing the same means."""
    import opendp.prelude as dp
    import polars as pl

    dp.enable_features("contrib")
    frame = in_memory_frame(int(groups))
    codes = frame["g"].cat.codes.to_numpy().astype("int64")  # OpenDP takes 32- and 64-bit
    data = pl.DataFrame({"g": codes, "v": frame["v"].to_numpy()})
    started, cpu = time.perf_counter(), time.process_time()
    context = dp.Context.compositor(
        data=data.lazy(), privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0), split_evenly_over=1,
        margins=[dp.polars.Margin(by=["g"], invariant="lengths", max_length=MEMORY_ROWS,
                                  max_groups=int(groups))],
    )  # fmt: skip
    query = context.query().group_by("g").agg(pl.col("v").fill_null(0.0).dp.mean((0.0, 100.0)))
    assert query.release().collect().height == int(groups)
    return time.perf_counter() - started, time.process_time() - cpu


CASES = {
    "floor_mean": floor_mean, "floor_pairs": floor_pairs, "mean": mean_release,
    "identity": files_identity,
    "mean_person": lambda folder: mean_release(folder, person="1"),
    "ratio": lambda folder: command_line(folder, "ratio"),
    "synth": lambda folder: command_line(folder, "synth"),
    "gvdp": lambda folder: command_line(folder, "gvdp"),
    "memory_floor": memory_floor, "memory_mean": memory_mean, "opendp": opendp_mean,
}  # fmt: skip


IMPORTED_FIRST = ("mean", "mean_person", "memory_floor", "memory_mean", "opendp", "identity")
"""The cases timed without Python's imports (the command line's cases include its start-up)."""


def child(case: str, argument: str) -> None:
    if case in IMPORTED_FIRST:
        import dpcore.analyses.mean  # noqa: F401
        import dpcore.engines  # noqa: F401
    started, cpu = time.perf_counter(), time.process_time()
    timed = CASES[case](argument)  # (wall, CPU) seconds when the case times itself
    if timed is None:
        timed = time.perf_counter() - started, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    print(json.dumps({"wall": timed[0], "cpu": timed[1], "peak": peak}))


IDENTITIES = {CACHE_PATH_ENV: str(FOLDER.parent / "strata-bench-identities.sqlite")}
"""Where the cases remember the files' identity (the benchmark's own cache, not the user's)."""
READ_IDENTITY = {CACHE_PATH_ENV: "off"}


def measure(case: str, argument: str, env: dict[str, str] = IDENTITIES) -> dict:
    """One case in a fresh process (``env`` added to its environment): its wall seconds (or the
    seconds it timed itself), its CPU seconds and its peak RSS in GiB, or the reason it failed."""
    result = subprocess.run([sys.executable, __file__, "--child", case, argument],
                            capture_output=True, text=True, check=False,
                            env={**os.environ, **env})  # fmt: skip
    if result.returncode:
        return {"failed": (result.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(result.stdout.strip().splitlines()[-1])


def line(name: str, case: str, floor_case: str, argument: str, limit: float | None,
         memory: float | None = None, env: dict[str, str] = IDENTITIES) -> None:  # fmt: skip
    """One figure: the floor measured first, then the case, and their ratio against ``limit``
    (None: the memory alone is held to ``memory``)."""
    floor, ours = measure(floor_case, argument), measure(case, argument, env)
    if "failed" in ours or "failed" in floor:
        print(f"{name:48s} FAILED: {ours.get('failed') or floor.get('failed')}")
        return
    ratio = ours["wall"] / floor["wall"]
    met = (limit is None or ratio <= limit) and (memory is None or ours["peak"] <= memory)
    held = [] if limit is None else [f"≤ {limit:g}×"]
    held += [] if memory is None else [f"≤ {memory:g} GB"]
    print(f"{name:48s} {ours['wall']:7.2f} s {ours['cpu']:7.2f} CPU-s {ours['peak']:5.2f} GB | "
          f"floor {floor['wall']:6.2f} s {floor['cpu']:6.2f} CPU-s {floor['peak']:5.2f} GB | "
          f"{ratio:6.2f}× ({', '.join(held)}) {'meets' if met else 'MISSES'}", flush=True)  # fmt: skip


def main() -> None:
    print(f"load average at start: {os.getloadavg()}, {os.cpu_count()} cores")
    folder = str(write_files(ROWS))
    print(f"On files: {ROWS:,} rows in {PARTS} Parquet parts at {folder}")
    read = measure("identity", folder, READ_IDENTITY)
    measure("identity", folder)  # remembered from here on
    remembered = measure("identity", folder)
    hit = remembered["wall"] < read["wall"] / 5
    print(f"{'identity of the files':48s} read {read['wall']:.2f} s, {read['cpu']:.2f} CPU-s; "
          f"remembered {remembered['wall']:.2f} s"
          + ("" if hit else " (NOT remembered: files written within 2 s, or on a network "
                            "filesystem, or the cache unusable: the cases below read them)"))  # fmt: skip
    line("mean (engine API), identity read", "mean", "floor_mean", folder, 2, env=READ_IDENTITY)
    line("mean (engine API)", "mean", "floor_mean", folder, 2)
    line("mean, ≤ 3 rows per person (2 GB)", "mean_person", "floor_pairs", folder, 2)
    line("ratio (command line)", "ratio", "floor_mean", folder, 3)
    line("synthetic, independent marginals (command line)", "synth", "floor_mean", folder, 3)
    line("GVDP mean (command line)", "gvdp", "floor_mean", folder, 10, memory=1.0)
    print(f"In memory: {MEMORY_ROWS:,} rows (each case times itself, the frame built first)")
    line("mean, 1,000 groups (pandas engine)", "memory_mean", "memory_floor", "1000", 10)
    try:
        import polars  # noqa: F401
    except ImportError:
        print("OpenDP dp.Context: skipped (polars is not installed)")
    else:
        line("mean, 1,000 groups, against OpenDP dp.Context", "memory_mean", "opendp", "1000", 1)
    line("mean, 50,000 groups (pandas engine)", "memory_mean", "memory_floor", "50000", None,
         memory=2.0)  # fmt: skip
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(*sys.argv[2:4])
    else:
        main()
