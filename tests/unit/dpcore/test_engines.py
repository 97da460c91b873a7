"""Engines: the same release on pandas in memory, the pandas engine and DuckDB; the contribution
bound keeps what it promises, so one added person moves the statistics by at most what the
accounting assumes; bad data is refused with a message that names it."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.gvdp import GvdpBoundsSpec, GvdpModel, GvdpPlan
from dpcore.analyses.gvdp.aggregate import aggregate_gvdp
from dpcore.analyses.mean import CoinPressMean, GaussianMean, LaplaceMean, MeanPlan
from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import run_strategy
from dpcore.analyses.mean.sums import GroupSums
from dpcore.analyses.ratio import GroupRatioSums, RatioBounds, RatioPlan
from dpcore.analyses.ratio.aggregate import aggregate_ratio
from dpcore.analyses.ratio.groups import group_ratio_sums
from dpcore.engines import (
    DuckDBEngine,
    EngineError,
    PandasEngine,
    SparkEngine,
    data_files,
    spark_session,
)
from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP
from dpcore.foundations.grouping import GroupingSpec, cell_labels
from dpcore.foundations.ledger import Ledger
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.privacy_unit import (
    ROW,
    PrivacyUnit,
    bounded_weights,
    cell_ranks,
    preview_bound,
)
from dpcore.release import DatasetRef, PlanHeader, public_metadata, release
from tests.frames import write_shuffled_parts
from tests.neighbours import assert_each_sum_moves_within_its_sensitivity

BOUNDS = (0.0, 10.0)


def messy_frame(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    """Text, numeric and yes/no grouping columns with missing entries, a value with missing and
    infinite entries and values beyond the bounds, people owning 1 to 6 rows."""
    rng = np.random.default_rng(seed)
    value = rng.normal(5, 3, n)
    value[rng.random(n) < 0.05] = np.nan
    value[:3] = [np.inf, -40.0, 1e300]
    region = rng.choice(
        ["north", "south", "east", "wést", "tiny"], n, p=[0.4, 0.3, 0.2, 0.099, 0.001]
    )
    region = pd.Series(region, dtype=object)
    region[rng.random(n) < 0.02] = None
    age = rng.uniform(10, 90, n)
    age[rng.random(n) < 0.03] = np.nan
    frame = pd.DataFrame({
        "region": region, "age": age, "flag": rng.random(n) < 0.3, "v": value,
        "person": rng.integers(0, n // 3, n),
    })  # fmt: skip
    return frame.assign(**ratio_columns(n, rng))


def ratio_columns(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The ratio's columns: a score beyond its bound 1 at times, a 0/1 label, a label up to 3,
    weights beyond their bound 3 at times, each with missing entries."""
    score = rng.beta(2, 3, n) * 1.2
    score[rng.random(n) < 0.03] = np.nan
    label = (rng.random(n) < score / 1.2).astype(float)
    label[rng.random(n) < 0.02] = np.nan
    weight = rng.uniform(0.5, 3.5, n)
    weight[rng.random(n) < 0.02] = np.inf
    return {"s": score, "y": label, "y3": rng.uniform(0, 3.5, n), "w": weight}


SPECS = {
    "text": GroupingSpec(by=("region",), min_group_size=10),
    "text x yes/no": GroupingSpec(by=("region", "flag"), min_group_size=10, small_groups="drop"),
    "numeric buckets": GroupingSpec(by=("age", "region"), edges=(("age", (30.0, 60.0)),),
                                    min_group_size=40),
    # Declared groups kept whatever their size: the rows of "tiny" and of a missing region are
    # left out, and "west" (the data spells it "wést") makes four groups with no row.
    "declared": GroupingSpec(
        by=("age", "region"), edges=(("age", (30.0, 60.0)),), small_groups="keep",
        categories=(("age", ("< 30", "[30, 60)", "≥ 60", "(missing)")),
                    ("region", ("north", "south", "east", "wést", "west"))),
    ),
}  # fmt: skip
UNITS = {"row": ROW, "person 2x2": PrivacyUnit("person", max_groups=2, max_rows=2)}


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return messy_frame()


@pytest.fixture(scope="module")
def parquet_folder(frame, tmp_path_factory):
    """The frame in three Parquet parts, rows shuffled, in a folder."""
    return write_shuffled_parts(frame, tmp_path_factory.mktemp("parts"), seed=1)


def engines(frame, folder, spark=None):
    found = {"pandas": PandasEngine(frame, "messy"), "duckdb": DuckDBEngine(folder)}
    return found if spark is None else {**found, "spark": SparkEngine(str(folder), session=spark)}


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPECS.keys())
@pytest.mark.parametrize("unit", UNITS.values(), ids=UNITS.keys())
def test_engines_give_the_same_groups_sizes_and_sums(frame, parquet_folder, spark, spec, unit):
    results = [
        aggregate_mean(engine, spec, "v", BOUNDS, unit).stats
        for engine in engines(frame, parquet_folder, spark).values()
    ]
    for second in results[1:]:
        assert_same_statistics(results[0], second)


