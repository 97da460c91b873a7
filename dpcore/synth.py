"""DP synthetic data for categorical tables, vanilla or stratified, and the numerics they share
with the samplers of :mod:`dpcore.sampling` (simplex projection, vectorized categorical draws).

Three synthesizers (:func:`synthesize`), each of the select–measure–project family discussed in
Rosenblatt, Stoyanovich & Musco (AAAI 2024, appendix C):

- ``"independent"`` — noisy 1-way marginals, rows drawn from their product;
- ``"mwem"`` — MWEM (Hardt, Ligett & McSherry 2012) over a workload of marginals: the exponential
  mechanism selects a marginal, the Laplace mechanism measures it, multiplicative updates project
  the dense joint distribution onto the measurements;
- ``"histogram"`` — the noisy full-joint histogram, i.e. the k-ary sampler of Raskhodnikova et al.
  (NeurIPS 2021, Alg. 3) on the joint domain.

**Vanilla** fits one model on all rows. **Stratified** (``strata=...``) fits one model per group,
each with the *full* ε — the groups are disjoint, so the release costs ε by parallel composition
(McSherry 2009, Thm. 4) — and draws ``n_rows × share`` rows from each group's model, where the
shares are public and supplied by the caller (AAAI 2024, "Stratified Data Synthesis").

Privacy model: pure ε-DP, neighbouring tables differ by adding or removing one row (one person).
Every Laplace draw goes through a :class:`~dpcore.mechanisms.NoiseSource` (numpy for previews,
OpenDP for releases); drawing rows from a fitted model is post-processing and uses the numpy
``rng``. Numeric columns are bucketed with public ``edges`` only, never edges derived from data.

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Literal

import numpy as np
import pandas as pd

from dpcore._validate import as_rng, positive_int, positive_number
from dpcore.accounting import PureDP
from dpcore.mechanisms import NoiseKind, NoiseSource, noise_source
from dpcore.strata import LABEL_SEPARATOR, PublicShares, _bucket_labels, _is_numeric_group_dtype

__all__ = [
    "MAX_HISTOGRAM_CELLS",
    "MAX_MWEM_CELLS",
    "METHODS",
    "SyntheticData",
    "bucketize",
    "draw_categorical",
    "project_simplex",
    "synthesize",
]

Method = Literal["independent", "mwem", "histogram"]
METHODS: dict[str, str] = {
    "independent": "Independent noisy 1-way marginals",
    "mwem": "MWEM: select marginals, measure them, project with multiplicative weights",
    "histogram": "Noisy histogram of the full joint domain",
}

MAX_HISTOGRAM_CELLS = 1_000_000
"""Largest joint domain (cells) that ``method="histogram"`` accepts."""

MAX_MWEM_CELLS = 8_000_000
"""Largest joint domain that ``method="mwem"`` keeps in memory (64 MB as float64)."""

ALL_ROWS_LABEL = "All"
"""Group label of a vanilla (unstratified) synthesis in :attr:`SyntheticData.group_rows`."""

_MWEM_INIT_FRACTION = 0.3  # share of ε for the 1-way marginals that initialise MWEM
_MWEM_FINAL_SWEEPS = 3  # passes over all measurements after the last round
_MWEM_FLOOR = 1e-6  # uniform mass mixed into every MWEM target; keeps the model positive


# --------------------------------------------------------------------------------------------
# Shared numerics: projection onto the simplex, categorical draws
# --------------------------------------------------------------------------------------------


def project_simplex(values: np.ndarray) -> np.ndarray:
    r"""Euclidean projection onto the probability simplex along the last axis.

    .. math:: \Pi(x) = \arg\min_{q \in \Delta_k} \lVert x - q \rVert_2 = \max(x - \tau, 0),

    with the sort-based threshold of Held, Wolfe & Crowder (1974) (Duchi et al. 2008, Fig. 1):
    sort :math:`u_1 \ge \dots \ge u_k`, let
    :math:`\rho = \max\{j : u_j - (\sum_{i \le j} u_i - 1)/j > 0\}` and
    :math:`\tau = (\sum_{i \le \rho} u_i - 1)/\rho`. Cost :math:`O(k \log k)` per row, vectorized
    over leading axes.

    :math:`\Pi(x)` is also a nearest point of the simplex in :math:`\ell_1`:
    :math:`\lVert x - \Pi(x)\rVert_1 = \sum_i (x_i)_- + |\sum_i (x_i)_+ - 1|`, the
    :math:`\ell_1` distance from x to the simplex (if :math:`\tau \ge 0`, positive coordinates
    only move down and negative ones up to 0; if :math:`\tau < 0`, every coordinate moves up).
    So the accuracy proof of Raskhodnikova
    et al. (NeurIPS 2021, Thm. 1.4), which uses :math:`\lVert \Pi(x) - x \rVert_1 \le
    \lVert p - x \rVert_1` for every distribution p, applies to this projection unchanged.
    """
    x = np.asarray(values, dtype=float)
    if x.ndim == 0 or x.shape[-1] == 0 or not np.all(np.isfinite(x)):
        raise ValueError(f"`values` must be a non-empty array of finite numbers, got {values!r}")
    u = -np.sort(-x, axis=-1)
    excess = np.cumsum(u, axis=-1) - 1.0
    positive = u - excess / np.arange(1, x.shape[-1] + 1) > 0  # a prefix of True values
    rho = positive.sum(axis=-1, keepdims=True)
    tau = np.take_along_axis(excess, rho - 1, axis=-1) / rho
    return np.maximum(x - tau, 0.0)


def draw_categorical(
    probs: np.ndarray, size: int, *, rng: np.random.Generator | int | None
) -> np.ndarray:
    """``size`` independent draws from each distribution in ``probs`` (..., k), by inverse CDF.

    Returns integer codes of shape ``probs.shape[:-1] + (size,)``. All rows are drawn with one
    ``searchsorted`` over the concatenated CDFs, each shifted by its row number.
    """
    p = np.asarray(probs, dtype=float)
    k = p.shape[-1]
    cdf = np.cumsum(p.reshape(-1, k), axis=1)
    cdf /= cdf[:, -1:]
    rows = np.arange(cdf.shape[0])[:, None]
    u = as_rng(rng).random((cdf.shape[0], size))
    flat = np.searchsorted((cdf + rows).ravel(), (u + rows).ravel(), side="right")
    codes = np.minimum(flat.reshape(u.shape) - rows * k, k - 1)
    return codes.reshape(p.shape[:-1] + (size,))


# --------------------------------------------------------------------------------------------
# Result
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SyntheticData:
    """A synthetic table and what it cost.

    Attributes
    ----------
    frame
        The synthetic rows; every column categorical with the full domain as its categories.
    method
        The synthesizer (a key of :data:`METHODS`).
    budget
        Privacy cost of the release: ε-DP under add/remove-one neighbours, also when stratified
        (parallel composition over disjoint groups).
    strata
        The stratification columns, empty for vanilla.
    group_rows
        Synthetic rows per group (index: group labels; ``"All"`` for vanilla).
    domain
        Column → categories, in code order.
    domain_from_data
        Columns whose categories were read from the data (no ``domain`` given): the category
        *set* is then treated as public, as a schema would be. The UI should say so.
    selected
        Group → marginals that MWEM selected, in order (empty for other methods). Each marginal is
        a tuple of column names; releasing them is post-processing of DP selections.
    noise
        ``"simulation"`` (numpy, a preview) or ``"secure"`` (OpenDP, a release).
    """

    frame: pd.DataFrame
    method: Method
    budget: PureDP
    strata: tuple[str, ...]
    group_rows: pd.Series
    domain: Mapping[str, tuple[str, ...]]
    domain_from_data: tuple[str, ...] = ()
    selected: Mapping[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    noise: NoiseKind = "simulation"

    def __post_init__(self) -> None:
        if not isinstance(self.frame, pd.DataFrame):
            raise TypeError(f"`frame` must be a pandas DataFrame, got {type(self.frame).__name__}")
        _check_method(self.method)
        if not isinstance(self.budget, PureDP):
            raise TypeError(f"`budget` must be a PureDP budget, got {self.budget!r}")
        if int(self.group_rows.sum()) != len(self.frame):
            raise ValueError(
                f"`group_rows` must add up to the {len(self.frame):,} rows of `frame`, got "
                f"{int(self.group_rows.sum()):,}"
            )


# --------------------------------------------------------------------------------------------
# Encoding: numeric columns bucketed with public edges, categories as integer codes
# --------------------------------------------------------------------------------------------


def _check_edges(edges: object) -> dict[str, np.ndarray]:
    if edges is None:
        return {}
    if not isinstance(edges, Mapping):
        raise TypeError(
            f"`edges` must be a mapping {{column: [e0, e1, ...]}}, got {type(edges).__name__}"
        )
    out = {}
    for col, seq in edges.items():
        try:
            arr = np.asarray(seq, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"`edges[{col!r}]` must be a list of numbers, got {seq!r}") from None
        if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)):
            raise ValueError(
                f"`edges[{col!r}]` must be a non-empty list of finite numbers, got {seq!r}"
            )
        if np.any(np.diff(arr) <= 0):
            raise ValueError(f"`edges[{col!r}]` must be strictly increasing, got {seq!r}")
        out[col] = arr
    return out


def _bucket_codes(series: pd.Series, name: str, edges: np.ndarray) -> tuple[np.ndarray, tuple]:
    """Bucket codes of a numeric column (Strata's convention: a value at an edge goes up)."""
    if not _is_numeric_group_dtype(series):
        raise ValueError(
            f"`edges` were given for column {name!r}, but it is not numeric (dtype "
            f"{series.dtype}); bucket edges apply to numeric columns only"
        )
    x = series.to_numpy(dtype=float, na_value=np.nan)
    if np.isnan(x).any():
        raise ValueError(f"column {name!r} has missing values; drop or impute them first")
    labels = tuple(_bucket_labels(tuple(float(e) for e in edges)))
    return np.searchsorted(edges, x, side="right").astype(np.int64), labels


def bucketize(frame: pd.DataFrame, edges: Mapping[str, Sequence[float]]) -> pd.DataFrame:
    """A copy of ``frame`` with each numeric column of ``edges`` replaced by its bucket labels.

    Edges :math:`e_0 < \\dots < e_m` are public cut points; the buckets are ``"< e0"``,
    ``"[e0, e1)"``, …, ``"≥ em"`` (the convention of :class:`~dpcore.strata.Strata`; a value at
    an edge goes to the upper bucket). Use it to compare real rows with :func:`synthesize` output.
    """
    frame = _check_frame(frame)
    out = frame.copy()
    for col, arr in _check_edges(edges).items():
        if col not in frame.columns:
            raise ValueError(f"`edges` names unknown column {col!r}; {_available(frame)}")
        codes, labels = _bucket_codes(frame[col], col, arr)
        out[col] = pd.Categorical.from_codes(codes, categories=list(labels))
    return out


def _category_codes(
    series: pd.Series, name: str, domain: Sequence[str] | None
) -> tuple[np.ndarray, tuple]:
    if _is_numeric_group_dtype(series):
        raise ValueError(
            f"column {name!r} is numeric (dtype {series.dtype}) and needs public bucket edges, "
            f"e.g. `edges={{{name!r}: [25, 45, 65]}}`; Strata Lab never derives edges from the "
            "data. If the numbers are category codes, convert the column to text first"
        )
    if series.isna().any():
        raise ValueError(f"column {name!r} has missing values; give them an explicit category")
    values = series.astype(str).to_numpy()
    labels = tuple(sorted(pd.unique(values))) if domain is None else tuple(domain)
    codes = pd.Index(labels).get_indexer(values).astype(np.int64)
    if np.any(codes < 0):
        outside = sorted(set(values[codes < 0]))[:5]
        raise ValueError(f"column {name!r} has values outside `domain[{name!r}]`: {outside}")
    return codes, labels


def _encode(
    frame: pd.DataFrame,
    columns: tuple[str, ...],
    edges: Mapping[str, np.ndarray],
    domain: Mapping[str, Sequence[str]],
) -> tuple[np.ndarray, dict[str, tuple[str, ...]]]:
    """Integer codes (n, len(columns)) and each column's categories."""
    codes, labels = [], {}
    for col in columns:
        if col in edges:
            c, labels[col] = _bucket_codes(frame[col], col, edges[col])
        else:
            c, labels[col] = _category_codes(frame[col], col, domain.get(col))
        codes.append(c)
    return np.column_stack(codes), labels


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _check_frame(frame: object) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}")
    return frame


