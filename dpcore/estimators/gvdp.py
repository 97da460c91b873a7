r"""GVDP: unbiased private estimates with valid confidence intervals for general estimators.

Covington, He, Honaker & Kamath, *Unbiased Statistical Estimation and Valid Confidence Intervals
Under Differential Privacy* (the "paper" below), Alg. 1, in the diagonal (per-coordinate interval)
case that the paper's experiments use:

1. **Bag of little bootstraps** (Alg. 2). A random partition of the n rows into k subsets; on each
   subset, r multinomial resamples of total size n, drawn as integer row weights, so the estimator
   runs once per (subset, resample) as a batched weighted fit. Subset i yields
   :math:`\hat\theta_i^{BLB}` (mean of its r estimates) and :math:`\hat V_i^{BLB}` (their
   per-coordinate sample variance). One person is in one subset, so a change of one row moves one
   of the k points of each set (Sample & Aggregate).
2. **Modified CoinPress** (Alg. 3–4) on the k variance vectors (budget :math:`\rho_\Sigma`), then
   on the k estimates (budget :math:`\rho_\theta`), t steps each. Each step projects the whitened
   points onto an ℓ2 ball, releases their mean with Gaussian noise and shrinks the ball.
3. **Post-processing.** Precision weighting of the t iterates (Thm. 2.9, 2.11); a conservative
   per-coordinate variance :math:`\tilde\Sigma_{jj}` (Thm. 2.10, Cor. D.1) projected onto the PSD
   cone; intervals :math:`\tilde\theta_j \pm z_{1-\alpha/2}\sqrt{\tilde\Sigma_{jj} +
   (\Sigma_{\tilde\theta})_{jj}}` (Thm. 2.12, normal case; Cor. E.1).

With probability at least :math:`1 - \beta` over the privacy noise (β split in three, see
:func:`gvdp`), no point is clipped, :math:`\tilde\theta` is :math:`\hat\theta^{BLB}` plus known
Gaussian noise (unbiased) and the variance bound holds, so each interval covers with probability
≥ 1 − α under the paper's Assumption 2.4 (the BLB is a good approximation of the sampling law).

Where this module deviates from the paper's text (each is repeated where it applies):

- **No data-dependent centring.** Alg. 3 lines 5–6 and 10 subtract the points' *empirical* mean
  before CoinPress and add it back afterwards. That puts the exact (un-noised) mean into the
  release, which is not private; we whiten with :math:`S^{-1}` only (a public scaling), which is
  what the privacy proof of Thm. C.2 (invariance to a *data-independent* shift) covers.
- **Tail radii by a union bound over coordinates.** Fact C.5 (Laurent–Massart) needs the whitened
  points to have covariance :math:`\preceq I_d`. A diagonal :math:`\tilde\Sigma` only bounds the
  *variances* (OLS coefficients are correlated), so we use
  :math:`\gamma(\beta) = \sqrt d\,\Phi^{-1}(1 - \beta/(2d))`, valid for any correlation (and the
  exact Gaussian radius when d = 1). The paper's Fact C.5 also drops the factor 2 of
  Laurent–Massart's :math:`2\sqrt{d\log(1/\beta)}` term.
- **Radius of the whitened starting ball.** Alg. 3 line 4 scales :math:`r_0` by
  :math:`\max\operatorname{diag}(S^{-1}) = 1/\min_j s_j`, as here (a public implementation divides
  by :math:`\max_j s_j`, which can start from a ball that misses the mean).
- **Precision weighting of the estimates uses privacy variances only** (Thm. 2.11). Adding the
  sampling variance to every iterate (as a public implementation does) counts the one sampling
  error t times as independent and understates the variance.
- **PSD projection clips negative eigenvalues at 0** (:func:`psd_projection`), not :math:`|\lambda|`.
- **The variance bound is floored, and falls back to the public bound when it fails.** We use
  :math:`\max(\tilde S_j, 0) + c_j` instead of Cor. D.1's :math:`\tilde S_j + c_j` (never
  smaller, so valid whenever that is, and never below the public margin :math:`c_j > 0`), and
  the public :math:`v_j` (``bounds.variance_high``) for a coordinate whose Cor. D.1 bound is
  ≤ 0 (only possible in the failure event of Thm. 2.10). Both the whitening
  :math:`S = (k\tilde\Sigma)^{1/2}` (Alg. 3 line 2, App. C.6) and the interval (Thm. 2.12)
  use it; see :func:`_variance_bound`. A near-zero :math:`s_j` would otherwise inflate the
  starting radius :math:`r_0/\min_j s_j` (Alg. 3 line 4), hence the noise on every
  coordinate, by up to ~10⁵.

Everything here is numpy; noise goes through a :class:`~dpcore.mechanisms.NoiseSource`, so a real
release uses OpenDP (:class:`~dpcore.mechanisms.SecureNoise`) and previews use numpy.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np
from scipy import stats
from scipy.special import expit, ndtri

from dpcore._validate import (
    as_rng,
    finite_number,
    open_unit_interval,
    positive_int,
    positive_number,
)
from dpcore.accounting import ZCDP, parallel
from dpcore.estimators.stratified import share_values
from dpcore.mechanisms import NoiseKind, NoiseSource, noise_source
from dpcore.strata import PublicShares

__all__ = [
    "ESTIMATORS",
    "GVDPBounds",
    "GVDPCoverage",
    "GVDPResult",
    "GVDPStratifiedResult",
    "NonPrivateCI",
    "RhoSpent",
    "blb_variance_spread",
    "gvdp",
    "gvdp_coverage",
    "gvdp_stratified",
    "nonprivate_ci",
    "psd_projection",
]

Estimator = Literal["mean", "weighted_mean", "ols", "logistic"]
ESTIMATORS: dict[str, str] = {
    "mean": "Mean of each column",
    "weighted_mean": "Weighted mean of each column (positive row weights)",
    "ols": "Linear regression (OLS) coefficients",
    "logistic": "Logistic regression coefficients",
}

ROWS_PER_COEFFICIENT = 5
"""Each BLB subset must hold at least this many rows per estimated coordinate (our choice)."""

NEWTON_STEPS = 25
"""Fixed Newton (IRLS) iterations of the logistic fit, started from 0 (our choice; see
:func:`_fit_logistic`)."""

RIDGE = 1e-6
r"""Logistic ridge :math:`\lambda = 10^{-6} n`: negligible against the Hessian (of order n) but
keeps a separated resample's Newton system solvable."""