def test_whole_number_codes_group_alike_on_every_engine_and_many_values_need_edges(
    frame, tmp_path, spark
):
    """A 0/1 code (with missing entries) groups by its values without edges on every engine;
    a whole-number column of more than 20 values is refused on every engine."""
    codes = pd.Series(np.arange(len(frame)) % 2, dtype="Int64")
    codes[::50] = pd.NA
    data = frame.assign(code=codes, count=np.arange(len(frame)) % 21)
    data.to_parquet(tmp_path / "codes.parquet")
    spec = GroupingSpec(by=("code", "region"), min_group_size=10)
    results = [
        aggregate_mean(engine, spec, "v", BOUNDS).stats
        for engine in engines(data, tmp_path / "codes.parquet", spark).values()
    ]
    assert {label.split(" × ")[0] for label in results[0].labels} >= {"0", "1", "(missing)"}
    for second in results[1:]:
        assert_same_statistics(results[0], second)
    for name, engine in engines(data, tmp_path / "codes.parquet", spark).items():
        with pytest.raises(EngineError, match="`count` holds .*Give public bucket edges"):
            aggregate_mean(engine, GroupingSpec(by=("count",)), "v", BOUNDS)
        if name != "pandas":
            with pytest.raises(EngineError, match="more than 20 distinct whole numbers"):
                aggregate_mean(engine, GroupingSpec(by=("count",)), "v", BOUNDS)


def test_decimal_codes_group_as_whole_numbers_on_every_engine(frame, tmp_path, spark):
    """A 0/1/2 code written as 0.0/1.0/2.0 (with missing entries) groups as "0", "1", "2" on
    every engine, as in memory; a decimal that is not whole still needs edges."""
    codes = (np.arange(len(frame)) % 3).astype(float)
    codes[::40] = np.nan
    data = frame.assign(code=codes, half=codes / 2)
    data.to_parquet(tmp_path / "decimal-codes.parquet")
    spec = GroupingSpec(by=("code",))
    found = engines(data, tmp_path / "decimal-codes.parquet", spark)
    results = [aggregate_mean(engine, spec, "v", BOUNDS).stats for engine in found.values()]
    assert results[0].labels == ("0", "1", "2", "(missing)")
    for second in results[1:]:
        assert_same_statistics(results[0], second)
    for engine in found.values():
        with pytest.raises(EngineError, match="`half` holds numbers that are not"):
            aggregate_mean(engine, GroupingSpec(by=("half",)), "v", BOUNDS)


def assert_same_statistics(first, second) -> None:
    assert first.labels == second.labels and first.k >= 2
    np.testing.assert_array_equal(first.sizes, second.sizes)
    np.testing.assert_allclose(first.shares.values, second.shares.values, rtol=1e-12)
    assert (first.n_missing, first.empty_groups) == (second.n_missing, second.empty_groups)
    low, high = np.linspace(1, 3, first.k), np.linspace(6, 9, first.k)
    for a, b in [(BOUNDS[0], BOUNDS[1]), (low, high)]:
        np.testing.assert_allclose(first.clipped_sums(a, b), second.clipped_sums(a, b), rtol=1e-12)
    np.testing.assert_allclose(
        first.pooled.clipped_sums(2.0, 4.0), second.pooled.clipped_sums(2.0, 4.0), rtol=1e-12
    )


def test_every_engine_keeps_the_declared_groups_with_no_rows(frame, parquet_folder):
    for name, engine in engines(frame, parquet_folder).items():
        stats = aggregate_mean(engine, SPECS["declared"], "v", BOUNDS).stats
        assert stats.k == 20, name
        empty = [label for label, size in zip(stats.labels, stats.sizes, strict=True) if not size]
        assert empty == [f"{age} × west" for age in ("< 30", "[30, 60)", "≥ 60", "(missing)")]
        assert any("“tiny”" in note for note in stats.messages()), name


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPECS.keys())
def test_without_a_person_the_engines_match_the_in_memory_statistics(frame, spec):
    in_memory = GroupValues.from_grouping(spec.build(frame), frame, "v")
    engine = aggregate_mean(PandasEngine(frame), spec, "v", BOUNDS).stats
    assert engine.labels == in_memory.labels
    np.testing.assert_array_equal(engine.sizes, in_memory.sizes)
    assert engine.n_missing == in_memory.n_missing
    np.testing.assert_allclose(
        engine.clipped_sums(*BOUNDS), in_memory.clipped_sums(*BOUNDS), rtol=1e-12
    )


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


