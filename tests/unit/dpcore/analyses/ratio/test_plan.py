"""The calibration ratio per group: group sums, previews, simulations, cost and the release plan."""

from __future__ import annotations

import json
import math
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcore.analyses.ratio.budget import release_arguments, release_cost
from dpcore.analyses.ratio.groups import GroupRatioSums, bootstrap_group_sums, group_ratio_sums
from dpcore.analyses.ratio.intervals import NO_VARIANCE, compare_ratios
from dpcore.analyses.ratio.noise import zcdp_rho
from dpcore.analyses.ratio.plan import RatioPlan
from dpcore.analyses.ratio.preview import (
    ALL_GROUPS,
    estimate_ratios,
    recombine,
    select_group,
    simulate_ratio_intervals,
)
from dpcore.analyses.ratio.study import load_table1, ratio_study, table1_comparison
from dpcore.analyses.ratio.sums import RatioBounds, ratio_sums
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.datasets import load_demo, load_demo_dataset
from dpcore.foundations.grouping import Grouping, GroupingSpec
from dpcore.foundations.ledger import BudgetExceededError, Ledger
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.release import PlanHeader, plan_key, release, to_script
from tests.scripts import assert_reruns_as_recorded

SPEC = GroupingSpec(by=("race", "sex"))
COLUMNS = {"s_column": "score", "y_column": "income_over_50k"}
UNIT = RatioBounds()


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return load_demo()


@pytest.fixture(scope="module")
def grouping(demo) -> Grouping:
    return SPEC.build(demo)


@pytest.fixture(scope="module")
def sums(demo, grouping) -> GroupRatioSums:
    return group_ratio_sums(demo, grouping, **COLUMNS, bounds=UNIT, binary_y=True)


def header(demo, *, epsilon: float = 1.0, label: str = "", level: float = 0.95) -> PlanHeader:
    return PlanHeader(
        dataset=load_demo_dataset()[1], spec=SPEC, budget=PureDP(epsilon),
        label=label, level=level,
    )  # fmt: skip


def make_plan(demo, *, epsilon=1.0, label="", level=0.95, **options) -> RatioPlan:
    arguments = {
        **COLUMNS,
        "bounds": UNIT,
        "binary_y": True,
        "delta": 1e-6,
        "mechanism": "gaussian",
    }
    return RatioPlan.build(
        demo, header=header(demo, epsilon=epsilon, label=label, level=level),
        **{**arguments, **options},
    )  # fmt: skip


