r"""The mean's statistics when the rows stay where they are: each group's size and clipped sums.

:class:`~dpcore.analyses.mean.statistics.GroupValues` keeps every value in memory, sorted, so
that a clipped sum at any bounds costs O(log n_g) — what the Monte Carlo previews need.
:class:`GroupSums` keeps only what a release reads (AAAI 2024, eq. 1 and 3: the group sizes
:math:`n_g` and the clipped sums :math:`S_g(L, U) = \sum_{x\in G_g}\mathrm{clip}_{[L,U]}(x)`),
computed by an engine (:mod:`dpcore.engines`) in one pass over rows that may be far larger than
memory. A clipped sum at other bounds — CoinPress' next interval (Biswas et al. 2020, Alg. 1) —
is one more aggregation pass, which the engine provides as a function.

Both classes satisfy :class:`~dpcore.analyses.mean.estimators.GroupStats`, so the estimators and
strategies never know which one they were given.

Pure numpy; never imports streamlit or plotly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dpcore.analyses.mean.statistics import kept_without_rows, left_out_messages
from dpcore.foundations.labels import CountedGroups, plain_number
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from dpcore.foundations.private_bounds import GridCounts
from dpcore.foundations.shares import PublicShares
from dpcore.foundations.validation import read_only

__all__ = ["GroupSums", "SumsAt"]

SumsAt = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``(low, high) -> sums``: clipped sums with bounds of shape ``(..., k)``, same shape out."""


@dataclass(frozen=True, eq=False, repr=False)
class GroupSums(CountedGroups):
    """Groups of one value column, known by their sizes and by clipped sums on demand.

    Attributes
    ----------
    value, labels, shares, n_missing, empty_groups, by
        As in :class:`~dpcore.analyses.mean.statistics.GroupValues`.
    sizes
        ``(k,)`` int64 group sizes: rows with a usable value (after any contribution bound).
    sums_at
        The groups' clipped sums at given bounds (:data:`SumsAt`).
    pooled_sums_at
        The same for the whole population as one group (bounds of shape ``(..., 1)``).
    notes
        Sentences for the curator about rows left out on the way (a contribution bound).
    unit
        The privacy unit the engine bounded contributions for
        (:class:`~dpcore.foundations.privacy_unit.PrivacyUnit`); one row by default.
    recipe
        Python lines that compute these sums again into ``aggregated`` from a grouping spec
        named ``spec`` (for a release's script); empty when there is no such recipe.
    engine
        The engine whose passes computed the sums (``"duckdb"``…; a release's review names it);
        empty for sums made otherwise.
    buckets_at
        ``candidates -> counts`` of shape (k, C + 1): each group's values per bucket of a grid
        of candidate bounds, one more engine pass (what bounds found privately read,
        :meth:`grid_counts`); None where no engine can count them.
    """

    value: str
    labels: tuple[str, ...]
    sizes: np.ndarray
    sums_at: SumsAt = field(repr=False)
    pooled_sums_at: SumsAt = field(repr=False)
    shares: PublicShares | None = None
    n_missing: int = 0
    empty_groups: tuple[str, ...] = ()
    by: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    unit: PrivacyUnit = ROW
    recipe: str = ""
    engine: str = ""
    buckets_at: Callable[[np.ndarray], np.ndarray] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", tuple(str(label) for label in self.labels))
        object.__setattr__(self, "sizes", read_only(np.asarray(self.sizes, dtype=np.int64)))
        k = len(self.labels)
        if k < 1 or len(set(self.labels)) != k:
            raise ValueError(f"`labels` must be at least one unique label, got {self.labels!r}")
        if self.sizes.shape != (k,) or np.any(self.sizes < 0):
            raise ValueError(f"`sizes` must be {k} group sizes >= 0, got {self.sizes}")
        if self.shares is not None and self.shares.values.shape != (k,):
            raise ValueError(f"`shares` must have one share per group ({k})")

    def __repr__(self) -> str:
        return f"GroupSums(value={self.value!r}, k={self.k}, n={self.n})"

    def clipped_sums(self, low: object, high: object) -> np.ndarray:
        """Per-group sums of the values clipped to ``[low, high]`` (bounds broadcastable to
        ``(..., k)``, ``low <= high``)."""
        lo, hi = _checked_bounds(low, high, self.k)
        return np.asarray(self.sums_at(lo, hi), dtype=np.float64)

    @functools.cached_property
    def means(self) -> np.ndarray:
        r"""``(k,)`` true (non-private) group means :math:`\bar x_g = S_g(-\infty, \infty) / n_g`,
        what a simulation's estimates are scored against (the Compare page; a curator's view),
        as :attr:`GroupValues.means <dpcore.analyses.mean.statistics.GroupValues.means>`. For
        sums an engine computed, the unclipped sums are one more pass, made once; NaN for a
        kept group with no value."""
        unbounded = np.full(self.k, np.inf)
        sums = self.clipped_sums(-unbounded, unbounded)
        return read_only(np.where(self.sizes > 0, sums / np.maximum(self.sizes, 1), np.nan))

    @property
    def global_mean(self) -> float:
        """True (non-private) mean over all values: the groups' means weighted by their sizes
        (the pooled rows are the groups' rows)."""
        return float(np.nansum(self.means * (self.sizes / self.n)))

    @functools.cached_property
    def pooled(self) -> GroupSums:
        """The whole population as one group (the "vanilla" estimates' statistics)."""
        buckets_at = self.buckets_at
        pooled_buckets = (
            None if buckets_at is None
            else lambda candidates: buckets_at(candidates).sum(axis=0, keepdims=True)
        )  # fmt: skip
        return GroupSums(
            value=self.value, labels=("All",), sizes=np.array([self.n]),
            sums_at=self.pooled_sums_at, pooled_sums_at=self.pooled_sums_at,
            buckets_at=pooled_buckets,
        )  # fmt: skip

    def grid_counts(self, candidates: np.ndarray) -> GridCounts:
        """How many values of each group lie below each candidate bound, from one more engine
        pass counting the values per bucket of the grid (:attr:`buckets_at`)."""
        if self.buckets_at is None:
            raise ValueError(
                "Bounds found privately count the values per bucket of a grid of candidates, "
                "and these sums came with no engine to count them. Type public bounds instead, "
                "or read the data through an engine (pandas, DuckDB or Spark)."
            )
        candidates = np.asarray(candidates, dtype=float)
        return GridCounts.from_buckets(self.buckets_at(candidates), candidates)

    def messages(self) -> list[str]:
        """Plain sentences about the rows and groups left out (empty when none was)."""
        kept_empty = kept_without_rows(self.labels, self.sizes)
        return [
            *left_out_messages(self.value, self.n_missing, self.empty_groups, kept_empty),
            *self.notes,
        ]

    @classmethod
    def constant(cls, labels: tuple[str, ...], sizes: np.ndarray, centres: np.ndarray) -> GroupSums:
        """Groups of the given sizes in which every value equals the group's centre: the
        stand-in data of a parametric bootstrap, whose clipped sums are n_g·clip(c_g) exactly,
        without a row in memory."""
        sizes = np.asarray(sizes, dtype=np.int64)
        centres = np.asarray(centres, dtype=np.float64)

        def sums_at(low: np.ndarray, high: np.ndarray) -> np.ndarray:
            return sizes * np.clip(centres, low, high)

        def pooled_sums_at(low: np.ndarray, high: np.ndarray) -> np.ndarray:
            return np.sum(sizes * np.clip(centres, low, high), axis=-1, keepdims=True)

        return cls("value", labels, sizes, sums_at, pooled_sums_at)


