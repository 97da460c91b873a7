r"""Groups (strata) of a table: the one grouping that every analysis shares.

A :class:`Grouping` splits the rows of a frame into disjoint groups
:math:`G_1 \cup \dots \cup G_k` — one group per combination of the ``by`` columns, as in
Rosenblatt, Stoyanovich & Musco (AAAI 2024, "Problem statement") — applies the small-group policy
(merge into :data:`OTHER_LABEL` or drop), and carries the public shares that recombine group
estimates (paper eq. 3). It reads the grouping columns only: which column an analysis then
estimates, and which of that column's values are missing, never changes the groups, their sizes
or the merges. Each analysis computes its own statistics from :attr:`Grouping.codes`.

:class:`GroupingSpec` is the recipe: plain values that key a cache, go into a release's metadata
and are printed into a script that rebuilds the same groups from the same file.

Privacy note: bucket edges for numeric grouping columns are never derived from the data
(quantiles would leak information about individuals); callers pass them in ``edges``. The list of
groups is public in one of two ways: *declared* (``categories``: each grouping column's categories
as the user declares them, e.g. from a codebook — every combination is a group, one with no rows
included, and a row whose category is not declared is left out), or *taken from the data* (the
combinations present, treated as public, as group sizes are when they are declared public). Only
a declared list keeps a new category from showing up in a release when one person is added.

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Literal

import numpy as np
import pandas as pd

from dpcore.foundations.labels import (
    LABEL_SEPARATOR,
    MISSING_LABEL,
    OTHER_LABEL,
    codebook_order,
    labels_repr,
    list_labels,
    plural,
)
from dpcore.foundations.shares import (
    HOLDOUT_SEED,
    SHARE_SOURCES,
    PublicShares,
    ShareSource,
    holdout_mask,
    shares_from_counts,
    shares_from_holdout,
    shares_from_noisy_counts,
    shares_from_table,
)
from dpcore.foundations.small_groups import NoisyCountRule
from dpcore.foundations.validation import (
    check_bucket_edges,
    data_frame,
    open_unit_interval,
    positive_int,
    read_only,
    require_columns,
)

__all__ = [
    "DROPPED_CODE",
    "HOLDOUT_CODE",
    "MAX_CODE_VALUES",
    "MAX_GROUPS",
    "LABEL_SEPARATOR",
    "MISSING_LABEL",
    "OTHER_LABEL",
    "Grouping",
    "GroupingReport",
    "GroupingSpec",
    "bucket_labels",
    "cell_labels",
    "check_categories",
    "codebook_categories",
    "codebook_order",
    "check_edges",
    "is_category_codes",
    "is_numeric_group_dtype",
    "needs_edges",
]

DROPPED_CODE = -1
"""Code of a confidential row whose group was dropped as too small (or matches no group)."""

HOLDOUT_CODE = -2
"""Code of a row of the public holdout: not confidential, never estimated from."""

MAX_GROUPS = 5000
"""Default upper limit on the number of groups."""

MAX_CODE_VALUES = 20
"""Most distinct whole numbers a numeric grouping column may hold and still group without bucket
edges: its values are then category codes (0/1, a 1–5 scale), grouped as they are."""

PrivateSizesGap = Literal["shares", "list", "keep"]

SmallGroups = Literal["merge", "drop", "keep"]
"""What happens to a group below ``min_group_size``: merged into :data:`OTHER_LABEL`, dropped,
or kept whatever its size (the only choice that never reads the exact group sizes, so the only
one a release with private group sizes allows)."""


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupingReport:
    """What grouping did to the rows, for the UI to state on screen.

    Attributes
    ----------
    n_input_rows
        Confidential rows that were grouped (the public holdout is not counted).
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
    min_group_size
        The minimum group size that was applied.
    merged_group_too_small
        True if the small groups were to be merged, but their merged group was itself smaller
        than ``min_group_size`` and was therefore dropped.
    undeclared
        With declared categories: ``((column, (category, ...)), ...)``, the categories found in
        the rows that are not declared (their rows are left out). A curator's view of the data,
        for the screen only.
    n_rows_undeclared
        Rows left out because a category of theirs is not declared.
    empty_groups
        Declared groups with no rows, left out by the merge or drop policy (``"keep"`` keeps
        them and estimates them from noise alone).
    """

    n_input_rows: int
    merged_groups: tuple[str, ...] = ()
    dropped_groups: tuple[str, ...] = ()
    n_rows_merged: int = 0
    n_rows_dropped_small: int = 0
    min_group_size: int = 2
    merged_group_too_small: bool = False
    undeclared: tuple[tuple[str, tuple[str, ...]], ...] = ()
    n_rows_undeclared: int = 0
    empty_groups: tuple[str, ...] = ()

    @property
    def n_rows_used(self) -> int:
        """Rows that made it into the groups."""
        return self.n_input_rows - self.n_rows_dropped_small - self.n_rows_undeclared

    def messages(self) -> list[str]:
        """Plain-language sentences describing every group that was merged or dropped.

        Returns an empty list when every group was kept as it is.
        """
        out: list[str] = []
        if self.n_rows_undeclared:
            found = "; ".join(
                f"`{column}`: {list_labels(values)}" for column, values in self.undeclared
            )
            out.append(
                f"{plural(self.n_rows_undeclared, 'row')} with a category that is not declared "
                f"{'is' if self.n_rows_undeclared == 1 else 'are'} left out ({found}). Add the "
                "category to the declared list to keep those rows."
            )
        if self.empty_groups:
            one = len(self.empty_groups) == 1
            out.append(
                f"{plural(len(self.empty_groups), 'declared group')} {'has' if one else 'have'} "
                f"no rows and {'is' if one else 'are'} not estimated: "
                f"{list_labels(self.empty_groups)}. Keep every group to release them too."
            )
        small = f"fewer than {plural(self.min_group_size, 'row')}"
        if self.merged_groups:
            out.append(
                f"{plural(len(self.merged_groups), 'group')} with {small} "
                f"({plural(self.n_rows_merged, 'row')} in total) "
                f"{'was' if len(self.merged_groups) == 1 else 'were'} merged into "
                f"“{OTHER_LABEL}”: {list_labels(self.merged_groups)}."
            )
        if self.dropped_groups:
            count = plural(len(self.dropped_groups), "group")
            rows = plural(self.n_rows_dropped_small, "row")
            verb = "was" if len(self.dropped_groups) == 1 else "were"
            if self.merged_group_too_small:
                out.append(
                    f"{count} with {small} {verb} dropped ({rows} in total): even merged into "
                    f"“{OTHER_LABEL}” they would have {small}. "
                    f"Groups: {list_labels(self.dropped_groups)}."
                )
            else:
                out.append(
                    f"{count} with {small} {verb} dropped ({rows} in total): "
                    f"{list_labels(self.dropped_groups)}."
                )
        return out


# --------------------------------------------------------------------------------------------
# Grouping rules: per-column codes and labels, combined into intersections
# --------------------------------------------------------------------------------------------


def is_numeric_group_dtype(series: pd.Series) -> bool:
    """Numeric for a grouping column: ints and floats, not bools."""
    dtype = series.dtype
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def is_category_codes(series: pd.Series) -> bool:
    """Whole numbers (not bool) with at most :data:`MAX_CODE_VALUES` distinct values, missing
    aside: category codes such as 0/1, grouped by their values without edges.

    Their list of categories is read from the data and treated as public, as a text column's
    is (the Strata page and the release say so). A float column counts when every value is
    whole ("1.0", "0.0", as many exports write a 0/1 column or an integer column with gaps);
    its categories are then labelled as the integers they stand for."""
    if not is_numeric_group_dtype(series) or series.nunique(dropna=True) > MAX_CODE_VALUES:
        return False
    return pd.api.types.is_integer_dtype(series.dtype) or _whole_floats(series)


def _whole_floats(series: pd.Series) -> bool:
    """Whether every value of a float column is a whole number (missing values aside)."""
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    values = values[~np.isnan(values)]
    return bool(np.all(np.isfinite(values)) and np.all(values == np.round(values)))


def needs_edges(series: pd.Series) -> bool:
    """Whether a grouping column needs public bucket edges: numbers other than category codes
    (:func:`is_category_codes`). Bools, text and codes group by their values."""
    return is_numeric_group_dtype(series) and not is_category_codes(series)


def _fmt_edge(e: float) -> str:
    if float(e).is_integer() and abs(e) < 1e15:
        return str(int(e))
    return repr(float(e))


def bucket_labels(edges: tuple[float, ...]) -> list[str]:
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
    other columns group by their values' string form — a numeric column only if it holds
    category codes (:func:`is_category_codes`). Missing values get :data:`MISSING_LABEL`.
    """
    if edges is not None:
        if not is_numeric_group_dtype(series):
            raise ValueError(
                f"`edges` were given for column {name!r}, but it is not numeric "
                f"(dtype {series.dtype}); bucket edges apply to numeric columns only."
            )
        x = series.to_numpy(dtype=np.float64, na_value=np.nan)
        codes = np.searchsorted(np.asarray(edges), x, side="right").astype(np.int64)
        labels = bucket_labels(edges)
        missing = np.isnan(x)
        if missing.any():
            codes[missing] = len(labels)
            labels.append(MISSING_LABEL)
        return codes, labels

    if not numeric_as_categories and needs_edges(series):
        raise ValueError(
            f"`by` column {name!r} holds numbers (dtype {series.dtype}) with more than "
            f"{MAX_CODE_VALUES} distinct values. Strata Lab never derives bucket edges from the "
            "private data (its quantiles or range would leak information about individuals), "
            f"so pass public bucket edges, e.g. `edges={{{name!r}: [25, 45, 65]}}`. Whole-number "
            f"codes with at most {MAX_CODE_VALUES} values (such as 0/1) group as they are; for "
            "other codes, convert the column to text first."
        )
    if pd.api.types.is_float_dtype(series.dtype) and is_category_codes(series):
        series = series.astype("Int64")  # whole-number codes are labelled "1", not "1.0"
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


