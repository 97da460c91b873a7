"""Every plan's preview: per group, what a commit would publish (issue 13, item 5)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcore.analyses import ANALYSES
from dpcore.foundations.accounting import PureDP
from dpcore.foundations.datasets import load_demo
from dpcore.foundations.grouping import GroupingSpec
from dpcore.release import PREVIEW_COLUMNS, DatasetRef, PlanHeader, simulated_preview
from tests.unit.dpcore.test_neighbours import SETTINGS

SPEC = GroupingSpec(by=("race", "sex"))


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return load_demo()


def plan_of(frame, name: str, epsilon: float = 1.0):
    analysis = next(a for a in ANALYSES if a.name == name)
    settings = SETTINGS[name]
    header = PlanHeader(DatasetRef.of(frame, "demo"), SPEC, PureDP(epsilon))
    return analysis.plan(analysis.statistics(frame, SPEC.build(frame), settings), settings, header)


@pytest.mark.parametrize("analysis", ANALYSES, ids=lambda a: a.name)
def test_every_plan_previews_one_row_per_released_group_and_is_seeded(demo, analysis):
    plan = plan_of(demo, analysis.name)
    table = plan.preview()
    assert tuple(table.columns) == PREVIEW_COLUMNS
    assert table["group"].is_unique and (table["expected_error"].dropna() >= 0).all()
    pd.testing.assert_frame_equal(table, plan.preview())  # seeded: the same plan, the same table
    if analysis.name == "sample":
        assert list(table["group"]) == ["Other × Female"]
        assert table["expected_error"].iloc[0] == pytest.approx(plan.guarantee())
    else:
        assert len(table) >= len(SPEC.build(demo).labels)


def test_the_mean_preview_matches_the_laplace_noise_it_simulates(demo):
    """Laplace noise of scale (U − L)/(n_g ε) has standard deviation √2 times that; the
    simulated spread of 400 releases lies within its 99.9% chi-square band."""
    plan = plan_of(demo, "mean")
    replicates = 400
    table = simulated_preview(plan, replicates=replicates, rng=3).set_index("group")
    sizes = demo.groupby(["race", "sex"]).size()
    for race, sex in (("White", "Male"), ("Black", "Female")):
        truth = math.sqrt(2) * 100 / sizes[(race, sex)]
        ratio = table.loc[f"{race} × {sex}", "expected_error"] / truth
        # Laplace has kurtosis 6, so the variance of s² is (2/(n−1) + 3/n)σ⁴: a wide band.
        band = stats.norm.ppf(0.9995) * math.sqrt(2 / (replicates - 1) + 3 / replicates)
        assert abs(ratio**2 - 1) < band, (race, sex, ratio)


def test_a_smaller_budget_previews_larger_errors_and_more_withheld_groups(demo):
    small, large = (plan_of(demo, "gvdp", eps).preview() for eps in (0.3, 3.0))
    assert (small["withheld"] != "").sum() > (large["withheld"] != "").sum()
    both = small.merge(large, on="group", suffixes=("_small", "_large")).dropna()
    assert (both["expected_error_small"] > both["expected_error_large"]).all()
    reasons = small.set_index("group")["withheld"]
    # k from each group's own rows (issue 42): 21 subsets for its 109 rows, not 3
    assert reasons["Other × Female"].startswith("withheld: 21 subsets")


def test_a_row_withheld_in_some_runs_says_how_often():
    class Flaky:
        """A plan whose one row is withheld in every other run."""

        calls = 0

        def run(self, noise, rng):
            from dpcore.release import ReleaseRow

            Flaky.calls += 1
            estimate = None if Flaky.calls % 2 else float(rng.normal())
            return [ReleaseRow(level="group", group="g", estimate=estimate)]

    table = simulated_preview(Flaky(), replicates=10, rng=np.random.default_rng(0))
    assert table["withheld"].iloc[0] == "in 50% of simulated releases: no estimate"
    assert np.isnan(table["half_width"].iloc[0])
