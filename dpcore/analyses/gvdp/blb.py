"""The bag of little bootstraps of GVDP (Covington et al., Alg. 2) and its batched fits.

A random partition of the n rows into k subsets; on each subset, r multinomial resamples of
total size n, drawn as integer row weights, so every estimator runs once per (subset, resample)
as a batched weighted fit (mean, weighted mean, OLS, logistic by Newton/IRLS).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, pdtr

from dpcore.analyses.gvdp.bounds import (
    ESTIMATORS,
    Data,
    Estimator,
)
from dpcore.foundations.validation import shown

NEWTON_STEPS = 25
"""At most this many Newton (IRLS) iterations of the logistic fit, started from 0 (our choice;
see :func:`fit_logistic`)."""

NEWTON_TOLERANCE = 1e-10
"""The logistic fit stops once every resample's Newton step is below this, relative to
1 + |β| (quadratic convergence makes the next step negligible)."""


RIDGE = 1e-6
r"""Logistic ridge :math:`\lambda = 10^{-6} n`: negligible against the Hessian (of order n) but
keeps a separated resample's Newton system solvable."""


_GUIDE_BINS = 1 << 12  # bins of the Poisson inverse-CDF guide table (exact; see poisson_counts)


def _array(name: str, value: object) -> np.ndarray:
    if isinstance(value, str | bytes) or value is None:
        raise TypeError(
            f"`{name}` must be a numeric array, got {type(value).__name__} {shown(value)}"
        )
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"`{name}` must be a numeric array, got {shown(value)}") from err
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            f"`{name}` must be finite (no NaN or inf), got {np.sum(~np.isfinite(arr))} bad entries"
        )
    return arr


def _columns(name: str, value: object) -> np.ndarray:
    arr = _array(name, value)
    if arr.ndim not in (1, 2) or arr.shape[0] < 2:
        raise ValueError(f"`{name}` must have shape (n,) or (n, d) with n >= 2, got {arr.shape}")
    return arr.reshape(arr.shape[0], -1)


def _vector(name: str, value: object, n: int) -> np.ndarray:
    arr = _array(name, value)
    if arr.shape != (n,):
        raise ValueError(f"`{name}` must have shape ({n},) to match the rows, got {arr.shape}")
    return arr


def _unpack(data: object, keys: tuple[str, str]) -> tuple[object, object]:
    if isinstance(data, Mapping):
        missing = [key for key in keys if key not in data]
        if missing:
            raise ValueError(f"`data` must have keys {list(keys)}, missing {missing}")
        return data[keys[0]], data[keys[1]]
    if isinstance(data, tuple | list) and len(data) == 2:
        return data[0], data[1]
    raise TypeError(
        f"`data` must be a pair {keys} or a mapping with those keys, got {type(data).__name__}"
    )


def prepare_rows(data: Data, estimator: object) -> tuple[tuple[np.ndarray, ...], int]:
    """Validated per-row arrays for ``estimator`` and the dimension d of its output."""
    if not isinstance(estimator, str):
        raise TypeError(
            f"`estimator` must be a string, got {type(estimator).__name__} {estimator!r}"
        )
    ESTIMATORS.check("estimator", estimator)
    if estimator == "mean":
        rows = _mean_rows(data)
    elif estimator == "weighted_mean":
        rows = _weighted_rows(data)
    else:
        rows = _regression_rows(data, logistic=estimator == "logistic")
    return rows, rows[0].shape[1]


def _mean_rows(data: object) -> tuple[np.ndarray]:
    if isinstance(data, tuple | list):
        raise TypeError("`data` for 'mean' must be an array x or {'x': x}, got a sequence")
    if isinstance(data, Mapping) and "x" not in data:
        raise ValueError(f"`data` must have key 'x', got keys {sorted(data)}")
    return (_columns("x", data["x"] if isinstance(data, Mapping) else data),)


