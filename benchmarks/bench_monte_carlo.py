"""Monte Carlo previews: many groups, and stratified CoinPress on many rows.

1. The Compare page's preview at k = 1,000 groups and R = 1,000 replicates (issue 16): one
   strategy's simulated releases with the Laplace mean, stratified, scored as the page shows
   them (``MEAN.study``: per-replicate errors and per-group summaries), on n = 100,000 rows
   (100 per group). Floor: ≤ 0.3 s. Also printed, without a floor: the tidy frame of
   ``monte_carlo`` and the same preview with CoinPress (t = 3, the Estimator page's default).
2. Stratified CoinPress on n = 1,000,000 rows, k = 100 groups, t = 5, R = 1,000: the vectorized
   engine's time (floor: ≤ 2 s on the 2-core machine) and its speed-up over a plain
   per-replicate implementation that clips every group's raw values with ``np.clip`` at each
   step (floor: ≥ 50×). The baseline is timed on a few replicates and scaled to R, since running
   all of them would take minutes.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from benchmarks._coinpress_reference import reference_coinpress
from dpcore.analyses.mean import MEAN, MeanSettings
from dpcore.analyses.mean.coinpress import CoinPressMean
from dpcore.analyses.mean.simulate import monte_carlo
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.datasets import synthetic_gaussian_mixture

N, K, STEPS, REPLICATES, BASELINE_REPLICATES = 1_000_000, 100, 5, 1000, 10
BUDGET = ZCDP(0.5)
ESTIMATOR = CoinPressMean(prior=(-10.0, 10.0), sigma=2.0, steps=STEPS)


def baseline(groups: list[np.ndarray], replicates: int, rng: np.random.Generator) -> np.ndarray:
    """Per replicate, per group, per step: clip the raw values and average (Alg. 1–2 verbatim)."""
    out = np.empty((replicates, len(groups)))
    for r in range(replicates):
        for g, values in enumerate(groups):
            out[r, g] = reference_coinpress(values, ESTIMATOR, BUDGET.rho, rng)
    return out


MANY_N, MANY_K, PREVIEW_FLOOR_S = 100_000, 1000, 0.3


def best_of(repeats: int, run: Callable[[], object]) -> float:
    """The shortest of ``repeats`` timed runs, in seconds (after one untimed warm-up)."""
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def many_groups() -> None:
    frame = synthetic_gaussian_mixture(MANY_N, MANY_K, alpha=5.0, rng=0)
    strata = GroupValues.from_frame(frame, by=["group"], value="value", max_groups=MANY_K)
    print(f"data: n = {strata.n:,}, k = {strata.k:,} groups, R = {REPLICATES:,} replicates")
    laplace = MeanSettings(value="value", estimator="laplace", clip_low=-10.0, clip_high=10.0)
    preview = best_of(
        3, lambda: MEAN.study(strata, laplace, PureDP(1.0), replicates=REPLICATES, rng=1)
    )
    verdict = "OK" if preview <= PREVIEW_FLOOR_S else "TOO SLOW"
    print(
        f"Compare preview, Laplace mean, stratified: {preview:.3f} s "
        f"(floor {PREVIEW_FLOOR_S:g} s) — {verdict}"
    )
    estimator = MEAN.estimator(laplace)
    tidy = best_of(
        3, lambda: monte_carlo(strata, estimator, PureDP(1.0), replicates=REPLICATES, rng=1)
    )
    print(f"  monte_carlo's tidy frame ({REPLICATES * (strata.k + 1):,} rows): {tidy:.3f} s")
    coinpress = MeanSettings(
        value="value", estimator="coinpress", clip_low=-10.0, clip_high=10.0,
        coinpress_sigma=2.0,
    )  # fmt: skip
    adaptive = best_of(
        3, lambda: MEAN.study(strata, coinpress, ZCDP(0.5), replicates=REPLICATES, rng=1)
    )
    print(f"  Compare preview, CoinPress t = {coinpress.coinpress_steps}: {adaptive:.3f} s")


def many_rows() -> None:
    frame = synthetic_gaussian_mixture(N, K, alpha=1.0, rng=0)
    start = time.perf_counter()
    strata = GroupValues.from_frame(frame, by=["group"], value="value")
    build = time.perf_counter() - start
    print(f"data: n = {strata.n:,}, k = {strata.k} groups (build GroupValues once: {build:.2f} s)")

    monte_carlo(strata, ESTIMATOR, BUDGET, replicates=10, rng=1)  # warm-up
    start = time.perf_counter()
    monte_carlo(strata, ESTIMATOR, BUDGET, replicates=REPLICATES, rng=1)
    engine = time.perf_counter() - start
    print(f"vectorized Monte Carlo, R = {REPLICATES}, t = {STEPS}: {engine:.3f} s (floor 2 s)")

    groups = [
        strata.sorted_values[strata.offsets[g] : strata.offsets[g + 1]] for g in range(strata.k)
    ]
    start = time.perf_counter()
    baseline(groups, BASELINE_REPLICATES, np.random.default_rng(2))
    per_replicate = (time.perf_counter() - start) / BASELINE_REPLICATES
    print(
        f"per-replicate np.clip baseline: {per_replicate * 1000:.1f} ms per replicate, "
        f"{per_replicate * REPLICATES:.1f} s for R = {REPLICATES} (timed on {BASELINE_REPLICATES})"
    )
    print(f"speed-up: {per_replicate * REPLICATES / engine:.0f}x (floor 50x)")


def main() -> None:
    many_groups()
    many_rows()


if __name__ == "__main__":
    main()
