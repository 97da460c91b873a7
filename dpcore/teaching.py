"""The numbers behind the Learn page's explainers and presets, as tidy frames.

Pure numpy/scipy/pandas over :mod:`dpcore` (no streamlit, no plotly), so every number a chart shows
is unit-tested here. Each function names the formula and the paper it comes from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import gammaincinv, ndtr, ndtri

from dpcore import theory
from dpcore.accounting import ZCDP
from dpcore.datasets import synthetic_gaussian_mixture
from dpcore.estimators import CoinPressMean, run_strategy
from dpcore.estimators.gvdp import GVDPBounds, gvdp_coverage, nonprivate_ci
from dpcore.estimators.ratio import ratio_study
from dpcore.mechanisms import SimulationNoise, gaussian_sigma, laplace_scale
from dpcore.strata import Strata, shares_from_counts

# ---- What ε means -------------------------------------------------------------------------------


@dataclass(frozen=True)
class NeighbourNoise:
    r"""Output densities of the Laplace and Gaussian mechanisms on two neighbouring datasets.

    A statistic is :math:`f(D) = c` on dataset D and :math:`f(D') = c + \Delta` on its neighbour
    D′ (one more person; Δ is the sensitivity). ``frame`` has one row per output x and mechanism:
    ``x``, ``mechanism`` (``"Laplace"``/``"Gaussian"``), ``p_d``, ``p_d_prime`` and
    ``ratio`` = p(x | D) / p(x | D′).
    """

    epsilon: float
    delta: float
    sensitivity: float
    centre: float
    laplace_b: float
    gaussian_sigma: float
    # Gaussian: outputs below ``low_cut`` are more than e^ε times likelier under D than under D′,
    # outputs above ``high_cut`` more than e^ε times likelier under D′.
    low_cut: float
    high_cut: float
    # P[x < low_cut | D]: the chance of an output whose ratio exceeds e^ε (0 for Laplace).
    tail_probability: float
    frame: pd.DataFrame


def neighbour_noise(
    epsilon: float,
    delta: float,
    *,
    sensitivity: float = 1.0,
    centre: float = 100.0,
    points: int = 801,
) -> NeighbourNoise:
    r"""Densities and their ratio for Laplace (ε-DP) and Gaussian ((ε, δ)-DP) noise.

    Laplace: :math:`p(x \mid D) = \frac{1}{2b}e^{-|x - f(D)|/b}` with :math:`b = \Delta/\varepsilon`
    (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014, Thm. 3.6), so

    .. math:: \frac{p(x \mid D)}{p(x \mid D')} = e^{(|x - f(D')| - |x - f(D)|)/b}
              \in [e^{-\varepsilon}, e^{\varepsilon}]

    for every x, with the bounds reached outside [f(D), f(D′)].

    Gaussian: σ is the analytic Gaussian mechanism's (Balle & Wang 2018, Thm. 8), and the log
    ratio :math:`\Delta(\Delta/2 - (x - f(D)))/\sigma^2` is unbounded; it exceeds ε for
    :math:`x < f(D) + \Delta/2 - \varepsilon\sigma^2/\Delta`, an event of probability
    :math:`\Phi(\Delta/(2\sigma) - \varepsilon\sigma/\Delta)` under D (the first term of Balle &
    Wang's Thm. 8, which δ accounts for).
    """
    b = laplace_scale(sensitivity, epsilon)
    sigma = gaussian_sigma(sensitivity, epsilon, delta, method="analytic")
    other = centre + sensitivity
    shift = epsilon * sigma**2 / sensitivity
    midpoint = centre + sensitivity / 2
    # Wide enough for both densities and for where the Gaussian's ratio leaves [e^−ε, e^ε].
    half_width = max(4.5 * max(b, sigma), 2.5 * sensitivity, 1.25 * shift)
    x = np.linspace(centre - half_width, other + half_width, points)
    # Laplace, in log space so that the ratio is exact even where the densities underflow.
    lap_log_d = -np.abs(x - centre) / b - math.log(2 * b)
    lap_log_d2 = -np.abs(x - other) / b - math.log(2 * b)
    norm = -0.5 * math.log(2 * math.pi) - math.log(sigma)
    gau_log_d = norm - (x - centre) ** 2 / (2 * sigma**2)
    gau_log_d2 = norm - (x - other) ** 2 / (2 * sigma**2)
    frame = pd.concat(
        [
            pd.DataFrame(
                {
                    "x": x,
                    "mechanism": name,
                    "p_d": np.exp(log_d),
                    "p_d_prime": np.exp(log_d2),
                    "ratio": np.exp(log_d - log_d2),
                }
            )
            for name, log_d, log_d2 in (
                ("Laplace", lap_log_d, lap_log_d2),
                ("Gaussian", gau_log_d, gau_log_d2),
            )
        ],
        ignore_index=True,
    )
    return NeighbourNoise(
        epsilon=float(epsilon),
        delta=float(delta),
        sensitivity=float(sensitivity),
        centre=float(centre),
        laplace_b=float(b),
        gaussian_sigma=float(sigma),
        low_cut=float(midpoint - shift),
        high_cut=float(midpoint + shift),
        tail_probability=float(ndtr(sensitivity / (2 * sigma) - epsilon * sigma / sensitivity)),
        frame=frame,
    )


# ---- Why small groups pay more ------------------------------------------------------------------


def laplace_mean_error(sizes: np.ndarray | float, epsilon: float, width: float) -> np.ndarray:
    r"""Expected absolute error of a clipped mean released with Laplace noise, per group size.

    The clipped mean of :math:`n_g` values in [L, U] has sensitivity :math:`(U - L)/n_g` (public
    :math:`n_g`), so its noise is :math:`\mathrm{Lap}(b)` with :math:`b = (U - L)/(n_g\varepsilon)`
    (AAAI 2024, eq. 2; eq. 3 in the arXiv version) and :math:`E|\mathrm{Lap}(b)| = b`:

    .. math:: E|\hat p_g - p_g| = \frac{U - L}{n_g\,\varepsilon} \propto \frac{1}{n_g\,\varepsilon}.
    """
    sizes = np.asarray(sizes, dtype=float)
    if np.any(~np.isfinite(sizes) | (sizes <= 0)):
        raise ValueError(f"`sizes` must be finite and > 0, got {sizes!r}")
    return laplace_scale(width, epsilon) / sizes


def error_curve(epsilon: float, width: float, low: float = 10.0, high: float = 1e6) -> pd.DataFrame:
    """:func:`laplace_mean_error` on a log grid of group sizes: columns ``size``, ``error``."""
    sizes = np.geomspace(low, high, 121)
    return pd.DataFrame({"size": sizes, "error": laplace_mean_error(sizes, epsilon, width)})


# ---- Stratify or not ----------------------------------------------------------------------------


def expected_sorted_shares(
    k: int, alpha: float, *, draws: int | None = None, seed: int = 0
) -> np.ndarray:
    r"""Mean of the sorted (largest first) shares of Dirichlet(α, …, α) draws over k groups.

    Draws :math:`g_i = G_i / \sum_j G_j` with :math:`G_i \sim \mathrm{Gamma}(\alpha)` (the
    Dirichlet construction) from fixed uniforms, so the result is smooth in α and deterministic —
    the same construction as :func:`dpcore.theory.dirichlet_alpha`'s fit. Shows what group sizes
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


# ---- CoinPress step by step ---------------------------------------------------------------------


def coinpress_steps(
    strata: Strata,
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
    :meth:`dpcore.estimators.CoinPressMean.run`: step i clips to
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


# ---- Preset: the stratification paper's Figure 1 on its New York example --------------------------

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
    \log n)`) and the best case :math:`(k - 1) + \log(n - k)`, via :mod:`dpcore.theory`.
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


# ---- Preset: the stratification paper's Figure 3 ------------------------------------------------

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
    (:func:`dpcore.datasets.synthetic_gaussian_mixture`, k = 10, α = 1), runs ``replicates``
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
            strata = Strata.from_frame(df, "group", "value")
            shares = shares_from_counts(strata)
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


# ---- Why confidence intervals break under DP (Miao & Li 2022) -----------------------------------

RATIO_CI_EPSILONS = (0.1, 0.2, 0.5, 1.0, 2.0, 4.0)
RATIO_CI_SIZES = (1_000, 2_000, 5_000, 10_000, 20_000)
RATIO_CI_REPS = 400
RATIO_CI_B = 200
RATIO_CI_METHODS = ("public", "none", "monte_carlo", "analytical")


def ratio_coverage_sweep(
    n: int,
    *,
    weighted: bool = False,
    epsilons: tuple[float, ...] = RATIO_CI_EPSILONS,
    reps: int = RATIO_CI_REPS,
    B: int = RATIO_CI_B,
    seed: int = 0,
) -> pd.DataFrame:
    r"""Coverage and width of 95% ratio intervals across ε: no correction, Monte Carlo and
    analytical correction, and the non-private interval (Miao & Li 2022, §3, Table 1's design).

    The paper's simulation through :func:`dpcore.estimators.ratio.ratio_study`: s ~ Beta(2, 2),
    y ~ Bernoulli(s/1.1) (true ratio 1.1), w ~ Exp(1) clipped to [1/3, 3] when ``weighted``;
    classic Gaussian mechanism (eq. 5), δ = 1e-6 and ε split evenly over the released sums; ``reps``
    data sets, each released once per ε (common random numbers across ε). The corrected variance
    is the delta method (eq. 1) on the noisy sums (eq. 2–4) plus the noise variances of Σws and
    Σwy (§2.4.3), or plus a Monte Carlo estimate of the noise's effect (§2.4.2, ``B`` draws).

    Returns one row per ε and method (``"public"``, ``"none"``, ``"monte_carlo"``,
    ``"analytical"``): epsilon, method, coverage, coverage_se (binomial, √(p(1 − p)/reps)), width
    (mean over the releases that form an interval), flagged (releases with no interval; they count
    as misses, as in the paper's code), reps, n, weighted, effective_n.
    """
    study = ratio_study(
        n=n, epsilon=tuple(epsilons), weighted=bool(weighted), method=RATIO_CI_METHODS,
        reps=reps, B=B, rng=seed,
    )  # fmt: skip
    coverage = study["coverage"].to_numpy()
    study["coverage_se"] = np.sqrt(coverage * (1 - coverage) / reps)
    columns = ["epsilon", "method", "coverage", "coverage_se", "width", "flagged", "reps", "n"]
    return study[[*columns, "weighted", "effective_n"]].reset_index(drop=True)


def kish_effective_n(n: int, weight_bound: float = 3.0) -> float:
    r"""Expected Kish effective sample size :math:`n\,E[w]^2/E[w^2]` of the ratio paper's weights,
    w ~ Exp(1) clipped to :math:`[1/u_w, u_w]` (Miao & Li 2022, §3; Kish 1965).

    With :math:`a = 1/u_w`, :math:`b = u_w`: :math:`E[w] = a(1 - e^{-a}) + b e^{-b} +
    \int_a^b x e^{-x}dx` and likewise for :math:`E[w^2]`, in closed form. For n = 5,000 and
    u_w = 3 it is 3,080 (the paper prints 3,032 in Table 1 and 3,082 in Table 2).
    """
    a, b = 1 / weight_bound, weight_bound
    # ∫ x e^{-x} = −(x + 1)e^{-x};  ∫ x² e^{-x} = −(x² + 2x + 2)e^{-x}
    first = (a + 1) * math.exp(-a) - (b + 1) * math.exp(-b)
    second = (a * a + 2 * a + 2) * math.exp(-a) - (b * b + 2 * b + 2) * math.exp(-b)
    mean = a * (1 - math.exp(-a)) + b * math.exp(-b) + first
    square = a * a * (1 - math.exp(-a)) + b * b * math.exp(-b) + second
    return n * mean**2 / square


# ---- Loose bounds, still valid (Covington et al.) -----------------------------------------------

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

    - **GVDP** (Covington et al., Alg. 1; :func:`dpcore.estimators.gvdp.gvdp_coverage`) reads it
      as a bound on the *mean*, with the sampling variance bounded by c times its true value
      (:meth:`~dpcore.estimators.gvdp.GVDPBounds.overestimated`); k BLB subsets, ``resamples``
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


# ---- Preset: the GVDP paper's OLS demonstration (Covington et al., §3, Figure 2) ----------------

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
