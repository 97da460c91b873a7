"""Monte Carlo engine: tidy replicate frames, reproducibility, progress, parity, budget sweeps."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.mean.coinpress import CoinPressMean
from dpcore.analyses.mean.estimators import LaplaceMean
from dpcore.analyses.mean.simulate import (
    GLOBAL_LABEL,
    Simulation,
    budget_sweep,
    group_summary,
    monte_carlo,
    parity_by_replicate,
    simulate_releases,
)
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import run_strategy
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.metrics import parity_error
from dpcore.foundations.shares import PublicShares, shares_from_counts

COLUMNS = ["replicate", "group", "level", "size", "estimate", "truth", "error"]
ESTIMATOR = LaplaceMean(bounds=(0.0, 100.0))  # every value lies inside: clipping is a no-op


@pytest.fixture(scope="module")
def strata() -> GroupValues:
    rng = np.random.default_rng(21)
    sizes = {"north": 300, "south": 120, "east": 60, "west": 20}
    df = pd.DataFrame(
        {
            "region": np.repeat(list(sizes), list(sizes.values())),
            "value": rng.uniform(20.0, 80.0, sum(sizes.values())),
        }
    )
    return GroupValues.from_frame(df, "region", "value")


@pytest.mark.parametrize("strategy", ["stratified", "global_only", "global_and_groups"])
def test_tidy_frame_shape_and_columns(strata, strategy):
    reps = 37
    frame = monte_carlo(strata, ESTIMATOR, PureDP(1.0), strategy=strategy, replicates=reps, rng=0)
    assert list(frame.columns) == COLUMNS
    assert len(frame) == reps * (strata.k + 1)
    assert sorted(frame["replicate"].unique()) == list(range(reps))
    assert frame.groupby("replicate").size().eq(strata.k + 1).all()
    glob = frame[frame["level"] == "global"]
    assert len(glob) == reps
    assert (glob["group"] == GLOBAL_LABEL).all()
    assert (glob["size"] == strata.n).all()
    assert glob["truth"].to_numpy() == pytest.approx(strata.sorted_values.sum() / strata.n)
    groups = frame[frame["level"] == "group"]
    truth = groups.groupby("group")["truth"].first()
    size = groups.groupby("group")["size"].first()
    sums = [strata.group_values(g).sum() for g in range(strata.k)]
    for label, n_g, s in zip(strata.labels, strata.sizes, sums, strict=True):
        assert truth[label] == pytest.approx(s / n_g)
        assert size[label] == n_g
    by_hand = np.abs(frame["estimate"] - frame["truth"]) / np.abs(frame["truth"])
    np.testing.assert_allclose(frame["error"], by_hand, rtol=1e-12)


def test_global_rows_are_the_recombined_group_rows(strata):
    """Stratified: each replicate's global row is Σ w_g × its group rows (DP estimates)."""
    frame = monte_carlo(strata, ESTIMATOR, PureDP(1.0), replicates=600, rng=1)
    wide = frame[frame["level"] == "group"].pivot(
        index="replicate", columns="group", values="estimate"
    )
    w = pd.Series(strata.sizes / strata.n, index=list(strata.labels))
    recombined = wide[w.index].to_numpy() @ w.to_numpy()
    glob = frame[frame["level"] == "global"].set_index("replicate")["estimate"]
    np.testing.assert_allclose(glob.loc[wide.index].to_numpy(), recombined, rtol=1e-12)


def test_global_rows_match_the_strategy_with_the_same_seed(strata):
    """Up to one chunk of replicates, the engine's numbers are run_strategy's with the same
    seed, brought into the public range as a release publishes them."""
    reps = 100
    low, high = ESTIMATOR.public_range
    for strategy in ("stratified", "global_only", "global_and_groups"):
        frame = monte_carlo(
            strata, ESTIMATOR, PureDP(1.0), strategy=strategy, replicates=reps, rng=7
        )
        direct = run_strategy(
            strategy, strata, ESTIMATOR, PureDP(1.0), shares_from_counts(strata),
            replicates=reps, rng=7,
        )  # fmt: skip
        glob = frame.loc[frame["level"] == "global", "estimate"].to_numpy()
        np.testing.assert_array_equal(glob, np.clip(direct.global_estimate, low, high))
        groups = frame.loc[frame["level"] == "group", "estimate"].to_numpy().reshape(reps, -1)
        np.testing.assert_array_equal(groups, np.clip(direct.group_estimates, low, high))


def test_explicit_shares_are_used(strata):
    w = np.full(strata.k, 1 / strata.k)
    shares = PublicShares(w, "table", "equal weights")
    frame = monte_carlo(strata, ESTIMATOR, PureDP(1.0), shares=shares, replicates=20, rng=2)
    est = frame["estimate"].to_numpy().reshape(20, strata.k + 1)
    np.testing.assert_allclose(est[:, -1], est[:, :-1].mean(axis=1), rtol=1e-12)


