"""Error metrics for private estimates, per group and overall.

All functions broadcast over leading (replicate) axes: group arrays have shape (..., k), global
arrays shape (...).
"""

from __future__ import annotations

import numpy as np

from dpcore._validate import positive_number


def normalized_error(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    r"""Normalized absolute error :math:`|\hat f - f| / |f|` (AAAI 2024, Def. 10's summands).

    Raises ``ValueError`` when a true value is 0, where the normalized error is undefined.
    """
    truth = np.asarray(truth, dtype=float)
    if np.any(truth == 0) or not np.all(np.isfinite(truth)):
        raise ValueError(
            "normalized error is undefined where the true value is 0 or not finite; got "
            f"`truth` = {truth!r}. Shift the value column or compare absolute errors instead"
        )
    return np.abs(np.asarray(estimate, dtype=float) - truth) / np.abs(truth)


def parity_error(
    group_estimates: np.ndarray,
    group_truth: np.ndarray,
    global_estimate: np.ndarray,
    global_truth: float,
    omega: float | None = None,
) -> np.ndarray:
    r"""Parity error φ (AAAI 2024, Def. 10).

    .. math:: \phi = \omega\left|\frac{f(X) - \mathcal M_f(X)}{f(X)}\right|
              + \frac{1}{k}\sum_{i=1}^{k}\left|\frac{f(G_i) - \mathcal M_f(G_i)}{f(G_i)}\right|

    The paper's text calls the group part an *average*, while its displayed formula (eq. 6) writes a
    plain sum. We take the average: it is what the text says, and it is what makes the paper's
    default ω = 1/k "weight the population-level estimate the same as any single-stratum estimate".
    The sum is k times the group part and ranks strategies identically at fixed k.
    """
    group_err = normalized_error(group_estimates, group_truth)
    k = group_err.shape[-1]
    weight = 1.0 / k if omega is None else positive_number("omega", omega)
    return weight * normalized_error(global_estimate, global_truth) + group_err.mean(axis=-1)


def worst_group_error(group_errors: np.ndarray) -> np.ndarray:
    """The largest group error, per replicate."""
    return np.max(group_errors, axis=-1)


def worst_to_best_ratio(group_errors: np.ndarray) -> np.ndarray:
    """Worst-group error over best-group error: 1 means every group pays the same.

    Infinite when the best group's error is exactly 0 and another's is not; NaN when all are 0.
    """
    errors = np.asarray(group_errors, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.max(errors, axis=-1) / np.min(errors, axis=-1)