def test_coinpress_replicates_at_other_bounds_need_the_rows_in_memory(frame):
    stats = aggregate_mean(PandasEngine(frame), SPECS["text"], "v", BOUNDS).stats
    with pytest.raises(ValueError, match="needs the rows in memory"):
        stats.clipped_sums(np.zeros((5, stats.k)), np.ones((5, stats.k)))


# ---- the contribution bound ------------------------------------------------------------------


def test_the_bound_scales_a_persons_rows_in_a_cell_and_keeps_their_fullest_cells():
    """Person 0 has 5 rows in a, 2 in b, 1 in c: with M = 2 and G = 2 the rows of a count as
    2 (2/5 each), those of b fully, c not at all (fewest counted rows); person 1's one finite
    row counts, their NaN row does not."""
    labels = pd.DataFrame({"g": ["a"] * 5 + ["b"] * 2 + ["c"] + ["a"] * 2})
    values = np.array([1.0, 2, 3, 4, 5, 6, 7, 8, 9, np.nan])
    person = np.array([0, 0, 0, 0, 0, 0, 0, 0, 1, 1])
    weights = bounded_weights(cell_ranks(labels), np.isfinite(values), person, 2, 2)
    np.testing.assert_allclose(weights, [0.4] * 5 + [1.0, 1.0, 0.0, 1.0, 0.0])


def test_ties_between_a_persons_cells_go_to_the_first_label():
    """Cell c counts 2 rows, a and b one each: with G = 2, c and then a (before b) count."""
    labels = pd.DataFrame({"g": ["b", "a", "c", "c"]})
    weights = bounded_weights(cell_ranks(labels), np.ones(4, bool), np.zeros(4, int), 2, 2)
    np.testing.assert_allclose(weights, [0.0, 1.0, 1.0, 1.0])


@pytest.mark.parametrize("engine_name", ["pandas", "duckdb"])
def test_after_the_bound_no_person_exceeds_it(frame, parquet_folder, engine_name):
    unit = PrivacyUnit("person", max_groups=2, max_rows=1)
    stats = aggregate_mean(
        engines(frame, parquet_folder)[engine_name], GroupingSpec(by=("region",)), "v",
        BOUNDS, unit,
    ).stats  # fmt: skip
    people = frame.loc[np.isfinite(frame["v"]), "person"].nunique()
    assert stats.n <= people * unit.rows_per_person
    assert any("left out" in note for note in stats.notes)


def engine_on(engine_name: str, data: pd.DataFrame, path, request):
    """``data`` in memory, or written to ``path`` and read by DuckDB or Spark."""
    if engine_name == "pandas":
        return PandasEngine(data)
    data.to_parquet(path)
    if engine_name == "duckdb":
        return DuckDBEngine(path)
    return SparkEngine(str(path), session=request.getfixturevalue("spark"))


@pytest.mark.parametrize("engine_name", ["pandas", "duckdb", "spark"])
def test_one_added_person_moves_the_statistics_by_at_most_the_bound(
    frame, tmp_path, request, engine_name
):
    """Neighbouring datasets differ by one person with many rows in many groups: the change of
    the sizes and clipped sums over all groups is at most c rows and c·max(|L|, |U|)."""
    unit = PrivacyUnit("person", max_groups=2, max_rows=3)
    intruder = pd.DataFrame({
        "region": ["north", "south", "east", "wést"] * 10, "age": 50.0, "flag": True,
        "v": np.linspace(-50, 50, 40), "person": -7,
    })  # fmt: skip
    labels = ("north", "south", "east", "wést", "tiny", "(missing)")
    spec = GroupingSpec(
        by=("region",), share_source="table", share_table=tuple((g, 1.0) for g in labels)
    )
    stats = []
    for i, data in enumerate([frame, pd.concat([frame, intruder], ignore_index=True)]):
        engine = engine_on(engine_name, data, tmp_path / f"{i}.parquet", request)
        stats.append(aggregate_mean(engine, spec, "v", BOUNDS, unit).stats)
    before, after = stats
    assert before.labels == after.labels
    size_change = np.abs(after.sizes - before.sizes).sum()
    sum_change = np.abs(after.clipped_sums(*BOUNDS) - before.clipped_sums(*BOUNDS)).sum()
    c = unit.rows_per_person
    assert 0 < size_change <= c
    assert sum_change <= c * max(abs(b) for b in BOUNDS) + 1e-9


