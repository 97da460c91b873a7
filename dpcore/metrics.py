"""Error metrics for private estimates, per group and overall.

All functions broadcast over leading (replicate) axes: group arrays have shape (..., k), global
arrays shape (...).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from dpcore._validate import positive_int, positive_number
from dpcore.grouping import LABEL_SEPARATOR


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


def interval_score(
    low: np.ndarray, high: np.ndarray, truth: np.ndarray | float, alpha: float
) -> np.ndarray:
    r"""Interval score of a central (1 − α) interval [l, u] (Gneiting & Raftery 2007, eq. 43).

    .. math:: S_\alpha(l, u; x) = (u - l) + \frac{2}{\alpha}(l - x)\,\mathbb 1\{x < l\}
              + \frac{2}{\alpha}(x - u)\,\mathbb 1\{x > u\}

    Negatively oriented (smaller is better): the width, plus a penalty proportional to how far the
    truth ``x`` falls outside. Broadcasts over replicate axes; a NaN bound gives a NaN score.
    """
    alpha = positive_number("alpha", alpha)
    if alpha >= 1:
        raise ValueError(f"`alpha` must be a number with 0 < alpha < 1, got {alpha!r}")
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    truth = np.asarray(truth, dtype=float)
    below = np.where(truth < low, low - truth, 0.0)
    above = np.where(truth > high, truth - high, 0.0)
    return (high - low) + (2.0 / alpha) * (below + above)


def coverage(
    low: np.ndarray, high: np.ndarray, truth: np.ndarray | float, axis: int | None = None
) -> float | np.ndarray:
    r"""Share of intervals that contain the truth, :math:`\overline{\mathbb 1\{l \le x \le u\}}`.

    The empirical coverage that the interval score of Gneiting & Raftery (2007, eq. 43) rewards
    along with width. An interval with a NaN bound (e.g. a flagged, degenerate one) counts as not
    covering. Averages over ``axis`` (all elements by default).
    """
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    truth = np.asarray(truth, dtype=float)
    covered = (low <= truth) & (truth <= high)  # NaN compares False: not covered
    return covered.mean(axis=axis)


def binomial_band(
    level: float, replications: int, *, confidence: float = 0.95
) -> tuple[float, float]:
    r"""The coverages a correctly calibrated interval shows ``confidence`` of the time.

    With R replications of a procedure that covers with probability ``level``, the number covered
    is Binomial(R, level); the band is the central ``confidence`` of that law divided by R (exact
    binomial quantiles, not the normal approximation, which misplaces the band for small R or a
    level near 1). An observed coverage outside it is unlikely under correct calibration. Every
    coverage chart and summary in Strata Lab uses this band.
    """
    level = _probability("level", level)
    replications = positive_int("replications", replications)
    tail = (1 - _probability("confidence", confidence)) / 2
    low = stats.binom.ppf(tail, replications, level) / replications
    high = stats.binom.ppf(1 - tail, replications, level) / replications
    return float(low), float(high)


def clopper_pearson(
    covered: np.ndarray | int, replications: int, *, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact (Clopper & Pearson 1934) ``confidence`` interval for a coverage observed as
    ``covered`` of ``replications``: the Beta quantiles
    :math:`B(\alpha/2; c, R - c + 1)` and :math:`B(1 - \alpha/2; c + 1, R - c)`, with 0 and 1
    at the ends (c = 0, c = R). Vectorised over ``covered``."""
    replications = positive_int("replications", replications)
    tail = (1 - _probability("confidence", confidence)) / 2
    c = np.asarray(covered, dtype=float)
    with np.errstate(invalid="ignore"):  # the Beta's parameter is 0 at the ends; replaced below
        low = np.where(c > 0, stats.beta.ppf(tail, c, replications - c + 1), 0.0)
        high = np.where(c < replications, stats.beta.ppf(1 - tail, c + 1, replications - c), 1.0)
    return low, high


def _probability(name: str, value: float) -> float:
    value = float(value)
    if not 0 < value < 1:
        raise ValueError(f"`{name}` must be a number with 0 < {name} < 1, got {value!r}")
    return value


# --------------------------------------------------------------------------------------------
# Synthetic data: workload error and errors of means, per group and overall
# --------------------------------------------------------------------------------------------


def max_disparity(group_errors: np.ndarray) -> np.ndarray:
    r"""Largest gap between two groups' errors, :math:`\max_g e_g - \min_g e_g`, per replicate.

    The stratification paper plots a "max disparity" of the errors of means (AAAI 2024 arXiv,
    appendix C, Fig. 7a) without a formula; we read it as the spread of the group errors, which
    is 0 when every group is served equally and shrinks with ε as in that figure.
    """
    errors = np.asarray(group_errors, dtype=float)
    return np.max(errors, axis=-1) - np.min(errors, axis=-1)


