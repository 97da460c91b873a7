"""Groups (strata), their sufficient statistics, and public group shares.

A :class:`Strata` is the only view of the data that estimators get. It is built once from a
validated frame by :meth:`Strata.from_frame`: the rows are split into disjoint groups
:math:`G_1 \\cup \\dots \\cup G_k = X` (one group per combination of the ``by`` columns, as in
Rosenblatt, Stoyanovich & Musco, AAAI 2024, "Problem statement"), and per group we keep the size
:math:`n_g = |G_g|`, :math:`\\sum x`, :math:`\\sum x^2` and the sorted values with prefix sums, so
that any clipped sum :math:`\\sum_{x \\in G_g} \\min(\\max(x, a), b)` costs :math:`O(\\log n_g)`.

The stratified estimate of the population mean recombines group estimates with weights
:math:`|G_i| / n` (paper eq. 3), which the paper assumes are public. :class:`PublicShares` holds
such weights together with where they came from: the group counts of the data treated as public
(:func:`shares_from_counts`), a user-supplied table (:func:`shares_from_table`), or a disjoint
public holdout split (:func:`split_holdout`, :func:`shares_from_holdout`).

Privacy note: bucket edges for numeric grouping columns are never derived from the data
(quantiles would leak information about individuals); callers pass them in ``edges``.

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Literal

import numpy as np
import pandas as pd

from dpcore._validate import as_rng, open_unit_interval, positive_int

__all__ = [
    "LABEL_SEPARATOR",
    "MISSING_LABEL",
    "OTHER_LABEL",
    "HOLDOUT_SEED",
    "PublicShares",
    "Strata",
    "StrataReport",
    "StrataSpec",
    "shares_from_counts",
    "shares_from_holdout",
    "shares_from_table",
    "split_holdout",
]

LABEL_SEPARATOR = " × "
"""Joins the per-column parts of an intersectional group label, e.g. ``"White × Male"``."""

MISSING_LABEL = "(missing)"
"""Category given to a missing value in a grouping column."""

OTHER_LABEL = "Other (merged)"
"""Label of the group that collects groups smaller than ``min_group_size``."""

_MAX_LISTED = 10  # group labels spelled out in one report message before "and N more"


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def _plural(count: int, singular: str, plural: str | None = None) -> str:
    word = singular if count == 1 else (plural or singular + "s")
    return f"{count:,} {word}"


def _list_labels(labels: Sequence[str]) -> str:
    shown = ", ".join(f"“{lab}”" for lab in labels[:_MAX_LISTED])
    rest = len(labels) - _MAX_LISTED
    return shown + (f" and {rest:,} more" if rest > 0 else "")


@dataclass(frozen=True)
class StrataReport:
    """What :meth:`Strata.from_frame` did to the rows, for the UI to state on screen.

    Attributes
    ----------
    n_input_rows
        Rows in the frame that was passed in.
    n_dropped_nonfinite
        Rows dropped because their value was missing (NaN/NA) or infinite.
    merged_groups
        Labels of the groups smaller than ``min_group_size`` that were merged into
        :data:`OTHER_LABEL`.
    dropped_groups
        Labels of the groups smaller than ``min_group_size`` that were dropped (either because
        ``small_groups="drop"``, or because even their merged group was too small).
    n_rows_merged
        Rows in :data:`OTHER_LABEL` (0 if there is no such group).
    n_rows_dropped_small
        Rows dropped with ``dropped_groups``.
    value_column
        Name of the value column (used in the messages).
    min_group_size
        The minimum group size that was applied.
    merged_group_too_small
        True if the small groups were to be merged, but their merged group was itself smaller
        than ``min_group_size`` and was therefore dropped.
    """

    n_input_rows: int
    n_dropped_nonfinite: int = 0
    merged_groups: tuple[str, ...] = ()
    dropped_groups: tuple[str, ...] = ()
    n_rows_merged: int = 0
    n_rows_dropped_small: int = 0
    value_column: str = "value"
    min_group_size: int = 2
    merged_group_too_small: bool = False

    @property
    def n_rows_used(self) -> int:
        """Rows that made it into the groups."""
        return self.n_input_rows - self.n_dropped_nonfinite - self.n_rows_dropped_small

    def messages(self) -> list[str]:
        """Plain-language sentences describing every row or group that was dropped or merged.

        Returns an empty list when all rows were used as they are.
        """
        out: list[str] = []
        if self.n_dropped_nonfinite:
            verb = "was" if self.n_dropped_nonfinite == 1 else "were"
            out.append(
                f"{_plural(self.n_dropped_nonfinite, 'row')} with a missing or infinite value "
                f"in `{self.value_column}` {verb} dropped."
            )
        small = f"fewer than {_plural(self.min_group_size, 'row')}"
        if self.merged_groups:
            out.append(
                f"{_plural(len(self.merged_groups), 'group')} with {small} "
                f"({_plural(self.n_rows_merged, 'row')} in total) "
                f"{'was' if len(self.merged_groups) == 1 else 'were'} merged into "
                f"“{OTHER_LABEL}”: {_list_labels(self.merged_groups)}."
            )
        if self.dropped_groups:
            count = _plural(len(self.dropped_groups), "group")
            rows = _plural(self.n_rows_dropped_small, "row")
            verb = "was" if len(self.dropped_groups) == 1 else "were"
            if self.merged_group_too_small:
                out.append(
                    f"{count} with {small} {verb} dropped ({rows} in total): even merged into "
                    f"“{OTHER_LABEL}” they would have {small}. "
                    f"Groups: {_list_labels(self.dropped_groups)}."
                )
            else:
                out.append(
                    f"{count} with {small} {verb} dropped ({rows} in total): "
                    f"{_list_labels(self.dropped_groups)}."
                )
        return out


# --------------------------------------------------------------------------------------------
# Grouping rules (shared by Strata.from_frame and shares_from_holdout)
# --------------------------------------------------------------------------------------------


def _is_numeric_value_dtype(series: pd.Series) -> bool:
    """Numeric for the value column: ints, floats, and bools (0/1); not complex."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return True
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype)