def test_row_budget_divides_by_the_rows_of_one_person():
    unit = PrivacyUnit("person", max_groups=2, max_rows=3)
    assert unit.row_budget(PureDP(1.2)).epsilon == pytest.approx(0.2)
    assert unit.row_budget(ZCDP(0.72)).rho == pytest.approx(0.02)
    assert ROW.row_budget(ApproxDP(1.0, 1e-6)) == ApproxDP(1.0, 1e-6)
    with pytest.raises(ValueError, match="ε-DP or ρ-zCDP"):
        unit.row_budget(ApproxDP(1.0, 1e-6))
    with pytest.raises(ValueError, match="need a person column"):
        PrivacyUnit(None, max_groups=2)


def test_a_person_level_release_adds_noise_for_all_their_rows(frame):
    """Laplace with public sizes: the noise's spread grows by c = max_groups × max_rows (a
    statistical check over 600 seeded releases; the spread ratio's 99% range is about ±15%)."""
    spec = GroupingSpec(by=("region",), min_group_size=10)
    spreads = []
    for unit in (ROW, PrivacyUnit("person", max_groups=1, max_rows=3)):
        stats = aggregate_mean(PandasEngine(frame), spec, "v", BOUNDS, unit).stats
        header = PlanHeader(dataset=DatasetRef("messy", "-", 1), spec=spec, budget=PureDP(1.0))
        plan = MeanPlan(values=stats, header=header, estimator=LaplaceMean(bounds=BOUNDS))
        draws = run_strategy(
            "stratified", stats, plan.estimator, plan.row_budget, stats.shares,
            replicates=600, rng=11,
        ).group_estimates  # fmt: skip
        spreads.append(draws.std(axis=0) * stats.sizes)  # the noise of a sum, per group
    ratio = spreads[1] / spreads[0]
    assert np.all((ratio > 3 * 0.85) & (ratio < 3 * 1.15)), ratio


def test_the_privacy_unit_is_in_the_plan_and_its_metadata_only_when_set(frame, tmp_path):
    spec = GroupingSpec(by=("region",), min_group_size=10)
    parameters = []
    for unit in (ROW, PrivacyUnit("person", max_groups=1, max_rows=2)):
        aggregated = aggregate_mean(PandasEngine(frame, "messy"), spec, "v", BOUNDS, unit)
        header = PlanHeader(dataset=aggregated.dataset, spec=spec, budget=PureDP(1.0))
        plan = MeanPlan(values=aggregated.stats, header=header, estimator=LaplaceMean(BOUNDS))
        parameters.append(plan.parameters())
        ledger = Ledger(tmp_path / f"{unit.column}.sqlite", "l", PureDP(1.0))  # one per unit
        record = release(plan, ledger, noise="simulation", rng=0)
        public = public_metadata(record.metadata)
        assert aggregated.dataset.identity not in str(public)
    assert "privacy_unit" not in parameters[0]
    assert parameters[1]["privacy_unit"] == {"column": "person", "max_groups": 1, "max_rows": 2}


def test_the_identity_follows_the_bytes_not_the_names_of_the_parts(frame, tmp_path):
    """A folder is the set of its parts' contents: renamed or moved parts are the same data, a
    changed value is other data, and the pass computes no digest of its own any more."""
    spec = GroupingSpec(by=("region",))
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, names in ((first, ("a", "b")), (second, ("z", "y"))):
        (folder / "nested").mkdir(parents=True)
        frame.iloc[:1000].to_parquet(folder / f"{names[0]}.parquet")
        frame.iloc[1000:].to_parquet(folder / "nested" / f"{names[1]}.parquet")
    (second / "_SUCCESS").write_text("")  # left out by both engines, as Spark leaves it out
    changed = frame.copy()
    changed.loc[10, "v"] = 1.2345
    changed.to_parquet(tmp_path / "changed.parquet")

    def identity(location):
        return aggregate_mean(DuckDBEngine(location), spec, "v", BOUNDS).dataset.identity

    assert identity(first) == identity(second) == identity(f"{first}/**/*.parquet")
    assert identity(first).startswith("content:")
    assert identity(tmp_path / "changed.parquet") != identity(first)


def test_group_sums_of_constants_are_exact():
    stats = GroupSums.constant(("a", "b"), np.array([3, 5]), np.array([2.0, 7.0]))
    np.testing.assert_array_equal(stats.clipped_sums(0.0, 5.0), [6.0, 25.0])
    np.testing.assert_array_equal(stats.pooled.clipped_sums(np.zeros((2, 1)), 5.0), [[31.0]] * 2)


# ---- bad data -----------------------------------------------------------------------------------


def test_no_files_at_the_location(tmp_path):
    with pytest.raises(EngineError, match="No data at .*nope"):
        data_files(tmp_path / "nope")
    (tmp_path / "notes.md").write_text("x")
    with pytest.raises(EngineError, match="No data at"):
        data_files(tmp_path)