def _weighted_rows(data: object) -> tuple[np.ndarray, np.ndarray]:
    raw_x, raw_w = _unpack(data, ("x", "weights"))
    x = _columns("x", raw_x)
    weights = _vector("weights", raw_w, x.shape[0])
    if not np.all(weights > 0):
        raise ValueError(f"`weights` must be > 0 everywhere, got minimum {weights.min()!r}")
    return x, weights


def _regression_rows(data: object, *, logistic: bool) -> tuple[np.ndarray, np.ndarray]:
    raw_X, raw_y = _unpack(data, ("X", "y"))
    X = _columns("X", raw_X)
    y = _vector("y", raw_y, X.shape[0])
    rank = np.linalg.matrix_rank(X)
    if rank < X.shape[1]:
        raise ValueError(
            f"`X` has rank {rank} < {X.shape[1]} columns: the coefficients are not identified "
            "(drop or combine collinear columns)"
        )
    if logistic and not (np.all((y == 0) | (y == 1)) and 0 < y.sum() < y.size):
        raise ValueError("`y` must hold 0/1 outcomes with both classes present for 'logistic'")
    return X, y


@dataclass(frozen=True, eq=False)
class Bag:
    r"""One run's bag of little bootstraps already drawn (by an engine's pass,
    :mod:`dpcore.engines.blb`): :math:`\hat\theta_i^{BLB}` and :math:`\hat V_i^{BLB}`, each
    (k, d), of a run on ``n`` rows, as :func:`run_blb` gives them from rows in memory.
    **Not private**: the input of the private stage only."""

    estimates: np.ndarray
    variances: np.ndarray
    n: int

    @property
    def k(self) -> int:
        return self.estimates.shape[0]

    @property
    def d(self) -> int:
        return self.estimates.shape[1]


def degrees_of_freedom_factor(subset_rows: int, fitted: int) -> float:
    r""":math:`b/(b - p)`: the correction of a subset's bootstrap variance for the p coefficients
    fitted on its b rows (p = 1 for a mean, each column on its own; the number of coefficients
    for a regression).

    A bootstrap resample draws from the subset's empirical law, whose variance has divisor b:
    a mean's bootstrap variance is :math:`(b-1)/b` of the unbiased one, 17% low on the rule's
    smallest subsets of 6 rows, and at large budgets, where the noise no longer hides it, the
    intervals covered 90–92% (issue 42, ``benchmarks/bench_coverage.py``). The same factor for a
    regression is the HC1 correction of the sandwich variance (MacKinnon & White 1985, *J.
    Econometrics* 29(3)), which the bootstrap estimates. Our choice: the paper uses the raw
    bootstrap variance, exact only as b grows (App. G.4).
    """
    return subset_rows / max(subset_rows - fitted, 1)