@dataclass(frozen=True)
class GroupErrors:
    """Errors of a synthetic table per group and on all rows.

    ``groups`` is a Series indexed by group label (``" × "``-joined values of the ``by``
    columns, for the groups present in the real data); ``overall`` the same error on all rows.
    """

    groups: pd.Series
    overall: float

    def __post_init__(self) -> None:
        if not isinstance(self.groups, pd.Series):
            raise TypeError(f"`groups` must be a pandas Series, got {type(self.groups).__name__}")
        object.__setattr__(self, "overall", float(self.overall))

    @property
    def worst(self) -> float:
        """The largest group error."""
        return float(self.groups.max())

    @property
    def disparity(self) -> float:
        """:func:`max_disparity` of the group errors."""
        return float(max_disparity(self.groups.to_numpy()))


def _table_columns(
    real: object, synthetic: object, columns: object, exclude: tuple[str, ...]
) -> tuple[str, ...]:
    for name, frame in (("real", real), ("synthetic", synthetic)):
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"`{name}` must be a pandas DataFrame, got {type(frame).__name__}")
    if len(real) == 0:
        raise ValueError("`real` must have at least one row, got none")
    if columns is None:
        columns = [c for c in real.columns if c not in exclude]
    columns = (columns,) if isinstance(columns, str) else tuple(columns)
    missing = [c for c in (*columns, *exclude) if c not in real or c not in synthetic]
    if missing or not columns:
        raise ValueError(
            f"`columns` must name columns of both `real` and `synthetic`; missing {missing}, "
            f"got {list(columns)}"
        )
    return columns


def _shared_codes(real: pd.Series, synthetic: pd.Series) -> tuple[np.ndarray, np.ndarray, list]:
    """Codes of both columns' values (as text) over the sorted union of their categories."""
    values = np.concatenate([real.astype(str).to_numpy(), synthetic.astype(str).to_numpy()])
    codes, uniques = pd.factorize(values)  # hashing; sorting only the few categories
    order = np.argsort(uniques)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    codes = rank[codes]
    return codes[: len(real)], codes[len(real) :], uniques[order].tolist()


def _encoded(
    real: pd.DataFrame, synthetic: pd.DataFrame, columns: tuple[str, ...]
) -> tuple[np.ndarray, np.ndarray, list[list[str]]]:
    parts = [_shared_codes(real[c], synthetic[c]) for c in columns]
    real_codes = np.column_stack([p[0] for p in parts]).reshape(len(real), len(columns))
    synth_codes = np.column_stack([p[1] for p in parts]).reshape(len(synthetic), len(columns))
    return real_codes, synth_codes, [p[2] for p in parts]