def test_mixed_formats_are_refused(tmp_path):
    pd.DataFrame({"a": [1]}).to_parquet(tmp_path / "a.parquet")
    pd.DataFrame({"a": [1]}).to_csv(tmp_path / "b.csv")
    with pytest.raises(EngineError, match="both Parquet and CSV"):
        data_files(tmp_path)


@pytest.mark.parametrize("engine_name", ["duckdb", "spark"])
def test_a_nan_is_missing_as_in_pandas(tmp_path, request, engine_name):
    """Float columns may hold NaN (not null) in Parquet: a NaN person id is no id, and a NaN in a
    bucketed grouping column is "(missing)", as in pandas."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({
        "g": ["a", "a", "b", "b"], "v": [1.0, 2.0, 3.0, 4.0],
        "who": pa.array([1.0, float("nan"), 2.0, float("nan")], from_pandas=False),
    })  # fmt: skip
    pq.write_table(table, tmp_path / "nan.parquet")
    path = tmp_path / "nan.parquet"
    engine = (
        DuckDBEngine(path) if engine_name == "duckdb"
        else SparkEngine(str(path), session=request.getfixturevalue("spark"))
    )  # fmt: skip
    with pytest.raises(EngineError, match="2 rows of the data have no id"):
        aggregate_mean(engine, GroupingSpec(by=("g",)), "v", BOUNDS, PrivacyUnit("who"))
    spec = GroupingSpec(by=("who",), edges=(("who", (1.5,)),), min_group_size=1)
    stats = aggregate_mean(engine, spec, "v", BOUNDS).stats
    assert set(stats.labels) == {"(missing)", "< 1.5", "≥ 1.5"}


def test_spark_reads_columns_with_dots_and_backticks(spark, tmp_path, frame):
    odd = frame.rename(columns={"region": "re.gion", "v": "v`alue"})
    odd.to_parquet(tmp_path / "odd.parquet")
    stats = aggregate_mean(
        SparkEngine(str(tmp_path / "odd.parquet"), session=spark), GroupingSpec(by=("re.gion",)),
        "v`alue", BOUNDS,
    ).stats  # fmt: skip
    expected = aggregate_mean(PandasEngine(odd), GroupingSpec(by=("re.gion",)), "v`alue", BOUNDS)
    assert_same_statistics(expected.stats, stats)


def test_spark_names_what_it_cannot_read(spark, tmp_path, frame):
    with pytest.raises(EngineError, match="Spark at local.2. has no table “no_such_table”"):
        SparkEngine("spark:no_such_table", session=spark)
    with pytest.raises(EngineError, match="Spark could not read .*missing.parquet"):
        SparkEngine(str(tmp_path / "missing.parquet"), session=spark)
    spark.range(3).createOrReplaceTempView("three")
    with pytest.raises(EngineError, match="no table “thre”. Its tables are: .*three"):
        SparkEngine("spark:thre", session=spark)


def test_spark_counts_rows_cells_and_labels_as_duckdb_does(spark, parquet_folder, frame):
    duck, spark_engine = (
        DuckDBEngine(parquet_folder),
        SparkEngine(str(parquet_folder), session=spark),
    )
    assert spark_engine.row_count() == duck.row_count() == len(frame)
    for by, edges in ((("region", "flag"), {}), (("age",), {"age": (30.0, 60.0)})):
        key = list(by)
        expected = duck.cell_counts(by, edges).sort_values(key, ignore_index=True)
        found = spark_engine.cell_counts(by, edges).sort_values(key, ignore_index=True)
        pd.testing.assert_frame_equal(found, expected, check_dtype=False)
    # A few whole numbers are codes, a decimal is not; at most one more label than asked for.
    assert sorted(spark_engine.distinct_labels("flag", 5)) == ["False", "True"]
    assert len(spark_engine.distinct_labels("person", 5)) == 6
    with pytest.raises(EngineError, match="The column `nope` is not in the data"):
        spark_engine.cell_counts(("nope",), {})


def test_spark_reports_the_progress_of_its_own_pass_only(spark):
    spark.range(0, 4_000_000, numPartitions=16).createOrReplaceTempView("many")
    engine, other = (SparkEngine("spark:many", session=spark) for _ in range(2))
    assert engine.progress() is None  # no pass runs
    seen = []
    counting = threading.Thread(target=engine.row_count)
    counting.start()
    while counting.is_alive():
        seen.append((engine.progress(), other.progress()))
    counting.join()
    shares = [mine for mine, _ in seen if mine is not None]
    assert shares and all(0.0 <= share <= 1.0 for share in shares)
    assert all(theirs is None for _, theirs in seen)  # another engine's pass is not its own
    assert engine.progress() is None
    assert "master='local[2]'" in engine.expression and engine.source == "many (Spark at local[2])"


def test_the_plan_key_follows_a_replaced_table(spark):
    spark.range(5).createOrReplaceTempView("changing")
    first = SparkEngine("spark:changing", session=spark).plan_key()
    assert SparkEngine("spark:changing", session=spark).plan_key() == first
    spark.range(6).createOrReplaceTempView("changing")
    assert SparkEngine("spark:changing", session=spark).plan_key() != first


@pytest.mark.parametrize(
    ("master", "message"),
    [
        ("sparc://host:7077", "is not a Spark master URL. Give local"),
        ("local[two]", "is not a Spark master URL"),
        ("spark://host", "is not a Spark master URL"),
        ("spark://127.0.0.1:9", "master at spark://127.0.0.1:9 does not answer"),
    ],
)
def test_a_bad_master_is_refused_before_spark_starts(master, message):
    with pytest.raises(EngineError, match=message):
        spark_session(master)


def test_without_java_spark_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(EngineError, match="needs Java 17.*no `java` on the PATH.*openjdk-17"):
        spark_session("local[1]")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(EngineError, match=f"JAVA_HOME is {tmp_path}, which holds no bin/java"):
        spark_session("local[1]")


def test_a_second_master_is_refused_while_one_runs(spark):
    assert spark_session("local[2]") is spark
    with pytest.raises(EngineError, match="already connected to Spark at local.2."):
        spark_session("local[1]")


def test_an_unreadable_part_is_named(tmp_path, frame):
    frame.to_parquet(tmp_path / "good.parquet")
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(EngineError, match="broken.parquet"):
        aggregate_mean(DuckDBEngine(tmp_path), GroupingSpec(by=("region",)), "v", BOUNDS)


def test_a_column_absent_from_some_parts_is_named(tmp_path, frame):
    frame.to_parquet(tmp_path / "a.parquet")
    frame.drop(columns="region").to_parquet(tmp_path / "b.parquet")
    with pytest.raises(EngineError, match="same columns.*region"):
        aggregate_mean(DuckDBEngine(tmp_path), GroupingSpec(by=("region",)), "v", BOUNDS)


@pytest.mark.parametrize("engine_name", ["pandas", "duckdb", "spark"])
@pytest.mark.parametrize(
    ("spec", "value", "unit", "message"),
    [
        (GroupingSpec(by=("age",)), "v", ROW, "`age` holds numbers that are not .*Give public bucket edges"),
        (GroupingSpec(by=("region",)), "region2", ROW, "value column `region2` is not in the data"),
        (GroupingSpec(by=("flag",)), "region", ROW, "`region` holds text; choose a column of numbers"),
        (GroupingSpec(by=("region",), edges=(("region", (1.0,)),)), "v", ROW,
         "edges apply to numeric columns only"),
        (GroupingSpec(by=("region",)), "v", PrivacyUnit("who", 1, 1), "person column `who` is not"),
        (GroupingSpec(by=("region",)), "v", PrivacyUnit("owner", 1, 1), "2 rows of the data have no id"),
        (GroupingSpec(by=("rows",)), "v", ROW, "may not be called `rows`"),
        (GroupingSpec(by=("age",), edges=(("age", (50.0, 10.0)),)), "v", ROW, "strictly increasing"),
        (GroupingSpec(by=("region",), share_source="holdout", holdout_fraction=0.2), "v", ROW,
         "holdout is drawn row by row"),
    ],
)  # fmt: skip
def test_bad_requests_are_refused_with_what_to_fix(
    frame, tmp_path, request, engine_name, spec, value, unit, message
):
    data = frame.assign(owner=frame["person"].astype(float), rows=frame["region"])
    data.loc[[5, 9], "owner"] = np.nan
    engine = engine_on(engine_name, data, tmp_path / "data.parquet", request)
    with pytest.raises(ValueError, match=message):
        aggregate_mean(engine, spec, value, BOUNDS, unit)


# ---- the ratio's sums on every engine ----------------------------------------------------------

RATIO_CASES = {
    "unweighted, 0/1 label, classic gaussian": (
        {"w_column": None, "bounds": RatioBounds(1.0, 1.0), "binary_y": True},
        {"mechanism": "gaussian", "method": "analytical"}, PureDP(1.0),
    ),
    "weighted, label up to 3, laplace": (
        {"w_column": "w", "bounds": RatioBounds(1.0, 3.0, 3.0), "binary_y": False},
        {"mechanism": "laplace", "method": "monte_carlo", "B": 50}, PureDP(2.0),
    ),
    "weighted, 0/1 label, zcdp": (
        {"w_column": "w", "bounds": RatioBounds(1.0, 1.0, 3.0), "binary_y": True},
        {"mechanism": "gaussian", "scale": "log"}, ZCDP(0.5),
    ),
}  # fmt: skip


def ratio_options(options: dict) -> dict:
    label = "y" if options["binary_y"] else "y3"
    return {"s_column": "s", "y_column": label, **options}


def assert_same_ratio_sums(first: GroupRatioSums, second: GroupRatioSums) -> None:
    assert first.labels == second.labels and first.k >= 2
    assert first.sums.released == second.sums.released
    np.testing.assert_allclose(second.sums.stack(), first.sums.stack(), rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(second.rows, first.rows)
    counts = ("n_input", "n_missing", "n_ungrouped")
    assert [getattr(first, c) for c in counts] == [getattr(second, c) for c in counts]


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPECS.keys())
@pytest.mark.parametrize("case", RATIO_CASES.values(), ids=RATIO_CASES.keys())
def test_the_ratio_sums_are_those_of_the_rows_in_memory(frame, parquet_folder, spec, case):
    """Every grouping and choice of columns on pandas and DuckDB (Spark, slower to run, is
    checked on one grouping by the seeded release below, whose noisy sums it compares)."""
    options = ratio_options(case[0])
    in_memory = group_ratio_sums(frame, spec.build(frame), **options)
    for name, engine in engines(frame, parquet_folder).items():
        stats = aggregate_ratio(engine, spec, **options).stats
        assert stats.engine == name
        assert_same_ratio_sums(in_memory, stats)


def released_ratio(stats: GroupRatioSums, options: dict, budget, seed: int = 3) -> np.ndarray:
    header = PlanHeader(dataset=DatasetRef("messy", "-", 1), spec=SPECS["text"], budget=budget)
    plan = RatioPlan(sums=stats, header=header, **options)
    rows = plan.run(SimulationNoise(rng=seed), np.random.default_rng(seed))
    return np.array(
        [[row.estimate, row.low, row.high, *dict(row.noisy_sums).values()] for row in rows],
        dtype=float,
    )


@pytest.mark.parametrize("case", RATIO_CASES.values(), ids=RATIO_CASES.keys())
def test_a_seeded_ratio_release_is_the_same_on_every_engine(frame, parquet_folder, spark, case):
    """Pandas in memory, the pandas engine, DuckDB on a Parquet folder and Spark: the same
    release, to floating-point rounding (issue 16, item 3)."""
    options, plan_options, budget = case
    options = ratio_options(options)
    spec = SPECS["text"]
    runs = [released_ratio(group_ratio_sums(frame, spec.build(frame), **options), plan_options,
                           budget)]  # fmt: skip
    for engine in engines(frame, parquet_folder, spark).values():
        stats = aggregate_ratio(engine, spec, **options).stats
        runs.append(released_ratio(stats, plan_options, budget))
    assert np.isfinite(runs[0][:, 0]).sum() >= 4
    for other in runs[1:]:
        np.testing.assert_allclose(other, runs[0], rtol=1e-9, atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("engine_name", ["pandas", "duckdb", "spark"])
def test_one_added_person_moves_each_ratio_sum_by_at_most_its_sensitivity(
    frame, tmp_path, request, engine_name
):
    """Neighbouring datasets differ by one person with many rows at the bounds and beyond, in
    many groups: each sum, over all groups, moves by at most its declared sensitivity, which is
    c = max_groups × max_rows times one row's (and by some of it: the bound is reached)."""
    unit = PrivacyUnit("person", max_groups=2, max_rows=3)
    intruder = pd.DataFrame({
        "region": ["north", "south", "east", "wést"] * 10, "age": 50.0, "flag": True,
        "v": 1.0, "person": -7, "s": np.linspace(1.5, 9, 40), "y": 1.0, "y3": 7.0, "w": 50.0,
    })  # fmt: skip
    options = ratio_options(RATIO_CASES["weighted, label up to 3, laplace"][0])
    spec = GroupingSpec(by=("region",))
    stats = []
    for i, data in enumerate([frame, pd.concat([frame, intruder], ignore_index=True)]):
        engine = engine_on(engine_name, data, tmp_path / f"{i}.parquet", request)
        stats.append(aggregate_ratio(engine, spec, **options, unit=unit).stats)
    before, after = stats
    assert before.labels == after.labels
    sensitivity = after.bounds.sensitivities(after.sums.released)
    assert sensitivity["w"] == unit.rows_per_person * 3.0
    assert_each_sum_moves_within_its_sensitivity(before, after, sensitivity, unit)