_GUIDE_BINS = 1 << 12  # bins of the Poisson inverse-CDF guide table (exact; see _poisson)

Data = np.ndarray | Mapping[str, np.ndarray] | tuple[np.ndarray, np.ndarray]


# ------------------------------------------------------------------------------------------------
# Public bounds, budget split and results
# ------------------------------------------------------------------------------------------------


def _frozen(name: str, value: object, *, positive: bool = False) -> np.ndarray:
    """A finite 1-D float array (scalars become length 1), read-only."""
    try:
        arr = np.atleast_1d(np.array(value, dtype=float))
    except (TypeError, ValueError) as err:
        raise TypeError(f"`{name}` must be an array of numbers, got {value!r}") from err
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"`{name}` must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or (positive and not np.all(arr > 0)):
        must = "finite and > 0" if positive else "finite"
        raise ValueError(f"`{name}` must be {must} everywhere, got {arr!r}")
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

    The covariance bound of the mean step is not asked for: as in all the paper's experiments
    (App. C.6) it is :math:`k\tilde\Sigma`, the private variance bound times k.
    """

    center: np.ndarray
    radius: float
    variance_high: np.ndarray
    variance_sd: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", _frozen("center", self.center))
        object.__setattr__(self, "radius", positive_number("radius", self.radius))
        high = _frozen("variance_high", self.variance_high, positive=True)
        object.__setattr__(self, "variance_high", high)
        if self.variance_sd is not None:
            sd = _frozen("variance_sd", self.variance_sd, positive=True)
            object.__setattr__(self, "variance_sd", sd)
        shapes = {a.shape for a in (self.center, high, self.variance_sd) if a is not None}
        if len(shapes) > 1:
            raise ValueError(
                "`center`, `variance_high` and `variance_sd` must have one entry per coordinate, "
                f"got shapes {sorted(shapes)}"
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
        circumscribing the box, centre :math:`(\ell + h)/2`, radius :math:`\|h - \ell\|_2/2`."""
        low, high = _frozen("low", low), _frozen("high", high)
        if low.shape != high.shape or not np.all(high > low):
            raise ValueError(f"`low` must be below `high` everywhere, got {low!r} and {high!r}")
        return cls(
            (low + high) / 2, float(np.linalg.norm(high - low)) / 2, variance_high, variance_sd
        )

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
        theta = _frozen("theta", theta)
        variance = _frozen("variance", variance, positive=True)
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


@dataclass(frozen=True, eq=False)
class GVDPResult:
    r"""One GVDP release: per-coordinate estimate, interval and variance, with diagnostics.

    Attributes
    ----------
    estimate, low, high : ndarray, shape (d,)
        :math:`\tilde\theta` (Thm. 2.11) and the interval of Thm. 2.12 / Cor. E.1.
    variance : ndarray, shape (d,)
        The interval's variance, ``sampling_variance + noise_variance``.
    sampling_variance : ndarray, shape (d,)
        :math:`\tilde\Sigma_{jj}`, the private upper bound on the estimator's sampling variance
        (Thm. 2.10 / Cor. D.1, with the negative part of the estimate clipped), or the public
        ``bounds.variance_high`` for a coordinate whose Cor. D.1 bound came out ≤ 0 (see
        :func:`_variance_bound`). The mean step whitens with :math:`\sqrt{k\,\tilde\Sigma_{jj}}`.
    noise_variance : ndarray, shape (d,)
        :math:`(\Sigma_{\tilde\theta})_{jj} = 1/\sum_m \sigma_{\theta,m,j}^{-2}`, the variance of
        the privacy noise in ``estimate`` (Thm. 2.11).
    mean_iterates, mean_iterate_variances : ndarray, shape (t, d)
        CoinPress's t estimates :math:`\tilde\theta_m` and their noise variances.
    variance_iterates, variance_iterate_variances : ndarray, shape (t, d)
        The same for the BLB variances :math:`\tilde V_m`.
    subset_estimates, subset_variances : ndarray, shape (k, d)
        :math:`\hat\theta_i^{BLB}` and :math:`\hat V_i^{BLB}`. **Not private**: the curator's
        diagnostic of the BLB (paper Fig. 3); never release them.
    rho : RhoSpent
        The budget per part and step; ``rho.total`` equals ``cost.rho``.
    """

    estimator: Estimator
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    variance: np.ndarray
    sampling_variance: np.ndarray
    noise_variance: np.ndarray
    level: float
    mean_iterates: np.ndarray
    mean_iterate_variances: np.ndarray
    variance_iterates: np.ndarray
    variance_iterate_variances: np.ndarray
    subset_estimates: np.ndarray
    subset_variances: np.ndarray
    rho: RhoSpent
    cost: ZCDP
    n: int
    k: int
    resamples: int


@dataclass(frozen=True, eq=False)
class NonPrivateCI:
    """Ordinary (non-private) estimate and normal interval. **Not private**: a curator preview."""

    estimator: Estimator
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    variance: np.ndarray
    level: float


@dataclass(frozen=True, eq=False)
class GVDPCoverage:
    """Replicated GVDP runs on freshly generated data; ``coverage[j]`` = share of intervals that
    contain ``truth[j]``. Arrays of shape (replications, d) hold every run."""

    truth: np.ndarray
    estimates: np.ndarray
    low: np.ndarray
    high: np.ndarray
    variance: np.ndarray
    level: float

    @property
    def covered(self) -> np.ndarray:
        return (self.low <= self.truth) & (self.truth <= self.high)

    @property
    def coverage(self) -> np.ndarray:
        return self.covered.mean(axis=0)

    @property
    def replications(self) -> int:
        return self.estimates.shape[0]


@dataclass(frozen=True, eq=False)
class GVDPStratifiedResult:
    r"""Per-group GVDP releases and their recombination :math:`\sum_g w_g \tilde\theta_g`.

    ``estimate``, ``low``, ``high``, ``variance`` (shape (d,)) describe the recombined estimate,
    with :math:`\operatorname{Var} = \sum_g w_g^2 \operatorname{Var}_g` (disjoint groups and
    independent noise make the group estimates independent).
    """

    labels: tuple[str, ...]
    groups: tuple[GVDPResult, ...]
    shares: np.ndarray
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    variance: np.ndarray
    level: float
    cost: ZCDP


