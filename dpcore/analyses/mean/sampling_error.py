r"""Sampling error of released means, from DP estimates of the group variances that the release
pays for (issue 13 item 6: intervals that cover the population's mean, not only the noise).

A mean release's noise intervals (:meth:`~dpcore.analyses.mean.MeanPlan.intervals`) say how far
the DP estimate may fall from the clipped mean of *these rows*. A reader usually wants the mean of
the population the rows were drawn from, which the rows know only up to sampling error. Following
Miao & Li (JDS 2022), everything the interval needs is written as noisy sums:

- a noisy sum of squared deviations per released unit (each group, or the whole population),
  :math:`\tilde Q_g = Q_g + \text{noise}` with :math:`Q_g = \sum_{x\in G_g}(\mathrm{clip}(x)-c_g)^2`
  and :math:`c_g` the middle of the clipping range; each term lies in :math:`[0, h_g^2]`,
  :math:`h_g` half the range, so the sensitivity is :math:`h_g^2` (their §2.3.1: a sum's
  sensitivity is its summand's bound);
- the variance of the clipped values, their eq. (2)–(3) with unit weights, rebuilt from
  :math:`\tilde Q_g` and the released mean :math:`\tilde\mu_g`:

  .. math:: \tilde s_g^2 = \frac{n_g}{n_g-1}\Big(\frac{\tilde Q_g}{n_g} - (\tilde\mu_g-c_g)^2
            + v_g\Big), \text{ clipped to } [0, h_g^2],

  where :math:`v_g` is the variance of the mean's own noise: :math:`(\tilde\mu_g-c_g)^2` exceeds
  the square of the clipped mean by :math:`v_g` on average (their §2.4.3 adds a noise variance
  in the same way). Groups with one row get :math:`h_g^2`, the largest variance possible;
- the sampling variance of a group mean, :math:`\tilde s_g^2/n_g`, and of the stratified
  population estimate :math:`\sum_g w_g^2\tilde s_g^2/n_g` (stratified sampling with the public
  shares taken as the population's; Cochran, *Sampling Techniques*, 3rd ed. 1977, eq. 5.6
  without the finite-population correction);
- the interval: the noise draws plus independent sampling errors (Student's t with n − 1
  degrees of freedom times the standard error, the textbook interval of a mean), as their Monte
  Carlo method (§2.4.2) adds the noise variance to the sampling one;
- the variance's own noise (issue 42): :math:`\tilde s_g^2` is a DP estimate, and taking it
  for the truth made intervals too narrow where its noise is a sizeable part of it. Each draw
  of the sampling error uses its own plausible variance instead
  (:func:`plausible_variances`): the noisy sum less a fresh draw of its noise,
  :math:`Q^* = \tilde Q_g - E^*`, and the released mean less the mean's noise draw,
  :math:`\mu^* = \tilde\mu_g - e^*`, give
  :math:`s^{*2} = \frac{n_g}{n_g-1}(Q^*/n_g - (\mu^* - c_g)^2)` clipped to :math:`[0, h_g^2]`
  (a parametric bootstrap of the variance, in the spirit of their §2.4.2, which re-noises the
  released sums; their §2.4.3 adds the noise variance to the sums' variance instead, the same
  to first order). The mean's noise and the variance's noise are independent (separate
  mechanisms), so the draws pair them freely.

The variance release mirrors the strategy: the groups' :math:`\tilde Q_g` in parallel for a
stratified release, one pooled :math:`\tilde Q` for a whole-population one, and both, split by
``global_fraction``, when both are released. Everything after the noisy sums is
post-processing. What is covered is the population mean of the *clipped* values: bounds that cut
real values off bias it, exactly as they bias the estimate.

Pure numpy; never imports streamlit or plotly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpcore.analyses.mean.estimators import ClippedMean, GaussianMean, LaplaceMean
from dpcore.analyses.mean.strategies import Strategy
from dpcore.foundations.accounting import ZCDP, Budget, PureDP, scale
from dpcore.foundations.mechanisms import (
    NoiseSource,
    SimulationNoise,
    gaussian_sigma,
    laplace_scale,
    zcdp_gaussian_sigma,
)

__all__ = [
    "SKEWED_SAMPLE_NOTE",
    "NoisySquares",
    "SamplingDraws",
    "clipped_variances",
    "plausible_variances",
    "release_squares",
    "sampling_draws",
    "sampling_error_draws",
]


SKEWED_SAMPLE_NOTE = {
    "where": "means over fewer than 1,000 rows of skewed values",
    "measured": "92–93%",
    "lowest": 0.92,
    "why": (
        "A t interval takes a mean's sampling error to be nearly normal; the mean of a few "
        "hundred skewed values (earnings, amounts with a long right tail) is skewed too, so "
        "the interval misses on one side more often. This is sampling error, not the noise: "
        "the release's sums say nothing about the skew, and a non-private t interval misses "
        "as often. Larger groups, or groups of less skewed values, cover 95%."
    ),
}
"""The corner where intervals with sampling error cover less than they claim (issue 42;
``benchmarks/bench_coverage.py``: 92.1–93.3% for nominal 95% at 30–300 rows of lognormal,
power-law and zero-inflated earnings at ε = 10, 94–96% from 1,000 rows on; at ε ≤ 1 the
noise dominates small groups and they cover 94–97%)."""


@dataclass(frozen=True)
class NoisySquares:
    """The DP sums of squared deviations a release paid for: one per group (``groups``, shape
    ``(k,)``) and/or one for the whole population (``pooled``); None where not released. With
    a leading replicate axis for simulated releases: ``(R, k)`` and ``(R,)``."""

    groups: np.ndarray | None
    pooled: float | np.ndarray | None


def _noisy(
    estimator: ClippedMean, totals: np.ndarray, sensitivity: np.ndarray, budget: Budget,
    noise: NoiseSource,
) -> np.ndarray:  # fmt: skip
    """``totals`` plus the estimator's own mechanism at ``budget`` for ``sensitivity``: Laplace
    under ε-DP, Gaussian under ρ-zCDP (σ = Δ/√(2ρ)) or (ε, δ) (Balle & Wang 2018)."""
    if isinstance(estimator, LaplaceMean):
        if not isinstance(budget, PureDP):
            raise TypeError(f"the Laplace mean runs under ε-DP, got {budget!r}")
        return noise.add_laplace(totals, laplace_scale(1.0, budget.epsilon) * sensitivity)
    if not isinstance(estimator, GaussianMean):
        raise TypeError(f"no variance release for {type(estimator).__name__}")
    if isinstance(budget, ZCDP):
        unit = zcdp_gaussian_sigma(1.0, budget.rho)
    else:
        unit = gaussian_sigma(1.0, budget.epsilon, budget.delta, "analytic")
    return noise.add_gaussian(totals, unit * sensitivity)


def _noisy_squares_of(stats, estimator: ClippedMean, budget: Budget, noise: NoiseSource):
    low, high = estimator.interval(np.asarray(stats.sizes, dtype=float))
    squares = stats.centred_squares(low, high)
    return _noisy(estimator, squares, ((high - low) / 2) ** 2, budget, noise)


def release_squares(
    stats,
    estimator: ClippedMean,
    budget: Budget,
    strategy: Strategy,
    global_fraction: float,
    noise: NoiseSource,
) -> NoisySquares:
    """The noisy sums of squared deviations the strategy's intervals need, at ``budget`` in all
    (disjoint groups in parallel; a pooled and group release split it by ``global_fraction``).

    ``stats`` is a :class:`~dpcore.analyses.mean.statistics.GroupValues` (it provides
    ``centred_squares`` and ``pooled``).
    """
    if strategy == "stratified":
        return NoisySquares(_noisy_squares_of(stats, estimator, budget, noise), None)
    if strategy == "global_only":
        return NoisySquares(None, _one(_noisy_squares_of(stats.pooled, estimator, budget, noise)))
    pooled = _noisy_squares_of(stats.pooled, estimator, scale(budget, global_fraction), noise)
    groups = _noisy_squares_of(stats, estimator, scale(budget, 1 - global_fraction), noise)
    return NoisySquares(groups, _one(pooled))


def _one(pooled: np.ndarray) -> float | np.ndarray:
    """The pooled unit's sum: a float, or one per replicate for replicated statistics."""
    pooled = np.asarray(pooled)[..., 0]
    return float(pooled) if pooled.ndim == 0 else pooled