def _is_numeric_group_dtype(series: pd.Series) -> bool:
    """Numeric for a grouping column (needs bucket edges): ints and floats, not bools."""
    dtype = series.dtype
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def _fmt_edge(e: float) -> str:
    if float(e).is_integer() and abs(e) < 1e15:
        return str(int(e))
    return repr(float(e))


def _bucket_labels(edges: tuple[float, ...]) -> list[str]:
    """``["< e0", "[e0, e1)", ..., "≥ eN"]`` for edges e0 < ... < eN."""
    txt = [_fmt_edge(e) for e in edges]
    labels = [f"< {txt[0]}"]
    labels += [f"[{a}, {b})" for a, b in zip(txt[:-1], txt[1:], strict=True)]
    labels.append(f"≥ {txt[-1]}")
    return labels


def _column_codes(
    series: pd.Series,
    name: str,
    edges: tuple[float, ...] | None,
    *,
    numeric_as_categories: bool = False,
) -> tuple[np.ndarray, list[str]]:
    """Per-row group codes (int64, 0..c-1) of one grouping column and the label of each code.

    Numeric columns with ``edges`` are bucketed (values at an edge go to the upper bucket);
    other columns group by their values' string form. Missing values get :data:`MISSING_LABEL`.
    """
    if edges is not None:
        if not _is_numeric_group_dtype(series):
            raise ValueError(
                f"`edges` were given for column {name!r}, but it is not numeric "
                f"(dtype {series.dtype}); bucket edges apply to numeric columns only."
            )
        x = series.to_numpy(dtype=np.float64, na_value=np.nan)
        codes = np.searchsorted(np.asarray(edges), x, side="right").astype(np.int64)
        labels = _bucket_labels(edges)
        missing = np.isnan(x)
        if missing.any():
            codes[missing] = len(labels)
            labels.append(MISSING_LABEL)
        return codes, labels

    if _is_numeric_group_dtype(series) and not numeric_as_categories:
        raise ValueError(
            f"`by` column {name!r} is numeric (dtype {series.dtype}). Strata Lab never derives "
            "bucket edges from the private data (its quantiles or range would leak information "
            "about individuals), so pass public bucket edges, e.g. "
            f"`edges={{{name!r}: [25, 45, 65]}}`. If the numbers are category codes, convert the "
            "column to text first."
        )
    raw_codes, uniques = pd.factorize(series, use_na_sentinel=True)
    raw_codes = np.asarray(raw_codes, dtype=np.int64)
    # Values with the same string form (e.g. 1 and "1") share one group, so labels are unique.
    strings = np.array([str(u) for u in uniques] + [MISSING_LABEL], dtype=object)
    str_codes, str_uniques = pd.factorize(strings)
    # Sentinel -1 (missing) indexes the appended MISSING_LABEL entry.
    codes = np.asarray(str_codes, dtype=np.int64)[raw_codes]
    return codes, [str(u) for u in str_uniques]


