"""Small groups merged or dropped by a release's own noisy counts: post-processing of DP outputs
over a declared list of groups, never a decision from the exact counts."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.analyses.mean.plan import MeanPlan
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import run_strategy
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import OTHER_LABEL, GroupingSpec
from dpcore.foundations.ledger import Ledger
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.small_groups import CountNoise, NoisyCountRule
from dpcore.release import DatasetRef, PlanHeader, release, to_csv, to_json
from strata_ui.report import html_report

HOURS = (0.0, 100.0)
PRIVATE = LaplaceMean(bounds=HOURS, n_public=False)
CATEGORIES = (("kind", ("big", "middle", "small", "tiny", "none")),)
EPSILON_1 = PureDP(1.0)
SIZES = {"big": 400, "middle": 60, "small": 25, "tiny": 12}


def frame_of(sizes: dict[str, int]) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    kinds = [kind for kind, size in sizes.items() for _ in range(size)]
    return pd.DataFrame({"kind": kinds, "hours": rng.uniform(20, 60, len(kinds)).round()})


def spec_of(policy: str, min_size: int = 30) -> GroupingSpec:
    return GroupingSpec(
        by=("kind",), share_source="noisy_counts", small_groups=policy, min_group_size=min_size,
        categories=CATEGORIES,
    )  # fmt: skip


def plan_of(frame, spec, estimator=PRIVATE, budget=EPSILON_1, **options) -> MeanPlan:
    header = PlanHeader(DatasetRef.of(frame, "survey.csv"), spec, budget)
    values = GroupValues.from_grouping(spec.build(frame), frame, "hours")
    return MeanPlan(values=values, header=header, estimator=estimator, **options)


def test_the_rule_merges_below_the_threshold_and_drops_a_pooled_group_still_too_small():
    merge, drop = NoisyCountRule(30, "merge"), NoisyCountRule(30, "drop")
    counts = np.array([[400.0, 29.9, 30.0, 12.0, 25.0], [400.0, 29.0, 60.0, -3.0, 0.5]])
    decision = merge.decide(counts)
    np.testing.assert_array_equal(decision.kept, counts >= 30)
    # Row 1 pools 29.9 + 12 + 25 ≥ 30: merged. Row 2 pools 29 − 3 + 0.5 < 30: all dropped.
    np.testing.assert_array_equal(decision.merged, [[0, 1, 0, 1, 1], [0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(decision.has_other, [True, False])
    dropped = drop.decide(counts)
    np.testing.assert_array_equal(dropped.dropped, counts < 30)
    assert not dropped.merged.any()


def test_the_recombination_is_the_released_groups_noisy_sums_over_their_noisy_counts():
    rule = NoisyCountRule(30, "merge")
    sums = np.array([16_000.0, 1_200.0, 2_000.0, 400.0, 900.0])
    counts = np.array([400.0, 29.0, 50.0, 12.0, 25.0])
    released = rule.recombine(sums, counts, (0.0, 100.0))
    kept, merged = np.array([1, 0, 1, 0, 0], bool), np.array([0, 1, 0, 1, 1], bool)
    np.testing.assert_array_equal(released.decision.merged, merged)
    assert released.other_mean == pytest.approx(sums[merged].sum() / counts[merged].sum())
    assert released.shares.sum() + released.other_share == pytest.approx(1.0)
    np.testing.assert_allclose(released.shares[kept], counts[kept] / counts.sum())
    assert released.whole == pytest.approx(sums.sum() / counts.sum())
    nothing = NoisyCountRule(1_000, "drop").recombine(sums, counts, (0.0, 100.0))
    assert math.isnan(nothing.whole) and not nothing.decision.kept.any()


def test_the_recombination_clamps_every_mean_into_the_public_range_first():
    """A noisy count of 1 over a sum far outside the range clamps to the range's end before it
    is weighted: the whole moves by at most that group's share of the range."""
    rule = NoisyCountRule(2, "merge")
    sums, counts = np.array([20_000.0, -900.0]), np.array([400.0, 2.0])
    released = rule.recombine(sums, counts, (0.0, 100.0))
    weights = counts / counts.sum()
    assert released.whole == pytest.approx(weights @ np.array([50.0, 0.0]))


def test_a_spec_deciding_by_noisy_counts_builds_every_declared_group_and_needs_nothing_more():
    frame = frame_of(SIZES)
    for policy in ("merge", "drop"):
        spec = spec_of(policy)
        grouping = spec.build(frame)
        assert grouping.labels == CATEGORIES[0][1]  # every declared group, by its exact size none
        assert grouping.report.merged_groups == grouping.report.dropped_groups == ()
        assert grouping.shares.rule == NoisyCountRule(30, policy)
        assert spec.private_sizes_gaps() == ()
    # With fixed shares the same policy still reads the exact sizes, so sizes cannot stay private.
    exact = dataclasses.replace(spec_of("merge"), share_source="table", share_table=(("big", 1),))
    assert exact.noisy_count_rule is None and exact.private_sizes_gaps() == ("keep",)


def test_merging_into_a_declared_other_group_is_refused():
    spec = dataclasses.replace(spec_of("merge"), categories=(("kind", ("big", OTHER_LABEL)),))
    with pytest.raises(ValueError, match="already labelled"):
        spec.build(frame_of({"big": 50, OTHER_LABEL: 3}))