def weighted_frame(seed: int = 0, n: int = 600) -> pd.DataFrame:
    """Two regions with a score, a 0/1 label, a weight and a few missing values."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "region": np.where(rng.random(n) < 0.7, "north", "south"),
            "score": rng.random(n),
            "label": (rng.random(n) < 0.4).astype(int),
            "weight": rng.exponential(1.0, n) * 2,
            "value": rng.random(n),
        }
    )
    frame.loc[[3, 10], "score"] = np.nan
    frame.loc[[10, 20, 30], "weight"] = np.nan
    return frame


# ---- group sums ---------------------------------------------------------------------------------


def test_group_sums_equal_ratio_sums_of_each_groups_rows(demo, grouping, sums):
    codes = grouping.assign(demo)
    for g, label in enumerate(grouping.labels):
        rows = demo[codes == g]
        expected = ratio_sums(rows["score"], rows["income_over_50k"], bounds=UNIT, binary_y=True)
        for name in expected.released:
            assert sums.sums.value(name)[g] == pytest.approx(expected.value(name), rel=1e-12)
        assert sums.labels[g] == label
    assert sums.sums.released == ("w", "ws", "wy", "wss", "wys")  # 5 sums: unweighted, binary y
    assert sums.rows.sum() == len(demo) and sums.n_missing == 0 and sums.messages() == []
    assert sums.global_truth == pytest.approx(demo["score"].sum() / demo["income_over_50k"].sum())


def test_weighted_sums_clip_drop_missing_rows_and_say_how_many():
    frame = weighted_frame()
    spec = GroupingSpec(by=("region",))
    grouping = spec.build(frame)
    bounds = RatioBounds(0.8, 1.0, 3.0)
    got = group_ratio_sums(frame, grouping, s_column="score", y_column="label", w_column="weight",
                           bounds=bounds, binary_y=True)  # fmt: skip
    assert got.n_missing == 4 and got.rows.sum() == len(frame) - 4
    assert "4 of 600 rows" in got.messages()[0] and "`weight`" in got.messages()[0]
    assert got.sums.released == ("w", "ws", "wy", "ww", "wss", "wys")  # Σw² released: weighted
    keep = frame.dropna(subset=["score", "weight"])
    codes = grouping.assign(keep)
    for g in range(grouping.k):
        rows = keep[codes == g]
        expected = ratio_sums(rows["score"], rows["label"], rows["weight"], bounds=bounds,
                              binary_y=True)  # fmt: skip
        for name in expected.released:
            assert got.sums.value(name)[g] == pytest.approx(expected.value(name), rel=1e-12)


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"s_column": "race"}, ValueError, "`s_column` column 'race' must be numeric"),
        ({"y_column": "nope"}, ValueError, "`y_column` names column 'nope'"),
        ({"y_column": "score"}, ValueError, "`y_column` and `s_column` must be different"),
        ({"y_column": "hours_per_week"}, ValueError, "must contain only 0 and 1"),
        ({"w_column": "age", "bounds": RatioBounds(1, 1, 0.5)}, ValueError, "`bounds.w` must be >= 1"),
        ({"bounds": RatioBounds(1, 1, 2)}, ValueError, "`bounds.w` must be 1 without a weight"),
        ({"bounds": RatioBounds(1, 2, 1)}, ValueError, "`bounds.y` must be 1 for a binary label"),
        ({"binary_y": 1}, TypeError, "`binary_y` must be True or False"),
    ],
)  # fmt: skip
def test_bad_columns_and_bounds_are_refused_naming_the_parameter(
    demo, grouping, options, error, match
):
    arguments = {**COLUMNS, "bounds": UNIT, "binary_y": True, **options}
    with pytest.raises(error, match=match):
        group_ratio_sums(demo, grouping, **arguments)


def test_bounds_must_be_positive():
    with pytest.raises(ValueError, match="`bounds.s` must be a finite number > 0, got 0.0"):
        RatioBounds(0.0, 1.0)


# ---- one release ---------------------------------------------------------------------------------


def test_the_global_ratio_adds_the_noisy_group_sums(sums):
    result = estimate_ratios(sums, epsilon=1.0, delta=1e-6, mechanism="gaussian", rng=4)
    frame = result.frame()
    groups, whole = frame[frame["level"] == "group"], frame[frame["level"] == "population"]
    assert list(frame["group"]) == [*sums.labels, ALL_GROUPS]
    for name in ("w", "ws", "wy", "wss", "wys"):
        column = f"noisy_sum_{name}"
        assert whole[column].iloc[0] == pytest.approx(groups[column].sum(), rel=1e-12)
    combined = recombine(result.release)
    k = len(sums.labels)
    assert combined.noise_scale["ws"] == pytest.approx(
        math.sqrt(k) * result.release.noise_scale["ws"]
    )
    assert combined.cost == result.release.cost  # post-processing: same cost
    assert whole["estimate"].iloc[0] == pytest.approx(
        groups["noisy_sum_ws"].sum() / groups["noisy_sum_wy"].sum()
    )


def test_compare_two_groups_is_compare_ratios_on_their_intervals(sums):
    result = estimate_ratios(sums, epsilon=2.0, delta=1e-6, mechanism="gaussian_analytic", rng=1)
    got = result.compare(0, 2)
    expected = compare_ratios(select_group(result.groups, 0), select_group(result.groups, 2))
    assert got.difference == pytest.approx(expected.difference)
    assert got.p_value == pytest.approx(expected.p_value)
    assert got.difference == pytest.approx(result.groups.estimate[0] - result.groups.estimate[2])
    with pytest.raises(ValueError, match="`a` and `b` must be different groups"):
        result.compare(1, 1)
    with pytest.raises(ValueError, match="`b` must be a group index"):
        result.compare(0, 99)


# ---- cost ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.2, 1.0, 4.0])
def test_gaussian_basic_cost_is_the_exact_zcdp_of_its_noise(epsilon):
    # Eq. 5 with (ε/m, δ/m) per sum: σ = Δ √(2 ln(1.25 m/δ)) m/ε, so each of the m sums costs
    # Δ²/(2σ²) = ε²/(4 m² ln(1.25 m/δ)) and the release ε²/(4 m ln(1.25 m/δ)).
    m, delta = 5, 1e-6
    cost, sensitivity, scales = release_cost(bounds=UNIT, weighted=False, binary_y=True,
                                             epsilon=epsilon, delta=delta, mechanism="gaussian")  # fmt: skip
    assert isinstance(cost, ZCDP)
    assert cost.rho == pytest.approx(epsilon**2 / (4 * m * math.log(1.25 * m / delta)), rel=1e-12)
    assert set(scales) == set(sensitivity) == {"w", "ws", "wy", "wss", "wys"}


def test_weighted_gaussian_cost_sums_every_released_sums_share():
    bounds = RatioBounds(1.0, 1.0, 3.0)
    cost, sensitivity, scales = release_cost(bounds=bounds, weighted=True, binary_y=True,
                                             epsilon=1.0, delta=1e-6, mechanism="gaussian")  # fmt: skip
    assert sensitivity["ww"] == 9.0 and sensitivity["ws"] == 3.0  # u_w² and u_w u_s
    expected = math.fsum(sensitivity[n] ** 2 / (2 * scales[n] ** 2) for n in sensitivity)
    assert cost == ZCDP(expected)
    m = 6
    assert cost.rho == pytest.approx(1.0 / (4 * m * math.log(1.25 * m / 1e-6)), rel=1e-12)


def test_zcdp_composition_costs_the_rho_it_was_calibrated_to():
    cost, _, scales = release_cost(bounds=UNIT, weighted=False, binary_y=True, epsilon=1.0,
                                   delta=1e-6, mechanism="gaussian", composition="zcdp")  # fmt: skip
    rho = zcdp_rho(1.0, 1e-6)
    assert cost.rho == pytest.approx(rho, rel=1e-12)
    assert scales["ws"] == pytest.approx(1 / math.sqrt(2 * rho / 5))
    basic = release_cost(bounds=UNIT, weighted=False, binary_y=True, epsilon=1.0, delta=1e-6,
                         mechanism="gaussian")[0]  # fmt: skip
    assert cost.rho > basic.rho  # same (ε, δ): zCDP spends more ρ for less noise


def test_laplace_costs_pure_epsilon():
    cost, _, scales = release_cost(bounds=UNIT, weighted=False, binary_y=True, epsilon=0.5,
                                   delta=None, mechanism="laplace")  # fmt: skip
    assert cost == PureDP(0.5)
    assert scales["ws"] == pytest.approx(5 / 0.5)  # b = Δ m / ε


@pytest.mark.parametrize("rho", [0.001, 0.1, 0.5, 3.0])
def test_a_rho_budget_is_spent_exactly_and_never_exceeded(rho):
    options = {"bounds": UNIT, "weighted": False, "binary_y": True}
    arguments = release_arguments(ZCDP(rho), mechanism="gaussian", **options)
    assert arguments["composition"] == "zcdp"
    cost = release_cost(**options, **arguments)[0]
    assert Decimal(repr(cost.rho)) <= Decimal(repr(rho))
    assert cost.rho == pytest.approx(rho, rel=1e-9)
    laplace = release_arguments(ZCDP(rho), mechanism="laplace", **options)
    assert Decimal(repr(laplace["epsilon"])) ** 2 / 2 <= Decimal(repr(rho))
    with pytest.raises(ValueError, match="`mechanism` 'gaussian_analytic' splits"):
        release_arguments(ZCDP(rho), mechanism="gaussian_analytic", **options)


def test_a_pure_budget_keeps_its_epsilon_and_adds_delta_for_gaussian_noise():
    options = {"bounds": UNIT, "weighted": False, "binary_y": True}
    assert release_arguments(PureDP(0.7), mechanism="gaussian", delta=1e-7, **options) == {
        "epsilon": 0.7, "delta": 1e-7, "mechanism": "gaussian", "composition": "basic",
    }  # fmt: skip
    laplace = release_arguments(PureDP(0.7), mechanism="laplace", composition="zcdp", **options)
    assert laplace == {"epsilon": 0.7, "delta": None, "mechanism": "laplace",
                       "composition": "basic"}  # fmt: skip


# ---- the plan ------------------------------------------------------------------------------------


def test_plan_rows_have_intervals_or_a_reason(demo):
    plan = make_plan(demo)
    rows = [row.to_dict() for row in plan.run(SimulationNoise(rng=3), np.random.default_rng(3))]
    assert [row["level"] for row in rows] == ["group"] * 10 + ["population"]
    assert rows[-1]["group"] == ALL_GROUPS
    for row in rows:
        if row["flag"]:
            assert row["low"] is None and row["high"] is None
        else:
            assert row["low"] <= row["estimate"] <= row["high"]
    json.dumps(rows, allow_nan=False)  # valid JSON: undefined values are None, not NaN
    assert plan.cost == release_cost(bounds=UNIT, weighted=False, binary_y=True, epsilon=1.0,
                                     delta=1e-6, mechanism="gaussian")[0]  # fmt: skip


def test_a_ratio_whose_noisy_sums_are_not_positive_is_withheld_and_no_end_is_negative(demo):
    """At ε = 0.05 small groups' noisy sums go negative: their ratio is withheld with the reason
    (−27.66 / −8.97 must not publish 3.08), and no interval reaches below 0."""
    plan = make_plan(demo, epsilon=0.05)
    rows = [row.to_dict() for seed in range(5)
            for row in plan.run(SimulationNoise(rng=seed), np.random.default_rng(seed))]  # fmt: skip
    withheld = [row for row in rows if row["flag"] and row["flag"] != NO_VARIANCE]
    assert withheld, "ε = 0.05 should leave some group with a non-positive noisy sum"
    for row in withheld:
        assert row["estimate"] is None and "≤ 0" in row["flag"]
    ends = [row["low"] for row in rows if row["low"] is not None]
    assert ends and min(ends) >= 0.0
    for row in rows:
        if row["estimate"] is not None and not row["flag"]:
            assert row["low"] <= row["estimate"] <= row["high"]


def test_parameters_are_json_ready_and_the_key_is_stable(demo):
    plan = make_plan(demo)
    parameters = plan.parameters()
    json.dumps(parameters, allow_nan=False)
    assert parameters["statistic"] == "calibration ratio Σscore/Σincome_over_50k"
    assert parameters["budget"] == {"kind": "pure", "epsilon": 1.0}  # the budget planned at
    assert parameters["estimator"]["epsilon"] == 1.0 and plan.cost.kind == "zcdp"
    assert plan.header.label == "Calibration ratio Σscore/Σincome_over_50k by race × sex"
    assert plan_key(plan) == plan_key(make_plan(demo.copy()))
    changed = {
        plan_key(make_plan(demo, **options))
        for options in ({"epsilon": 0.5}, {"method": "none"}, {"scale": "log"},
                        {"label": "Other"}, {"composition": "zcdp"}, {"level": 0.9})
    }  # fmt: skip
    assert plan_key(plan) not in changed and len(changed) == 6


def test_plan_refuses_impossible_settings_before_anything_runs(demo, grouping, sums):
    base = {"sums": sums, "header": header(demo), "delta": 1e-6}
    with pytest.raises(ValueError, match="classic Gaussian mechanism"):
        RatioPlan(**{**base, "header": header(demo, epsilon=8.0)}, mechanism="gaussian")
    with pytest.raises(ValueError, match="`method` must be one of"):
        RatioPlan(**base, mechanism="gaussian", method="bootstrap")
    with pytest.raises(TypeError, match="`sums` must be a GroupRatioSums"):
        RatioPlan(**{**base, "sums": sums.sums}, mechanism="gaussian")


def test_release_charges_exactly_the_cost_once(demo):
    plan = make_plan(demo)
    ledger = Ledger(None, "default", ZCDP(1.0))
    record = release(plan, ledger, noise="simulation", rng=0)
    assert record.spent and len(record.outputs) == 11
    left = Decimal("1.0") - Decimal(repr(plan.cost.rho))
    assert ledger.remaining() == {"rho": float(left)}
    again = release(plan, ledger, noise="simulation", rng=1)
    assert not again.spent and again.outputs == record.outputs
    assert ledger.remaining() == {"rho": float(left)}


def test_a_ledger_too_small_refuses_the_plan_and_records_nothing(demo):
    plan = make_plan(demo, composition="zcdp")
    ledger = Ledger(None, "small", ZCDP(plan.cost.rho / 2))
    with pytest.raises(BudgetExceededError, match="Requested ρ"):
        release(plan, ledger, noise="simulation", rng=0)
    assert ledger.history() == []


@pytest.mark.slow
def test_the_script_rebuilds_the_same_plan_and_spends_nothing_again(demo, tmp_path):
    plan = make_plan(demo, method="monte_carlo", scale="log", B=100)
    ledger = Ledger(None, "default", ZCDP(1.0))
    record = release(plan, ledger, noise="simulation", rng=5)
    script = to_script(record)
    assert "RatioPlan.build(" in script and "frame, dataset = load_demo_dataset()" in script
    assert_reruns_as_recorded(script, record, tmp_path, ledger)


# ---- simulation ----------------------------------------------------------------------------------


def calibration_frame(groups: int, n: int, seed: int) -> pd.DataFrame:
    """The paper's design (§3) in every group: s ~ Beta(2, 2), y ~ Bernoulli(s/1.1), r = 1.1."""
    rng = np.random.default_rng(seed)
    s = rng.beta(2, 2, groups * n)
    return pd.DataFrame(
        {
            "group": np.repeat([f"g{i:03d}" for i in range(groups)], n),
            "s": s,
            "y": (rng.random(groups * n) < s / 1.1).astype(int),
            "value": 0.0,
        }
    )


