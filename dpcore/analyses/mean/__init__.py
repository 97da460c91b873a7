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
- :mod:`.functions` — one call from an array or group statistics (:func:`laplace_mean`, …);
- :mod:`.simulate` — the Monte Carlo engine of the Compare page;
- :mod:`.plan` — :class:`MeanPlan`, the release committed on the Release page;
- :mod:`.teaching` — the numbers behind the Learn page's mean explainers and presets.

Every estimator works on per-group sufficient statistics (sizes and clipped sums) and is
vectorized over Monte Carlo replicates; noise comes from a :class:`~dpcore.mechanisms.NoiseSource`.
"""

from dpcore.analyses.mean.analysis import (
    ESTIMATOR_LABELS,
    MEAN,
    MeanAnalysis,
    MeanSettings,
    MeanStudy,
)
from dpcore.analyses.mean.coinpress import CoinPressMean, default_rho_split
from dpcore.analyses.mean.estimators import ClippedMean, GaussianMean, GroupStats, LaplaceMean
from dpcore.analyses.mean.functions import MeanRelease, coinpress_mean, gaussian_mean, laplace_mean
from dpcore.analyses.mean.plan import STRATEGY_LABELS, MeanPlan, MeanRow
from dpcore.analyses.mean.simulate import (
    GLOBAL_LABEL,
    SWEEP_METRICS,
    budget_sweep,
    group_summary,
    monte_carlo,
    parity_by_replicate,
    replicate_metrics,
    summarize_sweep,
)
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import (
    STRATEGIES,
    Strategy,
    StrategyResult,
    global_and_group_means,
    global_only_mean,
    run_strategy,
    stratified_mean,
)

__all__ = [
    "ClippedMean",
    "CoinPressMean",
    "ESTIMATOR_LABELS",
    "GLOBAL_LABEL",
    "GaussianMean",
    "GroupStats",
    "GroupValues",
    "LaplaceMean",
    "MEAN",
    "MeanAnalysis",
    "MeanPlan",
    "MeanRelease",
    "MeanRow",
    "MeanSettings",
    "MeanStudy",
    "STRATEGIES",
    "STRATEGY_LABELS",
    "SWEEP_METRICS",
    "Strategy",
    "StrategyResult",
    "budget_sweep",
    "coinpress_mean",
    "default_rho_split",
    "gaussian_mean",
    "global_and_group_means",
    "global_only_mean",
    "group_summary",
    "laplace_mean",
    "monte_carlo",
    "parity_by_replicate",
    "replicate_metrics",
    "run_strategy",
    "stratified_mean",
    "summarize_sweep",
]
