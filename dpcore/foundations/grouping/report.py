"""What grouping did to the rows (:class:`GroupingReport`), for the UI to state on screen.

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dpcore.foundations.labels import (
    OTHER_LABEL,
    list_labels,
    plural,
)

PrivateSizesGap = Literal["shares", "list", "keep"]

SmallGroups = Literal["merge", "drop", "keep"]
"""What happens to a group below ``min_group_size``: merged into :data:`OTHER_LABEL`, dropped,
or kept whatever its size (the only choice that never reads the exact group sizes, so the only
one a release with private group sizes allows)."""


@dataclass(frozen=True)
class GroupingReport:
    """What grouping did to the rows, for the UI to state on screen.

    Attributes
    ----------
    n_input_rows
        Confidential rows that were grouped (the public holdout and the rows left out for a
        missing value are not counted).
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
    n_rows_without_values
        Confidential rows left out before grouping because a column of ``needs_values`` has no
        usable number in them (:attr:`GroupingSpec.needs_values`).
    needs_values
        The columns every grouped row has a value in.
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
    n_rows_without_values: int = 0
    needs_values: tuple[str, ...] = ()

    @property
    def n_rows_used(self) -> int:
        """Rows that made it into the groups."""
        return self.n_input_rows - self.n_rows_dropped_small - self.n_rows_undeclared

    def rows_used_sentence(self) -> str:
        """Which rows the groups count, for the screen: the rows with every value the analysis
        reads, or every row."""
        if not self.needs_values:
            return "The groups count every row."
        columns = " and ".join(f"`{c}`" for c in self.needs_values)
        if not self.n_rows_without_values:
            return f"The groups count the rows the estimate uses: every row has {columns}."
        one = self.n_rows_without_values == 1
        return (
            f"The groups count the rows the estimate uses: "
            f"{plural(self.n_rows_without_values, 'row')} {'has' if one else 'have'} no number "
            f"in {columns} and {'is' if one else 'are'} left out, so each group's size and the small-group rule describe the rows its "
            "estimate is made of."
        )

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