# ------------------------------------------------------------------------------------------------
# Public entry points
# ------------------------------------------------------------------------------------------------


def gvdp(
    data: Data,
    estimator: Estimator,
    *,
    k: int,
    rho: float | ZCDP,
    t: int = 5,
    resamples: int,
    bounds: GVDPBounds,
    level: float = 0.95,
    mean_fraction: float = 0.5,
    beta: float = 0.03,
    rng: np.random.Generator | int | None = None,
    noise: NoiseKind | NoiseSource | None = None,
) -> GVDPResult:
    r"""Private estimate and per-coordinate confidence intervals by GVDP (paper Alg. 1).

    Parameters
    ----------
    data
        By ``estimator``:

        - ``"mean"``: an array x of shape (n,) or (n, d), or ``{"x": x}``; one mean per column.
        - ``"weighted_mean"``: ``(x, weights)`` or ``{"x": x, "weights": w}``, w > 0 of shape
          (n,); :math:`\sum_i w_i x_i / \sum_i w_i` per column.
        - ``"ols"``: ``(X, y)`` or ``{"X": X, "y": y}``, X of shape (n, p) used as given (add a
          column of ones for an intercept), y of shape (n,).
        - ``"logistic"``: as ``"ols"`` with y in {0, 1}; see :func:`_fit_logistic`.
    estimator : {"mean", "weighted_mean", "ols", "logistic"}
        The non-private estimator :math:`\hat\theta`, applied through row weights.
    k : int
        Number of BLB subsets. Privacy noise shrinks like 1/k, but the BLB needs subsets of
        b = n/k rows large enough to mimic the sampling distribution (App. G.4): take the largest
        k for which the subset estimates, tried on similar public data, still look like the
        full-data sampling law (paper §3: k = 500–1,000 for n = 50,000–100,000 OLS). We require
        b ≥ 5 rows per coordinate. A nonlinear estimator (logistic) keeps its small-sample bias
        at b rows, not n (App. G.1), so larger b also means less bias.
    rho : float or ZCDP
        Total zCDP budget ρ.
    t : int
        CoinPress steps per part (paper: t = 5 in every experiment).
    resamples : int
        r ≥ 2 multinomial resamples per subset (the paper's OLS demo uses 10).
    bounds : GVDPBounds
        Public bounds (:class:`GVDPBounds`).
    level : float
        Confidence level 1 − α of the intervals.
    mean_fraction : float
        Share of ρ for the estimate; the rest estimates the variance. Default ½ (the paper's
        experiments and public code).
    beta : float
        Total failure probability, split equally: β/3 for the variance step
        (:math:`\beta^{\tilde\Sigma}`), β/3 for its upper bound (:math:`\beta^{ub}`), β/3 for the
        mean step (:math:`\beta^{\tilde\theta}`). Default 0.03. Within a part, each of the t steps
        gets β/(3t), half for :math:`\gamma_1` and half for :math:`\gamma_2` (Alg. 3–4).
    rng
        Randomness of the partition and the resamples, and of the privacy noise unless ``noise``
        is given.
    noise
        Source of the privacy noise: ``"simulation"`` (numpy, seeded by ``rng``; the default),
        ``"secure"`` (OpenDP, for releases) or a :class:`~dpcore.mechanisms.NoiseSource`.

    Returns
    -------
    GVDPResult

    Notes
    -----
    With :math:`S = \operatorname{diag}(s)` a public scale, step m of a part (Alg. 4) projects each
    whitened point :math:`y_i = S^{-1}x_i` onto :math:`B_2(\tilde\mu_{m-1}, r_{m-1} + \gamma_1)`,
    releases :math:`\tilde\mu_m = \frac1k\sum_i y_i + N(0, \sigma_m^2 I)` with
    :math:`\sigma_m = 2(r_{m-1}+\gamma_1)/(k\sqrt{2\rho_m})`, and sets
    :math:`r_m = \gamma_2\sqrt{1/k + \sigma_m^2}`. The variance part uses :math:`s = \tau`
    (``bounds.spread``); the mean part uses :math:`s = \sqrt{k\tilde\Sigma}` (App. C.6), with
    :math:`\tilde\Sigma` from :func:`_variance_bound` (floored; the public :math:`v_j` where
    Cor. D.1's bound came out ≤ 0). Both BLB summaries come from the same partition and
    resamples (Alg. 1 lines 2–3); each part is private on its own and the parts compose. The number of rows n is treated as public (paper §2.2).
    Errors about the data (shapes, rank, subset size, a singular resample) are raised before any
    noise is drawn, so no budget is spent on a failed run.
    """
    rows, d = _prepare(data, estimator)
    plan = _Plan.build(
        k=k,
        rho=rho,
        t=t,
        resamples=resamples,
        level=level,
        mean_fraction=mean_fraction,
        beta=beta,
        n=rows[0].shape[0],
        d=d,
    )
    _check_bounds(bounds, d)
    gen = as_rng(rng)
    theta_blb, var_blb = _blb(rows, estimator, plan.k, plan.resamples, gen)
    release = _release(theta_blb, var_blb, bounds, plan, _noise(noise, gen))
    return GVDPResult(
        estimator=estimator,
        **release,
        level=plan.level,
        subset_estimates=_readonly(theta_blb),
        subset_variances=_readonly(var_blb),
        rho=plan.rho,
        cost=ZCDP(plan.rho_total),
        n=plan.n,
        k=plan.k,
        resamples=plan.resamples,
    )


def nonprivate_ci(data: Data, estimator: Estimator, level: float = 0.95) -> NonPrivateCI:
    r"""The ordinary estimate and its normal interval :math:`\hat\theta_j \pm z\,\widehat{se}_j`.

    **Not private**: for the curator to show beside the DP interval. Standard errors:

    - mean: :math:`s_j^2/n` (sample variance, ddof = 1);
    - weighted mean: linearisation (sandwich)
      :math:`\sum_i w_i^2 (x_{ij} - \hat\theta_j)^2 / (\sum_i w_i)^2`;
    - OLS and logistic: the sandwich (HC0) :math:`A^{-1} B A^{-1}` with
      :math:`A = \sum_i h_i x_i x_i^\top` (:math:`h_i` = 1 for OLS, :math:`\mu_i(1-\mu_i)` for
      logistic) and :math:`B = \sum_i e_i^2 x_i x_i^\top` (:math:`e_i` the residual). The
      bootstrap inside GVDP resamples rows, so it estimates this same sandwich variance.

    The logistic fit is the one GVDP uses (:func:`_fit_logistic`) with unit weights.
    """
    rows, _ = _prepare(data, estimator)
    level = open_unit_interval("level", level)
    estimate, variance = _NONPRIVATE[estimator](*rows)
    half = ndtri(0.5 + level / 2) * np.sqrt(variance)
    return NonPrivateCI(
        estimator, *map(_readonly, (estimate, estimate - half, estimate + half, variance)), level
    )