def fixed_bounds_sums(
    bounds: tuple[float, float], sums: np.ndarray, requery: SumsAt | None
) -> SumsAt:
    """Clipped sums that an engine computed at the release's bounds, returned as they are for
    those bounds; other bounds of shape ``(k,)`` are one more engine pass (``requery``).

    Simulated replicates at other bounds would be one pass each over data that may not fit in
    memory; they are refused with the way out.
    """
    sums = read_only(np.asarray(sums, dtype=np.float64))

    def sums_at(low: np.ndarray, high: np.ndarray) -> np.ndarray:
        if np.all(low == bounds[0]) and np.all(high == bounds[1]):
            return np.broadcast_to(sums, np.broadcast_shapes(low.shape, sums.shape))
        if requery is None or low.ndim != 1:
            raise ValueError(
                "These sums were computed by an engine at the bounds "
                f"[{plain_number(bounds[0], 6)}, {plain_number(bounds[1], 6)}] only. Simulating many releases at other bounds "
                "(CoinPress) needs the rows in memory: upload the data (or a sample of it) in "
                "the app, or choose the Laplace or Gaussian mean, or run one release at a time."
            )
        return requery(low, high)

    return sums_at


def _checked_bounds(low: object, high: object, k: int) -> tuple[np.ndarray, np.ndarray]:
    try:
        lo, hi = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
        shape = np.broadcast_shapes(lo.shape, hi.shape, (k,))
    except (TypeError, ValueError):
        raise ValueError(
            f"`low` and `high` must be numbers or arrays broadcastable to (..., {k})"
        ) from None
    lo, hi = np.broadcast_to(lo, shape), np.broadcast_to(hi, shape)
    if np.isnan(lo).any() or np.isnan(hi).any() or np.any(lo > hi):
        raise ValueError("`low` and `high` must be numbers with low <= high")
    return lo, hi
