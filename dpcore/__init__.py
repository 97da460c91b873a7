"""Strata Lab numerics: privacy accounting, mechanisms, the ledger, groups and every analysis.

Pure Python/numpy/scipy; never imports streamlit or plotly (a test asserts it). The names below
are the public API: scripts exported with a release import them from ``dpcore`` directly, and
modules inside the package import from their submodules.

Layout (each analysis is one package under :mod:`dpcore.analyses`):

- :mod:`dpcore.foundations.accounting`, :mod:`dpcore.foundations.ledger`, :mod:`dpcore.foundations.mechanisms` — budgets, the
  persistent ledger, noise scales and the two noise sources;
- :mod:`dpcore.foundations.io`, :mod:`dpcore.foundations.datasets` — reading tables, the demo data;
- :mod:`dpcore.foundations.grouping`, :mod:`dpcore.foundations.shares` — the groups every analysis shares and their
  public shares;
- :mod:`dpcore.foundations.intervals`, :mod:`dpcore.foundations.metrics` — the interval type, errors and coverage;
- :mod:`dpcore.release` — plan header, the exactly-once commit, exports;
- :mod:`dpcore.analyses` — the Analysis interface, the registry, and mean, ratio, gvdp, synth
  (and the samplers).
"""

from dpcore.analyses.gvdp import (
    GVDPBounds,
    GvdpBoundsSpec,
    GvdpModel,
    GvdpPlan,
    PrivateBox,
    gvdp,
    gvdp_coverage,
    gvdp_stratified,
    nonprivate_ci,
    prepare_data,
)
from dpcore.analyses.mean import (
    CoinPressMean,
    GaussianMean,
    GroupValues,
    LaplaceMean,
    MeanPlan,
    coinpress_mean,
    gaussian_mean,
    laplace_mean,
    monte_carlo,
    run_strategy,
    stratified_mean,
)
from dpcore.analyses.ratio import (
    RatioBounds,
    RatioPlan,
    compare_ratios,
    estimate_ratios,
    group_ratio_sums,
    ratio_ci,
    ratio_interval,
    ratio_study,
    ratio_sums,
    release_ratio_sums,
)
from dpcore.analyses.sample import bernoulli_sample, kary_sample, product_bernoulli_sample
from dpcore.analyses.synth import SynthConfig, SynthPlan, bucketize, synthesize
from dpcore.foundations.accounting import (
    ZCDP,
    ApproxDP,
    Budget,
    BudgetExceededError,
    PureDP,
    parallel,
    scale,
    sequential,
)
from dpcore.foundations.datasets import (
    DEMO_DATASET_NAME,
    load_demo,
    load_demo_dataset,
    synthetic_gaussian_mixture,
)
from dpcore.foundations.grouping import OTHER_LABEL, Grouping, GroupingReport, GroupingSpec
from dpcore.foundations.intervals import Interval
from dpcore.foundations.io import read_table
from dpcore.foundations.ledger import (
    Ledger,
    LedgerDataset,
    OtherDatasetError,
    ReleasedElsewhereError,
    list_ledgers,
)
from dpcore.foundations.mechanisms import (
    SecureNoise,
    SimulationNoise,
    as_noise_source,
    noise_source,
)
from dpcore.foundations.metrics import (
    GroupWorkload,
    binomial_band,
    clopper_pearson,
    coverage,
    interval_score,
    normalized_error,
    parity_error,
    workload_error,
    workload_error_by_group,
)
from dpcore.foundations.private_bounds import PrivateBounds
from dpcore.foundations.shares import (
    PublicShares,
    shares_from_counts,
    shares_from_holdout,
    shares_from_table,
    split_holdout,
)
from dpcore.foundations.validation import column_kind, is_numeric
from dpcore.release import (
    DatasetRef,
    PlanHeader,
    ReleaseRecord,
    ReleaseRow,
    frame_identity,
    plan_key,
    read_dataset,
    release,
    to_csv,
    to_json,
    to_script,
)

__version__ = "0.1.0"

__all__ = [
    "DEMO_DATASET_NAME",
    "OTHER_LABEL",
    "ZCDP",
    "ApproxDP",
    "Budget",
    "BudgetExceededError",
    "CoinPressMean",
    "DatasetRef",
    "GVDPBounds",
    "GaussianMean",
    "GroupValues",
    "Grouping",
    "GroupingReport",
    "GroupingSpec",
    "GvdpBoundsSpec",
    "GvdpModel",
    "GvdpPlan",
    "GroupWorkload",
    "Interval",
    "LaplaceMean",
    "Ledger",
    "LedgerDataset",
    "MeanPlan",
    "OtherDatasetError",
    "PlanHeader",
    "PrivateBounds",
    "PrivateBox",
    "PublicShares",
    "PureDP",
    "RatioBounds",
    "RatioPlan",
    "ReleaseRecord",
    "ReleasedElsewhereError",
    "ReleaseRow",
    "SecureNoise",
    "SimulationNoise",
    "SynthConfig",
    "SynthPlan",
    "as_noise_source",
    "bernoulli_sample",
    "bucketize",
    "coinpress_mean",
    "compare_ratios",
    "binomial_band",
    "clopper_pearson",
    "column_kind",
    "coverage",
    "estimate_ratios",
    "frame_identity",
    "gaussian_mean",
    "group_ratio_sums",
    "gvdp",
    "gvdp_coverage",
    "gvdp_stratified",
    "interval_score",
    "is_numeric",
    "kary_sample",
    "laplace_mean",
    "list_ledgers",
    "load_demo",
    "load_demo_dataset",
    "monte_carlo",
    "noise_source",
    "nonprivate_ci",
    "normalized_error",
    "parallel",
    "parity_error",
    "plan_key",
    "prepare_data",
    "product_bernoulli_sample",
    "ratio_ci",
    "ratio_interval",
    "ratio_study",
    "ratio_sums",
    "read_dataset",
    "read_table",
    "release",
    "release_ratio_sums",
    "run_strategy",
    "scale",
    "sequential",
    "shares_from_counts",
    "shares_from_holdout",
    "shares_from_table",
    "split_holdout",
    "stratified_mean",
    "synthesize",
    "synthetic_gaussian_mixture",
    "to_csv",
    "to_json",
    "to_script",
    "workload_error",
    "workload_error_by_group",
]
