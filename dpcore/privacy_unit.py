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

Pure Python; never imports streamlit or plotly.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpcore._labels import plural
from dpcore._validate import positive_int
from dpcore.accounting import ZCDP, Budget, PureDP

__all__ = ["GOLDEN_RATIO_FRACTION", "ROW", "PrivacyUnit"]

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

    def to_dict(self) -> dict:
        return {"column": self.column, "max_groups": self.max_groups, "max_rows": self.max_rows}


ROW = PrivacyUnit()
"""The default unit: one row is one person."""
