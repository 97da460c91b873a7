"""Stratified and whole-population ("vanilla") strategies for releasing group and global means.

- :func:`stratified_mean` — Rosenblatt, Stoyanovich & Musco (AAAI 2024), eq. 4 and appendix B Alg. 3
  (StratCoinpress): estimate every group with the full budget (parallel composition over disjoint
  groups) and recombine the **DP group estimates** with public shares. Total cost: one group's cost.
- :func:`global_only_mean` — vanilla (i): one global estimate with the full budget, used as every
  group's estimate.
- :func:`global_and_group_means` — vanilla (ii): a global estimate and separate group estimates,
  splitting the budget between them under sequential composition.

Every function is vectorized over Monte Carlo replicates (``replicates=R`` gives arrays (R, k) and
(R,)) and takes its noise from a :class:`~dpcore.foundations.mechanisms.NoiseSource`: ``"simulation"`` (numpy,
seeded by ``rng``) for previews, ``"secure"`` (OpenDP) for releases.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from dpcore.analyses.mean.statistics import GroupValues
from dpcore.foundations.accounting import Budget, parallel, scale, sequential
from dpcore.foundations.choices import Choices
from dpcore.foundations.errors import NeedsFixedShares
from dpcore.foundations.labels import list_labels
from dpcore.foundations.mechanisms import (
    NoiseKind,
    NoiseSource,
    SimulationNoise,
    as_noise_source,
)
from dpcore.foundations.private_bounds import FoundBounds
from dpcore.foundations.shares import PublicShares, noisy_count_shares, share_values
from dpcore.foundations.small_groups import NoisyRecombination
from dpcore.foundations.validation import open_unit_interval, positive_int

__all__ = [
    "STRATEGIES",
    "STRATEGY_NAMES",
    "Strategy",
    "StrategyResult",
    "global_and_group_means",
    "global_only_mean",
    "recombine_clamped",
    "run_strategy",
    "simulated_releases",
    "stratified_mean",
]

Strategy = Literal["stratified", "global_only", "global_and_groups"]
STRATEGY_NAMES = Choices(
    Strategy,
    {
        "stratified": "One estimate per group",
        "global_only": "One estimate for everyone",
        "global_and_groups": "Both, budget split",
    },
)
"""What a user reads for each strategy (the paper's stratified, vanilla (i) and vanilla (ii))."""
STRATEGIES = Choices(
    Strategy,
    {
        "stratified": "One estimate per group, each with the full budget, recombined for everyone",
        "global_only": "One estimate for everyone, used for every group",
        "global_and_groups": "Both: one for everyone and one per group, the budget split between them",
    },
)
"""Each strategy in one sentence."""


class MeanEstimator(Protocol):
    name: str
    public_range: tuple[float, float]
    clamp_range: tuple

    def group_estimates(
        self, stats: GroupValues, budget: Budget, *, replicates: int | None, noise: NoiseSource
    ) -> np.ndarray: ...


@dataclass(frozen=True)
class StrategyResult:
    """Group and global estimates of one strategy, with the privacy cost of releasing both.

    ``group_estimates`` has shape (k,) or (replicates, k); ``global_estimate`` () or (replicates,).
    ``shares``, shaped like ``group_estimates``, are the group shares drawn with the release
    from its noisy counts (:func:`~dpcore.foundations.shares.noisy_count_shares`), when the shares' source
    says so; None when the groups are recombined with fixed public shares. ``released``: when
    those shares carry a small-group rule (:class:`~dpcore.foundations.small_groups.NoisyCountRule`),
    which groups the noisy counts kept, merged or dropped, and the pooled group's estimate;
    ``shares`` are then 0 for the groups not released as themselves. With private group sizes,
    ``counts`` are the groups' noisy counts the release drew (shaped like ``group_estimates``)
    and ``global_count`` the population's, when it is estimated on its own: DP outputs a
    release's intervals take as the group sizes (:class:`~dpcore.analyses.mean.plan.MeanPlan`).
    ``group_steps`` and ``global_steps``: for an estimator that releases intermediate intervals
    (CoinPress, :meth:`~dpcore.analyses.mean.CoinPressMean.run`), the interval after each of
    its steps behind the group estimates, shape (steps, [replicates,] k, 2), and behind the
    population estimate when it is estimated on its own, shape (steps, [replicates,] 2); DP
    outputs, from which the release's intervals follow. None otherwise. ``bounds``: the
    clipping bounds the release found privately first
    (:mod:`~dpcore.analyses.mean.found_bounds`), or None when they were typed.
    """

    strategy: Strategy
    group_estimates: np.ndarray
    global_estimate: np.ndarray
    cost: Budget
    shares: np.ndarray | None = None
    released: NoisyRecombination | None = None
    counts: np.ndarray | None = None
    global_count: np.ndarray | None = None
    group_steps: np.ndarray | None = None
    global_steps: np.ndarray | None = None
    bounds: FoundBounds | None = None


def _replicates(replicates: int | None) -> int | None:
    return None if replicates is None else positive_int("replicates", replicates)


@dataclass(frozen=True)
class _Drawn:
    """One estimator's estimates of some groups, with what else the draw released: the noisy
    counts with private sizes, the intervals of its steps for CoinPress; None where not."""

    estimates: np.ndarray
    counts: np.ndarray | None = None
    steps: np.ndarray | None = None

    def first_group(self) -> _Drawn:
        """The draw of the first (only) group: a population estimated on its own."""
        return _Drawn(
            self.estimates[..., 0],
            None if self.counts is None else self.counts[..., 0],
            None if self.steps is None else self.steps[..., 0, :],
        )


def _draw(
    estimator: MeanEstimator, strata: GroupValues, budget: Budget, reps: int | None, source
) -> _Drawn:
    """Each group's estimate; with private sizes the noisy count it drew; for an estimator with
    steps (CoinPress's ``run``) the intervals of its steps."""
    run = getattr(estimator, "run", None)
    if run is not None:
        estimates, steps = run(strata, budget, replicates=reps, noise=source)
        return _Drawn(estimates, steps=steps)
    if getattr(estimator, "n_public", True):
        return _Drawn(estimator.group_estimates(strata, budget, replicates=reps, noise=source))
    drawn = estimator.noisy_sums(strata, budget, replicates=reps, noise=source)
    return _Drawn(drawn.means(), counts=drawn.counts)


def recombine_clamped(
    estimator: MeanEstimator, groups: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    r"""The population estimate from group estimates ``groups`` (shape ``(k,)`` or
    ``(replicates, k)``) and shares ``weights`` of the same shape or ``(k,)``:

    .. math:: \hat\mu = \sum_g w_g\,\mathrm{clip}_{[L,U]}(\hat\mu_g)

    AAAI 2024, eq. 4, with every group estimate first clamped into the estimator's public range
    [L, U] (its bounds, or CoinPress' prior), where every true mean lies. The paper recombines
    the raw estimates; clamping first is our choice, post-processing of DP outputs (free): a
    release publishes the clamped group estimates, so its population row is their share-weighted
    sum, and a group of one person, whose noisy mean can land far outside the range, moves the
    population by at most its share of the range instead of swinging it to a bound. With bounds
    found privately each group is clamped into its own found range (``clamp_range``), where
    its release row is clipped too."""
    low, high = estimator.clamp_range
    return (np.clip(groups, low, high) * weights).sum(axis=-1)


def stratified_mean(
    strata: GroupValues,
    estimator: MeanEstimator,
    budget: Budget,
    shares: PublicShares | np.ndarray,
    *,
    rng: np.random.Generator | int | None = None,
    replicates: int | None = None,
    noise: NoiseKind | NoiseSource = "simulation",
) -> StrategyResult:
    r"""Stratified estimate (AAAI 2024, eq. 4; Alg. 3), recombined from the clamped groups.

    .. math:: \hat\mu_{strat} = \sum_{g=1}^{k} w_g\,\mathrm{clip}_{[L,U]}(\hat\mu_g)

    where :math:`\hat\mu_g` are the DP group estimates, each with the full ``budget``,
    :math:`[L, U]` the public range and :math:`w_g` the public shares (|G_g|/n in the paper):
    :func:`recombine_clamped`. The result keeps the group estimates as drawn (their intervals
    are formed before they are clamped, :class:`~dpcore.analyses.mean.plan.MeanPlan`). Each person is in exactly one group, so the
    release costs ``budget`` (parallel composition); the recombination is post-processing.

    With shares drawn with the release (``shares.drawn_with_release``, private group sizes
    only), :math:`w_g` are the release's own noisy counts made shares
    (:func:`~dpcore.foundations.shares.noisy_count_shares`), one set per replicate: post-processing of the
    counts the group estimates already paid for. When they carry a small-group rule, the same
    noisy counts decide which groups are merged or dropped, and the sum runs over the groups
    released (:meth:`~dpcore.foundations.small_groups.NoisyCountRule.recombine`).
    """
    source, reps = as_noise_source(noise, rng=rng), _replicates(replicates)
    if drawn_with_release(shares, estimator):
        drawn = estimator.noisy_sums(strata, budget, replicates=reps, noise=source)
        if shares.rule is not None:  # small groups decided by the same noisy counts
            released = shares.rule.recombine(drawn.sums, drawn.counts, estimator.public_range)
            return StrategyResult(
                "stratified", drawn.means(), released.whole, parallel(budget),
                shares=released.shares, released=released, counts=drawn.counts,
            )  # fmt: skip
        groups, weights = drawn.means(), noisy_count_shares(drawn.counts)
        whole = recombine_clamped(estimator, groups, weights)
        return StrategyResult("stratified", groups, whole, parallel(budget), shares=weights,
                              counts=drawn.counts)  # fmt: skip
    weights = share_values(shares, strata.k)
    groups = _draw(estimator, strata, budget, reps, source)
    # k copies of one budget compose in parallel to that budget: composing one copy per group
    # converted k budgets to exact decimals, a tenth of a second at 5,000 groups.
    return StrategyResult(
        "stratified", groups.estimates, recombine_clamped(estimator, groups.estimates, weights),
        parallel(budget), counts=groups.counts, group_steps=groups.steps,
    )  # fmt: skip


def global_only_mean(
    strata: GroupValues,
    estimator: MeanEstimator,
    budget: Budget,
    *,
    rng: np.random.Generator | int | None = None,
    replicates: int | None = None,
    noise: NoiseKind | NoiseSource = "simulation",
) -> StrategyResult:
    """Vanilla (i): one estimate of the population mean with the full budget, reused per group."""
    whole = _draw(
        estimator, strata.pooled, budget, _replicates(replicates), as_noise_source(noise, rng=rng)
    ).first_group()
    groups = np.repeat(whole.estimates[..., None], strata.k, axis=-1)
    return StrategyResult(
        "global_only", groups, whole.estimates, budget, global_count=whole.counts,
        global_steps=whole.steps,
    )  # fmt: skip


def global_and_group_means(
    strata: GroupValues,
    estimator: MeanEstimator,
    budget: Budget,
    *,
    global_fraction: float = 0.5,
    rng: np.random.Generator | int | None = None,
    replicates: int | None = None,
    noise: NoiseKind | NoiseSource = "simulation",
    shares: PublicShares | np.ndarray | None = None,
) -> StrategyResult:
    """Vanilla (ii): a global estimate with ``global_fraction`` of the budget, and group estimates
    with the rest (parallel over groups); the two releases compose sequentially to ``budget``.

    The population estimate is the global one, so ``shares`` recombine nothing; when they are
    drawn with the release, the result carries the group shares of the release's noisy counts
    (published beside the group estimates, post-processing).
    """
    fraction = open_unit_interval("global_fraction", global_fraction)
    global_budget, group_budget = scale(budget, fraction), scale(budget, 1 - fraction)
    source, reps = as_noise_source(noise, rng=rng), _replicates(replicates)
    whole = _draw(estimator, strata.pooled, global_budget, reps, source).first_group()
    cost = sequential(global_budget, group_budget)
    if drawn_with_release(shares, estimator):
        drawn = estimator.noisy_sums(strata, group_budget, replicates=reps, noise=source)
        both = {"counts": drawn.counts, "global_count": whole.counts}
        if shares.rule is not None:  # small groups decided by the same noisy counts
            released = shares.rule.recombine(drawn.sums, drawn.counts, estimator.public_range)
            return StrategyResult(
                "global_and_groups", drawn.means(), whole.estimates, cost,
                shares=released.shares, released=released, **both,
            )  # fmt: skip
        shares = noisy_count_shares(drawn.counts)
        return StrategyResult("global_and_groups", drawn.means(), whole.estimates, cost,
                              shares=shares, **both)  # fmt: skip
    groups = _draw(estimator, strata, group_budget, reps, source)
    return StrategyResult(
        "global_and_groups", groups.estimates, whole.estimates, cost, counts=groups.counts,
        global_count=whole.counts, group_steps=groups.steps, global_steps=whole.steps,
    )  # fmt: skip


def drawn_with_release(shares: object, estimator: MeanEstimator) -> bool:
    """Whether ``shares`` are to be drawn with the release from its noisy counts; refuses them
    for an estimator that draws no counts (group sizes treated as public), naming the fix."""
    if not (isinstance(shares, PublicShares) and shares.drawn_with_release):
        return False
    if getattr(estimator, "n_public", True):
        raise NeedsFixedShares(
            "The shares are to come from the release's noisy group counts, but this estimator "
            "treats group sizes as public and draws no counts. Keep group sizes private (turn "
            "off “Treat group sizes as public” on the Estimator page; the Laplace or Gaussian "
            "mean), or on the Strata page take the shares from a table of public shares, a "
            "holdout split, or the data's own counts declared public."
        )
    return True


def check_public_sizes_defined(strata: GroupValues, estimator: MeanEstimator) -> None:
    """Refuse a group with no value under an estimator that treats sizes as public: its mean
    (a sum divided by n_g = 0) is undefined. Only a grouping that keeps every group has one."""
    if not getattr(estimator, "n_public", True):
        return
    empty = [label for label, size in zip(strata.labels, strata.sizes, strict=True) if size == 0]
    if empty:
        raise ValueError(
            f"{list_labels(empty)} {'has' if len(empty) == 1 else 'have'} no rows with a value, "
            "so with group sizes treated as public there is no mean to release. Keep group "
            "sizes private (Estimator page), or merge or drop small groups (Strata page)."
        )


def run_strategy(
    strategy: Strategy,
    strata: GroupValues,
    estimator: MeanEstimator,
    budget: Budget,
    shares: PublicShares | np.ndarray,
    *,
    global_fraction: float = 0.5,
    rng: np.random.Generator | int | None = None,
    replicates: int | None = None,
    noise: NoiseKind | NoiseSource = "simulation",
) -> StrategyResult:
    """Dispatch on the strategy name (the Compare page and the Monte Carlo engine use this).

    An estimator that finds its bounds privately (``resolve``,
    :class:`~dpcore.analyses.mean.found_bounds.PrivatelyBounded`) finds them once, first, from
    the same noise source; the strategy then runs at the rest of the budget, and the result
    carries the bounds and the whole cost."""
    STRATEGIES.check("strategy", strategy)
    if getattr(estimator, "resolve", None) is not None:
        source = as_noise_source(noise, rng=rng)
        fixed, rest, found = estimator.resolve(
            strata, budget, replicates=_replicates(replicates), noise=source,
            pooled=strategy == "global_only",
        )  # fmt: skip
        result = run_strategy(
            strategy, strata, fixed, rest, shares, global_fraction=global_fraction,
            replicates=replicates, noise=source,
        )  # fmt: skip
        cost = sequential(estimator.bounds.cost(budget), result.cost)
        return dataclasses.replace(result, cost=cost, bounds=found)
    common = {"rng": rng, "replicates": replicates, "noise": noise}
    if strategy != "global_only":
        check_public_sizes_defined(strata, estimator)
        drawn_with_release(shares, estimator)
    if strategy == "stratified":
        return stratified_mean(strata, estimator, budget, shares, **common)
    if strategy == "global_only":
        return global_only_mean(strata, estimator, budget, **common)
    return global_and_group_means(
        strata, estimator, budget, global_fraction=global_fraction, shares=shares, **common
    )


def simulated_releases(
    strategy: Strategy, values: GroupValues, estimator: MeanEstimator, budget: Budget,
    global_fraction: float, replicates: int, rng: np.random.Generator | int | None,
) -> StrategyResult:  # fmt: skip
    """``replicates`` simulated releases of ``strategy`` at a person's ``budget``, each mean at
    the budget of one of the person's rows (:meth:`~dpcore.foundations.privacy_unit.PrivacyUnit.
    row_budget`) and recombined with the values' public shares, or their own sizes' without
    them: the planner's simulations, of bounds typed or found (:mod:`dpcore.analyses.mean.
    accuracy`)."""
    shares = values.shares if values.shares is not None else values.sizes / values.n
    return run_strategy(
        strategy, values, estimator, values.unit.row_budget(budget), shares,
        global_fraction=global_fraction, replicates=replicates, noise=SimulationNoise(rng=rng),
    )  # fmt: skip
