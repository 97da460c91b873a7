"""GVDP's bag of little bootstraps from an engine's passes (:mod:`dpcore.engines.blb`): the
keys and draws are the same on pandas and DuckDB whatever the order of the rows or their
files; the weights have the law the bootstrap needs; a release on files is the release in
memory drawn from the same salt; one added person changes one subset per group; and the
intervals still cover. (Spark's equality:
``tests/unit/dpcore/engines/test_seeded_releases.py``.)"""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from dpcore.analyses.gvdp import GVDP, GvdpBoundsSpec, GvdpModel, GvdpPlan, GvdpSettings
from dpcore.analyses.gvdp.aggregate import aggregate_gvdp, bag_estimates
from dpcore.analyses.gvdp.estimator import gvdp, nonprivate_ci
from dpcore.analyses.gvdp.groups import RunSettings, nonprivate, run_population
from dpcore.engines import DuckDBEngine, PandasEngine
from dpcore.engines.base import GROUP
from dpcore.engines.blb import SUBSET, double_words, draws, mix, unit_hashes
from dpcore.engines.duckdb_sql import double_words_sql, linear_words, mixed_sql
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.privacy_unit import PrivacyUnit
from dpcore.release import DatasetRef, PlanHeader
from tests.frames import write_shuffled_parts

MEAN = GvdpModel("mean", "y")
OLS = GvdpModel("ols", "y", ("x", "z"))
BY = GroupingSpec(by=("g",))
RUN = RunSettings(k=40, rho=0.5, resamples=10)