def _groups(
    real: pd.DataFrame, synthetic: pd.DataFrame, by: tuple[str, ...]
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Group index of every real and synthetic row (-1: a group absent from the real rows)."""
    real_codes, synth_codes, categories = _encoded(real, synthetic, by)
    shape = tuple(len(c) for c in categories)
    real_key = np.ravel_multi_index(real_codes.T, shape)
    synth_key = np.ravel_multi_index(synth_codes.T, shape)
    keys, real_index = np.unique(real_key, return_inverse=True)
    position = np.minimum(np.searchsorted(keys, synth_key), len(keys) - 1)
    synth_index = np.where(keys[position] == synth_key, position, -1)
    labels = [
        LABEL_SEPARATOR.join(categories[j][c] for j, c in enumerate(combo))
        for combo in zip(*np.unravel_index(keys, shape), strict=True)
    ]
    return real_index, synth_index, labels


def _marginal_tables(
    codes: np.ndarray, group: np.ndarray, n_groups: int, axes: tuple[int, ...], shape: tuple
) -> np.ndarray:
    """Per group, the marginal on ``axes`` as proportions, shape (n_groups, cells).

    A group without rows gets an all-zero table.
    """
    keep = group >= 0
    cells = math.prod(shape)
    index = np.ravel_multi_index(codes[keep][:, list(axes)].T, shape) + group[keep] * cells
    counts = np.bincount(index, minlength=n_groups * cells).reshape(n_groups, cells)
    return counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)


def _workload_errors(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    columns: tuple[str, ...],
    way: int,
    groups: tuple[np.ndarray, np.ndarray, int],
) -> np.ndarray:
    """Def. 14's error of every group, shape (n_groups,), with marginals as proportions."""
    way = positive_int("way", way)
    if way > len(columns):
        raise ValueError(f"`way` must be at most the {len(columns)} columns, got {way}")
    real_codes, synth_codes, categories = _encoded(real, synthetic, columns)
    sizes = tuple(len(c) for c in categories)
    real_group, synth_group, n_groups = groups
    total = np.zeros(n_groups)
    workload = list(combinations(range(len(columns)), way))
    for axes in workload:
        shape = tuple(sizes[a] for a in axes)
        real_table = _marginal_tables(real_codes, real_group, n_groups, axes, shape)
        synth_table = _marginal_tables(synth_codes, synth_group, n_groups, axes, shape)
        total += np.abs(real_table - synth_table).sum(axis=1)
    return total / len(workload)


def workload_error(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    columns: Sequence[str] | None = None,
    *,
    way: int = 3,
) -> float:
    r"""All-``way``-way marginal workload error (AAAI 2024 arXiv, Def. 14; McKenna et al. 2022).

    .. math:: \mathrm{Error}(D, \hat D) = \frac{1}{k}\sum_{i=1}^{k}
              \left\lVert \frac{M_{S_i}(D)}{|D|} - \frac{M_{S_i}(\hat D)}{|\hat D|} \right\rVert_1

    over the k subsets :math:`S_i` of ``way`` of the ``columns`` (default: all columns of
    ``real``), with weights :math:`c_i = 1`; :math:`M_S` counts the rows in each cell of the
    marginal on S (Def. 13). Def. 14 divides by :math:`k|D|` and assumes :math:`|\hat D| = |D|`,
    where the two agree; we normalise each table by its own row count so tables of different
    sizes compare (a group's synthetic rows rarely number exactly its real rows). In [0, 2].
    Values are compared as text; numeric columns must be bucketed alike first
    (:func:`dpcore.analyses.synth.bucketize`).
    """
    columns = _table_columns(real, synthetic, columns, ())
    groups = (np.zeros(len(real), np.int64), np.zeros(len(synthetic), np.int64), 1)
    return float(_workload_errors(real, synthetic, columns, way, groups)[0])


def workload_error_by_group(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    by: str | Sequence[str],
    columns: Sequence[str] | None = None,
    *,
    way: int = 3,
) -> GroupErrors:
    """:func:`workload_error` within each group of the ``by`` columns, and on all rows.

    A group's error compares its real rows with the synthetic rows carrying the same ``by``
    values (AAAI 2024 arXiv, Fig. 9). ``columns`` default to the columns of ``real`` other than
    ``by``. Groups are those of the real rows; a group with no synthetic rows scores
    :math:`\\lVert M_S(D)/|D| \\rVert_1 = 1` per marginal. All groups and marginals are counted
    with one ``np.bincount`` per marginal over (group, cell) indices.
    """
    by = (by,) if isinstance(by, str) else tuple(by)
    columns = _table_columns(real, synthetic, columns, by)
    real_group, synth_group, labels = _groups(real, synthetic, by)
    per_group = _workload_errors(
        real, synthetic, columns, way, (real_group, synth_group, len(labels))
    )
    return GroupErrors(
        groups=pd.Series(per_group, index=labels, name=f"{way}-way workload error"),
        overall=workload_error(real, synthetic, columns, way=way),
    )


def mean_error_by_group(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    by: str | Sequence[str],
    columns: Sequence[str] | None = None,
) -> GroupErrors:
    r"""Normalized error of the means of all variables, per group and overall (AAAI 2024, Fig. 5).

    A categorical variable v is one-hot encoded, so its mean is the vector :math:`m_v` of
    category proportions; its normalized error is
    :math:`\lVert m_v - \hat m_v\rVert_1 / \lVert m_v\rVert_1 = \lVert m_v - \hat m_v\rVert_1`
    (:math:`\lVert m_v\rVert_1 = 1`, so a category absent from a group causes no division by
    zero), and f aggregates them by averaging over the variables:

    .. math:: e(G) = \frac{1}{d}\sum_{v=1}^{d} \lVert m_v(G) - \hat m_v(\hat G)\rVert_1,

    which is the 1-way :func:`workload_error_by_group`. Combine with
    :func:`synthetic_parity_error` for Def. 11's parity error.
    """
    return workload_error_by_group(real, synthetic, by, columns, way=1)


def synthetic_parity_error(errors: GroupErrors, omega: float | None = None) -> float:
    r"""Parity error (AAAI 2024 arXiv, Def. 11) of per-group and overall normalized errors.

    .. math:: \phi = \omega\, e(X) + \frac{1}{k}\sum_{i=1}^{k} e(G_i), \qquad \omega = 1/k
              \text{ by default,}

    with the group part averaged, as in :func:`parity_error`. For synthetic data the errors come
    from :func:`mean_error_by_group` (Fig. 5) or :func:`workload_error_by_group` (Fig. 9).
    """
    if not isinstance(errors, GroupErrors):
        raise TypeError(f"`errors` must be a GroupErrors, got {type(errors).__name__}")
    k = len(errors.groups)
    weight = 1.0 / k if omega is None else positive_number("omega", omega)
    return weight * errors.overall + float(errors.groups.mean())
