"""What the mean estimator tests share: replicates and slack of the seeded noise-law checks, the
clipped means derived by hand from the raw rows, and the check of a noise law's mean and variance."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpcore.analyses.mean.statistics import GroupValues

R = 20_000  # replicates for the noise-law checks
Z = 4.5  # standard errors of slack in the seeded statistical checks


def raw_groups(frame: pd.DataFrame, strata: GroupValues) -> list[np.ndarray]:
    """The raw rows of each group, in the order of ``strata.labels``."""
    return [frame.loc[frame["group"] == lab, "value"].to_numpy() for lab in strata.labels]


def clipped_means(frame, strata, low, high) -> np.ndarray:
    lows = np.broadcast_to(low, (strata.k,))
    highs = np.broadcast_to(high, (strata.k,))
    return np.array(
        [
            np.clip(x, lo, hi).mean()
            for x, lo, hi in zip(raw_groups(frame, strata), lows, highs, strict=True)
        ]
    )


def assert_mean_and_var(samples: np.ndarray, mean: np.ndarray, var: np.ndarray, kurt: float):
    """Column means ≈ ``mean`` within Z SE, column variances ≈ ``var`` within Z SE.

    ``kurt`` is the kurtosis of the noise law (3 Gaussian, 6 Laplace): Var(s²) ≈ σ⁴(κ − 1)/R.
    """
    reps = samples.shape[0]
    se_mean = np.sqrt(var / reps)
    np.testing.assert_array_less(np.abs(samples.mean(axis=0) - mean), Z * se_mean)
    rel_se_var = math.sqrt((kurt - 1) / reps)
    np.testing.assert_array_less(np.abs(samples.var(axis=0, ddof=1) / var - 1), Z * rel_se_var)