def regression_rows(n: int, seed: int) -> pd.DataFrame:
    """y = 1 + 2x − z + noise in two groups, a 0/1 covariate, duplicated rows, a missing y,
    and people owning one to four rows."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "g": rng.choice(["a", "b"], n), "x": rng.normal(size=n).round(1),
        "z": rng.integers(0, 2, n).astype(float), "person": rng.integers(0, n // 2, n),
    })  # fmt: skip
    frame["y"] = (1 + 2 * frame["x"] - frame["z"] + rng.normal(size=n)).round(1)
    frame.loc[5, "y"] = np.nan
    return frame


def bounds_for(model: GvdpModel) -> GvdpBoundsSpec:
    d = model.d
    return GvdpBoundsSpec("box", model.coefficients, spread=(5.0,) * d, low=(-10.0,) * d,
                          high=(10.0,) * d)  # fmt: skip


def in_parts(frame: pd.DataFrame, folder, parts: int, seed: int):
    """``frame`` shuffled into ``parts`` Parquet files, read by DuckDB."""
    return DuckDBEngine(write_shuffled_parts(frame, folder, seed=seed, parts=parts))


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return regression_rows(3000, seed=0)


def test_doubles_give_the_same_words_in_python_and_in_sql():
    values = np.array([0.0, -0.0, 1.0, -1.5, 0.1, 1e300, -3e-310, 5e-324, 2.0**52 + 1, 1 / 3])
    con = duckdb.connect()
    con.register("t", pd.DataFrame({"x": values}))
    found = con.sql(double_words_sql("SELECT * FROM t", "x", "w")).df()
    for i, word in enumerate(double_words(values)):
        np.testing.assert_array_equal(found[f"w{i}"].to_numpy(np.int64), word)
    low, high, exponent = (int(w[0]) for w in double_words(np.array([0.1])))
    signed = exponent - 2**32 if exponent >= 2**31 else exponent  # two's complement
    assert (low + (high << 32)) * 2.0 ** (signed - 52) == 0.1


def test_the_sql_hash_is_the_numpy_hash_bit_for_bit():
    """The words' linear combination and the mixer in DuckDB's BIGINT arithmetic give numpy's
    unsigned 32-bit results for words across their range (Spark's: test_engines)."""
    rng = np.random.default_rng(3)
    words = [rng.integers(0, 2**32, 1000), rng.integers(0, 2**32, 1000)]
    words[0][:3] = [0, 2**32 - 1, 1]
    con = duckdb.connect()
    con.register("t", pd.DataFrame({"a": words[0], "b": words[1]}))
    hashed = f"SELECT xor({linear_words(['a', 'b'])}, 12345) AS s FROM t"
    found = con.sql(mixed_sql(hashed, "s")).df()["s"].to_numpy(np.uint64)
    np.testing.assert_array_equal(found, unit_hashes(words, 12345))
    assert mix(np.array([0], dtype=np.uint64))[0] == 0  # a bijection: 0 is its own image


def test_weights_have_the_mean_and_variance_of_a_multinomial_count_per_row():
    """k·w has mean k and variance k, as a row's Binomial(n, 1/b) count has (≈ Poisson(k)); the
    subsets are uniform; the resamples' weights are uncorrelated."""
    rows, k = 200_000, 25
    hashes = unit_hashes([np.arange(rows)], salt_word=77)
    subset, bits = draws(hashes, np.full(rows, k), 40)
    weights = 1.0 + k**-0.5 * (2.0 * bits - 1.0)
    w = weights[:, 0]
    assert abs(w.mean() - 1) < 4 * np.sqrt(1 / k / rows)
    assert abs(w.var() * k - 1) < 0.03
    assert w.min() > 0
    assert np.abs(np.corrcoef(weights.T)[np.triu_indices(40, 1)]).max() < 0.015
    counts = np.bincount(subset, minlength=k)
    assert scipy_stats.chisquare(counts).pvalue > 1e-3


@pytest.mark.parametrize("model", [MEAN, OLS], ids=["mean", "ols"])
@pytest.mark.parametrize("unit", [None, PrivacyUnit("person")], ids=["row", "person"])
def test_pandas_and_duckdb_draw_the_same_bags_whatever_the_order_and_parts(
    frame, tmp_path, model, unit
):
    engines = [
        PandasEngine(frame), PandasEngine(frame.sample(frac=1.0, random_state=7)),
        in_parts(frame, tmp_path / "three", 3, seed=1), in_parts(frame, tmp_path / "one", 1, 2),
    ]  # fmt: skip
    unit = unit or PrivacyUnit()
    bags = [aggregate_gvdp(engine, BY, model, unit).stats.bags.groups("s", (12, 12), 5, (1, 1))
            for engine in engines]  # fmt: skip
    for other in bags[1:]:
        for first, second in zip(bags[0], other, strict=True):
            np.testing.assert_allclose(second.estimates, first.estimates, rtol=1e-9)
            np.testing.assert_allclose(second.variances, first.variances, rtol=1e-7)


def test_a_seeded_release_on_files_is_the_release_of_the_same_bags_in_memory(frame, tmp_path):
    """The plan on DuckDB releases what GVDP releases on the bags drawn with the release's own
    salt: the private stage is unchanged."""
    engine = in_parts(frame, tmp_path / "parts", 3, seed=1)
    data = aggregate_gvdp(engine, BY, OLS).stats
    on_files = run_population(data, bounds_for(OLS), RUN, rng=4, noise="simulation")
    generator = np.random.default_rng(4)
    salt = f"{int(generator.integers(0, 2**63)):016x}"
    bag = data.bags.population(salt, RUN.k, RUN.resamples, data.rows)
    direct = gvdp(
        bag, "ols", k=RUN.k, bounds=bounds_for(OLS).for_rows(data.rows, RUN.k, RUN.resamples),
        rng=generator, noise="simulation", **RUN.gvdp_kwargs(),
    )  # fmt: skip
    np.testing.assert_array_equal(on_files.estimate, direct.estimate)
    other_seed = run_population(data, bounds_for(OLS), RUN, rng=5, noise="simulation")
    assert not np.allclose(other_seed.subset_estimates, on_files.subset_estimates)


def test_the_non_private_reference_from_the_engines_sums_is_the_fit_on_the_rows(frame):
    data = aggregate_gvdp(PandasEngine(frame), BY, OLS).stats
    complete = frame.dropna()
    X = np.column_stack([np.ones(len(complete)), complete[["x", "z"]]])
    reference = nonprivate_ci((X, complete["y"].to_numpy()), "ols")
    np.testing.assert_allclose(nonprivate(data).population.estimate, reference.estimate)
    mean = nonprivate(aggregate_gvdp(PandasEngine(frame), BY, MEAN).stats).population
    expected = nonprivate_ci(complete["y"].to_numpy()[:, None], "mean")
    np.testing.assert_allclose(mean.estimate, expected.estimate)
    np.testing.assert_allclose(mean.variance, expected.variance)


def test_a_person_in_several_groups_is_refused(frame):
    with pytest.raises(ValueError, match="bound each person to one group"):
        aggregate_gvdp(PandasEngine(frame), BY, MEAN, PrivacyUnit("person", max_groups=2))


def test_a_logistic_model_on_files_says_it_needs_the_rows(frame):
    logistic = GvdpModel("logistic", "z", ("x",))
    with pytest.raises(ValueError, match="logistic regression needs the rows in memory"):
        aggregate_gvdp(PandasEngine(frame), BY, logistic)


def test_views_that_read_the_rows_say_so_on_files(frame):
    settings = GvdpSettings(model="ols", outcomes=(("ols", "y"),), covariates=(("ols", ("x", "z")),),
                            ks=(("ols", 40),))  # fmt: skip
    data = GVDP.engine_statistics(PandasEngine(frame), BY, settings).stats
    with pytest.raises(ValueError, match="stays where it lies"):
        GVDP.study(data, settings, ZCDP(0.5), replicates=5, rng=0)


def test_a_release_plan_on_files_scripts_the_engines_pass(frame, tmp_path):
    engine = in_parts(frame, tmp_path / "parts", 2, seed=3)
    aggregated = aggregate_gvdp(engine, BY, MEAN)
    header = PlanHeader(aggregated.dataset, BY, ZCDP(0.5), label="t")
    plan = GvdpPlan(data=aggregated.stats, header=header, model=MEAN, bounds=bounds_for(MEAN),
                    k=40)  # fmt: skip
    assert "aggregate_gvdp(DuckDBEngine(" in plan.script_body()
    assert any("the duckdb engine" in line for line in plan.review_lines())
    assert isinstance(aggregated.dataset, DatasetRef)
    namespace: dict = {}
    exec(plan.script_body(), namespace)  # the script runs as it is
    rows = namespace["plan"].run(*_simulation(6))
    again = plan.run(*_simulation(6))
    assert [r.to_dict() for r in rows] == [r.to_dict() for r in again]


def _simulation(seed: int):
    from dpcore.foundations.mechanisms import SimulationNoise

    generator = np.random.default_rng(seed)
    return SimulationNoise(rng=generator), generator


def test_intervals_on_files_cover_as_the_in_memory_ones_do():
    """Seeded, over fresh samples of known OLS coefficients: the engine path's bootstrap (hash
    partition, double-or-nothing weights) measures the estimator's sampling variance as the
    in-memory multinomial one does, and its intervals cover the truth at least at the nominal
    95% up to binomial noise, as the in-memory ones do."""
    truth = np.array([1.0, 2.0, -1.0])
    bounds, settings = bounds_for(OLS), RunSettings(k=20, rho=50.0, resamples=10)
    trials = 100
    covered = {"engine": [], "memory": []}
    measured = {"engine": [], "memory": []}
    estimates = []
    for seed in range(trials):
        sample = regression_rows(1000, seed=100 + seed).dropna()
        data = aggregate_gvdp(PandasEngine(sample), BY, OLS).stats
        engine = run_population(data, bounds, settings, rng=seed, noise="simulation")
        X = np.column_stack([np.ones(len(sample)), sample[["x", "z"]]])
        memory = gvdp((X, sample["y"].to_numpy()), "ols", k=settings.k, rng=seed,
                      bounds=bounds.for_rows(len(sample), settings.k, settings.resamples),
                      noise="simulation", **settings.gvdp_kwargs())  # fmt: skip
        estimates.append(nonprivate(data).population.estimate)
        for name, fit in (("engine", engine), ("memory", memory)):
            covered[name].append((fit.low <= truth) & (truth <= fit.high))
            measured[name].append(fit.subset_variances.mean(axis=0))
    sampling = np.var(estimates, axis=0, ddof=1)  # the estimator's variance across samples
    engine, memory = np.mean(measured["engine"], axis=0), np.mean(measured["memory"], axis=0)
    np.testing.assert_allclose(engine, memory, rtol=0.08)  # seen: within 3.5%
    np.testing.assert_allclose(
        engine, sampling, rtol=0.4
    )  # 2.8 standard errors of a variance from 100 samples
    for rate in np.mean(covered["engine"], axis=0):
        assert scipy_stats.binomtest(round(rate * trials), trials, 0.95, "less").pvalue > 1e-3


def test_an_engine_subset_whose_sums_are_singular_is_fitted_by_least_norm_as_in_memory():
    """OLS of y on (1, x) over two subsets of one group and two resamples: in subset 1 the
    covariate x never varies (x = 0 on every row), so its X'WX is singular; it is fitted by
    least norm (y's mean on the intercept, 0 on x) instead of refusing the release."""
    # Subset 0: rows (x, y) = (1, 3), (2, 5) → y = 1 + 2x exactly. Subset 1: (0, 4), (0, 6).
    sums = {"xx_0_0": [2, 2], "xx_0_1": [3, 0], "xx_1_1": [5, 0], "xy_0": [8, 10], "xy_1": [13, 0]}
    table = pd.DataFrame({GROUP: [0, 0], SUBSET: [0, 1]})
    for j in range(2):  # both resamples draw every row once
        for name, values in sums.items():
            table[name.replace("_", f"{j}_", 1)] = values
    [bag] = bag_estimates(table, np.array([2]), np.array([4]), p=2, resamples=2)
    np.testing.assert_allclose(bag.estimates, [[1.0, 2.0], [5.0, 0.0]], atol=1e-12)
    np.testing.assert_allclose(bag.variances, 0.0, atol=1e-12)
    assert bag.n == 4
