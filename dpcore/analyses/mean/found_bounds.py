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

from dataclasses import dataclass, fields

import numpy as np

from dpcore.analyses.mean.estimators import ClippedMean, GaussianMean, LaplaceMean
from dpcore.analyses.mean.strategies import Strategy, simulated_releases
from dpcore.foundations.accounting import Budget
from dpcore.foundations.mechanisms import NoiseSource
from dpcore.foundations.private_bounds import FoundBounds, PrivateBounds
from dpcore.foundations.small_groups import CountNoise

__all__ = ["PrivatelyBounded", "check_bounded_mean", "found_ranges", "released_found"]


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

    @property
    def public_range(self) -> tuple[float, float]:
        """The search range: every bound found, and so every clipped mean, lies in it."""
        return self.base.public_range

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


def check_bounded_mean(plan) -> None:
    """Refuse, naming the fix, what a plan (:class:`~dpcore.analyses.mean.MeanPlan`) that
    finds its bounds cannot be combined with yet."""
    if not isinstance(plan.bounds, PrivateBounds):
        raise TypeError(f"`bounds` must be a PrivateBounds, got {type(plan.bounds).__name__}")
    if not isinstance(plan.estimator, LaplaceMean | GaussianMean):
        raise ValueError(
            "Bounds found privately apply to the Laplace and Gaussian means: CoinPress finds "
            "its own range from its public prior. Choose the Laplace or Gaussian mean, or type "
            "public bounds."
        )
    if plan.sampling_error:
        raise ValueError(
            "Intervals with sampling error need bounds fixed before the release (their "
            "variances are noised for a known range). Type public bounds, or release "
            "noise-only intervals."
        )
    if plan.header.spec.selects:
        raise ValueError(
            "Finding the groups privately and finding the bounds privately cannot be combined "
            "yet. Declare the groups on the Strata page, or type public bounds."
        )


FOUND_ESTIMAND = (
    "sample mean of the values clipped at the bounds published on each row (found privately "
    "before the means, with independent noise, so the intervals hold given those bounds)"
)
"""What a release's intervals cover when it found its bounds (module doc, Intervals)."""


def clipping(estimator: ClippedMean, result, k: int) -> tuple[ClippedMean, tuple, tuple]:
    """The estimator as a release ran it (at the bounds it found, if it found them), each
    group's clipping range and the population's (``result``: its
    :class:`~dpcore.analyses.mean.strategies.StrategyResult`)."""
    if result.bounds is None:
        low, high = _typed_range(estimator)
        return estimator, (low, high), (low, high)
    groups, whole = found_ranges(result.bounds, k)
    return estimator.at_bounds(result.bounds.low, result.bounds.high), groups, whole


def _typed_range(estimator) -> tuple[float, float]:
    """The public range every released mean is clipped into: the bounds, or CoinPress'
    prior (as :func:`~dpcore.analyses.mean.plan.public_range`)."""
    if getattr(estimator, "prior", None) is not None:  # CoinPress
        return estimator.prior
    if estimator.bounds is None:
        return -np.inf, np.inf
    return estimator.bounds


def row_bounds(result, ranges: tuple, g: int = 0, k: int = 1) -> dict:
    """The ``clip_low``/``clip_high`` of a release row: group ``g`` of ``k`` in ``ranges``
    (or the one range), when the release found its bounds; nothing when they were typed."""
    if result.bounds is None:
        return {}
    low, high = (float(np.broadcast_to(b, (k,))[g]) for b in ranges)
    return {"clip_low": low, "clip_high": high}


def review_lines(plan) -> list[str]:
    """The review line of a plan that finds its bounds (none when they are typed)."""
    if plan.bounds is None:
        return []
    return [
        f"**Bounds:** {plan.bounds.describe(plan.row_budget)}; the means run at "
        f"{plan.mean_budget}. The bounds found are published on every row."
    ]


def script_argument(bounds: PrivateBounds | None) -> str:
    """The plan's private bounds as the script's argument (none when typed)."""
    if bounds is None:
        return ""
    arguments = ", ".join(f"{f.name}={getattr(bounds, f.name)!r}" for f in fields(bounds))
    return f"    bounds=PrivateBounds({arguments}),\n"


def found_ranges(
    found: FoundBounds, k: int
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[float, float]]:
    """The ranges a release's estimates are clipped into: each group's (arrays of shape (k,))
    and the population's (the pooled range, or the envelope of the groups')."""
    low, high = (np.broadcast_to(b, (k,)) for b in (found.low, found.high))
    whole_low, whole_high = found.envelope()
    return (low, high), (float(whole_low[0]), float(whole_high[0]))


def released_found(
    values, estimator: PrivatelyBounded, budget: Budget, strategy: Strategy,
    global_fraction: float, replicates: int, rng: np.random.Generator | int | None,
) -> np.ndarray:  # fmt: skip
    """(replicates, estimates) simulated releases that find their bounds at a person's
    ``budget``, each estimate clipped into the range its release found (MeanPlan.run)."""
    result = simulated_releases(
        strategy, values, estimator, budget, global_fraction, replicates, rng
    )
    low, high = (np.broadcast_to(b, (replicates, values.k)) for b in
                 (result.bounds.low, result.bounds.high))  # fmt: skip
    whole_low, whole_high = result.bounds.envelope()
    if strategy == "global_only":
        return np.clip(result.global_estimate[:, None], whole_low, whole_high)
    groups = np.clip(result.group_estimates, low, high)
    whole = np.clip(result.global_estimate[:, None], whole_low, whole_high)
    return np.column_stack([groups, whole])
