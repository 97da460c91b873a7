"""GVDP's public bounds and budget split (Covington, He, Honaker & Kamath, Alg. 1–4).

:class:`GVDPBounds` holds the public box for the estimate and the public range of the BLB
variances; :class:`RhoSpent` splits ρ between the variance and the mean parts and over the t
CoinPress steps.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.choices import Choices
from dpcore.foundations.validation import (
    finite_number,
    open_unit_interval,
    positive_int,
    positive_number,
    shown,
)

__all__ = [
    "ESTIMATORS",
    "GVDPBounds",
    "NEARLY_UNBIASED_ROWS",
    "RhoSpent",
    "blb_variance_spread",
    "recommended_subset_rows",
    "recommended_subsets",
    "small_subsets_warning",
]


Estimator = Literal["mean", "weighted_mean", "ols", "logistic"]


ESTIMATORS = Choices(
    Estimator,
    {
        "mean": "Mean of each column",
        "weighted_mean": "Weighted mean of each column (positive row weights)",
        "ols": "Linear regression (OLS) coefficients",
        "logistic": "Logistic regression coefficients",
    },
)


ROWS_PER_COEFFICIENT = 5
"""Each BLB subset must hold at least this many rows per estimated coordinate (our choice)."""

NEARLY_UNBIASED_ROWS: dict[str, int] = {"mean": 5, "weighted_mean": 5, "ols": 10, "logistic": 20}
"""Rows per coordinate below which a subset's estimate is visibly biased, by estimator (our
choice): a mean is unbiased on any rows (its BLB variance only by (b − 1)/b); OLS needs spare
rows for its residual variance, (b − d)/b; a logistic fit's O(d/b) small-sample bias needs
the usual ten to twenty rows per coefficient (Peduzzi et al. 1996, *J. Clin. Epidemiol.* 49)."""

ROOT_SHARE = 1 / 3
r"""The recommended subset size is :math:`b = \lceil \sqrt n / 3\rceil` (so k ≈ 3√n)."""


def recommended_subset_rows(n: int, estimator: str, d: int) -> int:
    r"""The subset size b GVDP uses by default on n rows: the larger of
    :math:`\lceil\sqrt n/3\rceil` and :data:`NEARLY_UNBIASED_ROWS` per coordinate.

    Why √n. The BLB estimate carries its estimator's bias at b rows, not n (paper App. G.1),
    O(1/b) for a smooth estimator: a mean's BLB variance is (b − 1)/b of the truth, a subset
    mean of skewed rows is skewed by γ/√b and CoinPress clips its long tail. Against the
    interval's standard error, O(1/√n), that bias weighs :math:`\sqrt n/b`; the privacy noise
    weighs :math:`1/\sqrt k = \sqrt{b/n}` (paper §2, Alg. 4 line 7). Growing b like √n
    keeps the first fixed and lets the second fall like :math:`n^{-1/4}`. The factor 1/3 is
    measured (``benchmarks/bench_coverage.py``, issue 42): on n = 10,000 rows of earnings-like
    data, 1,000 subsets of 10 rows covered 92–94% (lognormal) and 81–90% (a power-law tail) for
    a nominal 95% at ρ = 0.1–1; the rule's 294 subsets of 34 rows 94–96% and 91–93%. At n = 960
    it leaves 87 subsets, and the interval is 1.4–1.8 times the non-private width at ρ = 1 (30
    subsets, a 960-row group's share of the old default: 6.4–7.6 times). It gives k ≈ 540 for
    32,561 rows and ≈ 950 for 10⁵, inside the paper's k = 250–1,000 for 10,000–100,000 rows
    (§3). The paper leaves k to the analyst (App. G.4: the largest k whose subsets still mimic
    the sampling law); n is public (§2.2), so a k chosen from it costs nothing.
    """
    n, d = positive_int("n", n), positive_int("d", d)
    ESTIMATORS.check("estimator", estimator)
    return max(NEARLY_UNBIASED_ROWS[estimator] * d, math.ceil(ROOT_SHARE * math.sqrt(n)))


def recommended_subsets(n: int, estimator: str, d: int) -> int:
    """k by the rule of :func:`recommended_subset_rows`: ⌊n/b⌋, at least 1."""
    return max(1, n // recommended_subset_rows(n, estimator, d))


def small_subsets_warning(n: int, k: int, estimator: str, d: int) -> str | None:
    """A sentence when k leaves subsets smaller than :func:`recommended_subset_rows` (subset
    estimates then carry their small-sample bias into the release); None otherwise."""
    b, recommended = n // positive_int("k", k), recommended_subset_rows(n, estimator, d)
    if b >= recommended:
        return None
    return (
        f"k = {k:,} leaves subsets of {b:,} rows of the {n:,}; GVDP's estimate carries the "
        f"bias of its estimator on {b:,} rows, and with skewed data its intervals can cover "
        f"less than they say (1,000 subsets of 10 rows of 10,000 covered 81–94% for 95%). "
        f"The rule for {n:,} rows is subsets of at least {recommended:,} rows: "
        f"k ≤ {recommended_subsets(n, estimator, d):,}."
    )


Data = np.ndarray | Mapping[str, np.ndarray] | tuple[np.ndarray, np.ndarray]


def frozen_array(name: str, value: object, *, positive: bool = False) -> np.ndarray:
    """A finite 1-D float array (scalars become length 1), read-only."""
    try:
        arr = np.atleast_1d(np.array(value, dtype=float))
    except (TypeError, ValueError) as err:
        raise TypeError(f"`{name}` must be an array of numbers, got {shown(value)}") from err
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"`{name}` must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or (positive and not np.all(arr > 0)):
        must = "finite and > 0" if positive else "finite"
        raise ValueError(f"`{name}` must be {must} everywhere, got {shown(arr)}")
    arr.setflags(write=False)
    return arr


def blb_variance_spread(resamples: int, subset_size: int) -> float:
    r"""Relative spread of a BLB variance estimate under Gaussian theory:
    :math:`\kappa = \sqrt{2/(r-1) + 2/b}`.

    A sample variance of r Gaussian draws has relative standard deviation :math:`\sqrt{2/(r-1)}`;
    the subset of b rows it is computed on moves its centre by a relative :math:`\sqrt{2/b}` (the
    spread of a sample variance of b normal rows). So :math:`\operatorname{sd}(\hat V_{ij}^{BLB})
    \approx \kappa\,\sigma_j^2`.
    """
    resamples, subset_size = (
        positive_int("resamples", resamples),
        positive_int("subset_size", subset_size),
    )
    if resamples < 2:
        raise ValueError(f"`resamples` must be an integer >= 2, got {resamples!r}")
    return math.sqrt(2 / (resamples - 1) + 2 / subset_size)


@dataclass(frozen=True, eq=False)
class GVDPBounds:
    r"""Public bounds on the sampling distribution of the estimator (paper Assumptions 2.6–2.7).

    They must come from knowledge outside the private data (a codebook, earlier studies, theory),
    never from the data themselves.

    Parameters
    ----------
    center, radius
        An ℓ2 ball :math:`B_2(c, R)` containing the parameter θ (Assumption 2.6 for the mean
        step). Build it from per-coordinate ranges with :meth:`box`.
    variance_high : array, shape (d,)
        Upper bounds :math:`v_j \ge \operatorname{Var}(\hat\theta_j)` on the sampling variance of
        each coordinate *at the full sample size n* (the BLB rescales every resample to n). The
        variance step starts from the ball around the box :math:`[0, v]` (centre v/2, radius
        :math:`\|v\|_2/2`).
    variance_sd : array, shape (d,), optional
        Upper bounds :math:`\tau_j` on the standard deviation of the BLB variance estimates
        :math:`\hat V_{ij}^{BLB}` across subsets: the diagonal Löwner bound
        :math:`\operatorname{diag}(\tau^2)` of Assumption 2.7 for the variance step. Default
        :math:`\tau_j = \kappa\, v_j` with :math:`\kappa` from :func:`blb_variance_spread`.

    half_widths : array, shape (d,), optional
        When the parameter is known per coordinate, :math:`|\theta_j - c_j| \le h_j` (a box;
        :meth:`box` sets it), the half-widths h. The whitened starting ball of the mean step is
        then the one around the whitened box, radius :math:`\|h/s\|_2`, instead of
        :math:`R/\min_j s_j` (see :func:`~dpcore.analyses.gvdp.private.whitened_radius`).

    The covariance bound of the mean step is not asked for: as in all the paper's experiments
    (App. C.6) it is :math:`k\tilde\Sigma`, the private variance bound times k.
    """

    center: np.ndarray
    radius: float
    variance_high: np.ndarray
    variance_sd: np.ndarray | None = None
    half_widths: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", frozen_array("center", self.center))
        object.__setattr__(self, "radius", positive_number("radius", self.radius))
        high = frozen_array("variance_high", self.variance_high, positive=True)
        object.__setattr__(self, "variance_high", high)
        if self.variance_sd is not None:
            sd = frozen_array("variance_sd", self.variance_sd, positive=True)
            object.__setattr__(self, "variance_sd", sd)
        if self.half_widths is not None:
            half = frozen_array("half_widths", self.half_widths, positive=True)
            object.__setattr__(self, "half_widths", half)
        parts = (self.center, high, self.variance_sd, self.half_widths)
        shapes = {a.shape for a in parts if a is not None}
        if len(shapes) > 1:
            raise ValueError(
                "`center`, `variance_high`, `variance_sd` and `half_widths` must have one entry "
                f"per coordinate, got shapes {sorted(shapes)}"
            )

    @property
    def d(self) -> int:
        return self.center.size

    @classmethod
    def box(
        cls,
        low: object,
        high: object,
        variance_high: object,
        variance_sd: object | None = None,
    ) -> GVDPBounds:
        r"""Bounds from per-coordinate ranges :math:`\theta_j \in [\ell_j, h_j]`: the ball
        circumscribing the box, centre :math:`(\ell + h)/2`, radius :math:`\|h - \ell\|_2/2`,
        and the box itself (``half_widths``)."""
        low, high = frozen_array("low", low), frozen_array("high", high)
        if low.shape != high.shape or not np.all(high > low):
            raise ValueError(
                f"`low` must be below `high` everywhere, got {shown(low)} and {shown(high)}"
            )
        return cls(
            (low + high) / 2, float(np.linalg.norm(high - low)) / 2, variance_high, variance_sd,
            half_widths=(high - low) / 2,
        )  # fmt: skip

    @classmethod
    def overestimated(
        cls,
        theta: object,
        variance: object,
        factor: float,
        *,
        resamples: int,
        subset_size: int,
    ) -> GVDPBounds:
        r"""Bounds ``factor`` times looser than the tightest true ones (paper §3 and App. F.3).

        For simulations, where the truth is known and public. With :math:`c` = ``factor`` ≥ 1,
        true parameter θ and true sampling variances :math:`\sigma_j^2 =
        \operatorname{Var}(\hat\theta_j)`, every bound is c times its tightest value, in the units
        in which the paper states it:

        - parameter: the ball about the origin :math:`B_2(0, c\|\theta\|_2)` (the tightest ball
          about the origin has radius :math:`\|\theta\|_2`; for θ = 1 and c = 100 this is the
          paper's "μ ∈ [−100, 100]");
        - variance: :math:`v_j = c\,\sigma_j^2` (the paper's "σ² ≤ 100" for σ² = 1);
        - spread of the BLB variance estimates: the covariance bound :math:`c\,\tau_j^2` of App. F.3
          (``c · diag(cov)``), where the tightest :math:`\tau_j = \kappa\sigma_j^2` comes from
          Gaussian theory (:func:`blb_variance_spread` with ``resamples`` r and ``subset_size``
          b = n // k), so :math:`\tau_j^{bound} = \sqrt c\,\kappa\,\sigma_j^2`.
        """
        theta = frozen_array("theta", theta)
        variance = frozen_array("variance", variance, positive=True)
        factor = finite_number("factor", factor)
        if factor < 1:
            raise ValueError(
                f"`factor` must be >= 1 (a factor below 1 gives bounds tighter than the truth, "
                f"which voids the guarantees), got {factor!r}"
            )
        norm = float(np.linalg.norm(theta))
        if norm == 0:
            raise ValueError(
                "`theta` must not be all zero: the tightest ball about the origin would have "
                "radius 0; give explicit bounds with GVDPBounds(...) or GVDPBounds.box(...)"
            )
        spread = math.sqrt(factor) * blb_variance_spread(resamples, subset_size) * variance
        return cls(np.zeros_like(theta), factor * norm, factor * variance, spread)

    def spread(self, resamples: int, subset_size: int) -> np.ndarray:
        """The variance-step scale τ (``variance_sd``, or its default for r and b)."""
        if self.variance_sd is not None:
            return self.variance_sd
        return blb_variance_spread(resamples, subset_size) * self.variance_high


@dataclass(frozen=True)
class RhoSpent:
    r"""The zCDP budget of one GVDP run, per part and per CoinPress step (paper Alg. 3, Thm. C.2).

    Each part with budget :math:`\rho_p` spends :math:`\rho_p/(2(t-1))` in each of its first
    t − 1 steps and :math:`\rho_p/2` in the last (all of :math:`\rho_p` when t = 1). The steps
    compose to ``total`` = ρ (zCDP composes additively, Lemma 2.2).
    """

    mean_steps: tuple[float, ...]
    variance_steps: tuple[float, ...]

    @classmethod
    def split(cls, rho: float, mean_fraction: float, t: int) -> RhoSpent:
        # Exact rational arithmetic so the steps add back to ρ up to the final float rounding.
        whole = Fraction(rho)
        mean = whole * Fraction(mean_fraction)
        return cls(_step_rhos(mean, t), _step_rhos(whole - mean, t))

    @property
    def mean(self) -> float:
        return math.fsum(self.mean_steps)

    @property
    def variance(self) -> float:
        return math.fsum(self.variance_steps)

    @property
    def total(self) -> float:
        return math.fsum(self.mean_steps + self.variance_steps)


def _step_rhos(part: Fraction, t: int) -> tuple[float, ...]:
    if t == 1:
        return (float(part),)
    return (*[float(part / (2 * (t - 1)))] * (t - 1), float(part / 2))


@dataclass(frozen=True)
class RunParameters:
    """Validated run settings shared by :func:`gvdp` and :func:`gvdp_coverage`."""

    n: int
    k: int
    resamples: int
    level: float
    rho_total: float
    rho: RhoSpent
    beta_part: float

    @classmethod
    def build(
        cls, *, k, rho, resamples, n, d, t=5, level=0.95, mean_fraction=0.5, beta=0.03
    ) -> RunParameters:
        """The checked parameters of one run on n rows of d coordinates; the defaults are
        :func:`~dpcore.analyses.gvdp.gvdp`'s (:class:`~dpcore.analyses.gvdp.estimator.GvdpRun`)."""
        rho_total = rho.rho if isinstance(rho, ZCDP) else positive_number("rho", rho)
        k, t = positive_int("k", k), positive_int("t", t)
        resamples = positive_int("resamples", resamples)
        if resamples < 2:
            raise ValueError(
                f"`resamples` must be an integer >= 2 (the BLB variance needs two resamples), "
                f"got {resamples!r}"
            )
        minimum = ROWS_PER_COEFFICIENT * d
        if n // k < minimum:
            fix = f"use k <= {n // minimum}" if n >= minimum else "the data are too few for GVDP"
            raise ValueError(
                f"`k` = {k} leaves subsets of {n // k} rows (n = {n}); GVDP needs at least "
                f"{minimum} rows per subset ({ROWS_PER_COEFFICIENT} per coordinate, d = {d}): "
                f"{fix}"
            )
        mean_fraction = open_unit_interval("mean_fraction", mean_fraction)
        return cls(
            n=n,
            k=k,
            resamples=resamples,
            level=open_unit_interval("level", level),
            rho_total=rho_total,
            rho=RhoSpent.split(rho_total, mean_fraction, t),
            beta_part=open_unit_interval("beta", beta) / 3,
        )