def _combine_codes(
    codes_per_col: list[np.ndarray], labels_per_col: list[list[str]]
) -> tuple[np.ndarray, list[str]]:
    """Combine per-column codes into compact intersection codes and their joined labels."""
    cur, uniq = pd.factorize(codes_per_col[0])
    cur = np.asarray(cur, dtype=np.int64)
    combos = np.asarray(uniq, dtype=np.int64)[:, None]
    for codes_j, labels_j in zip(codes_per_col[1:], labels_per_col[1:], strict=True):
        radix = len(labels_j)
        key = cur * radix + codes_j  # < n * radix: no overflow for any realistic table
        cur, uniq = pd.factorize(key)
        cur = np.asarray(cur, dtype=np.int64)
        uniq = np.asarray(uniq, dtype=np.int64)
        combos = np.column_stack([combos[uniq // radix], uniq % radix])
    labels = [
        LABEL_SEPARATOR.join(labels_per_col[j][c] for j, c in enumerate(row))
        for row in combos.tolist()
    ]
    return cur, labels


def _group_rows(
    df: pd.DataFrame,
    by: tuple[str, ...],
    edges: Mapping[str, tuple[float, ...]],
    *,
    numeric_as_categories: bool = False,
) -> tuple[list[np.ndarray], list[list[str]]]:
    """Per-column codes and labels of ``by`` under the grouping rules of :meth:`Strata.from_frame`."""
    codes, labels = [], []
    for col in by:
        c, lab = _column_codes(
            df[col], col, edges.get(col), numeric_as_categories=numeric_as_categories
        )
        codes.append(c)
        labels.append(lab)
    return codes, labels


def _value_array(df: pd.DataFrame, value: str) -> np.ndarray:
    series = df[value]
    if not _is_numeric_value_dtype(series):
        raise ValueError(
            f"`value` column {value!r} must be numeric, got dtype {series.dtype}; choose a column "
            "of numbers (or 0/1 or true/false)."
        )
    return series.to_numpy(dtype=np.float64, na_value=np.nan)


# --------------------------------------------------------------------------------------------
# Validation of from_frame's arguments
# --------------------------------------------------------------------------------------------


def _check_frame(df: object, name: str = "df") -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"`{name}` must be a pandas DataFrame, got {type(df).__name__}")
    return df


def _check_columns(df: pd.DataFrame, by: object, value: object) -> tuple[tuple[str, ...], str]:
    if isinstance(by, str):
        by = (by,)
    if not isinstance(by, Iterable):
        raise TypeError(f"`by` must be a column name or a list of column names, got {by!r}")
    by = tuple(by)
    if not by:
        raise ValueError("`by` must name at least one grouping column, got none")
    for col in (*by, value):
        if not isinstance(col, str):
            raise TypeError(f"column names must be strings, got {type(col).__name__} {col!r}")
    if len(set(by)) != len(by):
        raise ValueError(f"`by` must not repeat a column, got {list(by)}")
    available = ", ".join(str(c) for c in df.columns)
    unknown = [c for c in (*by, value) if c not in df.columns]
    if unknown:
        raise ValueError(
            f"unknown column(s) {', '.join(repr(c) for c in unknown)}; "
            f"available columns: {available}"
        )
    if value in by:
        raise ValueError(
            f"`value` column {value!r} is also a grouping column in `by`; choose a value column "
            "that is not used for grouping"
        )
    return by, value


def _check_edges(edges: object, by: tuple[str, ...]) -> Mapping[str, tuple[float, ...]]:
    if edges is None:
        return {}
    if not isinstance(edges, Mapping):
        raise TypeError(
            f"`edges` must be a mapping {{column: [e0, e1, ...]}}, got {type(edges).__name__}"
        )
    out: dict[str, tuple[float, ...]] = {}
    for col, seq in edges.items():
        if col not in by:
            raise ValueError(
                f"`edges` has bucket edges for {col!r}, which is not a grouping column in `by` "
                f"({', '.join(by)})"
            )
        try:
            arr = np.asarray(seq, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"`edges[{col!r}]` must be a list of numbers, got {seq!r}") from None
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"`edges[{col!r}]` must be a non-empty list of numbers, got {seq!r}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"`edges[{col!r}]` must contain finite numbers only, got {seq!r}")
        if np.any(np.diff(arr) <= 0):
            raise ValueError(f"`edges[{col!r}]` must be strictly increasing, got {seq!r}")
        out[col] = tuple(float(e) for e in arr)
    return out


# --------------------------------------------------------------------------------------------
# Strata
# --------------------------------------------------------------------------------------------


def _frozen(arr: np.ndarray) -> np.ndarray:
    if arr.flags.writeable:
        arr = arr.copy()
        arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False, repr=False)
class Strata:
    """Disjoint groups of one value column with their per-group sufficient statistics.

    Build it with :meth:`from_frame`. Groups are ordered by descending size, then label; all
    per-group arrays are aligned with :attr:`labels`. Arrays are read-only.

    Attributes
    ----------
    by
        Grouping columns.
    value
        Value column.
    labels
        One label per group, e.g. ``"White × Male"`` (parts joined with :data:`LABEL_SEPARATOR`).
    sizes
        ``(k,)`` int64 group sizes :math:`n_g`.
    sums, sumsq
        ``(k,)`` float64 :math:`\\sum_{x \\in G_g} x` and :math:`\\sum_{x \\in G_g} x^2`.
    sorted_values
        ``(n,)`` float64: each group's values sorted ascending, groups concatenated in label order.
    offsets
        ``(k+1,)`` int64: group ``g`` is ``sorted_values[offsets[g]:offsets[g+1]]``.
    prefix
        ``(n+1,)`` float64 with ``prefix[0] = 0`` and ``prefix[i] = sum(sorted_values[:i])``.
    report
        What happened to the rows on the way (:class:`StrataReport`).
    edges
        Bucket edges used for numeric grouping columns (``{column: (e0, e1, ...)}``), kept so that
        a public holdout can be grouped by the same rules.
    """

    by: tuple[str, ...]
    value: str
    labels: tuple[str, ...]
    sizes: np.ndarray
    sums: np.ndarray
    sumsq: np.ndarray
    sorted_values: np.ndarray
    offsets: np.ndarray
    prefix: np.ndarray
    report: StrataReport
    edges: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    # Per-group prefix sums restarting at 0 for each group (group g occupies
    # [offsets[g] + g, offsets[g+1] + g + 1)); more accurate than differences of `prefix`.
    _local_prefix: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "by", tuple(self.by))
        set_(self, "labels", tuple(str(lab) for lab in self.labels))
        set_(self, "edges", {c: tuple(float(v) for v in e) for c, e in self.edges.items()})
        for name, dtype in (
            ("sizes", np.int64),
            ("sums", np.float64),
            ("sumsq", np.float64),
            ("sorted_values", np.float64),
            ("offsets", np.int64),
            ("prefix", np.float64),
        ):
            set_(self, name, _frozen(np.asarray(getattr(self, name), dtype=dtype)))
        k, n = len(self.labels), self.sorted_values.shape[0]
        if k < 1 or len(set(self.labels)) != k:
            raise ValueError(f"`labels` must be at least one unique label, got {self.labels!r}")
        for name, shape in (
            ("sizes", (k,)),
            ("sums", (k,)),
            ("sumsq", (k,)),
            ("sorted_values", (n,)),
            ("offsets", (k + 1,)),
            ("prefix", (n + 1,)),
        ):
            if getattr(self, name).shape != shape:
                raise ValueError(
                    f"`{name}` must have shape {shape}, got {getattr(self, name).shape}"
                )
        if self.offsets[0] != 0 or not np.array_equal(np.diff(self.offsets), self.sizes):
            raise ValueError("`offsets` must start at 0 and step by `sizes`")
        if np.any(self.sizes < 1):
            raise ValueError(f"`sizes` must all be >= 1, got {self.sizes}")
        step = np.diff(self.sorted_values)
        inside = np.ones(step.shape, dtype=bool)
        inside[self.offsets[1:-1] - 1] = False  # a group boundary may step down
        if not np.all(step[inside] >= 0):
            raise ValueError("`sorted_values` must be sorted ascending within each group")
        local = np.empty(n + k, dtype=np.float64)
        for g in range(k):
            a, b = self.offsets[g], self.offsets[g + 1]
            local[a + g] = 0.0
            np.cumsum(self.sorted_values[a:b], out=local[a + g + 1 : b + g + 1])
        local.setflags(write=False)
        set_(self, "_local_prefix", local)

    def __repr__(self) -> str:
        return (
            f"Strata(by={self.by!r}, value={self.value!r}, k={self.k}, n={self.n}, "
            f"labels={list(self.labels[:5])!r}{' ...' if self.k > 5 else ''})"
        )

    # ---- derived quantities -----------------------------------------------------------------

    @property
    def k(self) -> int:
        """Number of groups."""
        return len(self.labels)

    @property
    def n(self) -> int:
        """Number of rows over all groups."""
        return int(self.sorted_values.shape[0])

    @property
    def means(self) -> np.ndarray:
        """``(k,)`` true (non-private) group means :math:`\\bar x_g = \\sum x / n_g`."""
        return self.sums / self.sizes

    @property
    def global_mean(self) -> float:
        """True (non-private) mean over all rows, :math:`\\sum_g \\sum x / n`."""
        return float(self.sums.sum() / self.n)

    def group_values(self, g: int) -> np.ndarray:
        """Sorted values of group ``g`` (a read-only view)."""
        return self.sorted_values[self.offsets[g] : self.offsets[g + 1]]

    # ---- clipped sums -------------------------------------------------------------------------

    def clipped_sums(self, low: object, high: object) -> np.ndarray:
        """Per-group sums of values clipped to ``[low, high]``.

        .. math::
            S_g(a, b) = \\sum_{x \\in G_g} \\min(\\max(x, a), b)
                      = a \\cdot \\#\\{x < a\\} + \\sum_{a \\le x \\le b} x + b \\cdot \\#\\{x > b\\}

        computed with two binary searches in the group's sorted values and prefix sums, i.e.
        :math:`O(\\log n_g)` per group and bound pair (used by StratCoinpress, paper appendix B).

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
                f"`low` must be <= `high` elementwise, got low={lo[where]!r} > high={hi[where]!r} "
                f"at index {where}"
            )
        out = np.empty(shape, dtype=np.float64)
        with np.errstate(invalid="ignore"):  # inf * 0 in the discarded branch of np.where
            for g in range(self.k):
                a, b = int(self.offsets[g]), int(self.offsets[g + 1])
                vals = self.sorted_values[a:b]
                local = self._local_prefix[a + g : b + g + 1]
                size = b - a
                lg, hg = lo[..., g], hi[..., g]
                i = np.searchsorted(vals, lg, side="left")  # count(x < low)
                j = np.searchsorted(vals, hg, side="right")  # count(x <= high)
                below = np.where(i > 0, lg * i, 0.0)
                above = np.where(j < size, hg * (size - j), 0.0)
                out[..., g] = below + (local[j] - local[i]) + above
        return out

    # ---- construction -------------------------------------------------------------------------

    def subset(self, keep: object) -> Strata:
        """A new :class:`Strata` with only some groups, in their current order.

        Parameters
        ----------
        keep
            Boolean mask of shape ``(k,)`` or integer group indices. At least one group.

        Notes
        -----
        The :attr:`report` is carried over unchanged (it describes how the rows were read).
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
        pieces = [self.group_values(int(g)) for g in idx]
        sorted_values = np.concatenate(pieces)
        sizes = self.sizes[idx]
        prefix = np.empty(sorted_values.size + 1)
        prefix[0] = 0.0
        np.cumsum(sorted_values, out=prefix[1:])
        return Strata(
            by=self.by,
            value=self.value,
            labels=tuple(self.labels[int(g)] for g in idx),
            sizes=sizes,
            sums=self.sums[idx],
            sumsq=self.sumsq[idx],
            sorted_values=sorted_values,
            offsets=np.concatenate([[0], np.cumsum(sizes)]),
            prefix=prefix,
            report=self.report,
            edges=self.edges,
        )

    def assign(self, df: pd.DataFrame) -> np.ndarray:
        """The group index of each row of ``df`` under this stratification's rules.

        Rows are grouped by :attr:`by` with :attr:`edges` exactly as in :meth:`from_frame`. A row
        whose group was merged goes to ``"Other (merged)"``; a row whose group was dropped, or
        that matches no group, gets -1. Lets estimators that need other columns than
        :attr:`value` (e.g. a ratio of two sums) use the same groups.
        """
        df = _check_frame(df)
        missing = [c for c in self.by if c not in df.columns]
        if missing:
            raise ValueError(
                f"`df` lacks the grouping column(s) {', '.join(map(repr, missing))}; available "
                f"columns: {', '.join(str(c) for c in df.columns)}"
            )
        col_codes, col_labels = _group_rows(df, self.by, self.edges)
        codes, labels = _combine_codes(col_codes, col_labels)
        index = {label: g for g, label in enumerate(self.labels)}
        merged_into = index.get(OTHER_LABEL, -1)
        merged = set(self.report.merged_groups)
        lookup = np.array(
            [index.get(label, merged_into if label in merged else -1) for label in labels],
            dtype=np.int64,
        )
        return lookup[codes]

    @classmethod
    def from_values(cls, values: object, *, label: str = "All", value: str = "value") -> Strata:
        """A single-group :class:`Strata` over a 1-D array of finite values (no grouping)."""
        array = np.asarray(values, dtype=float)
        if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)):
            raise ValueError(
                f"`values` must be a non-empty 1-D array of finite numbers, got shape "
                f"{array.shape} with {int(np.sum(~np.isfinite(array)))} non-finite entries"
            )
        ordered = np.sort(array)
        prefix = np.concatenate([[0.0], np.cumsum(ordered)])
        return cls(
            by=(),
            value=value,
            labels=(label,),
            sizes=np.array([ordered.size]),
            sums=np.array([prefix[-1]]),
            sumsq=np.array([float(np.dot(ordered, ordered))]),
            sorted_values=ordered,
            offsets=np.array([0, ordered.size]),
            prefix=prefix,
            report=StrataReport(n_input_rows=ordered.size, value_column=value),
        )

    @functools.cached_property
    def pooled(self) -> Strata:
        """The whole population as one group, for whole-population ("vanilla") estimates.

        Sorted once on first use and cached on this object.
        """
        pooled = Strata.from_values(self.sorted_values, label="All", value=self.value)
        return dataclasses.replace(pooled, report=self.report)

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        by: str | Sequence[str],
        value: str,
        edges: Mapping[str, Sequence[float]] | None = None,
        *,
        min_group_size: int = 2,
        small_groups: Literal["merge", "drop"] = "merge",
        max_groups: int = 5000,
    ) -> Strata:
        """Split a frame's rows into groups and compute each group's sufficient statistics once.

        Parameters
        ----------
        df
            The (validated) data, one row per person.
        by
            One or more grouping columns; groups are all combinations present in the data
            (intersections), labelled ``"a × b"``. Text, categorical, boolean and object columns
            group by their values (a missing value becomes the category ``"(missing)"``). A
            numeric column needs public bucket edges in ``edges``.
        value
            Numeric value column (booleans count as 0/1).
        edges
            ``{column: [e0, e1, ..., eN]}``, strictly increasing finite numbers, for numeric
            grouping columns. Buckets are ``"< e0"``, ``"[e0, e1)"``, ..., ``"≥ eN"``, so no row is
            lost; a value equal to an edge :math:`e_i` goes to ``"[e_i, e_{i+1})"``. Missing
            values go to ``"(missing)"``. Edges are never derived from the data: quantiles of the
            private data would leak information about individuals.
        min_group_size
            Groups with fewer rows are merged into one group ``"Other (merged)"``
            (``small_groups="merge"``) or dropped (``small_groups="drop"``). If the merged group
            is itself smaller than ``min_group_size``, it is dropped too.
        max_groups
            Upper limit on the number of groups after the small-group policy.

        Returns
        -------
        Strata
            Groups ordered by descending size, then label.

        Raises
        ------
        TypeError
            If ``df`` is not a DataFrame or a column name is not a string.
        ValueError
            Unknown columns; ``value`` in ``by``; a non-numeric or entirely missing value column;
            a numeric grouping column without edges; bad edges; an empty frame or no rows left;
            fewer than 2 or more than ``max_groups`` groups.

        Notes
        -----
        Rows whose value is NaN/NA or ±inf are dropped before grouping; their number is recorded
        in :attr:`StrataReport.n_dropped_nonfinite` and stated by
        :meth:`StrataReport.messages`. A category whose text is literally ``"(missing)"`` shares
        a group with missing values.

        The sort is done once (values, then a stable radix sort by group code); estimators never
        touch rows again.
        """
        df = _check_frame(df)
        by, value = _check_columns(df, by, value)
        edges_map = _check_edges(edges, by)
        min_group_size = positive_int("min_group_size", min_group_size)
        max_groups = positive_int("max_groups", max_groups)
        if small_groups not in ("merge", "drop"):
            raise ValueError(f"`small_groups` must be 'merge' or 'drop', got {small_groups!r}")
        n_input = len(df)
        if n_input == 0:
            raise ValueError("the table has no rows; upload or choose a table with data")

        x = _value_array(df, value)
        finite = np.isfinite(x)
        n_finite = int(finite.sum())
        if n_finite == 0:
            raise ValueError(
                f"`value` column {value!r} has no usable values: all {n_input:,} are missing or "
                "infinite; choose another value column"
            )
        col_codes, col_labels = _group_rows(df, by, edges_map)
        if n_finite < n_input:
            x = x[finite]
            col_codes = [c[finite] for c in col_codes]
        codes, labels = _combine_codes(col_codes, col_labels)
        sizes = np.bincount(codes, minlength=len(labels)).astype(np.int64)

        # ---- small-group policy: old code -> new group (or -1 = dropped) ----
        small = sizes < min_group_size
        keep_labels = [lab for lab, s in zip(labels, small, strict=True) if not s]
        keep_sizes = sizes[~small].tolist()
        new_code = np.full(len(labels), -1, dtype=np.int64)
        new_code[~small] = np.arange(len(keep_labels))
        merged: tuple[str, ...] = ()
        dropped: tuple[str, ...] = ()
        n_merged = n_dropped_small = 0
        too_small = False
        if small.any():
            small_idx = sorted(np.flatnonzero(small), key=lambda g: (-sizes[g], labels[g]))
            small_labels = tuple(labels[i] for i in small_idx)
            small_rows = int(sizes[small].sum())
            if small_groups == "merge" and small_rows >= min_group_size:
                if OTHER_LABEL in keep_labels:
                    raise ValueError(
                        f"a group is already labelled {OTHER_LABEL!r}, so small groups cannot be "
                        "merged into it; rename that category or use small_groups='drop'"
                    )
                new_code[small] = len(keep_labels)
                keep_labels.append(OTHER_LABEL)
                keep_sizes.append(small_rows)
                merged, n_merged = small_labels, small_rows
            else:
                dropped, n_dropped_small = small_labels, small_rows
                too_small = small_groups == "merge"

        k = len(keep_labels)
        if k == 0:
            raise ValueError(
                f"no rows are left: every group has fewer than {min_group_size:,} rows "
                f"({len(labels):,} groups from {', '.join(by)}); choose coarser grouping columns "
                "or a smaller `min_group_size`"
            )
        if k < 2:
            raise ValueError(
                f"a stratification needs at least 2 groups; got 1: {keep_labels[0]!r}. "
                "Choose another grouping column (or more of them)."
            )
        if k > max_groups:
            raise ValueError(
                f"{k:,} groups is more than the limit of {max_groups:,}; use fewer or coarser "
                "grouping columns (e.g. wider buckets)"
            )

        # ---- final order: descending size, then label ----
        order = sorted(range(k), key=lambda g: (-keep_sizes[g], keep_labels[g]))
        rank = np.empty(k, dtype=np.int64)
        rank[order] = np.arange(k)
        final_code = np.where(new_code >= 0, rank[np.maximum(new_code, 0)], -1)
        row_code = final_code[codes]
        if n_dropped_small:
            kept = row_code >= 0
            row_code, x = row_code[kept], x[kept]

        # ---- one sort: by value, then a stable (radix for small ints) sort by group ----
        by_value = np.argsort(x)
        code_dtype = np.int16 if k <= np.iinfo(np.int16).max else np.int64
        by_group = np.argsort(row_code[by_value].astype(code_dtype), kind="stable")
        sorted_values = x[by_value[by_group]]
        final_sizes = np.array([keep_sizes[g] for g in order], dtype=np.int64)
        offsets = np.zeros(k + 1, dtype=np.int64)
        np.cumsum(final_sizes, out=offsets[1:])
        starts = offsets[:-1]
        sums = np.add.reduceat(sorted_values, starts)
        sumsq = np.add.reduceat(sorted_values * sorted_values, starts)
        prefix = np.empty(sorted_values.size + 1, dtype=np.float64)
        prefix[0] = 0.0
        np.cumsum(sorted_values, out=prefix[1:])

        report = StrataReport(
            n_input_rows=n_input,
            n_dropped_nonfinite=n_input - n_finite,
            merged_groups=merged,
            dropped_groups=dropped,
            n_rows_merged=n_merged,
            n_rows_dropped_small=n_dropped_small,
            value_column=value,
            min_group_size=min_group_size,
            merged_group_too_small=too_small,
        )
        return cls(
            by=by,
            value=value,
            labels=tuple(keep_labels[g] for g in order),
            sizes=final_sizes,
            sums=sums,
            sumsq=sumsq,
            sorted_values=sorted_values,
            offsets=offsets,
            prefix=prefix,
            report=report,
            edges=edges_map,
        )