def _intersection_codes(
    df: pd.DataFrame,
    by: tuple[str, ...],
    edges: Mapping[str, tuple[float, ...]],
    *,
    numeric_as_categories: bool = False,
) -> tuple[np.ndarray, list[str]]:
    """Per-row intersection codes of ``by`` under the grouping rules, and their labels."""
    codes, labels = [], []
    for col in by:
        c, lab = _column_codes(
            df[col], col, edges.get(col), numeric_as_categories=numeric_as_categories
        )
        codes.append(c)
        labels.append(lab)
    return _combine_codes(codes, labels)


def _declared_codes(
    df: pd.DataFrame,
    by: tuple[str, ...],
    edges: Mapping[str, tuple[float, ...]],
    categories: Mapping[str, tuple[str, ...]],
    weights: np.ndarray | None,
) -> tuple[np.ndarray, list[str], GroupingReport]:
    """Per-row index into the product of the declared categories (:data:`DROPPED_CODE` for a row
    with a category that is not declared), the product's labels in declared order, and a report
    of the undeclared categories found (``n_input_rows`` aside, for the caller to merge)."""
    rows = len(df)
    code = np.zeros(rows, dtype=np.int64)
    outside = np.zeros(rows, dtype=bool)
    undeclared = []
    for column in by:
        column_code, found = _column_codes(df[column], column, edges.get(column))
        position = {label: i for i, label in enumerate(categories[column])}
        lookup = np.array([position.get(label, -1) for label in found], dtype=np.int64)
        index = lookup[column_code]
        present = np.bincount(column_code, weights=weights, minlength=len(found)) > 0
        strangers = [lab for lab, i, p in zip(found, lookup, present, strict=True) if i < 0 and p]
        if strangers:
            undeclared.append((column, tuple(strangers)))
        outside |= index < 0
        code = code * len(categories[column]) + np.maximum(index, 0)
    code[outside] = DROPPED_CODE
    labels = [
        LABEL_SEPARATOR.join(parts) for parts in product(*(categories[column] for column in by))
    ]
    n_outside = int(outside.sum() if weights is None else weights[outside].sum())
    report = GroupingReport(0, undeclared=tuple(undeclared), n_rows_undeclared=n_outside)
    return code, labels, report


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _check_by(df: pd.DataFrame, by: object) -> tuple[str, ...]:
    if isinstance(by, str):
        by = (by,)
    if not isinstance(by, Iterable):
        raise TypeError(f"`by` must be a column name or a list of column names, got {by!r}")
    by = tuple(by)
    if not by:
        raise ValueError("`by` must name at least one grouping column, got none")
    for col in by:
        if not isinstance(col, str):
            raise TypeError(f"column names must be strings, got {type(col).__name__} {col!r}")
    if len(set(by)) != len(by):
        raise ValueError(f"`by` must not repeat a column, got {list(by)}")
    require_columns(df, by)
    return by


