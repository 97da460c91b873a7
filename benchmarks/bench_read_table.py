"""Reading an upload: ``dpcore.foundations.io.read_table`` against ``pandas.read_csv`` (issue 15, item 7).

Writes CSVs of 1e6 and 1e7 rows shaped like the demo data (numbers, text categories, a few
missing cells), then reads each in a fresh process, once with ``pandas.read_csv`` and once with
``read_table``, and prints each reader's wall time and the memory it adds while reading (peak
resident memory minus the resident memory just before the call, the file's bytes already loaded;
the peak is reset after loading them).
The readers take turns, five runs each (a fresh process each), and each keeps its fastest run
and its smallest memory: single runs on this 2-core machine vary by ±30%, and the fastest is the
one least disturbed by the rest of the machine. Floors: ``read_table`` within 1.5× of pandas' time, and its added
memory within 4× the file size. Pass ``--rows 1000000`` to run one size only.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

SIZES = (1_000_000, 10_000_000)
TIME_FLOOR = 1.5
REPEATS = 5
MEMORY_FLOOR = 4.0
WORKCLASS = np.array(["Private", "Self-emp-not-inc", "Local-gov", "State-gov", "Federal-gov"])
EDUCATION = np.array(["HS-grad", "Some-college", "Bachelors", "Masters", "Doctorate", "11th"])

# Runs in a fresh interpreter so that one reader's allocations never count against the other.
MEASURE = """
import io, json, sys, time
import pandas as pd
from dpcore.foundations.io import read_table

def status_bytes(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith(field))

path, reader = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")  # the peak (VmHWM) restarts here, after reading the file's bytes
before = status_bytes("VmRSS")
start = time.perf_counter()
if reader == "pandas":
    frame = pd.read_csv(io.BytesIO(data))
else:
    frame = read_table(data, "bench.csv", max_rows=len(data))
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "added": status_bytes("VmHWM") - before, "rows": len(frame)}))
"""


def write_csv(path: Path, rows: int) -> None:
    """A demo-like table, written in blocks so that 1e7 rows never sit in memory at once."""
    rng = np.random.default_rng(0)
    block = 1_000_000
    for start in range(0, rows, block):
        n = min(block, rows - start)
        hours = rng.integers(1, 100, n).astype(float)
        hours[rng.random(n) < 0.01] = np.nan
        frame = pd.DataFrame(
            {
                "age": rng.integers(17, 91, n),
                "workclass": WORKCLASS[rng.integers(0, WORKCLASS.size, n)],
                "education": EDUCATION[rng.integers(0, EDUCATION.size, n)],
                "hours_per_week": hours,
                "income": np.round(rng.lognormal(10, 1, n), 2),
                "sex": np.where(rng.random(n) < 0.5, "Female", "Male"),
            }
        )
        frame.to_csv(path, mode="a" if start else "w", header=start == 0, index=False)


def run_once(path: Path, reader: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path), reader],
        capture_output=True, encoding="utf-8", check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def measure(path: Path) -> dict[str, dict]:
    """Per reader, the fastest time and the smallest memory of :data:`REPEATS` runs, the two
    readers taking turns."""
    runs = {"pandas": [], "read_table": []}
    for _ in range(REPEATS):
        for reader, results in runs.items():
            results.append(run_once(path, reader))
    return {
        reader: {key: min(run[key] for run in results) for key in results[0]}
        for reader, results in runs.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="rows of the CSV (repeatable)")
    sizes = parser.parse_args().rows or SIZES
    with tempfile.TemporaryDirectory() as folder:
        for rows in sizes:
            path = Path(folder) / f"bench_{rows}.csv"
            write_csv(path, rows)
            size = path.stat().st_size
            measured = measure(path)
            pandas, ours = measured["pandas"], measured["read_table"]
            assert ours["rows"] == pandas["rows"] == rows
            ratio = ours["seconds"] / pandas["seconds"]
            memory = ours["added"] / size
            print(
                f"{rows:>12,} rows, {size / 1024**2:,.0f} MiB: "
                f"pandas.read_csv {pandas['seconds']:.2f} s, +{pandas['added'] / size:.1f}× file; "
                f"read_table {ours['seconds']:.2f} s, +{memory:.1f}× file — "
                f"time {ratio:.2f}× pandas (floor {TIME_FLOOR:g}×) "
                f"{'OK' if ratio <= TIME_FLOOR else 'TOO SLOW'}, "
                f"memory {memory:.1f}× file (floor {MEMORY_FLOOR:g}×) "
                f"{'OK' if memory <= MEMORY_FLOOR else 'TOO MUCH'}"
            )


if __name__ == "__main__":
    main()
