r"""The privacy unit: who a neighbouring dataset adds or removes — one row, or one person.

Without a person column every row is a different person, as everywhere else in Strata Lab. With
one, an engine bounds each person's contribution before it aggregates (PipelineDP's
"contribution bounding"): at most ``max_rows`` rows of a person in each cell (combination of the
grouping columns' values) and at most ``max_groups`` cells per person; the rest of the person's
rows are left out. One person then stands for at most :math:`c = \text{max\_groups}\times
\text{max\_rows}` rows, and every mechanism that protects one row at :math:`\varepsilon/c` (or
:math:`\rho/c^2`) protects one person at the release's budget:

- pure ε-DP is closed under groups of c rows at c·ε (Dwork & Roth 2014, Thm 2.2);
- ρ-zCDP at c²·ρ (Bun & Steinke 2016, Prop. 1.9).

Our choice: c is the person's row count over *all* groups, the L1 bound, for the Laplace and the
Gaussian mechanisms alike. The L2 bound √max_groups·max_rows would be tighter for Gaussian noise
on unmerged groups, but a person's cells can be merged into one small-groups group, and the
whole-population estimate sees every row of the person; the L1 bound holds in every case.

Which rows are kept depends only on the person's own rows (so neighbouring datasets still differ
by one person's bounded rows) and gives the same rows on every engine: within a cell, rows in the
order of the fractional part of :math:`x(\varphi - 1)` (φ the golden ratio), then x; cells in the
order of the person's kept rows in them (descending), then their labels.

Known limitation: that order depends on the values, so the kept rows are not a random sample of
a person's rows. For a 0/1 value with ``max_rows=1`` a person's 0 is kept before their 1, which
biases the mean down; a per-person average of the clipped values, weighted by
min(rows, ``max_rows``), would bound the contribution the same way without the bias.

The bound itself (:func:`bounded_rows`) is written once, in numpy, and used by the pandas
engine and by the mean's statistics in memory; DuckDB and Spark write the same rule in SQL.

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpcore.foundations.accounting import ZCDP, Budget, PureDP
from dpcore.foundations.grouping import Grouping, cell_labels
from dpcore.foundations.labels import plural
from dpcore.foundations.validation import positive_int

__all__ = [
    "GOLDEN_RATIO_FRACTION",
    "ROW",
    "BoundPreview",
    "BoundedRows",
    "PrivacyUnit",
    "bound_contributions",
    "bounded_rows",
    "dropped_rows_notes",
    "kept_rows",
    "missing_person_message",
    "preview_bound",
]

GOLDEN_RATIO_FRACTION = 0.6180339887498949
"""φ − 1: rows of a person in a cell are kept in the order of frac(x·φ), then x (module doc)."""


@dataclass(frozen=True)
class PrivacyUnit:
    """One row (``column=None``), or one person identified by ``column`` whose contribution is
    bounded to ``max_groups`` cells and ``max_rows`` rows in each."""

    column: str | None = None
    max_groups: int = 1
    max_rows: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_groups", positive_int("max_groups", self.max_groups))
        object.__setattr__(self, "max_rows", positive_int("max_rows", self.max_rows))
        if self.column is not None and (not isinstance(self.column, str) or not self.column):
            raise ValueError(f"the person column must be a column name, got {self.column!r}")
        if self.column is None and (self.max_groups, self.max_rows) != (1, 1):
            raise ValueError(
                "Contribution bounds need a person column: without one, every row is a person."
            )

    @property
    def rows_per_person(self) -> int:
        """c: the most rows one person contributes after bounding."""
        return self.max_groups * self.max_rows

    def row_budget(self, budget: Budget) -> Budget:
        """The budget at which each mechanism protects one row, so that one person is protected
        at ``budget`` (ε/c or ρ/c², module doc)."""
        c = self.rows_per_person
        if c == 1:
            return budget
        if isinstance(budget, PureDP):
            return PureDP(budget.epsilon / c)
        if isinstance(budget, ZCDP):
            return ZCDP(budget.rho / c**2)
        raise ValueError(
            f"A person may contribute {c} rows here, and an (ε, δ) budget does not divide "
            "cleanly among them. Choose an ε-DP or ρ-zCDP budget."
        )

    def describe(self) -> str:
        """The unit in words, for a release's review and metadata."""
        if self.column is None:
            return "one row is one person: neighbouring datasets differ by one row"
        return (
            f"one person per value of `{self.column}`, each bounded to "
            f"{plural(self.max_groups, 'group')} and {plural(self.max_rows, 'row')} per group "
            f"(at most {plural(self.rows_per_person, 'row')}); neighbouring datasets differ by "
            "one person, and each mechanism runs at the budget divided accordingly"
        )

    def describe_budget(self, budget: Budget) -> str:
        """One sentence: the budget each mechanism runs at so that one person is protected at
        ``budget`` (:meth:`row_budget`), for the Budget page."""
        if self.column is None:
            return f"Each row is one person: the release protects each row at {budget}."
        return (
            f"One person (a value of `{self.column}`) may own up to "
            f"{plural(self.rows_per_person, 'row')} after the bound, so each noisy sum runs at "
            f"{self.row_budget(budget)} and the release protects one person, all their rows "
            f"together, at {budget}."
        )

    def to_dict(self) -> dict:
        return {"column": self.column, "max_groups": self.max_groups, "max_rows": self.max_rows}