def _bound_array(name: str, bound: object) -> np.ndarray:
    try:
        arr = np.asarray(bound, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"`{name}` must be a number or an array of numbers, got {type(bound).__name__}"
        ) from None
    if np.isnan(arr).any():
        raise ValueError(f"`{name}` must not contain NaN, got {bound!r}")
    return arr


# --------------------------------------------------------------------------------------------
# Public shares
# --------------------------------------------------------------------------------------------

ShareSource = Literal["data", "table", "holdout"]


@dataclass(frozen=True, eq=False)
class PublicShares:
    """Public group proportions :math:`w_g = |G_g| / n` used to recombine group estimates.

    The stratified population estimate is :math:`\\hat p_{strat} = \\sum_g w_g \\hat p_g`
    (paper eq. 3); the paper assumes the :math:`w_g` are public.

    Attributes
    ----------
    values
        ``(k,)`` nonnegative, summing to 1, aligned with ``strata.labels``.
    source
        ``"data"`` (group counts of the private data treated as public), ``"table"``
        (user-supplied) or ``"holdout"`` (a disjoint public part of the data).
    description
        One sentence for the UI saying where the shares come from.
    labels
        The group labels the shares are aligned with (empty if not recorded).
    """

    values: np.ndarray
    source: ShareSource
    description: str
    labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        values = np.array(self.values, dtype=np.float64)
        if values.ndim != 1 or values.size == 0:
            raise ValueError(f"`values` must be a non-empty 1-D array, got shape {values.shape}")
        if not np.all(np.isfinite(values)) or np.any(values < 0):
            raise ValueError(f"`values` must be finite and >= 0, got {values}")
        if not math.isclose(float(values.sum()), 1.0, rel_tol=0, abs_tol=1e-9):
            raise ValueError(f"`values` must sum to 1, got a sum of {values.sum()!r}")
        if self.source not in ("data", "table", "holdout"):
            raise ValueError(f"`source` must be 'data', 'table' or 'holdout', got {self.source!r}")
        labels = tuple(self.labels)
        if labels and len(labels) != values.size:
            raise ValueError(
                f"`labels` must have one label per share ({values.size}), got {len(labels)}"
            )
        values.setflags(write=False)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "labels", labels)


