"""DP samplers (Raskhodnikova, Sivakumar, Smith & Swanberg, NeurIPS 2021): k-ary, bounded-bias
Bernoulli and product Bernoulli. See :mod:`.samplers`."""

from dpcore.analyses.sampling.samplers import (
    bernoulli_sample,
    bernoulli_sampler_epsilon,
    clipped_proportion,
    kary_distribution,
    kary_laplace_scale,
    kary_sample,
    product_bernoulli_min_n,
    product_bernoulli_sample,
    product_bernoulli_sampler_rho,
    project_simplex,
)

__all__ = [
    "bernoulli_sample",
    "bernoulli_sampler_epsilon",
    "clipped_proportion",
    "kary_distribution",
    "kary_laplace_scale",
    "kary_sample",
    "product_bernoulli_min_n",
    "product_bernoulli_sample",
    "product_bernoulli_sampler_rho",
    "project_simplex",
]
