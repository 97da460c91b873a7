"""The planner's population error with shares from the release's noisy counts: the shares' own
noise is in the model (accuracy.py's notes), checked against simulated releases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.mean.accuracy import POPULATION_LABEL, mean_error_model
from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import run_strategy
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.planner.accuracy import AccuracyTarget

SIZES = {"a": 300, "b": 100, "c": 150, "d": 50}
NOISY = GroupingSpec(
    by=("g",), share_source="noisy_counts", small_groups="keep",
    categories=(("g", tuple(SIZES)),),
)  # fmt: skip
REPLICATES = 20_000
LEVEL = 0.95
CASES = [
    (LaplaceMean((-100, 100), n_public=False), PureDP(1.0), 1.0),  # budget scale ε
    (GaussianMean((-100, 100), n_public=False), ZCDP(0.5), 0.5**0.5),  # budget scale √ρ
]


def values_with(means: dict[str, float]) -> GroupValues:
    """Every person of group g has the value ``means[g]``: no sampling spread, no clipping."""
    frame = pd.DataFrame({"g": [g for g, n in SIZES.items() for _ in range(n)]})
    frame["v"] = frame["g"].map(means).astype(float)
    return GroupValues.from_grouping(NOISY.build(frame), frame, "v")


def model_and_simulated(values, estimator, budget, scale) -> tuple[float, float]:
    """The model's population half-width at LEVEL, and the LEVEL quantile of the population's
    absolute error over simulated releases (noisy shares drawn with each, no clipping)."""
    model = mean_error_model(values, estimator)
    half = model.half_widths_at(scale, AccuracyTarget(1.0, level=LEVEL))
    population = half[list(model.labels).index(POPULATION_LABEL)]
    result = run_strategy(
        "stratified", values, estimator, budget, values.shares, replicates=REPLICATES,
        noise=SimulationNoise(rng=5),
    )  # fmt: skip
    errors = np.abs(result.global_estimate - values.global_mean)
    return population, float(np.quantile(errors, LEVEL))


@pytest.mark.parametrize(("estimator", "budget", "scale"), CASES)
def test_at_the_worst_case_mean_the_model_matches_simulated_releases(estimator, budget, scale):
    """Every value at U = M: the population mean is the worst case the model takes, so its
    half-width is the simulated releases' quantile (within the quantile errors of the model's
    10,000 Laplace draws and of the simulation), less the error that clamping every group into
    the public range removes: a release never publishes a mean above U, so the model, which
    ignores the clamp, is slightly conservative there."""
    model, simulated = model_and_simulated(
        values_with(dict.fromkeys(SIZES, 100.0)), estimator, budget, scale
    )
    assert 0.9 * model <= simulated <= 1.04 * model


@pytest.mark.parametrize(("estimator", "budget", "scale"), CASES)
def test_the_count_noise_enters_through_the_population_mean_not_the_group_means(
    estimator, budget, scale
):
    """Groups at +M and −M whose population mean is 0: with exact shares each group's count
    noise would weigh by its |μ_g| = M, and the error would be the worst case; the noisy shares
    cancel it, leaving the sums' noise alone, a factor √2 below the worst case."""
    means = {"a": 100.0, "b": -100.0, "c": -100.0, "d": -100.0}  # 300 − 100 − 150 − 50 = 0
    values = values_with(means)
    assert values.global_mean == 0.0
    model, simulated = model_and_simulated(values, estimator, budget, scale)
    assert simulated == pytest.approx(model / np.sqrt(2), rel=0.05)
