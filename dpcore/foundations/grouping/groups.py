"""The groups every analysis shares (:class:`Grouping`) and their recipe (:class:`GroupingSpec`).

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from dpcore.foundations.grouping.codes import (
    DROPPED_CODE,
    HOLDOUT_CODE,
    MAX_ENGINE_GROUPS,
    MAX_GROUPS,
    check_by,
    check_categories,
    check_edges,
    declared_codes,
    intersection_codes,
)
from dpcore.foundations.grouping.policy import apply_small_group_policy
from dpcore.foundations.grouping.report import GroupingReport, PrivateSizesGap, SmallGroups
from dpcore.foundations.labels import (
    OTHER_LABEL,
    CountedGroups,
    labels_repr,
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
    is_numeric,
    open_unit_interval,
    positive_int,
    read_only,
    require_columns,
)

# --------------------------------------------------------------------------------------------
# Grouping
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class Grouping(CountedGroups):
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
        codes, labels = intersection_codes(
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
        by = check_by(df, by)
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
            codes, labels, undeclared = declared_codes(df, by, edges_map, declared, weights)
        else:
            codes, labels = intersection_codes(df, by, edges_map)
        row_code, final_labels, final_sizes, report = apply_small_group_policy(
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
            description="The data's own group counts, declared public",
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
    needs_values
        The columns whose value every grouped row needs: the columns the analysis reads
        (:meth:`~dpcore.analyses.base.Analysis.value_columns`). A row whose value in one of them
        is missing or not a finite number is left out before grouping, so that the groups,
        their sizes, the small-group rule and shares read from the data count the rows the
        estimate uses (:attr:`GroupingReport.n_rows_without_values` says how many were left
        out). A column that is not numeric, or not in the frame, leaves no row out: the
        analysis refuses it with its own message. Empty: every row is grouped.
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
    needs_values: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "by", (self.by,) if isinstance(self.by, str) else tuple(self.by))
        set_(self, "needs_values", tuple(str(c) for c in self.needs_values))
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

    def build(
        self,
        frame: pd.DataFrame,
        *,
        weights: np.ndarray | None = None,
        with_values: np.ndarray | None = None,
    ) -> Grouping:
        """Group ``frame``'s confidential rows that have every value of :attr:`needs_values`
        and compute the recombination shares.

        With ``share_source="holdout"`` a public holdout is set aside first, drawn from every
        row (its rows get :data:`HOLDOUT_CODE`; its rows without a value do not count in its
        shares); the groups and their sizes come from the other rows. A confidential row left
        out for a missing value gets :data:`DROPPED_CODE`. ``weights`` (see
        :meth:`Grouping.from_frame`) groups a table of cells, and ``with_values`` then gives each
        cell's rows that have every value (an engine's ``finite`` count; required with
        :attr:`needs_values`); a holdout, drawn row by row, cannot be set aside and is refused.
        """
        frame = data_frame("frame", frame)
        if weights is not None:
            if self.share_source == "holdout":
                raise ValueError(
                    "A public holdout is drawn row by row from a table in memory. For data read "
                    "by an engine, take the shares from the data's group counts or from a "
                    "public table."
                )
            weights = _row_weights(weights, len(frame))
            if self.needs_values:
                if with_values is None:
                    raise ValueError("`with_values` must count each cell's rows with values")
                with_values = _row_weights(with_values, len(frame))
            else:
                with_values = weights
            used = with_values > 0
            self._check_some_values(used)
            grouping = Grouping.from_frame(
                frame[used], by=self.by, min_group_size=self.min_group_size,
                small_groups=self.built_small_groups, weights=with_values[used],
                categories=dict(self.categories), max_groups=MAX_ENGINE_GROUPS,
            )  # fmt: skip
            grouping = self._recoded(grouping, used, int(weights.sum() - with_values.sum()))
            return self._with_spec_shares(grouping)
        public = np.zeros(len(frame), dtype=bool)
        if self.share_source == "holdout":
            public = holdout_mask(len(frame), self.holdout_fraction, rng=HOLDOUT_SEED)
        has_values = rows_with_values(frame, self.needs_values)
        used = has_values & ~public
        self._check_some_values(used)
        grouping = Grouping.from_frame(
            frame[used] if not used.all() else frame,
            by=self.by,
            edges={c: list(e) for c, e in self.edges} or None,
            min_group_size=self.min_group_size,
            small_groups=self.built_small_groups,
            categories=dict(self.categories),
        )
        grouping = self._recoded(grouping, used, int(np.count_nonzero(~has_values & ~public)))
        if public.any():
            codes = np.where(public, HOLDOUT_CODE, grouping.codes)
            grouping = dataclasses.replace(grouping, codes=codes)
            holdout = frame[public & has_values]
            return grouping.with_shares(shares_from_holdout(grouping, holdout), self)
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
            # Only when set, so that plans from before it keep their keys.
            **({"needs_values": list(self.needs_values)} if self.needs_values else {}),
        }

    def _check_some_values(self, used: np.ndarray) -> None:
        if self.needs_values and used.size and not used.any():
            columns = " and ".join(f"`{c}`" for c in self.needs_values)
            raise ValueError(
                f"no row has a usable number in {columns}: every value is missing or not a "
                "finite number. Choose another column to estimate."
            )

    def _recoded(self, grouping: Grouping, used: np.ndarray, without_values: int) -> Grouping:
        """``grouping`` of the ``used`` rows of a frame, with codes for every row of that frame
        (:data:`DROPPED_CODE` for the others) and the rows left out for a missing value
        counted in its report."""
        report = dataclasses.replace(
            grouping.report, n_rows_without_values=without_values,
            needs_values=self.needs_values,
        )  # fmt: skip
        if used.all():
            return dataclasses.replace(grouping, report=report)
        codes = np.full(used.size, DROPPED_CODE, dtype=np.int64)
        codes[used] = grouping.codes
        return dataclasses.replace(grouping, codes=codes, report=report)


def rows_with_values(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """``(rows,)`` bool: the rows of ``frame`` with a finite number in every one of ``columns``
    (:attr:`GroupingSpec.needs_values`). A column that is not numeric or not in ``frame`` leaves
    no row out: the analysis that reads it refuses it with its own message."""
    usable = np.ones(len(frame), dtype=bool)
    for column in columns:
        if column in frame.columns and is_numeric(frame[column]):
            usable &= np.isfinite(frame[column].to_numpy(dtype=np.float64, na_value=np.nan))
    return usable
