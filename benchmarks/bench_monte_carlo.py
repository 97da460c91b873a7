"""Monte Carlo of stratified CoinPress: n = 1,000,000 rows, k = 100 groups, t = 5, R = 1,000.

Prints the vectorized engine's time (floor: ≤ 2 s on the 2-core machine) and its speed-up over a
plain per-replicate implementation that clips every group's raw values with ``np.clip`` at each
step (floor: ≥ 50×). The baseline is timed on a few replicates and scaled to R, since running all
of them would take minutes.
"""

from __future__ import annotations

import time

import numpy as np

from dpcore.accounting import ZCDP
from dpcore.analyses.mean.coinpress import CoinPressMean
from dpcore.analyses.mean.simulate import monte_carlo
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.datasets import synthetic_gaussian_mixture

N, K, STEPS, REPLICATES, BASELINE_REPLICATES = 1_000_000, 100, 5, 1000, 10
BUDGET = ZCDP(0.5)
ESTIMATOR = CoinPressMean(prior=(-10.0, 10.0), sigma=2.0, steps=STEPS)


def baseline(groups: list[np.ndarray], replicates: int, rng: np.random.Generator) -> np.ndarray:
    """Per replicate, per group, per step: clip the raw values and average (Alg. 1–2 verbatim)."""
    rho_steps = np.array(ESTIMATOR.rho_split) * BUDGET.rho
    betas = ESTIMATOR.step_betas()
    out = np.empty((replicates, len(groups)))
    for r in range(replicates):
        for g, values in enumerate(groups):
            n = values.size
            low, high = ESTIMATOR.prior
            for rho_i, beta_i in zip(rho_steps, betas, strict=True):
                width = ESTIMATOR.sigma * np.sqrt(2 * np.log(2 * n / beta_i))
                clipped = np.clip(values, low - width, high + width)
                noise_sd = (high - low + 2 * width) / n / np.sqrt(2 * rho_i)
                centre = clipped.mean() + rng.normal(0, noise_sd)
                half = np.sqrt(2 * (ESTIMATOR.sigma**2 / n + noise_sd**2) * np.log(2 / beta_i))
                low, high = centre - half, centre + half
            out[r, g] = (low + high) / 2
    return out


def main() -> None:
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


if __name__ == "__main__":
    main()
