"""Synthetic data on engines: the cells an engine counts give the release the rows in memory
give, at a fixed seed, on pandas, DuckDB and Spark; one added row moves the counts by at most
the sensitivity the synthesizers assume; what cannot run on counts is refused before any pass,
with a message that names the column and the fix."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses import SYNTH
from dpcore.analyses.synth import MBI_NEEDS_ROWS, SynthConfig, SynthSettings, synthesize
from dpcore.analyses.synth.aggregate import aggregate_synth
from dpcore.engines import DuckDBEngine, EngineError, PandasEngine, SparkEngine
from dpcore.foundations.accounting import PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.release import DatasetRef, PlanHeader

SPEC = GroupingSpec(by=("region",), small_groups="drop", min_group_size=20)
EDGES = (("age", (30.0, 50.0)), ("hours", (20.0, 40.0)))


def settings(method: str, strategy: str = "stratified") -> SynthSettings:
    return SynthSettings(
        method=method, strategy=strategy, columns=("age", "job", "hours", "owns", "paid"),
        edges=EDGES, categorical=("paid",), n_rows=300, rounds=3,
    )  # fmt: skip


def people(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """A text grouping column with a group too small to keep; a numeric column bucketed by
    edges, a decimal one too, a text one, a yes/no one and 0/1 codes treated as categories."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "region": rng.choice(["north", "south", "east", "tiny"], n, p=[0.5, 0.3, 0.19, 0.01]),
        "age": rng.integers(16, 90, n),
        "job": rng.choice(["clerk", "farmer", "nurse"], n),
        "hours": rng.uniform(0, 60, n).round(1),
        "owns": rng.random(n) < 0.4,
        "paid": rng.integers(0, 2, n),
        "note": "unused",
    })  # fmt: skip


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """This module's own rows (the synthesizers' column kinds), in place of the messy frame;
    the conftest's ``parquet_folder`` writes them in shuffled parts."""
    return people()


def header() -> PlanHeader:
    return PlanHeader(dataset=DatasetRef("people", "-", 1), spec=SPEC, budget=PureDP(1.0))


def released(stats, chosen: SynthSettings, seed: int = 7) -> list[dict]:
    plan = SYNTH.plan(stats, chosen, header())
    rows = plan.run(SimulationNoise(rng=seed), np.random.default_rng(seed))
    return [dataclasses.asdict(row) for row in rows]


@pytest.mark.parametrize("strategy", ["stratified", "vanilla"])
@pytest.mark.parametrize("method", ["independent", "histogram", "mwem"])
def test_a_seeded_release_is_the_same_in_memory_and_on_every_engine(
    frame, parquet_folder, spark, method, strategy
):
    chosen = settings(method, strategy)
    in_memory = SYNTH.statistics(frame, SPEC.build(frame), chosen)
    engines = [
        PandasEngine(frame), DuckDBEngine(parquet_folder),
        SparkEngine(str(parquet_folder), session=spark),
    ]  # fmt: skip
    expected = released(in_memory, chosen)
    for engine in engines:
        counted = SYNTH.engine_statistics(engine, SPEC, chosen).stats
        assert counted.n_rows == in_memory.n_rows and counted.n_dropped == in_memory.n_dropped
        assert len(counted.rows) < len(in_memory.rows)  # cells, not rows
        assert released(counted, chosen) == expected, engine.name


def test_the_counts_give_the_same_simulation_study_and_categories(frame, parquet_folder):
    chosen = settings("mwem")
    in_memory = SYNTH.statistics(frame, SPEC.build(frame), chosen)
    counted = SYNTH.engine_statistics(DuckDBEngine(parquet_folder), SPEC, chosen).stats
    studies = [SYNTH.study(s, chosen, PureDP(2.0), replicates=2, rng=5)
               for s in (in_memory, counted)]  # fmt: skip
    pd.testing.assert_frame_equal(*studies)
    for column in ("job", "owns", "paid"):
        assert counted.categories(column) == in_memory.categories(column)
    plan = SYNTH.plan(counted, chosen, header())
    assert plan.parameters()["estimator"]["categories_treated_as_public"] == ["job", "owns", "paid"]


def joint_counts(stats) -> pd.Series:
    """The rows of each (group, cell): what the synthesizers are fitted on."""
    return (
        stats.rows.astype(str).assign(n=stats.weights).groupby(list(stats.rows.columns))["n"].sum()
    )