def clipped_variances(
    noisy_squares: np.ndarray,
    means: np.ndarray,
    noise_variances: np.ndarray,
    sizes: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
) -> np.ndarray:
    r"""The variance of each unit's clipped values, :math:`\tilde s_g^2` of the module docstring
    (Miao & Li 2022, eq. 2–3 with unit weights, plus the mean's noise variance ``v_g``),
    clipped to :math:`[0, h_g^2]`; :math:`h_g^2` where a unit has fewer than two rows."""
    sizes = np.asarray(sizes, dtype=float)
    half = (np.asarray(high, dtype=float) - np.asarray(low, dtype=float)) / 2
    centre = (np.asarray(high, dtype=float) + np.asarray(low, dtype=float)) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        second_moment = noisy_squares / sizes - (means - centre) ** 2 + noise_variances
        variance = sizes / (sizes - 1) * second_moment
    return np.where(sizes >= 2, np.clip(variance, 0.0, half**2), half**2)


@dataclass(frozen=True)
class SamplingDraws:
    """The random draws behind sampling-error intervals, drawn once from a fixed seed so that
    the same released numbers always give the same interval: fresh draws of the noise of the
    groups' and of the pooled sums of squares (``(draws, k)``, ``(draws, 1)``; None where not
    released) and Student-t draws for the groups (``(draws, k)``) and the pooled mean
    (``(draws,)``)."""

    group_noise: np.ndarray | None
    pooled_noise: np.ndarray | None
    group_t: np.ndarray
    pooled_t: np.ndarray