@pytest.mark.slow
def test_analytical_coverage_of_a_known_ratio_passes_a_binomial_test():
    # 400 independent groups of 1,000 rows, each a fresh dataset with true ratio 1.1, released
    # once at ε = 1: 400 replicates of sampling and DP noise together.
    frame = calibration_frame(400, 1000, seed=11)
    grouping = GroupingSpec(by=("group",)).build(frame)
    sums = group_ratio_sums(frame, grouping, s_column="s", y_column="y", bounds=UNIT, binary_y=True)
    covered = {}
    for method in ("analytical", "none"):
        result = estimate_ratios(sums, epsilon=1.0, delta=1e-6, mechanism="gaussian",
                                 method=method, rng=12)  # fmt: skip
        low, high = np.asarray(result.groups.low), np.asarray(result.groups.high)
        covered[method] = int(np.sum((low <= 1.1) & (1.1 <= high)))
    assert stats.binomtest(covered["analytical"], 400, 0.95).pvalue > 0.001
    assert stats.binomtest(covered["none"], 400, 0.95).pvalue < 1e-6  # ignoring noise fails


def test_simulated_coverage_width_and_score(sums):
    frame = simulate_ratio_intervals(sums, epsilon=1.0, delta=1e-6, mechanism="gaussian",
                                     replicates=300, B=50, rng=0)  # fmt: skip
    assert list(frame.columns) == ["group", "rows", "method", "coverage", "width", "median_width",
                                   "score", "median_score", "flagged", "reps"]  # fmt: skip
    assert len(frame) == 3 * 11 and (frame["reps"] == 300).all()
    assert frame["coverage"].between(0, 1).all() and frame["flagged"].between(0, 1).all()
    by = frame.set_index(["group", "method"])
    # The largest group's noise is small next to its sampling variance: every method covers.
    assert by.loc[("White × Male", "analytical"), "coverage"] > 0.95
    # Small groups: ignoring the noise under-covers, the corrections do not.
    small = sums.labels[-1]
    assert by.loc[(small, "none"), "coverage"] < by.loc[(small, "analytical"), "coverage"]
    assert by.loc[(ALL_GROUPS, "analytical"), "rows"] == sums.rows.sum()
    same = simulate_ratio_intervals(sums, epsilon=1.0, delta=1e-6, mechanism="gaussian",
                                    replicates=300, B=50, rng=0)  # fmt: skip
    pd.testing.assert_frame_equal(frame, same)  # seeded


