r"""The calibration ratio per group: group sums, previews, simulations and the release plan.

Builds on :mod:`dpcore.estimators.ratio` (Miao & Li, *Privacy-Preserving Inference on the Ratio
of Two Gaussians Using Sums*, JDS 2022 — "the paper"). For every group :math:`G_g` of a
:class:`~dpcore.strata.Strata` the target is the calibration ratio

.. math:: r_g = \frac{\sum_{i \in G_g} w_i s_i}{\sum_{i \in G_g} w_i y_i}

(§2.1; 1 means the scores s add up to the labels y). Each group releases its own noisy sums
(§2.3.1, 5 sums unweighted / 6 weighted for binary y) and gets its own interval (§2.4). The
pieces:

- :func:`group_ratio_sums` — the clipped sums of every group in one vectorized pass, grouping the
  rows with :meth:`Strata.assign` (exactly the Strata page's groups);
- :func:`estimate_ratios` — one release of every group's sums and the intervals, plus the global
  ratio recombined from the noisy group sums (:func:`recombine`);
- :func:`simulate_ratio_intervals` — coverage, width and interval score over Monte Carlo
  replicates of the DP noise (and optionally of the rows, :func:`bootstrap_group_sums`);
- :func:`release_cost` and :func:`release_arguments` — the exact privacy cost of a release and how
  a ledger budget (ε, (ε, δ) or ρ) maps to the estimator's arguments;
- :class:`RatioPlan` — the release plan committed on the Release page
  (follows :class:`dpcore.release.ReleasePlan`);
- :func:`table1_comparison` — our run of the paper's simulation beside its Table 1.

Privacy accounting (stated on screen too):

- **Groups are disjoint**, so the group releases compose in parallel: the cost of all groups is
  the cost of one group's release.
- **The global ratio is post-processing.** Each noisy group sum is a DP output; their total over
  the groups is a function of DP outputs only, so it costs nothing extra. Its noise variance is
  the sum of the groups' (k σ² for k groups), which is what its interval uses.
- **The ledger is charged in ρ-zCDP.** A Gaussian with standard deviation σ added to a sum of L2
  sensitivity Δ is :math:`\Delta^2/(2\sigma^2)`-zCDP whatever rule chose σ (Bun & Steinke 2016,
  Prop. 1.6), so a Gaussian release costs exactly :math:`\rho = \sum_i \Delta_i^2/(2\sigma_i^2)`
  over the released sums i — whether σ came from the paper's eq. 5 with basic composition, from
  Balle & Wang's analytic calibration, or from zCDP. The (ε, δ) guarantee the user asked for
  holds as well; it is not what the ledger adds up. A Laplace release costs pure ε-DP (basic
  composition of ε/m per sum), which the ledger converts to ρ = ε²/2.

Never imports streamlit or plotly.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from dpcore._validate import as_rng, open_unit_interval, positive_int, positive_number
from dpcore.accounting import (
    ZCDP,
    ApproxDP,
    Budget,
    PureDP,
    _check_budget,
    exact_components,
    pure_epsilon_within,
)
from dpcore.estimators.ratio import (
    COMPOSITIONS,
    MECHANISMS,
    METHODS,
    SCALES,
    SUM_LABELS,
    Composition,
    Mechanism,
    Method,
    RatioBounds,
    RatioCI,
    RatioComparison,
    RatioRelease,
    RatioSums,
    Scale,
    compare_ratios,
    ratio_interval,
    release_ratio_sums,
)
from dpcore.mechanisms import NoiseSource, SimulationNoise
from dpcore.metrics import interval_score
from dpcore.release import DatasetRef, _data_line, _strata_line
from dpcore.strata import Strata, StrataSpec

__all__ = [
    "ALL_GROUPS",
    "MC_SEED",
    "GroupRatioSums",
    "RatioPlan",
    "RatioResult",
    "bootstrap_group_sums",
    "estimate_ratios",
    "group_ratio_sums",
    "recombine",
    "release_arguments",
    "release_cost",
    "select_group",
    "simulate_ratio_intervals",
    "table1_comparison",
]

ALL_GROUPS = "All groups"
"""Label of the global ratio, recombined from the noisy group sums."""

MC_SEED = 0
"""Seed of the Monte Carlo correction's re-noising in a release (§2.4.2). Post-processing of
public noisy sums, so a fixed seed costs no privacy and makes the same noisy sums always give the
same interval."""

_METHOD_CODES = {"public": "public", "none": "nc", "monte_carlo": "mc", "analytical": "an"}


# ---- group sums ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class GroupRatioSums:
    """The exact clipped sums of every group (§2.3.1), aligned with ``labels``.

    ``sums`` is a :class:`~dpcore.estimators.ratio.RatioSums` of arrays of shape ``(k,)``. The
    counts say what happened to the rows: ``n_missing`` rows were dropped for a missing or
    infinite s, y or w, and ``n_ungrouped`` rows belong to no group (their group was dropped on
    the Strata page). ``rows`` counts the rows summed per group. Everything here is confidential:
    use it for releases and previews, never show it as a release.
    """

    labels: tuple[str, ...]
    sums: RatioSums
    rows: np.ndarray
    n_input: int
    n_missing: int
    n_ungrouped: int
    s_column: str
    y_column: str
    w_column: str | None
    bounds: RatioBounds
    binary_y: bool

    @property
    def k(self) -> int:
        return len(self.labels)

    @property
    def truth(self) -> np.ndarray:
        """The exact ratio Σws/Σwy of the clipped rows per group (NaN where Σwy = 0)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.asarray(self.sums.ws) / np.asarray(self.sums.wy)
        return np.where(np.asarray(self.sums.wy) > 0, ratio, np.nan)

    @property
    def global_truth(self) -> float:
        """The exact ratio over every grouped row (NaN if Σwy = 0)."""
        wy = float(np.sum(self.sums.wy))
        return float(np.sum(self.sums.ws)) / wy if wy > 0 else math.nan

    def messages(self) -> list[str]:
        """Plain sentences about dropped rows (empty when every row was used)."""
        out = []
        columns = ", ".join(f"`{c}`" for c in (self.s_column, self.y_column, self.w_column) if c)
        if self.n_missing:
            out.append(
                f"{self.n_missing:,} of {self.n_input:,} rows have a missing or infinite value in "
                f"{columns} and were dropped (rows with any of them missing are left out)."
            )
        if self.n_ungrouped:
            out.append(
                f"{self.n_ungrouped:,} rows belong to a group dropped on the Strata page and are "
                "not counted."
            )
        return out


