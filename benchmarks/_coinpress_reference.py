"""The authors' univariate CoinPress (UVMRec; Biswas, Dong, Kamath & Ullman 2020, AAAI 2024
appendix B, Alg. 1–2) transcribed step by step on the raw values: the plain baseline the
CoinPress benchmarks time ``dpcore`` against."""

from __future__ import annotations

import numpy as np

from dpcore.analyses.mean.coinpress import CoinPressMean


def reference_coinpress(
    values: np.ndarray, estimator: CoinPressMean, rho: float, rng: np.random.Generator
) -> float:
    """One release of ``estimator`` at budget ``rho`` on ``values``: per step (Alg. 2), clip
    the raw array with ``np.clip``, average, add Gaussian noise, shrink the interval; the
    estimate is the last interval's centre."""
    n = values.size
    low, high = estimator.prior
    rho_steps = np.array(estimator.rho_split) * rho
    for rho_i, beta_i in zip(rho_steps, estimator.step_betas(), strict=True):
        width = estimator.sigma * np.sqrt(2 * np.log(2 * n / beta_i))
        clipped = np.clip(values, low - width, high + width)
        noise_sd = (high - low + 2 * width) / n / np.sqrt(2 * rho_i)
        centre = clipped.mean() + rng.normal(0, noise_sd)
        half = np.sqrt(2 * (estimator.sigma**2 / n + noise_sd**2) * np.log(2 / beta_i))
        low, high = centre - half, centre + half
    return (low + high) / 2
