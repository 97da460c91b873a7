"""What a private sample is drawn from: a group's rows in declared (public) categories.

The samplers of :mod:`.samplers` take codes in a universe fixed in advance. Here a table's
columns become such codes: each chosen column's categories are a public list — declared by the
user, or read from the data and *treated as public* (and labelled so on screen and in the
export) — and a combination of columns is one k-ary universe (their product).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpcore.foundations.grouping import DROPPED_CODE, HOLDOUT_CODE, Grouping
from dpcore.foundations.validation import is_numeric

__all__ = [
    "MAX_DOMAIN",
    "MISSING_CATEGORY",
    "WHOLE_POPULATION",
    "SampleRows",
    "column_problem",
    "prepare_sample_rows",
]

MAX_DOMAIN = 1000
"""Most combinations of categories a k-ary sample may range over: the accuracy guarantee
2K/(εn) (Thm. 1.4) needs n far above K, and the app's groups have at most tens of thousands of
rows."""

MISSING_CATEGORY = "(missing)"
"""The category of a missing value (it can be declared like any other)."""

WHOLE_POPULATION = "Whole population"
"""The group choice that samples from every row of the Strata page's groups."""


def column_problem(frame: pd.DataFrame, column: str) -> str | None:
    """Why ``column`` of ``frame`` cannot be sampled as categories, or None.

    A numeric column other than 0/1 is continuous: its values are no list of categories (a
    sampler over them would publish the data's own numbers). Never shows a value of the data.
    """
    if column not in frame.columns:
        return f"The data has no column `{column}`; choose another column."
    values = frame[column]
    if pd.api.types.is_bool_dtype(values.dtype) or not is_numeric(values):
        return None
    present = values.dropna()
    if present.isin([0, 1]).all():
        return None
    return (
        f"Column `{column}` holds numbers, not categories: a private sample draws records from "
        "a declared list of categories. Choose a column of categories (text, yes/no or 0/1)."
    )


def _as_text(values: pd.Series) -> pd.Series:
    """Values as category text: 0/1 numbers as "0"/"1", missing values as
    :data:`MISSING_CATEGORY`."""
    if is_numeric(values) and not pd.api.types.is_bool_dtype(values.dtype):
        text = values.map(lambda v: str(int(v)) if pd.notna(v) else v)
    else:
        text = values.astype(object).map(lambda v: str(v) if pd.notna(v) else v)
    return text.fillna(MISSING_CATEGORY).astype(str)


@dataclass(frozen=True, eq=False)
class SampleRows:
    """The confidential rows a private sample may be drawn from.

    ``values`` holds the chosen columns as category text, one row per confidential row of the
    Strata page's groups (``codes`` gives each row's group, an index into ``labels``). Rows of the
    public holdout and of groups dropped as too small are left out, as for every analysis.
    """

    values: pd.DataFrame
    codes: np.ndarray
    labels: tuple[str, ...]
    n_holdout: int = 0
    n_dropped: int = 0

    def group_values(self, group: str) -> pd.DataFrame:
        """The rows of ``group`` (a label, or :data:`WHOLE_POPULATION`); ``ValueError`` for a
        group that is not one of the Strata page's or has no rows."""
        if group == WHOLE_POPULATION:
            rows = self.values
        elif group in self.labels:
            rows = self.values[self.codes == self.labels.index(group)]
        else:
            raise ValueError(
                f"“{group}” is not a group of the Strata page; choose one of its groups or the "
                "whole population."
            )
        if rows.empty:
            raise ValueError(
                f"The group “{group}” has no rows to sample from; choose another group."
            )
        return rows.reset_index(drop=True)

    def observed_categories(self, column: str) -> tuple[str, ...]:
        """The categories ``column`` holds in the data, sorted: a prefill that becomes public
        once a user keeps it (and is labelled as read from the data)."""
        return tuple(sorted(self.values[column].unique()))

    def messages(self) -> list[str]:
        out = []
        if self.n_holdout:
            out.append(f"{self.n_holdout:,} rows form the public holdout; they are not sampled.")
        if self.n_dropped:
            out.append(
                f"{self.n_dropped:,} rows are outside the groups of the Strata page (in a "
                "group dropped as too small, or with a category not declared); they are not "
                "sampled."
            )
        return out


def prepare_sample_rows(
    frame: pd.DataFrame, grouping: Grouping, columns: tuple[str, ...]
) -> SampleRows:
    """The rows of ``columns`` in ``grouping``'s groups (built from ``frame``), as categories;
    ``ValueError`` saying what to change for a column that is not categories."""
    if not columns:
        raise ValueError("Choose at least one column to sample.")
    for column in columns:
        if (problem := column_problem(frame, column)) is not None:
            raise ValueError(problem)
    codes = grouping.codes_for(frame)
    keep = codes >= 0
    values = pd.DataFrame({c: _as_text(frame.loc[keep, c]) for c in columns})
    return SampleRows(
        values=values.reset_index(drop=True),
        codes=np.asarray(codes[keep]),
        labels=tuple(grouping.labels),
        n_holdout=int(np.count_nonzero(codes == HOLDOUT_CODE)),
        n_dropped=int(np.count_nonzero(codes == DROPPED_CODE)),
    )


def domain_size(categories: dict[str, tuple[str, ...]]) -> int:
    """Combinations of the columns' categories: the size K of the k-ary universe."""
    return math.prod(len(c) for c in categories.values())
