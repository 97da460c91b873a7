r"""Groups (strata) of a table: the one grouping that every analysis shares.

A :class:`Grouping` splits the rows of a frame into disjoint groups
:math:`G_1 \cup \dots \cup G_k` — one group per combination of the ``by`` columns, as in
Rosenblatt, Stoyanovich & Musco (AAAI 2024, "Problem statement") — applies the small-group policy
(merge into :data:`OTHER_LABEL` or drop), and carries the public shares that recombine group
estimates (paper eq. 3). Each analysis computes its own statistics from :attr:`Grouping.codes`.

The rows grouped are the rows the estimate uses: a spec's ``needs_values`` names the columns an
analysis reads (:meth:`~dpcore.analyses.base.Analysis.value_columns`), and a row with no usable
number in one of them is left out *before* grouping. The groups, their sizes, the small-group
rule and shares read from the data then all count the rows each group's estimate is made of, so
that a size declared public is the size the estimate divides by, and the stratified and
whole-population estimates describe the same rows.

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

from dpcore.foundations.grouping.codes import (
    DROPPED_CODE,
    HOLDOUT_CODE,
    MAX_CODE_VALUES,
    MAX_ENGINE_GROUPS,
    MAX_GROUPS,
    bucket_labels,
    cell_labels,
    check_categories,
    check_edges,
    codebook_categories,
    column_codes,
    is_category_codes,
    is_numeric_group_dtype,
    needs_edges,
)
from dpcore.foundations.grouping.groups import Grouping, GroupingSpec
from dpcore.foundations.grouping.report import GroupingReport, SmallGroups
from dpcore.foundations.labels import LABEL_SEPARATOR, MISSING_LABEL, OTHER_LABEL, codebook_order

__all__ = [
    "DROPPED_CODE",
    "HOLDOUT_CODE",
    "MAX_CODE_VALUES",
    "MAX_ENGINE_GROUPS",
    "MAX_GROUPS",
    "LABEL_SEPARATOR",
    "MISSING_LABEL",
    "OTHER_LABEL",
    "Grouping",
    "GroupingReport",
    "GroupingSpec",
    "SmallGroups",
    "bucket_labels",
    "cell_labels",
    "check_categories",
    "codebook_categories",
    "codebook_order",
    "column_codes",
    "check_edges",
    "is_category_codes",
    "is_numeric_group_dtype",
    "needs_edges",
]
