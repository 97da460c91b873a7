"""Bounds found privately (:mod:`dpcore.foundations.private_bounds`): the public grid, the
counts it scores (in memory and through an engine's pass), the equivalence of the numpy draws
with OpenDP's quantile, the noise scale OpenDP accounts for, and a release of the mean that finds
its bounds first."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcore.analyses.mean import MEAN, GroupValues, LaplaceMean, MeanPlan, MeanSettings
from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.analyses.mean.found_bounds import PrivatelyBounded
from dpcore.analyses.mean.strategies import run_strategy
from dpcore.engines import DuckDBEngine, PandasEngine
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.datasets import load_demo
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.mechanisms import SecureNoise, SimulationNoise, selection_scale
from dpcore.foundations.private_bounds import (
    FAILURE_PROBABILITY,
    OUTWARD_PENALTY,
    GridCounts,
    PrivateBounds,
    candidate_grid,
)
from dpcore.release import DatasetRef, PlanHeader

# ---- the public grid ------------------------------------------------------------------------


@pytest.mark.parametrize(("low", "high"), [(0, 100), (-5, 250_000), (-1e6, -3.0), (2.5, 7.0)])
def test_the_grid_lies_in_the_search_range_with_its_ends_and_fine_log_steps(low, high):
    grid = candidate_grid(low, high)
    assert grid[0] == low and grid[-1] == high
    assert np.all(np.diff(grid) > 0)
    if low <= 0 <= high:
        assert 0.0 in grid
    # away from zero each candidate is at most 2.4% from the next one (100 per decade)
    top = max(abs(low), abs(high))
    far = grid[np.abs(grid) >= top / 1000]
    same_sign = np.sign(far[1:]) == np.sign(far[:-1])
    ratios = np.abs(far[1:] / far[:-1])[same_sign]
    assert np.all(np.maximum(ratios, 1 / ratios) <= 10**0.01 + 1e-9)


def test_the_grid_depends_on_the_search_range_only():
    assert np.array_equal(candidate_grid(0, 100), candidate_grid(0.0, 100.0))
    assert len(candidate_grid(0, 100)) == len(candidate_grid(0, 1e9))  # the same relative grid


@pytest.mark.parametrize(("low", "high"), [(5, 5), (10, 0), (0, math.inf), (math.nan, 1)])
def test_a_search_range_that_is_not_one_is_refused(low, high):
    with pytest.raises(ValueError, match="low|high"):
        candidate_grid(low, high)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"search": (3, 1)}, "search"),
        ({"search": (0, 1), "fraction": 1.0}, "fraction"),
        ({"search": (0, 1), "scope": "each"}, "scope"),
        ({"search": (0, 1), "tail": 0.5}, "tail"),
        ({"search": (0, 1), "sizes_public": False}, "group sizes"),
    ],
)
def test_private_bounds_refuse_bad_settings_naming_them(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PrivateBounds(**kwargs)


# ---- the counts the scores read ----------------------------------------------------------------


def test_counts_below_each_candidate_from_values_and_from_buckets_agree():
    rng = np.random.default_rng(0)
    groups = [np.sort(rng.integers(0, 60, size)).astype(float) for size in (5, 40, 300)]
    offsets = np.concatenate([[0], np.cumsum([len(g) for g in groups])])
    grid = candidate_grid(0, 100)
    direct = GridCounts.from_sorted(np.concatenate(groups), offsets, grid)
    # An engine's buckets: values at an edge go to the upper bucket.
    buckets = np.stack([np.bincount(np.searchsorted(grid, g, side="right"), minlength=len(grid) + 1)
                        for g in groups])  # fmt: skip
    via_buckets = GridCounts.from_buckets(buckets, grid)
    assert np.array_equal(direct.below, via_buckets.below)
    assert np.array_equal(direct.sizes, via_buckets.sizes)
    expected = [[int((g < c).sum()) for c in grid] for g in groups]
    assert np.array_equal(direct.below, expected)
    assert np.array_equal(direct.pooled().below[0], np.sum(expected, axis=0))


def test_group_values_count_below_each_candidate_in_one_vectorised_search():
    demo = load_demo()
    values = GroupValues.from_frame(demo, ("race",), "hours_per_week")
    grid = candidate_grid(0, 168)
    counts = values.grid_counts(grid)
    for g in range(values.k):
        assert np.array_equal(
            counts.below[g], np.searchsorted(values.group_values(g), grid, side="left")
        )


@pytest.mark.parametrize("engine_name", ["pandas", "duckdb"])
def test_an_engine_counts_the_finite_values_per_bucket_as_the_rows_in_memory_do(
    engine_name, tmp_path
):
    rng = np.random.default_rng(1)
    n = 2000
    value = rng.lognormal(3, 1, n)
    value[:5] = [np.nan, np.inf, -np.inf, 0.0, 100.0]  # missing, infinite, on candidates
    frame = pd.DataFrame({"g": rng.choice(["a", "b", "c"], n), "v": value})
    spec = GroupingSpec(by=("g",))
    if engine_name == "duckdb":
        frame.to_parquet(tmp_path / "part.parquet")
        engine = DuckDBEngine(tmp_path)
    else:
        engine = PandasEngine(frame)
    sums = aggregate_mean(engine, spec, "v", (0.0, 1000.0)).stats
    grid = candidate_grid(0.0, 1000.0)
    memory = GroupValues.from_grouping(spec.build(frame), frame, "v")
    assert np.array_equal(sums.grid_counts(grid).below, memory.grid_counts(grid).below)
    assert np.array_equal(sums.pooled.grid_counts(grid).below[0],
                          memory.grid_counts(grid).pooled().below[0])  # fmt: skip


# ---- the selection: OpenDP's quantile, and its numpy twin --------------------------------------


def test_the_scores_are_opendps_quantile_scores_where_no_value_sits_on_a_candidate():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    rng = np.random.default_rng(2)
    data = rng.uniform(0, 100, 101)
    candidates = [0.5, 10.5, 33.3, 50.5, 80.1, 99.9]
    for alpha in (0.5, 0.25, 0.9):
        transform = dp.t.make_quantile_score_candidates(
            dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance(),
            candidates, alpha=alpha,
        )  # fmt: skip
        theirs = np.asarray(transform(data.tolist()), dtype=float)
        counts = GridCounts.from_sorted(np.sort(data), [0, data.size], np.array(candidates))
        ours = np.abs(counts.below[0] - alpha * data.size)
        # OpenDP scores in integers: ours times a constant (alpha's denominator, squared)
        assert np.allclose(theirs / theirs.max(), ours / ours.max())


@pytest.mark.parametrize("measure", ["pure", "zcdp"])
def test_the_noise_scale_is_the_one_opendp_accounts_for(measure):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    output = dp.max_divergence() if measure == "pure" else dp.zero_concentrated_divergence()
    for sensitivity, value in ((1.0, 0.1), (0.99, 0.7), (1.0, 2.0)):
        spread = selection_scale(sensitivity, value, measure)
        select = dp.m.make_noisy_max(
            dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float),
            output, scale=spread, negate=True,
        )  # fmt: skip
        assert select.map(sensitivity) == pytest.approx(value, rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("measure", ["pure", "zcdp"])
def test_numpy_draws_follow_opendps_private_quantile(measure):
    """Permute-and-flip under ε, the exponential mechanism under ρ: 3,000 draws of OpenDP's own
    make_private_quantile on the raw values against 200,000 numpy draws on their counts, a
    chi-square test of homogeneity (seeded numpy side; OpenDP cannot be seeded, so the test
    allows a p-value down to 1e-4)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    data = np.arange(100, dtype=float) + 0.5
    candidates = np.array([0.0, 20.0, 40.0, 45.0, 50.0, 55.0, 60.0, 80.0, 100.0])
    alpha, spread = 0.5, 6.0
    output = dp.max_divergence() if measure == "pure" else dp.zero_concentrated_divergence()
    quantile = dp.m.make_private_quantile(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance(), output,
        candidates.tolist(), alpha=alpha, scale=spread,
    )  # fmt: skip
    theirs = np.array([quantile(data.tolist()) for _ in range(3000)])
    their_counts = np.array([(theirs == c).sum() for c in candidates])
    counts = GridCounts.from_sorted(data, [0, data.size], candidates)
    scores = np.abs(counts.below - alpha * data.size)
    ours = SimulationNoise(rng=3).report_noisy_min(scores, spread, measure, size=200_000)[:, 0]
    our_counts = np.bincount(ours, minlength=candidates.size)
    table = np.array([their_counts, our_counts])
    table = table[:, table.min(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-4
    # the test sees a difference: the other noise family's draws are refused
    other = "zcdp" if measure == "pure" else "pure"
    wrong = SimulationNoise(rng=4).report_noisy_min(scores, spread, other, size=200_000)[:, 0]
    wrong_table = np.array([their_counts, np.bincount(wrong, minlength=candidates.size)])
    assert stats.chi2_contingency(wrong_table[:, wrong_table.min(axis=0) > 0]).pvalue < 1e-4


def test_secure_draws_land_on_candidates_near_the_targets():
    values = GroupValues.from_values(np.arange(1000, dtype=float))
    bounds = PrivateBounds((0, 10_000), fraction=0.5, tail=0.05)
    found = bounds.draw(values.grid_counts(bounds.grid), PureDP(20.0), noise=SecureNoise())
    low, high = found.pair()
    assert low in bounds.grid and high in bounds.grid
    assert 30 <= low <= 70 and 930 <= high <= 970


# ---- the automatic target rank ------------------------------------------------------------------


def test_the_automatic_rank_keeps_the_bounds_inside_the_data_but_for_a_few_percent():
    """The utility theorem's promise (module doc): with probability about 1 − β each bound lies
    within the data (exactly so when a candidate sits at the target rank; here the grid's
    steps leave the best candidate some ranks off it). 2,000 seeded draws on a tight data set
    in a search range a thousand times wider."""
    rng = np.random.default_rng(5)
    values = GroupValues.from_values(rng.normal(50, 5, 4000))
    bounds = PrivateBounds((0, 50_000), fraction=0.2)
    budget = PureDP(1.0)
    rank = bounds.target_rank(budget)
    beyond = -math.log(1 - math.exp(-OUTWARD_PENALTY))
    assert rank == math.ceil(2 / 0.1 * (beyond - math.log(FAILURE_PROBABILITY)))
    found = bounds.draw(values.grid_counts(bounds.grid), budget, noise=SimulationNoise(rng=6),
                        replicates=2000)  # fmt: skip
    data = values.sorted_values
    beyond = (found.high[:, 0] > data[-1]) | (found.low[:, 0] < data[0])
    assert beyond.mean() <= 5 * FAILURE_PROBABILITY
    clipped = (np.searchsorted(data, found.low[:, 0]) + data.size
               - np.searchsorted(data, found.high[:, 0], side="right"))  # fmt: skip
    assert np.median(clipped) <= 4 * rank


def test_per_group_bounds_follow_each_groups_values():
    demo = load_demo()
    values = GroupValues.from_frame(demo, ("sex",), "age")
    bounds = PrivateBounds((0, 1000), scope="per_group", tail=0.05)
    found = bounds.draw(values.grid_counts(bounds.grid), PureDP(5.0), noise=SimulationNoise(rng=0))
    for g in range(values.k):
        low, high = found.pair(g)
        q05, q95 = np.quantile(values.group_values(g), [0.05, 0.95])
        assert q05 / 1.1 <= low <= q05 * 1.1 and q95 / 1.1 <= high <= q95 * 1.1


# ---- the mean that finds its bounds ---------------------------------------------------------------


def test_a_mean_release_finds_its_bounds_once_and_costs_exactly_its_budget():
    demo = load_demo()
    spec = GroupingSpec(by=("race",))
    values = GroupValues.from_grouping(spec.build(demo), demo, "hours_per_week")
    bounds = PrivateBounds((0, 1000), fraction=0.25)
    for strategy in ("stratified", "global_only", "global_and_groups"):
        result = run_strategy(
            strategy, values, PrivatelyBounded(LaplaceMean(bounds=(0, 1000)), bounds),
            PureDP(1.0), values.shares, noise=SimulationNoise(rng=1),
        )  # fmt: skip
        assert result.cost == PureDP(1.0)
        low, high = result.bounds.pair()
        assert 0 <= low < 20 and 60 < high < 120
        assert np.all((low <= result.group_estimates) & (result.group_estimates <= high))


def test_bounds_found_privately_shrink_the_noise_of_a_wide_search_range():
    """The point of the feature: at the same total budget, a search range ten times too wide
    costs the typed bounds ten times the noise, and the found bounds almost none of it."""
    demo = load_demo()
    spec = GroupingSpec(by=("race", "sex"))
    values = MEAN.statistics(demo, spec.build(demo), MeanSettings())
    typed, found = (
        MEAN.study(values, MeanSettings(clip_high=1000, n_public=True, bounds_source=source),
                   PureDP(1.0), replicates=400, rng=0)
        for source in ("typed", "private")
    )  # fmt: skip
    small = typed.groups["size"] < 500
    assert (found.groups["abs_mean"][small] < typed.groups["abs_mean"][small] / 4).all()


def test_the_plan_publishes_the_bounds_and_says_what_they_cost():
    demo = load_demo()
    spec = GroupingSpec(by=("sex",))
    header = PlanHeader(DatasetRef.of(demo, "demo.csv"), spec, ZCDP(0.5))
    settings = MeanSettings(estimator="gaussian", clip_high=500, bounds_source="private",
                            bounds_fraction=0.3, bounds_scope="per_group",
                            n_public=True)  # fmt: skip
    plan = MEAN.plan(MEAN.statistics(demo, spec.build(demo), settings), settings, header)
    assert isinstance(plan, MeanPlan) and plan.bounds is not None
    facts = plan.parameters()["bounds"]
    assert facts["cost"] == {"kind": "zcdp", "rho": pytest.approx(0.15)}
    assert facts["scope"] == "per_group" and facts["search_range"] == [0.0, 500.0]
    assert plan.mean_budget == ZCDP(0.5 * 0.7)
    rows = plan.run(SimulationNoise(rng=2), np.random.default_rng(0))
    for row in rows:
        assert row.clip_low is not None and row.clip_low <= row.estimate <= row.clip_high
    population = rows[-1]
    assert population.clip_low == min(r.clip_low for r in rows[:-1])
    assert "found privately" in " ".join(plan.review_lines())
    assert "PrivateBounds(" in plan.script_body()


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"estimator": "coinpress"}, "bounds_source"),
        ({"sampling_error": True}, "bounds_source"),
        ({"n_public": False}, "bounds_tail"),
    ],
)
def test_settings_bounds_cannot_be_found_with_are_refused_naming_the_field(changes, field):
    settings = MeanSettings(**{"bounds_source": "private", "n_public": True, **changes})
    assert field in [p.field for p in MEAN.problems(settings, load_demo()) if p.severity == "error"]


