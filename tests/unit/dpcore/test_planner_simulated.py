"""Error models known only by simulation: the mechanics against a law with a known answer, the
monotone envelope, bad input, and CoinPress on the demo checked by independent simulations."""

from __future__ import annotations

import pickle
from dataclasses import dataclass

import numpy as np
import pytest

from dpcore.analyses import MEAN
from dpcore.analyses.mean import MeanSettings
from dpcore.analyses.mean.accuracy import check_by_simulation
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.datasets import load_demo
from dpcore.foundations.grouping import GroupingSpec
from dpcore.planner import (
    AccuracyTarget,
    PlannedRelease,
    SimulatedErrorModel,
    log_grid,
    shortfall,
    smallest_budget,
    split_budget,
)

LEVEL = 0.95


@dataclass(frozen=True)
class HalfNormalOver:
    """|Z|·f(s) for two estimates, with f(s) = 1/s, plus ``bump`` for s in (1, 3), plus
    ``floor`` at every s: a law whose quantile at every budget is known from the draws."""

    bump: float = 0.0
    floor: float = 0.0

    def __call__(self, scale: float, replicates: int, rng: np.random.Generator) -> np.ndarray:
        factor = 1 / scale + (self.bump if 1 < scale < 3 else 0.0) + self.floor
        return np.abs(rng.standard_normal((replicates, 2))) * factor * np.array([1.0, 0.5])


def model_of(simulator, grid=None) -> SimulatedErrorModel:
    return SimulatedErrorModel(
        labels=("small", "large"), sizes=np.array([10, 40]), shapes=(), unit="rho", groups=2,
        truth=np.array([1.0, 2.0]), simulator=simulator,
        grid=log_grid(0.1, 100, 8) if grid is None else grid, replicates=2000, seed=3,
    )  # fmt: skip


def seeded_quantile(replicates: int = 2000, seed: int = 3) -> np.ndarray:
    draws = np.abs(np.random.default_rng(seed).standard_normal((replicates, 2)))
    return np.quantile(draws, LEVEL, axis=0)


def test_the_smallest_budget_is_the_known_answer_of_the_simulated_law():
    answer = smallest_budget(model_of(HalfNormalOver()), AccuracyTarget(0.5))
    expected = seeded_quantile()[0] / 0.5  # q(s) = q_Z / s for the first estimate
    assert answer.binding == "small"
    assert answer.budget.rho == pytest.approx(expected**2, rel=2e-3)
    table = answer.table.set_index("estimate")
    assert table.loc["small", "error at budget"] <= 0.5
    assert table.loc["large", "needed ρ"] == pytest.approx(
        (seeded_quantile()[1] * 0.5 / 0.5) ** 2,
        rel=0.05,  # interpolated on the grid
    )
    assert answer.notes == ()


def test_an_error_that_rises_with_the_budget_is_taken_at_its_worst_larger_budget_and_said():
    model = model_of(HalfNormalOver(bump=0.5))
    answer = smallest_budget(model, AccuracyTarget(1.5))
    # Without the bump the first estimate needs s = q_Z/1.5 ≈ 1.3, inside the bump, where the
    # error rises; every budget above s = 3 meets the target, so the answer is s ≈ 3.
    assert answer.budget.rho == pytest.approx(9.0, rel=0.01)
    assert any("rose with the budget" in note and "small" in note for note in answer.notes)
    assert model.half_widths_at(np.sqrt(answer.budget.rho), answer.target)[0] <= 1.5


def test_a_target_below_the_error_floor_is_unreachable_and_says_why():
    answer = smallest_budget(model_of(HalfNormalOver(floor=0.4)), AccuracyTarget(0.5))
    assert answer.budget is None
    assert answer.unreachable[0].startswith("small: even at ρ = 10000")


def test_a_target_met_at_the_smallest_budget_simulated_says_a_smaller_one_may_do():
    answer = smallest_budget(model_of(HalfNormalOver()), AccuracyTarget(100.0))
    assert answer.budget.rho == pytest.approx(0.01)
    assert "a smaller one may too" in answer.notes[-1]


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"simulator": None}, TypeError, "`simulator` must be given"),
        ({"grid": np.array([1.0, 0.5])}, ValueError, "`grid` must be increasing"),
        ({"grid": np.array([0.0, 1.0])}, ValueError, "`grid` must be increasing"),
        ({"grid": np.array([1.0])}, ValueError, "`grid` must be increasing"),
    ],
)
def test_bad_models_are_refused(changes, error, message):
    arguments = {"simulator": HalfNormalOver(), "grid": log_grid(0.1, 100, 8)} | changes
    with pytest.raises(error, match=message):
        model_of(arguments["simulator"], arguments["grid"])


