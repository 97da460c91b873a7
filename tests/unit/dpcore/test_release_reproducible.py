"""A dry run of every analysis' plan is reproducible from its seed: the same ``rng`` gives the
same release (noise and post-processing alike), another seed gives another one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore import (
    ZCDP,
    DatasetRef,
    GroupingSpec,
    GroupValues,
    GvdpBoundsSpec,
    GvdpModel,
    GvdpPlan,
    LaplaceMean,
    Ledger,
    MeanPlan,
    PlanHeader,
    PureDP,
    RatioBounds,
    RatioPlan,
    SynthConfig,
    SynthPlan,
    release,
)

SPEC = GroupingSpec(by=("region",))


def survey(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    region = np.repeat(["north", "south", "east"], [900, 600, 300])
    n = region.size
    score = rng.uniform(0, 1, n)
    return pd.DataFrame(
        {
            "region": region,
            "hours": rng.normal(40, 10, n),
            "age": rng.integers(18, 80, n),
            "score": score,
            "label": (rng.random(n) < score).astype(int),
            "job": rng.choice(["office", "field"], n),
            "car": rng.choice(["yes", "no"], n),
            "pet": rng.choice(["cat", "dog"], n),
        }
    )


def header(frame: pd.DataFrame, budget) -> PlanHeader:
    return PlanHeader(dataset=DatasetRef.of(frame, "survey.csv"), spec=SPEC, budget=budget)


def mean_plan(frame):
    values = GroupValues.from_grouping(SPEC.build(frame), frame, "hours")
    return MeanPlan(values=values, header=header(frame, PureDP(1.0)),
                    estimator=LaplaceMean(bounds=(0.0, 100.0)))  # fmt: skip


def ratio_plan(frame):
    return RatioPlan.build(
        frame, header=header(frame, PureDP(1.0)), s_column="score", y_column="label",
        bounds=RatioBounds(1.0, 1.0), binary_y=True, method="monte_carlo", B=50,
    )  # fmt: skip


def gvdp_plan(frame):
    model = GvdpModel("mean", "hours")
    bounds = GvdpBoundsSpec("guess", ("hours",), spread=(20.0,), guess=(40.0,), factor=10.0)
    return GvdpPlan.build(frame, header=header(frame, ZCDP(0.5)), model=model, bounds=bounds,
                          k=30, resamples=5)  # fmt: skip


def synth_plan(frame):
    config = SynthConfig(columns=("job", "car", "pet"), method="independent", n_rows=200)
    return SynthPlan.build(frame, header=header(frame, PureDP(1.0)), config=config)


@pytest.mark.parametrize("make", [mean_plan, ratio_plan, gvdp_plan, synth_plan])
def test_a_seeded_dry_run_is_reproducible(make, tmp_path):
    frame = survey()
    plan = make(frame)

    def outputs(seed: int, ledger_name: str) -> list[dict]:
        ledger = Ledger(tmp_path / f"{ledger_name}.sqlite", "default", ZCDP(10.0))
        return release(plan, ledger, noise="simulation", rng=seed).outputs

    first = outputs(7, "a")
    assert outputs(7, "b") == first
    assert outputs(8, "c") != first