def test_seeded_reproducibility(strata):
    a = monte_carlo(strata, ESTIMATOR, PureDP(1.0), replicates=300, rng=3)
    b = monte_carlo(strata, ESTIMATOR, PureDP(1.0), replicates=300, rng=3)
    c = monte_carlo(strata, ESTIMATOR, PureDP(1.0), replicates=300, rng=4)
    pd.testing.assert_frame_equal(a, b)
    assert not np.array_equal(a["estimate"], c["estimate"])


def test_progress_is_increasing_and_does_not_change_the_numbers(strata):
    reps = 777
    calls: list[tuple[int, int]] = []
    with_progress = monte_carlo(
        strata, ESTIMATOR, PureDP(1.0), replicates=reps, rng=5,
        progress=lambda done, total: calls.append((done, total)),
    )  # fmt: skip
    assert calls[-1] == (reps, reps)
    done = [d for d, _ in calls]
    assert all(b > a for a, b in itertools.pairwise(done))
    assert {t for _, t in calls} == {reps}
    assert len(calls) >= 2  # more than one chunk was reported
    silent = monte_carlo(strata, ESTIMATOR, PureDP(1.0), replicates=reps, rng=5)
    pd.testing.assert_frame_equal(with_progress, silent)


def test_global_only_error_matches_the_laplace_law(strata):
    """global_only: estimate = mean + Lap(b), b = 100/(n ε); E|Lap(b)| = b, sd(|Lap(b)|) = b."""
    reps, eps = 4000, 0.05
    frame = monte_carlo(
        strata, ESTIMATOR, PureDP(eps), strategy="global_only", replicates=reps, rng=6
    )
    truth = strata.sorted_values.sum() / strata.n
    b = 100.0 / (strata.n * eps)
    err = frame.loc[frame["level"] == "global", "error"].to_numpy()
    assert abs(err.mean() - b / truth) < 4.5 * (b / truth) / math.sqrt(reps)


@pytest.mark.parametrize("omega", [None, 0.3])
def test_parity_by_replicate_matches_parity_error(strata, omega):
    reps = 50
    frame = monte_carlo(strata, ESTIMATOR, PureDP(0.5), replicates=reps, rng=8)
    est = frame["estimate"].to_numpy().reshape(reps, strata.k + 1)
    truth = frame["truth"].to_numpy().reshape(reps, strata.k + 1)[0]
    expected = parity_error(est[:, :-1], truth[:-1], est[:, -1], truth[-1], omega)
    got = parity_by_replicate(frame, omega)
    assert got.name == "parity_error"
    np.testing.assert_allclose(got.loc[np.arange(reps)].to_numpy(), expected, rtol=1e-12)
    # and by hand for replicate 0 with the default ω = 1/k
    if omega is None:
        k = strata.k
        row = np.abs(est[0] - truth) / np.abs(truth)
        assert got.loc[0] == pytest.approx(row[-1] / k + row[:-1].mean())


def test_budget_sweep_rows_and_monotone_trend(strata):
    budgets = [PureDP(0.1), PureDP(1.0), PureDP(10.0)]
    strategies = ["stratified", "global_only", "global_and_groups"]
    calls = []
    sweep = budget_sweep(
        strata, ESTIMATOR, budgets, strategies, replicates=400, rng=9,
        progress=lambda d, t: calls.append((d, t)),
    )  # fmt: skip
    assert list(sweep.columns) == [
        "budget",
        "strategy",
        "metric",
        "mean",
        "q05",
        "q95",
        "published",
    ]
    assert len(sweep) == len(budgets) * len(strategies) * 3
    assert (sweep["published"] == 1).all()  # public sizes: every release publishes its estimate
    assert set(sweep["metric"]) == {"global", "worst group", "parity"}
    assert sorted(sweep["budget"].unique()) == [0.1, 1.0, 10.0]
    assert calls[-1] == (9, 9)
    assert (sweep["q05"] <= sweep["mean"]).all() and (sweep["mean"] <= sweep["q95"]).all()
    for (strategy, metric), rows in sweep.groupby(["strategy", "metric"]):
        means = rows.sort_values("budget")["mean"].to_numpy()
        if strategy == "global_only" and metric != "global":
            # group errors are dominated by the fixed bias |global − group mean|, but noise still
            # only adds error on average at this scale: nonincreasing up to MC noise
            assert means[-1] <= means[0] + 1e-9, (strategy, metric, means)
        else:
            # Laplace noise scales as 1/ε: 10× less error per 10× more ε (up to MC noise)
            assert means[0] > 3 * means[1] > 9 * means[2], (strategy, metric, means)
    # global error of global_only at ε = 0.1 is E|Lap(b)|/|μ| = b/|μ| with b = 100/(n ε)
    row = sweep.query("strategy == 'global_only' and metric == 'global' and budget == 0.1")
    b = 100.0 / (strata.n * 0.1)
    truth = strata.sorted_values.sum() / strata.n
    assert row["mean"].iloc[0] == pytest.approx(b / truth, rel=4.5 / math.sqrt(400))