def _numeric_values(frame: pd.DataFrame, parameter: str, column: object) -> np.ndarray:
    """A column as float64 with NaN for missing values; refuses unknown and non-numeric columns."""
    if not isinstance(column, str):
        raise TypeError(f"`{parameter}` must be a column name (str), got {column!r}")
    if column not in frame.columns:
        available = ", ".join(str(c) for c in frame.columns)
        raise ValueError(
            f"`{parameter}` names column {column!r}, which the data does not have; available "
            f"columns: {available}"
        )
    series = frame[column]
    dtype = series.dtype
    numeric = pd.api.types.is_bool_dtype(dtype) or (
        pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype)
    )
    if not numeric:
        raise TypeError(
            f"`{parameter}` column {column!r} must be numeric, got dtype {dtype}; choose a column "
            "of numbers (or 0/1, true/false)"
        )
    return series.to_numpy(dtype=np.float64, na_value=np.nan)


def _check_columns(
    s_column: object, y_column: object, w_column: object
) -> tuple[str, str, str | None]:
    names = {"s_column": s_column, "y_column": y_column}
    if w_column is not None:
        names["w_column"] = w_column
    for parameter, column in names.items():
        if not isinstance(column, str):
            raise TypeError(f"`{parameter}` must be a column name (str), got {column!r}")
    seen: dict[str, str] = {}
    for parameter, column in names.items():
        if column in seen:
            raise ValueError(
                f"`{parameter}` and `{seen[column]}` must be different columns, got {column!r} "
                "for both"
            )
        seen[column] = parameter
    return s_column, y_column, w_column


def _check_bounds(bounds: object, weighted: bool, binary_y: bool) -> RatioBounds:
    if not isinstance(bounds, RatioBounds):
        raise TypeError(f"`bounds` must be a RatioBounds, got {type(bounds).__name__} {bounds!r}")
    if weighted and bounds.w < 1:
        raise ValueError(
            f"`bounds.w` must be >= 1 for weighted data: weights are clipped to [0, u_w] and a "
            f"bound below 1 would shrink even a unit weight, got {bounds.w!r}"
        )
    if not weighted and bounds.w != 1:
        raise ValueError(f"`bounds.w` must be 1 without a weight column, got {bounds.w!r}")
    if binary_y and bounds.y != 1:
        raise ValueError(f"`bounds.y` must be 1 for a binary label (y is 0 or 1), got {bounds.y!r}")
    return bounds


