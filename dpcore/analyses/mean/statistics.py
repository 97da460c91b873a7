r"""The mean's sufficient statistics: each group's values, sorted, with prefix sums.

Built once from a :class:`~dpcore.foundations.grouping.Grouping` and a value column by
:meth:`GroupValues.from_grouping`. Per group we keep the size :math:`n_g` (rows with a usable
value) and the sorted values with prefix sums, so that any
clipped sum :math:`\sum_{x \in G_g} \min(\max(x, a), b)` costs :math:`O(\log n_g)` — what
StratCoinpress needs at every step (Rosenblatt, Stoyanovich & Musco, AAAI 2024, appendix B).

Rows whose value is missing or infinite are left out *within* their group: the groups themselves
come from the grouping columns alone. A group with no usable value at all cannot be estimated and
is left out, with its public share; :meth:`GroupValues.messages` says which.

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpcore.foundations.grouping import Grouping, SmallGroups
from dpcore.foundations.labels import CountedGroups, labels_repr, list_labels, plural
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit, dropped_rows_notes, row_weights
from dpcore.foundations.private_bounds import GridCounts
from dpcore.foundations.shares import PublicShares
from dpcore.foundations.validation import data_frame, instance_of, numeric_values, read_only, shown

__all__ = ["GroupValues"]


@dataclass(frozen=True, eq=False, repr=False)
class GroupValues(CountedGroups):
    """Disjoint groups of one value column with their per-group sufficient statistics.

    Build it with :meth:`from_grouping` (or :meth:`from_frame`, which groups first). Groups keep
    the grouping's order; all per-group arrays are aligned with :attr:`labels` and read-only.

    Attributes
    ----------
    value
        Value column.
    labels
        One label per group.
    sizes
        ``(k,)`` int64 group sizes :math:`n_g`: rows with a usable value (their weights' sum
        under a person's contribution bound).
    sorted_values
        ``(n,)`` float64: each group's values sorted ascending, groups concatenated in order.
    offsets
        ``(k+1,)`` int64: group ``g`` is ``sorted_values[offsets[g]:offsets[g+1]]``.
    shares
        The public recombination shares of these groups (the grouping's, rescaled when a group
        with no usable value was left out); None for a bare array (:meth:`from_values`).
    n_missing
        Rows whose value was missing or infinite (left out, before grouping when the grouping
        groups the rows with a value, :attr:`~dpcore.foundations.grouping.GroupingSpec.needs_values`).
    empty_groups
        Labels of the groups left out because none of their rows has a usable value.
    by
        The grouping columns (empty for :meth:`from_values`).
    unit
        The privacy unit whose contribution bound chose the rows
        (:class:`~dpcore.foundations.privacy_unit.PrivacyUnit`); one row by default.
    notes
        Sentences for the curator about rows the contribution bound left out.
    weights
        ``(n,)`` each sorted value's weight under a person's contribution bound
        (:func:`~dpcore.foundations.privacy_unit.bounded_weights`: m/n for a person's n rows
        in a cell counted as m), or None when every row counts once.
    """

    value: str
    labels: tuple[str, ...]
    sizes: np.ndarray
    sorted_values: np.ndarray
    offsets: np.ndarray
    shares: PublicShares | None = None
    n_missing: int = 0
    empty_groups: tuple[str, ...] = ()
    by: tuple[str, ...] = ()
    unit: PrivacyUnit = ROW
    notes: tuple[str, ...] = ()
    weights: np.ndarray | None = None
    # Each group's prefix sums of its weighted values anchored at zero, and of its weights
    # (group g occupies [offsets[g] + g, offsets[g+1] + g + 1)); see _zero_anchored_prefix.
    _prefix: np.ndarray = field(init=False)
    _weight_prefix: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "by", tuple(self.by))
        set_(self, "labels", tuple(str(lab) for lab in self.labels))
        for name, dtype in (
            ("sizes", np.int64),
            ("sorted_values", np.float64),
            ("offsets", np.int64),
        ):
            set_(self, name, read_only(np.asarray(getattr(self, name), dtype=dtype)))
        k, n = len(self.labels), self.sorted_values.shape[0]
        if k < 1 or len(set(self.labels)) != k:
            raise ValueError(f"`labels` must be at least one unique label, got {self.labels!r}")
        for name, shape in (
            ("sizes", (k,)),
            ("sorted_values", (n,)),
            ("offsets", (k + 1,)),
        ):
            if getattr(self, name).shape != shape:
                raise ValueError(
                    f"`{name}` must have shape {shape}, got {getattr(self, name).shape}"
                )
        counts = np.diff(self.offsets)
        if self.weights is not None:
            set_(self, "weights", read_only(np.asarray(self.weights, dtype=np.float64)))
            if self.weights.shape != (n,) or np.any(self.weights < 0):
                raise ValueError(f"`weights` must be {n} weights >= 0, one per value")
            group_of_value = np.repeat(np.arange(k), counts)
            counts = np.bincount(group_of_value, weights=self.weights, minlength=k).round()
        if self.offsets[0] != 0 or not np.array_equal(counts, self.sizes):
            raise ValueError("`offsets` must start at 0 and `sizes` count each group's values")
        if np.any(self.sizes < 0):
            raise ValueError(f"`sizes` must all be >= 0, got {self.sizes}")
        if self.shares is not None and self.shares.values.shape != (k,):
            raise ValueError(f"`shares` must have one share per group ({k})")
        # Compared pairwise, not by np.diff, which overflows between values near ±1.8e308.
        ascending = self.sorted_values[1:] >= self.sorted_values[:-1]
        boundaries = self.offsets[1:-1]
        # a group boundary may step down (an empty group's boundary may be the last value)
        ascending[boundaries[(boundaries > 0) & (boundaries < n)] - 1] = True
        if not np.all(ascending):
            raise ValueError("`sorted_values` must be sorted ascending within each group")
        weights = np.ones(n) if self.weights is None else self.weights
        terms = self.sorted_values if self.weights is None else self.sorted_values * weights
        prefix, weight_prefix = np.empty(n + k), np.empty(n + k)
        for g in range(k):
            a, b = self.offsets[g], self.offsets[g + 1]
            zero = int(np.searchsorted(self.sorted_values[a:b], 0.0, side="left"))
            prefix[a + g : b + g + 1] = _zero_anchored_prefix(terms[a:b], zero)
            weight_prefix[a + g] = 0.0
            np.cumsum(weights[a:b], out=weight_prefix[a + g + 1 : b + g + 1])
        set_(self, "_prefix", read_only(prefix))
        set_(self, "_weight_prefix", read_only(weight_prefix))

    def __repr__(self) -> str:
        return f"GroupValues(value={self.value!r}, k={self.k}, n={self.n}, labels={labels_repr(self.labels)})"

    # ---- derived quantities -----------------------------------------------------------------

    @property
    def _row_weights(self) -> np.ndarray:
        return np.ones(self.sorted_values.shape[0]) if self.weights is None else self.weights

    @functools.cached_property
    def means(self) -> np.ndarray:
        """``(k,)`` true (non-private) group means :math:`\\bar x_g = \\sum x / n_g`, summed
        as :math:`\\sum (x / n_g)` so that they stay finite wherever the values are (a plain sum
        overflows for values near the largest float); NaN for a kept group with no value."""
        counts = np.diff(self.offsets)
        weights = np.repeat(1.0 / np.maximum(self.sizes, 1), counts) * self._row_weights
        group = np.repeat(np.arange(self.k), counts)
        sums = np.bincount(group, weights=self.sorted_values * weights, minlength=self.k)
        return read_only(np.where(self.sizes > 0, sums, np.nan))

    @property
    def global_mean(self) -> float:
        """True (non-private) mean over all values, :math:`\\sum x / n`, finite as
        :attr:`means` is."""
        return float(np.sum(self.sorted_values * (self._row_weights / self.n)))

    def group_values(self, g: int) -> np.ndarray:
        """Sorted values of group ``g`` (a read-only view)."""
        return self.sorted_values[self.offsets[g] : self.offsets[g + 1]]

    def messages(self) -> list[str]:
        """Plain sentences about the rows and groups left out (empty when none was)."""
        return [
            *left_out_messages(
                self.value, self.n_missing, self.empty_groups,
                kept_without_rows(self.labels, self.sizes),
            ),
            *self.notes,
        ]  # fmt: skip

    # ---- clipped sums -------------------------------------------------------------------------

    def clipped_sums(self, low: object, high: object) -> np.ndarray:
        """Per-group sums of values clipped to ``[low, high]``.

        .. math::
            S_g(a, b) = \\sum_{x \\in G_g} \\min(\\max(x, a), b)
                      = a \\cdot \\#\\{x < a\\} + \\sum_{a \\le x \\le b} x + b \\cdot \\#\\{x > b\\}

        (each value counted with its weight under a person's bound: the counts are sums of
        weights, the middle sum one of weighted values)

        computed with two binary searches in the group's sorted values and prefix sums, i.e.
        :math:`O(\\log n_g)` per group and bound pair (used by StratCoinpress, paper appendix B),
        the searches of all groups and bounds running together (:func:`_search_groups`). The
        middle sum only ever adds values within the bounds (the prefix sums are anchored at
        zero), so it is finite and accurate whatever the values outside them, however large.

        Parameters
        ----------
        low, high
            Scalars or arrays broadcastable to shape ``(..., k)``, e.g. ``(R, k)`` for R Monte
            Carlo replicates. Must satisfy ``low <= high`` elementwise; infinite bounds are allowed
            (``low=-inf, high=inf`` gives the plain sums).

        Returns
        -------
        numpy.ndarray
            float64 array of the broadcast shape of ``low``, ``high`` and ``(k,)``.

        Raises
        ------
        TypeError
            If a bound is not numeric.
        ValueError
            If a bound is NaN, the shapes do not broadcast to ``(..., k)``, or ``low > high``
            somewhere.
        """
        lo = _bound_array("low", low)
        hi = _bound_array("high", high)
        try:
            shape = np.broadcast_shapes(lo.shape, hi.shape, (self.k,))
        except ValueError:
            raise ValueError(
                f"`low` and `high` must broadcast to shape (..., k) with k={self.k} groups, "
                f"got shapes {lo.shape} and {hi.shape}"
            ) from None
        lo = np.broadcast_to(lo, shape)
        hi = np.broadcast_to(hi, shape)
        bad = lo > hi
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(
                f"`low` must be <= `high` elementwise, got a low bound above its high bound "
                f"at index {where}"
            )
        # Group-major (k, m): row g holds every bound of group g (m = 1 for (k,) bounds).
        lo_g, hi_g = _group_major(lo), _group_major(hi)
        first, end = self.offsets[:-1, None], self.offsets[1:, None]
        # i - first values lie below low; j - first values lie at or below high.
        i = _search_groups(self.sorted_values, self.offsets, lo_g, np.less)
        j = _search_groups(self.sorted_values, self.offsets, hi_g, np.less_equal)
        # Group g's prefix sums start at offsets[g] + g: each earlier group has one more entry.
        shift = np.arange(self.k)[:, None]
        weight_at = self._weight_prefix
        with np.errstate(invalid="ignore"):  # inf * 0 in the discarded branch of np.where
            below = np.where(
                i > first, lo_g * (weight_at[i + shift] - weight_at[first + shift]), 0.0
            )
            above = np.where(j < end, hi_g * (weight_at[end + shift] - weight_at[j + shift]), 0.0)
        sums = below + (self._prefix[j + shift] - self._prefix[i + shift]) + above
        return np.ascontiguousarray(np.moveaxis(sums.reshape(self.k, *shape[:-1]), 0, -1))

    def grid_counts(self, candidates: np.ndarray) -> GridCounts:
        """How many values of each group lie below each candidate bound (what bounds found
        privately score, :mod:`dpcore.foundations.private_bounds`): one search per group and
        candidate in the sorted values, all groups at once (:func:`_search_groups`)."""
        candidates = np.asarray(candidates, dtype=float)
        needles = np.ascontiguousarray(np.broadcast_to(candidates, (self.k, candidates.size)))
        first = _search_groups(self.sorted_values, self.offsets, needles, np.less)
        return GridCounts(candidates, first - self.offsets[:-1, None], self.sizes)

    def centred_squares(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        r"""Per-group sums of squared deviations of the clipped values from the middle of the
        clipping range: :math:`Q_g = \sum_{x\in G_g}\big(\mathrm{clip}_{[a_g,b_g]}(x)
        - c_g\big)^2` with :math:`c_g = (a_g + b_g)/2`.

        Each term lies in :math:`[0, h_g^2]`, :math:`h_g = (b_g - a_g)/2`, so adding, removing
        or replacing one row moves :math:`Q_g` by at most :math:`h_g^2` — the sensitivity of the
        paid variance estimate of :mod:`~dpcore.analyses.mean.sampling_error`. One O(n) pass, run
        once per release (never per Monte Carlo replicate).

        ``low`` and ``high`` are ``(k,)`` finite bounds with ``low <= high``.
        """
        low, high = (np.broadcast_to(np.asarray(b, dtype=float), (self.k,)) for b in (low, high))
        group_of_row = np.repeat(np.arange(self.k), np.diff(self.offsets))
        centre = (low + high) / 2
        clipped = np.clip(self.sorted_values, low[group_of_row], high[group_of_row])
        deviations = clipped - centre[group_of_row]
        return np.bincount(
            group_of_row, weights=self._row_weights * deviations**2, minlength=self.k
        )

    # ---- construction -------------------------------------------------------------------------

    def subset(self, keep: object) -> GroupValues:
        """A new :class:`GroupValues` with only some groups, in their current order.

        Parameters
        ----------
        keep
            Boolean mask of shape ``(k,)`` or integer group indices. At least one group.
        """
        keep_arr = np.asarray(keep)
        if keep_arr.dtype == bool:
            if keep_arr.shape != (self.k,):
                raise ValueError(
                    f"`keep` as a mask must have shape ({self.k},), got {keep_arr.shape}"
                )
            idx = np.flatnonzero(keep_arr)
        elif np.issubdtype(keep_arr.dtype, np.integer) and keep_arr.ndim == 1:
            idx = np.unique(keep_arr)
            if idx.size and (idx[0] < 0 or idx[-1] >= self.k):
                raise ValueError(f"`keep` indices must be in [0, {self.k}), got {keep_arr}")
        else:
            raise TypeError(
                f"`keep` must be a boolean mask or integer indices, got dtype {keep_arr.dtype}"
            )
        if idx.size == 0:
            raise ValueError("`keep` must keep at least one group, got none")
        mask = np.zeros(self.k, dtype=bool)
        mask[idx] = True
        spans = [slice(self.offsets[g], self.offsets[g + 1]) for g in idx]
        counts = np.diff(self.offsets)[idx]
        return GroupValues(
            value=self.value,
            labels=tuple(self.labels[int(g)] for g in idx),
            sizes=self.sizes[idx],
            sorted_values=np.concatenate([self.sorted_values[span] for span in spans]),
            offsets=np.concatenate([[0], np.cumsum(counts)]),
            shares=None if self.shares is None else self.shares.restricted(mask),
            by=self.by,
            unit=self.unit,  # the groups kept are still the bounded persons' rows
            weights=None if self.weights is None
            else np.concatenate([self.weights[span] for span in spans]),
        )  # fmt: skip

    @classmethod
    def from_values(
        cls, values: object, *, label: str = "All", value: str = "value",
        weights: np.ndarray | None = None,
    ) -> GroupValues:  # fmt: skip
        """A single-group :class:`GroupValues` over a 1-D array of finite values (no grouping),
        each with its weight if ``weights`` are given."""
        values = finite_values(values)
        order = np.argsort(values, kind="stable")
        size = values.size if weights is None else int(np.round(np.sum(weights)))
        return cls(
            value=value,
            labels=(label,),
            sizes=np.array([size]),
            sorted_values=values[order],
            offsets=np.array([0, values.size]),
            weights=None if weights is None else np.asarray(weights, dtype=float)[order],
        )

    @functools.cached_property
    def pooled(self) -> GroupValues:
        """The whole population as one group, for whole-population ("vanilla") estimates.

        Sorted once on first use and cached on this object.
        """
        return GroupValues.from_values(
            self.sorted_values, label="All", value=self.value, weights=self.weights
        )

    @classmethod
    def from_grouping(
        cls, grouping: Grouping, frame: pd.DataFrame, value: str, unit: PrivacyUnit = ROW
    ) -> GroupValues:
        """Each group's values of column ``value``, sorted once.

        ``frame`` is the frame ``grouping`` was built from. Rows outside the groups (public
        holdout, dropped small groups) are not read; within a group, rows whose value is missing
        or infinite are left out and counted. A group left with no value is left out as a whole
        (:attr:`empty_groups`), with its public share; the other shares are rescaled. A grouping
        that keeps every group (``small_groups="keep"``) keeps such a group too, with size 0.

        With a person column in ``unit``, each person's rows are bounded first, by the cells of
        the grouping columns and exactly as every engine bounds them
        (:func:`~dpcore.foundations.privacy_unit.bound_contributions`), so that these statistics equal an
        engine's :class:`~dpcore.analyses.mean.sums.GroupSums`; rows the bound leaves out are
        said in :attr:`notes`, not counted as missing.

        The sort is done once (values, then a stable radix sort by group code); estimators never
        touch rows again.

        Raises
        ------
        ValueError
            A non-numeric or unknown value column; a value column that is also a grouping
            column; a person column that is unknown, a grouping or the value column, or has
            rows without an id; no usable value in any group.
        """
        instance_of("grouping", grouping, Grouping)
        instance_of("unit", unit, PrivacyUnit)
        codes = grouping.codes_for(data_frame("frame", frame))
        if value in grouping.by:
            raise ValueError(
                f"`value` column {shown(value)} is also a grouping column in `by`; choose a value "
                "column that is not used for grouping"
            )
        x = numeric_values(frame, "value", value)
        weights = row_weights(frame, grouping, x, {value: "the value to estimate"}, unit)
        in_group = codes >= 0
        usable = in_group & (weights > 0)
        finite_in_group = int((in_group & np.isfinite(x)).sum())
        if not usable.any():
            raise ValueError(
                f"`value` column {shown(value)} has no usable values: all "
                f"{int(in_group.sum()):,} rows of the groups are missing or infinite; choose "
                "another value column"
            )
        counts = np.bincount(codes[usable], weights=weights[usable], minlength=grouping.k).round()
        # A group with no usable value is left out, unless every group is kept: whether a group
        # has values is private when its size is (the only setting that keeps them all).
        has_values = counts > 0 if grouping.spec.built_small_groups != "keep" else counts >= 0
        # Renumber the groups that have values, keeping the grouping's order.
        new_code = np.cumsum(has_values) - 1
        row_code = new_code[codes[usable]]
        x = x[usable]
        k = int(has_values.sum())
        by_value = np.argsort(x)
        code_dtype = np.int16 if k <= np.iinfo(np.int16).max else np.int64
        by_group = np.argsort(row_code[by_value].astype(code_dtype), kind="stable")
        order = by_value[by_group]
        sorted_values = x[order]
        sizes = counts[has_values].astype(np.int64)
        offsets = np.zeros(k + 1, dtype=np.int64)
        np.cumsum(np.bincount(row_code, minlength=k), out=offsets[1:])
        return cls(
            value=value,
            labels=tuple(
                lab for lab, keep in zip(grouping.labels, has_values, strict=True) if keep
            ),
            sizes=sizes,
            sorted_values=sorted_values,
            offsets=offsets,
            shares=grouping.shares.restricted(has_values),
            n_missing=grouping.report.n_rows_without_values + int(in_group.sum()) - finite_in_group,
            empty_groups=tuple(
                lab for lab, keep in zip(grouping.labels, has_values, strict=True) if not keep
            ),
            by=grouping.by,
            unit=unit,
            notes=dropped_rows_notes(unit, finite_in_group - int(sizes.sum())),
            weights=None if unit.column is None else weights[usable][order],
        )

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        by: str | Sequence[str],
        value: str,
        edges: Mapping[str, Sequence[float]] | None = None,
        *,
        min_group_size: int = 2,
        small_groups: SmallGroups = "merge",
        max_groups: int = 5000,
    ) -> GroupValues:
        """:meth:`Grouping.from_frame` of ``df``'s rows, then :meth:`from_grouping` of ``value``.

        Shares are the group counts treated as public.
        """
        df = data_frame("df", df)
        if isinstance(value, str) and (value == by or (not isinstance(by, str) and value in by)):
            raise ValueError(
                f"`value` column {shown(value)} is also a grouping column in `by`; choose a value "
                "column that is not used for grouping"
            )
        grouping = Grouping.from_frame(
            df, by, edges, min_group_size=min_group_size, small_groups=small_groups,
            max_groups=max_groups,
        )  # fmt: skip
        return cls.from_grouping(grouping, df, value)


def finite_values(values: object) -> np.ndarray:
    """``values`` as a float64 array, which must be 1-D, non-empty and finite."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0 or not np.isfinite(array).all():
        raise ValueError(
            f"`values` must be a non-empty 1-D array of finite numbers, got shape "
            f"{array.shape} with {int(np.sum(~np.isfinite(array)))} non-finite entries"
        )
    return array


def kept_without_rows(labels: Sequence[str], sizes: np.ndarray) -> tuple[str, ...]:
    """The labels of the groups kept with no usable value (``small_groups="keep"``)."""
    return tuple(label for label, size in zip(labels, sizes, strict=True) if size == 0)


def left_out_messages(
    value: str, n_missing: int, empty_groups: tuple[str, ...], kept_empty: tuple[str, ...] = ()
) -> list[str]:
    """Plain sentences about the rows of ``value`` left out as missing or infinite, the groups
    left with none, and the groups kept with none (empty when nothing was left out)."""
    out = []
    if n_missing:
        verb = "was" if n_missing == 1 else "were"
        out.append(
            f"{plural(n_missing, 'row')} with a missing or infinite value in `{value}` {verb} "
            "left out."
        )
    if empty_groups:
        one = len(empty_groups) == 1
        out.append(
            f"{plural(len(empty_groups), 'group')} {'has' if one else 'have'} no usable value "
            f"in `{value}` and {'is' if one else 'are'} not estimated: "
            f"{list_labels(empty_groups)}."
        )
    if kept_empty:
        one = len(kept_empty) == 1
        out.append(
            f"{plural(len(kept_empty), 'group')} {'has' if one else 'have'} no usable value in "
            f"`{value}`: a release estimates {'it' if one else 'them'} from noise alone, and the "
            f"error charts leave {'it' if one else 'them'} out (there is no true mean to compare "
            f"with): {list_labels(kept_empty)}."
        )
    return out


def _bound_array(name: str, bound: object) -> np.ndarray:
    try:
        arr = np.asarray(bound, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"`{name}` must be a number or an array of numbers, got {type(bound).__name__}"
        ) from None
    if np.isnan(arr).any():
        raise ValueError(f"`{name}` must not contain NaN, got {shown(bound)}")
    return arr


def _group_major(bounds: np.ndarray) -> np.ndarray:
    """``(..., k)`` bounds as a C-ordered ``(k, m)`` array: row g holds all of group g's bounds,
    so that a search probes one group's values for a whole row."""
    k = bounds.shape[-1]
    return np.ascontiguousarray(np.moveaxis(bounds, -1, 0).reshape(k, -1))


def _search_groups(
    values: np.ndarray, offsets: np.ndarray, needles: np.ndarray, before: np.ufunc
) -> np.ndarray:
    """For every group g and each needle b in row g of ``needles`` (shape (k, m)), the index in
    ``values`` of group g's first value v with ``before(v, b)`` False: ``offsets[g]`` plus the
    number of the group's values below b (``np.less``) or at most b (``np.less_equal``).

    What ``np.searchsorted`` gives on ``values[offsets[g]:offsets[g + 1]]`` (sides "left" and
    "right"), for all groups at once: a branchless binary search that halves every group's
    remaining range per pass, so ⌈log2(largest group)⌉ passes over the (k, m) needles replace
    2k ``np.searchsorted`` calls, whose Python overhead dominated with many groups.
    """
    base = np.repeat(offsets[:-1], needles.shape[1]).reshape(needles.shape)
    remaining = np.diff(offsets)[:, None]  # the answer lies in [base, base + remaining]
    probe_at, step = np.empty_like(base), np.empty_like(base)
    probe, hit = np.empty(needles.shape), np.empty(needles.shape, dtype=bool)
    while (half := remaining >> 1).any():
        np.add(base, half, out=probe_at)
        np.take(values, probe_at, out=probe, mode="clip")  # an empty group's probe is unused
        before(probe, needles, out=hit)
        np.multiply(hit, half, out=step)  # values[base:base + half + 1] all come before b
        base += step
        remaining -= half
    # One candidate left per needle: base or base + 1 (only base for an empty group, whose base
    # may be the end of ``values``).
    np.take(values, base, out=probe, mode="clip")
    before(probe, needles, out=hit)
    hit &= remaining > 0
    return base + hit


def _zero_anchored_prefix(values: np.ndarray, zero: int) -> np.ndarray:
    r"""Prefix sums P of ``values`` (each a sorted value times its weight ≥ 0) with
    :math:`P_{t+1} - P_t = x_t` for every t, anchored at zero: :math:`P_z = 0` where z, given,
    is the first value ≥ 0, so that :math:`P_t` sums only the values between :math:`x_t` and 0.

    Then :math:`\sum_{i \le t < j} x_t = P_j - P_i` adds only values between the clipping
    bounds and 0: it never overflows, nor loses the small values to cancellation, because of
    values far outside the bounds (two values near −9e307 made the plain prefix sum −inf and the
    clipped sum NaN). The values before ``zero`` must be negative, the others not.
    """
    prefix = np.empty(values.size + 1, dtype=np.float64)
    prefix[zero] = 0.0
    # Far from zero the sums may overflow to ±inf; bounds within the data never reach them.
    with np.errstate(over="ignore"):
        np.cumsum(values[zero:], out=prefix[zero + 1 :])
        prefix[:zero] = -np.cumsum(values[:zero][::-1])[::-1]
    return prefix