ROW = PrivacyUnit()
"""The default unit: one row is one person."""


@dataclass(frozen=True, eq=False)
class BoundedRows:
    """Which rows of a table the contribution bound keeps (``kept``, one flag per row), and how
    many rows have no person id (never kept: whom they belong to is unknown)."""

    kept: np.ndarray
    missing_person: int


def bound_contributions(
    labels: pd.DataFrame, values: np.ndarray, owners: pd.Series, unit: PrivacyUnit
) -> BoundedRows:
    """The rows ``unit`` keeps of a table whose rows have the cell ``labels`` (one column per
    grouping column), the ``values`` (1-D, or one column per input) and the person ids
    ``owners`` (missing: no id), as :func:`bounded_rows` chooses them; every row with finite
    values for :data:`ROW`."""
    finite = np.isfinite(values.reshape(values.shape[0], -1)).all(axis=1)
    if unit.column is None:
        return BoundedRows(finite, 0)
    person = pd.factorize(owners, use_na_sentinel=True)[0]
    kept = bounded_rows(labels, values, person, unit.max_rows, unit.max_groups)
    return BoundedRows(kept, int(np.sum(person < 0)))


def kept_rows(
    frame: pd.DataFrame, grouping: Grouping, values: np.ndarray, roles: dict[str, str],
    unit: PrivacyUnit,
) -> np.ndarray:  # fmt: skip
    """The rows of ``frame`` that ``unit`` keeps (:func:`bound_contributions` in the cells of
    ``grouping``'s columns, as every engine bounds them), given the analysis' ``values`` (one
    column per input, in the order of ``roles``: each input column and its role in words, "the
    value to estimate", "the score"); every row with finite values for :data:`ROW`.

    Raises
    ------
    ValueError
        A person column that is not in ``frame``, that is one of the inputs or a grouping
        column, or that has rows without an id: what is wrong and how to fix it.
    """
    if unit.column is None:
        return np.isfinite(values.reshape(values.shape[0], -1)).all(axis=1)
    if unit.column in roles:
        role = roles[unit.column]
        raise ValueError(
            f"The person column `{unit.column}` is also {role}. It names who owns each row, so "
            f"choose another person column, or another column for {role}."
        )
    if unit.column not in frame.columns:
        raise ValueError(
            f"The person column `{unit.column}` is not in the data; choose another column on "
            "the Data page, or “each row is one person”."
        )
    if unit.column in grouping.by:
        raise ValueError(
            f"The person column `{unit.column}` is also a grouping column; a person column "
            "names who owns each row, so choose another column for one or the other."
        )
    labels = cell_labels(frame, grouping.by, grouping.edges)
    bounded = bound_contributions(labels, values, frame[unit.column], unit)
    if bounded.missing_person:
        raise ValueError(missing_person_message(bounded.missing_person, unit.column))
    return bounded.kept


def dropped_rows_notes(unit: PrivacyUnit, dropped: int) -> tuple[str, ...]:
    """A sentence for the curator about the ``dropped`` rows the bound left out (none when no
    row was), shown with the statistics and never released."""
    if not dropped:
        return ()
    return (
        f"Bounding each person to {plural(unit.max_groups, 'group')} and "
        f"{plural(unit.max_rows, 'row')} per group left out {plural(dropped, 'row')} (a "
        "curator's view: exact, not for publication).",
    )


@dataclass(frozen=True)
class BoundPreview:
    """What a contribution bound would leave out of a table: a curator's view (exact counts of
    the confidential rows, for choosing the bounds on screen; never released).

    ``rows`` and ``people`` count the rows with a person id and their people; ``dropped`` the
    rows the bound leaves out and ``people_affected`` the people who lose at least one;
    ``most_rows_in_a_group`` and ``most_groups`` the largest number of rows one person has in
    one cell, and of cells one person's rows are in (the smallest M and G that keep every row).
    """

    rows: int
    people: int
    dropped: int
    people_affected: int
    most_rows_in_a_group: int
    most_groups: int
    missing_person: int