def _row_matrix(
    frame: pd.DataFrame,
    strata: Strata,
    s_column: str,
    y_column: str,
    w_column: str | None,
    bounds: RatioBounds,
    binary_y: bool,
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], int, int]:
    """Group index and per-row summands of every usable row.

    Returns ``(codes, X, names, n_missing, n_ungrouped)``: X has one column per released sum
    (names in :class:`RatioSums` order), each row's clipped w, ws, wy, ws², wys (, w², wy²).
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}")
    if not isinstance(strata, Strata):
        raise TypeError(f"`strata` must be a Strata, got {type(strata).__name__}")
    if not isinstance(binary_y, bool):
        raise TypeError(f"`binary_y` must be True or False, got {binary_y!r}")
    s_column, y_column, w_column = _check_columns(s_column, y_column, w_column)
    bounds = _check_bounds(bounds, w_column is not None, binary_y)
    s = _numeric_values(frame, "s_column", s_column)
    y = _numeric_values(frame, "y_column", y_column)
    w = None if w_column is None else _numeric_values(frame, "w_column", w_column)
    codes = strata.assign(frame)
    finite = np.isfinite(s) & np.isfinite(y)
    if w is not None:
        finite &= np.isfinite(w)
    grouped = codes >= 0
    keep = finite & grouped
    n_missing = int(np.count_nonzero(~finite))
    n_ungrouped = int(np.count_nonzero(finite & ~grouped))
    s, y, codes = s[keep], y[keep], codes[keep]
    if binary_y and not np.all((y == 0) | (y == 1)):
        raise ValueError(
            f"`y_column` {y_column!r} must contain only 0 and 1 when the label is declared binary "
            "(`binary_y=True`); declare it not binary, or choose a 0/1 column"
        )
    s, y = np.clip(s, 0.0, bounds.s), np.clip(y, 0.0, bounds.y)
    w = np.ones_like(s) if w is None else np.clip(w[keep], 0.0, bounds.w)
    ws, wy = w * s, w * y
    columns = {"w": w, "ws": ws, "wy": wy, "wss": ws * s, "wys": wy * s}
    if w_column is not None:
        columns["ww"] = w * w
    if not binary_y:
        columns["wyy"] = wy * y
    return codes, np.column_stack(list(columns.values())), tuple(columns), n_missing, n_ungrouped


def group_ratio_sums(
    frame: pd.DataFrame,
    strata: Strata,
    *,
    s_column: str,
    y_column: str,
    w_column: str | None = None,
    bounds: RatioBounds,
    binary_y: bool,
) -> GroupRatioSums:
    r"""Every group's clipped sums :math:`\sum w, \sum ws, \sum wy, \sum ws^2, \sum wys` (§2.3.1).

    Rows are grouped with ``strata.assign(frame)`` — the groups of the Strata page, merged groups
    included; rows of dropped groups are left out. Rows with a missing or infinite s, y or w are
    dropped (and counted). Values are clipped to the public ``bounds`` (lower bounds 0): s to
    [0, u_s], y to [0, u_y], w to [0, u_w]. ``binary_y=True`` declares y ∈ {0, 1} (a public fact,
    checked here, never inferred), so Σwy² = Σwy is not released; without ``w_column`` every weight
    is 1 and Σw² = Σw is not released. One vectorized pass (``np.bincount``).
    """
    codes, matrix, names, n_missing, n_ungrouped = _row_matrix(
        frame, strata, s_column, y_column, w_column, bounds, binary_y
    )
    k = strata.k
    totals = {
        name: np.bincount(codes, weights=matrix[:, i], minlength=k) for i, name in enumerate(names)
    }
    return GroupRatioSums(
        labels=tuple(strata.labels),
        sums=RatioSums(**totals),
        rows=np.bincount(codes, minlength=k),
        n_input=len(frame),
        n_missing=n_missing,
        n_ungrouped=n_ungrouped,
        s_column=s_column,
        y_column=y_column,
        w_column=w_column,
        bounds=bounds,
        binary_y=binary_y,
    )


def bootstrap_group_sums(
    frame: pd.DataFrame,
    strata: Strata,
    *,
    s_column: str,
    y_column: str,
    w_column: str | None = None,
    bounds: RatioBounds,
    binary_y: bool,
    replicates: int,
    rng: np.random.Generator | int | None = None,
) -> RatioSums:
    """Group sums of ``replicates`` bootstrap resamples of the rows, shape ``(replicates, k)``.

    Each group's rows are resampled with replacement, keeping its size (a stratified
    nonparametric bootstrap, Efron & Tibshirani 1993 §8): the sampling variation that the
    delta-method part of the interval (eq. 1–4) is for. Vectorized: per group and block of
    replicates, uniform row indices are counted with ``np.bincount`` and the counts multiply the
    per-row summands, so no Python loop runs per replicate. For the Compare page only.
    """
    replicates = positive_int("replicates", replicates)
    generator = as_rng(rng)
    codes, matrix, names, _, _ = _row_matrix(
        frame, strata, s_column, y_column, w_column, bounds, binary_y
    )
    order = np.argsort(codes, kind="stable")
    codes, matrix = codes[order], matrix[order]
    offsets = np.searchsorted(codes, np.arange(strata.k + 1))
    out = np.zeros((replicates, strata.k, len(names)))
    for g in range(strata.k):
        rows = matrix[offsets[g] : offsets[g + 1]]
        n = rows.shape[0]
        if n == 0:
            continue
        step = max(1, (1 << 22) // n)  # ~4M draws per block keeps memory small
        for start in range(0, replicates, step):
            r = min(step, replicates - start)
            index = generator.integers(0, n, size=(r, n)) + (np.arange(r) * n)[:, None]
            counts = np.bincount(index.ravel(), minlength=r * n).reshape(r, n)
            out[start : start + r, g] = counts @ rows
    return RatioSums.from_stack(names, out)


# ---- one release of every group -----------------------------------------------------------------


def recombine(release: RatioRelease) -> RatioRelease:
    r"""The global release: every noisy sum added up over the groups (the last axis).

    Post-processing of the group releases, so it costs no extra budget (the paper, §4: "the sums
    can be trivially added up"). The noise on a total is the sum of k independent group noises, of
    variance :math:`k\sigma^2` (Gaussian: exactly :math:`N(0, k\sigma^2)`) or :math:`2kb^2`
    (Laplace), so the returned noise scale is :math:`\sqrt k` times the group's. For Laplace that
    matches the variance — all the analytical correction (§2.4.3) uses — while the Monte Carlo
    correction (§2.4.2) then re-noises with one Laplace of that variance rather than a sum of k
    (a close approximation for k ≥ 2, and exact in the variance).
    """
    if not isinstance(release, RatioRelease):
        raise TypeError(f"`release` must be a RatioRelease, got {type(release).__name__}")
    shape = release.sums.shape
    if not shape:
        raise ValueError("`release` must hold one entry per group (last axis), got a scalar")
    k = shape[-1]
    totals = {
        f.name: np.sum(np.broadcast_to(getattr(release.sums, f.name), shape), axis=-1)
        for f in fields(release.sums)
        if getattr(release.sums, f.name) is not None
    }
    scales = {name: math.sqrt(k) * scale for name, scale in release.noise_scale.items()}
    return dataclasses.replace(release, sums=RatioSums(**totals), noise_scale=scales)


def select_group(ci: RatioCI, index: int | np.ndarray | tuple) -> RatioCI:
    """The part of a vectorized :class:`RatioCI` at ``index`` (e.g. one group), for
    :func:`~dpcore.estimators.ratio.compare_ratios`."""
    if not isinstance(ci, RatioCI):
        raise TypeError(f"`ci` must be a RatioCI, got {type(ci).__name__}")

    def part(value):
        return value if value is None or np.ndim(value) == 0 else np.asarray(value)[index]

    sums = RatioSums(
        **{f.name: part(getattr(ci.sums, f.name)) for f in fields(ci.sums)},
    )
    taken = {
        name: part(getattr(ci, name))
        for name in ("estimate", "low", "high", "variance", "flag", "effective_n")
    }
    for name, value in taken.items():
        if isinstance(value, np.ndarray) and value.ndim == 0:
            taken[name] = value.item()
        elif isinstance(value, np.generic):
            taken[name] = value.item()
    return dataclasses.replace(ci, sums=sums, **taken)


@dataclass(frozen=True, eq=False)
class RatioResult:
    """One release of every group's sums and the intervals formed from it.

    ``groups`` is vectorized over the groups (shape ``(k,)``), ``overall`` is the global ratio
    from :func:`recombine`. Every number here is a DP output (post-processing of the release).
    """

    labels: tuple[str, ...]
    groups: RatioCI
    overall: RatioCI
    release: RatioRelease

    def frame(self) -> pd.DataFrame:
        """One row per group, then the global ratio: level, group, estimate, low, high,
        variance, flag ('' when the interval could be formed) and the noisy sums."""
        rows = [self._row("group", label, select_group(self.groups, g))
                for g, label in enumerate(self.labels)]  # fmt: skip
        rows.append(self._row("population", ALL_GROUPS, self.overall))
        return pd.DataFrame(rows)

    @staticmethod
    def _row(level: str, group: str, ci: RatioCI) -> dict:
        estimate = float(ci.estimate)
        usable = ci.flag is None
        row = {
            "level": level,
            "group": group,
            "estimate": estimate if math.isfinite(estimate) and estimate > 0 else None,
            "low": float(ci.low) if usable else None,
            "high": float(ci.high) if usable else None,
            "variance": float(ci.variance) if usable else None,
            "flag": "" if usable else str(ci.flag),
        }
        for name in ci.sums.released:
            row[f"noisy_sum_{name}"] = float(ci.sums.value(name))
        return row

    def compare(self, a: int, b: int, level: float | None = None) -> RatioComparison:
        """Two groups' difference with its interval and z-test (§2.4, :func:`compare_ratios`)."""
        for name, value in (("a", a), ("b", b)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer):
                raise TypeError(f"`{name}` must be a group index, got {value!r}")
            if not 0 <= value < len(self.labels):
                raise ValueError(
                    f"`{name}` must be a group index in [0, {len(self.labels) - 1}], got {value!r}"
                )
        if a == b:
            raise ValueError(f"`a` and `b` must be different groups, got {a!r} for both")
        level = self.groups.level if level is None else level
        return compare_ratios(select_group(self.groups, a), select_group(self.groups, b), level)


def estimate_ratios(
    sums: GroupRatioSums,
    *,
    epsilon: float,
    delta: float | None,
    mechanism: Mechanism,
    composition: Composition = "basic",
    method: Method = "analytical",
    scale: Scale = "ratio",
    level: float = 0.95,
    B: int = 200,
    noise: NoiseSource | None = None,
    rng: np.random.Generator | int | None = None,
) -> RatioResult:
    """Release every group's sums once and form the group and global intervals (§2.3–2.4).

    The release is :func:`~dpcore.estimators.ratio.release_ratio_sums` on the ``(k,)`` sums (each
    group its own noise; parallel composition). ``noise`` defaults to numpy simulation noise from
    ``rng`` (a preview); a release passes OpenDP's :class:`~dpcore.mechanisms.SecureNoise`.
    ``rng`` also seeds the Monte Carlo correction (post-processing).
    """
    if not isinstance(sums, GroupRatioSums):
        raise TypeError(f"`sums` must be GroupRatioSums, got {type(sums).__name__}")
    generator = as_rng(rng)
    release = release_ratio_sums(
        sums.sums,
        epsilon=epsilon,
        delta=delta,
        mechanism=mechanism,
        bounds=sums.bounds,
        composition=composition,
        noise=SimulationNoise(rng=generator) if noise is None else noise,
    )
    options = {"method": method, "scale": scale, "level": level, "B": B}
    groups = ratio_interval(release, **options, rng=generator)
    overall = ratio_interval(recombine(release), **options, rng=generator)
    return RatioResult(sums.labels, groups, overall, release)


# ---- simulation (Compare page) ------------------------------------------------------------------


def _summary(ci: RatioCI, truth: np.ndarray) -> dict[str, np.ndarray]:
    """Per-column coverage, mean width, mean interval score and flagged share over replicates.

    On the ratio scale. As in the paper's tables (and :func:`ratio_study`), flagged replicates
    count as not covering and are left out of the mean width and score.
    """
    low, high = np.asarray(ci.low, dtype=float), np.asarray(ci.high, dtype=float)
    truth = np.broadcast_to(np.asarray(truth, dtype=float), low.shape)
    known = np.isfinite(truth[0])  # the truth is undefined where the exact Σwy is 0
    ok = ~np.asarray(ci.flagged, dtype=bool)
    covered = (low <= truth) & (truth <= high)
    with np.errstate(invalid="ignore"):
        score = np.where(ok, interval_score(low, high, truth, 1 - ci.level), np.nan)
    width = np.where(ok, high - low, np.nan)
    usable = ok.sum(axis=0)
    with warnings.catch_warnings():  # a group whose every release is degenerate has no median
        warnings.simplefilter("ignore", RuntimeWarning)
        median_width = np.nanmedian(width, axis=0)
        median_score = np.nanmedian(score, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            "coverage": np.where(known, covered.mean(axis=0), np.nan),
            "width": np.where(usable > 0, np.nansum(width, axis=0) / usable, np.nan),
            "median_width": median_width,
            "score": np.where((usable > 0) & known, np.nansum(score, axis=0) / usable, np.nan),
            "median_score": np.where(known, median_score, np.nan),
            "flagged": 1.0 - usable / low.shape[0],
        }


def simulate_ratio_intervals(
    sums: GroupRatioSums,
    *,
    epsilon: float,
    delta: float | None,
    mechanism: Mechanism,
    composition: Composition = "basic",
    methods: Sequence[Method] = ("none", "monte_carlo", "analytical"),
    scale: Scale = "ratio",
    level: float = 0.95,
    B: int = 200,
    replicates: int = 1000,
    resampled: RatioSums | None = None,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Coverage, width and interval score of every method over simulated releases (§3).

    ``replicates`` releases of the groups' exact sums are drawn at once (one array, no loop per
    replicate); each method's intervals come from the *same* noisy sums (common random numbers).
    The truth is the exact ratio of the clipped rows of each group (and of all groups for the
    global ratio). With ``resampled`` (bootstrap sums from :func:`bootstrap_group_sums`, shape
    ``(replicates, k)``) every replicate also redraws the rows, so the interval's sampling part is
    tested too; without it only the DP noise varies, and intervals that include the sampling
    variance are conservative.

    Returns one row per group (then :data:`ALL_GROUPS`) and method: group, rows, method,
    coverage, width (mean, as in the paper's tables) and median_width, score (mean interval score,
    Gneiting & Raftery 2007 eq. 43) and median_score, all on the ratio scale, flagged (share of
    degenerate replicates: counted as not covering, left out of width and score) and reps. The
    medians are robust to the few releases whose noisy denominator is near 0, which can dominate
    the means for small groups.
    """
    if not isinstance(sums, GroupRatioSums):
        raise TypeError(f"`sums` must be GroupRatioSums, got {type(sums).__name__}")
    replicates = positive_int("replicates", replicates)
    generator = as_rng(rng)
    if resampled is None:
        exact, count = sums.sums, replicates
    else:
        if not isinstance(resampled, RatioSums) or resampled.shape != (replicates, sums.k):
            raise ValueError(
                f"`resampled` must be RatioSums of shape ({replicates}, {sums.k}), got "
                f"{getattr(resampled, 'shape', type(resampled).__name__)}"
            )
        exact, count = resampled, None
    release = release_ratio_sums(
        exact,
        epsilon=epsilon,
        delta=delta,
        mechanism=mechanism,
        bounds=sums.bounds,
        composition=composition,
        noise=SimulationNoise(rng=generator),
        replicates=count,
    )
    overall = recombine(release)
    labels = [*sums.labels, ALL_GROUPS]
    rows = [*np.asarray(sums.rows).tolist(), int(np.sum(sums.rows))]
    truth = np.append(sums.truth, sums.global_truth)
    frames = []
    for method in methods:
        options = {"method": method, "scale": scale, "level": level, "B": B, "rng": generator}
        group = _summary(ratio_interval(release, **options), sums.truth)
        whole = _summary(ratio_interval(overall, **options), truth[-1])
        frames.append(
            pd.DataFrame(
                {
                    "group": labels,
                    "rows": rows,
                    "method": method,
                    **{key: np.append(group[key], whole[key]) for key in group},
                    "reps": replicates,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


# ---- budget and cost ----------------------------------------------------------------------------


class _NoNoise:
    """A noise source that adds nothing: reads a release's noise scales without drawing noise."""

    kind = "simulation"

    def add_laplace(self, values: np.ndarray, scale: float | np.ndarray) -> np.ndarray:
        return np.asarray(values, dtype=float)

    def add_gaussian(self, values: np.ndarray, sigma: float | np.ndarray) -> np.ndarray:
        return np.asarray(values, dtype=float)


@functools.lru_cache(maxsize=256)
def _cost(
    bounds: RatioBounds,
    weighted: bool,
    binary_y: bool,
    epsilon: float,
    delta: float | None,
    mechanism: str,
    composition: str,
) -> tuple[Budget, tuple[tuple[str, float], ...], tuple[tuple[str, float], ...]]:
    template = RatioSums(
        w=1.0, ws=0.0, wy=0.0, wss=0.0, wys=0.0,
        ww=1.0 if weighted else None, wyy=None if binary_y else 0.0,
    )  # fmt: skip
    dry = release_ratio_sums(
        template,
        epsilon=epsilon,
        delta=delta,
        mechanism=mechanism,
        bounds=bounds,
        composition=composition,
        noise=_NoNoise(),
    )
    if mechanism == "laplace":
        cost: Budget = PureDP(dry.epsilon)
    else:
        cost = ZCDP(
            math.fsum(
                dry.sensitivity[n] ** 2 / (2 * dry.noise_scale[n] ** 2) for n in dry.sensitivity
            )
        )
    return cost, tuple(dry.sensitivity.items()), tuple(dry.noise_scale.items())


def release_cost(
    *,
    bounds: RatioBounds,
    weighted: bool,
    binary_y: bool,
    epsilon: float,
    delta: float | None,
    mechanism: Mechanism,
    composition: Composition = "basic",
) -> tuple[Budget, dict[str, float], dict[str, float]]:
    r"""The ledger cost of a release, with each released sum's sensitivity and noise scale.

    Gaussian mechanisms cost :math:`\rho = \sum_i \Delta_i^2/(2\sigma_i^2)`-zCDP over the m
    released sums (Bun & Steinke 2016, Prop. 1.6 and Lemma 2.3 for composition), whichever rule
    chose σ_i (eq. 5, Balle & Wang, or zCDP); the Laplace mechanism costs pure ε-DP (m sums at
    ε/m, basic composition). One group's cost: the groups are disjoint (parallel composition), and
    the global ratio is post-processing. Depends only on public parameters, never on the data.
    """
    if not isinstance(weighted, bool) or not isinstance(binary_y, bool):
        raise TypeError(
            f"`weighted` and `binary_y` must be True or False, got {weighted!r} and {binary_y!r}"
        )
    bounds = _check_bounds(bounds, weighted, binary_y)
    cost, sensitivity, scales = _cost(
        bounds, weighted, binary_y, epsilon, delta, mechanism, composition
    )
    return cost, dict(sensitivity), dict(scales)


def _fits(cost: Budget, budget: Budget) -> bool:
    """Whether ``cost`` is at most ``budget`` in exact decimal (the ledger's arithmetic)."""
    spent = exact_components(cost, budget.kind)
    allowed = exact_components(budget, budget.kind)
    return all(spent[k] <= allowed[k] for k in allowed)


def release_arguments(
    budget: Budget,
    *,
    mechanism: Mechanism,
    composition: Composition = "basic",
    delta: float = 1e-6,
    bounds: RatioBounds,
    weighted: bool,
    binary_y: bool,
) -> dict:
    r"""How a budget from the Budget page becomes the estimator's (ε, δ, mechanism, composition).

    - ``PureDP(ε)``: Laplace at ε (pure DP, as budgeted); a Gaussian mechanism at (ε, ``delta``),
      which is (ε, δ)-DP — weaker than pure ε-DP, charged its exact zCDP cost.
    - ``ApproxDP(ε, δ)``: its own ε and δ.
    - ``ZCDP(ρ)``: the Gaussian with ``composition="zcdp"``, σ_i = Δ_i/√(2ρ/m): the estimator takes
      (ε, δ), so ρ is converted to the ε at which :func:`~dpcore.estimators.ratio.zcdp_rho` gives
      ρ back (ρ → ε by the tight conversion of Canonne, Kamath & Steinke 2020; ``delta`` is only
      the bridge and the noise does not depend on it), then nudged down until the exact cost is at
      most ρ. Laplace runs at ε = √(2ρ), which is ρ-zCDP (Bun & Steinke 2016, Prop. 1.4). The
      analytic Gaussian calibration splits an (ε, δ) budget and is refused with a ρ budget.

    Returns a dict with ``epsilon``, ``delta``, ``mechanism`` and ``composition``.
    """
    _check_budget("budget", budget)
    if mechanism not in MECHANISMS:
        raise ValueError(f"`mechanism` must be one of {', '.join(map(repr, MECHANISMS))}, "
                         f"got {mechanism!r}")  # fmt: skip
    if composition not in COMPOSITIONS:
        raise ValueError(f"`composition` must be one of {', '.join(map(repr, COMPOSITIONS))}, "
                         f"got {composition!r}")  # fmt: skip
    delta = open_unit_interval("delta", delta)
    if mechanism == "laplace":
        if isinstance(budget, ZCDP):
            epsilon = pure_epsilon_within(budget.rho)
        else:
            epsilon = budget.epsilon
        return {"epsilon": epsilon, "delta": None, "mechanism": "laplace", "composition": "basic"}
    if isinstance(budget, ZCDP):
        if mechanism != "gaussian":
            raise ValueError(
                "`mechanism` 'gaussian_analytic' splits an (ε, δ) budget; with a ρ-zCDP budget "
                "choose mechanism='gaussian' (σ from ρ directly) or 'laplace', or switch the "
                "budget to ε"
            )
        epsilon = ZCDP(budget.rho).to_approx_dp(delta).epsilon
        options = {"bounds": bounds, "weighted": weighted, "binary_y": binary_y}
        for _ in range(100):
            cost = release_cost(**options, epsilon=epsilon, delta=delta, mechanism="gaussian",
                                composition="zcdp")[0]  # fmt: skip
            if _fits(cost, budget):
                break
            epsilon *= 1 - 1e-12
        else:  # pragma: no cover - the conversion is tight to ~1e-12
            raise ValueError(f"could not fit the release into `budget` {budget}")
        return {"epsilon": epsilon, "delta": delta, "mechanism": "gaussian", "composition": "zcdp"}
    delta = budget.delta if isinstance(budget, ApproxDP) else delta
    if composition == "zcdp" and mechanism != "gaussian":
        composition = "basic"  # zCDP calibrates σ = Δ/√(2ρ/m): the classic/analytic choice is moot
    return {
        "epsilon": budget.epsilon,
        "delta": delta,
        "mechanism": mechanism,
        "composition": composition,
    }


# ---- the release plan ---------------------------------------------------------------------------


def _delta(delta: float) -> str:
    """δ in short scientific notation: ``1e-6`` rather than ``1e-06``."""
    mantissa, exponent = f"{delta:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}" if float(f"{delta:.0e}") == delta else f"{delta:g}"


def _describe_scale(name: str, value: float, mechanism: str) -> str:
    symbol = "b" if mechanism == "laplace" else "σ"
    return f"{SUM_LABELS[name]}: {symbol} = {value:.4g}"


@dataclass(frozen=True)
class RatioPlan:
    r"""A planned release of the calibration ratio Σws/Σwy per group and for all groups together.

    Each group releases its noisy sums (§2.3.1) through the given noise source — OpenDP's
    :class:`~dpcore.mechanisms.SecureNoise` in a real release — and gets a confidence interval
    (§2.4: no correction, Monte Carlo or analytical correction; ratio or log scale). The global
    ratio is :func:`recombine`\ d from the noisy group sums: post-processing, no extra budget.

    **Cost** (:attr:`cost`): groups in parallel, so one group's release. Gaussian mechanisms are
    charged their exact zCDP cost :math:`\rho = \sum_i \Delta_i^2/(2\sigma_i^2)` (Bun & Steinke
    2016, Prop. 1.6), whatever rule chose σ — the ledger totals ρ-zCDP and cannot be charged
    (ε, δ)-DP costs; the (ε, δ) guarantee also holds. Laplace costs pure ε-DP.

    Parameters
    ----------
    sums, strata
        The groups' exact clipped sums (:func:`group_ratio_sums`) and their :class:`Strata`, built
        from the data ``dataset`` fingerprints with ``spec``. Not part of the plan's identity.
    dataset, spec
        Where the groups come from; written into the metadata and the reproduction script.
    epsilon, delta, mechanism, composition
        Passed to :func:`~dpcore.estimators.ratio.release_ratio_sums` (see
        :func:`release_arguments` for how a ledger budget maps to them). ``delta`` is None for
        Laplace.
    method, scale, B
        The interval (§2.4.1–2.4.3), its scale (§2.3) and the Monte Carlo draws (§2.4.2).
    level
        Confidence level of the intervals.
    label
        A name for the release; part of its identity.

    Build one from a frame with :meth:`build`.
    """

    sums: GroupRatioSums = field(compare=False, repr=False)
    strata: Strata = field(compare=False, repr=False)
    dataset: DatasetRef
    spec: StrataSpec
    epsilon: float
    delta: float | None
    mechanism: Mechanism
    composition: Composition = "basic"
    method: Method = "analytical"
    scale: Scale = "ratio"
    B: int = 200
    level: float = 0.95
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.sums, GroupRatioSums):
            raise TypeError(f"`sums` must be GroupRatioSums, got {type(self.sums).__name__}")
        if not isinstance(self.strata, Strata):
            raise TypeError(f"`strata` must be a Strata, got {type(self.strata).__name__}")
        if tuple(self.strata.labels) != self.sums.labels:
            raise ValueError("`sums` must be computed on `strata` (their group labels differ)")
        if not isinstance(self.dataset, DatasetRef):
            raise TypeError(f"`dataset` must be a DatasetRef, got {type(self.dataset).__name__}")
        if not isinstance(self.spec, StrataSpec):
            raise TypeError(f"`spec` must be a StrataSpec, got {type(self.spec).__name__}")
        for name, options in (("method", METHODS), ("scale", SCALES)):
            value = getattr(self, name)
            if value not in options:
                raise ValueError(
                    f"`{name}` must be one of {', '.join(map(repr, options))}, got {value!r}"
                )
        object.__setattr__(self, "epsilon", positive_number("epsilon", self.epsilon))
        object.__setattr__(self, "B", positive_int("B", self.B))
        object.__setattr__(self, "level", open_unit_interval("level", self.level))
        if not isinstance(self.label, str):
            raise TypeError(f"`label` must be a str, got {type(self.label).__name__}")
        self.cost  # noqa: B018 - validates mechanism, composition and (ε, δ) before anything runs
        if not self.label.strip():
            by = " × ".join(self.spec.by)
            default = f"Calibration ratio Σ{self.sums.s_column}/Σ{self.sums.y_column} by {by}"
            object.__setattr__(self, "label", default)

    @classmethod
    def build(
        cls,
        frame: pd.DataFrame,
        *,
        spec: StrataSpec,
        dataset_name: str,
        s_column: str,
        y_column: str,
        w_column: str | None = None,
        bounds: RatioBounds,
        binary_y: bool,
        epsilon: float,
        delta: float | None,
        mechanism: Mechanism,
        composition: Composition = "basic",
        method: Method = "analytical",
        scale: Scale = "ratio",
        B: int = 200,
        level: float = 0.95,
        label: str = "",
    ) -> RatioPlan:
        """The plan for ``frame``: groups from ``spec``, sums from the named columns."""
        if not isinstance(spec, StrataSpec):
            raise TypeError(f"`spec` must be a StrataSpec, got {type(spec).__name__}")
        strata, _ = spec.build(frame)
        sums = group_ratio_sums(
            spec.private_rows(frame), strata, s_column=s_column, y_column=y_column, w_column=w_column,
            bounds=bounds, binary_y=binary_y,
        )  # fmt: skip
        return cls(
            sums=sums, strata=strata, dataset=DatasetRef.of(frame, dataset_name), spec=spec,
            epsilon=epsilon, delta=delta, mechanism=mechanism, composition=composition,
            method=method, scale=scale, B=B, level=level, label=label,
        )  # fmt: skip

    def _cost_parts(self):
        return release_cost(
            bounds=self.sums.bounds,
            weighted=self.sums.w_column is not None,
            binary_y=self.sums.binary_y,
            epsilon=self.epsilon,
            delta=self.delta,
            mechanism=self.mechanism,
            composition=self.composition,
        )

    @property
    def cost(self) -> Budget:
        """Exact ledger cost: ZCDP(Σ Δ_i²/(2σ_i²)) for Gaussian noise, PureDP(ε) for Laplace."""
        return self._cost_parts()[0]

    @property
    def sensitivity(self) -> dict[str, float]:
        return self._cost_parts()[1]

    @property
    def noise_scale(self) -> dict[str, float]:
        return self._cost_parts()[2]

    @property
    def statistic(self) -> str:
        weight = f" weighted by {self.sums.w_column}" if self.sums.w_column else ""
        return f"calibration ratio Σ{self.sums.s_column}/Σ{self.sums.y_column}{weight}"

    @property
    def interval_description(self) -> str:
        """What the intervals cover, for the release's metadata."""
        return (
            f"{self.level:.0%} Wald confidence intervals for the calibration ratio "
            f"({METHODS[self.method]}, {SCALES[self.scale].lower()}; Miao & Li 2022), from the "
            "noisy sums only; they include sampling and DP-noise variance. Rows with a flag have "
            "no interval (the flag says why)"
        )

    def parameters(self) -> dict:
        """Everything that defines the release, JSON-ready (the plan's identity)."""
        b = self.sums.bounds
        return {
            "kind": "ratio",
            "statistic": self.statistic,
            "label": self.label,
            "dataset": {"name": self.dataset.name, "fingerprint": self.dataset.fingerprint,
                        "rows": self.dataset.rows},
            "strata": self.spec.to_dict(),
            "estimator": {
                "class": "RatioPlan",
                "s_column": self.sums.s_column, "y_column": self.sums.y_column,
                "w_column": self.sums.w_column,
                "bounds": {"s": b.s, "y": b.y, "w": b.w}, "binary_y": self.sums.binary_y,
                "mechanism": self.mechanism, "composition": self.composition,
                "epsilon": self.epsilon, "delta": self.delta,
                "method": self.method, "scale": self.scale, "B": self.B,
                "monte_carlo_seed": MC_SEED,
            },
            "budget": {"kind": self.cost.kind, **self.cost.components()},
            "strategy": "stratified",
            "level": self.level,
        }  # fmt: skip

    def run(self, noise: NoiseSource) -> list[dict]:
        """Draw the release with ``noise``: one row per group, then the global ratio.

        Rows carry level, group, estimate, low, high, variance (on the analysis scale), flag (why
        a group has no interval, else '') and the noisy sums — all DP outputs. Undefined values
        are None.
        """
        result = estimate_ratios(
            self.sums, epsilon=self.epsilon, delta=self.delta, mechanism=self.mechanism,
            composition=self.composition, method=self.method, scale=self.scale,
            level=self.level, B=self.B, noise=noise, rng=MC_SEED,
        )  # fmt: skip
        frame = result.frame().astype(object)
        return [
            {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
             for k, v in row.items()}
            for row in frame.to_dict(orient="records")
        ]  # fmt: skip

    def review_lines(self) -> list[str]:
        """Markdown lines that describe the plan for a person about to commit it."""
        sums, b = self.sums, self.sums.bounds
        m = len(self.sensitivity)
        y_range = "0 or 1 (binary)" if sums.binary_y else f"[0, {b.y:g}]"
        weight = f"`{sums.w_column}` in [0, {b.w:g}]" if sums.w_column else "none (w = 1)"
        rows = int(np.sum(sums.rows))
        dropped = f"; {sums.n_missing:,} dropped for missing values" if sums.n_missing else ""
        if self.mechanism == "laplace":
            noise = f"Laplace, ε = {self.epsilon:g} split evenly over the {m} released sums"
        elif self.composition == "zcdp":
            noise = (
                f"Gaussian with zCDP accounting, ρ = {self.cost.rho:.6g} split evenly over the "
                f"{m} released sums (σ = Δ/√(2ρ/{m}))"
            )
        else:
            noise = (
                f"{MECHANISMS[self.mechanism]}, (ε = {self.epsilon:g}, δ = {_delta(self.delta)}) "
                f"split evenly over the {m} released sums (basic composition, as in the paper)"
            )
        symbol = "b" if self.mechanism == "laplace" else "σ"
        distinct = set(self.noise_scale.values())
        if len(distinct) == 1:
            scales = f"{symbol} = {distinct.pop():.4g} on each"
        else:
            scales = "; ".join(
                _describe_scale(n, s, self.mechanism) for n, s in self.noise_scale.items()
            )
        if self.mechanism == "laplace":
            accounting = "pure ε-DP, charged to a ρ ledger as ρ = ε²/2"
        else:
            accounting = (
                "exact zCDP cost ρ = Σ Δ²/(2σ²) over the released sums (Bun & Steinke 2016, "
                "Prop. 1.6); the groups are disjoint, so all groups cost one group's ρ"
            )
        return [
            f"**Statistic:** {self.statistic} per group, and for all groups together "
            "(recombined from the noisy group sums: no extra budget)",
            _data_line(self.dataset),
            _strata_line(self.spec, self.strata, None),
            f"**Columns:** score `{sums.s_column}` in [0, {b.s:g}], label `{sums.y_column}` "
            f"{y_range}, weight {weight} — public bounds; {rows:,} rows used{dropped}",
            f"**Mechanism:** {noise}: {scales}",
            f"**Intervals:** {self.level:.0%}, {METHODS[self.method][:1].lower()}"
            f"{METHODS[self.method][1:]}, {SCALES[self.scale].lower()}"
            + (f", B = {self.B}" if self.method == "monte_carlo" else ""),  # fmt: skip
            f"**Accounting:** {accounting}",
        ]

    def script_body(self) -> str:
        """The Python lines that rebuild this plan from a frame named ``frame``."""
        spec_arguments = ", ".join(
            f"{f.name}={getattr(self.spec, f.name)!r}" for f in fields(self.spec)
        )
        sums = self.sums
        return (
            "from dpcore.estimators.ratio import RatioBounds\n"
            "from dpcore.plans.ratio import RatioPlan\n"
            "from dpcore.strata import StrataSpec\n\n"
            f"spec = StrataSpec({spec_arguments})\n"
            "plan = RatioPlan.build(\n"
            "    frame,\n"
            "    spec=spec,\n"
            f"    dataset_name={self.dataset.name!r},\n"
            f"    s_column={sums.s_column!r},\n"
            f"    y_column={sums.y_column!r},\n"
            f"    w_column={sums.w_column!r},\n"
            f"    bounds={sums.bounds!r},\n"
            f"    binary_y={sums.binary_y!r},\n"
            f"    epsilon={self.epsilon!r},\n"
            f"    delta={self.delta!r},\n"
            f"    mechanism={self.mechanism!r},\n"
            f"    composition={self.composition!r},\n"
            f"    method={self.method!r},\n"
            f"    scale={self.scale!r},\n"
            f"    B={self.B!r},\n"
            f"    level={self.level!r},\n"
            f"    label={self.label!r},\n"
            ")\n"
        )