def _check_strata(strata: object) -> Strata:
    if not isinstance(strata, Strata):
        raise TypeError(f"`strata` must be a Strata, got {type(strata).__name__}")
    return strata


def shares_from_counts(strata: Strata) -> PublicShares:
    """Group counts of the data, :math:`n_g / n`, treated as public.

    This is the paper's setting when the group sizes are known publicly (e.g. from a census).
    The counts of the uploaded data are *not* privacy-protected; the UI must say so.
    """
    strata = _check_strata(strata)
    return PublicShares(
        values=strata.sizes / strata.n,
        source="data",
        description="Group counts from the data, treated as public",
        labels=strata.labels,
    )


def _table_items(table: object) -> list[tuple[str, object]]:
    if isinstance(table, pd.DataFrame):
        missing = [c for c in ("group", "share") if c not in table.columns]
        if missing:
            raise ValueError(
                "`table` as a DataFrame must have columns 'group' and 'share', missing "
                f"{', '.join(repr(c) for c in missing)}; got columns "
                f"{', '.join(str(c) for c in table.columns)}"
            )
        items = list(zip(table["group"].tolist(), table["share"].tolist(), strict=True))
    elif isinstance(table, pd.Series):
        items = list(zip(table.index.tolist(), table.tolist(), strict=True))
    elif isinstance(table, Mapping):
        items = list(table.items())
    else:
        raise TypeError(
            "`table` must be a mapping {group: share}, a pandas Series indexed by group, or a "
            f"DataFrame with columns 'group' and 'share', got {type(table).__name__}"
        )
    out = [(str(g).strip(), s) for g, s in items]
    dups = sorted(g for g, count in Counter(g for g, _ in out).items() if count > 1)
    if dups:
        raise ValueError(f"`table` lists these groups more than once: {_list_labels(dups)}")
    return out


