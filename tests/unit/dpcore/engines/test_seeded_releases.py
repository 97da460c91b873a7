"""Engines: a seeded mean or GVDP release is the same on every engine, to rounding."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.analyses.gvdp import GvdpBoundsSpec, GvdpModel, GvdpPlan
from dpcore.analyses.gvdp.aggregate import aggregate_gvdp
from dpcore.analyses.mean import CoinPressMean, GaussianMean, LaplaceMean, MeanPlan
from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from dpcore.release import DatasetRef, PlanHeader
from tests.unit.dpcore.engines.helpers import BOUNDS, SPECS, engines

ESTIMATORS = {
    "laplace, public sizes": (LaplaceMean(bounds=BOUNDS), PureDP(1.0), "stratified"),
    "gaussian, private sizes": (GaussianMean(bounds=BOUNDS, n_public=False), ZCDP(0.5),
                                "global_only"),
    "coinpress, both": (CoinPressMean(prior=BOUNDS, sigma=3.0, steps=3), ZCDP(0.5),
                        "global_and_groups"),
}  # fmt: skip


def released(stats, estimator, budget, strategy, seed=3) -> np.ndarray:
    spec = SPECS["text"]
    header = PlanHeader(dataset=DatasetRef("messy", "-", 1), spec=spec, budget=budget)
    plan = MeanPlan(values=stats, header=header, estimator=estimator, strategy=strategy)
    rows = plan.run(SimulationNoise(rng=seed), np.random.default_rng(seed))
    return np.array([[row.estimate, row.low, row.high] for row in rows], dtype=float)


@pytest.mark.parametrize("case", ESTIMATORS.values(), ids=ESTIMATORS.keys())
def test_a_seeded_release_is_the_same_on_every_engine(frame, parquet_folder, spark, case):
    estimator, budget, strategy = case
    spec = SPECS["text"]
    runs = [released(GroupValues.from_grouping(spec.build(frame), frame, "v"), *case)]
    for engine in engines(frame, parquet_folder, spark).values():
        runs.append(released(aggregate_mean(engine, spec, "v", BOUNDS).stats, *case))
    for other in runs[1:]:
        np.testing.assert_allclose(other, runs[0], rtol=1e-9, equal_nan=True)


GVDP_MODELS = {"mean": GvdpModel("mean", "s"), "ols": GvdpModel("ols", "y3", ("s", "age"))}


GVDP_UNITS = {"row": ROW, "person": PrivacyUnit("person", max_groups=1, max_rows=3)}


@pytest.mark.parametrize("model", GVDP_MODELS.values(), ids=GVDP_MODELS.keys())
@pytest.mark.parametrize("unit", GVDP_UNITS.values(), ids=GVDP_UNITS.keys())
def test_a_seeded_gvdp_release_is_the_same_on_every_engine(frame, parquet_folder, spark, model,
                                                           unit):  # fmt: skip
    """Subsets and bootstrap weights from the same salted hash on every engine
    (:mod:`dpcore.engines.blb`), so a seeded release is the same to rounding: per group and
    recombined, with the messy frame's missing values and its small groups merged."""
    spec = GroupingSpec(by=("region",), min_group_size=100)
    d = model.d
    bounds = GvdpBoundsSpec("box", model.coefficients, spread=(20.0,) * d, low=(-50.0,) * d,
                            high=(50.0,) * d)  # fmt: skip
    runs = []
    for engine in engines(frame, parquet_folder, spark).values():
        aggregated = aggregate_gvdp(engine, spec, model, unit)
        header = PlanHeader(aggregated.dataset, spec, ZCDP(1.0), label="gvdp")
        plan = GvdpPlan(data=aggregated.stats, header=header, model=model, bounds=bounds, k=20)
        rows = plan.run(SimulationNoise(rng=3), np.random.default_rng(3))
        runs.append(np.array([[r.estimate, r.low, r.high] for r in rows], dtype=float))
    for other in runs[1:]:
        np.testing.assert_allclose(other, runs[0], rtol=1e-7, equal_nan=True)
