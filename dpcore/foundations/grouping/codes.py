"""Each row's group code: a grouping column's labels (its values, declared categories, or public
buckets), combinations of columns, and the checks of edges and category lists.

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import product

import numpy as np
import pandas as pd

from dpcore.foundations.grouping.report import GroupingReport
from dpcore.foundations.labels import (
    LABEL_SEPARATOR,
    MISSING_LABEL,
    list_labels,
)
from dpcore.foundations.validation import (
    data_frame,
    require_columns,
    require_table_columns,
    shown,
)

DROPPED_CODE = -1
"""Code of a confidential row whose group was dropped as too small (or matches no group)."""

HOLDOUT_CODE = -2
"""Code of a row of the public holdout: not confidential, never estimated from."""

MAX_GROUPS = 5000
"""Default upper limit on the number of groups of rows in memory (what the pages chart)."""

MAX_ENGINE_GROUPS = 50_000
"""Upper limit on the number of groups built from an engine's cells: their work and memory
grow with the groups, not the rows (the noise intervals are computed, not simulated)."""

MAX_CODE_VALUES = 20
"""Most distinct whole numbers a numeric grouping column may hold and still group without bucket
edges: its values are then category codes (0/1, a 1–5 scale), grouped as they are."""


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


def column_codes(
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


def combine_codes(
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


def intersection_codes(
    df: pd.DataFrame,
    by: tuple[str, ...],
    edges: Mapping[str, tuple[float, ...]],
    *,
    numeric_as_categories: bool = False,
) -> tuple[np.ndarray, list[str]]:
    """Per-row intersection codes of ``by`` under the grouping rules, and their labels."""
    codes, labels = [], []
    for col in by:
        c, lab = column_codes(
            df[col], col, edges.get(col), numeric_as_categories=numeric_as_categories
        )
        codes.append(c)
        labels.append(lab)
    return combine_codes(codes, labels)


def declared_codes(
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
        column_code, found = column_codes(df[column], column, edges.get(column))
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


def check_by(df: pd.DataFrame, by: object) -> tuple[str, ...]:
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
            raise TypeError(
                f"the categories of {column!r} must be a list of texts, got {shown(values)}"
            )
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
            f"{max_groups:,}; declare fewer categories, group by fewer columns, or take the "
            "categories found in the data as public (only those with rows become groups)"
        )
    return out


def codebook_categories(codebook: pd.DataFrame) -> dict[str, tuple[str, ...]]:
    """Declared categories from a codebook table with the columns ``column`` and ``category``
    (one row per category, in the order to release them), e.g. read from a CSV file."""
    codebook = data_frame("codebook", codebook)
    require_table_columns(codebook, ("column", "category"), "a codebook", "category")
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
    by = check_by(df, by)
    edges_map = check_edges(edges, by)
    columns = {}
    for col in by:
        codes, labels = column_codes(df[col], col, edges_map.get(col))
        columns[col] = np.asarray(labels, dtype=object)[codes]
    return pd.DataFrame(columns, index=df.index)
