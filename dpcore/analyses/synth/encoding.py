"""Checking and encoding a table for synthesis: columns, public domains, edges, shares.

Numeric columns are bucketed by public edges (:func:`bucketize`), categorical ones coded against
their domain; group keys and public shares are checked before any noise is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from dpcore.foundations.choices import Choices
from dpcore.foundations.grouping import LABEL_SEPARATOR, bucket_labels, is_numeric_group_dtype
from dpcore.foundations.shares import PublicShares
from dpcore.foundations.validation import shown

Method = Literal["independent", "mwem", "histogram", "mst", "aim"]
METHODS = Choices(
    Method,
    {
        "independent": "Independent noisy 1-way marginals",
        "mwem": "MWEM: select marginals, measure them, project with multiplicative weights",
        "histogram": "Noisy histogram of the full joint domain",
        "mst": "MST (OpenDP, Private-PGM): 1-way marginals and a spanning tree of 2-way marginals",
        "aim": "AIM (OpenDP, Private-PGM): adaptively selected marginals of up to 3 columns",
    },
)


__all__ = [
    "METHODS",
    "Method",
    "bucketize",
]


def check_edges(edges: object) -> dict[str, np.ndarray]:
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
    """Bucket codes of a numeric column (GroupValues's convention: a value at an edge goes up)."""
    if not is_numeric_group_dtype(series):
        raise ValueError(
            f"`edges` were given for column {name!r}, but it is not numeric (dtype "
            f"{series.dtype}); bucket edges apply to numeric columns only"
        )
    x = series.to_numpy(dtype=float, na_value=np.nan)
    if np.isnan(x).any():
        raise ValueError(f"column {name!r} has missing values; drop or impute them first")
    labels = tuple(bucket_labels(tuple(float(e) for e in edges)))
    return np.searchsorted(edges, x, side="right").astype(np.int64), labels


def bucketize(frame: pd.DataFrame, edges: Mapping[str, Sequence[float]]) -> pd.DataFrame:
    """A copy of ``frame`` with each numeric column of ``edges`` replaced by its bucket labels.

    Edges :math:`e_0 < \\dots < e_m` are public cut points; the buckets are ``"< e0"``,
    ``"[e0, e1)"``, …, ``"≥ em"`` (the convention of :class:`~dpcore.analyses.mean.statistics.GroupValues`; a value at
    an edge goes to the upper bucket). Use it to compare real rows with :func:`synthesize` output.
    """
    frame = check_frame(frame)
    out = frame.copy()
    for col, arr in check_edges(edges).items():
        if col not in frame.columns:
            raise ValueError(f"`edges` names unknown column {col!r}; {_available(frame)}")
        codes, labels = _bucket_codes(frame[col], col, arr)
        out[col] = pd.Categorical.from_codes(codes, categories=list(labels))
    return out


def _category_codes(
    series: pd.Series, name: str, domain: Sequence[str] | None
) -> tuple[np.ndarray, tuple]:
    if is_numeric_group_dtype(series):
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


def encode_rows(
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


def check_frame(frame: object) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}")
    return frame


def _available(frame: pd.DataFrame) -> str:
    return "available columns: " + ", ".join(str(c) for c in frame.columns)


def check_method(method: object) -> Method:
    return METHODS.check("method", method)


def check_names(name: str, value: object) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else value
    names = tuple(names) if isinstance(names, Iterable) else (None,)
    if not all(isinstance(c, str) for c in names):
        raise TypeError(
            f"`{name}` must be a column name or a list of column names, got {shown(value)}"
        )
    if len(set(names)) != len(names):
        raise ValueError(f"`{name}` must not repeat a column, got {list(names)}")
    return names


def check_columns(
    frame: pd.DataFrame, columns: object, strata: tuple[str, ...], edges: Mapping
) -> tuple[str, ...]:
    if columns is None:
        columns = tuple(
            c for c in frame.columns if c in edges or not is_numeric_group_dtype(frame[c])
        )
        if not columns:
            raise ValueError(
                "`frame` has no categorical columns to synthesize; pass public bucket `edges` "
                "for numeric columns, or name the `columns`"
            )
    columns = check_names("columns", columns)
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


def check_domain(domain: object, output: tuple[str, ...]) -> Mapping[str, tuple[str, ...]]:
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


def check_shares(
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
        raise ValueError(f"`shares` must be finite and >= 0, got {shown(values)}")
    if not math.isclose(weights.sum(), 1.0, abs_tol=1e-9):
        raise ValueError(f"`shares` must sum to 1, got a sum of {weights.sum()!r}")
    groups = np.asarray(keys, dtype=np.int64)
    if len(np.unique(groups, axis=0)) != len(groups):
        raise ValueError("`shares` lists a group more than once")
    return groups, weights


def strata_groups(
    codes: np.ndarray, labels: dict, strata: tuple[str, ...], model: tuple[str, ...], shares
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The groups of the ``strata`` columns with their public share weights, and each row's
    group index (``codes`` holds the ``model`` columns, then the strata columns). Without strata
    columns there is one group, everyone, with weight 1."""
    if not strata:
        return np.zeros((1, 0), dtype=np.int64), np.ones(1), np.zeros(len(codes), dtype=np.int64)
    groups, weights = check_shares(shares, strata, labels)
    sizes = tuple(len(labels[c]) for c in strata)
    return groups, weights, assign_groups(codes[:, len(model) :], groups, sizes)


def assign_groups(row_codes: np.ndarray, groups: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
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


def allocate_rows(n_rows: int, weights: np.ndarray) -> np.ndarray:
    """Rows per group, :math:`\\approx n w_g`, by largest remainders (Hamilton's method)."""
    exact = n_rows * weights
    counts = np.floor(exact).astype(np.int64)
    short = n_rows - int(counts.sum())
    counts[np.argsort(-(exact - counts), kind="stable")[:short]] += 1
    return counts
