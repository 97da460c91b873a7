r"""A handful of private records from one group: k runs of a sampler on k disjoint parts of the
group's rows, their accuracy guarantees, and a simulation of the output distribution.

**Several records.** A sampler of Raskhodnikova, Sivakumar, Smith & Swanberg (NeurIPS 2021)
outputs one record. For several, the paper suggests "repeating our algorithms several times on
disjoint subsamples" (§1.2, open questions). We do that: the group's n rows are shuffled (with
randomness independent of the data) and split into k parts of ⌊n/k⌋ or ⌈n/k⌉ rows, and each
part yields one record. Under the paper's replace-one neighbours a replaced row lies in one part,
so the k records together cost what one run costs (parallel composition, McSherry 2009,
Thm. 4), and the records are independent, each within its guarantee of the population's
distribution (so all k together within k times it, by subadditivity of total variation). The
price is accuracy: each run sees n/k rows.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pandas as pd
from scipy.special import erfc

from dpcore.analyses.sample.samplers import (
    bernoulli_sampler_epsilon,
    kary_laplace_scale,
    kary_sample,
    product_bernoulli_sample,
    product_bernoulli_sampler_rho,
    project_simplex,
)
from dpcore.foundations.mechanisms import NoiseSource, SimulationNoise
from dpcore.foundations.validation import as_rng

__all__ = [
    "PRODUCT_BIASES",
    "PRODUCT_CLIP",
    "Sampler",
    "distance",
    "draw_records",
    "empirical_distribution",
    "kary_guarantee",
    "output_distribution",
    "part_sizes",
    "product_epsilon",
    "product_guarantee",
    "product_rho",
    "records_frame",
]

Sampler = Literal["kary", "product"]

PRODUCT_BIASES = (1 / 3, 2 / 3)
"""The class of the bounded-bias product sampler: every bias in [1/3, 2/3] (NeurIPS 2021, §6)."""

PRODUCT_CLIP = (1 / 4, 3 / 4)
"""Where the product sampler clips each column's proportion: strictly wider than
:data:`PRODUCT_BIASES`, so that clipping a bias of the class is exponentially rare in n (see
:func:`~dpcore.analyses.sample.bernoulli_sample`). Each bit then costs ε = 4/n."""


def part_sizes(n: int, k: int) -> np.ndarray:
    """Rows in each of the k disjoint parts of n rows (⌊n/k⌋ or ⌈n/k⌉)."""
    return np.array([len(p) for p in np.array_split(np.arange(n), k)])


def kary_guarantee(domain: int, n: int, epsilon: float) -> float:
    r"""Total-variation accuracy of one k-ary record from n rows (NeurIPS 2021, Thm. 1.4):

    .. math:: d_{TV}(Q, P) \le \tfrac12\,E\lVert \hat p - p_D \rVert_1
              \le E\lVert Z \rVert_1 = K \cdot \frac{2}{\varepsilon n} = \frac{2K}{\varepsilon n},

    with Q the output's distribution over data and coins, P the population's, K the universe
    size. The steps are the proof of Thm. 1.4 (Jensen, :math:`E[p_D] = P`, the triangle
    inequality and the projection being an :math:`\ell_1`-nearest point of the simplex); our copy
    of the paper shows no constant, so 2K/(εn) is the constant those steps give.
    """
    return 2.0 * domain / (epsilon * n)


def product_guarantee(d: int, n: int) -> float:
    r"""Total-variation accuracy of one product-Bernoulli record from n rows, for biases in
    :data:`PRODUCT_BIASES` clipped to :data:`PRODUCT_CLIP` (NeurIPS 2021, Thm. 6.1 and 6.4):

    .. math:: d_{TV}(Q, P) \le \sum_{j=1}^{d} \lvert E[c_j] - p_j\rvert
              \le d\sqrt{\frac{\pi}{2n}}\;\mathrm{erfc}\!\left(\frac{\sqrt{2n}}{12}\right).

    Output bit j is Bernoulli(:math:`E[c_j]`), :math:`c_j` the clipped proportion, and the
    columns of product data are independent, so the output is a product and total variation is
    subadditive. Clipping moves :math:`\bar x` by :math:`(a - \bar x)_+ + (\bar x - b)_+`, whose
    mean Hoeffding's inequality bounds by :math:`\sqrt{\pi/(8n)}\,\mathrm{erfc}(m\sqrt{2n})` on
    each side, m = 1/12 the margin between the class and the clipping interval. (Our copy of the
    paper shows no constants for Thm. 6.1; this bound is derived from its proof's steps.)
    """
    return d * math.sqrt(math.pi / (2 * n)) * float(erfc(math.sqrt(2 * n) / 12))


def product_epsilon(d: int, n: int) -> float:
    """Pure ε of one product record from n rows: d bits of ε = 4/n each (Claim 6.3, basic
    composition)."""
    return d * bernoulli_sampler_epsilon(n, PRODUCT_CLIP)


def product_rho(d: int, n: int) -> float:
    """ρ-zCDP of one product record from n rows: 8d/n² (proof of Thm. 6.4)."""
    return product_bernoulli_sampler_rho(n, d, PRODUCT_CLIP)


def _parts(n: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    return np.array_split(rng.permutation(n), k)


def draw_records(
    codes: np.ndarray,
    *,
    sampler: Sampler,
    domain: int,
    records: int,
    epsilon: float,
    noise: NoiseSource,
    rng: np.random.Generator,
) -> np.ndarray:
    """``records`` private records, one per disjoint part of the rows (module docstring).

    ``codes`` holds, for the k-ary sampler, each row's code in 0..domain-1; for the product
    sampler, each row's bits (n × d). The k-ary sampler runs at ``epsilon`` (its Laplace noise
    from ``noise``, its draw, post-processing, from ``rng``); the product sampler adds no noise
    (its cost follows from the part sizes) and draws its bits from ``noise``. Returns k codes, or
    k × d bits.
    """
    parts = _parts(len(codes), records, rng)
    if sampler == "kary":
        return np.array(
            [kary_sample(codes[p], domain, epsilon, noise=noise, rng=rng) for p in parts]
        )
    return np.stack(
        [product_bernoulli_sample(codes[p], bounds=PRODUCT_CLIP, noise=noise) for p in parts]
    )


def output_distribution(
    codes: np.ndarray,
    *,
    sampler: Sampler,
    domain: int,
    part: int,
    epsilon: float,
    runs: int,
    rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, float]:
    """The distribution of one record drawn from a random part of ``part`` rows of these rows
    (a curator's simulation, numpy noise).

    k-ary: the mean over ``runs`` simulated runs of the private distribution :math:`\\hat p`
    (each part's counts drawn at once as a multivariate hypergeometric sample, Laplace noise,
    projection; vectorized over runs). Product: exactly, per column, the mean clipped proportion
    over the hypergeometric number of ones in the part (``runs`` unused). Also returns the
    Monte Carlo error of its distance to any fixed distribution (half the summed standard errors;
    0 when exact).
    """
    generator = as_rng(rng)
    n = len(codes)
    if sampler == "kary":
        counts = np.bincount(codes, minlength=domain)
        drawn = generator.multivariate_hypergeometric(counts, part, size=runs) / part
        noisy = SimulationNoise(rng=generator).add_laplace(drawn, kary_laplace_scale(part, epsilon))
        private = project_simplex(noisy)
        floor = 0.5 * float((private.std(axis=0) / math.sqrt(runs)).sum())
        return private.mean(axis=0), floor
    from scipy.stats import hypergeom  # deferred: scipy.stats is slow to import

    ones = codes.sum(axis=0).astype(int)
    hits = np.arange(part + 1)
    pmf = hypergeom.pmf(hits[:, None], n, ones[None, :], part)
    clipped = np.clip(hits / part, *PRODUCT_CLIP)
    return (pmf * clipped[:, None]).sum(axis=0), 0.0


def empirical_distribution(codes: np.ndarray, *, sampler: Sampler, domain: int) -> np.ndarray:
    """The rows' own distribution (k-ary) or proportions of ones per column (product)."""
    if sampler == "kary":
        return np.bincount(codes, minlength=domain) / len(codes)
    return codes.mean(axis=0)


def distance(output: np.ndarray, empirical: np.ndarray, *, sampler: Sampler) -> float:
    """Total variation between the two (k-ary), or its bound for products: the sum over columns
    of the differences of the proportions."""
    if sampler == "kary":
        return float(0.5 * np.abs(output - empirical).sum())
    return float(np.abs(output - empirical).sum())


def records_frame(
    drawn: np.ndarray, *, sampler: Sampler, categories: dict[str, tuple[str, ...]]
) -> pd.DataFrame:
    """The drawn codes or bits as records of category text."""
    columns = list(categories)
    if sampler == "kary":
        shape = tuple(len(c) for c in categories.values())
        indices = np.unravel_index(drawn, shape)
        return pd.DataFrame(
            {c: np.asarray(categories[c])[i] for c, i in zip(columns, indices, strict=True)}
        )
    return pd.DataFrame({c: np.asarray(categories[c])[drawn[:, j]] for j, c in enumerate(columns)})