def sampling_draws(
    estimator: ClippedMean,
    sizes: np.ndarray,
    groups_budget: Budget | None,
    pooled_budget: Budget | None,
    draws: int,
    rng: np.random.Generator,
) -> SamplingDraws:
    """:class:`SamplingDraws` for groups of ``sizes``: the squares' noise at the budgets they
    were released at (None: not released), then the t draws with n − 1 degrees of freedom."""
    sizes = np.asarray(sizes, dtype=float)
    source = SimulationNoise(rng=rng)

    def fresh(units: np.ndarray, budget: Budget | None) -> np.ndarray | None:
        if budget is None:
            return None
        low, high = estimator.interval(units)
        shape = (draws, units.size)
        return _noisy(estimator, np.zeros(shape), ((high - low) / 2) ** 2, budget, source)

    group_noise = fresh(sizes, groups_budget)
    pooled_noise = fresh(np.array([sizes.sum()]), pooled_budget)
    group_t = rng.standard_t(np.maximum(sizes - 1, 1), (draws, sizes.size))
    pooled_t = rng.standard_t(max(sizes.sum() - 1, 1), draws)
    return SamplingDraws(group_noise, pooled_noise, group_t, pooled_t)


def plausible_variances(
    estimator: ClippedMean,
    noisy_squares: np.ndarray,
    means: np.ndarray,
    mean_errors: np.ndarray,
    fresh_noise: np.ndarray,
    sizes: np.ndarray,
) -> np.ndarray:
    r"""Draws of each unit's mean's sampling variance :math:`s^{*2}/n` that the release's noisy
    sums allow (module docstring), shape ``(..., draws, units)``: the noisy sums of squares
    (``(..., units)``, a leading axis for several releases) less fresh draws of their own
    noise (``fresh_noise``, :class:`SamplingDraws`), the released means less the draws
    ``mean_errors`` (``(draws, units)``) of their noise, through :func:`clipped_variances`
    (with no noise variance to add: each draw's mean is a plausible true mean).
    Post-processing of DP outputs with public parameters."""
    sizes = np.asarray(sizes, dtype=float)
    low, high = estimator.interval(sizes)
    squares = np.asarray(noisy_squares, dtype=float)[..., None, :] - fresh_noise
    plausible_means = np.asarray(means, dtype=float)[..., None, :] - mean_errors
    return clipped_variances(squares, plausible_means, 0.0, sizes, low, high) / sizes


def sampling_error_draws(
    group_variances: np.ndarray | None,
    pooled_variance: np.ndarray | None,
    weights: np.ndarray,
    draws: SamplingDraws,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Draws of the sampling errors of the group means, ``(..., draws, k)``, and of the
    population estimate, ``(..., draws)``, from the variances of the group means
    (:math:`\tilde s_g^2/n_g`, one per draw: :func:`plausible_variances`, shape
    ``(..., draws, k)``) and of the pooled mean (:math:`\tilde s^2/n`, ``(..., draws, 1)``).

    Each mean's error is Student's t with n − 1 degrees of freedom times its standard error: the
    textbook small-sample interval of a mean, which the normal approximation undercovers for
    groups of a few dozen (94% instead of 95% at n = 30). Without a pooled variance (a
    stratified release) the population's error is the share-weighted sum of the groups' draws,
    whose variance is Cochran's (1977) eq. 5.6 :math:`\sum_g w_g^2\tilde s_g^2/n_g`; with one,
    the pooled mean's own draws. Missing group variances (a whole-population release) give zero
    group errors.
    """
    if group_variances is None:
        groups = np.zeros(np.shape(draws.group_t))
    else:
        groups = draws.group_t * np.sqrt(group_variances)
    if pooled_variance is None:
        return groups, groups @ weights
    return groups, draws.pooled_t * np.sqrt(np.asarray(pooled_variance)[..., 0])
