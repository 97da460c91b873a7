r"""The privacy unit: who a neighbouring dataset adds or removes — one row, or one person.

Without a person column every row is a different person, as everywhere else in Strata Lab. With
one, an engine bounds each person's contribution before it aggregates (PipelineDP's
"contribution bounding"), in one aggregate per (person, cell), a cell being a combination of
the grouping columns' values:

- **within a cell, scaled:** a person's n usable rows in the cell count as
  :math:`m = \min(n, M)` rows (``max_rows`` M), and each sum over them is scaled by m/n: the
  person adds m rows whose values are the average of their n rows' (clipped) values. We scale
  rather than keep m of the rows because scaling needs no order among a person's rows (no
  sort: one sum and one count per (person, cell)), uses every row, and is unbiased where a
  choice of rows by their values is not (keeping a person's smallest value first biased a 0/1
  mean down);
- **across cells, truncated:** a person's cells are ranked by m (most first), then by their
  labels, and only the first ``max_groups`` G count; the person's other cells add nothing.
  Which cells count depends only on the person's own row counts.

**Sensitivity.** Every per-row term an analysis sums (a value clipped to [L, U], a product of
clipped columns) lies in a public interval [a, b]; a person's scaled sum in a cell is m times
an average of such terms, so it lies in [m·a, m·b] with m ≤ M, and their count is m ≤ M. The
person adds this to at most G cells. Adding or removing the person therefore moves every
count by at most :math:`c = GM` in all, and every sum by at most :math:`c\max(|a|, |b|)` in
all (replacing them, by :math:`c(b - a)`): what c rows can do. Every mechanism that protects
one row at :math:`\varepsilon/c` (or :math:`\rho/c^2`) then protects one person at the
release's budget:

- pure ε-DP is closed under groups of c rows at c·ε (Dwork & Roth 2014, Thm 2.2);
- ρ-zCDP at c²·ρ (Bun & Steinke 2016, Prop. 1.9).

Our choice: c is the person's row count over *all* groups, the L1 bound, for the Laplace and the
Gaussian mechanisms alike. The L2 bound √max_groups·max_rows would be tighter for Gaussian noise
on unmerged groups, but a person's cells can be merged into one small-groups group, and the
whole-population estimate sees every row of the person; the L1 bound holds in every case.

The bound is written once in numpy (:func:`bounded_weights`: each row's weight m/n, or 0), used
by the pandas engine and by the statistics in memory; DuckDB and Spark write the same rule as
one aggregate per (person, cell) and one per person, so a release is the same on every engine.

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
    "ROW",
    "BoundPreview",
    "BoundedRows",
    "PrivacyUnit",
    "bound_contributions",
    "bounded_weights",
    "cell_ranks",
    "dropped_rows_notes",
    "missing_person_message",
    "preview_bound",
    "row_weights",
]


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
    """Each row's weight under the contribution bound (``weights``: m/n for a row of a person's
    counted cell, 0 for a row left out; :func:`bounded_weights`), and how many rows have no
    person id (never counted: whom they belong to is unknown)."""

    weights: np.ndarray
    missing_person: int

    @property
    def kept(self) -> np.ndarray:
        """The rows that count at all (weight above 0)."""
        return self.weights > 0


def bound_contributions(
    labels: pd.DataFrame, values: np.ndarray, owners: pd.Series | None, unit: PrivacyUnit
) -> BoundedRows:
    """The weights ``unit`` gives the rows of a table whose rows have the cell ``labels`` (one
    column per grouping column), the ``values`` (1-D, or one column per input) and the person
    ids ``owners`` (missing: no id), as :func:`bounded_weights` gives them; 1 for every row
    with finite values for :data:`ROW`."""
    finite = np.isfinite(values.reshape(values.shape[0], -1)).all(axis=1)
    if unit.column is None:
        return BoundedRows(finite.astype(float), 0)
    person = pd.factorize(owners, use_na_sentinel=True)[0]
    weights = bounded_weights(cell_ranks(labels), finite, person, unit.max_rows, unit.max_groups)
    return BoundedRows(weights, int(np.sum(person < 0)))


def row_weights(
    frame: pd.DataFrame, grouping: Grouping, values: np.ndarray, roles: dict[str, str],
    unit: PrivacyUnit,
) -> np.ndarray:  # fmt: skip
    """Each row's weight under ``unit``'s bound (:func:`bound_contributions` in the cells of
    ``grouping``'s columns, as every engine bounds them), given the analysis' ``values`` (one
    column per input, in the order of ``roles``: each input column and its role in words, "the
    value to estimate", "the score"); 1 for every row with finite values for :data:`ROW`.

    Raises
    ------
    ValueError
        A person column that is not in ``frame``, that is one of the inputs or a grouping
        column, or that has rows without an id: what is wrong and how to fix it.
    """
    if unit.column is None:
        return np.isfinite(values.reshape(values.shape[0], -1)).all(axis=1).astype(float)
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
    return bounded.weights


def dropped_rows_notes(unit: PrivacyUnit, dropped: int) -> tuple[str, ...]:
    """A sentence for the curator about the ``dropped`` rows the bound left out (none when no
    row was), shown with the statistics and never released."""
    if not dropped:
        return ()
    return (
        f"Bounding each person to {plural(unit.max_groups, 'group')} and "
        f"{plural(unit.max_rows, 'row')} per group left out the weight of "
        f"{plural(dropped, 'row')}: a person's rows in a group count as {unit.max_rows} at "
        "most, and their other groups not at all (a curator's view: exact, not for "
        "publication).",
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
    and person ids ``owners``, counted by :func:`bounded_weights` over every row with an id,
    whatever its value (a row without a usable value is left out anyway; the weight a person's
    rows keep depends on how many there are, not on their values)."""
    if unit.column is None:
        raise ValueError("A preview of the bound needs a person column.")
    if labels.shape[1] == 0:
        labels = pd.DataFrame({"cell": np.zeros(len(owners), dtype=np.int8)})
    person = pd.factorize(owners, use_na_sentinel=True)[0]
    has_id = person >= 0
    cells = cell_ranks(labels)
    weights = bounded_weights(cells, has_id, person, unit.max_rows, unit.max_groups)
    pairs = pd.DataFrame({"person": person[has_id], "cell": cells[has_id]})
    rows_in_cell = pairs.value_counts()
    dropped_by_person = np.bincount(
        person[has_id], weights=1.0 - weights[has_id], minlength=int(person.max()) + 1
    )  # fmt: skip
    return BoundPreview(
        rows=int(has_id.sum()), people=int(pairs["person"].nunique()),
        dropped=int(round(dropped_by_person.sum())),
        people_affected=int(np.count_nonzero(dropped_by_person > 0.5)),
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


def bounded_weights(
    cells: np.ndarray, usable: np.ndarray, person: np.ndarray, max_rows: int, max_groups: int
) -> np.ndarray:
    """Each row's weight under the contribution bound (module doc): for the n ``usable`` rows
    of a person (code ≥ 0) in a cell, min(n, ``max_rows``)/n in the ``max_groups`` cells where
    that min is largest (ties to the smaller cell code), 0 elsewhere and for the other rows.
    ``cells`` are integer codes in the order of the cells' labels (:func:`cell_ranks`), so that
    every engine breaks ties alike. One aggregate per (person, cell), then one sort of the
    pairs."""
    weights = np.zeros(cells.shape[0])
    rows = np.flatnonzero(usable & (person >= 0))
    if not rows.size:
        return weights
    width = int(cells.max()) + 1
    pair_of_row, pair = pd.factorize(person[rows].astype(np.int64) * width + cells[rows])
    n = np.bincount(pair_of_row)
    owner, cell = np.divmod(np.asarray(pair), width)
    counted = np.minimum(n, max_rows)
    # A person's cells, most counted rows first, then by cell (label order).
    ranked = np.lexsort((cell, -counted, owner))
    chosen = np.zeros(pair.size, dtype=bool)
    chosen[ranked[_rank_in_runs(owner[ranked]) < max_groups]] = True
    weights[rows] = np.where(chosen, counted / n, 0.0)[pair_of_row]
    return weights


def cell_ranks(labels: pd.DataFrame) -> np.ndarray:
    """Each row's cell as an integer that orders cells by their labels, column by column (by
    code point, as SQL's ORDER BY compares text)."""
    return labels.groupby(list(labels.columns), sort=True).ngroup().to_numpy(np.int64)


def _rank_in_runs(sorted_keys: np.ndarray) -> np.ndarray:
    """Position of each element within its run of equal keys (the array sorted)."""
    n = sorted_keys.shape[0]
    starts = np.zeros(n, dtype=bool)
    if n:
        starts[0] = True
        starts[1:] = sorted_keys[1:] != sorted_keys[:-1]
    run_start = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    return np.arange(n) - run_start
