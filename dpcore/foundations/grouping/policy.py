"""The small-group policy: groups below the minimum size merged into :data:`OTHER_LABEL`,
dropped, or kept (Rosenblatt, Stoyanovich & Musco, AAAI 2024: strata too small to estimate).

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import numpy as np

from dpcore.foundations.grouping.codes import DROPPED_CODE
from dpcore.foundations.grouping.report import GroupingReport, SmallGroups
from dpcore.foundations.labels import (
    OTHER_LABEL,
)


def apply_small_group_policy(
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