def test_a_bias_target_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="already include its clipping"):
        smallest_budget(model_of(HalfNormalOver()), AccuracyTarget(1.0, include_bias=True))


def test_the_shortfall_gives_errors_but_no_row_count():
    result = shortfall(model_of(HalfNormalOver()), AccuracyTarget(0.5), ZCDP(9.0))
    assert result.short == ("small",)
    assert result.table["rows needed"].isna().all()
    assert "cannot say how many rows" in result.rows_reason


@pytest.fixture(scope="module")
def demo():
    frame, settings = load_demo(), MeanSettings(estimator="coinpress")
    stats = MEAN.statistics(frame, GroupingSpec(by=("race", "sex")).build(frame), settings)
    return stats, settings, MEAN.error_model(stats, settings)


def test_coinpress_is_a_curator_preview_in_rho(demo):
    _, _, model = demo
    assert model.unit == "rho" and model.curator_preview
    assert model.reads == ("each group's values, to which CoinPress adapts every step",)
    assert model.bias is None  # the clipping bias checkbox is not offered


@pytest.mark.parametrize("half_width", [2.0, 0.5])
def test_coinpress_answer_meets_the_target_and_a_fifth_less_budget_does_not(demo, half_width):
    stats, settings, model = demo
    target = AccuracyTarget(half_width, level=LEVEL)
    answer = smallest_budget(model, target)
    assert answer.binding == "Other × Female"

    def met(rho: float) -> float:  # independent of the planner's seed
        check = MEAN.check_accuracy(stats, settings, ZCDP(rho), target, replicates=4000, rng=99)
        return check.set_index("estimate").loc[answer.binding, "met"]

    assert met(answer.budget.rho) >= LEVEL - 0.01
    assert met(0.8 * answer.budget.rho) < LEVEL - 0.01


def test_coinpress_model_survives_the_apps_cache(demo):
    _, _, model = demo
    copy = pickle.loads(pickle.dumps(model))
    target = AccuracyTarget(1.0)
    assert smallest_budget(copy, target).budget == smallest_budget(model, target).budget


def test_coinpress_check_refuses_a_bias_target(demo):
    stats, settings, _ = demo
    estimator = MEAN.estimator(settings)
    with pytest.raises(ValueError, match="already include its clipping"):
        check_by_simulation(
            stats, estimator, ZCDP(1.0), AccuracyTarget(1.0, include_bias=True), replicates=10
        )


def test_a_plan_of_releases_splits_with_coinpress_and_its_simulated_errors(demo):
    stats, _, model = demo
    laplace = MEAN.error_model(stats, MeanSettings())
    releases = [
        PlannedRelease("coinpress", model, AccuracyTarget(2.0)),
        PlannedRelease("laplace", laplace, AccuracyTarget(2.0)),
    ]
    roomy = split_budget(releases, ZCDP(20.0))
    assert roomy.factor > 1 and all(share.meets for share in roomy.shares)
    tight = split_budget(releases, ZCDP(0.5))
    assert tight.factor < 1 and not any(share.meets for share in tight.shares)
    coinpress = tight.shares[0]
    rho = coinpress.budget.rho
    expected = model.half_widths_at(np.sqrt(rho), AccuracyTarget(2.0)).max()
    assert coinpress.error == pytest.approx(expected)
    with pytest.raises(ValueError, match="Gaussian noise never meets pure ε-DP"):
        split_budget(releases, PureDP(1.0))


def test_without_refinement_the_answer_is_the_interpolated_crossing_and_simulates_nothing():
    calls = []

    def counted(scale: float, replicates: int, rng: np.random.Generator) -> np.ndarray:
        calls.append(scale)
        return HalfNormalOver()(scale, replicates, rng)

    grid = log_grid(0.1, 100, 4)
    model = SimulatedErrorModel(
        labels=("small", "large"), sizes=np.array([10, 40]), shapes=(), unit="rho", groups=2,
        simulator=counted, grid=grid, replicates=2000, seed=3, refine_steps=0,
    )  # fmt: skip
    built = len(calls)
    answer = smallest_budget(model, AccuracyTarget(0.5))
    # q(s) = q_Z / s is a line in log–log, so the interpolated crossing is the exact answer.
    assert answer.budget.rho == pytest.approx((seeded_quantile()[0] / 0.5) ** 2, rel=1e-9)
    assert len(calls) == built + 1  # the grid, then only the error at the answer