def test_a_person_level_ratio_release_scales_its_noise_not_its_cost(frame):
    spec = SPECS["text"]
    options = ratio_options(RATIO_CASES["unweighted, 0/1 label, classic gaussian"][0])
    plans = []
    for unit in (ROW, PrivacyUnit("person", max_groups=2, max_rows=2)):
        aggregated = aggregate_ratio(PandasEngine(frame, "messy"), spec, **options, unit=unit)
        header = PlanHeader(dataset=aggregated.dataset, spec=spec, budget=ZCDP(0.5))
        plans.append(RatioPlan(sums=aggregated.stats, header=header))
    row, person = plans
    for name, sigma in row.noise_scale.items():
        assert person.noise_scale[name] == pytest.approx(4 * sigma)
    assert person.cost.rho == pytest.approx(row.cost.rho)
    assert "privacy_unit" not in row.parameters()
    assert person.parameters()["privacy_unit"] == {"column": "person", "max_groups": 2,
                                                   "max_rows": 2}  # fmt: skip
    assert any("Privacy unit" in line for line in person.review_lines())
    assert "aggregate_ratio(PandasEngine(frame, 'messy'), spec" in person.script_body()


@pytest.mark.parametrize("engine_name", ["pandas", "duckdb", "spark"])
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"s_column": "region"}, "score column `region` holds text; choose a column of numbers"),
        ({"y_column": "nope"}, "label column `nope` is not in the data"),
        ({"y_column": "y3"}, "label column `y3` has values other than 0 and 1.*--label-bound"),
        ({"w_column": "s", "bounds": RatioBounds(1, 1, 3)}, "must be different columns"),
    ],
)  # fmt: skip
def test_bad_ratio_columns_are_refused_with_what_to_fix(
    frame, tmp_path, request, engine_name, options, message
):
    engine = engine_on(engine_name, frame, tmp_path / "data.parquet", request)
    arguments = {**ratio_options(RATIO_CASES["unweighted, 0/1 label, classic gaussian"][0]),
                 **options}  # fmt: skip
    with pytest.raises(EngineError, match=message):
        aggregate_ratio(engine, GroupingSpec(by=("region",)), **arguments)


