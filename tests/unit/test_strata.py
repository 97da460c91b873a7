"""Strata: grouping rules, sufficient statistics, clipped sums, small groups, public shares."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.strata import (
    MISSING_LABEL,
    OTHER_LABEL,
    PublicShares,
    Strata,
    StrataReport,
    shares_from_counts,
    shares_from_holdout,
    shares_from_table,
    split_holdout,
)

# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def random_frame(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    race = rng.choice(["White", "Black", "Asian", "Other"], size=n, p=[0.6, 0.2, 0.15, 0.05])
    sex = rng.choice(["Female", "Male"], size=n)
    return pd.DataFrame(
        {
            "race": pd.Series(race, dtype="str"),
            "sex": pd.Series(sex, dtype="str"),
            "age": rng.integers(17, 90, size=n),
            "x": rng.normal(40, 12, size=n).round(1),  # rounding creates ties
        }
    )


def brute_clipped(strata: Strata, low, high) -> np.ndarray:
    shape = np.broadcast_shapes(np.shape(low), np.shape(high), (strata.k,))
    lo = np.broadcast_to(np.asarray(low, dtype=float), shape)
    hi = np.broadcast_to(np.asarray(high, dtype=float), shape)
    out = np.empty(shape)
    for g in range(strata.k):
        vals = strata.sorted_values[strata.offsets[g] : strata.offsets[g + 1]]
        out[..., g] = np.clip(vals, lo[..., g, None], hi[..., g, None]).sum(axis=-1)
    return out


def frame_from_groups(groups: dict[str, list[float]]) -> pd.DataFrame:
    rows = [(g, v) for g, vals in groups.items() for v in vals]
    return pd.DataFrame(rows, columns=["g", "x"]).astype({"g": "str", "x": "float64"})


# --------------------------------------------------------------------------------------------
# sufficient statistics and labels
# --------------------------------------------------------------------------------------------


def test_statistics_match_pandas_groupby():
    df = random_frame()
    strata = Strata.from_frame(df, ["race", "sex"], "x")
    grouped = df.groupby(["race", "sex"])["x"]
    expected = pd.DataFrame(
        {
            "size": grouped.size(),
            "sum": grouped.sum(),
            "sumsq": grouped.apply(lambda s: float((s**2).sum())),
            "mean": grouped.mean(),
        }
    )
    expected.index = [f"{r} × {s}" for r, s in expected.index]
    expected = expected.loc[list(strata.labels)]
    assert strata.k == len(expected) == 8
    assert strata.n == len(df)
    np.testing.assert_array_equal(strata.sizes, expected["size"].to_numpy())
    np.testing.assert_allclose(strata.sums, expected["sum"].to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(strata.sumsq, expected["sumsq"].to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(strata.means, expected["mean"].to_numpy(), rtol=1e-12)
    assert strata.global_mean == pytest.approx(df["x"].mean(), rel=1e-12)
    assert strata.sizes.dtype == np.int64 and strata.offsets.dtype == np.int64


def test_sorted_values_offsets_and_prefix_layout():
    df = random_frame(500, seed=3)
    strata = Strata.from_frame(df, ["race", "sex"], "x")
    assert strata.offsets[0] == 0 and strata.offsets[-1] == strata.n
    np.testing.assert_array_equal(np.diff(strata.offsets), strata.sizes)
    for g, label in enumerate(strata.labels):
        race, sex = label.split(" × ")
        want = np.sort(df.loc[(df["race"] == race) & (df["sex"] == sex), "x"].to_numpy())
        got = strata.sorted_values[strata.offsets[g] : strata.offsets[g + 1]]
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(strata.group_values(g), want)
    assert strata.prefix[0] == 0.0
    np.testing.assert_allclose(strata.prefix[1:], np.cumsum(strata.sorted_values), rtol=1e-12)


def test_labels_are_the_intersections_present_ordered_by_size_then_label():
    df = pd.DataFrame(
        {
            "a": ["p", "p", "p", "q", "q", "r", "r", "p", "q", "r"],
            "b": ["x", "x", "y", "x", "x", "y", "y", "y", "x", "y"],
            "v": np.arange(10.0),
        }
    )
    strata = Strata.from_frame(df, ["a", "b"], "v", min_group_size=1)
    # sizes: q×x 3, r×y 3, p×x 2, p×y 2 ; r×x and q×y are absent
    assert strata.labels == ("q × x", "r × y", "p × x", "p × y")
    np.testing.assert_array_equal(strata.sizes, [3, 3, 2, 2])
    assert strata.by == ("a", "b") and strata.value == "v"


def test_single_by_column_as_string_and_bool_grouping():
    df = pd.DataFrame({"flag": [True, False, True, True, False], "v": [1.0, 2, 3, 4, 5]})
    strata = Strata.from_frame(df, "flag", "v")
    assert strata.by == ("flag",)
    assert strata.labels == ("True", "False")
    np.testing.assert_array_equal(strata.sums, [8.0, 7.0])


def test_numeric_bucketing_with_edges_values_at_edges_go_up():
    df = pd.DataFrame(
        {
            "age": [5.0, 10.0, 15.0, 20.0, 30.0, -np.inf, np.inf, np.nan, 9.999, 19.0],
            "v": np.arange(10.0),
        }
    )
    strata = Strata.from_frame(df, ["age"], "v", edges={"age": [10, 20]}, min_group_size=1)
    got = dict(zip(strata.labels, strata.sizes.tolist(), strict=True))
    # < 10: 5, -inf, 9.999 ; [10, 20): 10, 15, 19 ; ≥ 20: 20, 30, inf ; missing: nan
    assert got == {"< 10": 3, "[10, 20)": 3, "≥ 20": 3, MISSING_LABEL: 1}
    sums = dict(zip(strata.labels, strata.sums.tolist(), strict=True))
    assert sums["[10, 20)"] == 1 + 2 + 9
    assert sums["≥ 20"] == 3 + 4 + 6
    assert strata.edges == {"age": (10.0, 20.0)}


def test_bucket_labels_for_fractional_edges_and_intersection():
    df = pd.DataFrame({"s": [0.1, 0.3, 0.6, 0.2], "sex": ["F", "M", "F", "M"], "v": [1.0] * 4})
    strata = Strata.from_frame(df, ["sex", "s"], "v", edges={"s": [0.25, 0.5]}, min_group_size=1)
    assert set(strata.labels) == {"F × < 0.25", "M × [0.25, 0.5)", "F × ≥ 0.5", "M × < 0.25"}


def test_missing_category_in_text_column():
    df = pd.DataFrame(
        {"g": pd.Series(["a", None, "a", np.nan, "b", "b"], dtype="object"), "v": np.arange(6.0)}
    )
    strata = Strata.from_frame(df, "g", "v")
    assert dict(zip(strata.labels, strata.sizes.tolist(), strict=True)) == {
        MISSING_LABEL: 2,
        "a": 2,
        "b": 2,
    }
    # string dtype with NA as well
    df2 = df.astype({"g": "string"})
    strata2 = Strata.from_frame(df2, "g", "v")
    assert MISSING_LABEL in strata2.labels


def test_nullable_value_and_nonfinite_rows_dropped_and_counted():
    df = pd.DataFrame(
        {
            "g": ["a", "a", "a", "b", "b", "b", "b"],
            "v": [1.0, np.nan, 2.0, np.inf, -np.inf, 3.0, 4.0],
        }
    )
    strata = Strata.from_frame(df, "g", "v")
    assert strata.report.n_input_rows == 7
    assert strata.report.n_dropped_nonfinite == 3
    assert strata.report.n_rows_used == 4
    assert strata.n == 4
    np.testing.assert_array_equal(strata.sums, [3.0, 7.0])
    assert strata.report.messages() == [
        "3 rows with a missing or infinite value in `v` were dropped."
    ]
    df_na = pd.DataFrame({"g": ["a", "a", "a", "b", "b"], "v": pd.array([1, None, 2, 3, 4])})
    strata_na = Strata.from_frame(df_na, "g", "v")
    assert strata_na.report.n_dropped_nonfinite == 1
    assert strata_na.report.messages()[0].startswith("1 row with a missing")


def test_bool_value_counts_as_numeric():
    df = pd.DataFrame({"g": ["a", "a", "b", "b"], "v": [True, False, True, True]})
    strata = Strata.from_frame(df, "g", "v")
    assert strata.labels == ("a", "b")  # equal sizes: ordered by label
    np.testing.assert_array_equal(strata.sums, [1.0, 2.0])


def test_no_messages_when_nothing_dropped():
    strata = Strata.from_frame(random_frame(), ["race", "sex"], "x")
    assert strata.report.messages() == []
    assert strata.report.merged_groups == () and strata.report.dropped_groups == ()


def test_arrays_are_read_only():
    strata = Strata.from_frame(random_frame(200), "race", "x")
    for name in ("sizes", "sums", "sumsq", "sorted_values", "offsets", "prefix"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(strata, name)[0] = 1


# --------------------------------------------------------------------------------------------
# bad inputs
# --------------------------------------------------------------------------------------------


def test_numeric_by_column_without_edges_is_refused():
    with pytest.raises(ValueError, match=r"(?s)'age' is numeric.*never derives.*edges="):
        Strata.from_frame(random_frame(), ["race", "age"], "x")


@pytest.mark.parametrize(
    ("edges", "match"),
    [
        ({"age": [30, 30]}, "strictly increasing"),
        ({"age": [40, 30]}, "strictly increasing"),
        ({"age": [30, np.inf]}, "finite"),
        ({"age": [30, np.nan]}, "finite"),
        ({"age": []}, "non-empty"),
        ({"sex": [1]}, "not numeric"),
        ({"other": [1]}, "not a grouping column"),
    ],
)
def test_bad_edges(edges, match):
    with pytest.raises(ValueError, match=match):
        Strata.from_frame(random_frame(), ["sex", "age"], "x", edges=edges)


def test_non_numeric_value_column_names_column_and_dtype():
    with pytest.raises(ValueError, match=r"`value` column 'sex' must be numeric, got dtype str"):
        Strata.from_frame(random_frame(), "race", "sex")


def test_entirely_missing_value_column():
    df = pd.DataFrame({"g": ["a", "b", "a"], "v": [np.nan, np.nan, np.nan]})
    with pytest.raises(ValueError, match=r"'v' has no usable values: all 3 are missing"):
        Strata.from_frame(df, "g", "v")


def test_unknown_columns_list_the_available_ones():
    with pytest.raises(ValueError, match=r"unknown column\(s\) 'nope'.*available columns: race"):
        Strata.from_frame(random_frame(), ["nope"], "x")
    with pytest.raises(ValueError, match=r"'y'.*available columns"):
        Strata.from_frame(random_frame(), ["race"], "y")


def test_value_in_by_and_repeated_by_are_refused():
    df = random_frame()
    with pytest.raises(ValueError, match="also a grouping column"):
        Strata.from_frame(df, ["race", "x"], "x")
    with pytest.raises(ValueError, match="must not repeat"):
        Strata.from_frame(df, ["race", "race"], "x")
    with pytest.raises(ValueError, match="at least one grouping column"):
        Strata.from_frame(df, [], "x")


def test_empty_frame_is_refused():
    with pytest.raises(ValueError, match="no rows"):
        Strata.from_frame(random_frame().iloc[:0], "race", "x")


def test_wrong_argument_types_and_values():
    df = random_frame(100)
    with pytest.raises(TypeError, match="DataFrame"):
        Strata.from_frame(df.to_dict(), "race", "x")
    with pytest.raises(ValueError, match="small_groups"):
        Strata.from_frame(df, "race", "x", small_groups="keep")
    with pytest.raises(ValueError, match="min_group_size"):
        Strata.from_frame(df, "race", "x", min_group_size=0)


def test_single_group_is_refused():
    df = random_frame(300)
    df["all"] = "everyone"
    with pytest.raises(ValueError, match=r"at least 2 groups; got 1: 'everyone'.*another"):
        Strata.from_frame(df, "all", "x")


def test_single_group_after_merging_is_refused():
    df = frame_from_groups({"big": [1.0] * 10, "s1": [1.0], "s2": [2.0]})
    with pytest.raises(ValueError, match="at least 2 groups; got 1: 'big'"):
        Strata.from_frame(df, "g", "x", min_group_size=3)


def test_more_than_max_groups_is_refused():
    df = random_frame()
    with pytest.raises(ValueError, match=r"8 groups is more than the limit of 3.*fewer or coarser"):
        Strata.from_frame(df, ["race", "sex"], "x", max_groups=3)
    assert Strata.from_frame(df, ["race", "sex"], "x", max_groups=8).k == 8


def test_no_rows_left_when_all_groups_too_small():
    df = frame_from_groups({"a": [1.0], "b": [2.0], "c": [3.0]})
    with pytest.raises(ValueError, match="no rows are left"):
        Strata.from_frame(df, "g", "x", min_group_size=2, small_groups="drop")


# --------------------------------------------------------------------------------------------
# small-group policy
# --------------------------------------------------------------------------------------------


def small_groups_frame() -> pd.DataFrame:
    return frame_from_groups(
        {"A": [1.0] * 6, "B": [2.0] * 5, "c": [10.0, 11.0], "d": [20.0], "e": [30.0]}
    )


def test_merge_policy_collects_small_groups_into_other():
    strata = Strata.from_frame(small_groups_frame(), "g", "x", min_group_size=3)
    assert strata.labels == ("A", "B", OTHER_LABEL)
    np.testing.assert_array_equal(strata.sizes, [6, 5, 4])
    np.testing.assert_allclose(strata.sums[2], 10 + 11 + 20 + 30)
    rep = strata.report
    assert rep.merged_groups == ("c", "d", "e")  # by size, then label
    assert rep.n_rows_merged == 4 and rep.dropped_groups == () and rep.n_rows_dropped_small == 0
    (msg,) = rep.messages()
    assert msg == (
        "3 groups with fewer than 3 rows (4 rows in total) were merged into “Other (merged)”: "
        "“c”, “d”, “e”."
    )


def test_drop_policy_drops_small_groups():
    strata = Strata.from_frame(
        small_groups_frame(), "g", "x", min_group_size=3, small_groups="drop"
    )
    assert strata.labels == ("A", "B")
    assert strata.n == 11
    rep = strata.report
    assert rep.dropped_groups == ("c", "d", "e") and rep.n_rows_dropped_small == 4
    assert rep.merged_groups == () and not rep.merged_group_too_small
    (msg,) = rep.messages()
    assert msg.startswith("3 groups with fewer than 3 rows were dropped (4 rows in total)")


def test_merged_group_still_too_small_is_dropped_and_reported():
    strata = Strata.from_frame(small_groups_frame(), "g", "x", min_group_size=5)
    assert strata.labels == ("A", "B")
    rep = strata.report
    assert rep.merged_group_too_small
    assert rep.merged_groups == () and rep.dropped_groups == ("c", "d", "e")
    assert rep.n_rows_dropped_small == 4
    (msg,) = rep.messages()
    assert "even merged into “Other (merged)”" in msg and "dropped" in msg


def test_default_min_group_size_is_two():
    strata = Strata.from_frame(
        frame_from_groups({"A": [1.0] * 3, "B": [1.0] * 2, "c": [5.0], "d": [6.0]}), "g", "x"
    )
    assert strata.labels == ("A", "B", OTHER_LABEL)
    assert strata.report.merged_groups == ("c", "d")


def test_long_group_lists_are_shortened_in_messages():
    groups = {"A": [1.0] * 30, "B": [1.0] * 30} | {f"s{i:02d}": [1.0] for i in range(15)}
    strata = Strata.from_frame(frame_from_groups(groups), "g", "x")
    (msg,) = strata.report.messages()
    assert "and 5 more" in msg and "“s09”" in msg and "“s10”" not in msg


# --------------------------------------------------------------------------------------------
# clipped sums
# --------------------------------------------------------------------------------------------


def ties_strata() -> Strata:
    return Strata.from_frame(
        frame_from_groups(
            {"a": [1.0, 2.0, 2.0, 2.0, 5.0, 9.0], "b": [-3.0, 0.0, 0.0, 4.0], "c": [7.0, 7.0]}
        ),
        "g",
        "x",
    )


def test_clipped_sums_scalar_bounds():
    strata = ties_strata()  # order: a, b, c
    np.testing.assert_allclose(
        strata.clipped_sums(2.0, 5.0), [2 + 2 + 2 + 2 + 5 + 5, 2 + 2 + 2 + 4, 5 + 5]
    )
    np.testing.assert_allclose(strata.clipped_sums(2.0, 5.0), brute_clipped(strata, 2.0, 5.0))


@pytest.mark.parametrize(
    ("low", "high"),
    [
        (2.0, 2.0),  # low == high at a tied data value
        (0.0, 0.0),
        (7.0, 7.0),
        (-100.0, 100.0),  # outside the data range: plain sums
        (100.0, 200.0),  # everything clipped up
        (-200.0, -100.0),  # everything clipped down
        (-np.inf, np.inf),
        (-np.inf, 2.0),
        (2.0, np.inf),
        (1.0, 9.0),  # bounds equal to min and max of a group
    ],
)
def test_clipped_sums_edge_bounds_match_brute_force(low, high):
    strata = ties_strata()
    np.testing.assert_allclose(
        strata.clipped_sums(low, high), brute_clipped(strata, low, high), rtol=1e-12
    )


def test_clipped_sums_unbounded_equals_sums():
    strata = Strata.from_frame(random_frame(), ["race", "sex"], "x")
    np.testing.assert_allclose(strata.clipped_sums(-np.inf, np.inf), strata.sums, rtol=1e-12)


def test_clipped_sums_replicate_bounds_shape_and_values():
    strata = Strata.from_frame(random_frame(), ["race", "sex"], "x")
    rng = np.random.default_rng(1)
    centre = rng.normal(40, 10, size=(50, strata.k))
    radius = rng.uniform(0, 20, size=(50, strata.k))
    got = strata.clipped_sums(centre - radius, centre + radius)
    assert got.shape == (50, strata.k)
    np.testing.assert_allclose(got, brute_clipped(strata, centre - radius, centre + radius))
    # (R, 1) low with per-group high broadcasts to (R, k)
    low = rng.normal(30, 5, size=(7, 1))
    high = np.full(strata.k, 45.0)
    got = strata.clipped_sums(low, high)
    assert got.shape == (7, strata.k)
    np.testing.assert_allclose(got, brute_clipped(strata, low, high))


def test_clipped_sums_bad_bounds():
    strata = ties_strata()
    with pytest.raises(ValueError, match=r"`low` must be <= `high`.*index \(1,\)"):
        strata.clipped_sums([0.0, 5.0, 0.0], [1.0, 4.0, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        strata.clipped_sums(np.nan, 1.0)
    with pytest.raises(ValueError, match=r"broadcast to shape \(..., k\) with k=3"):
        strata.clipped_sums(np.zeros(4), 1.0)
    with pytest.raises(TypeError, match="`high` must be a number"):
        strata.clipped_sums(0.0, "ten")


group_values = st.lists(
    st.lists(
        st.one_of(
            st.integers(-20, 20).map(lambda i: i / 2),  # many ties
            st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False),
        ),
        min_size=1,
        max_size=25,
    ),
    min_size=2,
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(groups=group_values, data=st.data())
def test_clipped_sums_property_matches_brute_force(groups, data):
    strata = Strata.from_frame(
        frame_from_groups({f"g{i}": vals for i, vals in enumerate(groups)}),
        "g",
        "x",
        min_group_size=1,
    )
    all_values = [v for vals in groups for v in vals]
    bound = st.one_of(
        st.sampled_from(all_values),  # bounds equal to data values
        st.floats(-2e3, 2e3, allow_nan=False),  # includes bounds outside the data range
        st.sampled_from([-np.inf, np.inf]),
    )
    reps = data.draw(st.integers(1, 4))
    a = np.array(data.draw(st.lists(bound, min_size=reps * strata.k, max_size=reps * strata.k)))
    b = np.array(data.draw(st.lists(bound, min_size=reps * strata.k, max_size=reps * strata.k)))
    a, b = a.reshape(reps, strata.k), b.reshape(reps, strata.k)
    equal = np.array(data.draw(st.lists(st.booleans(), min_size=a.size, max_size=a.size)))
    b = np.where(equal.reshape(a.shape), a, b)  # low == high in places
    low, high = np.minimum(a, b), np.maximum(a, b)
    got = strata.clipped_sums(low, high)
    want = brute_clipped(strata, low, high)
    assert got.shape == (reps, strata.k)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-7)


# --------------------------------------------------------------------------------------------
# subset and direct construction
# --------------------------------------------------------------------------------------------


def test_subset_keeps_groups_and_statistics():
    strata = Strata.from_frame(random_frame(), ["race", "sex"], "x")
    sub = strata.subset(np.array([0, 3, 5]))
    assert sub.labels == tuple(strata.labels[i] for i in (0, 3, 5))
    np.testing.assert_array_equal(sub.sizes, strata.sizes[[0, 3, 5]])
    np.testing.assert_array_equal(sub.group_values(1), strata.group_values(3))
    np.testing.assert_allclose(sub.clipped_sums(30, 50), strata.clipped_sums(30, 50)[[0, 3, 5]])
    mask = np.zeros(strata.k, dtype=bool)
    mask[[1, 2]] = True
    assert strata.subset(mask).labels == strata.labels[1:3]
    with pytest.raises(ValueError, match="at least one group"):
        strata.subset(np.zeros(strata.k, dtype=bool))


def test_direct_construction_is_validated():
    report = StrataReport(n_input_rows=3)
    with pytest.raises(ValueError, match="sorted ascending"):
        Strata(
            by=("g",),
            value="x",
            labels=("a", "b"),
            sizes=[2, 1],
            sums=[3.0, 1.0],
            sumsq=[5.0, 1.0],
            sorted_values=[2.0, 1.0, 1.0],
            offsets=[0, 2, 3],
            prefix=[0.0, 2.0, 3.0, 4.0],
            report=report,
        )
    ok = Strata(
        by=("g",),
        value="x",
        labels=("a", "b"),
        sizes=[2, 1],
        sums=[3.0, 1.0],
        sumsq=[5.0, 1.0],
        sorted_values=[1.0, 2.0, 1.0],
        offsets=[0, 2, 3],
        prefix=[0.0, 1.0, 3.0, 4.0],
        report=report,
    )
    np.testing.assert_allclose(ok.clipped_sums(1.5, 1.5), [3.0, 1.5])


# --------------------------------------------------------------------------------------------
# public shares
# --------------------------------------------------------------------------------------------


def test_shares_from_counts():
    strata = Strata.from_frame(random_frame(), ["race", "sex"], "x")
    shares = shares_from_counts(strata)
    assert shares.source == "data"
    assert "treated as public" in shares.description
    assert shares.labels == strata.labels
    assert math.isclose(shares.values.sum(), 1.0)
    np.testing.assert_allclose(shares.values, strata.sizes / strata.n)


def simple_strata() -> Strata:
    return Strata.from_frame(
        frame_from_groups({"A": [1.0] * 5, "B": [2.0] * 3, "C": [3.0] * 2}), "g", "x"
    )


@pytest.mark.parametrize(
    "table",
    [
        {"A": 0.5, "B": 0.3, "C": 0.2},
        pd.Series({"C": 0.2, "A": 0.5, "B": 0.3}),
        pd.DataFrame({"group": ["B", "C", "A"], "share": [0.3, 0.2, 0.5]}),
    ],
)
def test_shares_from_table_forms(table):
    shares = shares_from_table(simple_strata(), table)
    assert shares.source == "table"
    np.testing.assert_allclose(shares.values, [0.5, 0.3, 0.2])
    assert shares.description == "User-supplied table of public shares"


def test_shares_from_table_normalises_and_says_so():
    shares = shares_from_table(simple_strata(), {"A": 50, "B": 30, "C": 40})
    np.testing.assert_allclose(shares.values, [50 / 120, 30 / 120, 40 / 120])
    assert "rescaled from a total of 120" in shares.description


@pytest.mark.parametrize(
    ("table", "match"),
    [
        ({"A": 0.5, "B": 0.5}, r"missing shares for 1 group: “C”"),
        ({"A": 0.5}, r"missing shares for 2 groups: “B”, “C”"),
        ({"A": 0.5, "B": -0.1, "C": 0.6}, r"negative.*“B”"),
        ({"A": np.nan, "B": 0.5, "C": 0.5}, r"negative, missing.*“A”"),
        ({"A": np.inf, "B": 0.5, "C": np.inf}, r"infinite.*“A”, “C”"),
        ({"A": 0, "B": 0, "C": 0}, "all zero"),
        ({"A": 0.4, "B": 0.3, "C": 0.2, "Z": 0.1, "Y": 0.0}, r"not among the groups: “Z”, “Y”"),
        (pd.DataFrame({"group": ["A", "A"], "share": [0.5, 0.5]}), "more than once: “A”"),
        (pd.DataFrame({"grp": ["A"], "share": [1.0]}), "columns 'group' and 'share'"),
    ],
)
def test_shares_from_table_bad_tables(table, match):
    with pytest.raises(ValueError, match=match):
        shares_from_table(simple_strata(), table)


def test_shares_from_table_merged_and_dropped_groups():
    merged = Strata.from_frame(small_groups_frame(), "g", "x", min_group_size=3)
    # the merged group's members add up to "Other (merged)"
    shares = shares_from_table(merged, {"A": 0.4, "B": 0.4, "c": 0.1, "d": 0.05, "e": 0.05})
    np.testing.assert_allclose(shares.values, [0.4, 0.4, 0.2])
    direct = shares_from_table(merged, {"A": 0.4, "B": 0.4, OTHER_LABEL: 0.2})
    np.testing.assert_allclose(direct.values, shares.values)
    with pytest.raises(ValueError, match="missing “e”"):
        shares_from_table(merged, {"A": 0.4, "B": 0.4, "c": 0.1, "d": 0.1})
    with pytest.raises(ValueError, match="one or the other"):
        shares_from_table(merged, {"A": 0.4, "B": 0.4, OTHER_LABEL: 0.1, "c": 0.1})
    dropped = Strata.from_frame(
        small_groups_frame(), "g", "x", min_group_size=3, small_groups="drop"
    )
    shares = shares_from_table(dropped, {"A": 0.4, "B": 0.4, "c": 0.2})
    np.testing.assert_allclose(shares.values, [0.5, 0.5])
    assert "1 dropped small group ignored" in shares.description


def test_public_shares_validation():
    with pytest.raises(ValueError, match="sum to 1"):
        PublicShares(values=np.array([0.5, 0.6]), source="data", description="")
    with pytest.raises(ValueError, match=">= 0"):
        PublicShares(values=np.array([1.5, -0.5]), source="data", description="")
    with pytest.raises(ValueError, match="source"):
        PublicShares(values=np.array([1.0]), source="census", description="")


# --------------------------------------------------------------------------------------------
# holdout
# --------------------------------------------------------------------------------------------


def test_split_holdout_disjoint_complete_and_fraction():
    df = random_frame(10_000, seed=5)
    private, public = split_holdout(df, 0.1, rng=42)
    assert set(private.index).isdisjoint(public.index)
    assert len(private) + len(public) == len(df)
    assert sorted([*private.index, *public.index]) == list(df.index)
    n, p = len(df), 0.1
    assert abs(len(public) - n * p) <= 3 * math.sqrt(n * p * (1 - p))
    # rows are unchanged
    pd.testing.assert_frame_equal(public, df.loc[public.index])


def test_split_holdout_is_reproducible_by_seed():
    df = random_frame(1000)
    a_priv, a_pub = split_holdout(df, 0.25, rng=7)
    b_priv, b_pub = split_holdout(df, 0.25, rng=np.random.default_rng(7))
    c_priv, c_pub = split_holdout(df, 0.25, rng=8)
    assert list(a_pub.index) == list(b_pub.index)
    assert list(a_priv.index) == list(b_priv.index)
    assert list(a_pub.index) != list(c_pub.index)


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.1, 1.5])
def test_split_holdout_bad_fraction(fraction):
    with pytest.raises(ValueError, match="`fraction`"):
        split_holdout(random_frame(100), fraction, rng=0)


def test_split_holdout_refuses_an_empty_part():
    with pytest.raises(ValueError, match="leaves one part empty"):
        split_holdout(random_frame(5), 0.05, rng=0)


def test_shares_from_holdout_uses_the_same_grouping_rules():
    df = random_frame(4000, seed=11)
    df.loc[::50, "race"] = None  # some missing categories
    private, public = split_holdout(df, 0.3, rng=3)
    edges = {"age": [30, 50]}
    strata = Strata.from_frame(private, ["race", "age"], "x", edges=edges)
    assert any(MISSING_LABEL in lab for lab in strata.labels)
    shares = shares_from_holdout(strata, public)
    assert shares.source == "holdout" and shares.labels == strata.labels
    assert "Public holdout: 30% of rows" in shares.description
    bucket = pd.cut(
        public["age"], [-np.inf, 30, 50, np.inf], right=False, labels=["< 30", "[30, 50)", "≥ 50"]
    )
    race = public["race"].fillna(MISSING_LABEL)
    counts = (race + " × " + bucket.astype(str)).value_counts()
    want = np.array([counts.get(lab, 0) for lab in strata.labels], dtype=float)
    np.testing.assert_allclose(shares.values, want / want.sum())


def test_shares_from_holdout_absent_groups_merged_and_unknown_rows():
    private = small_groups_frame()  # A 6, B 5, c 2, d 1, e 1
    strata = Strata.from_frame(private, "g", "x", min_group_size=3)  # A, B, Other(c, d, e)
    public = frame_from_groups({"A": [1.0] * 3, "c": [1.0], "zzz": [1.0] * 2, "d": [np.nan]})
    shares = shares_from_holdout(strata, public)
    # B absent -> 0; c and the unseen zzz count toward Other; the NaN-valued d row is not counted
    np.testing.assert_allclose(shares.values, [3 / 6, 0.0, 3 / 6])
    assert "1 group absent from the holdout get share 0" in shares.description

    dropped = Strata.from_frame(private, "g", "x", min_group_size=3, small_groups="drop")
    shares = shares_from_holdout(dropped, public)  # no Other: c and zzz are ignored
    np.testing.assert_allclose(shares.values, [1.0, 0.0])


def test_shares_from_holdout_errors():
    strata = simple_strata()
    with pytest.raises(ValueError, match="lacks the grouping column"):
        shares_from_holdout(strata, pd.DataFrame({"h": ["A"], "x": [1.0]}))
    with pytest.raises(ValueError, match="none of the holdout rows"):
        shares_from_holdout(strata, frame_from_groups({"Q": [1.0, 2.0]}))
    with pytest.raises(ValueError, match="no rows"):
        shares_from_holdout(strata, frame_from_groups({"A": [1.0]}).iloc[:0])


# --------------------------------------------------------------------------------------------
# demo data
# --------------------------------------------------------------------------------------------


def test_demo_data_race_by_sex():
    datasets = pytest.importorskip("dpcore.datasets")
    try:
        df = datasets.load_demo()
    except (FileNotFoundError, ValueError) as exc:  # asset being (re)built elsewhere
        pytest.skip(f"demo data unavailable: {exc}")
    strata = Strata.from_frame(
        df, ["race", "sex", "age"], "hours_per_week", edges={"age": [25, 45, 65]}
    )
    assert strata.n + strata.report.n_rows_dropped_small == len(df)
    expected = df.groupby(["race", "sex"])["hours_per_week"].size()
    two_way = Strata.from_frame(df, ["race", "sex"], "hours_per_week")
    got = dict(zip(two_way.labels, two_way.sizes.tolist(), strict=True))
    assert got == {f"{r} × {s}": int(v) for (r, s), v in expected.items()}


def test_strata_and_shares_survive_pickling():
    """st.cache_data pickles cached values."""
    import pickle

    strata = Strata.from_frame(random_frame(), ["race", "age"], "x", edges={"age": [40]})
    copy = pickle.loads(pickle.dumps(strata))
    assert copy.labels == strata.labels and copy.edges == {"age": (40.0,)}
    np.testing.assert_array_equal(copy.clipped_sums(30, 50), strata.clipped_sums(30, 50))
    shares = pickle.loads(pickle.dumps(shares_from_counts(strata)))
    np.testing.assert_array_equal(shares.values, strata.sizes / strata.n)