def shares_from_table(
    strata: Strata, table: Mapping[str, float] | pd.Series | pd.DataFrame
) -> PublicShares:
    """User-supplied public shares, e.g. census proportions, aligned with ``strata.labels``.

    Parameters
    ----------
    strata
        The groups the shares are for.
    table
        ``{group label: share}``, a Series indexed by group label, or a DataFrame with columns
        ``"group"`` and ``"share"``. Shares may be proportions, percentages or counts: they are
        rescaled to sum to 1 (the description says so when the total was not 1).

    Returns
    -------
    PublicShares
        ``source="table"``.

    Raises
    ------
    ValueError
        A group of ``strata`` without a share (all missing ones are listed); a group not in
        ``strata`` (listed); a negative, NaN or infinite share (groups named); all shares zero;
        a group listed twice.

    Notes
    -----
    Labels are compared after stripping surrounding whitespace. The share of
    ``"Other (merged)"`` may be given directly or as the shares of all the groups that were
    merged into it (then they are added up). Shares of groups that ``from_frame`` dropped as too
    small are ignored (those rows are not estimated).
    """
    strata = _check_strata(strata)
    items = _table_items(table)
    known = set(strata.labels)
    merged = set(strata.report.merged_groups)
    dropped = set(strata.report.dropped_groups)
    keys = {g for g, _ in items}

    extra = [g for g, _ in items if g not in known | merged | dropped]
    if extra:
        raise ValueError(
            f"`table` has shares for {_plural(len(extra), 'group')} that are not among the "
            f"groups: {_list_labels(extra)}. Expected labels like "
            f"{_list_labels(list(strata.labels)[:3])}"
        )
    values: dict[str, float] = {}
    bad: list[str] = []
    for g, s in items:
        if isinstance(s, bool) or not isinstance(s, Real | np.integer | np.floating):
            try:
                s = float(s)  # e.g. numeric text from a data editor
            except (TypeError, ValueError):
                bad.append(g)
                continue
        s = float(s)
        if not math.isfinite(s) or s < 0:
            bad.append(g)
        values[g] = s
    if bad:
        raise ValueError(
            f"`table` shares must be finite numbers >= 0; these groups have a negative, missing, "
            f"infinite or non-numeric share: {_list_labels(bad)}"
        )
    given_merged = sorted(keys & merged)
    if OTHER_LABEL in known and OTHER_LABEL not in keys and given_merged:
        absent = sorted(merged - keys)
        if not absent:
            values[OTHER_LABEL] = sum(values[g] for g in given_merged)
            keys = keys | {OTHER_LABEL}
        else:
            raise ValueError(
                f"`table` gives shares for some of the groups merged into {OTHER_LABEL!r} but is "
                f"missing {_list_labels(absent)}; give a share for each of them, or one share "
                f"for {OTHER_LABEL!r}"
            )
    elif OTHER_LABEL in keys and given_merged:
        raise ValueError(
            f"`table` gives a share for {OTHER_LABEL!r} and also for groups merged into it "
            f"({_list_labels(given_merged)}); give one or the other"
        )
    missing = [lab for lab in strata.labels if lab not in keys]
    if missing:
        raise ValueError(
            f"`table` is missing shares for {_plural(len(missing), 'group')}: "
            f"{_list_labels(missing)}; give a share for every group"
        )
    raw = np.array([values[lab] for lab in strata.labels], dtype=np.float64)
    total = float(raw.sum())
    if total <= 0:
        raise ValueError("`table` shares are all zero; at least one group needs a share > 0")
    description = "User-supplied table of public shares"
    if not math.isclose(total, 1.0, rel_tol=0, abs_tol=1e-9):
        description += f" (rescaled from a total of {total:g} to sum to 1)"
    ignored = sorted(keys & dropped)
    if ignored:
        description += f"; shares of {_plural(len(ignored), 'dropped small group')} ignored"
    return PublicShares(
        values=raw / total, source="table", description=description, labels=strata.labels
    )