def gvdp_stratified(
    groups: Mapping[str, Data] | Sequence[Data],
    estimator: Estimator,
    shares: PublicShares | np.ndarray | Sequence[float],
    *,
    k: int | Sequence[int],
    rho: float | ZCDP,
    t: int = 5,
    resamples: int,
    bounds: GVDPBounds | Sequence[GVDPBounds],
    level: float = 0.95,
    mean_fraction: float = 0.5,
    beta: float = 0.03,
    rng: np.random.Generator | int | None = None,
    noise: NoiseKind | NoiseSource | None = None,
) -> GVDPStratifiedResult:
    r"""GVDP per group with the full budget, recombined with public shares.

    Each group (disjoint rows) gets its own :func:`gvdp` release and interval with the whole ρ;
    by parallel composition the total cost is ρ. The population estimate recombines the **DP**
    group estimates (never the exact group statistics):

    .. math:: \tilde\theta = \sum_g w_g \tilde\theta_g, \qquad
              \operatorname{Var}(\tilde\theta) = \sum_g w_g^2 \operatorname{Var}(\tilde\theta_g),

    with the interval :math:`\tilde\theta \pm z_{1-\alpha/2}\sqrt{\operatorname{Var}}`. Each group
    variance is the conservative GVDP variance, so the combined interval is conservative too.

    ``k`` and ``bounds`` are either one value for every group or one per group (groups differ in
    size, and the variance bound refers to each group's own n). Other arguments as :func:`gvdp`.
    """
    labels, datasets = _group_items(groups)
    weights = share_values(shares, len(datasets))
    ks = _per_group("k", k, len(datasets), (int, np.integer))
    all_bounds = _per_group("bounds", bounds, len(datasets), (GVDPBounds,))
    gen = as_rng(rng)
    source = _noise(noise, gen)
    common = dict(
        rho=rho,
        t=t,
        resamples=resamples,
        level=level,
        mean_fraction=mean_fraction,
        beta=beta,
        rng=gen,
        noise=source,
    )
    results = tuple(
        gvdp(group, estimator, k=k_g, bounds=b_g, **common)
        for group, k_g, b_g in zip(datasets, ks, all_bounds, strict=True)
    )
    estimate = weights @ np.stack([r.estimate for r in results])
    variance = (weights**2) @ np.stack([r.variance for r in results])
    half = ndtri(0.5 + results[0].level / 2) * np.sqrt(variance)
    return GVDPStratifiedResult(
        labels=labels,
        groups=results,
        shares=_readonly(weights),
        estimate=_readonly(estimate),
        low=_readonly(estimate - half),
        high=_readonly(estimate + half),
        variance=_readonly(variance),
        level=results[0].level,
        cost=parallel(*[r.cost for r in results]),
    )


def gvdp_coverage(
    generate: Callable[[np.random.Generator], Data],
    truth: object,
    estimator: Estimator,
    *,
    replications: int,
    k: int,
    rho: float | ZCDP,
    t: int = 5,
    resamples: int,
    bounds: GVDPBounds,
    level: float = 0.95,
    mean_fraction: float = 0.5,
    beta: float = 0.03,
    rng: np.random.Generator | int | None = None,
) -> GVDPCoverage:
    """Coverage of GVDP intervals over ``replications`` fresh data sets (simulation only).

    Each replication draws a new data set with ``generate(rng)`` (same n every time) and runs the
    BLB on it; the private stage (both CoinPress runs and the post-processing) then runs for all
    replications at once, vectorized, with numpy noise. Regenerating the data is what makes the
    coverage of the *true* parameter ``truth`` meaningful: fixed data with fresh noise would only
    measure coverage of that sample's BLB estimate. Arguments as :func:`gvdp`.
    """
    replications = positive_int("replications", replications)
    if not callable(generate):
        raise TypeError(f"`generate` must be a function rng -> data, got {generate!r}")
    gen = as_rng(rng)
    rows, d = _prepare(generate(gen), estimator)
    plan = _Plan.build(
        k=k,
        rho=rho,
        t=t,
        resamples=resamples,
        level=level,
        mean_fraction=mean_fraction,
        beta=beta,
        n=rows[0].shape[0],
        d=d,
    )
    _check_bounds(bounds, d)
    truth = _frozen("truth", truth)
    if truth.size != d:
        raise ValueError(f"`truth` must have d = {d} entries, got {truth.size}")
    blbs = [_blb(rows, estimator, plan.k, plan.resamples, gen)]
    for _ in range(replications - 1):
        rows, _ = _prepare(generate(gen), estimator)
        if rows[0].shape[0] != plan.n:
            raise ValueError(f"`generate` must return n = {plan.n} rows every time")
        blbs.append(_blb(rows, estimator, plan.k, plan.resamples, gen))
    theta_blb, var_blb = (np.stack(parts) for parts in zip(*blbs, strict=True))
    release = _release(theta_blb, var_blb, bounds, plan, noise_source("simulation", rng=gen))
    return GVDPCoverage(
        truth=truth,
        estimates=release["estimate"],
        low=release["low"],
        high=release["high"],
        variance=release["variance"],
        level=plan.level,
    )


def psd_projection(matrix: np.ndarray) -> np.ndarray:
    r"""Nearest symmetric PSD matrix in Frobenius norm: :math:`V\max(\Lambda, 0)V^\top`.

    Negative eigenvalues are clipped at 0 (Higham 1988). Taking :math:`|\lambda|` instead, as a
    public CoinPress implementation does, turns a large negative eigenvalue into a large positive
    one. Works on stacks (..., d, d); the input is symmetrised first.
    """
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim < 2 or matrix.shape[-1] != matrix.shape[-2]:
        raise ValueError(f"`matrix` must be square (..., d, d), got shape {matrix.shape}")
    values, vectors = np.linalg.eigh((matrix + np.swapaxes(matrix, -1, -2)) / 2)
    return (vectors * np.maximum(values, 0.0)[..., None, :]) @ np.swapaxes(vectors, -1, -2)