def check_edges(edges: object, by: tuple[str, ...]) -> dict[str, tuple[float, ...]]:
    """Bucket edges ``{column: (e0, e1, ...)}`` of grouping columns ``by``: strictly increasing
    finite numbers, each for a column in ``by``."""
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


def check_categories(
    categories: object,
    by: tuple[str, ...],
    edges: Mapping[str, tuple[float, ...]],
    max_groups: int,
) -> dict[str, tuple[str, ...]]:
    """Declared categories ``{column: (category, ...)}``: none, or a non-empty list of distinct
    texts for every column of ``by``. A bucketed column's categories are its buckets' labels
    (:func:`bucket_labels`) and :data:`MISSING_LABEL`; their product is at most ``max_groups``
    groups."""
    if not categories:
        return {}
    try:
        declared = dict(categories.items() if isinstance(categories, Mapping) else categories)
    except (TypeError, ValueError):
        raise TypeError(
            "`categories` must be a mapping {column: [category, ...]}, got "
            f"{type(categories).__name__}"
        ) from None
    strangers = [column for column in declared if column not in by]
    if strangers:
        raise ValueError(
            f"categories are declared for {', '.join(map(repr, strangers))}, which "
            f"{'is' if len(strangers) == 1 else 'are'} not a grouping column ({', '.join(by)})"
        )
    undeclared = [column for column in by if column not in declared]
    if undeclared:
        raise ValueError(
            f"declare the categories of every grouping column; {', '.join(undeclared)} "
            f"{'has' if len(undeclared) == 1 else 'have'} none"
        )
    out = {}
    for column in by:
        values = declared[column]
        if isinstance(values, str) or not isinstance(values, Iterable):
            raise TypeError(f"the categories of {column!r} must be a list of texts, got {values!r}")
        values = tuple(str(v) for v in values)
        if not values:
            raise ValueError(f"declare at least one category of {column!r}")
        repeated = sorted({v for v in values if values.count(v) > 1})
        if repeated:
            raise ValueError(f"the categories of {column!r} repeat {list_labels(repeated)}")
        if column in edges:
            allowed = {*bucket_labels(edges[column]), MISSING_LABEL}
            unknown = [v for v in values if v not in allowed]
            if unknown:
                raise ValueError(
                    f"{list_labels(unknown)} {'is' if len(unknown) == 1 else 'are'} not a bucket "
                    f"of {column!r}; its categories are its buckets and {MISSING_LABEL!r}"
                )
        out[column] = values
    combinations = math.prod(len(values) for values in out.values())
    if combinations > max_groups:
        raise ValueError(
            f"the declared categories make {combinations:,} groups, more than the limit of "
            f"{max_groups:,}; declare fewer categories or group by fewer columns"
        )
    return out


