"""What several GVDP test files share: the seeded data of the paper's mean and OLS settings, their
sampling variance and overestimated bounds, coverage runs over them, and a noise source that
records every σ it was asked for."""

from __future__ import annotations

import numpy as np

from dpcore.analyses.gvdp.bounds import GVDPBounds
from dpcore.analyses.gvdp.estimator import gvdp_coverage

MEAN_N, MEAN_K, MEAN_R, MEAN_RHO, MEAN_TRUTH = 10_000, 100, 20, 0.5, 1.0

OLS_N, OLS_K, OLS_R, OLS_RHO, OLS_SIGMA = 50_000, 500, 10, 0.1, 10.0
OLS_BETA = np.array([1.0, 2.0, -1.0, 0.5, 0.25])
OLS_CORR = 0.5  # equicorrelation of the four Gaussian covariates


def mean_data(rng: np.random.Generator) -> np.ndarray:
    return rng.normal(MEAN_TRUTH, 1.0, MEAN_N)


def ols_data(rng: np.random.Generator, n: int = OLS_N) -> tuple[np.ndarray, np.ndarray]:
    """Intercept + four equicorrelated N(0, 1) covariates; y = Xβ + N(0, σ²)."""
    p = OLS_BETA.size - 1
    cov = np.full((p, p), OLS_CORR) + (1 - OLS_CORR) * np.eye(p)
    X = np.column_stack([np.ones(n), rng.multivariate_normal(np.zeros(p), cov, n)])
    return X, X @ OLS_BETA + rng.normal(0.0, OLS_SIGMA, n)


def ols_sampling_variance() -> np.ndarray:
    """Var(β̂) ≈ σ² E[xxᵀ]⁻¹ / n; equicorrelation ρ in dimension p has
    (Σ⁻¹)_jj = (1 + (p − 2)ρ) / ((1 − ρ)(1 + (p − 1)ρ))."""
    p = OLS_BETA.size - 1
    inv_diag = (1 + (p - 2) * OLS_CORR) / ((1 - OLS_CORR) * (1 + (p - 1) * OLS_CORR))
    return OLS_SIGMA**2 / OLS_N * np.array([1.0, *[inv_diag] * p])


def mean_bounds(factor: float = 100.0) -> GVDPBounds:
    return GVDPBounds.overestimated(
        [MEAN_TRUTH], [1 / MEAN_N], factor, resamples=MEAN_R, subset_size=MEAN_N // MEAN_K
    )


def mean_coverage(*, replications: int, rho: float, rng: int):
    """GVDP coverage of the mean of N(1, 1) rows: n = 10,000, k = 100, r = 20, bounds 100×
    too loose."""
    return gvdp_coverage(
        mean_data, [MEAN_TRUTH], "mean", replications=replications, k=MEAN_K, rho=rho,
        resamples=MEAN_R, bounds=mean_bounds(), rng=rng,
    )  # fmt: skip


def ols_coverage(n: int, bounds: GVDPBounds, *, replications: int, k: int, rho: float,
                 resamples: int, rng: int):  # fmt: skip
    """GVDP coverage of the OLS coefficients on n rows of :func:`ols_data`."""
    return gvdp_coverage(
        lambda gen: ols_data(gen, n=n), OLS_BETA, "ols", replications=replications, k=k, rho=rho,
        resamples=resamples, bounds=bounds, rng=rng,
    )  # fmt: skip


class RecordingNoise:
    """A NoiseSource that adds nothing and records every σ it was asked for."""

    kind = "simulation"

    def __init__(self) -> None:
        self.sigmas: list[np.ndarray] = []

    def add_laplace(self, values, scale):  # pragma: no cover - GVDP is Gaussian only
        raise AssertionError("GVDP must not use Laplace noise")

    def add_gaussian(self, values, sigma):
        self.sigmas.append(np.broadcast_to(sigma, np.shape(values)).copy())
        return np.asarray(values, dtype=float)
