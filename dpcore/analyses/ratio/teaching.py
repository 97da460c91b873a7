"""The numbers behind the Learn page's ratio explainer: why intervals break under DP
(Miao & Li 2022, §2.4 and §3).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpcore.analyses.ratio.study import ratio_study

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

    The paper's simulation through :func:`dpcore.analyses.ratio.ratio_study`: s ~ Beta(2, 2),
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
