"""DP samplers (Raskhodnikova, Sivakumar, Smith & Swanberg, NeurIPS 2021): k-ary, bounded-bias
Bernoulli and product Bernoulli. See :mod:`.samplers`."""

# Each module names its public API in `__all__`; the package re-exports exactly those names.
from dpcore.analyses.sampling import samplers
from dpcore.analyses.sampling.samplers import *

__all__ = [*samplers.__all__]
