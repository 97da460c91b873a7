"""Throughput of a dataset's identity (dpcore.foundations.dataset): one read of the bytes.

Prints, for a plain file of ``--gigabytes`` (CSV-like text; 1 GB by default) and for the same
bytes gzip-compressed, the identity's throughput in GB/s of data identified (decompressed bytes
for gzip) and, for gzip, in MB/s of the compressed file read; the best of ``--repeats`` runs
with the file in the page cache (the second read of a file, as an app that has just counted its
rows reads it), and the first run (a cold read, if the cache did not hold it). The issue's floor
is 1 GB/s for plain files on this machine; gzip decompression (zlib, one thread) is slower.

Also prints the throughput of hashlib's SHA-256 on one buffer in one thread, the ceiling a
single-stream identity would have (the chunked identity hashes chunks in parallel threads), the
identity's bytes per CPU-second (its own work, whatever else the machine runs) and the load
average (the machine is shared: wall-clock figures fall as the load passes the cores).

Files are kept under ``$STRATA_BENCH_DIR`` (default: the temporary folder's ``strata-bench``).

    PYTHONPATH=. python benchmarks/bench_identity.py [--gigabytes 1] [--repeats 3]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._parts import FOLDER  # noqa: E402
from dpcore.foundations.dataset import CHUNK_BYTES, files_identity  # noqa: E402

GB = 10**9


def text_file(gigabytes: float) -> Path:
    """A CSV-like file of pseudo-random rows (so that gzip compresses it as it would data)."""
    path = FOLDER / f"identity-{gigabytes:g}GB.csv"
    if path.exists():
        return path
    FOLDER.mkdir(parents=True, exist_ok=True)
    rows = [f"{i},{['North', 'South', 'East'][i % 3]},{(i * 7919) % 1000 / 10:.1f}\n"
            for i in range(200_000)]  # fmt: skip
    block = "".join(rows).encode()
    with path.open("wb") as out:
        written = 0
        while written < gigabytes * GB:
            out.write(block)
            written += len(block)
    return path


def gzipped(path: Path) -> Path:
    target = path.with_suffix(".csv.gz")
    if not target.exists():
        with path.open("rb") as source, gzip.open(target, "wb", compresslevel=6) as out:
            while chunk := source.read(CHUNK_BYTES):
                out.write(chunk)
    return target


def timed(path: Path, repeats: int) -> tuple[float, float, float, str]:
    """The first run's seconds, the best run's seconds, the best run's CPU-seconds (every
    thread of the process), and the identity."""
    times, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        identity = files_identity([path])
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return times[0], min(times), min(cpu), identity


def single_thread_sha256(size: int = 512 * 2**20) -> float:
    buffer = os.urandom(size)
    start = time.perf_counter()
    hashlib.sha256(buffer).digest()
    return size / GB / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gigabytes", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    plain = text_file(args.gigabytes)
    packed = gzipped(plain)
    size, packed_size = plain.stat().st_size, packed.stat().st_size
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"cores: {os.cpu_count()}; load average: {load}; chunk: {CHUNK_BYTES // 2**20} MiB; "
          f"hashlib SHA-256, one thread, one buffer: {single_thread_sha256():.2f} GB/s")  # fmt: skip
    first, best, cpu, identity = timed(plain, args.repeats)
    print(f"plain file, {size / GB:.2f} GB: {size / GB / best:.2f} GB/s best of "
          f"{args.repeats} (first run {size / GB / first:.2f} GB/s); "
          f"{size / GB / cpu:.2f} GB per CPU-second")  # fmt: skip
    first, best, cpu, packed_identity = timed(packed, args.repeats)
    assert packed_identity == identity, "a gzip file must be the data it holds"
    print(f"gzip file, {packed_size / GB:.2f} GB compressed ({size / packed_size:.1f}x): "
          f"{size / GB / best:.2f} GB/s of data identified, {packed_size / 1e6 / best:.0f} MB/s "
          f"of file read, best of {args.repeats} (first run {size / GB / first:.2f} GB/s); "
          f"{size / GB / cpu:.2f} GB per CPU-second")  # fmt: skip


if __name__ == "__main__":
    main()