def split_holdout(
    df: pd.DataFrame, fraction: float, *, rng: np.random.Generator | int | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split rows into a private part and a disjoint public holdout.

    A simple random sample without replacement of ``round(fraction * n)`` rows becomes the
    public part; the rest is the private part. Both keep the original row order and index.

    Parameters
    ----------
    df
        The data.
    fraction
        Share of rows for the public part, ``0 < fraction < 1``.
    rng
        ``numpy.random.Generator``, int seed or None.

    Returns
    -------
    (private_part, public_part)
        Disjoint frames whose rows together are ``df``'s rows.

    Notes
    -----
    The rows of the public part are treated as public: their privacy is not protected. This
    models having a public survey of the same population; use it to illustrate, and prefer
    genuinely public shares for a real release.
    """
    df = _check_frame(df)
    fraction = open_unit_interval("fraction", fraction)
    gen = as_rng(rng)
    n = len(df)
    n_public = int(round(fraction * n))
    if n_public == 0 or n_public == n:
        raise ValueError(
            f"`fraction` = {fraction!r} of {n:,} rows leaves one part empty; use a fraction "
            f"between {1 / max(n, 1):.3g} and {1 - 1 / max(n, 1):.3g} or more rows"
        )
    public = np.zeros(n, dtype=bool)
    public[gen.choice(n, size=n_public, replace=False)] = True
    return df.iloc[~public], df.iloc[public]


def shares_from_holdout(strata: Strata, public_df: pd.DataFrame) -> PublicShares:
    """Group proportions in a public holdout, grouped by the same rules as ``strata``.

    Parameters
    ----------
    strata
        The groups of the private part (built by :meth:`Strata.from_frame`).
    public_df
        The public part, disjoint from the private rows (see :func:`split_holdout`).

    Returns
    -------
    PublicShares
        ``source="holdout"``.

    Notes
    -----
    Rows are grouped with ``strata.by`` and ``strata.edges`` and ``"(missing)"`` exactly as in
    :meth:`Strata.from_frame`. If the value column is present, rows with a missing or infinite
    value are not counted (mirroring ``from_frame``). A private group absent from the holdout
    gets share 0. Holdout rows whose group is not one of ``strata``'s groups (groups merged or
    dropped as too small there, or unseen) count toward ``"Other (merged)"`` if that group
    exists, and are ignored otherwise.

    Raises
    ------
    ValueError
        Missing grouping columns, or no holdout row falls in any group.
    """
    strata = _check_strata(strata)
    public_df = _check_frame(public_df, "public_df")
    missing_cols = [c for c in strata.by if c not in public_df.columns]
    if missing_cols:
        raise ValueError(
            f"`public_df` lacks the grouping column(s) {', '.join(map(repr, missing_cols))}; "
            f"available columns: {', '.join(str(c) for c in public_df.columns)}"
        )
    n_rows = len(public_df)
    if n_rows == 0:
        raise ValueError("`public_df` has no rows; a public holdout needs rows to count")
    col_codes, col_labels = _group_rows(
        public_df, strata.by, strata.edges, numeric_as_categories=True
    )
    if strata.value in public_df.columns and _is_numeric_value_dtype(public_df[strata.value]):
        finite = np.isfinite(_value_array(public_df, strata.value))
        col_codes = [c[finite] for c in col_codes]
    if col_codes[0].size == 0:
        raise ValueError(
            f"`public_df` has no rows with a usable value in {strata.value!r}; no shares to count"
        )
    codes, labels = _combine_codes(col_codes, col_labels)
    index = {lab: g for g, lab in enumerate(strata.labels)}
    other = index.get(OTHER_LABEL, -1)
    target = np.array([index.get(lab, other) for lab in labels], dtype=np.int64)
    row_target = target[codes]
    counted = row_target[row_target >= 0]
    if counted.size == 0:
        raise ValueError(
            "none of the holdout rows fall in the groups of the data; check that the holdout "
            "comes from the same table"
        )
    counts = np.bincount(counted, minlength=strata.k)
    total_rows = n_rows + strata.report.n_input_rows
    description = (
        f"Public holdout: {100 * n_rows / total_rows:.3g}% of rows ({n_rows:,}), disjoint from "
        "the data used for estimation"
    )
    absent = int(np.sum(counts == 0))
    if absent:
        description += f"; {_plural(absent, 'group')} absent from the holdout get share 0"
    return PublicShares(
        values=counts / counts.sum(),
        source="holdout",
        description=description,
        labels=strata.labels,
    )


# --------------------------------------------------------------------------------------------
# A recipe for strata and shares
# --------------------------------------------------------------------------------------------

HOLDOUT_SEED = 20240101
"""Seed of the holdout split, fixed so that the split (and every cache and release) is stable."""


@dataclass(frozen=True)
class StrataSpec:
    """How to build a :class:`Strata` and its :class:`PublicShares` from a frame.

    Plain values only, so a spec can key a cache, be written into a release's metadata and be
    printed into a script that rebuilds the same groups from the same file.

    Attributes
    ----------
    by, value, edges, min_group_size, small_groups
        Passed to :meth:`Strata.from_frame` (``edges`` as ``((column, (e0, e1, ...)), ...)``).
    share_source
        ``"data"`` (:func:`shares_from_counts`), ``"table"`` (:func:`shares_from_table` with
        ``share_table``) or ``"holdout"`` (:func:`split_holdout` with ``holdout_fraction`` and
        :data:`HOLDOUT_SEED`, then :func:`shares_from_holdout`).
    """

    by: tuple[str, ...]
    value: str
    edges: tuple[tuple[str, tuple[float, ...]], ...] = ()
    min_group_size: int = 2
    small_groups: Literal["merge", "drop"] = "merge"
    share_source: ShareSource = "data"
    share_table: tuple[tuple[str, float], ...] = ()
    holdout_fraction: float | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "by", tuple(self.by))
        set_(self, "edges", tuple((c, tuple(float(v) for v in e)) for c, e in self.edges))
        set_(self, "share_table", tuple((str(g), float(s)) for g, s in self.share_table))
        if self.share_source not in ("data", "table", "holdout"):
            raise ValueError(
                f"`share_source` must be 'data', 'table' or 'holdout', got {self.share_source!r}"
            )
        if (self.share_source == "holdout") != (self.holdout_fraction is not None):
            raise ValueError(
                "`holdout_fraction` must be given exactly when `share_source` is 'holdout', got "
                f"{self.holdout_fraction!r} with {self.share_source!r}"
            )

    def private_rows(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The confidential rows: all of ``frame``, or its non-holdout part when the shares come
        from a public holdout (the split :meth:`build` makes)."""
        if self.share_source == "holdout":
            return split_holdout(frame, self.holdout_fraction, rng=HOLDOUT_SEED)[0]
        return frame

    def build(self, frame: pd.DataFrame) -> tuple[Strata, PublicShares]:
        """Group ``frame``'s rows and compute the recombination shares."""
        private, public = frame, None
        if self.share_source == "holdout":
            private, public = split_holdout(frame, self.holdout_fraction, rng=HOLDOUT_SEED)
        strata = Strata.from_frame(
            private,
            by=list(self.by),
            value=self.value,
            edges={c: list(e) for c, e in self.edges} or None,
            min_group_size=self.min_group_size,
            small_groups=self.small_groups,
        )
        if public is not None:
            return strata, shares_from_holdout(strata, public)
        if self.share_source == "table":
            return strata, shares_from_table(strata, dict(self.share_table))
        return strata, shares_from_counts(strata)

    def to_dict(self) -> dict:
        """JSON-ready form (lists instead of tuples)."""
        return {
            "by": list(self.by),
            "value": self.value,
            "edges": {c: list(e) for c, e in self.edges},
            "min_group_size": self.min_group_size,
            "small_groups": self.small_groups,
            "share_source": self.share_source,
            "share_table": dict(self.share_table),
            "holdout_fraction": self.holdout_fraction,
        }