def codebook_categories(codebook: pd.DataFrame) -> dict[str, tuple[str, ...]]:
    """Declared categories from a codebook table with the columns ``column`` and ``category``
    (one row per category, in the order to release them), e.g. read from a CSV file."""
    codebook = data_frame("codebook", codebook)
    missing = [name for name in ("column", "category") if name not in codebook.columns]
    if missing:
        raise ValueError(
            f"a codebook needs the columns “column” and “category” (one row per category); "
            f"it has no {' or '.join(map(repr, missing))} (its columns: "
            f"{', '.join(map(str, codebook.columns))})"
        )
    if codebook.empty:
        raise ValueError("the codebook has no rows; list one category per row")
    blank = codebook[["column", "category"]].isna().any(axis=1).to_numpy()
    if blank.any():
        raise ValueError(
            f"the codebook's row {int(np.flatnonzero(blank)[0]) + 2} has an empty column or "
            "category (counting the header as row 1); fill it in or delete the row"
        )
    out: dict[str, list[str]] = {}
    for column, category in zip(codebook["column"], codebook["category"], strict=True):
        out.setdefault(str(column), []).append(str(category))
    return {column: tuple(values) for column, values in out.items()}


# --------------------------------------------------------------------------------------------
# Grouping
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class Grouping:
    """Disjoint groups of a frame's rows: one code per row, labels, sizes and public shares.

    Build it with :meth:`GroupingSpec.build` (the app's way: shares from the chosen source) or
    :meth:`from_frame`. Groups are ordered by descending size, then label; per-group arrays are
    aligned with :attr:`labels` and read-only.

    Attributes
    ----------
    by
        Grouping columns.
    labels
        One label per group, e.g. ``"White × Male"`` (parts joined with :data:`LABEL_SEPARATOR`).
    codes
        ``(rows,)`` int64, one per row of the frame the grouping was built from: the group index,
        :data:`DROPPED_CODE` for a confidential row of a group dropped as too small, or
        :data:`HOLDOUT_CODE` for a row of the public holdout.
    sizes
        ``(k,)`` int64 group sizes :math:`n_g` (confidential rows).
    shares
        The public recombination shares (:class:`~dpcore.foundations.shares.PublicShares`), aligned with
        :attr:`labels`.
    report
        What happened to the groups (:class:`GroupingReport`).
    spec
        The recipe the grouping was built with (its share source included).
    """

    labels: tuple[str, ...]
    codes: np.ndarray
    sizes: np.ndarray
    shares: PublicShares
    report: GroupingReport
    spec: GroupingSpec

    @property
    def by(self) -> tuple[str, ...]:
        """Grouping columns."""
        return self.spec.by

    @property
    def edges(self) -> dict[str, tuple[float, ...]]:
        """Bucket edges of numeric grouping columns, ``{column: (e0, e1, ...)}``."""
        return dict(self.spec.edges)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "labels", tuple(str(lab) for lab in self.labels))
        set_(self, "codes", read_only(np.asarray(self.codes, dtype=np.int64)))
        set_(self, "sizes", read_only(np.asarray(self.sizes, dtype=np.int64)))
        k = len(self.labels)
        if k < 1 or len(set(self.labels)) != k:
            raise ValueError(f"`labels` must be at least one unique label, got {self.labels!r}")
        if self.sizes.shape != (k,) or np.any(self.sizes < 0):
            raise ValueError(f"`sizes` must be {k} group sizes >= 0, got {self.sizes}")
        if not isinstance(self.shares, PublicShares) or self.shares.values.shape != (k,):
            raise ValueError(f"`shares` must be PublicShares for the {k} groups")

    def __repr__(self) -> str:
        return (
            f"Grouping(by={self.by!r}, k={self.k}, n={self.n}, labels={labels_repr(self.labels)})"
        )

    @property
    def k(self) -> int:
        """Number of groups."""
        return len(self.labels)

    @property
    def n(self) -> int:
        """Confidential rows in the groups."""
        return int(self.sizes.sum())

    @property
    def private(self) -> np.ndarray:
        """``(rows,)`` bool: the confidential rows (every row but the public holdout)."""
        return self.codes != HOLDOUT_CODE

    def codes_for(self, frame: pd.DataFrame) -> np.ndarray:
        """:attr:`codes`, after checking that ``frame`` is the frame they were built from."""
        data_frame("frame", frame)
        if len(frame) != self.codes.size:
            raise ValueError(
                f"`frame` has {len(frame):,} rows, but the grouping was built from a frame of "
                f"{self.codes.size:,} rows; build the grouping from the same frame"
            )
        return self.codes

    def assign(self, df: pd.DataFrame, *, unseen_to_other: bool = False) -> np.ndarray:
        """The group index of each row of another frame ``df`` under this grouping's rules.

        A row whose group was merged goes to :data:`OTHER_LABEL`; a row whose group was dropped,
        or that matches no group, gets :data:`DROPPED_CODE` — or, with ``unseen_to_other``, goes
        to :data:`OTHER_LABEL` too when that group exists (the rule for a public holdout, whose
        rows may fall in groups the confidential rows do not have). A numeric column without
        edges is then read as categories rather than refused.
        """
        df = data_frame("df", df)
        require_columns(df, self.by, owner="df")
        codes, labels = _intersection_codes(
            df, self.by, self.edges, numeric_as_categories=unseen_to_other
        )
        index = {label: g for g, label in enumerate(self.labels)}
        other = index.get(OTHER_LABEL, DROPPED_CODE)
        merged = set(self.report.merged_groups)
        lookup = np.array(
            [
                index.get(label, other if unseen_to_other or label in merged else DROPPED_CODE)
                for label in labels
            ],
            dtype=np.int64,
        )
        return lookup[codes]

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        by: str | Sequence[str],
        edges: Mapping[str, Sequence[float]] | None = None,
        *,
        min_group_size: int = 2,
        small_groups: SmallGroups = "merge",
        max_groups: int = MAX_GROUPS,
        weights: np.ndarray | None = None,
        categories: Mapping[str, Sequence[str]] | None = None,
    ) -> Grouping:
        """Group every row of ``df``; the shares are the group counts treated as public.

        Parameters
        ----------
        df
            The (validated) data, one row per person.
        by
            One or more grouping columns; groups are all combinations present in the data
            (intersections), labelled ``"a × b"``. Text, categorical, boolean and object columns
            group by their values (a missing value becomes the category ``"(missing)"``), and so
            do whole-number codes with at most :data:`MAX_CODE_VALUES` values (0/1, a 1–5
            scale; their list read from the data is treated as public, as a text column's). Any
            other numeric column needs public bucket edges in ``edges``.
        edges
            ``{column: [e0, e1, ..., eN]}``, strictly increasing finite numbers, for numeric
            grouping columns. Buckets are ``"< e0"``, ``"[e0, e1)"``, ..., ``"≥ eN"``, so no row is
            lost; a value equal to an edge :math:`e_i` goes to ``"[e_i, e_{i+1})"``. Missing
            values go to ``"(missing)"``. Edges are never derived from the data: quantiles of the
            private data would leak information about individuals.
        min_group_size
            Groups with fewer rows are merged into one group ``"Other (merged)"``
            (``small_groups="merge"``), dropped (``small_groups="drop"``) or kept
            (``small_groups="keep"``). If the merged group is itself smaller than
            ``min_group_size``, it is dropped too.
        max_groups
            Upper limit on the number of groups after the small-group policy.
        weights
            Rows each row of ``df`` stands for (non-negative integers): an engine groups a table
            of *cells*, one row per combination of the grouping columns' values with its row
            count, and gets the groups, sizes and merges the rows themselves would give.
        categories
            The public domain of the groups, ``{column: [category, ...]}`` for every column of
            ``by`` (:func:`check_categories`): the groups are every combination of the declared
            categories, in declared order, one with no rows included; a row with a category
            that is not declared is left out (:attr:`GroupingReport.n_rows_undeclared`).
            Without it the groups are the combinations present in the data, by descending size.

        Raises
        ------
        TypeError
            If ``df`` is not a DataFrame or a column name is not a string.
        ValueError
            Unknown columns; a numeric grouping column without edges; bad edges; an empty frame;
            fewer than 2 or more than ``max_groups`` groups.

        Notes
        -----
        A category whose text is literally ``"(missing)"`` shares a group with missing values.
        """
        df = data_frame("df", df)
        by = _check_by(df, by)
        edges_map = check_edges(edges, by)
        min_group_size = positive_int("min_group_size", min_group_size)
        max_groups = positive_int("max_groups", max_groups)
        if small_groups not in ("merge", "drop", "keep"):
            raise ValueError(
                f"`small_groups` must be 'merge', 'drop' or 'keep', got {small_groups!r}"
            )
        declared = check_categories(categories, by, edges_map, max_groups)
        if len(df) == 0:
            raise ValueError("the table has no rows; upload or choose a table with data")
        weights = _row_weights(weights, len(df))
        if declared:
            codes, labels, undeclared = _declared_codes(df, by, edges_map, declared, weights)
        else:
            codes, labels = _intersection_codes(df, by, edges_map)
        row_code, final_labels, final_sizes, report = _apply_policy(
            codes, labels, by, min_group_size, small_groups, max_groups, weights,
            declared=bool(declared),
        )  # fmt: skip
        if declared:
            report = dataclasses.replace(
                report, undeclared=undeclared.undeclared,
                n_rows_undeclared=undeclared.n_rows_undeclared,
            )  # fmt: skip
        shares = PublicShares(
            values=final_sizes / final_sizes.sum(),
            source="data",
            description="Group counts from the data, treated as public",
            labels=final_labels,
        )
        spec = GroupingSpec(
            by=by, edges=tuple(edges_map.items()), min_group_size=min_group_size,
            small_groups=small_groups, categories=tuple(declared.items()),
        )  # fmt: skip
        return cls(
            labels=final_labels,
            codes=row_code,
            sizes=final_sizes,
            shares=shares,
            report=report,
            spec=spec,
        )

    def with_shares(self, shares: PublicShares, spec: GroupingSpec) -> Grouping:
        """The same groups with the public shares ``spec`` (their recipe) names."""
        return dataclasses.replace(self, shares=shares, spec=spec)