# ------------------------------------------------------------------------------------------------
# Validation and data preparation
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    """Validated run settings shared by :func:`gvdp` and :func:`gvdp_coverage`."""

    n: int
    k: int
    resamples: int
    level: float
    rho_total: float
    rho: RhoSpent
    beta_part: float

    @classmethod
    def build(cls, *, k, rho, t, resamples, level, mean_fraction, beta, n, d) -> _Plan:
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


def _check_bounds(bounds: object, d: int) -> None:
    if not isinstance(bounds, GVDPBounds):
        raise TypeError(f"`bounds` must be a GVDPBounds, got {type(bounds).__name__} {bounds!r}")
    if bounds.d != d:
        raise ValueError(
            f"`bounds` are for d = {bounds.d} coordinates but the estimate has d = {d}"
        )


def _noise(noise: object, rng: np.random.Generator) -> NoiseSource:
    """The privacy-noise source; numpy noise shares ``rng``, OpenDP's cannot be seeded."""
    if noise is None or noise == "simulation":
        return noise_source("simulation", rng=rng)
    if isinstance(noise, str):
        return noise_source(noise)
    if not callable(getattr(noise, "add_gaussian", None)):
        raise TypeError(f"`noise` must be 'simulation', 'secure' or a NoiseSource, got {noise!r}")
    return noise


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr, dtype=float)
    arr.setflags(write=False)
    return arr


def _array(name: str, value: object) -> np.ndarray:
    if isinstance(value, str | bytes) or value is None:
        raise TypeError(f"`{name}` must be a numeric array, got {type(value).__name__} {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"`{name}` must be a numeric array, got {value!r:.80}") from err
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            f"`{name}` must be finite (no NaN or inf), got {np.sum(~np.isfinite(arr))} bad entries"
        )
    return arr


def _columns(name: str, value: object) -> np.ndarray:
    arr = _array(name, value)
    if arr.ndim not in (1, 2) or arr.shape[0] < 2:
        raise ValueError(f"`{name}` must have shape (n,) or (n, d) with n >= 2, got {arr.shape}")
    return arr.reshape(arr.shape[0], -1)


def _vector(name: str, value: object, n: int) -> np.ndarray:
    arr = _array(name, value)
    if arr.shape != (n,):
        raise ValueError(f"`{name}` must have shape ({n},) to match the rows, got {arr.shape}")
    return arr


def _unpack(data: object, keys: tuple[str, str]) -> tuple[object, object]:
    if isinstance(data, Mapping):
        missing = [key for key in keys if key not in data]
        if missing:
            raise ValueError(f"`data` must have keys {list(keys)}, missing {missing}")
        return data[keys[0]], data[keys[1]]
    if isinstance(data, tuple | list) and len(data) == 2:
        return data[0], data[1]
    raise TypeError(
        f"`data` must be a pair {keys} or a mapping with those keys, got {type(data).__name__}"
    )


def _prepare(data: Data, estimator: object) -> tuple[tuple[np.ndarray, ...], int]:
    """Validated per-row arrays for ``estimator`` and the dimension d of its output."""
    if not isinstance(estimator, str):
        raise TypeError(
            f"`estimator` must be a string, got {type(estimator).__name__} {estimator!r}"
        )
    if estimator not in ESTIMATORS:
        raise ValueError(f"`estimator` must be one of {sorted(ESTIMATORS)}, got {estimator!r}")
    if estimator == "mean":
        rows = _mean_rows(data)
    elif estimator == "weighted_mean":
        rows = _weighted_rows(data)
    else:
        rows = _regression_rows(data, logistic=estimator == "logistic")
    return rows, rows[0].shape[1]


def _mean_rows(data: object) -> tuple[np.ndarray]:
    if isinstance(data, tuple | list):
        raise TypeError("`data` for 'mean' must be an array x or {'x': x}, got a sequence")
    if isinstance(data, Mapping) and "x" not in data:
        raise ValueError(f"`data` must have key 'x', got keys {sorted(data)}")
    return (_columns("x", data["x"] if isinstance(data, Mapping) else data),)


def _weighted_rows(data: object) -> tuple[np.ndarray, np.ndarray]:
    raw_x, raw_w = _unpack(data, ("x", "weights"))
    x = _columns("x", raw_x)
    weights = _vector("weights", raw_w, x.shape[0])
    if not np.all(weights > 0):
        raise ValueError(f"`weights` must be > 0 everywhere, got minimum {weights.min()!r}")
    return x, weights


def _regression_rows(data: object, *, logistic: bool) -> tuple[np.ndarray, np.ndarray]:
    raw_X, raw_y = _unpack(data, ("X", "y"))
    X = _columns("X", raw_X)
    y = _vector("y", raw_y, X.shape[0])
    rank = np.linalg.matrix_rank(X)
    if rank < X.shape[1]:
        raise ValueError(
            f"`X` has rank {rank} < {X.shape[1]} columns: the coefficients are not identified "
            "(drop or combine collinear columns)"
        )
    if logistic and not (np.all((y == 0) | (y == 1)) and 0 < y.sum() < y.size):
        raise ValueError("`y` must hold 0/1 outcomes with both classes present for 'logistic'")
    return X, y


def _group_items(groups: object) -> tuple[tuple[str, ...], list]:
    if isinstance(groups, Mapping):
        labels, datasets = tuple(str(g) for g in groups), list(groups.values())
    elif isinstance(groups, Sequence) and not isinstance(groups, str):
        labels, datasets = tuple(str(g) for g in range(len(groups))), list(groups)
    else:
        raise TypeError(f"`groups` must be a mapping label -> data or a sequence, got {groups!r}")
    if not datasets:
        raise ValueError("`groups` must hold at least one group")
    return labels, datasets


def _per_group(name: str, value: object, count: int, kinds: tuple[type, ...]) -> list:
    if isinstance(value, kinds):
        return [value] * count
    if not isinstance(value, Sequence) or len(value) != count:
        raise ValueError(f"`{name}` must be one value or one per group ({count}), got {value!r}")
    return list(value)


