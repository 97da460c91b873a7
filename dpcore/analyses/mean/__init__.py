r"""Private means per group and for the whole population (Rosenblatt, Stoyanovich & Musco, AAAI
2024; CoinPress of Biswas, Dong, Kamath & Ullman, NeurIPS 2020).

The modules:

- :mod:`.analysis` — the mean as an analysis (:data:`MEAN`): settings, budget, statistics, plan,
  simulation study;
- :mod:`.statistics` — each group's values sorted with prefix sums (:class:`GroupValues`), the
  sufficient statistics every mean estimator reads;
- :mod:`.estimators` — clipped means with Laplace (ε-DP, eq. 3) or Gaussian (ρ-zCDP, eq. 1) noise;
- :mod:`.coinpress` — univariate CoinPress (appendix B, Alg. 1–2);
- :mod:`.strategies` — stratified (eq. 4, Alg. 3) and whole-population ("vanilla") strategies;
- :mod:`.array_api` — one call from an array or group statistics (:func:`laplace_mean`, …);
- :mod:`.simulate` — the Monte Carlo engine of the Compare page;
- :mod:`.plan` — :class:`MeanPlan`, the release committed on the Release page;
- :mod:`.teaching` — the numbers behind the Learn page's mean explainers and presets.

Every estimator works on per-group sufficient statistics (sizes and clipped sums) and is
vectorized over Monte Carlo replicates; noise comes from a :class:`~dpcore.foundations.mechanisms.NoiseSource`.
"""

# Each module names its public API in `__all__`; the package re-exports exactly those names.
from dpcore.analyses.mean import (
    analysis,
    array_api,
    coinpress,
    estimators,
    plan,
    simulate,
    statistics,
    strategies,
)
from dpcore.analyses.mean.analysis import *
from dpcore.analyses.mean.array_api import *
from dpcore.analyses.mean.coinpress import *
from dpcore.analyses.mean.estimators import *
from dpcore.analyses.mean.plan import *
from dpcore.analyses.mean.simulate import *
from dpcore.analyses.mean.statistics import *
from dpcore.analyses.mean.strategies import *

__all__ = [
    *analysis.__all__,
    *statistics.__all__,
    *estimators.__all__,
    *coinpress.__all__,
    *strategies.__all__,
    *array_api.__all__,
    *simulate.__all__,
    *plan.__all__,
]