def _row_weights(weights: object, rows: int) -> np.ndarray | None:
    if weights is None:
        return None
    array = np.asarray(weights)
    if array.shape != (rows,) or not np.issubdtype(array.dtype, np.integer) or np.any(array < 0):
        raise ValueError(f"`weights` must be {rows:,} non-negative integers, one per row")
    return array.astype(np.int64)


def _apply_policy(
    codes: np.ndarray,
    labels: list[str],
    by: tuple[str, ...],
    min_group_size: int,
    small_groups: SmallGroups,
    max_groups: int,
    weights: np.ndarray | None = None,
    *,
    declared: bool = False,
) -> tuple[np.ndarray, tuple[str, ...], np.ndarray, GroupingReport]:
    """Merge, drop or keep small groups, order the groups, and recode every row (each standing
    for ``weights`` rows when given; a row coded :data:`DROPPED_CODE` is outside every group).

    Groups taken from the data are ordered by descending size, then label; declared groups keep
    the declared order (an order by size would publish the sizes' ranking).
    """
    inside = codes >= 0
    inside_weights = None if weights is None else weights[inside]
    sizes = np.bincount(codes[inside], weights=inside_weights, minlength=len(labels))
    sizes = sizes.astype(np.int64)
    applies = small_groups != "keep"
    # A declared group with no rows has nothing to merge: it is simply not estimated.
    empty = (sizes == 0) & (declared and applies)
    small = (sizes < min_group_size) & applies & ~empty
    keep = ~small & ~empty
    keep_labels = [lab for lab, kept in zip(labels, keep, strict=True) if kept]
    keep_sizes = sizes[keep].tolist()
    new_code = np.full(len(labels), DROPPED_CODE, dtype=np.int64)
    new_code[keep] = np.arange(len(keep_labels))
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

    if declared and not sizes.any():
        raise ValueError(
            f"no row has a declared category of {', '.join(by)}; compare the declared "
            "categories with the data's on the Strata page"
        )
    k = len(keep_labels)
    if k == 0:
        raise ValueError(
            f"no rows are left: every group has fewer than {min_group_size:,} rows "
            f"({len(labels):,} groups from {', '.join(by)}); choose coarser grouping columns "
            "or a smaller minimum group size"
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

    if declared:
        order = list(range(k))
    else:
        order = sorted(range(k), key=lambda g: (-keep_sizes[g], keep_labels[g]))
    rank = np.empty(k, dtype=np.int64)
    rank[order] = np.arange(k)
    final_code = np.where(new_code >= 0, rank[np.maximum(new_code, 0)], DROPPED_CODE)
    report = GroupingReport(
        n_input_rows=int(codes.size if weights is None else weights.sum()),
        merged_groups=merged,
        dropped_groups=dropped,
        n_rows_merged=n_merged,
        n_rows_dropped_small=n_dropped_small,
        min_group_size=min_group_size,
        merged_group_too_small=too_small,
        empty_groups=tuple(label for label, e in zip(labels, empty, strict=True) if e),
    )
    final_sizes = np.array([keep_sizes[g] for g in order], dtype=np.int64)
    row_code = np.where(inside, final_code[np.maximum(codes, 0)], DROPPED_CODE)
    return row_code, tuple(keep_labels[g] for g in order), final_sizes, report


# --------------------------------------------------------------------------------------------
# A recipe for the grouping and its shares
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupingSpec:
    """How to build a :class:`Grouping` and its public shares from a frame.

    Plain values only, so a spec can key a cache, be written into a release's metadata and be
    printed into a script that rebuilds the same groups from the same file.

    Attributes
    ----------
    by, edges, min_group_size, small_groups
        Passed to :meth:`Grouping.from_frame` (``edges`` as ``((column, (e0, e1, ...)), ...)``).
    share_source
        ``"data"`` (:func:`~dpcore.foundations.shares.shares_from_counts`), ``"table"``
        (:func:`~dpcore.foundations.shares.shares_from_table` with ``share_table``), ``"holdout"``
        (:func:`~dpcore.foundations.shares.holdout_mask` with ``holdout_fraction`` and
        :data:`~dpcore.foundations.shares.HOLDOUT_SEED`, then :func:`~dpcore.foundations.shares.shares_from_holdout`)
        or ``"noisy_counts"`` (:func:`~dpcore.foundations.shares.shares_from_noisy_counts`: the release's
        own noisy counts, for the mean with private group sizes).
    categories
        The declared public domain ``((column, (category, ...)), ...)`` for every grouping
        column, or ``()``: the groups are then the combinations present in the data, treated
        as public (:meth:`Grouping.from_frame`).
    categories_source
        Where a declared list came from: ``"declared"`` (a codebook or a list typed from public
        knowledge) or ``"data"`` (prefilled from the categories found in the data and accepted
        as public on screen); the release's text says which.
    selection_fraction
        Instead of declared categories: the fraction of a release's ε that finds its groups
        privately (:class:`~dpcore.foundations.selection.KeySelection`, which needs an (ε, δ) budget); only
        the groups whose noisy count clears the threshold are released. None: no selection.
    """

    by: tuple[str, ...]
    edges: tuple[tuple[str, tuple[float, ...]], ...] = ()
    min_group_size: int = 2
    small_groups: SmallGroups = "merge"
    share_source: ShareSource = "data"
    share_table: tuple[tuple[str, float], ...] = ()
    holdout_fraction: float | None = None
    categories: tuple[tuple[str, tuple[str, ...]], ...] = ()
    categories_source: Literal["declared", "data"] = "declared"
    selection_fraction: float | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "by", (self.by,) if isinstance(self.by, str) else tuple(self.by))
        set_(self, "edges", tuple((c, tuple(float(v) for v in e)) for c, e in self.edges))
        set_(self, "share_table", tuple((str(g), float(s)) for g, s in self.share_table))
        set_(self, "categories", tuple((str(c), tuple(map(str, v))) for c, v in self.categories))
        set_(self, "min_group_size", positive_int("min_group_size", self.min_group_size))
        for column, edges in self.edges:
            # Their order is checked with the data's columns (check_edges), where engines check it.
            check_bucket_edges(column, edges, increasing=False)
        if self.holdout_fraction is not None:
            open_unit_interval("holdout_fraction", self.holdout_fraction)
        if self.share_source not in SHARE_SOURCES:
            raise ValueError(
                f"`share_source` must be one of {SHARE_SOURCES}, got {self.share_source!r}"
            )
        if self.categories_source not in ("declared", "data"):
            raise ValueError(
                f"`categories_source` must be 'declared' or 'data', got {self.categories_source!r}"
            )
        if self.selection_fraction is not None:
            open_unit_interval("selection_fraction", self.selection_fraction)
            if self.categories:
                raise ValueError(
                    "the groups are either declared or found privately, not both: clear the "
                    "declared categories or `selection_fraction`"
                )
        if (self.share_source == "holdout") != (self.holdout_fraction is not None):
            raise ValueError(
                "`holdout_fraction` must be given exactly when `share_source` is 'holdout', got "
                f"{self.holdout_fraction!r} with {self.share_source!r}"
            )

    @property
    def selects(self) -> bool:
        """True when a release finds its groups privately (``selection_fraction``)."""
        return self.selection_fraction is not None

    @property
    def noisy_count_rule(self) -> NoisyCountRule | None:
        """With shares from a release's noisy counts, small groups are merged or dropped by
        those counts at release (:class:`~dpcore.foundations.small_groups.NoisyCountRule`), never by the
        exact sizes: the groups are then built with every group kept. None otherwise."""
        if self.share_source != "noisy_counts" or self.small_groups == "keep":
            return None
        return NoisyCountRule(self.min_group_size, self.small_groups)

    @property
    def built_small_groups(self) -> SmallGroups:
        """The small-group policy applied to the exact sizes when the groups are built:
        ``"keep"`` when the release decides from its noisy counts instead."""
        return "keep" if self.noisy_count_rule is not None else self.small_groups

    @property
    def declared(self) -> bool:
        """True when the groups come from declared categories rather than from the data."""
        return bool(self.categories)

    def private_sizes_gaps(self) -> tuple[PrivateSizesGap, ...]:
        """What a release that keeps group sizes private still lacks, in the order to fix it:
        ``"shares"`` (each group's share would be its size over n), ``"list"`` (groups read off
        the data show a new category with its first person), ``"keep"`` (merging or dropping
        decides from exact sizes). Empty when nothing is missing."""
        gaps: list[PrivateSizesGap] = []
        if self.share_source == "data":  # table, holdout and noisy counts publish no size
            gaps.append("shares")
        if not self.declared and self.selection_fraction is None:
            gaps.append("list")
        if self.built_small_groups != "keep":
            gaps.append("keep")
        return tuple(gaps)

    def build(self, frame: pd.DataFrame, *, weights: np.ndarray | None = None) -> Grouping:
        """Group ``frame``'s confidential rows and compute the recombination shares.

        With ``share_source="holdout"`` a public holdout is set aside first (its rows get
        :data:`HOLDOUT_CODE`); the groups and their sizes come from the other rows. ``weights``
        (see :meth:`Grouping.from_frame`) groups a table of cells; a holdout, drawn row by row,
        then cannot be set aside and is refused.
        """
        frame = data_frame("frame", frame)
        if weights is not None:
            if self.share_source == "holdout":
                raise ValueError(
                    "A public holdout is drawn row by row from a table in memory. For data read "
                    "by an engine, take the shares from the data's group counts or from a "
                    "public table."
                )
            grouping = Grouping.from_frame(
                frame, by=self.by, min_group_size=self.min_group_size,
                small_groups=self.built_small_groups, weights=weights,
                categories=dict(self.categories),
            )  # fmt: skip
            return self._with_spec_shares(grouping)
        public = np.zeros(len(frame), dtype=bool)
        if self.share_source == "holdout":
            public = holdout_mask(len(frame), self.holdout_fraction, rng=HOLDOUT_SEED)
        private = frame[~public] if public.any() else frame
        grouping = Grouping.from_frame(
            private,
            by=self.by,
            edges={c: list(e) for c, e in self.edges} or None,
            min_group_size=self.min_group_size,
            small_groups=self.built_small_groups,
            categories=dict(self.categories),
        )
        if public.any():
            codes = np.full(len(frame), HOLDOUT_CODE, dtype=np.int64)
            codes[~public] = grouping.codes
            grouping = dataclasses.replace(grouping, codes=codes)
            return grouping.with_shares(shares_from_holdout(grouping, frame[public]), self)
        return self._with_spec_shares(grouping)

    def _with_spec_shares(self, grouping: Grouping) -> Grouping:
        if self.share_source == "table":
            return grouping.with_shares(shares_from_table(grouping, dict(self.share_table)), self)
        if self.share_source == "noisy_counts":
            rule = self.noisy_count_rule
            if rule is not None and rule.policy == "merge" and OTHER_LABEL in grouping.labels:
                raise ValueError(
                    f"a group is already labelled {OTHER_LABEL!r}, so small groups cannot be "
                    "merged into it; rename that category or drop small groups instead"
                )
            return grouping.with_shares(shares_from_noisy_counts(grouping, rule), self)
        return grouping.with_shares(shares_from_counts(grouping), self)

    def to_dict(self) -> dict:
        """JSON-ready form (lists instead of tuples)."""
        return {
            "by": list(self.by),
            "edges": {c: list(e) for c, e in self.edges},
            "min_group_size": self.min_group_size,
            "small_groups": self.small_groups,
            "share_source": self.share_source,
            "share_table": dict(self.share_table),
            "holdout_fraction": self.holdout_fraction,
            # Only when declared, so that plans from before declarations keep their keys.
            **(
                {
                    "categories": {c: list(v) for c, v in self.categories},
                    "categories_source": self.categories_source,
                }
                if self.declared
                else {}
            ),
            **(
                {"selection_fraction": self.selection_fraction}
                if self.selection_fraction is not None
                else {}
            ),
        }


def cell_labels(
    df: pd.DataFrame, by: str | Sequence[str], edges: Mapping[str, Sequence[float]] | None = None
) -> pd.DataFrame:
    """Each row's label in every grouping column, under the rules of :meth:`Grouping.from_frame`:
    the bucket of a numeric column with ``edges``, the value's text otherwise,
    :data:`MISSING_LABEL` for a missing value.

    The rows' *cells* (distinct rows of the result) are what an engine aggregates; grouping them
    with their row counts as ``weights`` gives the groups the rows would.
    """
    df = data_frame("df", df)
    by = _check_by(df, by)
    edges_map = check_edges(edges, by)
    columns = {}
    for col in by:
        codes, labels = _column_codes(df[col], col, edges_map.get(col))
        columns[col] = np.asarray(labels, dtype=object)[codes]
    return pd.DataFrame(columns, index=df.index)