# ------------------------------------------------------------------------------------------------
# Step 1: bag of little bootstraps (Alg. 2)
# ------------------------------------------------------------------------------------------------


def _blb(
    rows: tuple[np.ndarray, ...],
    estimator: Estimator,
    k: int,
    resamples: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Alg. 2: subset means :math:`\hat\theta_i^{BLB}` and variances :math:`\hat V_i^{BLB}`,
    each of shape (k, d), from r resamples of size n per subset."""
    n = rows[0].shape[0]
    index, counts = _partition_and_resample(n, k, resamples, rng)
    estimates = _FITS[estimator]([row[index] for row in rows], counts, n)
    if not np.all(np.isfinite(estimates)):
        raise ValueError(
            f"the {estimator!r} fit overflowed on a bootstrap resample; lower `k` so each subset "
            "has more rows, or rescale the data"
        )
    return estimates.mean(axis=1), estimates.var(axis=1, ddof=1)


def _partition_and_resample(
    n: int, k: int, resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    r"""A random partition into k subsets of b or b + 1 rows, and multinomial counts.

    Returns ``index`` (k, b_max) of row numbers (short subsets padded with row 0) and ``counts``
    (k, r, b_max) with :math:`(n_1,\dots,n_b) \sim \text{Multinomial}(n, \mathbf 1_b/b)` per
    (subset, resample) (Alg. 2 line 7) and 0 on the padding, so padded rows never contribute.
    """
    b, extra = divmod(n, k)
    width = b + (extra > 0)
    order = rng.permutation(n)
    index = np.zeros((k, width), dtype=np.intp)
    counts = np.zeros((k, resamples, width))
    index[extra:, :b] = order[extra * (b + 1) :].reshape(k - extra, b)
    counts[extra:, :, :b] = _uniform_multinomial(n, b, (k - extra) * resamples, rng).reshape(
        k - extra, resamples, b
    )
    if extra:
        index[:extra] = order[: extra * (b + 1)].reshape(extra, b + 1)
        counts[:extra] = _uniform_multinomial(n, b + 1, extra * resamples, rng).reshape(
            extra, resamples, b + 1
        )
    return index, counts


def _uniform_multinomial(n: int, cells: int, rows: int, rng: np.random.Generator) -> np.ndarray:
    r"""``rows`` independent exact draws of :math:`\text{Multinomial}(n, \mathbf 1/\text{cells})`.

    Independent :math:`\text{Poisson}(\lambda)` counts with :math:`\lambda = (n - \sqrt n)/c`,
    conditioned on their sum S = s, are :math:`\text{Multinomial}(s, \mathbf 1/c)`; adding
    n − s further uniform draws makes them :math:`\text{Multinomial}(n, \mathbf 1/c)` whatever s
    is. Rows with s > n are redrawn (rejection keeps the law exact; it happens with probability
    ≈ 16 %). About 3× faster than ``Generator.multinomial``, which draws c binomials per row.
    """
    lam = (n - math.sqrt(n)) / cells
    counts = _poisson(lam, (rows, cells), rng)
    over = counts.sum(axis=1) > n
    while over.any():
        counts[over] = _poisson(lam, (int(over.sum()), cells), rng)
        over = counts.sum(axis=1) > n
    cells_of_draws = np.repeat(np.arange(0, rows * cells, cells), n - counts.sum(axis=1))
    cells_of_draws += rng.integers(0, cells, cells_of_draws.size)
    return counts + np.bincount(cells_of_draws, minlength=rows * cells).reshape(rows, cells)


@functools.lru_cache(maxsize=32)
def _poisson_tables(lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Poisson(λ) CDF times G, and a guide table: the draw for every bin [i, i + 1) of G·U that
    the scaled CDF does not cross, −1 for the bins it does."""
    top = int(lam + 12 * math.sqrt(lam) + 30)  # tail beyond this is below 1e-30
    # Scaling by G = 2**12 is exact in floating point, so comparing G·U with G·F is comparing U
    # with F.
    cdf = stats.poisson.cdf(np.arange(top), lam) * _GUIDE_BINS
    edges = np.arange(_GUIDE_BINS + 1)
    first = np.searchsorted(cdf, edges[:-1], side="right")
    last = np.searchsorted(cdf, edges[1:], side="left")
    return cdf, np.where(first == last, first, -1).astype(np.int32)


def _poisson(lam: float, size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    r"""Poisson draws by inversion, :math:`X = \#\{j : F(j) \le U\}`, through a guide table
    (exact for every U; a binary search settles the few % of U in bins the CDF crosses)."""
    cdf, guide = _poisson_tables(lam)
    scaled = rng.random(size)
    scaled *= _GUIDE_BINS
    draws = guide[scaled.astype(np.int32)]
    crossed = draws < 0
    draws[crossed] = np.searchsorted(cdf, scaled[crossed], side="right")
    return draws


def _fit_mean(parts: list[np.ndarray], counts: np.ndarray, n: int) -> np.ndarray:
    r""":math:`\hat\theta_{i,c} = \sum_j n_j x_j / n`, shape (k, r, d)."""
    return counts @ parts[0] / n


def _fit_weighted_mean(parts: list[np.ndarray], counts: np.ndarray, n: int) -> np.ndarray:
    r""":math:`\sum_j n_j w_j x_j / \sum_j n_j w_j`: the resample counts multiply the weights."""
    x, weights = parts
    effective = counts * weights[:, None, :]
    return effective @ x / effective.sum(axis=-1, keepdims=True)


def _outer_rows(X: np.ndarray) -> np.ndarray:
    """Per-row outer products :math:`x_j x_j^\\top`, flattened: (k, b, p·p)."""
    k, b, p = X.shape
    return (X[..., :, None] * X[..., None, :]).reshape(k, b, p * p)


def _solve(gram: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(gram, rhs[..., None])[..., 0]
    except np.linalg.LinAlgError as err:
        raise ValueError(
            "a bootstrap resample has a singular X^T W X (e.g. a binary column constant within a "
            "subset); lower `k` so each subset has more rows"
        ) from err


def _fit_ols(parts: list[np.ndarray], counts: np.ndarray, n: int) -> np.ndarray:
    r"""Weighted least squares :math:`(X^\top W X)^{-1} X^\top W y`, W = diag(counts), batched
    over the (k, r) resamples."""
    X, y = parts
    k, r, _ = counts.shape
    p = X.shape[-1]
    gram = (counts @ _outer_rows(X)).reshape(k, r, p, p)
    return _solve(gram, counts @ (X * y[..., None]))


def _fit_logistic(parts: list[np.ndarray], counts: np.ndarray, n: int) -> np.ndarray:
    r"""Weighted logistic MLE by :data:`NEWTON_STEPS` Newton (IRLS) steps from β = 0.

    Each step solves :math:`(X^\top W_\mu X + \lambda I)\,\delta = X^\top W(y - \mu) -
    \lambda\beta` with :math:`W = \operatorname{diag}(n_j)`, :math:`W_\mu = W\mu(1-\mu)`, for all
    (k, r) resamples at once. The ridge :math:`\lambda = 10^{-6}n` (:data:`RIDGE`) keeps a
    resample with separated classes finite; a fixed step count keeps the batch in lock-step
    (Newton on the logistic loss converges in well under 25 steps unless the data are nearly
    separated, and then the BLB assumptions fail anyway).
    """
    X, y = parts
    k, r, _ = counts.shape
    p = X.shape[-1]
    outer = _outer_rows(X)
    ridge = RIDGE * n
    beta = np.zeros((k, r, p))
    for _ in range(NEWTON_STEPS):
        mu = expit(beta @ np.swapaxes(X, -1, -2))  # (k, r, b)
        gram = ((counts * mu * (1 - mu)) @ outer).reshape(k, r, p, p) + ridge * np.eye(p)
        beta = beta + _solve(gram, (counts * (y[:, None, :] - mu)) @ X - ridge * beta)
    return beta


_FITS: dict[str, Callable[[list[np.ndarray], np.ndarray, int], np.ndarray]] = {
    "mean": _fit_mean,
    "weighted_mean": _fit_weighted_mean,
    "ols": _fit_ols,
    "logistic": _fit_logistic,
}


# ------------------------------------------------------------------------------------------------
# Step 2: modified CoinPress (Alg. 3-4), vectorized over leading batch axes
# ------------------------------------------------------------------------------------------------


def _tail_radius(d: int, beta: float) -> float:
    r""":math:`\gamma` with :math:`P(\|R\|_2 > \gamma) \le \beta` for every R with N(0, ≤ 1)
    coordinates: :math:`\sqrt d\,\Phi^{-1}(1 - \beta/(2d))` (union bound over coordinates; used
    instead of Fact C.5, which needs Cov(R) ⪯ I, not implied by a diagonal bound)."""
    return math.sqrt(d) * float(-ndtri(beta / (2 * d)))


def _coinpress(
    points: np.ndarray,
    center: np.ndarray,
    radius: float,
    scale: np.ndarray,
    rho_steps: tuple[float, ...],
    beta: float,
    noise: NoiseSource,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Alg. 3 (MVMRec) with a diagonal public scale :math:`S = \operatorname{diag}(s)`.

    ``points`` (..., k, d), ``scale`` (..., d). Returns the t iterates :math:`S\tilde\mu_m` and
    their noise variances :math:`\sigma_m^2 s_j^2` (Alg. 3 lines 10–11), each (t, ..., d). Each
    step has failure probability β/t, half for :math:`\gamma_1` (per point, β/(2tk)) and half for
    :math:`\gamma_2` (Alg. 4 lines 2–5). No empirical-mean centring (module docstring).
    """
    k, d = points.shape[-2:]
    beta_s = beta / (2 * len(rho_steps))
    gamma1, gamma2 = _tail_radius(d, beta_s / k), _tail_radius(d, beta_s)
    whitened = points / scale[..., None, :]
    centre = np.broadcast_to(center / scale, scale.shape)
    ball = np.asarray(radius / scale.min(axis=-1))  # Alg. 3 line 4: ‖S⁻¹‖₂ r₀ for diagonal S
    iterates, variances = [], []
    for rho_m in rho_steps:
        centre, ball, sigma = _coinpress_step(whitened, centre, ball, gamma1, gamma2, rho_m, noise)
        iterates.append(centre * scale)
        variances.append((sigma[..., None] * scale) ** 2)
    return np.stack(iterates), np.stack(variances)


def _coinpress_step(
    whitened: np.ndarray,
    centre: np.ndarray,
    ball: np.ndarray,
    gamma1: float,
    gamma2: float,
    rho_m: float,
    noise: NoiseSource,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Alg. 4 (MVM): project onto :math:`B_2(\tilde\mu, r + \gamma_1)`, add
    :math:`N(0, \sigma^2 I)` with :math:`\sigma = 2(r+\gamma_1)/(k\sqrt{2\rho_m})`, and return the
    new centre, radius :math:`\gamma_2\sqrt{1/k + \sigma^2}` and σ."""
    k = whitened.shape[-2]
    clip = ball + gamma1
    offsets = whitened - centre[..., None, :]
    norms = np.linalg.norm(offsets, axis=-1)
    shrink = np.minimum(1.0, clip[..., None] / np.maximum(norms, np.finfo(float).tiny))
    mean = centre + (offsets * shrink[..., None]).mean(axis=-2)
    sigma = 2 * clip / (k * math.sqrt(2 * rho_m))
    noisy = noise.add_gaussian(mean, np.broadcast_to(sigma[..., None], mean.shape))
    return noisy, gamma2 * np.sqrt(1 / k + sigma**2), sigma


# ------------------------------------------------------------------------------------------------
# Step 3: combining the iterates and the intervals (Thm. 2.9-2.12)
# ------------------------------------------------------------------------------------------------


def _precision_weighted(
    iterates: np.ndarray, variances: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r"""Thm. 2.9 / 2.11 with diagonal covariances: :math:`\sum_m \tau_m/\sigma_m^2 \big/ \sum_m
    1/\sigma_m^2` and its variance :math:`1/\sum_m \sigma_m^{-2}` (over the leading axis)."""
    precision = 1 / variances
    total = precision.sum(axis=0)
    return (precision * iterates).sum(axis=0) / total, 1 / total


def _variance_upper_bound(
    iterates: np.ndarray, variances: np.ndarray, beta_ub: float
) -> np.ndarray:
    r"""Cor. D.1 (Thm. 2.10, diagonal case), then :func:`psd_projection`.

    :math:`\tilde\Sigma_{jj} = \tilde S_j + c_j`, :math:`c_j = b_j\,\Phi^{-1}(1 - \beta^{ub}/d)`,
    where :math:`\tilde S` is the precision-weighted variance iterate and :math:`b_j^2` its
    variance; then negative entries of the diagonal matrix are clipped at 0.
    """
    combined, spread = _precision_weighted(iterates, variances)
    d = combined.shape[-1]
    upper = combined - np.sqrt(spread) * ndtri(beta_ub / d)
    diagonal = upper[..., :, None] * np.eye(d)
    return np.diagonal(psd_projection(diagonal), axis1=-2, axis2=-1).copy()


def _variance_bound(
    iterates: np.ndarray, variances: np.ndarray, beta_ub: float, high: np.ndarray
) -> np.ndarray:
    r"""The variance bound :math:`\tilde\Sigma_{jj}` GVDP uses, for both the whitening of the mean
    step (Alg. 3 line 2, App. C.6) and the interval (Thm. 2.12): never below Cor. D.1's.

    With :math:`\tilde S_j` the precision-weighted variance iterate and :math:`c_j = b_j
    \Phi^{-1}(1 - \beta^{ub}/d)` (see :func:`_variance_upper_bound`),

    .. math:: \tilde\Sigma_{jj} = \max(\tilde S_j, 0) + c_j \text{ if } \tilde S_j + c_j > 0,
              \qquad \tilde\Sigma_{jj} = v_j \text{ otherwise.}

    - **Floor** :math:`\max(\tilde S_j, 0)`: the BLB variance is ≥ 0, so a negative estimate is
      clipped before the margin is added. The result is ≥ Cor. D.1's :math:`\tilde S_j + c_j`,
      so it bounds :math:`\hat V_j^{BLB}` whenever that does (Thm. 2.10), and it is ≥
      :math:`c_j > 0`. Without it a bound near 0, whose :math:`s_j = \sqrt{k\tilde\Sigma_{jj}}`
      is near 0, inflates the whitened starting radius :math:`r_0 \max_j s_j^{-1}` (Alg. 3
      line 4), hence the noise on *every* coordinate (by ~10⁵ when the bound hit 0).
    - **Fallback** to the public :math:`v_j` (``bounds.variance_high``): Cor. D.1's bound ≤ 0 can
      only happen in its failure event (a positive variance is not bounded by 0), which the
      release itself reveals. :math:`v_j` bounds :math:`\operatorname{Var}(\hat\theta_j)` by
      assumption, whatever the noise, so that coordinate keeps a valid scale and interval, at the
      cost of a wider interval on it alone.

    :math:`c_j` depends only on public inputs (the CoinPress noise scales do not depend on the
    data) and :math:`\tilde S_j` is the ρ_Σ-zCDP release, so this is post-processing: the mean
    step's whitening is still fixed before it touches the data (Thm. C.2) and the accounting is
    unchanged.
    """
    paper = _variance_upper_bound(iterates, variances, beta_ub)
    combined, spread = _precision_weighted(iterates, variances)
    margin = -np.sqrt(spread) * ndtri(beta_ub / combined.shape[-1])
    return np.where(paper > 0, np.maximum(combined, 0.0) + margin, high)


def _release(
    theta_blb: np.ndarray,
    var_blb: np.ndarray,
    bounds: GVDPBounds,
    plan: _Plan,
    noise: NoiseSource,
) -> dict[str, np.ndarray]:
    """Alg. 1 lines 4–8 for every leading batch index of (..., k, d) BLB summaries."""
    k, d = theta_blb.shape[-2:]
    batch = theta_blb.shape[:-2] + (d,)
    high = bounds.variance_high
    tau = np.broadcast_to(bounds.spread(plan.resamples, plan.n // plan.k), batch)
    v_iter, v_var = _coinpress(
        var_blb,
        high / 2,
        float(np.linalg.norm(high)) / 2,
        tau,
        plan.rho.variance_steps,
        plan.beta_part,
        noise,
    )
    sampling = _variance_bound(v_iter, v_var, plan.beta_part, high)
    # App. C.6: Cov(θ̂ᵢᴮᴸᴮ) ≈ kΣ for √n-consistent estimators, so S = (kΣ̃)^{1/2} (Alg. 3 line 2).
    scale = np.sqrt(k * sampling)
    m_iter, m_var = _coinpress(
        theta_blb, bounds.center, bounds.radius, scale, plan.rho.mean_steps, plan.beta_part, noise
    )
    estimate, noise_variance = _precision_weighted(m_iter, m_var)
    variance = sampling + noise_variance
    half = ndtri(0.5 + plan.level / 2) * np.sqrt(variance)
    out = {
        "estimate": estimate,
        "low": estimate - half,
        "high": estimate + half,
        "variance": variance,
        "sampling_variance": sampling,
        "noise_variance": noise_variance,
        "mean_iterates": m_iter,
        "mean_iterate_variances": m_var,
        "variance_iterates": v_iter,
        "variance_iterate_variances": v_var,
    }
    return {key: _readonly(value) for key, value in out.items()}


# ------------------------------------------------------------------------------------------------
# Non-private reference
# ------------------------------------------------------------------------------------------------


def _plain_mean(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return x.mean(axis=0), x.var(axis=0, ddof=1) / x.shape[0]


def _plain_weighted_mean(x: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    total = weights.sum()
    estimate = weights @ x / total
    return estimate, (weights**2) @ (x - estimate) ** 2 / total**2


def _sandwich(X: np.ndarray, curvature: np.ndarray, residual: np.ndarray) -> np.ndarray:
    bread = np.linalg.inv((X * curvature[:, None]).T @ X)
    meat = (X * residual[:, None] ** 2).T @ X
    return np.diag(bread @ meat @ bread)


def _plain_ols(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    coef = np.linalg.lstsq(X, y, rcond=None)[0]
    return coef, _sandwich(X, np.ones(len(y)), y - X @ coef)


def _plain_logistic(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    coef = _fit_logistic([X[None], y[None]], np.ones((1, 1, len(y))), len(y))[0, 0]
    mu = expit(X @ coef)
    return coef, _sandwich(X, mu * (1 - mu), y - mu)


_NONPRIVATE: dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]] = {
    "mean": _plain_mean,
    "weighted_mean": _plain_weighted_mean,
    "ols": _plain_ols,
    "logistic": _plain_logistic,
}