# ---- the paper's Table 1 ------------------------------------------------------------------------


def table1_comparison(study: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Our :func:`~dpcore.estimators.ratio.ratio_study` rows beside the paper's Table 1.

    One row per setting (weighted, n, ε), composition and method with width, coverage and score
    from both (the paper's are NaN for settings it did not run, e.g. zCDP). ``study`` must be on
    the ratio scale with the Gaussian mechanism, as Table 1 is.
    """
    for name, value in (("study", study), ("paper", paper)):
        if not isinstance(value, pd.DataFrame):
            raise TypeError(f"`{name}` must be a DataFrame, got {type(value).__name__}")
    needed = {"weighted", "n", "epsilon", "method", "width", "coverage", "score"}
    if missing := needed - set(study.columns):
        raise ValueError(f"`study` lacks the columns {sorted(missing)}")
    long = []
    for method, code in _METHOD_CODES.items():
        part = paper[["weighted", "n", "effective_n", "epsilon"]].copy()
        part["method"] = method
        for metric in ("width", "coverage", "score"):
            part[f"paper_{metric}"] = paper[f"{code}_{metric}"]
        long.append(part)
    paper_long = pd.concat(long, ignore_index=True).astype({"n": int, "epsilon": float})
    ours = study.copy()
    if "composition" not in ours.columns:
        ours["composition"] = "basic"
    ours = ours.rename(columns={m: f"ours_{m}" for m in ("width", "coverage", "score")})
    ours = ours.drop(columns=["effective_n"], errors="ignore")
    paper_long["composition"] = "basic"
    merged = ours.merge(
        paper_long, on=["weighted", "n", "epsilon", "method", "composition"], how="left"
    )
    columns = ["weighted", "n", "effective_n", "epsilon", "composition", "method"]
    columns += [f"{who}_{m}" for m in ("width", "coverage", "score") for who in ("ours", "paper")]
    columns += [c for c in ("flagged", "reps") if c in merged.columns]
    order = {m: i for i, m in enumerate(_METHOD_CODES)}
    merged = merged.assign(_order=merged["method"].map(order))
    merged = merged.sort_values(
        ["weighted", "n", "epsilon", "composition", "_order"], kind="stable", ignore_index=True
    )
    return merged[columns]
