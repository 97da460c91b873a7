r"""Univariate CoinPress: iterative private confidence-interval shrinking (ρ-zCDP).

Biswas, Dong, Kamath & Ullman (2020), restated in Rosenblatt, Stoyanovich & Musco (AAAI 2024),
appendix B: Alg. 1 (UVM, one step) and Alg. 2 (UVMRec, t steps). Vectorized over Monte Carlo
replicates and groups: every step is one call to ``stats.clipped_sums`` with (replicates, k) bounds
(the first step's, the prior's, are the same for every replicate: (k,)), which costs O(log n_g) per
group and replicate after the one sort done by :class:`~dpcore.analyses.mean.statistics.GroupValues`.

What its intervals cover (issue 42). CoinPress clips every step to a window that moves with the
data, so its estimate is the clipped mean *of that window* plus Gaussian noise: the clipping is
part of its error. :meth:`CoinPressMean.errors` gives, for a release, the sd of the last step's
noise and bounds on how far that window's clipped mean may lie from the target (the mean of
the values clipped to the prior when ``clip_to_prior``, else the mean of the values), from the
public σ alone (:func:`clipping_bias_bound`); a release's interval adds them to the noise's
quantiles (:meth:`CoinPressErrors.interval`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import ndtri

from dpcore.analyses.mean.estimators import GroupStats, require_budget
from dpcore.foundations.accounting import ZCDP, Budget
from dpcore.foundations.labels import plain_number
from dpcore.foundations.mechanisms import NoiseSource
from dpcore.foundations.validation import positive_int, positive_number, validate_bounds

__all__ = ["CoinPressErrors", "CoinPressMean", "clipping_bias_bound", "default_rho_split"]


def default_rho_split(steps: int) -> tuple[float, ...]:
    """The last step gets 3/4 of ρ and the earlier steps share 1/4 equally ([1/4, 3/4] for t = 2)."""
    steps = positive_int("steps", steps)
    if steps == 1:
        return (1.0,)
    return (*([0.25 / (steps - 1)] * (steps - 1)), 0.75)


def clipping_bias_bound(
    distance: np.ndarray, room: np.ndarray, sigma: float | np.ndarray
) -> np.ndarray:
    r"""How far clipping one tail at a point c can move a mean: a bound on
    :math:`E[(Y - c)_+]` for any Y with standard deviation at most σ whose mean lies
    ``distance`` :math:`t = c - EY` below c, and which lies at most ``room`` :math:`m` above c
    (:math:`Y \le c + m`; ``inf`` when Y is unbounded):

    .. math:: E[(Y - c)_+] \le \min\Big(\tfrac12\big(\sqrt{\sigma^2 + t^2} - t\big),\;
              m\,\frac{\sigma^2}{\sigma^2 + t_+^2}\Big).

    The first term is the sharp bound given the mean and variance alone (Scarf 1958, the
    min-max inventory problem; Lo 1987, *J. Financial Economics* 19(2), for option payoffs;
    attained by a two-point law, tested), valid for every real t. The second is
    :math:`m\,P(Y > c)` with Cantelli's inequality :math:`P(Y - EY \ge t) \le
    \sigma^2/(\sigma^2 + t^2)` for t > 0 (and 1 otherwise). With Y the values of a group (their
    empirical law) this bounds the clipping bias of a clipped mean on that side; it is 0 when
    nothing lies beyond c (m = 0). Both terms fall as t grows, so a lower bound on t gives an
    upper bound on the bias. Vectorised over broadcast arguments.
    """
    t = np.asarray(distance, dtype=float)
    room = np.asarray(room, dtype=float)
    variance = np.square(sigma)
    # √(σ² + t²) − t = σ²/(√(σ² + t²) + t), which keeps its digits for t ≫ σ.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mean_variance = (
            np.where(t > 0, variance / (np.hypot(sigma, t) + t), np.hypot(sigma, t) - t) / 2
        )
        positive = np.maximum(t, 0.0)
        tail = np.where(room > 0, room * variance / (variance + positive**2), 0.0)
    return np.minimum(mean_variance, np.where(np.isinf(room), np.inf, tail))


@dataclass(frozen=True)
class CoinPressErrors:
    r"""What a CoinPress release's error is made of, per estimate (arrays shaped like it).

    ``noise_sd``: the sd of the last step's Gaussian noise. ``above``/``below``: bounds on how
    far the last window's clipped mean may lie above / below the target (clipping of the lower
    tail raises it, of the upper tail lowers it; :func:`clipping_bias_bound`). ``beta_spent``:
    the failure probability of the earlier steps' intervals those bounds rely on (0 where both
    bounds are 0: then nothing was clipped that the target keeps).
    """

    noise_sd: np.ndarray
    above: np.ndarray
    below: np.ndarray
    beta_spent: np.ndarray

    def interval(self, estimate: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
        r"""The interval for the target: the estimate is the target plus
        :math:`N(0, s^2)` plus a bias in :math:`[-\text{below}, \text{above}]`, so

        .. math:: [\hat\mu - z s - \text{above},\; \hat\mu + z s + \text{below}],
                  \qquad z = \Phi^{-1}\big((1 + \ell')/2\big),

        with :math:`\ell' = \ell + \beta_{spent}` where a bias bound is used: the bias bounds
        hold when the earlier steps' intervals held, which fail with probability at most
        :math:`\beta_{spent}` (union bound), so the interval keeps its level ℓ. A worst-case
        bound (the bias of real data is far smaller), chosen over simulating CoinPress on
        stand-in data, whose tails the release does not know.
        """
        spent = np.where(self.above + self.below > 0, self.beta_spent, 0.0)
        z = ndtri((1 + np.minimum(level + spent, 1 - 1e-12)) / 2)
        half = z * self.noise_sd
        return estimate - half - self.above, estimate + half + self.below


@dataclass(frozen=True)
class CoinPressMean:
    r"""Univariate CoinPress mean (UVMRec) with prior interval [ℓ, r] and known scale σ.

    Step i (Alg. 1, UVM) with budget :math:`\rho_i` and failure probability :math:`\beta_i`:
    clip to :math:`[\ell - w, r + w]` with :math:`w = \sigma\sqrt{2\log(2n/\beta_i)}`, release
    :math:`Z = \bar x_{clip} + N(0, s^2)` with :math:`\Delta = (r - \ell + 2w)/n` and
    :math:`s = \Delta/\sqrt{2\rho_i}`, and shrink the interval to
    :math:`Z \pm \sqrt{2(\sigma^2/n + s^2)\log(2/\beta_i)}`. Alg. 2 runs t steps with
    :math:`\beta_i = \beta/(4(t-1))` for the first t − 1 and β/4 for the last, and returns the
    midpoint of the final interval. The steps compose to :math:`\sum_i \rho_i = \rho`.

    Parameters
    ----------
    prior : (ℓ, r)
        An interval believed to contain every group's mean. Public: never derived from the data.
    sigma : float
        A public upper bound on the standard deviation of each group's values.
    steps : int
        t, the number of shrinking steps.
    rho_split : tuple of float, optional
        Fractions of ρ per step, summing to 1. Default :func:`default_rho_split`.
    beta : float
        Total failure probability of the intervals, 0 < β < 1. We default to 0.01; the paper
        leaves β to the user (Biswas et al. use small constants of this order).
    clip_to_prior : bool
        False (the paper): the prior holds the means only, and values may lie anywhere.
        True: the prior is the public range of the values themselves (as the app's bounds
        are), and every window is cut to it: step i clips to
        :math:`[\ell - w, r + w] \cap [\ell_0, r_0]` and its noise follows the cut window's
        width (the sensitivity of a mean clipped to it; the cut depends only on the previous
        DP output, so the accounting is unchanged). A window the previous step moved wholly
        outside the prior falls back to the whole prior. The estimate then targets the mean
        of the values clipped to the prior, as the Laplace and Gaussian means do: without the
        cut, values beyond the range that the first wide windows keep moved it off that
        target by several noise widths (issue 42), and the first step's noise, for a window
        2w wider than the range, was needlessly large. Our choice; the paper's data are
        Gaussian with no public range.
    """

    prior: tuple[float, float]
    sigma: float
    steps: int = 2
    rho_split: tuple[float, ...] | None = None
    beta: float = 0.01
    clip_to_prior: bool = False
    name: str = field(default="CoinPress mean", init=False)

    def describe(self) -> str:
        """The public inputs of the estimate, in words."""
        low, high = self.prior
        start = "the public range of the values" if self.clip_to_prior else "the public range"
        return (
            f"{self.steps} narrowing steps from {start} [{low:g}, {high:g}], for values "
            f"whose spread is at most σ = {plain_number(self.sigma, 6)}; group sizes treated as public"
        )

    def __post_init__(self) -> None:
        object.__setattr__(self, "prior", validate_bounds(self.prior))
        object.__setattr__(self, "sigma", positive_number("sigma", self.sigma))
        object.__setattr__(self, "steps", positive_int("steps", self.steps))
        if not 0 < self.beta < 1:
            raise ValueError(f"`beta` must be a number with 0 < beta < 1, got {self.beta!r}")
        if not isinstance(self.clip_to_prior, bool):
            raise TypeError(f"`clip_to_prior` must be True or False, got {self.clip_to_prior!r}")
        split = default_rho_split(self.steps) if self.rho_split is None else tuple(self.rho_split)
        if len(split) != self.steps:
            raise ValueError(
                f"`rho_split` must have one entry per step ({self.steps}), got {split!r}"
            )
        if not all(math.isfinite(f) and f > 0 for f in split) or abs(sum(split) - 1) > 1e-9:
            raise ValueError(f"`rho_split` must be positive fractions summing to 1, got {split!r}")
        object.__setattr__(self, "rho_split", split)

    @property
    def public_range(self) -> tuple[float, float]:
        """The public range the mean is known to lie in: the prior interval [ℓ, r]."""
        return self.prior

    @property
    def clamp_range(self) -> tuple[float, float]:
        """Where each group's mean lies, to clamp its estimate into: the prior."""
        return self.prior

    def step_betas(self) -> np.ndarray:
        """β_i of each step: β/(4(t − 1)) for the first t − 1 steps, β/4 for the last."""
        early = [self.beta / (4 * (self.steps - 1))] * (self.steps - 1) if self.steps > 1 else []
        return np.array([*early, self.beta / 4])

    def _margins(self, sizes: np.ndarray | float) -> np.ndarray:
        """w of every step, shape (..., steps): :math:`\\sigma\\sqrt{2\\log(2n/\\beta_i)}`."""
        return self.sigma * np.sqrt(2 * np.log(np.divide.outer(2 * sizes, self.step_betas())))

    def _window(self, low, high, width) -> tuple[np.ndarray, np.ndarray]:
        """Step's clipping window around the previous interval [low, high]: widened by w,
        then (``clip_to_prior``) cut to the prior, or the whole prior where the cut is empty."""
        start, stop = low - width, high + width
        if not self.clip_to_prior:
            return start, stop
        lowest, highest = self.prior
        start, stop = np.maximum(start, lowest), np.minimum(stop, highest)
        empty = start >= stop
        return np.where(empty, lowest, start)[()], np.where(empty, highest, stop)[()]

    def run(
        self, stats: GroupStats, budget: Budget, *, replicates: int | None, noise: NoiseSource
    ) -> tuple[np.ndarray, np.ndarray]:
        """Run UVMRec on every group at once.

        Returns
        -------
        estimate : ndarray, shape (replicates, k) or (k,)
            The midpoint of the final interval.
        intervals : ndarray, shape (steps, replicates, k, 2) or (steps, k, 2)
            The interval [ℓ_i, r_i] after each step.

        Statistics without a group axis (a raw array's
        :class:`~dpcore.analyses.mean.array_api.ArrayValues`, whose sizes are 0-d) give the same
        without the k axis: a scalar estimate for a single release.
        """
        rho = require_budget(budget, (ZCDP,), self.name).rho
        # [()] turns the 0-d sizes of an array without groups into a scalar, whose arithmetic
        # costs a fraction of a 0-d array's; (k,) sizes stay an array.
        sizes = np.asarray(stats.sizes, dtype=float)[()]
        shape = np.shape(sizes) if replicates is None else (replicates, *np.shape(sizes))
        # What does not depend on the data, for every step at once: a single release on a small
        # array spends most of its time on such small numpy operations.
        betas = self.step_betas()
        widths = self._margins(sizes)
        noise_roots = np.sqrt(2 * rho * np.array(self.rho_split))
        interval_logs = np.log(2 / betas)
        mean_variance = self.sigma**2 / sizes
        # Every replicate starts from the prior: the first step's clipped sums are computed once
        # per group and broadcast, and replicates part only with the first noise draw.
        low, high = self.prior
        intervals = np.empty((self.steps, *shape, 2))
        for i in range(self.steps):
            start, stop = self._window(low, high, widths[..., i])
            sums = stats.clipped_sums(start, stop)
            noise_sd = (stop - start) / sizes / noise_roots[i]
            means = sums / sizes if replicates is None else np.broadcast_to(sums / sizes, shape)
            centre = noise.add_gaussian(means, noise_sd)
            half = np.sqrt(2 * (mean_variance + noise_sd**2) * interval_logs[i])
            low, high = centre - half, centre + half
            intervals[i, ..., 0], intervals[i, ..., 1] = low, high
        return (low + high) / 2, intervals

    def group_estimates(
        self, stats: GroupStats, budget: Budget, *, replicates: int | None, noise: NoiseSource
    ) -> np.ndarray:
        return self.run(stats, budget, replicates=replicates, noise=noise)[0]

    def errors(self, sizes: np.ndarray, intervals: np.ndarray, budget: Budget) -> CoinPressErrors:
        r"""The error of the released estimates, from their steps' intervals (DP outputs) and
        public inputs only: post-processing.

        The estimate is :math:`Z_t = \bar y_{[a_t, b_t]} + N(0, s_t^2)`, the mean of the
        values clipped to the last window plus noise whose sd :math:`s_t` follows from the
        window (rebuilt from the previous interval as :meth:`run` built it). The target
        :math:`\bar y` is the mean of the values clipped to the prior (``clip_to_prior``), or
        of the values. Clipping the window's upper tail lowers the mean by
        :math:`E[(Y - b_t)_+]`, bounded by :func:`clipping_bias_bound` at the distance
        :math:`b_t - \bar y`, with room :math:`r_0 - b_t` when the values lie in the prior
        (none when the window reaches the prior's end: no bias at all) and σ the public bound
        on the values' spread (at most half the prior's width when they lie in it: no variable
        in [ℓ₀, r₀] spreads more).

        The distance comes from CoinPress's own guarantee: step i − 1's interval contains
        its clipped mean with probability ≥ 1 − β_{i−1} (AAAI 2024 App. B, Alg. 1: the
        interval Z ± √(2(σ²/n + s²) log(2/β)) holds the step's Gaussian noise that often; its
        σ²/n, for sampling, is slack when the target is these rows' mean), so :math:`\bar y \le r_{i-1} + B^{\downarrow}_{i-1}` and the distance
        to :math:`b_i = r_{i-1} + w_i` is at least :math:`w_i - B^{\downarrow}_{i-1}`, step
        after step from the prior (which contains :math:`\bar y`, :math:`B_0 = 0`); the lower
        tail likewise. The bounds depend on the data only through σ's promise.
        """
        rho = require_budget(budget, (ZCDP,), self.name).rho
        sizes = np.asarray(sizes, dtype=float)
        lowest, highest = self.prior
        sigma = min(self.sigma, (highest - lowest) / 2) if self.clip_to_prior else self.sigma
        widths = self._margins(sizes)
        low, high = np.broadcast_to(lowest, intervals.shape[1:-1]), highest
        above = below = np.zeros(intervals.shape[1:-1])  # bias bounds of the previous step
        for i in range(self.steps):
            width = widths[..., i]
            start, stop = self._window(low, high, width)
            if self.clip_to_prior:
                low_room, high_room = start - lowest, highest - stop
            else:
                low_room = high_room = np.inf
            # Distances from the target to the window's ends, at least w less the previous bias.
            above, below = (
                clipping_bias_bound(width - above, low_room, sigma),
                clipping_bias_bound(width - below, high_room, sigma),
            )
            low, high = intervals[i, ..., 0], intervals[i, ..., 1]
        noise_sd = (stop - start) / sizes / math.sqrt(2 * rho * self.rho_split[-1])
        spent = float(np.sum(self.step_betas()[:-1]))
        return CoinPressErrors(
            noise_sd=np.broadcast_to(noise_sd, above.shape) * 1.0,
            above=above,
            below=below,
            beta_spent=np.full(above.shape, spent),
        )
