"""Folders of Parquet parts for the engine benchmarks, written by DuckDB from each row's number
``i`` (``hash(i + j)`` gives the row's j-th pseudo-random draw), kept between runs under
``$STRATA_BENCH_DIR`` (default: the temporary folder's ``strata-bench``)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

import duckdb
from streamlit import config
from streamlit.testing.v1 import AppTest

FOLDER = Path(os.environ.get("STRATA_BENCH_DIR", Path(tempfile.gettempdir()) / "strata-bench"))

_RACES = "['White', 'Black', 'Asian', 'Amer-Indian', 'Other', 'Pacific', 'Two or more']"
RACE_AND_SEX = (
    f"{_RACES}[1 + (hash(i) % 7)::INTEGER] AS race, "
    "CASE WHEN hash(i + 1) % 2 = 0 THEN 'Male' ELSE 'Female' END AS sex"
)
"""SQL columns race (7 categories) and sex (2), the groups of every benchmark's rows."""


REPO = Path(__file__).resolve().parents[1]


def app_test(default_timeout: float) -> AppTest:
    """The app as ``make run`` serves it, for Streamlit's AppTest: on 127.0.0.1, single-user
    mode. In this process ``server.address`` keeps its default (every address), where the app
    refuses to serve without a team file and sign-in."""
    config.set_option("server.address", "127.0.0.1")
    return AppTest.from_file(str(REPO / "app.py"), default_timeout=default_timeout)


def write_parts(name: str, rows: int, parts: int, columns: str, derived: str = "") -> Path:
    """``FOLDER/name``: ``parts`` Parquet files holding ``rows`` rows together, reused when
    present. ``columns`` is SQL over the row number ``i``; ``derived``, SQL over those columns
    (e.g. an outcome from its covariates)."""
    folder = FOLDER / name
    if folder.exists():
        return folder
    folder.mkdir(parents=True)
    per_part = rows // parts
    for part in range(parts):
        rows_sql = (
            f"SELECT i, {columns} FROM range({part * per_part}, {(part + 1) * per_part}) t(i)"
        )
        select = f"SELECT * EXCLUDE (i){', ' + derived if derived else ''} FROM ({rows_sql})"
        duckdb.sql(f"COPY ({select}) TO '{folder / f'part-{part}.parquet'}' (FORMAT parquet)")
    return folder


def release_in_scratch_ledger(plan):
    """The seeded release of ``plan`` (simulated noise, seed 0) that every engine benchmark
    times, charged to a ledger of the plan's cost in a scratch folder deleted afterwards."""
    from dpcore.foundations.ledger import Ledger
    from dpcore.release import release

    with tempfile.TemporaryDirectory() as scratch:
        ledger = Ledger(Path(scratch) / "ledger.sqlite", "bench", plan.cost)
        return release(plan, ledger, noise="simulation", rng=0)


def peak_rss_gb() -> float:
    """This process's peak resident memory so far, in GB (Linux reports it in KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def run_child(script: str, *args: str) -> str:
    """``script`` run again with ``--child`` and ``args`` in a fresh Python process, so that its
    peak memory is its own; the line it printed, or why it failed."""
    result = subprocess.run(
        [sys.executable, script, "--child", *args], capture_output=True, text=True, check=False
    )
    if result.returncode:
        return f"failed: {result.stderr.strip().splitlines()[-1]}"
    return result.stdout.strip()


def run_benchmark(
    script: str,
    title: str,
    cases: Iterable[str],
    folder: Callable[[], Path],
    measure: Callable[[Path, str], str],
) -> None:
    """The main of a benchmark that measures each case in a fresh process (so that its peak
    memory is its own): started with ``--child FOLDER CASE``, print ``measure``'s line for
    that case; else print ``title``, then each case's line from ``script`` run as a child on
    ``folder()`` (:func:`run_child`), the case names aligned."""
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(measure(Path(sys.argv[2]), sys.argv[3]))
        return
    print(title)
    cases = list(cases)
    width = max(map(len, cases))
    parts = str(folder())
    for case in cases:
        print(f"  {case:{width}s} {run_child(script, parts, case)}")