def test_bootstrap_resamples_keep_group_sizes_and_average_to_the_data(demo, grouping, sums):
    boot = bootstrap_group_sums(demo, grouping, sums, replicates=200, rng=0)
    assert boot.shape == (200, grouping.k)
    np.testing.assert_array_equal(boot.w, np.broadcast_to(sums.sums.w, (200, grouping.k)))
    mean_ws = np.asarray(boot.ws).mean(axis=0)
    sd = np.asarray(boot.ws).std(axis=0) / math.sqrt(200)
    assert np.all(np.abs(mean_ws - sums.sums.ws) < 5 * sd + 1e-9)
    frame = simulate_ratio_intervals(sums, epsilon=4.0, delta=1e-6, mechanism="gaussian_analytic",
                                     methods=("analytical",), replicates=200, resampled=boot,
                                     rng=1)  # fmt: skip
    whole = frame[frame["group"] == ALL_GROUPS].iloc[0]
    assert 0.85 < whole["coverage"] <= 1.0
    with pytest.raises(ValueError, match="`resampled` must be RatioSums of shape"):
        simulate_ratio_intervals(sums, epsilon=1.0, delta=1e-6, mechanism="gaussian",
                                 replicates=100, resampled=boot)  # fmt: skip


def test_table1_comparison_puts_the_papers_numbers_beside_ours():
    study = ratio_study(n=5000, epsilon=(0.5, 1.0), weighted=False, reps=50, B=20, rng=0)
    comparison = table1_comparison(study, load_table1())
    assert len(comparison) == 2 * 4
    row = comparison[(comparison["epsilon"] == 1.0) & (comparison["method"] == "analytical")]
    assert row["paper_coverage"].iloc[0] == 0.950 and row["paper_width"].iloc[0] == 0.094
    assert list(comparison["method"].iloc[:4]) == ["public", "none", "monte_carlo", "analytical"]
    assert comparison["ours_coverage"].between(0, 1).all()


def test_corrected_intervals_state_where_they_cover_less_with_the_number(demo):
    """Issue 42: over few skewed rows the delta method's intervals cover 89–93% for a nominal
    95% (benchmarks/bench_coverage.py); the review says so with the number, and the
    uncorrected interval, already described as ignoring the noise, adds nothing."""
    plan = make_plan(demo)
    note = plan.coverage_note
    assert note.lowest == 0.89 and note.measured == "89–93%"
    assert any(line.startswith("**Coverage:** Nominal 95%") for line in plan.review_lines())
    assert make_plan(demo, method="none").coverage_note is None
