"""Univariate CoinPress: iterative private confidence-interval shrinking (ρ-zCDP).

Biswas, Dong, Kamath & Ullman (2020), restated in Rosenblatt, Stoyanovich & Musco (AAAI 2024),
appendix B: Alg. 1 (UVM, one step) and Alg. 2 (UVMRec, t steps). Vectorized over Monte Carlo
replicates and groups: every step is one call to ``stats.clipped_sums`` with (replicates, k) bounds
(the first step's, the prior's, are the same for every replicate: (k,)), which costs O(log n_g) per
group and replicate after the one sort done by :class:`~dpcore.analyses.mean.statistics.GroupValues`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpcore.analyses.mean.estimators import GroupStats, require_budget
from dpcore.foundations.accounting import ZCDP, Budget
from dpcore.foundations.mechanisms import NoiseSource
from dpcore.foundations.validation import positive_int, positive_number, validate_bounds

__all__ = ["CoinPressMean", "default_rho_split"]


def default_rho_split(steps: int) -> tuple[float, ...]:
    """The last step gets 3/4 of ρ and the earlier steps share 1/4 equally ([1/4, 3/4] for t = 2)."""
    steps = positive_int("steps", steps)
    if steps == 1:
        return (1.0,)
    return (*([0.25 / (steps - 1)] * (steps - 1)), 0.75)


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
    """

    prior: tuple[float, float]
    sigma: float
    steps: int = 2
    rho_split: tuple[float, ...] | None = None
    beta: float = 0.01
    name: str = field(default="CoinPress mean", init=False)

    def describe(self) -> str:
        """The public inputs of the estimate, in words."""
        low, high = self.prior
        return (
            f"{self.steps} narrowing steps from the public range [{low:g}, {high:g}], for values "
            f"whose spread is at most σ = {self.sigma:g}; group sizes treated as public"
        )

    def __post_init__(self) -> None:
        object.__setattr__(self, "prior", validate_bounds(self.prior))
        object.__setattr__(self, "sigma", positive_number("sigma", self.sigma))
        object.__setattr__(self, "steps", positive_int("steps", self.steps))
        if not 0 < self.beta < 1:
            raise ValueError(f"`beta` must be a number with 0 < beta < 1, got {self.beta!r}")
        split = default_rho_split(self.steps) if self.rho_split is None else tuple(self.rho_split)
        if len(split) != self.steps:
            raise ValueError(
                f"`rho_split` must have one entry per step ({self.steps}), got {split!r}"
            )
        if not all(math.isfinite(f) and f > 0 for f in split) or abs(sum(split) - 1) > 1e-9:
            raise ValueError(f"`rho_split` must be positive fractions summing to 1, got {split!r}")
        object.__setattr__(self, "rho_split", split)

    def step_betas(self) -> np.ndarray:
        """β_i of each step: β/(4(t − 1)) for the first t − 1 steps, β/4 for the last."""
        early = [self.beta / (4 * (self.steps - 1))] * (self.steps - 1) if self.steps > 1 else []
        return np.array([*early, self.beta / 4])

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
        widths = self.sigma * np.sqrt(2 * np.log(np.divide.outer(2 * sizes, betas)))
        noise_roots = np.sqrt(2 * rho * np.array(self.rho_split))
        interval_logs = np.log(2 / betas)
        mean_variance = self.sigma**2 / sizes
        # Every replicate starts from the prior: the first step's clipped sums are computed once
        # per group and broadcast, and replicates part only with the first noise draw.
        low, high = self.prior
        intervals = np.empty((self.steps, *shape, 2))
        for i in range(self.steps):
            width = widths[..., i]
            sums = stats.clipped_sums(low - width, high + width)
            noise_sd = (high - low + 2 * width) / sizes / noise_roots[i]
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
