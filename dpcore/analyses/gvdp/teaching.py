"""The numbers behind the Learn page's GVDP explainer and preset (Covington et al.: loose
bounds stay valid, §3; the OLS experiment, Fig. 2).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.special import ndtri

from dpcore.analyses.gvdp.bounds import GVDPBounds
from dpcore.analyses.gvdp.estimator import gvdp_coverage, nonprivate_ci

LOOSE_FACTORS = (1, 3, 10, 30, 100, 1000)


LOOSE_MEAN = 1.0  # rows x ~ N(1, 1): the paper's §3 example, N(μ = 1, σ² = 1)


LOOSE_N = 5_000


LOOSE_K = 250  # b = n/k = 20 rows per BLB subset


LOOSE_RESAMPLES = 3


LOOSE_REPLICATIONS = 100


LOOSE_METHODS = {
    "gvdp": "GVDP (bounds on the mean and its variance)",
    "clipped": "clipped mean + Gaussian noise (range for every row)",
    "nonprivate": "non-private mean (no noise, no clipping)",
}


def clipped_gaussian_mean(
    x: np.ndarray, low: float, high: float, rho: float, z: np.ndarray, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray, float]:
    r"""The naive private mean of each row of ``x`` (shape (R, n)): clip every value to
    [``low``, ``high``], average, add :math:`N(0, s^2)` with
    :math:`s = (\text{high} - \text{low})/(n\sqrt{2\rho})` (ρ-zCDP, n public; Bun & Steinke 2016,
    Prop. 1.6), using the standard normal draws ``z`` (shape (R,)).

    Its interval adds the noise variance to the clipped rows' sampling variance,
    :math:`\hat\mu \pm z_{1-\alpha/2}\sqrt{s_{clip}^2/n + s^2}`, so it is valid whenever the
    clipping changes nothing; the sampling variance is read from the data (not private — a
    favour to this method). Returns (estimates, half-widths, s).
    """
    n = x.shape[-1]
    clipped = np.clip(x, low, high)
    sd = (high - low) / (n * math.sqrt(2 * rho))
    estimate = clipped.mean(axis=-1) + sd * np.asarray(z)
    half = float(ndtri(0.5 + level / 2)) * np.sqrt(clipped.var(axis=-1, ddof=1) / n + sd**2)
    return estimate, half, sd


def loose_bounds_study(
    rho: float,
    *,
    factors: tuple[float, ...] = LOOSE_FACTORS,
    n: int = LOOSE_N,
    k: int = LOOSE_K,
    resamples: int = LOOSE_RESAMPLES,
    replications: int = LOOSE_REPLICATIONS,
    level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    r"""GVDP and a naive clipped mean as the public bounds get ``factor`` times too loose.

    Rows :math:`x_i \sim N(1, 1)`, n of them, ``replications`` data sets shared by every factor
    and method (common random numbers). For a factor c both methods get the same public range
    :math:`[-c\mu, c\mu]` (μ = 1; the paper's §3: "μ ∈ [−100, 100]" for c = 100):

    - **GVDP** (Covington et al., Alg. 1; :func:`dpcore.analyses.gvdp.gvdp_coverage`) reads it
      as a bound on the *mean*, with the sampling variance bounded by c times its true value
      (:meth:`~dpcore.analyses.gvdp.GVDPBounds.overestimated`); k BLB subsets, ``resamples``
      resamples each, t = 5 CoinPress steps, ρ split evenly between mean and variance. The BLB and
      the noise draws are the same for every factor (one seed), so only the bounds change.
    - **Clipped mean** (:func:`clipped_gaussian_mean`) clips *every row* to that range and adds
      Gaussian noise for ρ-zCDP: its noise grows ∝ c, and a range that is too tight (c = 1
      clips about half of the rows) biases it.
    - **Non-private** :math:`\bar x \pm z\,s/\sqrt n`, the same for every factor (reference).

    Returns one row per factor and method: factor, method, estimate, low, high (the first data
    set's release, for the chart), coverage (share of the ``replications`` intervals that
    contain μ), coverage_se, mean_width, median_width, bias (mean estimate − μ), clipped_share
    (clipped mean: share of the first data set's rows outside the range), reps.
    """
    truth = LOOSE_MEAN
    generator = np.random.default_rng(seed)
    data = generator.normal(truth, 1.0, (replications, n))
    z = generator.standard_normal(replications)  # the clipped mean's noise, shared across c
    quantile = float(ndtri(0.5 + level / 2))
    rows = []

    def add(factor, method, estimates, lows, highs, clipped_share=math.nan):
        covered = (lows <= truth) & (truth <= highs)
        p = float(covered.mean())
        widths = highs - lows
        rows.append(
            {
                "factor": float(factor), "method": method, "estimate": float(estimates[0]),
                "low": float(lows[0]), "high": float(highs[0]), "coverage": p,
                "coverage_se": math.sqrt(p * (1 - p) / replications),
                "mean_width": float(widths.mean()), "median_width": float(np.median(widths)),
                "bias": float(estimates.mean() - truth), "clipped_share": clipped_share,
                "reps": replications,
            }
        )  # fmt: skip

    means = data.mean(axis=1)
    plain_half = quantile * data.std(axis=1, ddof=1) / math.sqrt(n)
    for factor in factors:
        rows_of = iter(data)
        bounds = GVDPBounds.overestimated(
            [truth], [1.0 / n], factor, resamples=resamples, subset_size=n // k
        )
        result = gvdp_coverage(
            lambda _rng, rows_of=rows_of: next(rows_of), [truth], "mean",
            replications=replications, k=k, rho=rho, resamples=resamples, bounds=bounds,
            level=level, rng=seed + 1,
        )  # fmt: skip
        add(factor, "gvdp", result.estimates[:, 0], result.low[:, 0], result.high[:, 0])
        low, high = -factor * abs(truth), factor * abs(truth)
        estimate, half, _ = clipped_gaussian_mean(data, low, high, rho, z, level)
        share = float(np.mean((data[0] < low) | (data[0] > high)))
        add(factor, "clipped", estimate, estimate - half, estimate + half, share)
        add(factor, "nonprivate", means, means - plain_half, means + plain_half)
    return pd.DataFrame(rows)


GVDP_OLS_D = 5


GVDP_OLS_BETA = (64.0, 27.0, 4.0, 2.0, 81.0)  # 100·U(0, 1) draws (seed 0), rounded


GVDP_OLS_NOISE = 10.0  # σ₀: the error sd is σ₀√n, so Var(β̂) = σ₀² C⁻¹ whatever n


GVDP_OLS_RHO = 0.1


GVDP_OLS_FACTOR = 100.0


GVDP_OLS_RESAMPLES = 10


GVDP_OLS_BETA_FAILURE = 0.1


# Figure 2's panels: (n, k here, k in the paper, replications here; the paper runs 100).
GVDP_OLS_PANELS: dict[str, tuple[int, int, int, int]] = {
    "a": (10_000, 250, 250, 40),
    "b": (10_000, 400, 1_000, 40),
    "c": (50_000, 1_000, 1_000, 20),
    "d": (100_000, 1_000, 1_000, 12),
}


def gvdp_ols_singular_values(d: int = GVDP_OLS_D) -> np.ndarray:
    r"""Singular-value profile of the OLS demo's covariates: scikit-learn's
    ``make_low_rank_matrix`` with effective rank d − 1 and tail strength ½,
    :math:`s_i = \tfrac12 e^{-(i/(d-1))^2} + \tfrac12 e^{-0.1\,i/(d-1)}` (the authors' code
    generates its data with ``make_regression(effective_rank=d - 1, noise=10)``)."""
    i = np.arange(d)
    rank = d - 1
    return 0.5 * np.exp(-((i / rank) ** 2)) + 0.5 * np.exp(-0.1 * i / rank)


def gvdp_ols_design(d: int = GVDP_OLS_D) -> tuple[np.ndarray, np.ndarray]:
    r"""The covariates' covariance :math:`C = V\operatorname{diag}(s^2)V^\top` (V a fixed random
    rotation, seed 0) and its Cholesky factor, so that :math:`X = Z L^\top`, Z standard normal."""
    rotation, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((d, d)))
    covariance = rotation @ np.diag(gvdp_ols_singular_values(d) ** 2) @ rotation.T
    return covariance, np.linalg.cholesky(covariance)


def gvdp_ols_sampling_variance(n: int) -> np.ndarray:
    r"""Exact :math:`\operatorname{Var}(\hat\beta_j)` of the demo: with Gaussian rows,
    :math:`E[(X^\top X)^{-1}] = C^{-1}/(n - d - 1)` and error variance :math:`\sigma_0^2 n`, so
    :math:`\operatorname{Var}(\hat\beta) = \sigma_0^2 n\,\operatorname{diag}(C^{-1})/(n - d - 1)`
    — about the same for every n (the paper: "we increase the underlying noise in the data as n
    increases such that the non-private confidence intervals are essentially constant")."""
    covariance, _ = gvdp_ols_design()
    d = covariance.shape[0]
    return GVDP_OLS_NOISE**2 * n * np.diag(np.linalg.inv(covariance)) / (n - d - 1)


def gvdp_ols_study(
    n: int,
    k: int,
    *,
    replications: int,
    rho: float = GVDP_OLS_RHO,
    factor: float = GVDP_OLS_FACTOR,
    resamples: int = GVDP_OLS_RESAMPLES,
    level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    r"""A small rerun of the GVDP paper's OLS demonstration (Covington et al., §3, Figure 2).

    Each replication draws n rows :math:`y = X\beta + \varepsilon` with d = 5 correlated Gaussian
    covariates (:func:`gvdp_ols_design`, no intercept) and :math:`\varepsilon \sim N(0,
    \sigma_0^2 n)`, then runs GVDP (ρ = 0.1 zCDP, t = 5, k subsets, ``resamples`` BLB resamples,
    bounds ``factor`` = 100 times looser than the tightest, β = 0.1) and the non-private OLS
    interval (HC0 sandwich) on the same data.

    Returns one row per replication and coefficient: run, coefficient (1 to d), truth, estimate,
    low, high, covered, np_estimate, np_low, np_high, np_covered.
    """
    beta = np.array(GVDP_OLS_BETA)
    _, factor_l = gvdp_ols_design(beta.size)
    noise_sd = GVDP_OLS_NOISE * math.sqrt(n)
    plain = []

    def generate(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X = rng.standard_normal((n, beta.size)) @ factor_l.T
        y = X @ beta + rng.normal(0.0, noise_sd, n)
        plain.append(nonprivate_ci((X, y), "ols", level=level))
        return X, y

    bounds = GVDPBounds.overestimated(
        beta, gvdp_ols_sampling_variance(n), factor, resamples=resamples, subset_size=n // k
    )
    result = gvdp_coverage(
        generate, beta, "ols", replications=replications, k=k, rho=rho, resamples=resamples,
        bounds=bounds, level=level, beta=GVDP_OLS_BETA_FAILURE, rng=seed,
    )  # fmt: skip
    runs, d = result.estimates.shape
    np_estimate = np.stack([p.estimate for p in plain])
    np_low = np.stack([p.low for p in plain])
    np_high = np.stack([p.high for p in plain])
    truth = np.broadcast_to(beta, (runs, d))
    return pd.DataFrame(
        {
            "run": np.repeat(np.arange(runs), d),
            "coefficient": np.tile(np.arange(1, d + 1), runs),
            "truth": truth.ravel(),
            "estimate": result.estimates.ravel(),
            "low": result.low.ravel(),
            "high": result.high.ravel(),
            "covered": result.covered.ravel(),
            "np_estimate": np_estimate.ravel(),
            "np_low": np_low.ravel(),
            "np_high": np_high.ravel(),
            "np_covered": ((np_low <= truth) & (truth <= np_high)).ravel(),
        }
    )


def gvdp_ols_summary(intervals: pd.DataFrame) -> pd.DataFrame:
    """Per coefficient of :func:`gvdp_ols_study`: coverage (GVDP and non-private), their binomial
    standard errors, median interval widths and the width ratio GVDP / non-private, plus a row
    ``coefficient = 0`` pooling all coefficients. Medians, because in the β failure event a
    coefficient falls back to its public variance bound and its interval widens a few times,
    which would pull a mean of widths up."""
    frame = intervals.assign(
        width=intervals["high"] - intervals["low"],
        np_width=intervals["np_high"] - intervals["np_low"],
    )
    pooled = frame.assign(coefficient=0)
    rows = []
    for coefficient, part in pd.concat([frame, pooled]).groupby("coefficient"):
        reps = len(part)
        p, q = part["covered"].mean(), part["np_covered"].mean()
        width, np_width = part["width"].median(), part["np_width"].median()
        rows.append(
            {
                "coefficient": int(coefficient), "coverage": float(p),
                "coverage_se": math.sqrt(p * (1 - p) / reps), "np_coverage": float(q),
                "width": float(width), "np_width": float(np_width),
                "width_ratio": float(width / np_width), "intervals": reps,
            }
        )  # fmt: skip
    return pd.DataFrame(rows)
