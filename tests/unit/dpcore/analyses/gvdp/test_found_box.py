"""GVDP's box found privately: the pass's box holds the subsets' median and its spread bound
the subsets' standard errors; a release with a box ten thousand times too wide publishes far
narrower intervals once the box is found; the plan says how and what it costs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.gvdp import GVDP, GvdpBoundsSpec, GvdpSettings, PrivateBox
from dpcore.analyses.gvdp.blb import Bag
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.release import DatasetRef, PlanHeader

COEFFICIENTS = ("intercept", "age", "hours")
WIDE = tuple((("ols", "income", c), (-200_000.0, 200_000.0, 200_000.0)) for c in COEFFICIENTS)


@pytest.fixture(scope="module")
def incomes() -> pd.DataFrame:
    """An income in dollars on age and hours: coefficients no one would guess within ±1,000."""
    rng = np.random.default_rng(0)
    n = 20_000
    age, hours = rng.uniform(18, 80, n), rng.uniform(10, 70, n)
    income = 8000 + 600 * age + 300 * hours + rng.normal(0, 15_000, n)
    return pd.DataFrame({"g": rng.choice(["a", "b"], n), "age": age, "hours": hours,
                         "income": income})  # fmt: skip


def settings(source: str) -> GvdpSettings:
    return GvdpSettings(model="ols", outcomes=(("ols", "income"),),
                        covariates=(("ols", ("age", "hours")),), box=WIDE, box_source=source)  # fmt: skip


def test_the_found_box_holds_the_subsets_median_and_bounds_their_spread():
    rng = np.random.default_rng(1)
    k, n = 200, 40_000
    estimates = np.column_stack([rng.normal(600, 50, k), rng.normal(-3, 0.2, k)])
    # BLB variance estimates scatter around the truth (a chi-square of 9 degrees of freedom).
    scatter = rng.chisquare(9, (k, 2)) / 9
    variances = scatter * np.array([(50 / np.sqrt(k)) ** 2, 0.0002])
    search = GvdpBoundsSpec("box", ("a", "b"), spread=(1e6, 1e6), low=(-1e5, -1e5),
                            high=(1e5, 1e5))  # fmt: skip
    found = PrivateBox(0.5).find(Bag(estimates, variances, n), search, 2.0,
                                 noise=SimulationNoise(rng=2))  # fmt: skip
    for j in range(2):
        assert found.low[j] < np.median(estimates[:, j]) < found.high[j]
        assert found.high[j] - found.low[j] < (search.high[j] - search.low[j]) / 50
        typical = np.sqrt(np.median(variances[:, j]) * n)
        assert typical <= found.spread[j] <= 10 * typical  # a safe bound, not a wild one


def test_a_wide_box_found_privately_gives_far_narrower_slopes(incomes):
    """Three seeded releases each way: the slopes' intervals with the box found privately are
    at least five times narrower than with the ±200,000 box typed."""
    spec = GroupingSpec(by=("g",))
    widths = {}
    for source in ("typed", "private"):
        chosen = settings(source)
        stats = GVDP.statistics(incomes, spec.build(incomes), chosen)
        plan = GVDP.plan(stats, chosen, PlanHeader(DatasetRef.of(incomes, "x"), spec, ZCDP(0.5)))
        rows = [r for seed in range(3)
                for r in plan.run(SimulationNoise(rng=seed), np.random.default_rng(seed))
                if r.coefficient != "intercept" and r.low is not None]  # fmt: skip
        widths[source] = np.median([r.high - r.low for r in rows])
    assert widths["private"] < widths["typed"] / 5


def test_the_plan_says_how_the_box_is_found_and_costs_the_whole_budget(incomes):
    spec = GroupingSpec(by=("g",))
    chosen = settings("private")
    stats = GVDP.statistics(incomes, spec.build(incomes), chosen)
    plan = GVDP.plan(stats, chosen, PlanHeader(DatasetRef.of(incomes, "x"), spec, ZCDP(0.5)))
    assert plan.cost == ZCDP(0.5)
    facts = plan.parameters()["estimator"]["private_box"]
    assert facts["fraction"] == 0.2 and facts["cost"] == {"kind": "zcdp", "rho": pytest.approx(0.1)}
    assert "**Box:** found privately" in " ".join(plan.review_lines())
    assert "private_box=PrivateBox(fraction=0.2)" in plan.script_body()
    typed = GVDP.plan(stats, settings("typed"), plan.header)
    assert "private_box" not in typed.parameters()["estimator"]  # typed plans keep their keys


def test_a_guess_cannot_be_searched_and_the_planner_and_coverage_say_so(incomes):
    from dpcore.analyses.base import PlannerUnavailable

    guessed = GvdpSettings(bounds_mode="guess", box_source="private")
    assert [p.field for p in GVDP.problems(guessed, incomes)] == ["bounds_mode"]
    spec = GroupingSpec(by=("g",))
    chosen = settings("private")
    stats = GVDP.statistics(incomes, spec.build(incomes), chosen)
    with pytest.raises(PlannerUnavailable, match="typed box"):
        GVDP.error_model(stats, chosen)
    with pytest.raises(ValueError, match="typed box"):
        GVDP.study(stats, chosen, ZCDP(0.5), replicates=10)


@pytest.mark.slow  # fresh Python processes run the scripts
def test_the_script_of_a_box_found_privately_finds_its_release(tmp_path):
    from dpcore import load_demo_dataset
    from dpcore.foundations.ledger import Ledger
    from dpcore.release import release, to_script
    from tests.scripts import assert_reruns_as_recorded

    frame, dataset = load_demo_dataset()
    box = ((("mean", "hours_per_week", "intercept"), (0.0, 1000.0, 500.0)),)
    chosen = GvdpSettings(model="mean", outcomes=(("mean", "hours_per_week"),), box=box,
                          box_source="private")  # fmt: skip
    spec = GroupingSpec(by=("sex",))
    stats = GVDP.statistics(frame, spec.build(frame), chosen)
    plan = GVDP.plan(stats, chosen, PlanHeader(dataset, spec, ZCDP(0.3)))
    ledger = Ledger(tmp_path / "l.sqlite", "default", ZCDP(1.0))
    record = release(plan, ledger, noise="simulation", rng=7)
    assert_reruns_as_recorded(to_script(record), record, tmp_path, ledger)