def run_blb(
    rows: tuple[np.ndarray, ...],
    estimator: Estimator,
    k: int,
    resamples: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Alg. 2: subset means :math:`\hat\theta_i^{BLB}` and variances :math:`\hat V_i^{BLB}`,
    each of shape (k, d), from r resamples of size n per subset; the variances corrected for
    the coefficients fitted on each subset's b rows (:func:`degrees_of_freedom_factor`)."""
    n = rows[0].shape[0]
    index, counts = partition_and_resample(n, k, resamples, rng)
    estimates = _FITS[estimator]([row[index] for row in rows], counts, n)
    if not np.all(np.isfinite(estimates)):
        raise ValueError(
            f"the {estimator!r} fit overflowed on a bootstrap resample; lower `k` so each subset "
            "has more rows, or rescale the data"
        )
    fitted = 1 if estimator in ("mean", "weighted_mean") else estimates.shape[-1]
    factor = degrees_of_freedom_factor(n // k, fitted)
    return estimates.mean(axis=1), estimates.var(axis=1, ddof=1) * factor


def partition_and_resample(
    n: int, k: int, resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    r"""A random partition into k subsets of b or b + 1 rows, and multinomial counts.

    Returns ``index`` (k, b_max) of row numbers (short subsets padded with row 0) and ``counts``
    (k, r, b_max) with :math:`(n_1,\dots,n_b) \sim \text{Multinomial}(n, \mathbf 1_b/b)` per
    (subset, resample) (Alg. 2 line 7) and 0 on the padding, so padded rows never contribute.
    """
    b, extra = divmod(n, k)
    width = b + (extra > 0)
    order = rng.permutation(n)
    index = np.zeros((k, width), dtype=np.intp)
    counts = np.zeros((k, resamples, width))
    index[extra:, :b] = order[extra * (b + 1) :].reshape(k - extra, b)
    counts[extra:, :, :b] = uniform_multinomial(n, b, (k - extra) * resamples, rng).reshape(
        k - extra, resamples, b
    )
    if extra:
        index[:extra] = order[: extra * (b + 1)].reshape(extra, b + 1)
        counts[:extra] = uniform_multinomial(n, b + 1, extra * resamples, rng).reshape(
            extra, resamples, b + 1
        )
    return index, counts


def uniform_multinomial(n: int, cells: int, rows: int, rng: np.random.Generator) -> np.ndarray:
    r"""``rows`` independent exact draws of :math:`\text{Multinomial}(n, \mathbf 1/\text{cells})`.

    Independent :math:`\text{Poisson}(\lambda)` counts with :math:`\lambda = (n - \sqrt n)/c`,
    conditioned on their sum S = s, are :math:`\text{Multinomial}(s, \mathbf 1/c)`; adding
    n − s further uniform draws makes them :math:`\text{Multinomial}(n, \mathbf 1/c)` whatever s
    is. Rows with s > n are redrawn (rejection keeps the law exact; it happens with probability
    ≈ 16 %). About 3× faster than ``Generator.multinomial``, which draws c binomials per row.
    """
    lam = (n - math.sqrt(n)) / cells
    counts = poisson_counts(lam, (rows, cells), rng)
    over = counts.sum(axis=1) > n
    while over.any():
        counts[over] = poisson_counts(lam, (int(over.sum()), cells), rng)
        over = counts.sum(axis=1) > n
    cells_of_draws = np.repeat(np.arange(0, rows * cells, cells), n - counts.sum(axis=1))
    cells_of_draws += rng.integers(0, cells, cells_of_draws.size)
    return counts + np.bincount(cells_of_draws, minlength=rows * cells).reshape(rows, cells)


@functools.lru_cache(maxsize=32)
def _poisson_tables(lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Poisson(λ) CDF times G, and a guide table: the draw for every bin [i, i + 1) of G·U that
    the scaled CDF does not cross, −1 for the bins it does."""
    top = int(lam + 12 * math.sqrt(lam) + 30)  # tail beyond this is below 1e-30
    # Scaling by G = 2**12 is exact in floating point, so comparing G·U with G·F is comparing U
    # with F.
    cdf = pdtr(np.arange(top), lam) * _GUIDE_BINS  # the Poisson CDF
    edges = np.arange(_GUIDE_BINS + 1)
    first = np.searchsorted(cdf, edges[:-1], side="right")
    last = np.searchsorted(cdf, edges[1:], side="left")
    return cdf, np.where(first == last, first, -1).astype(np.int32)


def poisson_counts(lam: float, size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    r"""Poisson draws by inversion, :math:`X = \#\{j : F(j) \le U\}`, through a guide table
    (exact for every U; a binary search settles the few % of U in bins the CDF crosses)."""
    cdf, guide = _poisson_tables(lam)
    scaled = rng.random(size)
    scaled *= _GUIDE_BINS
    draws = guide[scaled.astype(np.int32)]
    crossed = draws < 0
    draws[crossed] = np.searchsorted(cdf, scaled[crossed], side="right")
    return draws


def fit_mean(parts: list[np.ndarray], counts: np.ndarray, n: int) -> np.ndarray:
    r""":math:`\hat\theta_{i,c} = \sum_j n_j x_j / n`, shape (k, r, d)."""
    return counts @ parts[0] / n


def fit_weighted_mean(parts: list[np.ndarray], counts: np.ndarray, n: int) -> np.ndarray:
    r""":math:`\sum_j n_j w_j x_j / \sum_j n_j w_j`: the resample counts multiply the weights."""
    x, weights = parts
    effective = counts * weights[:, None, :]
    return effective @ x / effective.sum(axis=-1, keepdims=True)


def _outer_rows(X: np.ndarray) -> np.ndarray:
    """Per-row outer products :math:`x_j x_j^\\top`, flattened: (k, b, p·p)."""
    k, b, p = X.shape
    return (X[..., :, None] * X[..., None, :]).reshape(k, b, p * p)


def least_norm_solve(gram: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    r""":math:`(X^\top W X)^{-1} X^\top W y` per resample; where a resample's
    :math:`X^\top W X` is singular (a binary covariate constant within a subset, which on
    a rare category happens to a few of thousands of subsets), its minimum-norm least-squares
    fit (Moore–Penrose pseudo-inverse) instead.

    Our choice, not the paper's: GVDP's privacy holds for any estimate computed from one
    subset alone (sample and aggregate, Covington et al. §2, Alg. 4), so the fallback keeps it,
    and it moves one subset's estimate of k where a refusal would stop the whole release on an
    event a single added person can cause."""
    try:
        return np.linalg.solve(gram, rhs[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return (np.linalg.pinv(gram, hermitian=True) @ rhs[..., None])[..., 0]


def fit_ols(parts: list[np.ndarray], counts: np.ndarray, n: int) -> np.ndarray:
    r"""Weighted least squares :math:`(X^\top W X)^{-1} X^\top W y`, W = diag(counts), batched
    over the (k, r) resamples."""
    X, y = parts
    k, r, _ = counts.shape
    p = X.shape[-1]
    gram = (counts @ _outer_rows(X)).reshape(k, r, p, p)
    return least_norm_solve(gram, counts @ (X * y[..., None]))


def fit_logistic(parts: list[np.ndarray], counts: np.ndarray, n: int) -> np.ndarray:
    r"""Weighted logistic MLE by Newton (IRLS) steps from β = 0.

    Each step solves :math:`(X^\top W_\mu X + \lambda I)\,\delta = X^\top W(y - \mu) -
    \lambda\beta` with :math:`W = \operatorname{diag}(n_j)`, :math:`W_\mu = W\mu(1-\mu)`, for all
    (k, r) resamples at once. The ridge :math:`\lambda = 10^{-6}n` (:data:`RIDGE`) keeps a
    resample with separated classes finite. The batch moves in lock-step until every step is
    below :data:`NEWTON_TOLERANCE`, at most :data:`NEWTON_STEPS` steps (Newton on the logistic
    loss converges in well under 25 steps unless the data are nearly separated, and then the BLB
    assumptions fail anyway).
    """
    X, y = parts
    k, r, _ = counts.shape
    p = X.shape[-1]
    outer = _outer_rows(X)
    ridge = RIDGE * n
    beta = np.zeros((k, r, p))
    for _ in range(NEWTON_STEPS):
        mu = expit(beta @ np.swapaxes(X, -1, -2))  # (k, r, b)
        gram = ((counts * mu * (1 - mu)) @ outer).reshape(k, r, p, p) + ridge * np.eye(p)
        step = least_norm_solve(gram, (counts * (y[:, None, :] - mu)) @ X - ridge * beta)
        beta = beta + step
        # Newton converges quadratically: once every step is this small, the next would move β
        # by less than rounding, so the remaining iterations are skipped.
        if np.all(np.abs(step) <= NEWTON_TOLERANCE * (1 + np.abs(beta))):
            break
    return beta


_FITS: dict[str, Callable[[list[np.ndarray], np.ndarray, int], np.ndarray]] = {
    "mean": fit_mean,
    "weighted_mean": fit_weighted_mean,
    "ols": fit_ols,
    "logistic": fit_logistic,
}
