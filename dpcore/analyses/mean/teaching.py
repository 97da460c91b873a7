"""The numbers behind the Learn page's mean explainers and the stratification paper's
presets (Rosenblatt, Stoyanovich & Musco, AAAI 2024: Figure 1, Figure 3, CoinPress step by step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import gammaincinv

from dpcore.analyses.mean.coinpress import CoinPressMean
from dpcore.analyses.mean.estimators import LaplaceMean
from dpcore.analyses.mean.found_bounds import PrivatelyBounded
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import run_strategy
from dpcore.foundations import theory
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.datasets import synthetic_gaussian_mixture
from dpcore.foundations.mechanisms import SimulationNoise, laplace_scale
from dpcore.foundations.private_bounds import PrivateBounds
from dpcore.foundations.validation import shown


def laplace_mean_error(sizes: np.ndarray | float, epsilon: float, width: float) -> np.ndarray:
    r"""Expected absolute error of a clipped mean released with Laplace noise, per group size.

    The clipped mean of :math:`n_g` values in [L, U] has sensitivity :math:`(U - L)/n_g` (public
    :math:`n_g`), so its noise is :math:`\mathrm{Lap}(b)` with :math:`b = (U - L)/(n_g\varepsilon)`
    (AAAI 2024, eq. 2; eq. 3 in the arXiv version) and :math:`E|\mathrm{Lap}(b)| = b`:

    .. math:: E|\hat p_g - p_g| = \frac{U - L}{n_g\,\varepsilon} \propto \frac{1}{n_g\,\varepsilon}.
    """
    sizes = np.asarray(sizes, dtype=float)
    if np.any(~np.isfinite(sizes) | (sizes <= 0)):
        raise ValueError(f"`sizes` must be finite and > 0, got {shown(sizes)}")
    return laplace_scale(width, epsilon) / sizes


def error_curve(epsilon: float, width: float, low: float = 10.0, high: float = 1e6) -> pd.DataFrame:
    """:func:`laplace_mean_error` on a log grid of group sizes: columns ``size``, ``error``."""
    sizes = np.geomspace(low, high, 121)
    return pd.DataFrame({"size": sizes, "error": laplace_mean_error(sizes, epsilon, width)})


def expected_sorted_shares(
    k: int, alpha: float, *, draws: int | None = None, seed: int = 0
) -> np.ndarray:
    r"""Mean of the sorted (largest first) shares of Dirichlet(α, …, α) draws over k groups.

    Draws :math:`g_i = G_i / \sum_j G_j` with :math:`G_i \sim \mathrm{Gamma}(\alpha)` (the
    Dirichlet construction) from fixed uniforms, so the result is smooth in α and deterministic —
    the same construction as :func:`dpcore.foundations.theory.dirichlet_alpha`'s fit. Shows what group sizes
    "look like" for a given α (AAAI 2024, appendix on the Dirichlet distribution).
    """
    draws = max(20, 20_000 // k) if draws is None else draws
    uniforms = np.random.default_rng(seed).random((draws, k)) * (1 - 2e-12) + 1e-12
    gammas = gammaincinv(alpha, uniforms)
    shares = gammas / gammas.sum(axis=1, keepdims=True)
    return np.sort(shares, axis=1)[:, ::-1].mean(axis=0)


def position_between(value: float, best: float, worst: float) -> float:
    r"""How far ``value`` sits from the worst case towards the best case, as a fraction.

    :math:`(\text{worst} - \text{value}) / (\text{worst} - \text{best})` for the Figure-1 terms
    (AAAI 2024, Prop. 8 and Thm. 9): 0 at the worst case (equal groups), 1 at the best case (one
    majority group); above 1 means the bound fell under the best case.
    """
    return (worst - value) / (worst - best)


def coinpress_steps(
    strata: GroupValues,
    group: int,
    *,
    prior: tuple[float, float],
    sigma: float,
    steps: int,
    rho: float,
    beta: float,
    rng: np.random.Generator | int | None,
) -> pd.DataFrame:
    r"""The interval after each step of univariate CoinPress on one group (seeded simulation).

    Alg. 1–2 of AAAI 2024, appendix B (Biswas, Dong, Kamath & Ullman 2020), through
    :meth:`dpcore.analyses.mean.CoinPressMean.run`: step i clips to
    :math:`[\ell - w, r + w]`, :math:`w = \sigma\sqrt{2\log(2n/\beta_i)}`, adds
    :math:`N(0, s_i^2)`, :math:`s_i = (r - \ell + 2w)/(n\sqrt{2\rho_i})`, and keeps
    :math:`Z \pm \sqrt{2(\sigma^2/n + s_i^2)\log(2/\beta_i)}`.

    Returns one row per step (step 0 is the prior): ``step``, ``low``, ``high``, ``width``,
    ``rho`` (the step's share of ρ; 0 for the prior).
    """
    estimator = CoinPressMean(prior=prior, sigma=sigma, steps=steps, beta=beta)
    one = strata.subset(np.array([group]))
    _, intervals = estimator.run(
        one, ZCDP(rho), replicates=None, noise=SimulationNoise(rng=rng)
    )  # (steps, 1, 2)
    lows = np.concatenate([[prior[0]], intervals[:, 0, 0]])
    highs = np.concatenate([[prior[1]], intervals[:, 0, 1]])
    rhos = np.concatenate([[0.0], rho * np.asarray(estimator.rho_split)])
    return pd.DataFrame(
        {
            "step": np.arange(steps + 1),
            "low": lows,
            "high": highs,
            "width": highs - lows,
            "rho": rhos,
        }
    )


# AAAI 2024 (arXiv version), appendix Table 3: ACSEmployment, New York 2018 (Folktables), group
# sizes by SEX × RAC1P. Summed over sex they give the paper's RAC1P shares [0.70, 0.12, 0.086, 0.056,
# 0.029, ...] and n = 196,967 of its "Practical implications of theory" example.
ACS_NY_2018_SEX_RACE: tuple[tuple[str, str, int], ...] = (
    ("Female", "White", 70881),
    ("Male", "White", 67593),
    ("Female", "Black", 12947),
    ("Male", "Black", 11077),
    ("Female", "Asian", 8900),
    ("Male", "Asian", 8130),
    ("Female", "Some other race alone", 5668),
    ("Male", "Some other race alone", 5296),
    ("Female", "Two or more races", 3026),
    ("Male", "Two or more races", 2620),
    ("Male", "American Indian alone", 277),
    ("Female", "American Indian alone", 231),
    ("Male", "American Indian and/or Alaska Native (tribes not specified)", 125),
    ("Female", "American Indian and/or Alaska Native (tribes not specified)", 119),
    ("Male", "Native Hawaiian", 42),
    ("Female", "Native Hawaiian", 30),
    ("Female", "Alaska Native alone", 3),
    ("Male", "Alaska Native alone", 2),
)


PAPER_NY_ALPHA = 0.13  # "we find α ≈ 0.13"


PAPER_NY_BETTER = (
    0.80  # "approximately ~80% better than the worst case error, relative to the best"
)


def acs_ny_sizes(by: str) -> pd.DataFrame:
    """Group sizes of the paper's New York example, largest first: ``group``, ``size``.

    ``by`` is ``"race"`` (RAC1P, k = 9, the paper's example) or ``"sex_race"`` (SEX × RAC1P,
    k = 18, the paper's Table 3 as printed).
    """
    frame = pd.DataFrame(ACS_NY_2018_SEX_RACE, columns=["sex", "race", "size"])
    if by == "race":
        frame = frame.groupby("race", as_index=False, sort=False)["size"].sum()
        frame["group"] = frame["race"]
    elif by == "sex_race":
        frame["group"] = frame["race"] + " × " + frame["sex"]
    else:
        raise ValueError(f"`by` must be 'race' or 'sex_race', got {by!r}")
    frame = frame.sort_values(["size", "group"], ascending=[False, True], ignore_index=True)
    return frame[["group", "size"]]


@dataclass(frozen=True)
class Figure1Reading:
    """The Figure-1 terms for one set of group sizes, read at the fitted and a chosen α."""

    n: int
    k: int
    alpha_sorted: float  # our default fit (sorted shares)
    alpha_mle: float  # maximum-likelihood fit
    observed: float  # Σ log n_g of the data
    worst: float
    best: float
    alpha_read: float  # the α at which the bound is read
    expected_at_read: float
    better_at_read: float  # position_between(expected at α_read)
    better_observed: float  # position_between(observed)


def figure1_reading(
    sizes: np.ndarray,
    alpha_read: float,
    *,
    alpha_sorted: float | None = None,
    alpha_mle: float | None = None,
) -> Figure1Reading:
    r"""Fit α to the group sizes and read Prop. 8, Thm. 9 and the best case at ``alpha_read``.

    AAAI 2024, Prop. 8 (:math:`k\log(n/k)`), Thm. 9 (:math:`k(\psi(\alpha) - \psi(k\alpha) +
    \log n)`) and the best case :math:`(k - 1) + \log(n - k)`, via :mod:`dpcore.foundations.theory`.
    ``alpha_sorted`` and ``alpha_mle`` skip the fits when already known (they do not depend on
    ``alpha_read``).
    """
    sizes = np.asarray(sizes, dtype=float)
    n, k = int(sizes.sum()), int(sizes.size)
    shares = sizes / sizes.sum()
    worst = theory.worst_case_log_sizes(n, k)
    best = theory.best_case_log_sizes(n, k)
    observed = theory.observed_log_sizes(sizes)
    expected = theory.dirichlet_expected_log_sizes(n, k, alpha_read)
    return Figure1Reading(
        n=n,
        k=k,
        alpha_sorted=theory.dirichlet_alpha(shares) if alpha_sorted is None else alpha_sorted,
        alpha_mle=theory.dirichlet_alpha(shares, method="mle") if alpha_mle is None else alpha_mle,
        observed=observed,
        worst=worst,
        best=best,
        alpha_read=float(alpha_read),
        expected_at_read=expected,
        better_at_read=position_between(expected, best, worst),
        better_observed=position_between(observed, best, worst),
    )


FIGURE3_SIZES = (1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000)


FIGURE3_K = 10


FIGURE3_ALPHA = 1.0


FIGURE3_PRIOR = (-10.0, 10.0)


FIGURE3_SIGMA = 2.0  # the generator's largest group standard deviation


FIGURE3_STEPS = 2


FIGURE3_STRATEGIES = {
    "stratified": "StratCoinpress (stratified)",
    "global_only": "CoinPress on everyone (vanilla i)",
}


def figure3_study(
    rho: float,
    *,
    data_seeds: int,
    replicates: int,
    sizes: tuple[int, ...] = FIGURE3_SIZES,
    seed: int = 0,
) -> pd.DataFrame:
    r"""Global-mean error of StratCoinpress and CoinPress against n (AAAI 2024, Figure 3).

    For each n and each of ``data_seeds`` datasets from the appendix-B generator
    (:func:`dpcore.foundations.datasets.synthetic_gaussian_mixture`, k = 10, α = 1), runs ``replicates``
    releases of both strategies at ρ-zCDP (CoinPress prior (−10, 10), σ = 2, t = 2) and records
    the normalized absolute error :math:`|\hat\mu - \mu|/|\mu|` averaged over replicates. The
    stratified estimate recombines the DP group estimates with public shares (Alg. 3; AAAI eq. 3,
    arXiv eq. 4).

    Returns one row per n and strategy: ``n``, ``strategy``, ``error`` (mean over datasets),
    ``se`` (its standard error over datasets), ``abs_error`` (mean absolute error), and one row
    per n with strategy ``"gap"``: stratified − vanilla, paired by dataset, with its SE.
    """
    estimator = CoinPressMean(prior=FIGURE3_PRIOR, sigma=FIGURE3_SIGMA, steps=FIGURE3_STEPS)
    budget = ZCDP(rho)
    rows = []
    for n in sizes:
        per_seed = {s: [] for s in FIGURE3_STRATEGIES}
        absolute = {s: [] for s in FIGURE3_STRATEGIES}
        for data_seed in range(data_seeds):
            df = synthetic_gaussian_mixture(
                n, k=FIGURE3_K, alpha=FIGURE3_ALPHA, rng=seed + data_seed
            )
            strata = GroupValues.from_frame(df, "group", "value")
            shares = strata.shares
            truth = strata.global_mean
            for j, strategy in enumerate(FIGURE3_STRATEGIES):
                result = run_strategy(
                    strategy, strata, estimator, budget, shares,
                    replicates=replicates, rng=1000 * (seed + data_seed) + j,
                )  # fmt: skip
                abs_err = np.abs(result.global_estimate - truth)
                per_seed[strategy].append(abs_err.mean() / abs(truth))
                absolute[strategy].append(abs_err.mean())
        for strategy in FIGURE3_STRATEGIES:
            errors = np.array(per_seed[strategy])
            rows.append((n, strategy, errors.mean(), _se(errors), np.mean(absolute[strategy])))
        gap = np.array(per_seed["stratified"]) - np.array(per_seed["global_only"])
        gap_abs = np.array(absolute["stratified"]) - np.array(absolute["global_only"])
        rows.append((n, "gap", gap.mean(), _se(gap), gap_abs.mean()))
    return pd.DataFrame(rows, columns=["n", "strategy", "error", "se", "abs_error"])


def _se(values: np.ndarray) -> float:
    return float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else float("nan")


def clipping_tradeoff(
    group: GroupValues, low: float, highs: np.ndarray, epsilon: float
) -> pd.DataFrame:
    r"""The clipping trade-off of one group's Laplace mean (public size n), as the upper bound U
    moves over ``highs`` with the lower bound at ``low``: the clipping ``bias``
    :math:`\bar x_{[L,U]} - \bar x`, the noise's standard deviation
    :math:`\sqrt2\,(U - L)/(n\varepsilon)` (AAAI 2024, eq. 3) and their combined ``rmse``
    :math:`\sqrt{\mathrm{bias}^2 + \mathrm{noise}^2}`. Too narrow a range: bias; too wide: noise.
    A curator's view (the bias reads the confidential values)."""
    highs = np.asarray(highs, dtype=float)
    n = int(group.sizes[0])
    clipped = group.clipped_sums(np.full((highs.size, 1), low), highs[:, None])[:, 0] / n
    bias = clipped - float(group.means[0])
    noise = math.sqrt(2) * (highs - low) / (n * epsilon)
    return pd.DataFrame({"high": highs, "bias": bias, "noise": noise,
                         "rmse": np.sqrt(bias**2 + noise**2)})  # fmt: skip


def found_bounds_draws(
    group: GroupValues,
    search: tuple[float, float],
    epsilon: float,
    fraction: float,
    *,
    replicates: int = 400,
    rng: np.random.Generator | int | None = None,
) -> dict:
    """Seeded simulated releases of one group's Laplace mean that find their bounds privately
    within ``search`` at the same ``epsilon`` (``fraction`` of it for the bounds): the upper
    bounds they found, their lower bounds, and the releases' root mean square error against the
    true mean (a curator's view). The bounds are quantiles chosen by the exponential mechanism
    over a public grid (Smith 2011, as in :class:`PrivateBounds`); the mean is AAAI 2024, eq. 3."""
    estimator = PrivatelyBounded(LaplaceMean(bounds=search),
                                 PrivateBounds(search, fraction=fraction))  # fmt: skip
    result = run_strategy(
        "stratified", group, estimator, PureDP(epsilon), np.array([1.0]), replicates=replicates,
        noise=SimulationNoise(rng=rng),
    )  # fmt: skip
    low = np.broadcast_to(result.bounds.low, (replicates, 1))[:, 0]
    high = np.broadcast_to(result.bounds.high, (replicates, 1))[:, 0]
    estimates = np.clip(result.group_estimates[:, 0], low, high)
    return {
        "low": low, "high": high,
        "rmse": float(np.sqrt(np.mean((estimates - float(group.means[0])) ** 2))),
    }  # fmt: skip