@pytest.mark.parametrize("policy", ["merge", "drop"])
def test_a_release_names_the_groups_the_noisy_counts_merged_or_dropped(tmp_path, policy):
    frame = frame_of(SIZES)
    plan = plan_of(frame, spec_of(policy), budget=PureDP(2.0))
    assert plan.cost == PureDP(2.0)  # the counts are the ones the means already pay for
    assert any("**Small groups:**" in line for line in plan.review_lines())
    record = release(plan, Ledger(tmp_path / "l.sqlite", "default", ZCDP(10.0)),
                     noise="simulation", rng=1)  # fmt: skip
    rows = record.frame.set_index("group")
    # big and middle clear 30 by far; tiny (12) and none (0) fall short by far at ε = 2.
    assert rows.loc[["big", "middle"], "flag"].tolist() == ["", ""]
    assert rows.loc[["big", "middle"], "estimate"].notna().all()
    for group in ("tiny", "none"):
        assert rows.loc[group, "flag"].startswith("merged" if policy == "merge" else "not released")
        assert pd.isna(rows.loc[group, "estimate"]) and pd.isna(rows.loc[group, "noisy_share"])
    assert (OTHER_LABEL in rows.index) == (policy == "merge")
    shares = rows["noisy_share"].dropna()
    assert shares.sum() == pytest.approx(1.0)
    said = "merged into one group" if policy == "merge" else "were not released"
    assert "# small_groups: groups whose noisy count" in to_csv(record)
    assert said in to_csv(record)
    assert said in json.loads(to_json(record))["metadata"]["small_groups"]
    assert said in html_report(record, figure=None)


def test_a_release_without_the_rule_says_nothing_of_it(tmp_path):
    frame = frame_of(SIZES)
    record = release(plan_of(frame, spec_of("keep")),
                     Ledger(tmp_path / "l.sqlite", "default", ZCDP(10.0)),
                     noise="simulation", rng=1)  # fmt: skip
    assert "flag" not in record.frame and "# small_groups:" not in to_csv(record)


@pytest.mark.parametrize(
    ("estimator", "budget", "noise"),
    [
        (PRIVATE, PureDP(0.5), CountNoise("laplace", 4.0)),  # ε/2 on the count: Lap(2/ε)
        (
            GaussianMean(bounds=HOURS, n_public=False),
            ZCDP(0.02),
            CountNoise("gaussian", 0.02**-0.5),
        ),
    ],
)
def test_a_group_is_released_as_often_as_its_noisy_count_clears_the_threshold(
    estimator, budget, noise
):
    """The simulated releases keep each group with the probability the count noise gives
    (binomial test), the same law the Strata page shows as each group's chance."""
    frame = frame_of(SIZES)
    values = GroupValues.from_grouping(spec_of("drop").build(frame), frame, "hours")
    replicates = 4000
    result = run_strategy(
        "stratified", values, estimator, budget, values.shares, replicates=replicates,
        noise=SimulationNoise(rng=7),
    )  # fmt: skip
    kept = result.released.decision.kept.sum(axis=0)
    expected = noise.clear_probability(values.sizes, 30)
    for g, label in enumerate(values.labels):
        if 0.001 < expected[g] < 0.999:
            p = stats.binomtest(int(kept[g]), replicates, expected[g]).pvalue
            assert p > 1e-3, (label, kept[g] / replicates, expected[g])
    population = result.global_estimate
    assert np.isfinite(population).all()


def test_one_added_person_moves_the_set_of_released_groups_by_at_most_e_to_the_epsilon():
    """D has a group of exactly 29 people (one short of the threshold), D′ one more: the exact
    rule would flip it deterministically; with the noisy counts its chance of release changes
    by at most e^(ε/2), ε/2 being what the count costs (neighbouring-input test)."""
    budget = PureDP(1.0)
    before = frame_of({"big": 400, "small": 29})
    after = frame_of({"big": 400, "small": 30})
    spec = dataclasses.replace(spec_of("drop"), categories=(("kind", ("big", "small")),))
    replicates = 20_000
    released = []
    for frame in (before, after):
        values = GroupValues.from_grouping(spec.build(frame), frame, "hours")
        result = run_strategy(
            "stratified", values, PRIVATE, budget, values.shares, replicates=replicates,
            noise=SimulationNoise(rng=11),
        )  # fmt: skip
        released.append(result.released.decision.kept[:, 1].mean())
    bound = math.exp(budget.epsilon / 2)
    slack = 4 * math.sqrt(0.25 / replicates)
    assert 0.3 < released[0] < released[1] < 0.7  # neither always nor never: not deterministic
    assert released[1] <= bound * released[0] + slack
    assert 1 - released[0] <= bound * (1 - released[1]) + slack


def test_the_count_noise_chance_matches_its_law():
    laplace, gaussian = CountNoise("laplace", 2.0), CountNoise("gaussian", 2.0)
    np.testing.assert_allclose(
        laplace.clear_probability(np.array([30, 28]), 30), [0.5, 0.5 * math.exp(-1)]
    )
    assert gaussian.clear_probability(np.array([32]), 30)[0] == pytest.approx(stats.norm.cdf(1))
    with pytest.raises(ValueError, match="scale"):
        CountNoise("laplace", 0.0)