def test_budget_sweep_with_coinpress_zcdp(strata):
    est = CoinPressMean(prior=(0.0, 100.0), sigma=20.0)
    sweep = budget_sweep(
        strata, est, [ZCDP(0.01), ZCDP(1.0)], ["stratified"], replicates=200, rng=1
    )
    glob = sweep[sweep["metric"] == "global"].sort_values("budget")["mean"].to_numpy()
    assert glob[0] > glob[1]


@pytest.mark.parametrize("replicates", [0, -1])
def test_replicates_validation(strata, replicates):
    with pytest.raises(ValueError, match="replicates"):
        monte_carlo(strata, ESTIMATOR, PureDP(1.0), replicates=replicates)


def test_group_summary_gives_each_groups_error_in_the_values_units_too(strata):
    frame = monte_carlo(strata, ESTIMATOR, PureDP(0.5), replicates=300, rng=5)
    summary = group_summary(frame).set_index("group")
    groups = frame[frame["level"] == "group"]
    for label, rows in groups.groupby("group"):
        absolute = (rows["estimate"] - rows["truth"]).abs().mean()
        assert summary.loc[label, "abs_mean"] == pytest.approx(absolute)
        assert summary.loc[label, "mean"] == pytest.approx((absolute / rows["truth"].abs()).mean())
    assert list(summary["size"]) == sorted(strata.sizes)


def test_simulation_summaries_match_the_tidy_frame_grouped_by_hand(strata):
    """The Compare page's summaries come from the arrays, never from the tidy frame: they must
    be what grouping the frame gives."""
    simulation = simulate_releases(strata, ESTIMATOR, PureDP(0.3), replicates=400, rng=11)
    frame = simulation.frame()
    pd.testing.assert_frame_equal(
        frame, monte_carlo(strata, ESTIMATOR, PureDP(0.3), replicates=400, rng=11)
    )
    groups = frame[frame["level"] == "group"]
    whole = frame[frame["level"] == "global"].set_index("replicate")
    metrics = simulation.metrics().set_index("replicate")
    np.testing.assert_allclose(metrics["global"], whole["error"], rtol=1e-12)
    np.testing.assert_allclose(
        metrics["worst group"], groups.groupby("replicate")["error"].max(), rtol=1e-12
    )
    np.testing.assert_allclose(
        metrics["parity"],
        whole["error"] / strata.k + groups.groupby("replicate")["error"].mean(),
        rtol=1e-12,
    )
    summary = simulation.summary().set_index("group")
    by_group = groups.groupby("group")["error"]
    np.testing.assert_allclose(summary["mean"], by_group.mean()[summary.index], rtol=1e-12)
    for q, column in ((0.05, "q05"), (0.95, "q95")):
        np.testing.assert_allclose(summary[column], by_group.quantile(q)[summary.index], rtol=1e-12)
    assert list(simulation.summary()["size"]) == sorted(strata.sizes)


def test_simulation_read_back_from_a_shuffled_frame(strata):
    """Rows in any order: each group's column and each replicate's row find their place (groups
    come in their order of appearance, so they are compared by label)."""
    simulation = simulate_releases(strata, ESTIMATOR, PureDP(1.0), replicates=30, rng=12)
    back = Simulation.from_frame(simulation.frame().sample(frac=1.0, random_state=0))
    assert sorted(back.labels) == sorted(strata.labels) and back.n == strata.n
    column = [back.labels.index(label) for label in strata.labels]
    for name in ("sizes", "truth"):
        np.testing.assert_array_equal(getattr(back, name)[column], getattr(simulation, name))
    np.testing.assert_array_equal(back.groups[:, column], simulation.groups)
    np.testing.assert_array_equal(back.whole, simulation.whole)
    np.testing.assert_array_equal(back.ids, np.arange(30))
    assert back.global_truth == simulation.global_truth


def test_simulated_estimates_are_the_released_ones_in_the_public_range():
    """A group of one person at ε = 0.1: its raw noisy mean lands far outside [0, 100] in most
    releases; Compare scores what a release publishes, the estimate brought into the range, so
    no simulated error exceeds the range's width."""
    frame = pd.DataFrame({"region": ["big"] * 200 + ["one"], "value": [50.0] * 200 + [90.0]})
    values = GroupValues.from_grouping(
        GroupingSpec(by=("region",), small_groups="keep").build(frame), frame, "value"
    )
    for strategy in ("stratified", "global_only", "global_and_groups"):
        simulated = monte_carlo(
            values, ESTIMATOR, PureDP(0.1), strategy=strategy, replicates=300, rng=3
        )
        assert simulated["estimate"].between(0.0, 100.0).all(), strategy
        one = simulated[simulated["group"] == "one"]
        if strategy == "stratified":
            assert (one["estimate"].isin([0.0, 100.0])).mean() > 0.5  # the clamp did act
