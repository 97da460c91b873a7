r"""The mean with its clipping bounds found privately by the release itself
(:mod:`dpcore.foundations.private_bounds`), instead of typed.

:class:`PrivatelyBounded` is a mean estimator like the others (the strategies, the Monte Carlo
engine, the planner and the release plan take it unchanged): asked for estimates at a budget, it
first spends :attr:`PrivateBounds.fraction <dpcore.foundations.private_bounds.PrivateBounds.fraction>`
of it finding the bounds — once per release, shared by every estimate the release publishes —
then runs the Laplace or Gaussian mean clipped at them with the rest (sequential composition).
With pooled bounds the selection reads every group's values together (it touches everyone once);
with bounds per group each group's own (parallel composition): either way the release costs
exactly its budget.

Intervals. The bounds are random, but they are drawn before, and independently of, the means'
noise. Given the bounds a release published, each mean is the Laplace or Gaussian mean of the
values clipped at them, and its noise interval (a parametric bootstrap of that noise,
:meth:`~dpcore.analyses.mean.MeanPlan.intervals`) covers the mean of the values clipped at the
published bounds with its nominal probability. Coverage holding for every value of the bounds, it
holds over their randomness too: the interval is valid *conditionally* on the published bounds,
for the estimand they define (the clipped mean, which each release row states).

Pure numpy; never imports streamlit or plotly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpcore.analyses.mean.estimators import ClippedMean, GaussianMean, LaplaceMean
from dpcore.foundations.accounting import Budget
from dpcore.foundations.mechanisms import NoiseSource
from dpcore.foundations.private_bounds import FoundBounds, PrivateBounds
from dpcore.foundations.small_groups import CountNoise

__all__ = ["PrivatelyBounded", "check_bounded_mean", "found_ranges"]


@dataclass(frozen=True)
class PrivatelyBounded:
    """A Laplace or Gaussian mean (``base``, whose typed bounds are the search range) whose
    clipping bounds are found privately first (``bounds``); see the module doc."""

    base: LaplaceMean | GaussianMean
    bounds: PrivateBounds

    def __post_init__(self) -> None:
        if not isinstance(self.base, LaplaceMean | GaussianMean) or self.base.bounds is None:
            raise TypeError(
                "`base` must be a LaplaceMean or GaussianMean with typed bounds (the search "
                f"range), got {self.base!r}"
            )

    @property
    def name(self) -> str:
        return f"{self.base.name} with bounds found privately"

    @property
    def n_public(self) -> bool:
        return self.base.n_public

    def describe(self) -> str:
        low, high = self.bounds.search
        sizes = self.base.describe().split("; ", 1)[1]
        return (
            f"each value clipped to bounds found privately within the public search range "
            f"[{low:g}, {high:g}] ({self.bounds.fraction:.0%} of the budget); {sizes}"
        )

    def interval(self, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The search range: the widest the found bounds can be."""
        return self.base.interval(sizes)

    def count_noise(self, budget: Budget) -> CountNoise:
        """The noise on each group's count: the base mean's, at the share the means get."""
        return self.base.count_noise(self.bounds.rest(budget))

    def resolve(
        self,
        strata,
        budget: Budget,
        *,
        replicates: int | None,
        noise: NoiseSource,
        pooled: bool = False,
    ) -> tuple[ClippedMean, Budget, FoundBounds]:
        """The bounds found on ``strata`` (its groups' values, or all of them as one group when
        ``pooled``: a release of the population only) at :meth:`PrivateBounds.cost` of
        ``budget``; the base mean clipped at them, and the budget it runs at."""
        counts = strata.grid_counts(self.bounds.grid)
        found = self.bounds.draw(counts, budget, noise=noise, replicates=replicates,
                                 pooled=pooled)  # fmt: skip
        return self.base.at_bounds(found.low, found.high), self.bounds.rest(budget), found


def check_bounded_mean(estimator: object, *, sampling_error: bool, selects: bool) -> None:
    """Refuse, naming the fix, what bounds found privately cannot be combined with yet."""
    if not isinstance(estimator, LaplaceMean | GaussianMean):
        raise ValueError(
            "Bounds found privately apply to the Laplace and Gaussian means: CoinPress finds "
            "its own range from its public prior. Choose the Laplace or Gaussian mean, or type "
            "public bounds."
        )
    if sampling_error:
        raise ValueError(
            "Intervals with sampling error need bounds fixed before the release (their "
            "variances are noised for a known range). Type public bounds, or release "
            "noise-only intervals."
        )
    if selects:
        raise ValueError(
            "Finding the groups privately and finding the bounds privately cannot be combined "
            "yet. Declare the groups on the Strata page, or type public bounds."
        )


def found_ranges(
    found: FoundBounds, k: int
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[float, float]]:
    """The ranges a release's estimates are clipped into: each group's (arrays of shape (k,))
    and the population's (the pooled range, or the envelope of the groups')."""
    low, high = (np.broadcast_to(b, (k,)) for b in (found.low, found.high))
    whole_low, whole_high = found.envelope()
    return (low, high), (float(whole_low[0]), float(whole_high[0]))
