"""Timing of Strata construction and clipped sums (prints numbers; not a test).

Builds the mean's :class:`~dpcore.analyses.mean.statistics.GroupValues` for n = 1,000,000 rows in k = 100 groups (two grouping
columns, 10 x 10 categories) and times one ``clipped_sums`` call with (1000, 100) bounds, i.e.
R = 1000 Monte Carlo replicates.

Run: ``.venv/bin/python benchmarks/bench_strata.py``
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from dpcore.analyses.mean.statistics import GroupValues


def main(n: int = 1_000_000, reps: int = 1000, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    a = np.array([f"a{i}" for i in range(10)], dtype=object)
    b = np.array([f"b{i}" for i in range(10)], dtype=object)
    df = pd.DataFrame(
        {
            "a": pd.Series(a[rng.integers(0, 10, n)], dtype="str"),
            "b": pd.Series(b[rng.integers(0, 10, n)], dtype="str"),
            "x": rng.normal(40.0, 12.0, n),
        }
    )
    best_build = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        strata = GroupValues.from_frame(df, ["a", "b"], "x")
        best_build = min(best_build, time.perf_counter() - t0)
    centre = rng.normal(40.0, 5.0, (reps, strata.k))
    radius = rng.uniform(1.0, 30.0, (reps, strata.k))
    best_clip = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        out = strata.clipped_sums(centre - radius, centre + radius)
        best_clip = min(best_clip, time.perf_counter() - t0)
    print(
        f"GroupValues.from_frame: n={strata.n:,}, k={strata.k}: {best_build * 1e3:.0f} ms (best of 3)"
    )
    print(
        f"clipped_sums with bounds of shape {centre.shape} -> {out.shape}: "
        f"{best_clip * 1e3:.1f} ms (best of 3)"
    )


if __name__ == "__main__":
    main()