def test_the_cost_of_bounds_splits_into_clipping_bias_and_noise():
    """Typed [0, 1000] on hours clips nothing (no bias) but its noise is wide; found bounds
    clip a little (a small bias) and their noise is far smaller in every small group."""
    from dpcore.analyses.mean.found_accuracy import bounds_costs

    demo = load_demo()
    settings = MeanSettings(clip_high=1000, bounds_source="private", n_public=True)
    values = MEAN.statistics(demo, GroupingSpec(by=("race",)).build(demo), settings)
    costs = bounds_costs(values, MEAN.bounded_estimator(settings), PureDP(1.0), replicates=500,
                         rng=0).set_index(["method", "group"])  # fmt: skip
    typed, found = costs.loc["typed"], costs.loc["found"]
    assert (typed["bias"].abs() < 1e-9).all() and (typed["low"] == 0).all()
    assert (found["noise"] < typed["noise"] / 5).all()
    assert (found["bias"].abs() < 0.2).all() and (found["bias"] != 0).any()
    # Random bounds: the bias varies between releases, so the error is at least each part.
    assert (found["rmse"] >= 0.99 * np.maximum(found["bias"].abs(), found["noise"])).all()


# ---- bucket edges found privately ----------------------------------------------------------------


def test_edges_found_privately_are_increasing_quantiles_released_once(tmp_path):
    from dpcore.foundations.ledger import Ledger
    from dpcore.release import release
    from dpcore.release.edges import EdgesPlan, column_values

    demo = load_demo()
    header = PlanHeader(DatasetRef.of(demo, "demo.csv"), GroupingSpec(by=("age",)), PureDP(3.0))
    plan = EdgesPlan(column_values(demo, "age"), header, "age", 5, (0, 150))
    truth = np.quantile(demo["age"], [0.2, 0.4, 0.6, 0.8])
    edges = plan.estimate(SimulationNoise(rng=0))
    assert np.all(np.diff(edges) > 0) and np.allclose(edges, truth, rtol=0.05)
    assert plan.parameters()["estimator"]["quantiles"] == [0.2, 0.4, 0.6, 0.8]
    assert "column_values(frame, 'age')" in plan.script_body()
    ledger = Ledger(tmp_path / "l.sqlite", "default", PureDP(5.0))
    record = release(plan, ledger, noise="secure")
    assert [row["group"] for row in record.outputs][0] == "edge 1 (quantile 20%)"
    assert ledger.remaining() == {"epsilon": 2.0}
    # With little budget and few rows the draws still never cross or tie.
    small = EdgesPlan(np.arange(30.0), header, "age", 10, (0, 1e6))
    assert np.all(np.diff(small.estimate(SimulationNoise(rng=1))) > 0)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"buckets": 1}, "from 2 to 10"), ({"search": (5, 5)}, "search range"),
    ({"values": np.array([np.nan])}, "no finite value"),
])  # fmt: skip
def test_edges_refuse_bad_plans(kwargs, match):
    from dpcore.release.edges import EdgesPlan

    header = PlanHeader(DatasetRef.of(load_demo(), "demo.csv"), GroupingSpec(by=("age",)),
                        PureDP(1.0))  # fmt: skip
    arguments = {"values": np.arange(10.0), "header": header, "column": "age", "buckets": 4,
                 "search": (0, 100), **kwargs}  # fmt: skip
    with pytest.raises(ValueError, match=match):
        EdgesPlan(**arguments)


