r"""The Learn page's simulation of the sampling paper's main point (Raskhodnikova, Sivakumar,
Smith & Swanberg, NeurIPS 2021): a private *sampler* needs far fewer records than private
*learning* of the same distribution.

The same private distribution :math:`\hat p` of Alg. 3 serves both: used as a learned
distribution its error is :math:`E\,d_{TV}(\hat p, P)`, which the data's own sampling error
:math:`\sqrt{K/n}` dominates; used to draw one record, the error is that of the record's
distribution, :math:`d_{TV}(E\hat p, P)`, which only the projection's bias feeds, so it falls like
:math:`K/(\varepsilon n)` (Thm. 1.4). Vectorized numpy, seeded.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpcore.analyses.sample.draw import kary_guarantee, product_guarantee, product_rho
from dpcore.analyses.sample.samplers import kary_laplace_scale, project_simplex
from dpcore.foundations.mechanisms import laplace_noise
from dpcore.foundations.validation import as_rng, positive_int, positive_number

__all__ = ["BOUNDS", "records_needed", "sampling_versus_learning", "zipf_distribution"]

BOUNDS = (
    ("k-ary distributions (K categories)", "K/α²", "K/(αε)  (Thm. 1.4, 1.5)",
     "K/α² + K/(αε)  (Diakonikolas et al. 2015; Acharya et al. 2021)"),
    ("products of d bits, any biases", "d/α²", "d/(αε), up to logs  (Thm. 1.6, 1.7)",
     "d/α² + d/(αε), up to logs  (Kamath et al. 2019; Bun et al. 2019)"),
    ("products of d bits, biases in [1/3, 2/3]", "d/α²", "√d/ε, up to logs  (Thm. 1.8, 1.9)",
     "d/α² + d/(αε), up to logs"),
)  # fmt: skip
"""Table 1 of the paper, orders of growth (constants and log factors left out): the class,
non-private learning, ε-DP sampling (this paper) and ε-DP learning."""


def zipf_distribution(k: int) -> np.ndarray:
    """A K-ary distribution with a long tail, :math:`p_i \\propto 1/i` (the teaching example)."""
    weights = 1.0 / np.arange(1, positive_int("k", k) + 1)
    return weights / weights.sum()


def sampling_versus_learning(
    k: int,
    epsilon: float,
    sizes: np.ndarray,
    *,
    runs: int = 2000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """For each n in ``sizes``, ``runs`` datasets of n draws from :func:`zipf_distribution`, each
    through Alg. 3's private distribution: the sampler's error :math:`d_{TV}(E\\hat p, P)` (the
    mean over runs; its Monte Carlo error is reported as ``floor``), the learning error
    :math:`E\\,d_{TV}(\\hat p, P)`, and the guarantee 2K/(εn). Vectorized over runs."""
    generator = as_rng(rng)
    epsilon = positive_number("epsilon", epsilon)
    p = zipf_distribution(k)
    rows = []
    for n in np.asarray(sizes, dtype=int):
        empirical = generator.multinomial(n, p, size=runs) / n
        scale = kary_laplace_scale(int(n), epsilon)
        private = project_simplex(empirical + laplace_noise(scale, empirical.shape, rng=generator))
        mean = private.mean(axis=0)
        rows.append(
            {
                "n": int(n),
                "sampling": 0.5 * float(np.abs(mean - p).sum()),
                "floor": 0.5 * float((private.std(axis=0) / math.sqrt(runs)).sum()),
                "learning": 0.5 * float(np.abs(private - p).sum(axis=1).mean()),
                "guarantee": min(1.0, kary_guarantee(k, int(n), epsilon)),
            }
        )
    return pd.DataFrame(rows)


def records_needed(d: int, epsilon: float, alpha: float) -> dict[str, float]:
    """Records each task needs at accuracy α and budget ε, for d bits with biases in [1/3, 2/3]:
    the orders of Table 1 with constants 1, and the fewest records (to 10%) for which our
    product sampler is ρ = ε²/2-zCDP (:func:`~dpcore.analyses.sample.product_rho` = 8d/n², so
    n ≥ 4√d/ε; zCDP is how Thm. 6.4 gets √d) and within α
    (:func:`~dpcore.analyses.sample.product_guarantee`)."""
    d, epsilon = positive_int("d", d), positive_number("epsilon", epsilon)
    n = math.ceil(4 * math.sqrt(d) / epsilon)
    while product_rho(d, n) > epsilon**2 / 2:
        n += 1
    while product_guarantee(d, n) > alpha:
        n = math.ceil(n * 1.1)
    return {
        "learning (private)": d / alpha**2 + d / (alpha * epsilon),
        "learning (not private)": d / alpha**2,
        "sampling (order √d/ε)": math.sqrt(d) / epsilon,
        "our product sampler": float(n),
    }
