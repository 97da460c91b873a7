"""Hostile files read in linear time (issue 38, item 2).

Two files an attacker can upload, each read with ``dpcore.foundations.io.load_table``:

- a gzip file of about 20 MB: one small CSV member followed by a million empty members (each
  member used to re-slice the rest of the file, so reading took hours); printed as MB/s of
  compressed input, floor 20 MB/s;
- a CSV of 100,000 columns (20 rows; half numbers, half text), floor 5 s; and the same with
  what the Data page adds on an upload, the explanations of columns of numbers read as text
  (``explain_columns``).

Each is read three times and the fastest run kept; wall time and this process's CPU time are
printed, since on this shared 2-core machine the wall time of one run varies with the load of
everyone else (the CPU time does not). Run from the repository root:
``PYTHONPATH=. python benchmarks/bench_hostile_readers.py``.
"""

from __future__ import annotations

import gzip
import time

import numpy as np

from dpcore.foundations.io import explain_columns, load_table

GZIP_FLOOR_MB_S = 20.0
WIDE_FLOOR_S = 5.0
EMPTY_MEMBERS = 1_000_000
WIDE_COLUMNS = 100_000
WIDE_ROWS = 20
REPEATS = 3


def gzip_of_empty_members() -> bytes:
    """One CSV member, then a million members that each inflate to nothing."""
    table = b"group,value\n" + b"".join(b"g%d,%d\n" % (i % 7, i) for i in range(10_000))
    return gzip.compress(table, mtime=0) + gzip.compress(b"", mtime=0) * EMPTY_MEMBERS


def wide_csv() -> bytes:
    """100,000 columns named c0, c1, ...: even ones whole numbers, odd ones short labels."""
    rng = np.random.default_rng(0)
    header = ",".join(f"c{i}" for i in range(WIDE_COLUMNS))
    rows = []
    for _ in range(WIDE_ROWS):
        cells = rng.integers(0, 100, WIDE_COLUMNS).astype(str)
        cells[1::2] = np.char.add("g", cells[1::2])
        rows.append(",".join(cells))
    return (header + "\n" + "\n".join(rows) + "\n").encode()


def fastest(data: bytes, name: str, explain: bool = False) -> tuple[float, float, tuple]:
    """(wall seconds, CPU seconds, frame shape) of the fastest of :data:`REPEATS` reads (each
    followed by the Data page's explanations if ``explain``)."""
    runs = []
    for _ in range(REPEATS):
        wall, cpu = time.perf_counter(), time.process_time()
        frame = load_table(data, name).frame
        if explain:
            explain_columns(frame)
        runs.append((time.perf_counter() - wall, time.process_time() - cpu, frame.shape))
    return min(runs)


def main() -> None:
    members = gzip_of_empty_members()
    wall, cpu, shape = fastest(members, "members.csv.gz")
    megabytes = len(members) / 1e6
    print(
        f"gzip, 1 CSV member + {EMPTY_MEMBERS:,} empty members ({megabytes:.1f} MB, "
        f"{shape[0]:,} rows): {megabytes / wall:.0f} MB/s wall ({wall:.2f} s), "
        f"{megabytes / cpu:.0f} MB/s CPU; floor {GZIP_FLOOR_MB_S:.0f} MB/s: "
        f"{'met' if megabytes / wall >= GZIP_FLOOR_MB_S else 'MISSED'}"
    )
    wide = wide_csv()
    wall, cpu, shape = fastest(wide, "wide.csv")
    print(
        f"CSV of {shape[1]:,} columns × {shape[0]} rows ({len(wide) / 1e6:.1f} MB): "
        f"{wall:.2f} s wall, {cpu:.2f} s CPU; floor {WIDE_FLOOR_S:.0f} s: "
        f"{'met' if wall <= WIDE_FLOOR_S else 'MISSED'}"
    )
    wall, cpu, _ = fastest(wide, "wide.csv", explain=True)
    print(f"  with the Data page's explanations of its columns: {wall:.2f} s wall, {cpu:.2f} s CPU")


if __name__ == "__main__":
    main()
