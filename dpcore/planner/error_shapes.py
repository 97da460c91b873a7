r"""The laws of the noise the planner's error models scale with the budget
(:mod:`dpcore.planner.accuracy`): Laplace and Gaussian noise per estimate, the sum of two Laplace
noises (equal scales, or two scales as in a ratio of noisy sums), and a weighted sum of Laplace
noises (a stratified population mean), each at budget scale 1 with its CDF and the quantiles of
its absolute value, vectorised over the estimates.

Pure numpy/SciPy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

__all__ = [
    "ErrorShape",
    "GaussianError",
    "LaplaceError",
    "LaplacePairError",
    "LaplaceSumError",
    "WeightedLaplaceSumError",
]

BISECTION_STEPS = 60
"""Halvings of a log-scale bracket: 60 take any bracket used here below 1e-12 relative width."""


class ErrorShape(Protocol):
    """Symmetric, unimodal noise of k estimates at budget scale 1, vectorised over them."""

    def cdf(self, x: np.ndarray) -> np.ndarray:
        """P(X_j ≤ x_j) for each estimate j."""

    def abs_quantile(self, level: float) -> np.ndarray:
        """The ``level`` quantile of |X_j| for each estimate j."""


@dataclass(frozen=True)
class LaplaceError:
    """Laplace noise with scale ``scales`` (one per estimate)."""

    scales: np.ndarray

    def cdf(self, x: np.ndarray) -> np.ndarray:
        z = np.asarray(x) / self.scales
        return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0)), 1 - 0.5 * np.exp(-np.abs(z)))

    def abs_quantile(self, level: float) -> np.ndarray:
        # |Lap(b)| is Exponential with mean b: P(|X| ≤ t) = 1 − exp(−t/b).
        return self.scales * -math.log1p(-level)


@dataclass(frozen=True)
class GaussianError:
    """Normal noise with standard deviation ``sigmas`` (one per estimate)."""

    sigmas: np.ndarray

    def cdf(self, x: np.ndarray) -> np.ndarray:
        from scipy.special import ndtr

        return ndtr(np.asarray(x) / self.sigmas)

    def abs_quantile(self, level: float) -> np.ndarray:
        from scipy.special import ndtri

        return self.sigmas * ndtri((1 + level) / 2)


@dataclass(frozen=True)
class LaplacePairError:
    r"""The sum of two independent Laplace noises of scale ``scales`` each.

    Its density is :math:`(1 + |z|)e^{-|z|}/(4b)` with z = x/b, so
    :math:`P(X > x) = (2 + z)e^{-z}/4` for x ≥ 0 (convolution of two Laplace densities).
    """

    scales: np.ndarray

    def cdf(self, x: np.ndarray) -> np.ndarray:
        z = np.abs(np.asarray(x) / self.scales)
        upper_tail = (2 + z) * np.exp(-z) / 4
        return np.where(np.asarray(x) < 0, upper_tail, 1 - upper_tail)

    def abs_quantile(self, level: float) -> np.ndarray:
        # P(|X| > t) = (2 + z)e^{−z}/2 falls from 1 at z = 0; solve (2 + z)e^{−z} = 2(1 − level).
        target = 2 * (1 - level)
        low, high = 0.0, 1.0
        while (2 + high) * math.exp(-high) > target:
            high *= 2
        for _ in range(BISECTION_STEPS):
            mid = (low + high) / 2
            low, high = (mid, high) if (2 + mid) * math.exp(-mid) > target else (low, mid)
        return self.scales * high


@dataclass(frozen=True)
class LaplaceSumError:
    r"""The sum of two independent Laplace noises with scales ``first`` and ``second`` (one of
    each per estimate), e.g. the first-order error of a ratio of two noisy sums.

    The characteristic function of the sum is :math:`1/((1 + a^2t^2)(1 + c^2t^2))
    = [a^2/(1 + a^2t^2) - c^2/(1 + c^2t^2)]/(a^2 - c^2)`, so its law is that signed mixture of
    the two Laplace laws and :math:`P(X > x) = (a^2e^{-x/a} - c^2e^{-x/c})/(2(a^2 - c^2))` for
    x ≥ 0 and a ≠ c. Where the scales are within 0.1% of each other the mixture cancels
    catastrophically, so the equal-scale law of :class:`LaplacePairError` is used at their
    mean (an error below 0.1% of the scale).
    """

    first: np.ndarray
    second: np.ndarray

    def _upper_tail(self, x: np.ndarray) -> np.ndarray:
        a, c = np.broadcast_arrays(
            np.asarray(self.first, dtype=float), np.asarray(self.second, dtype=float)
        )
        big, small = np.maximum(a, c), np.minimum(a, c)
        close = small > big * 0.999
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            mixture = (big**2 * np.exp(-x / big) - small**2 * np.exp(-x / small)) / (
                2 * (big**2 - small**2)
            )
            z = x / ((big + small) / 2)
            pair = (2 + z) * np.exp(-z) / 4
        return np.where(close, pair, np.where(small > 0, mixture, 0.5 * np.exp(-x / big)))

    def cdf(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        tail = self._upper_tail(np.abs(x))
        return np.where(x < 0, tail, 1 - tail)

    def abs_quantile(self, level: float) -> np.ndarray:
        # P(|X| > t) = 2·tail(t) falls from 1; bisect t, vectorised over the estimates, from
        # t = 2(a + c)·log(2/(1 − level)), where P(|X| > t) ≤ P(|L_a| > t/2) + P(|L_c| > t/2)
        # ≤ 2e^{−t/(2(a + c))} = 1 − level.
        target = (1 - level) / 2
        high = 2 * (np.asarray(self.first) + np.asarray(self.second)) * math.log(2 / (1 - level))
        low = np.zeros_like(high, dtype=float)
        for _ in range(BISECTION_STEPS):
            mid = (low + high) / 2
            above = self._upper_tail(mid) > target
            low, high = np.where(above, mid, low), np.where(above, high, mid)
        return high


SERIES_TOLERANCE = 1e-10
"""How far :class:`WeightedLaplaceSumError`'s probabilities may be from the exact law."""
MAX_SERIES_TERMS = 2**18
"""Its series' terms at most (reached only when one weight dwarfs all others; the law is then
nearly that weight's Laplace law, and the error stays below 1e-8)."""


