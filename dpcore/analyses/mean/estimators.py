"""Clipped private means: Laplace (ε-DP) and Gaussian (ρ-zCDP, or (ε, δ)-DP).

Rosenblatt, Stoyanovich & Musco (AAAI 2024), eq. 1 (Gaussian mechanism) and eq. 3 (clipped mean plus
Laplace noise). Every estimator here works on per-group sufficient statistics (any object with
``sizes`` and ``clipped_sums(low, high)``, such as :class:`~dpcore.analyses.mean.statistics.GroupValues`) and returns one
estimate per group, vectorized over Monte Carlo replicates: shape ``(replicates, k)``, or ``(k,)``
when ``replicates`` is None.

Privacy model. With ``n_public=True`` (the paper's setting) each group's size n_g is treated as
public, neighbouring datasets differ by replacing one person's value, and the clipped mean has
sensitivity (U − L)/n_g. With ``n_public=False`` neighbours differ by adding or removing one person:
the budget is split in half between a noisy count (sensitivity 1) and a noisy clipped sum
(sensitivity max(|L|, |U|)), and the estimate is their ratio.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from dpcore.foundations.accounting import ZCDP, ApproxDP, Budget, PureDP
from dpcore.foundations.labels import plain_number
from dpcore.foundations.mechanisms import NoiseSource, gaussian_sigma, zcdp_gaussian_sigma
from dpcore.foundations.small_groups import CountNoise
from dpcore.foundations.validation import positive_number, validate_bounds

__all__ = ["ClippedMean", "GaussianMean", "GroupStats", "LaplaceMean", "NoisySums"]


class GroupStats(Protocol):
    """What an estimator may know about the data: sizes and clipped sums, nothing row-level."""

    sizes: np.ndarray

    def clipped_sums(self, low: np.ndarray, high: np.ndarray) -> np.ndarray: ...


def require_budget(budget: object, allowed: tuple[type, ...], estimator: str) -> Budget:
    """Refuse a budget type the estimator's mechanism cannot account for, naming the fix."""
    if not isinstance(budget, allowed):
        names = " or ".join(t.__name__ for t in allowed)
        raise TypeError(
            f"`budget` for the {estimator} must be {names}, got {budget!r}"
            + (" (convert with PureDP.to_zcdp())" if ZCDP in allowed else "")
        )
    return budget


@dataclass(frozen=True)
class NoisySums:
    """What a clipped mean with private group sizes draws per group: a noisy clipped sum and a
    noisy count, shapes ``(k,)`` or ``(replicates, k)``."""

    sums: np.ndarray
    counts: np.ndarray

    def means(self) -> np.ndarray:
        """Each group's estimate, the noisy sum over the noisy count. A noisy count below 1
        would blow the ratio up; 1 is the smallest meaningful group size."""
        return self.sums / np.maximum(self.counts, 1.0)