# ---- the exported script redoes it ---------------------------------------------------------------


@pytest.mark.slow  # fresh Python processes run the scripts
def test_the_scripts_of_found_bounds_and_edges_find_their_releases(tmp_path):
    """The script of a mean whose bounds were found privately, and of edges found privately,
    rebuilds the same plan from the demo as the app identifies it (its asset's bytes), so it
    prints the recorded release and spends nothing more."""
    from dpcore import load_demo_dataset
    from dpcore.foundations.ledger import Ledger
    from dpcore.release import release, to_script
    from dpcore.release.edges import EdgesPlan, column_values
    from tests.scripts import assert_reruns_as_recorded

    frame, dataset = load_demo_dataset()
    ledger = Ledger(tmp_path / "l.sqlite", "default", ZCDP(5.0))
    spec = GroupingSpec(by=("sex",))
    settings = MeanSettings(estimator="gaussian", clip_high=500, bounds_source="private",
                            n_public=True)  # fmt: skip
    mean = MEAN.plan(MEAN.statistics(frame, spec.build(frame), settings), settings,
                     PlanHeader(dataset, spec, ZCDP(0.5)))  # fmt: skip
    header = PlanHeader(dataset, GroupingSpec(by=("age",)), ZCDP(0.1))
    edges = EdgesPlan(column_values(frame, "age"), header, "age", 4, (0, 150))
    for plan in (mean, edges):
        record = release(plan, ledger, noise="simulation", rng=3)
        assert_reruns_as_recorded(to_script(record), record, tmp_path, ledger)


# ---- hostile settings (issue 38's rule: refused at the entry point with a sentence) ---------------


def edges_searched_to(high: float):
    from dpcore.release.edges import EdgesPlan

    header = PlanHeader(DatasetRef.of(load_demo(), "demo.csv"), GroupingSpec(by=("age",)),
                        PureDP(1.0))  # fmt: skip
    return EdgesPlan(np.arange(10.0), header, "age", 4, (0, high))


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda: MeanSettings(bounds_fraction=2.0), ("`bounds_fraction`", "got 2.0")),
        (lambda: MeanSettings(bounds_tail=0.7), ("`bounds_tail`", "below 0.5", "got 0.7")),
        (lambda: MeanSettings(bounds_decades=10**6), ("`bounds_decades`", "1 to 20")),
        (lambda: edges_searched_to(1e300), ("search range", "±1e+15", "1e+300")),
    ],
    ids=["a share of 2", "a tail of 70%", "a million decades", "edges searched to 1e300"],
)
def test_hostile_settings_of_found_bounds_are_refused_with_a_sentence(build, words):
    with pytest.raises((ValueError, TypeError)) as refused:
        build()
    message = str(refused.value)
    assert all(w in message for w in words), message
