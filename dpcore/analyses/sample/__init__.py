"""DP samplers (Raskhodnikova, Sivakumar, Smith & Swanberg, NeurIPS 2021) and the private sample
analysis built on them:

- :mod:`.samplers` — k-ary, bounded-bias Bernoulli and product Bernoulli samplers, each drawing
  its noise (or its bits) through a :class:`~dpcore.foundations.mechanisms.NoiseSource`;
- :mod:`.rows` — a group's rows as codes in declared (public) categories;
- :mod:`.draw` — several records from disjoint parts of a group, the paper's accuracy
  guarantees, and a simulation of the output distribution;
- :mod:`.plan` — :class:`SamplePlan`, the release committed on the Release page;
- :mod:`.analysis` — :data:`SAMPLE`, the registered analysis "Private sample".
"""

# Each module names its public API in `__all__`; the package re-exports exactly those names.
from dpcore.analyses.sample import analysis, draw, plan, rows, samplers
from dpcore.analyses.sample.analysis import *
from dpcore.analyses.sample.draw import *
from dpcore.analyses.sample.plan import *
from dpcore.analyses.sample.rows import *
from dpcore.analyses.sample.samplers import *

__all__ = [
    *samplers.__all__,
    *rows.__all__,
    *draw.__all__,
    *plan.__all__,
    *analysis.__all__,
]