@dataclass(frozen=True)
class ClippedMean:
    r"""Clipping rule shared by the Laplace and Gaussian means.

    Either user bounds ``bounds=(L, U)``, or the paper's clip around ±R (AAAI 2024, eq. 3):
    values are clipped to :math:`\pm\big(R + \sqrt{\log(n_g)/\gamma}\big)`, wide enough that, for
    unit-variance Gaussian groups with means in [−R, R], no value is clipped with probability
    1 − O(γ). The radius rule uses n_g, so it requires ``n_public=True``.
    """

    bounds: tuple[float, float] | None = None
    radius: float | None = None
    gamma: float = 0.1
    n_public: bool = True
    # Bounds a release found privately (at_bounds): arrays, not constructor arguments.
    _found: tuple[np.ndarray, np.ndarray] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if (self.bounds is None) == (self.radius is None):
            raise ValueError(
                "give exactly one of `bounds` (L, U) or `radius` (the paper's R), got "
                f"bounds={self.bounds!r}, radius={self.radius!r}"
            )
        if self.bounds is not None:
            object.__setattr__(self, "bounds", validate_bounds(self.bounds))
        else:
            object.__setattr__(self, "radius", positive_number("radius", self.radius))
            object.__setattr__(self, "gamma", positive_number("gamma", self.gamma))
            if not self.n_public:
                raise ValueError(
                    "the paper's clip radius depends on the group size, so `n_public` must be True "
                    "with `radius`; give explicit `bounds` to treat group sizes as private"
                )

    def describe(self) -> str:
        """The clipping rule and the status of the group sizes, in words."""
        if self.bounds is not None:
            clip = f"each value clipped to the public range [{plain_number(self.bounds[0], 6)}, {plain_number(self.bounds[1], 6)}]"
        else:
            clip = (
                f"each value clipped to ±(R + √(log n / γ)) with R = {plain_number(self.radius, 6)} and "
                f"γ = {self.gamma:g} (the paper's rule, eq. 3)"
            )
        sizes = (
            "group sizes treated as public" if self.n_public
            else "group sizes kept private (noisy counts share the budget)"
        )  # fmt: skip
        return f"{clip}; {sizes}"

    @property
    def public_range(self) -> tuple[float, float]:
        """The public range every mean lies in: the bounds [L, U] (a clipped mean cannot leave
        them), or the whole line for the paper's radius rule, whose clip grows with n_g."""
        if self.bounds is None:
            return -np.inf, np.inf
        return self.bounds

    @property
    def clamp_range(self) -> tuple:
        """Where each group's mean lies, to clamp its estimate into before a recombination
        (issue 37): the bounds found privately, per group (:meth:`at_bounds`, shapes
        ``(..., k)`` or ``(..., 1)``), else the public range."""
        return self.public_range if self._found is None else self._found

    def at_bounds(self, low: np.ndarray, high: np.ndarray) -> ClippedMean:
        """This estimator clipping at bounds found privately
        (:class:`~dpcore.foundations.private_bounds.FoundBounds`): ``low`` and ``high`` of shape
        (..., k) per group or (..., 1) for one range, with a leading replicate axis in
        simulations. Estimating the population as one group with per-group bounds clips at
        their envelope (the smallest low, the largest high: post-processing)."""
        copy = dataclasses.replace(self)
        found = tuple(np.asarray(b, dtype=float) for b in (low, high))
        object.__setattr__(copy, "_found", found)
        return copy

    def interval(self, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-group clipping interval, shape (k,) each (or (replicates, k) with bounds found
        per replicate, :meth:`at_bounds`)."""
        if self._found is not None:
            low, high = self._found
            k = np.shape(sizes)[-1]
            if low.shape[-1] not in (1, k):  # per-group bounds, the population as one group
                low, high = low.min(axis=-1, keepdims=True), high.max(axis=-1, keepdims=True)
            shape = (*low.shape[:-1], k)
            return np.broadcast_to(low, shape), np.broadcast_to(high, shape)
        if self.bounds is not None:
            low, high = self.bounds
            return np.full(sizes.shape, low), np.full(sizes.shape, high)
        half = self.radius + np.sqrt(np.log(sizes) / self.gamma)
        return -half, half

    def _noisy_means(
        self,
        stats: GroupStats,
        replicates: int | None,
        add_noise,
        mean_scale_factor: float,
        count_scale_factor: float,
    ) -> np.ndarray | NoisySums:
        """Shared body: ``add_noise(values, scale_per_unit_sensitivity × sensitivity)``; the
        means with public sizes, the noisy sums and counts with private ones."""
        sizes = np.asarray(stats.sizes, dtype=float)
        low, high = self.interval(sizes)
        sums = stats.clipped_sums(low, high)
        shape = sizes.shape if replicates is None else (replicates, *sizes.shape)
        if self.n_public:
            noisy = add_noise(np.broadcast_to(sums, shape), mean_scale_factor * (high - low))
            return noisy / sizes
        noisy_sum = add_noise(
            np.broadcast_to(sums, shape),
            count_scale_factor * np.maximum(np.abs(low), np.abs(high)),
        )
        noisy_count = add_noise(np.broadcast_to(sizes, shape), count_scale_factor)
        return NoisySums(noisy_sum, noisy_count)

    def noise_scales(self, sizes: np.ndarray, budget: Budget) -> np.ndarray:
        """With public sizes, the scale of each group's noise on its mean (Laplace's b or the
        Gaussian's σ, per :attr:`noise_law`): the noise of the clipped sum, scaled to the
        sensitivity :math:`U_g - L_g` of one replaced value, over :math:`n_g` (eq. 1 and 3)."""
        sizes = np.asarray(sizes, dtype=float)
        low, high = self.interval(sizes)
        return self.unit_scale(budget) * (high - low) / sizes

    def group_estimates(
        self, stats: GroupStats, budget: Budget, *, replicates: int | None, noise: NoiseSource
    ) -> np.ndarray:
        """One estimate per group, shape ``(k,)`` or ``(replicates, k)``."""
        drawn = self.draw(stats, budget, replicates=replicates, noise=noise)
        return drawn.means() if isinstance(drawn, NoisySums) else drawn

    def noisy_sums(
        self, stats: GroupStats, budget: Budget, *, replicates: int | None, noise: NoiseSource
    ) -> NoisySums:
        """The noisy clipped sums and noisy counts a release with private group sizes draws
        (``n_public=False`` only): the counts are DP outputs that later steps may reuse, e.g.
        as recombination shares (:func:`~dpcore.foundations.shares.noisy_count_shares`)."""
        if self.n_public:
            raise ValueError(
                "with group sizes treated as public the release draws no noisy counts; keep group "
                "sizes private (Estimator page) to release them"
            )
        return self.draw(stats, budget, replicates=replicates, noise=noise)


@dataclass(frozen=True)
class LaplaceMean(ClippedMean):
    r"""Clipped mean plus Laplace noise under ε-DP (AAAI 2024, eq. 3).

    .. math:: \hat p_g = \frac{1}{n_g}\sum_{x\in G_g}\mathrm{clip}_{[L,U]}(x)
              + \mathrm{Lap}\!\left(\frac{U - L}{n_g\,\varepsilon}\right)

    with n_g public. With ``n_public=False`` the ε is halved between the count and the sum.
    """

    name = "Laplace mean"
    noise_law = "laplace"

    def unit_scale(self, budget: Budget) -> float:
        """b per unit of sensitivity with public sizes: 1/ε."""
        return 1 / require_budget(budget, (PureDP,), self.name).epsilon

    def draw(
        self, stats: GroupStats, budget: Budget, *, replicates: int | None, noise: NoiseSource
    ) -> np.ndarray | NoisySums:
        if self.n_public:
            return self._noisy_means(
                stats, replicates, noise.add_laplace, self.unit_scale(budget), 0.0
            )
        epsilon = require_budget(budget, (PureDP,), self.name).epsilon
        return self._noisy_means(stats, replicates, noise.add_laplace, 0.0, 2 / epsilon)

    def count_noise(self, budget: Budget) -> CountNoise:
        """The noise on each group's count with private sizes: Lap(2/ε), half of ε."""
        return CountNoise("laplace", 2 / require_budget(budget, (PureDP,), self.name).epsilon)


@dataclass(frozen=True)
class GaussianMean(ClippedMean):
    r"""Clipped mean plus Gaussian noise (AAAI 2024, eq. 1).

    Under ρ-zCDP, :math:`\sigma = \Delta/\sqrt{2\rho}` with Δ = (U − L)/n_g (n_g public). An
    (ε, δ) budget uses the analytic Gaussian σ of Balle & Wang (2018). With ``n_public=False`` the
    budget is halved between the count and the sum.
    """

    name = "Gaussian mean"
    noise_law = "gaussian"

    def unit_scale(self, budget: Budget) -> float:
        """σ per unit of sensitivity with public sizes: for the whole budget."""
        budget = require_budget(budget, (ZCDP, ApproxDP), self.name)
        if isinstance(budget, ZCDP):
            return zcdp_gaussian_sigma(1.0, budget.rho)
        return gaussian_sigma(1.0, budget.epsilon, budget.delta, "analytic")

    def draw(
        self, stats: GroupStats, budget: Budget, *, replicates: int | None, noise: NoiseSource
    ) -> np.ndarray | NoisySums:
        budget = require_budget(budget, (ZCDP, ApproxDP), self.name)
        if self.n_public:
            whole = self.unit_scale(budget)
            return self._noisy_means(stats, replicates, noise.add_gaussian, whole, 0.0)
        half = self.count_noise(budget).scale
        return self._noisy_means(stats, replicates, noise.add_gaussian, 0.0, half)

    def count_noise(self, budget: Budget) -> CountNoise:
        """The noise on each group's count with private sizes: σ for half the budget."""
        budget = require_budget(budget, (ZCDP, ApproxDP), self.name)
        if isinstance(budget, ZCDP):
            return CountNoise("gaussian", zcdp_gaussian_sigma(1.0, budget.rho / 2))
        return CountNoise(
            "gaussian", gaussian_sigma(1.0, budget.epsilon / 2, budget.delta / 2, "analytic")
        )