def test_a_ratio_column_absent_from_some_parts_is_named(tmp_path, frame):
    frame.to_parquet(tmp_path / "a.parquet")
    frame.drop(columns="s").to_parquet(tmp_path / "b.parquet")
    options = ratio_options(RATIO_CASES["unweighted, 0/1 label, classic gaussian"][0])
    with pytest.raises(EngineError, match="same columns.*`?s`?"):
        aggregate_ratio(DuckDBEngine(tmp_path), GroupingSpec(by=("region",)), **options)


# ---- the curator's preview of a contribution bound on every engine ----------------------------

PREVIEW_UNITS = {
    "2 groups x 2 rows": PrivacyUnit("person", max_groups=2, max_rows=2),
    "1 group x 3 rows": PrivacyUnit("person", max_groups=1, max_rows=3),
}


@pytest.mark.parametrize("spec", [*SPECS.values(), GroupingSpec(by=())],
                         ids=[*SPECS, "no grouping"])  # fmt: skip
@pytest.mark.parametrize("unit", PREVIEW_UNITS.values(), ids=PREVIEW_UNITS.keys())
def test_the_preview_of_a_bound_is_the_same_on_every_engine(
    frame, parquet_folder, spark, spec, unit
):
    """What the bound leaves out, counted in one aggregation on each engine, equals the count
    of the rows in memory (:func:`preview_bound`), and leaves rows out."""
    edges = dict(spec.edges)
    labels = cell_labels(frame, spec.by, edges) if spec.by else frame.iloc[:, :0]
    expected = preview_bound(labels, frame["person"], unit)
    assert expected.dropped > 0 and expected.people_affected > 0
    for name, engine in engines(frame, parquet_folder, spark).items():
        assert engine.bound_preview(spec.by, edges, unit) == expected, name


@pytest.mark.parametrize("engine_name", ["pandas", "duckdb", "spark"])
def test_the_preview_counts_missing_ids_and_refuses_a_grouping_person(
    frame, tmp_path, request, engine_name
):
    data = frame.assign(owner=frame["person"].astype(float))
    data.loc[[5, 9, 11], "owner"] = np.nan
    engine = engine_on(engine_name, data, tmp_path / "data.parquet", request)
    unit = PrivacyUnit("owner", max_groups=1, max_rows=2)
    expected = preview_bound(cell_labels(data, ("region",)), data["owner"], unit)
    found = engine.bound_preview(("region",), {}, unit)
    assert found == expected and found.missing_person == 3
    with pytest.raises(EngineError, match="person column `region` is also a grouping column"):
        engine.bound_preview(("region",), {}, PrivacyUnit("region"))
    with pytest.raises(EngineError, match="person column `who` is not in the data"):
        engine.bound_preview(("region",), {}, PrivacyUnit("who"))
