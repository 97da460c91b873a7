"""The groups count the rows the estimate uses (GroupingSpec.needs_values): a row with no value
in a column the analysis reads is left out before grouping, so that the groups, their sizes,
the small-group rule and shares read from the data describe the rows each estimate is made of,
in memory, on every engine, in the app and on the command line alike."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses import get
from dpcore.analyses.mean import GroupValues
from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.engines import DuckDBEngine, PandasEngine
from dpcore.engines.base import group_cells
from dpcore.foundations.grouping import DROPPED_CODE, HOLDOUT_CODE, GroupingSpec
from dpcore.foundations.shares import HOLDOUT_SEED, holdout_mask

NAN = float("nan")


def survey(n: int = 600, seed: int = 3) -> pd.DataFrame:
    """Groups a and b, income blank in about a fifth of the rows, more often in group b."""
    rng = np.random.default_rng(seed)
    group = rng.choice(["a", "b"], size=n, p=[0.6, 0.4])
    income = rng.normal(50, 10, size=n)
    blank = rng.random(n) < np.where(group == "b", 0.35, 0.1)
    income[blank] = NAN
    return pd.DataFrame({"g": group, "income": income, "label": rng.integers(0, 2, size=n)})


def test_the_groups_count_only_the_rows_with_a_value():
    frame = survey()
    spec = GroupingSpec(by=("g",), needs_values=("income",))
    grouping = spec.build(frame)
    has_income = frame["income"].notna()
    expected = frame[has_income].groupby("g").size()
    assert dict(zip(grouping.labels, grouping.sizes.tolist(), strict=True)) == expected.to_dict()
    np.testing.assert_allclose(grouping.shares.values, grouping.sizes / has_income.sum())
    assert (grouping.codes[~has_income.to_numpy()] == DROPPED_CODE).all()
    assert grouping.report.n_rows_without_values == int((~has_income).sum())
    assert grouping.report.n_rows_used == int(has_income.sum())
    assert "have no number in `income` and are left out" in grouping.report.rows_used_sentence()
    # without the column, every row counts (as before the spec named it)
    assert GroupingSpec(by=("g",)).build(frame).n == len(frame)


def test_the_mean_divides_by_the_sizes_the_groups_show():
    """The sizes a release declares public (the Strata page's) are the n_g of each estimate, and
    the rows left out are still said."""
    frame = survey()
    mean = get("mean")
    settings = dataclasses.replace(mean.default_settings(), value="income", clip_low=0.0,
                                   clip_high=100.0)  # fmt: skip
    grouping = mean.grouping_for(GroupingSpec(by=("g",)), settings).build(frame)
    values = mean.statistics(frame, grouping, settings)
    np.testing.assert_array_equal(values.sizes, grouping.sizes)
    np.testing.assert_allclose(values.shares.values, grouping.shares.values)
    blanks = int(frame["income"].isna().sum())
    assert values.n_missing == blanks
    assert f"{blanks:,} rows with a missing or infinite value in `income`" in values.messages()[0]


def test_the_small_group_rule_counts_the_rows_with_a_value():
    """Group c has 6 rows but 2 incomes: with a minimum of 3 it is merged, as its estimate
    would rest on 2 rows; counted on every row it would have been kept."""
    frame = pd.DataFrame({
        "g": ["a"] * 5 + ["b"] * 5 + ["c"] * 6,
        "income": [1.0] * 10 + [1.0, 2.0, NAN, NAN, NAN, NAN],
    })  # fmt: skip
    every_row = GroupingSpec(by=("g",), min_group_size=3, small_groups="drop")
    assert every_row.build(frame).labels == ("c", "a", "b")
    with_values = dataclasses.replace(every_row, needs_values=("income",))
    grouping = with_values.build(frame)
    assert grouping.labels == ("a", "b")
    assert grouping.report.dropped_groups == ("c",)
    assert grouping.report.n_rows_dropped_small == 2


def test_a_holdout_is_drawn_from_every_row_and_its_shares_count_its_rows_with_a_value():
    frame = survey()
    spec = GroupingSpec(by=("g",), share_source="holdout", holdout_fraction=0.3,
                        needs_values=("income",))  # fmt: skip
    grouping = spec.build(frame)
    public = holdout_mask(len(frame), 0.3, rng=HOLDOUT_SEED)
    assert (grouping.codes[public] == HOLDOUT_CODE).all()
    holdout = frame[public & frame["income"].notna().to_numpy()]
    expected = holdout.groupby("g").size() / len(holdout)
    np.testing.assert_allclose(grouping.shares.values, expected[list(grouping.labels)].to_numpy())
    private_blanks = int((frame["income"].isna().to_numpy() & ~public).sum())
    assert grouping.report.n_rows_without_values == private_blanks


def test_a_person_without_a_value_changes_no_group_size_or_share():
    """Neighbouring data: one more person whose income is blank leaves every public number of
    the grouping as it was (that person is in no estimate)."""
    frame = survey()
    spec = GroupingSpec(by=("g",), needs_values=("income",))
    neighbour = pd.concat([frame, pd.DataFrame({"g": ["a"], "income": [NAN], "label": [1]})])
    first, second = spec.build(frame), spec.build(neighbour.reset_index(drop=True))
    assert first.labels == second.labels
    np.testing.assert_array_equal(first.sizes, second.sizes)
    np.testing.assert_array_equal(first.shares.values, second.shares.values)


def test_a_column_the_analysis_refuses_leaves_no_row_out_and_no_value_at_all_is_refused():
    frame = survey().assign(text=lambda f: f["g"].map({"a": "x", "b": "y"}))
    assert GroupingSpec(by=("g",), needs_values=("text",)).build(frame).n == len(frame)
    assert GroupingSpec(by=("g",), needs_values=("nowhere",)).build(frame).n == len(frame)
    blank = frame.assign(income=NAN)
    with pytest.raises(ValueError, match="no row has a usable number in `income`"):
        GroupingSpec(by=("g",), needs_values=("income",)).build(blank)


def test_the_spec_names_the_columns_only_when_set():
    assert "needs_values" not in GroupingSpec(by=("g",)).to_dict()
    spec = GroupingSpec(by=("g",), needs_values=["income"])
    assert spec.needs_values == ("income",) and spec.to_dict()["needs_values"] == ["income"]


@pytest.mark.parametrize("name", ["mean", "ratio", "gvdp"])
def test_every_analysis_that_reads_numbers_groups_the_rows_it_uses(name):
    analysis = get(name)
    settings = analysis.default_settings()
    spec = analysis.grouping_for(GroupingSpec(by=("g",)), settings)
    assert spec.needs_values and set(spec.needs_values) <= {
        "hours_per_week", "score", "income_over_50k", "age",
    }  # fmt: skip
    for other in ("synth", "sample"):  # categories: a missing value is a category of its own
        assert get(other).grouping_for(spec, get(other).default_settings()).needs_values == ()


def test_engines_leave_out_the_rows_without_a_value_as_memory_does(tmp_path):
    frame = survey()
    frame.loc[:40, "g"] = "tiny"  # merged by the rows with a value
    frame.loc[:35, "income"] = NAN
    frame.to_parquet(tmp_path / "survey.parquet")
    spec = GroupingSpec(by=("g",), min_group_size=10, needs_values=("income",))
    in_memory = GroupValues.from_grouping(spec.build(frame), frame, "income")
    assert "tiny" not in in_memory.labels  # 41 rows, 5 incomes: dropped, merged or not
    for engine in (PandasEngine(frame, "survey"), DuckDBEngine(tmp_path / "survey.parquet")):
        sums = aggregate_mean(engine, spec, "income", (0.0, 100.0)).stats
        assert sums.labels == in_memory.labels
        np.testing.assert_array_equal(sums.sizes, in_memory.sizes)
        np.testing.assert_allclose(sums.shares.values, in_memory.shares.values)
        assert sums.n_missing == in_memory.n_missing == int(frame["income"].isna().sum())
        shown = group_cells(engine, spec)  # the Strata page's groups, before the mean's pass
        assert shown.labels == in_memory.labels
        np.testing.assert_array_equal(shown.sizes, in_memory.sizes)