def _available(frame: pd.DataFrame) -> str:
    return "available columns: " + ", ".join(str(c) for c in frame.columns)


def _check_method(method: object) -> Method:
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {sorted(METHODS)}, got {method!r}")
    return method


def _names(name: str, value: object) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else value
    names = tuple(names) if isinstance(names, Iterable) else (None,)
    if not all(isinstance(c, str) for c in names):
        raise TypeError(f"`{name}` must be a column name or a list of column names, got {value!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"`{name}` must not repeat a column, got {list(names)}")
    return names


def _check_columns(
    frame: pd.DataFrame, columns: object, strata: tuple[str, ...], edges: Mapping
) -> tuple[str, ...]:
    if columns is None:
        columns = tuple(
            c for c in frame.columns if c in edges or not _is_numeric_group_dtype(frame[c])
        )
        if not columns:
            raise ValueError(
                "`frame` has no categorical columns to synthesize; pass public bucket `edges` "
                "for numeric columns, or name the `columns`"
            )
    columns = _names("columns", columns)
    if not columns:
        raise ValueError("`columns` must name at least one column, got none")
    unknown = [c for c in (*columns, *strata, *edges) if c not in frame.columns]
    if unknown:
        raise ValueError(f"unknown column(s) {unknown}; {_available(frame)}")
    unused = [c for c in edges if c not in columns and c not in strata]
    if unused:
        raise ValueError(f"`edges` were given for {unused}, which are not synthesized columns")
    if not [c for c in columns if c not in strata]:
        raise ValueError(
            f"`columns` {list(columns)} has no column besides the `strata`; add columns to model"
        )
    return columns


def _check_domain(domain: object, output: tuple[str, ...]) -> Mapping[str, tuple[str, ...]]:
    if domain is None:
        return {}
    if not isinstance(domain, Mapping):
        raise TypeError(f"`domain` must be a mapping {{column: categories}}, got {domain!r}")
    unused = [c for c in domain if c not in output]
    if unused:
        raise ValueError(f"`domain` was given for {unused}, which are not synthesized columns")
    out = {}
    for col, cats in domain.items():
        cats = tuple(str(c) for c in cats)
        if not cats or len(set(cats)) != len(cats):
            raise ValueError(f"`domain[{col!r}]` must list distinct categories, got {cats!r}")
        out[col] = cats
    return out


# --------------------------------------------------------------------------------------------
# Groups and public shares
# --------------------------------------------------------------------------------------------


def _share_items(shares: object) -> list[tuple[object, float]]:
    if isinstance(shares, PublicShares):
        if not shares.labels:
            raise ValueError("`shares` must record the group labels it is aligned with")
        return list(zip(shares.labels, shares.values.tolist(), strict=True))
    if isinstance(shares, pd.Series):
        return list(shares.items())
    if isinstance(shares, Mapping):
        return list(shares.items())
    raise TypeError(
        "`shares` must be a PublicShares, a mapping {group: share} or a Series indexed by group, "
        f"got {type(shares).__name__}"
    )


def _group_key(key: object, strata: tuple[str, ...]) -> tuple[str, ...]:
    parts = (
        tuple(str(k) for k in key)
        if isinstance(key, tuple)
        else tuple(str(key).split(LABEL_SEPARATOR) if len(strata) > 1 else (str(key),))
    )
    if len(parts) != len(strata):
        raise ValueError(
            f"`shares` key {key!r} must give one value per strata column {list(strata)}, e.g. "
            f"{LABEL_SEPARATOR.join(strata)!r} or a tuple"
        )
    return parts


def _check_shares(
    shares: object, strata: tuple[str, ...], labels: Mapping[str, tuple[str, ...]]
) -> tuple[np.ndarray, np.ndarray]:
    """Group codes (g, s) in the strata columns' categories, and their shares (g,)."""
    keys, values = [], []
    for key, share in _share_items(shares):
        parts = _group_key(key, strata)
        for col, part in zip(strata, parts, strict=True):
            if part not in labels[col]:
                raise ValueError(
                    f"`shares` has group {key!r}, but {part!r} is not a category of {col!r} "
                    f"({list(labels[col])})"
                )
        keys.append([labels[col].index(part) for col, part in zip(strata, parts, strict=True)])
        values.append(share)
    weights = np.asarray(values, dtype=float)
    if weights.size == 0 or not np.all(np.isfinite(weights) & (weights >= 0)):
        raise ValueError(f"`shares` must be finite and >= 0, got {values!r}")
    if not math.isclose(weights.sum(), 1.0, abs_tol=1e-9):
        raise ValueError(f"`shares` must sum to 1, got a sum of {weights.sum()!r}")
    groups = np.asarray(keys, dtype=np.int64)
    if len(np.unique(groups, axis=0)) != len(groups):
        raise ValueError("`shares` lists a group more than once")
    return groups, weights


def _assign_groups(row_codes: np.ndarray, groups: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """Index of each row's group in ``groups``; raises if a row's group has no public share."""
    lookup = np.full(math.prod(sizes), -1, dtype=np.int64)
    lookup[np.ravel_multi_index(groups.T, sizes)] = np.arange(len(groups))
    index = lookup[np.ravel_multi_index(row_codes.T, sizes)]
    if np.any(index < 0):
        raise ValueError(
            f"{int(np.sum(index < 0)):,} rows belong to groups without a public share in "
            "`shares`; give every group of the data a share (it may be 0)"
        )
    return index


def _allocate(n_rows: int, weights: np.ndarray) -> np.ndarray:
    """Rows per group, :math:`\\approx n w_g`, by largest remainders (Hamilton's method)."""
    exact = n_rows * weights
    counts = np.floor(exact).astype(np.int64)
    short = n_rows - int(counts.sum())
    counts[np.argsort(-(exact - counts), kind="stable")[:short]] += 1
    return counts


# --------------------------------------------------------------------------------------------
# Measurement and models
# --------------------------------------------------------------------------------------------


def _marginal_counts(
    codes: np.ndarray, sizes: tuple[int, ...], axes: tuple[int, ...]
) -> np.ndarray:
    shape = tuple(sizes[a] for a in axes)
    flat = np.ravel_multi_index(codes[:, list(axes)].T, shape) if len(codes) else np.zeros(0, int)
    return np.bincount(flat, minlength=math.prod(shape)).astype(float).reshape(shape)


def _model_marginal(joint: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return np.einsum(joint, list(range(joint.ndim)), list(axes))


def _model_marginals(
    joint: np.ndarray, targets: list[tuple[int, ...]]
) -> dict[tuple[int, ...], np.ndarray]:
    """Many marginals of ``joint`` at once, sharing partial sums.

    Axes are summed out one at a time, largest first, in one canonical order; every partial sum
    is cached, so targets that drop the same large axes share the passes over the full joint.
    """
    order = sorted(range(joint.ndim), key=lambda a: -joint.shape[a])
    cache: dict[tuple[int, ...], np.ndarray] = {(): joint}

    def summed(removed: tuple[int, ...]) -> np.ndarray:
        if removed not in cache:
            parent = summed(removed[:-1])
            position = sum(1 for a in range(removed[-1]) if a not in removed[:-1])
            cache[removed] = parent.sum(axis=position)
        return cache[removed]

    return {axes: summed(tuple(a for a in order if a not in axes)) for axes in targets}


def _to_distribution(noisy_counts: np.ndarray, total: float) -> np.ndarray:
    """Post-processing: the projection of noisy counts / total onto the simplex."""
    return project_simplex(noisy_counts.ravel() / total).reshape(noisy_counts.shape)


def _noisy_total(noisy: list[np.ndarray]) -> float:
    r"""Estimate of the group size n from noisy marginals with equal noise scale, at least 1.

    Marginal j sums to n plus noise of variance :math:`\propto K_j` (its cell count), so the
    inverse-variance average :math:`\hat n = \sum_j (S_j/K_j) / \sum_j (1/K_j)` is used.
    """
    weights = np.array([1 / m.size for m in noisy])
    return max(float(np.dot(weights, [m.sum() for m in noisy]) / weights.sum()), 1.0)


def _fit_independent(
    codes: np.ndarray, sizes: tuple[int, ...], epsilon: float, noise: NoiseSource
) -> list[np.ndarray]:
    r"""Noisy 1-way marginals: d histograms have L1 sensitivity d, so Laplace scale d/ε."""
    d = len(sizes)
    noisy = [noise.add_laplace(_marginal_counts(codes, sizes, (j,)), d / epsilon) for j in range(d)]
    total = _noisy_total(noisy)
    return [_to_distribution(m, total) for m in noisy]


def _fit_histogram(
    codes: np.ndarray, sizes: tuple[int, ...], epsilon: float, noise: NoiseSource
) -> np.ndarray:
    """Noisy full-joint histogram (sensitivity 1, Laplace scale 1/ε), projected to the simplex."""
    noisy = noise.add_laplace(_marginal_counts(codes, sizes, tuple(range(len(sizes)))), 1 / epsilon)
    return _to_distribution(noisy, _noisy_total([noisy]))


def _outer(marginals: list[np.ndarray]) -> np.ndarray:
    joint = marginals[0]
    for m in marginals[1:]:
        joint = np.multiply.outer(joint, m)
    return joint


def _floored(target: np.ndarray) -> np.ndarray:
    return (1 - _MWEM_FLOOR) * target + _MWEM_FLOOR / target.size


def _ipf_step(joint: np.ndarray, axes: tuple[int, ...], target: np.ndarray) -> None:
    """In place: rescale ``joint`` so its marginal on ``axes`` equals ``target`` (KL projection)."""
    current = _model_marginal(joint, axes)
    shape = [joint.shape[a] if a in axes else 1 for a in range(joint.ndim)]
    joint *= (target / np.maximum(current, np.finfo(float).tiny)).reshape(shape)


def _exponential_mechanism(scores: np.ndarray, epsilon: float, noise: NoiseSource) -> int:
    r"""Index i with probability :math:`\propto \exp(\varepsilon\, q_i / (2\Delta))`, Δ = 1.

    Gumbel-max: :math:`\arg\max_i \varepsilon q_i/2 + G_i` with :math:`G_i = -\ln|L_i|`,
    :math:`L_i \sim \mathrm{Laplace}(1)` (then :math:`|L_i| \sim \mathrm{Exp}(1)` and
    :math:`-\ln|L_i| \sim \mathrm{Gumbel}(0, 1)`), so the draws come from the noise source.
    """
    gumbel = -np.log(np.abs(noise.add_laplace(np.zeros(len(scores)), 1.0)))
    return int(np.argmax(epsilon * scores / 2 + gumbel))


class _Measurements:
    """Noisy marginals by attribute set; repeated measurements are averaged by inverse variance."""

    def __init__(self, total: float) -> None:
        self.total = total
        self._sums: dict[tuple[int, ...], tuple[np.ndarray, float]] = {}

    def add(self, axes: tuple[int, ...], noisy: np.ndarray, scale: float) -> np.ndarray:
        """Record a measurement with Laplace scale ``scale``; return the marginal's target."""
        weighted, weight = self._sums.get(axes, (0.0, 0.0))
        self._sums[axes] = (weighted + noisy / scale**2, weight + 1 / scale**2)
        return self.target(axes)

    def target(self, axes: tuple[int, ...]) -> np.ndarray:
        weighted, weight = self._sums[axes]
        return _floored(_to_distribution(weighted / weight, self.total))

    def __iter__(self):
        return iter(list(self._sums))


def _fit_mwem(
    codes: np.ndarray,
    sizes: tuple[int, ...],
    epsilon: float,
    noise: NoiseSource,
    *,
    rounds: int,
    way: int,
) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """Budget-aware MWEM over the 1- to ``way``-way marginals (see :func:`synthesize`).

    Returns the dense joint distribution and the selected marginals in order.
    """
    d = len(sizes)
    workload = [axes for r in range(1, min(way, d) + 1) for axes in combinations(range(d), r)]
    eps_init = _MWEM_INIT_FRACTION * epsilon
    scale = 2 * rounds / (epsilon - eps_init)  # each round: ε_r/2 to select, ε_r/2 to measure
    noisy = [
        noise.add_laplace(_marginal_counts(codes, sizes, (j,)), d / eps_init) for j in range(d)
    ]
    measured = _Measurements(_noisy_total(noisy))
    joint = _outer([measured.add((j,), m, d / eps_init) for j, m in enumerate(noisy)])
    truth = {axes: _marginal_counts(codes, sizes, axes) for axes in workload}
    penalty = np.array([scale * truth[axes].size for axes in workload])
    chosen: list[tuple[int, ...]] = []
    for _ in range(rounds):
        model = _model_marginals(joint, workload)
        errors = np.array([np.abs(truth[a] - measured.total * model[a]).sum() for a in workload])
        axes = workload[_exponential_mechanism(errors - penalty, 1 / scale, noise)]
        chosen.append(axes)
        _ipf_step(joint, axes, measured.add(axes, noise.add_laplace(truth[axes], scale), scale))
    for _ in range(_MWEM_FINAL_SWEEPS):
        for axes in measured:
            _ipf_step(joint, axes, measured.target(axes))
    return joint / joint.sum(), chosen


def _sample_joint(joint: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    flat = draw_categorical(joint.ravel(), size, rng=rng)
    return np.column_stack(np.unravel_index(flat, joint.shape)).reshape(size, joint.ndim)


def _sample_product(marginals: list[np.ndarray], size: int, rng: np.random.Generator) -> np.ndarray:
    return np.column_stack([draw_categorical(m, size, rng=rng) for m in marginals])


def _check_domain_size(method: Method, sizes: tuple[int, ...], columns: tuple[str, ...]) -> None:
    cells = math.prod(sizes)
    limit = {"histogram": MAX_HISTOGRAM_CELLS, "mwem": MAX_MWEM_CELLS}.get(method)
    if limit is not None and cells > limit:
        raise ValueError(
            f"`method={method!r}` keeps the full joint domain of {list(columns)} in memory: "
            f"{cells:,} cells, above its limit of {limit:,}. Model fewer columns, use coarser "
            "bucket edges, stratify (the strata columns leave the model), or use "
            "method='independent'"
        )


def _fit_and_sample(
    codes: np.ndarray,
    sizes: tuple[int, ...],
    size: int,
    *,
    method: Method,
    epsilon: float,
    noise: NoiseSource,
    rng: np.random.Generator,
    rounds: int,
    way: int,
) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    if method == "independent":
        return _sample_product(_fit_independent(codes, sizes, epsilon, noise), size, rng), []
    if method == "histogram":
        return _sample_joint(_fit_histogram(codes, sizes, epsilon, noise), size, rng), []
    joint, chosen = _fit_mwem(codes, sizes, epsilon, noise, rounds=rounds, way=way)
    return _sample_joint(joint, size, rng), chosen


# --------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------


def _source(noise: object, generator: np.random.Generator) -> NoiseSource:
    if isinstance(noise, str):
        return noise_source(noise, rng=generator if noise == "simulation" else None)
    if not hasattr(noise, "add_laplace"):
        raise TypeError(f"`noise` must be 'simulation', 'secure' or a NoiseSource, got {noise!r}")
    return noise


def _fit_groups(
    codes: np.ndarray,
    index: np.ndarray,
    sizes: tuple[int, ...],
    counts: np.ndarray,
    **fit: object,
) -> list[tuple[np.ndarray, list[tuple[int, ...]]]]:
    """Per group g: ``counts[g]`` synthetic rows (codes) from a model fitted on the group's rows."""
    order = np.argsort(index, kind="stable")
    bounds = np.searchsorted(index[order], np.arange(len(counts) + 1))
    out = []
    for g, count in enumerate(counts.tolist()):
        if count == 0:
            out.append((np.zeros((0, len(sizes)), dtype=np.int64), []))
            continue
        rows = codes[order[bounds[g] : bounds[g + 1]]]
        out.append(_fit_and_sample(rows, sizes, count, **fit))
    return out


def _assemble(
    fitted: list[tuple[np.ndarray, list]],
    groups: np.ndarray,
    model_cols: tuple[str, ...],
    strata_cols: tuple[str, ...],
    output: tuple[str, ...],
    labels: Mapping[str, tuple[str, ...]],
) -> pd.DataFrame:
    """The synthetic frame: model columns from the draws, strata columns set to each group."""
    counts = [len(rows) for rows, _ in fitted]
    model = np.concatenate([rows for rows, _ in fitted])
    data = {c: model[:, j] for j, c in enumerate(model_cols)}
    data |= {c: np.repeat(groups[:, j], counts) for j, c in enumerate(strata_cols)}
    return pd.DataFrame(
        {c: pd.Categorical.from_codes(data[c], categories=list(labels[c])) for c in output}
    )


def synthesize(
    frame: pd.DataFrame,
    columns: Sequence[str] | None = None,
    *,
    method: Method,
    epsilon: float,
    n_rows: int,
    strata: str | Sequence[str] | None = None,
    shares: PublicShares | Mapping | pd.Series | None = None,
    rng: np.random.Generator | int | None = None,
    edges: Mapping[str, Sequence[float]] | None = None,
    domain: Mapping[str, Sequence[str]] | None = None,
    rounds: int = 6,
    way: int = 3,
    noise: NoiseKind | NoiseSource = "simulation",
) -> SyntheticData:
    r"""ε-DP synthetic categorical data, vanilla or stratified (AAAI 2024, appendix C).

    **Vanilla** (``strata=None``): one model of ``columns`` fitted on all rows with budget ε;
    ``n_rows`` rows drawn from it. **Stratified**: for each group g of the ``strata`` columns a
    model of the other columns is fitted on the group's rows :math:`G_g` with the full ε, and
    :math:`n_g` rows are drawn from it with the strata columns set to g's values, where
    :math:`n_g \approx` ``n_rows`` :math:`\cdot w_g` (largest remainders, so
    :math:`\sum_g n_g` = ``n_rows``) and :math:`w_g` are the caller's public ``shares``. Groups
    are disjoint, so the release is ε-DP by parallel composition. The groups are those of
    ``shares`` — a public list — so a group with a share but no rows is fitted to noise alone,
    and a row whose group has no share is an error.

    Models (neighbours: add/remove one row; Laplace noise through ``noise``):

    - ``"independent"``: the d 1-way marginals :math:`M_j(D)` with
      :math:`\mathrm{Lap}(d/\varepsilon)` per cell (L1 sensitivity d), each projected onto the
      simplex (:func:`project_simplex`); columns drawn independently.
    - ``"histogram"``: the full-joint histogram with :math:`\mathrm{Lap}(1/\varepsilon)` per
      cell, projected onto the simplex — the k-ary sampler (Raskhodnikova et al. 2021, Alg. 3)
      on the joint domain, counts instead of proportions because n is not public under
      add/remove. Refused above :data:`MAX_HISTOGRAM_CELLS` cells.
    - ``"mwem"``: MWEM (Hardt, Ligett & McSherry 2012) with whole marginals as queries, made
      budget-aware as in AIM (McKenna et al. 2022) — the select–measure–project loop of AAAI
      2024, app. C. A share :math:`\varepsilon_0 = 0.3\varepsilon` measures the d 1-way
      marginals (:math:`\mathrm{Lap}(d/\varepsilon_0)`); their projected product is the initial
      model p, and their noisy sums :math:`S_j` give :math:`\hat n = \sum_j (S_j/K_j) /
      \sum_j (1/K_j)` (inverse-variance weights; :math:`K_j` cells). Each of the T = ``rounds``
      rounds spends :math:`\varepsilon_r = 0.7\varepsilon/T`, so the total is ε by sequential
      composition:

      1. **select** a marginal S among all 1- to ``way``-way marginals with the exponential
         mechanism (:math:`\varepsilon_r/2`), score :math:`q(S) = \lVert M_S(D) - \hat n\,
         M_S(p)\rVert_1 - b\,|\Omega_S|`, sensitivity 1 (the penalty, AIM's, is the expected
         L1 error :math:`E|\mathrm{Lap}(b)| = b` per cell of measuring S; it is data-free and
         keeps a small group from spending its budget on marginals that noise would swamp);
      2. **measure** :math:`M_S(D) + \mathrm{Lap}(b)`, :math:`b = 2/\varepsilon_r`; repeated
         measurements of one marginal are averaged with inverse-variance weights;
      3. **project** with the multiplicative update :math:`p(x) \leftarrow p(x)\,y_S(x_S) /
         M_S(p)(x_S)`, :math:`y_S` the simplex projection of the measurement over
         :math:`\hat n`.

      Three sweeps over all measured marginals close the fit. The update is the KL
      (I-)projection of p onto one measured marginal — iterative proportional fitting — of
      which MWEM's :math:`p(x)\exp(q(x)(m - q(p))/2n)` is a first-order version that converges
      slowly when a marginal's cells hold small probabilities. Targets are mixed with
      :math:`10^{-6}` of the uniform distribution so p stays positive and a cell zeroed by one
      noisy measurement can be revived by another. p is a dense array over the joint domain:
      refused above :data:`MAX_MWEM_CELLS` cells.

    Parameters
    ----------
    frame
        The confidential rows.
    columns
        Columns to synthesize; by default every non-numeric column and every column in
        ``edges``. Strata columns not listed are appended to the output.
    method
        ``"independent"``, ``"mwem"`` or ``"histogram"``.
    epsilon
        Total ε (> 0) of the release.
    n_rows
        Synthetic rows to draw.
    strata, shares
        Stratification columns and their public group shares: a :class:`PublicShares` with
        labels, or a mapping / Series from a group (a tuple of values, or values joined by
        ``" × "``) to its share; shares are >= 0 and sum to 1.
    rng
        Seeds the simulation noise and the draws of rows.
    edges
        Public bucket edges for numeric columns (see :func:`bucketize`). Required for every
        numeric column used; never derived from data.
    domain
        Public categories per column. Columns without one use the categories in the data, which
        treats the category *set* as public; they are listed in
        :attr:`SyntheticData.domain_from_data`.
    rounds, way
        MWEM's number of rounds T and the largest order of the marginals it selects from.
    noise
        ``"simulation"`` (numpy, seeded by ``rng``), ``"secure"`` (OpenDP) or a
        :class:`~dpcore.mechanisms.NoiseSource`.

    Returns
    -------
    SyntheticData
    """
    frame = _check_frame(frame)
    method = _check_method(method)
    epsilon = positive_number("epsilon", epsilon)
    n_rows = positive_int("n_rows", n_rows)
    rounds, way = positive_int("rounds", rounds), positive_int("way", way)
    strata_cols = () if strata is None else _names("strata", strata)
    if strata is not None and not strata_cols:
        raise ValueError("`strata` must name at least one column, got none")
    if (shares is None) != (strata is None):
        raise ValueError(
            "`shares` must be given exactly when `strata` is: a stratified synthesis draws each "
            f"group in proportion to its public share; got strata={strata!r}, shares={shares!r}"
        )
    edges_arr = _check_edges(edges)
    columns = _check_columns(frame, columns, strata_cols, edges_arr)
    output = columns + tuple(c for c in strata_cols if c not in columns)
    model_cols = tuple(c for c in output if c not in strata_cols)
    codes, labels = _encode(
        frame, model_cols + strata_cols, edges_arr, _check_domain(domain, output)
    )
    sizes = tuple(len(labels[c]) for c in model_cols)
    _check_domain_size(method, sizes, model_cols)
    if strata_cols:
        groups, weights = _check_shares(shares, strata_cols, labels)
        strata_sizes = tuple(len(labels[c]) for c in strata_cols)
        index = _assign_groups(codes[:, len(model_cols) :], groups, strata_sizes)
    else:
        groups, weights = np.zeros((1, 0), dtype=np.int64), np.ones(1)
        index = np.zeros(len(frame), dtype=np.int64)
    generator = as_rng(rng)
    source = _source(noise, generator)
    fitted = _fit_groups(
        codes[:, : len(model_cols)],
        index,
        sizes,
        _allocate(n_rows, weights),
        method=method,
        epsilon=epsilon,
        noise=source,
        rng=generator,
        rounds=rounds,
        way=way,
    )
    group_labels = [
        LABEL_SEPARATOR.join(labels[c][k] for c, k in zip(strata_cols, g, strict=True))
        if strata_cols
        else ALL_ROWS_LABEL
        for g in groups.tolist()
    ]
    return SyntheticData(
        frame=_assemble(fitted, groups, model_cols, strata_cols, output, labels),
        method=method,
        budget=PureDP(epsilon),
        strata=strata_cols,
        group_rows=pd.Series([len(c) for c, _ in fitted], index=group_labels, name="rows"),
        domain={c: labels[c] for c in output},
        domain_from_data=tuple(c for c in output if c not in edges_arr and c not in (domain or {})),
        selected={
            lab: tuple(tuple(model_cols[a] for a in axes) for axes in chosen)
            for lab, (_, chosen) in zip(group_labels, fitted, strict=True)
            if chosen
        },
        noise=source.kind,
    )