@pytest.mark.parametrize("engine_name", ["pandas", "duckdb"])
def test_one_added_person_moves_the_counts_by_at_most_one(frame, tmp_path, engine_name):
    """Without a person column one row is one person: neighbouring tables differ by one row,
    which moves one cell of the joint counts (and so of every marginal) by exactly 1, the L1
    sensitivity the histogram's Laplace(1/ε), the marginals' Laplace(d/ε) and MWEM assume."""
    intruder = pd.DataFrame([{"region": "east", "age": 33, "job": "nurse", "hours": 41.0,
                              "owns": True, "paid": 1, "note": "unused"}])  # fmt: skip
    counts = []
    for i, data in enumerate([frame, pd.concat([frame, intruder], ignore_index=True)]):
        if engine_name == "pandas":
            engine = PandasEngine(data)
        else:
            data.to_parquet(tmp_path / f"{i}.parquet")
            engine = DuckDBEngine(tmp_path / f"{i}.parquet")
        counts.append(joint_counts(SYNTH.engine_statistics(engine, SPEC, settings("mwem")).stats))
    before, after = counts
    change = after.sub(before, fill_value=0)
    assert change.abs().sum() == 1
    assert change.loc[("[30, 50)", "nurse", "≥ 40", "True", "1", "east")] == 1


def test_mst_and_aim_are_refused_on_counts_before_any_pass(frame, parquet_folder):
    engine = DuckDBEngine(parquet_folder)
    for method in ("mst", "aim"):
        with pytest.raises(EngineError, match="MST and AIM are fitted by OpenDP"):
            SYNTH.engine_statistics(engine, SPEC, settings(method))
    with pytest.raises(ValueError, match="MST and AIM are fitted by OpenDP"):
        synthesize(frame, ["job", "paid"], method="mst", epsilon=1.0, n_rows=10,
                   edges=None, weights=np.ones(len(frame)))  # fmt: skip
    assert "Choose MWEM, independent marginals or the full histogram" in MBI_NEEDS_ROWS


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: f, "Column `hours` is numeric: type public bucket edges for it"),
        (lambda f: f.assign(job=f["job"].where(f.index % 50 > 0)),
         "The column `job` has missing values"),
        (lambda f: f.assign(paid=f["paid"] + 0.5), "`paid` is treated as categories but holds "
         "numbers that are not category codes"),
        (lambda f: f.drop(columns="job"), "The data has no column `job` to synthesize"),
    ],
    ids=["no edges", "missing", "not whole", "no column"],
)  # fmt: skip
def test_bad_columns_are_named_with_their_fix(frame, tmp_path, change, message):
    chosen = settings("independent")
    if "numeric" in message:
        chosen = chosen.with_edges("hours", None)
    config = SYNTH.config(chosen, PandasEngine(frame).column_kinds(), SPEC.by)
    change(frame).to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(EngineError, match=message):
        aggregate_synth(DuckDBEngine(tmp_path / "bad.parquet"), SPEC, config)


def test_a_column_missing_from_a_part_is_named(frame, tmp_path):
    frame.iloc[:300].to_parquet(tmp_path / "a.parquet")
    frame.iloc[300:].drop(columns="job").to_parquet(tmp_path / "b.parquet")
    with pytest.raises(EngineError, match="do not all have the same columns"):
        SYNTH.engine_statistics(DuckDBEngine(tmp_path), SPEC, settings("independent"))


def test_too_many_cells_name_the_columns_and_what_to_do(frame, parquet_folder):
    fine = {"age": np.arange(16.5, 90, 0.5), "hours": np.arange(1, 601) / 10}
    chosen = dataclasses.replace(
        settings("histogram"), edges=tuple((c, tuple(e.round(1))) for c, e in fine.items())
    )
    stats = SYNTH.engine_statistics(DuckDBEngine(parquet_folder), SPEC, chosen).stats
    with pytest.raises(ValueError, match=r"age \(148\) × job \(3\) × hours \(601\).*Use MWEM"):
        SYNTH.check_rows(stats, chosen, ("stratified",))


def test_the_script_runs_the_pass_again_and_rebuilds_the_plan(frame, parquet_folder):
    chosen = settings("independent")
    aggregated = SYNTH.engine_statistics(DuckDBEngine(parquet_folder), SPEC, chosen)
    plan = SYNTH.plan(aggregated.stats, chosen, dataclasses.replace(
        header(), dataset=aggregated.dataset))  # fmt: skip
    namespace: dict = {}
    exec(plan.script_body(), namespace)  # noqa: S102 - the release's own script
    assert namespace["plan"].parameters() == plan.parameters()
    assert isinstance(namespace["aggregated"].stats.config, SynthConfig)
