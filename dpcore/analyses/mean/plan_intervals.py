r"""The intervals of the mean's release plan (:class:`~dpcore.analyses.mean.plan.MeanPlan`):
basic (pivot) intervals around each released mean, from the noise's exact quantiles where its
law is public (:mod:`~dpcore.analyses.mean.noise_intervals`), CoinPress's step intervals plus
its clipping bias, or a parametric bootstrap of the DP noise, with sampling error when the plan
asks for it (:mod:`~dpcore.analyses.mean.sampling_error`). Post-processing of DP outputs and
public parameters only.

Pure numpy; never imports streamlit or plotly.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.special import ndtri

from dpcore.analyses.mean import found_bounds as found
from dpcore.analyses.mean.coinpress import CoinPressErrors, CoinPressMean
from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.analyses.mean.noise_intervals import has_public_noise_law, noise_error_quantiles
from dpcore.analyses.mean.sampling_error import (
    SKEWED_SAMPLE_NOTE,
    NoisySquares,
    SamplingDraws,
    plausible_variances,
    sampling_draws,
    sampling_error_draws,
)
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import StrategyResult, run_strategy
from dpcore.analyses.mean.sums import GroupSums
from dpcore.foundations.accounting import Budget, scale
from dpcore.foundations.intervals import Interval
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.shares import share_values
from dpcore.release.plan import CoverageNote

__all__ = ["INTERVAL_DRAWS", "MeanIntervals"]

MeanEstimator = LaplaceMean | GaussianMean | CoinPressMean

INTERVAL_DRAWS = 20_000
"""Draws of the public noise distribution behind each noise interval (post-processing only)."""
QUANTILE_CHUNK = 16
"""Simulated releases whose sampling-error draws are held in memory at once (16 × 20,000 × k)."""

INTERVAL_METHOD = "noise quantiles (parametric bootstrap)"
EXACT_INTERVAL_METHOD = "noise quantiles (exact)"
COINPRESS_INTERVAL_METHOD = "last step's noise quantiles plus a bound on CoinPress's clipping bias"
SAMPLING_INTERVAL_METHOD = "noise and sampling-error quantiles (parametric bootstrap)"


class MeanIntervals:
    """The intervals of :class:`~dpcore.analyses.mean.plan.MeanPlan`, which inherits them: they
    read its estimator, strategy, shares, budgets, header and values."""

    def intervals(
        self,
        result: StrategyResult,
        squares: NoisySquares | None = None,
        values: GroupValues | GroupSums | None = None,
    ) -> tuple[Interval, Interval]:
        r"""The group and population estimates with their intervals.

        Basic (pivot) intervals: estimate − upper error quantile, estimate − lower one (Davison &
        Hinkley 1997, §5.2). The error quantiles are computed from the noise's law where it is
        public (Laplace and Gaussian with public sizes and no sampling error:
        :mod:`~dpcore.analyses.mean.noise_intervals`), else taken from the error draws of
        :meth:`_noise_draws`, which with private sizes take the release's own noisy counts as
        the group sizes. With ``squares`` (the release's noisy sums of squares) the errors
        include sampling error. CoinPress's come from :meth:`_coinpress_intervals`. A release
        that found its bounds privately (:mod:`~dpcore.analyses.mean.found_bounds`) takes the
        quantiles of its noise at the bounds it found (exact ones with public sizes): its
        Laplace or Gaussian mean has no sampling error.

        ``result`` and ``squares`` may carry a leading replicate axis (group estimates
        ``(R, k)``, population ``(R,)``: simulated releases, for coverage studies); every
        replicate gets the interval its own release would publish (the draws are seeded, so
        shared; the exact quantiles do not depend on the estimates), computed together.
        """
        values = self.values if values is None else values
        if isinstance(self.estimator, CoinPressMean):
            return self._coinpress_intervals(result, values)
        groups = np.asarray(result.group_estimates, dtype=float)
        if result.bounds is not None and groups.ndim > 1:
            # Each simulated release found its own bounds, so its noise has its own scale.
            raise ValueError(
                "Intervals of releases that find their bounds are computed one release at a "
                "time: run each release's plan, not a replicate axis."
            )
        estimator = found.clipping(self.estimator, result, self.values.k)[0]  # at bounds found
        whole = np.asarray(result.global_estimate, dtype=float)
        method = INTERVAL_METHOD if squares is None else SAMPLING_INTERVAL_METHOD
        tails = [(1 - self.header.level) / 2, (1 + self.header.level) / 2]
        if squares is None and self.sizes_public and has_public_noise_law(estimator):
            # Shapes (k, 2) and (2,): the same for every replicate, broadcast below.
            group_q, global_q = noise_error_quantiles(
                estimator, self.strategy, self.values.sizes,
                share_values(self.shares, self.values.k), self.mean_budget,
                self.global_fraction, tails,
            )  # fmt: skip
            method = EXACT_INTERVAL_METHOD
        else:
            group_errors, global_errors = self._noise_draws(result, values, estimator)
            if squares is None:
                group_q = np.quantile(group_errors, tails, axis=0).T
                global_q = np.quantile(global_errors, tails)
            else:
                group_q, global_q = self._sampling_quantiles(
                    result, squares, group_errors, global_errors, tails
                )
        level = self.header.level
        scalar = (lambda v: float(v)) if whole.ndim == 0 else (lambda v: v)  # noqa: E731
        return (
            Interval(estimate=groups, low=groups - group_q[..., 1], high=groups - group_q[..., 0],
                     level=level, method=method),
            Interval(estimate=scalar(whole), low=scalar(whole - global_q[..., 1]),
                     high=scalar(whole - global_q[..., 0]), level=level, method=method),
        )  # fmt: skip

    def _coinpress_intervals(
        self, result: StrategyResult, values: GroupValues | GroupSums
    ) -> tuple[Interval, Interval]:
        r"""CoinPress's intervals, from the intervals of its steps (DP outputs): each estimate's
        last-step Gaussian noise plus bounds on its clipping bias
        (:meth:`~dpcore.analyses.mean.CoinPressMean.errors`, :class:`CoinPressErrors`).

        The stratified population estimate :math:`\sum_g w_g\,\mathrm{clip}(\hat\mu_g)` has
        the error terms of :func:`recombined_errors`; a whole-population estimate has its own
        run's. These replace
        the parametric bootstrap on constant stand-in data, which CoinPress never clips: its
        intervals saw none of the clipping bias (issue 42). A leading replicate axis is kept.
        """
        estimator, budget, level = self.estimator, self.mean_budget, self.header.level
        groups = np.asarray(result.group_estimates, dtype=float)
        whole = np.asarray(result.global_estimate, dtype=float)
        if self.strategy == "global_and_groups":
            group_budget = scale(budget, 1 - self.global_fraction)
            whole_budget = scale(budget, self.global_fraction)
        else:
            group_budget = whole_budget = budget
        if self.strategy == "global_only":
            population = estimator.errors(np.array(float(values.n)), result.global_steps, budget)
            group_errors = CoinPressErrors(  # every group row repeats the population's
                *(np.repeat(np.asarray(part)[..., None], values.k, axis=-1)
                  for part in (population.noise_sd, population.above, population.below,
                               population.beta_spent))
            )  # fmt: skip
        else:
            group_errors = estimator.errors(values.sizes, result.group_steps, group_budget)
            if self.strategy == "stratified":
                population = recombined_errors(
                    group_errors, np.asarray(self.shares.values, dtype=float), level,
                    estimator.public_range,
                )  # fmt: skip
            else:
                population = estimator.errors(
                    np.array(float(values.n)), result.global_steps, whole_budget
                )
        group_low, group_high = group_errors.interval(groups, level)
        whole_low, whole_high = population.interval(whole, level)
        scalar = (lambda v: float(v)) if whole.ndim == 0 else (lambda v: v)  # noqa: E731
        method = COINPRESS_INTERVAL_METHOD
        return (
            Interval(estimate=groups, low=group_low, high=group_high, level=level, method=method),
            Interval(estimate=scalar(whole), low=scalar(whole_low), high=scalar(whole_high),
                     level=level, method=method),
        )  # fmt: skip

    def _noise_draws(
        self, result: StrategyResult, values: GroupValues | GroupSums, estimator: MeanEstimator
    ) -> tuple[np.ndarray, np.ndarray]:
        r"""Draws of the DP noise's error in the group and population estimates, shapes
        ``(INTERVAL_DRAWS, k)`` and ``(INTERVAL_DRAWS,)``, by parametric bootstrap.

        Reruns the same strategy on stand-in data in which every member of group g has the
        value :math:`\tilde\mu_g` (the DP estimate clipped to the public range; the first
        replicate's when ``result`` has a replicate axis), with the group sizes of
        :meth:`_stand_in_sizes`, and records the error of each draw. With public sizes, Laplace
        and Gaussian errors do not depend on the values at all, so the draws are exact up to
        Monte Carlo error and serve every replicate alike (their noise-only intervals take the
        exact quantiles instead, :mod:`~dpcore.analyses.mean.noise_intervals`; the draws pair
        with sampling error); with private sizes (the release's noisy counts stand in for the
        sizes) they are a plug-in approximation. ``estimator`` is the one the release ran (at
        the bounds it found, if it found them). Only DP outputs and public parameters enter,
        so this is post-processing, with a fixed seed: the same estimates always give the same
        intervals.

        A stratified population recombined with fixed shares takes the error of the groups'
        unclamped recombination, :math:`\sum_g w_g e_g`, as the exact quantiles do: clamping
        each group into the range that holds its mean moves it no closer to a bound than its
        mean (issue 37), and draws free of the estimates serve every replicate (with the
        clamped draws, seeded by the first replicate, coverage of small groups at ε = 0.1 fell
        to 91%, benchmarks/bench_coverage.py).
        """
        low, high = estimator.clamp_range
        first = np.reshape(np.asarray(result.group_estimates, dtype=float), (-1, values.k))[0]
        centres = np.clip(first, low, high)
        sizes = self._stand_in_sizes(result, values)
        stand_in = GroupSums.constant(values.labels, sizes, centres)
        draws = run_strategy(
            self.strategy, stand_in, estimator, self.mean_budget, values.shares,
            global_fraction=self.global_fraction, replicates=INTERVAL_DRAWS,
            noise=SimulationNoise(rng=0),
        )  # fmt: skip
        group_errors = draws.group_estimates - centres
        if self.strategy == "stratified" and not values.shares.drawn_with_release:
            return group_errors, group_errors @ np.asarray(values.shares.values, dtype=float)
        return group_errors, draws.global_estimate - float(centres @ (sizes / sizes.sum()))

    def _stand_in_sizes(
        self, result: StrategyResult, values: GroupValues | GroupSums
    ) -> np.ndarray:
        """The group sizes of the bootstrap's stand-in data: the public sizes; with private
        sizes the release's own noisy counts (DP outputs, at least 1 each, so that an interval
        never reads an exact size; the first replicate's), and for a population estimated alone
        its noisy count spread evenly over the groups (only its total enters that estimate)."""
        if self.sizes_public:
            return np.asarray(values.sizes)
        if result.counts is not None:
            counts = np.reshape(np.asarray(result.counts, dtype=float), (-1, values.k))[0]
            return np.maximum(np.rint(counts), 1).astype(np.int64)
        total = float(np.reshape(np.asarray(result.global_count, dtype=float), -1)[0])
        return np.full(values.k, max(round(total / values.k), 1), dtype=np.int64)

    def _sampling_quantiles(
        self,
        result: StrategyResult,
        squares: NoisySquares,
        group_errors: np.ndarray,
        global_errors: np.ndarray,
        tails: list[float],
    ) -> tuple[np.ndarray, np.ndarray]:
        r"""The ``tails`` quantiles of the noise plus sampling error of the group and
        population estimates, shapes ``(..., k, 2)`` and ``(..., 2)``.

        Each of the noise draws is paired with a Student-t draw scaled by its own plausible
        variance given ``squares``, the DP means and that noise draw
        (:func:`~dpcore.analyses.mean.sampling_error.plausible_variances`; Miao & Li 2022,
        §2.4.2: the noise's variance adds to the sampling one, here the variance's own noise
        included). The draws are seeded (:func:`~dpcore.analyses.mean.sampling_error.sampling_draws`)
        and shared by replicates, which are processed in chunks to bound memory.
        """
        draws = self._sampling_draws
        means = np.asarray(result.group_estimates, dtype=float)
        whole = np.asarray(result.global_estimate, dtype=float)
        group_squares = None if squares.groups is None else np.asarray(squares.groups, float)
        pooled_squares = None if squares.pooled is None else np.asarray(squares.pooled, float)
        flat_means = means.reshape(-1, self.values.k)
        flat_whole = whole.reshape(-1)
        group_q = np.empty((flat_means.shape[0], self.values.k, 2))
        global_q = np.empty((flat_whole.shape[0], 2))
        sizes, n = self.values.sizes, np.array([self.values.n])
        for start in range(0, flat_means.shape[0], QUANTILE_CHUNK):
            part = slice(start, start + QUANTILE_CHUNK)
            group_variances = pooled_variances = None
            if group_squares is not None:
                group_variances = plausible_variances(
                    self.estimator, group_squares.reshape(-1, self.values.k)[part],
                    flat_means[part], group_errors, draws.group_noise, sizes,
                )  # fmt: skip
            if pooled_squares is not None:
                pooled_variances = plausible_variances(
                    self.estimator, pooled_squares.reshape(-1, 1)[part],
                    flat_whole[part, None], global_errors[:, None], draws.pooled_noise, n,
                )  # fmt: skip
            group_sampling, global_sampling = sampling_error_draws(
                group_variances, pooled_variances, self.shares.values, draws
            )
            group_q[part] = np.moveaxis(
                np.quantile(group_errors + group_sampling, tails, axis=-2), 0, -1
            )
            global_q[part] = np.quantile(global_errors + global_sampling, tails, axis=-1).T
        return group_q.reshape(*means.shape, 2), global_q.reshape(*whole.shape, 2)

    @functools.cached_property
    def _sampling_draws(self) -> SamplingDraws:
        """The seeded draws behind the sampling-error intervals
        (:func:`~dpcore.analyses.mean.sampling_error.sampling_draws`): public inputs only, the
        same for every release of this plan, so drawn once per plan (a preview runs it 20
        times)."""
        groups_budget, pooled_budget = self._variance_budgets()
        return sampling_draws(
            self.estimator, self.values.sizes, groups_budget, pooled_budget, INTERVAL_DRAWS,
            np.random.default_rng(1),
        )  # fmt: skip

    def _variance_budgets(self) -> tuple[Budget | None, Budget | None]:
        """The budgets the groups' and the pooled sums of squares were released at
        (:func:`~dpcore.analyses.mean.sampling_error.release_squares`); None where not
        released."""
        budget = self.variance_budget
        if self.strategy == "stratified":
            return budget, None
        if self.strategy == "global_only":
            return None, budget
        return scale(budget, 1 - self.global_fraction), scale(budget, self.global_fraction)

    @property
    def interval_description(self) -> str:
        """What the intervals cover, for the release's metadata."""
        covered = "clipped sample mean" if self.bounds is None else found.FOUND_ESTIMAND
        if not self.sizes_public:
            return (
                f"{self.header.level:.0%} noise intervals by parametric bootstrap of the DP noise "
                f"({INTERVAL_DRAWS:,} draws), with the release's own noisy counts as the group "
                f"sizes (no exact size enters them); they cover the {covered}, not sampling error"
            )
        if self.sampling_error:
            return (
                f"{self.header.level:.0%} intervals for the population mean of the clipped "
                f"values: the DP noise ({INTERVAL_DRAWS:,} parametric-bootstrap draws) plus "
                "sampling error, from DP estimates of the variances that took "
                f"{self.variance_fraction:.0%} of the budget"
            )
        if isinstance(self.estimator, CoinPressMean):
            low, high = self.estimator.prior
            target = (
                f"the mean of these rows' values clipped to [{low:g}, {high:g}]"
                if self.estimator.clip_to_prior
                else "the mean of these rows"
            )
            return (
                f"{self.header.level:.0%} noise intervals for {target}: the last step's "
                "Gaussian noise plus a worst-case bound on the bias of CoinPress's clipping, "
                f"which holds when σ = {self.estimator.sigma:g} bounds the spread of every "
                "group's values; not sampling error"
            )
        if has_public_noise_law(self.estimator):
            return (
                f"{self.header.level:.0%} noise intervals from the exact quantiles of the "
                f"{self.estimator.noise_law.capitalize()} noise; they cover the {covered}, not "
                "sampling error"
            )
        return (
            f"{self.header.level:.0%} noise intervals by parametric bootstrap of the DP noise "
            f"({INTERVAL_DRAWS:,} draws); they cover the clipped sample mean, not sampling error"
        )

    @property
    def coverage_note(self) -> CoverageNote | None:
        """Where the intervals cover less than the level (:class:`CoverageNote`): intervals with
        sampling error over few skewed values
        (:data:`~dpcore.analyses.mean.sampling_error.SKEWED_SAMPLE_NOTE`); None otherwise. It
        depends on public choices only, never on the group sizes."""
        if not (self.sampling_error and self.sizes_public):
            return None
        return CoverageNote(level=self.header.level, **SKEWED_SAMPLE_NOTE)


def recombined_errors(
    groups: CoinPressErrors, weights: np.ndarray, level: float, public_range: tuple[float, float]
) -> CoinPressErrors:
    r"""The error terms of a stratified population estimate :math:`\sum_g w_g\,
    \mathrm{clip}_{[L,U]}(\hat\mu_g)` from its groups' (clamp, then recombine: issue 37).

    A group whose own interval would be wider than the public range, :math:`z s_g +
    \max(B^+_g, B^-_g) \ge U - L`, contributes only the bound every clamped estimate keeps,
    :math:`|\mathrm{clip}(\hat\mu_g) - \mu_g| \le U - L` (both lie in [L, U]), to both bias
    bounds, :math:`w_g(U - L)` each, and nothing to the noise: it holds always, so it spends no
    failure probability. The others add as independent Gaussians, noise sd
    :math:`\sqrt{\sum_g w_g^2 s_g^2}`, with bias bounds :math:`\sum_g w_g B_g`. A group of one
    person then widens the population's interval by at most twice its share of the range (issue
    37's survey, groups of 400, 300 and 1: about 6 wide rather than 35). Shapes ``([R,] k)``.
    """
    low, high = public_range
    width = high - low
    z = ndtri((1 + level) / 2)
    wide = z * groups.noise_sd + np.maximum(groups.above, groups.below) >= width
    bound = np.where(wide, width, 0.0)
    return CoinPressErrors(
        noise_sd=np.sqrt(np.where(wide, 0.0, groups.noise_sd) ** 2 @ weights**2),
        above=np.where(wide, bound, groups.above) @ weights,
        below=np.where(wide, bound, groups.below) @ weights,
        beta_spent=np.max(np.where(wide, 0.0, groups.beta_spent), axis=-1),
    )
