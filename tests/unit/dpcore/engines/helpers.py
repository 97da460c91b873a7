"""What the engine tests share (and a few analysis tests reuse): a messy frame with a person
column, the groupings and ratio cases run on every engine, the engines over one frame, and the
comparisons of their statistics."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpcore.analyses.ratio import GroupRatioSums, RatioBounds
from dpcore.engines import DuckDBEngine, PandasEngine, SparkEngine
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import GroupingSpec

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


def engines(frame, folder, spark=None):
    found = {"pandas": PandasEngine(frame, "messy"), "duckdb": DuckDBEngine(folder)}
    return found if spark is None else {**found, "spark": SparkEngine(str(folder), session=spark)}


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


def engine_on(engine_name: str, data: pd.DataFrame, path, request):
    """``data`` in memory, or written to ``path`` and read by DuckDB or Spark."""
    if engine_name == "pandas":
        return PandasEngine(data)
    data.to_parquet(path)
    if engine_name == "duckdb":
        return DuckDBEngine(path)
    return SparkEngine(str(path), session=request.getfixturevalue("spark"))


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