def _laplace_series(weights: np.ndarray, step: float, top: float) -> tuple[np.ndarray, np.ndarray]:
    """:class:`WeightedLaplaceSumError`'s frequencies ω_j = j·``step`` and series coefficients
    2φ(ω_j)/(πj), computed in blocks of j until its truncation rule stops them."""
    first = math.ceil(1 / (top * step))  # the first j with c·ω_j ≥ 1
    block = max(64, 2**22 // weights.size)  # block × weights numbers in memory at a time
    frequencies, terms = [], []
    for start in range(1, MAX_SERIES_TERMS + 1, block):
        j = np.arange(start, min(start + block, MAX_SERIES_TERMS + 1), dtype=float)
        phi = np.exp(-np.log1p(np.square(np.outer(step * j, weights))).sum(axis=1))
        done = np.flatnonzero((j >= first) & (phi <= SERIES_TOLERANCE))
        end = done[0] + 1 if done.size else len(j)
        frequencies.append(step * j[:end])
        terms.append(2 * phi[:end] / (math.pi * j[:end]))
        if done.size:
            break
    return np.concatenate(frequencies), np.concatenate(terms)


@dataclass(frozen=True, eq=False)
class WeightedLaplaceSumError:
    r"""The sum :math:`S = \sum_i c_i L_i` of independent standard Laplace noises (one estimate),
    e.g. a stratified population mean: each group's Laplace noise weighted by its share.

    No closed form is practical past two terms (:class:`LaplaceSumError`), so the law comes from
    the characteristic function :math:`\varphi(t) = \prod_i 1/(1 + c_i^2 t^2)` by the Fourier
    series of the indicator of :math:`[-x, x]` on a circle of circumference :math:`L`
    (Gil-Pelaez inversion, for S wrapped onto :math:`[-L/2, L/2)`):

    .. math:: P(|S| \le x) = \frac{2x}{L} + \sum_{j \ge 1} \frac{2}{\pi j}
              \sin(\omega_j x)\,\varphi(\omega_j), \qquad \omega_j = 2\pi j / L.

    Two approximations, each below :data:`SERIES_TOLERANCE`:

    - *wrapping*: :math:`L/2` is where the Chernoff bound at :math:`t = 1/(2c)`,
      :math:`c = \max_i c_i`, :math:`P(|S| > x) \le 2\exp(-x/(2c) + \sum_i c_i^2/(3c^2))`
      (:math:`\log 1/(1-u) \le 4u/3` for :math:`u \le 1/4`), falls below 1e-12;
    - *truncation* after J terms: beyond :math:`\omega_J \ge 1/c` the largest weight's factor
      falls at least as :math:`2\omega_J^2/\omega^2`, so the terms left sum to at most
      :math:`(2/\pi)\varphi(\omega_J)`; J is the first such term with
      :math:`\varphi(\omega_J)` below the tolerance (at most :data:`MAX_SERIES_TERMS`).

    Replaces the 10,000 seeded draws the planner used before, whose 0.95 quantile had a
    standard error of about 0.2 percentage points of coverage and, at the draws' fixed seed,
    planned the demo's population mean at 0.946 coverage instead of 0.95.
    """

    coefficients: np.ndarray

    def __post_init__(self) -> None:
        weights = np.abs(np.asarray(self.coefficients, dtype=float).ravel())
        weights = weights[weights > 0]
        object.__setattr__(self, "coefficients", weights)
        top = float(weights.max()) if weights.size else 0.0
        half = 2 * top * (math.log(2 / 1e-12) + float(np.sum((weights / (top or 1)) ** 2)) / 3)
        object.__setattr__(self, "_half_period", half)
        if half > 0:
            object.__setattr__(self, "_series", _laplace_series(weights, math.pi / half, top))

    def _within(self, x: np.ndarray) -> np.ndarray:
        """P(|S| ≤ x) for x ≥ 0."""
        x = np.asarray(x, dtype=float)
        half = self._half_period
        if half == 0:  # no noise at all
            return np.ones_like(x)
        frequencies, terms = self._series
        series = x / half + np.sin(np.outer(np.minimum(x, half), frequencies)) @ terms
        return np.where(x >= half, 1.0, np.clip(series.reshape(x.shape), 0.0, 1.0))

    def cdf(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return 0.5 + np.sign(x) * self._within(np.abs(x)) / 2

    def abs_quantile(self, level: float) -> np.ndarray:
        low, high = 0.0, self._half_period
        for _ in range(BISECTION_STEPS):
            mid = (low + high) / 2
            low, high = (low, mid) if self._within(np.array([mid]))[0] >= level else (mid, high)
        return np.array([high])
