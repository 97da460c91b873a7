"""What a mean's release plan refuses before any draw: group sizes that a row would give away,
groups found privately where that cannot be paid for, and intervals with sampling error where
they cannot be formed (:class:`~dpcore.analyses.mean.plan.MeanPlan` calls these on creation)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.foundations.accounting import ApproxDP
from dpcore.foundations.privacy_unit import ROW
from dpcore.foundations.validation import open_unit_interval

if TYPE_CHECKING:
    from dpcore.analyses.mean.plan import MeanPlan

__all__ = ["check_sampling_error_possible", "check_selection_possible", "check_sizes_stay_private"]

PRIVATE_SIZES_GAPS = {
    "shares": "the recombination shares come from the data's own group counts, so each group's "
    "published share would give its size away. On the Strata page, take the shares from a "
    "public table, a holdout split or the release's own noisy group counts",
    "list": "the list of groups comes from the data, so a new category would appear in the "
    "release as soon as one person of it is added. On the Strata page, declare the categories "
    "of each grouping column",
    "keep": "small groups are merged or dropped by their exact sizes, which would show which "
    "groups are small. On the Strata page, keep every group whatever its size, or take the "
    "shares from the release's own noisy group counts, which then decide which are small",
}


def check_sizes_stay_private(plan: MeanPlan) -> None:
    """With private group sizes, refuse every way a group row would give a size away: shares
    from the data's own counts (each row carries n_g/n), groups taken from the data (a new
    category appears when one person of it is added), and small groups merged or dropped by
    their exact sizes (AAAI 2024's setting treats sizes as public; we keep them private
    only when nothing but noise depends on them)."""
    if plan.sizes_public or plan.strategy == "global_only":
        return
    gaps = plan.header.spec.private_sizes_gaps()
    if gaps:
        raise ValueError(
            "Group sizes are private in this release (“Treat group sizes as public” is off "
            f"on the Estimator page), but {PRIVATE_SIZES_GAPS[gaps[0]]}; or treat group "
            "sizes as public."
        )


def check_selection_possible(plan: MeanPlan) -> None:
    """Finding the groups privately (:mod:`dpcore.foundations.selection`) publishes a group of one
    person with probability δ: refuse, before any draw, every setting that cannot pay for
    it or has no groups to find."""
    if not isinstance(plan.header.budget, ApproxDP):
        raise ValueError(
            "Finding the groups privately needs an (ε, δ) budget: a group of one person "
            "must be published with a small probability δ, which an ε or a ρ budget cannot "
            f"account for (this plan runs at {plan.header.budget}). Switch to an (ε, δ) budget, "
            "or declare the categories of each grouping column on the Strata page."
        )
    refusals = [
        (plan.strategy == "global_only",
         "a release of the whole population only has no groups to find; choose groups "
         "from the data instead"),
        (plan.sizes_public,
         "with group sizes treated as public the groups found in the data are public too; "
         "keep group sizes private (Estimator page) or take the groups from the data"),
        (not isinstance(plan.values, GroupValues),
         "the groups are found from the rows in memory; load the data into memory"),
        (plan.unit != ROW,
         "the selection counts one row per person; leave the person column out"),
    ]  # fmt: skip
    for refused, why in refusals:
        if refused:
            raise ValueError(f"Finding the groups privately is not possible here: {why}.")


def check_sampling_error_possible(plan: MeanPlan) -> None:
    open_unit_interval("variance_fraction", plan.variance_fraction)
    if not isinstance(plan.estimator, LaplaceMean | GaussianMean):
        raise ValueError(
            "Intervals with sampling error need the Laplace or Gaussian mean: CoinPress moves "
            "its clipping range at every step, so the spread of its clipped values has no "
            "fixed bound to add noise for. Choose another estimator on the Estimator page, "
            "or release noise-only intervals."
        )
    if not plan.sizes_public:
        raise ValueError(
            "Intervals with sampling error need group sizes treated as public (Estimator "
            "page), as their sampling error is read from each group's size. With sizes kept "
            "private, release noise-only intervals, which stand on the release's noisy counts."
        )
    if not isinstance(plan.values, GroupValues):
        raise ValueError(
            "Intervals with sampling error need the rows in memory; the engines compute "
            "clipped sums but not yet the sums of squares they need. Release noise-only "
            "intervals, or load the data into memory."
        )
