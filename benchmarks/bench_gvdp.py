"""GVDP timings and coverage (prints numbers; not a test).

Timings (median of several runs, wall clock):

- one 1-D mean run, n = 10,000, k = 100, r = 20 resamples (floor: ≤ 10 ms);
- one OLS run, d = 5, n = 100,000, k = 1,000, r = 10 resamples (floor: ≤ 2 s).

Coverage of the two statistical checks of ``tests/unit/test_gvdp.py``, bounds 100× too loose:

- 1-D mean, n = 10,000, k = 100, r = 20, ρ = 0.5, 500 replications (target [0.93, 0.99]);
- OLS, d = 5, n = 50,000, k = 500, r = 10, ρ = 0.1, 200 replications (target ≥ 0.90 each).

Run: ``.venv/bin/python benchmarks/bench_gvdp.py``
"""

from __future__ import annotations

import time

import numpy as np

from dpcore.analyses.gvdp.bounds import GVDPBounds
from dpcore.analyses.gvdp.estimator import gvdp, gvdp_coverage, nonprivate_ci

OLS_BETA = np.array([1.0, 2.0, -1.0, 0.5, 0.25])
OLS_CORR, OLS_SIGMA = 0.5, 10.0


def ols_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Intercept + four equicorrelated N(0, 1) covariates; y = Xβ + N(0, σ²)."""
    p = OLS_BETA.size - 1
    cov = np.full((p, p), OLS_CORR) + (1 - OLS_CORR) * np.eye(p)
    X = np.column_stack([np.ones(n), rng.multivariate_normal(np.zeros(p), cov, n)])
    return X, X @ OLS_BETA + rng.normal(0.0, OLS_SIGMA, n)


def ols_variance(n: int) -> np.ndarray:
    """Var(β̂) ≈ σ² E[xxᵀ]⁻¹/n for the design above."""
    p = OLS_BETA.size - 1
    inv_diag = (1 + (p - 2) * OLS_CORR) / ((1 - OLS_CORR) * (1 + (p - 1) * OLS_CORR))
    return OLS_SIGMA**2 / n * np.array([1.0, *[inv_diag] * p])


def median_seconds(run, repeats: int) -> float:
    run(10_000)  # warm-up (table caches, first-call overheads)
    times = []
    for seed in range(repeats):
        start = time.perf_counter()
        run(seed)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def time_mean_run() -> None:
    n, k, r = 10_000, 100, 20
    x = np.random.default_rng(0).normal(1.0, 1.0, n)
    bounds = GVDPBounds.overestimated([1.0], [1 / n], 100, resamples=r, subset_size=n // k)
    seconds = median_seconds(
        lambda s: gvdp(x, "mean", k=k, rho=0.5, resamples=r, bounds=bounds, rng=s), 31
    )
    print(f"1-D mean run, n = {n:,}, k = {k}, r = {r}: {seconds * 1e3:.2f} ms (floor 10 ms)")


def time_ols_run() -> None:
    n, k, r = 100_000, 1_000, 10
    X, y = ols_data(np.random.default_rng(1), n)
    bounds = GVDPBounds.overestimated(OLS_BETA, ols_variance(n), 100, resamples=r, subset_size=100)
    seconds = median_seconds(
        lambda s: gvdp((X, y), "ols", k=k, rho=0.1, resamples=r, bounds=bounds, rng=s), 7
    )
    print(f"OLS run, d = 5, n = {n:,}, k = {k:,}, r = {r}: {seconds:.3f} s (floor 2 s)")
    result = gvdp((X, y), "ols", k=k, rho=0.1, resamples=r, bounds=bounds, rng=0)
    reference = nonprivate_ci((X, y), "ols")
    ratio = np.sqrt(result.variance / reference.variance)
    print(f"  DP / non-private standard error per coefficient: {np.round(ratio, 1)}")


def timed_coverage(generate, truth, estimator: str, *, variance, subset_size: int, **run):
    """:func:`gvdp_coverage` (``run``: replications, k, rho, resamples, rng) with bounds 100×
    too loose about the truth, and its wall time in seconds."""
    bounds = GVDPBounds.overestimated(
        truth, variance, 100, resamples=run["resamples"], subset_size=subset_size
    )
    start = time.perf_counter()
    result = gvdp_coverage(generate, truth, estimator, bounds=bounds, **run)
    return result, time.perf_counter() - start


def mean_coverage() -> None:
    n = 10_000
    result, seconds = timed_coverage(
        lambda rng: rng.normal(1.0, 1.0, n), [1.0], "mean", variance=[1 / n], subset_size=n // 100,
        replications=500, k=100, rho=0.5, resamples=20, rng=26,
    )  # fmt: skip
    print(
        f"1-D mean coverage over {result.replications} replications: {result.coverage[0]:.3f} "
        f"(target [0.93, 0.99]); mean interval width {np.mean(result.high - result.low):.4f}, "
        f"non-private ≈ {2 * 1.96 / np.sqrt(n):.4f}; {seconds:.1f} s"
    )


def ols_coverage() -> None:
    n = 50_000
    result, seconds = timed_coverage(
        lambda rng: ols_data(rng, n), OLS_BETA, "ols", variance=ols_variance(n), subset_size=100,
        replications=200, k=500, rho=0.1, resamples=10, rng=27,
    )  # fmt: skip
    se = result.estimates.std(axis=0, ddof=1) / np.sqrt(result.replications)
    bias = (result.estimates.mean(axis=0) - OLS_BETA) / se
    print(
        f"OLS coverage over {result.replications} replications: {np.round(result.coverage, 3)} "
        f"(target >= 0.90 each); bias in standard errors {np.round(bias, 2)}; {seconds:.1f} s"
    )


def main() -> None:
    time_mean_run()
    time_ols_run()
    mean_coverage()
    ols_coverage()


if __name__ == "__main__":
    main()