def preview_bound(labels: pd.DataFrame, owners: pd.Series, unit: PrivacyUnit) -> BoundPreview:
    """:class:`BoundPreview` of ``unit`` on rows with the cell ``labels`` (no columns: one cell)
    and person ids ``owners``, counted by :func:`bounded_rows` over every row with an id, whatever
    its value (a row without a usable value is left out anyway; which of a person's rows are
    kept depends on the values, how many does not)."""
    if unit.column is None:
        raise ValueError("A preview of the bound needs a person column.")
    if labels.shape[1] == 0:
        labels = pd.DataFrame({"cell": np.zeros(len(owners), dtype=np.int8)})
    person = pd.factorize(owners, use_na_sentinel=True)[0]
    has_id = person >= 0
    kept = bounded_rows(labels, np.zeros(len(person)), person, unit.max_rows, unit.max_groups)
    dropped = has_id & ~kept
    pairs = pd.DataFrame({"person": person[has_id], "cell": _cell_rank(labels)[has_id]})
    rows_in_cell = pairs.value_counts()
    return BoundPreview(
        rows=int(has_id.sum()), people=int(pairs["person"].nunique()),
        dropped=int(dropped.sum()), people_affected=int(np.unique(person[dropped]).size),
        most_rows_in_a_group=int(rows_in_cell.max()) if len(pairs) else 0,
        most_groups=int(rows_in_cell.groupby(level="person").size().max()) if len(pairs) else 0,
        missing_person=int((~has_id).sum()),
    )  # fmt: skip


def missing_person_message(rows: int, column: str) -> str:
    """Why rows without a person id stop a release, and the fix (every engine and the mean's
    statistics in memory refuse them rather than guess whom they belong to)."""
    return (
        f"{plural(rows, 'row')} of the data {'has' if rows == 1 else 'have'} no id in the "
        f"person column `{column}`, so whom they belong to is unknown and their contribution "
        "cannot be bounded. Fill in their ids, or remove those rows."
    )


def bounded_rows(
    labels: pd.DataFrame, values: np.ndarray, person: np.ndarray, max_rows: int, max_groups: int
) -> np.ndarray:
    """Which rows the contribution bound keeps (:mod:`dpcore.foundations.privacy_unit`): rows with finite
    values and a person (code ≥ 0), at most ``max_rows`` of a person per cell in the order of
    frac(x·φ) then x, x the first column of ``values`` (then the other columns, so that only
    rows equal in every column tie), in at most ``max_groups`` cells per person, those with the
    most kept rows first, then by label. ``values`` has one column per input, or is 1-D."""
    values = values.reshape(values.shape[0], -1)
    candidates = np.flatnonzero(np.isfinite(values).all(axis=1) & (person >= 0))
    cell = _cell_rank(labels)[candidates]
    x = values[candidates]
    key = x[:, 0] * GOLDEN_RATIO_FRACTION
    key -= np.floor(key)
    # One integer per (person, cell), ordered as the pair: one sort key fewer than sorting by
    # person then cell, and the pairs' counts come from runs of it without a pandas merge.
    cells = int(cell.max()) + 1 if cell.size else 1
    pair = person[candidates].astype(np.int64) * cells + cell
    order = np.lexsort((*x[:, :0:-1].T, x[:, 0], key, pair))
    pair = pair[order]
    capped = _rank_in_runs(pair) < max_rows
    kept_pair = pair[capped]
    starts = np.flatnonzero(np.r_[True, kept_pair[1:] != kept_pair[:-1]]) if kept_pair.size else []
    rows = np.diff(np.r_[starts, kept_pair.size]).astype(np.int64)
    owner, owner_cell = np.divmod(kept_pair[starts], cells)
    # Cells of each person, most kept rows first, then in label order (cell rank).
    ranked = np.lexsort((owner_cell, -rows, owner))
    chosen = np.zeros(rows.size, dtype=bool)
    chosen[ranked[_rank_in_runs(owner[ranked]) < max_groups]] = True
    keep = np.zeros(values.shape[0], dtype=bool)
    kept_sorted = np.flatnonzero(capped)[np.repeat(chosen, rows)]
    keep[candidates[order[kept_sorted]]] = True
    return keep


def _cell_rank(labels: pd.DataFrame) -> np.ndarray:
    """Each row's cell as an integer that orders cells by their labels, column by column (by
    code point, as SQL's ORDER BY compares text)."""
    return labels.groupby(list(labels.columns), sort=True).ngroup().to_numpy(np.int64)


def _rank_in_runs(*sorted_keys: np.ndarray) -> np.ndarray:
    """Position of each element within its run of equal keys (the arrays sorted together)."""
    n = sorted_keys[0].shape[0]
    starts = np.zeros(n, dtype=bool)
    if n:
        starts[0] = True
    for key in sorted_keys:
        starts[1:] |= key[1:] != key[:-1]
    run_start = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    return np.arange(n) - run_start
