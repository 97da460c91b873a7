"""The mean's sufficient statistics (GroupValues): each group's values sorted with prefix sums,
missing values left out within their group, and clipped sums in O(log n) per group."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.analyses.mean.statistics import GroupValues
from dpcore.foundations.grouping import Grouping, GroupingSpec
from tests.frames import frame_from_groups, random_frame, small_groups_frame


def brute_clipped(values: GroupValues, low, high) -> np.ndarray:
    shape = np.broadcast_shapes(np.shape(low), np.shape(high), (values.k,))
    lo = np.broadcast_to(np.asarray(low, dtype=float), shape)
    hi = np.broadcast_to(np.asarray(high, dtype=float), shape)
    out = np.empty(shape)
    for g in range(values.k):
        vals = values.sorted_values[values.offsets[g] : values.offsets[g + 1]]
        out[..., g] = np.clip(vals, lo[..., g, None], hi[..., g, None]).sum(axis=-1)
    return out


def test_statistics_match_pandas_groupby():
    df = random_frame()
    values = GroupValues.from_frame(df, ["race", "sex"], "x")
    grouped = df.groupby(["race", "sex"])["x"]
    expected = pd.DataFrame(
        {
            "size": grouped.size(),
            "mean": grouped.mean(),
        }
    )
    expected.index = [f"{r} × {s}" for r, s in expected.index]
    expected = expected.loc[list(values.labels)]
    assert values.k == len(expected) == 8
    assert values.n == len(df)
    np.testing.assert_array_equal(values.sizes, expected["size"].to_numpy())
    np.testing.assert_allclose(values.means, expected["mean"].to_numpy(), rtol=1e-12)
    assert values.global_mean == pytest.approx(df["x"].mean(), rel=1e-12)
    assert values.sizes.dtype == np.int64 and values.offsets.dtype == np.int64


def test_sorted_values_and_offsets_layout():
    df = random_frame(500, seed=3)
    values = GroupValues.from_frame(df, ["race", "sex"], "x")
    assert values.offsets[0] == 0 and values.offsets[-1] == values.n
    np.testing.assert_array_equal(np.diff(values.offsets), values.sizes)
    for g, label in enumerate(values.labels):
        race, sex = label.split(" × ")
        want = np.sort(df.loc[(df["race"] == race) & (df["sex"] == sex), "x"].to_numpy())
        got = values.sorted_values[values.offsets[g] : values.offsets[g + 1]]
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(values.group_values(g), want)


def test_bool_value_counts_as_numeric():
    df = pd.DataFrame({"g": ["a", "a", "b", "b"], "v": [True, False, True, True]})
    values = GroupValues.from_frame(df, "g", "v")
    assert values.labels == ("a", "b")  # equal sizes: ordered by label
    np.testing.assert_array_equal(values.means, [0.5, 1.0])


def test_arrays_are_read_only():
    values = GroupValues.from_frame(random_frame(200), "race", "x")
    for name in ("sizes", "sorted_values", "offsets", "means"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(values, name)[0] = 1


def test_non_numeric_value_column_names_column_and_dtype():
    with pytest.raises(ValueError, match=r"`value` column 'sex' must be numeric, got dtype str"):
        GroupValues.from_frame(random_frame(), "race", "sex")


def ties_values() -> GroupValues:
    return GroupValues.from_frame(
        frame_from_groups(
            {"a": [1.0, 2.0, 2.0, 2.0, 5.0, 9.0], "b": [-3.0, 0.0, 0.0, 4.0], "c": [7.0, 7.0]}
        ),
        "g",
        "x",
    )


def test_clipped_sums_scalar_bounds():
    values = ties_values()  # order: a, b, c
    np.testing.assert_allclose(
        values.clipped_sums(2.0, 5.0), [2 + 2 + 2 + 2 + 5 + 5, 2 + 2 + 2 + 4, 5 + 5]
    )
    np.testing.assert_allclose(values.clipped_sums(2.0, 5.0), brute_clipped(values, 2.0, 5.0))


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
    values = ties_values()
    np.testing.assert_allclose(
        values.clipped_sums(low, high), brute_clipped(values, low, high), rtol=1e-12
    )


def test_clipped_sums_unbounded_equals_sums():
    values = GroupValues.from_frame(random_frame(), ["race", "sex"], "x")
    sums = [values.group_values(g).sum() for g in range(values.k)]
    np.testing.assert_allclose(values.clipped_sums(-np.inf, np.inf), sums, rtol=1e-12)


def test_clipped_sums_replicate_bounds_shape_and_values():
    values = GroupValues.from_frame(random_frame(), ["race", "sex"], "x")
    rng = np.random.default_rng(1)
    centre = rng.normal(40, 10, size=(50, values.k))
    radius = rng.uniform(0, 20, size=(50, values.k))
    got = values.clipped_sums(centre - radius, centre + radius)
    assert got.shape == (50, values.k)
    np.testing.assert_allclose(got, brute_clipped(values, centre - radius, centre + radius))
    # (R, 1) low with per-group high broadcasts to (R, k)
    low = rng.normal(30, 5, size=(7, 1))
    high = np.full(values.k, 45.0)
    got = values.clipped_sums(low, high)
    assert got.shape == (7, values.k)
    np.testing.assert_allclose(got, brute_clipped(values, low, high))


def test_clipped_sums_bad_bounds():
    values = ties_values()
    with pytest.raises(ValueError, match=r"`low` must be <= `high`.*index \(1,\)"):
        values.clipped_sums([0.0, 5.0, 0.0], [1.0, 4.0, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        values.clipped_sums(np.nan, 1.0)
    with pytest.raises(ValueError, match=r"broadcast to shape \(..., k\) with k=3"):
        values.clipped_sums(np.zeros(4), 1.0)
    with pytest.raises(TypeError, match="`high` must be a number"):
        values.clipped_sums(0.0, "ten")


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
    values = GroupValues.from_frame(
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
    a = np.array(data.draw(st.lists(bound, min_size=reps * values.k, max_size=reps * values.k)))
    b = np.array(data.draw(st.lists(bound, min_size=reps * values.k, max_size=reps * values.k)))
    a, b = a.reshape(reps, values.k), b.reshape(reps, values.k)
    equal = np.array(data.draw(st.lists(st.booleans(), min_size=a.size, max_size=a.size)))
    b = np.where(equal.reshape(a.shape), a, b)  # low == high in places
    low, high = np.minimum(a, b), np.maximum(a, b)
    got = values.clipped_sums(low, high)
    want = brute_clipped(values, low, high)
    assert got.shape == (reps, values.k)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-7)


def values_of(groups: list[list[float]]) -> GroupValues:
    """GroupValues straight from each group's values (no frame), in the given group order."""
    sizes = [len(vals) for vals in groups]
    return GroupValues(
        value="x",
        labels=tuple(f"g{i}" for i in range(len(groups))),
        sizes=sizes,
        sorted_values=np.concatenate([np.sort(vals) for vals in groups]),
        offsets=np.concatenate([[0], np.cumsum(sizes)]),
    )


# Groups of very different sizes (1 to 300 values), so that the search over all groups at once
# runs many halving passes during which the small groups have long been settled.
uneven_groups = st.lists(
    st.one_of(
        st.lists(st.integers(-8, 8), min_size=1, max_size=3),
        st.lists(st.integers(-8, 8), min_size=50, max_size=300),
    ),
    min_size=1,
    max_size=8,
)
whole_bound = st.one_of(
    st.integers(-10, 10).map(float),  # on the data's values (ties) and beyond them
    st.integers(-19, 19).map(lambda i: i / 2),  # between them
    st.sampled_from([-np.inf, np.inf]),
)


@settings(max_examples=150, deadline=None)
@given(groups=uneven_groups, shape=st.sampled_from(["k", "R,k", "R,1"]), data=st.data())
def test_clipped_sums_are_exact_per_group_clip_sums(groups, shape, data):
    """Small integers and half-integers sum exactly in floats, so the per-group
    ``np.clip(values, a, b).sum()`` must be matched exactly: a value counted on the wrong side
    of a bound, or in the wrong group, changes the result. Bounds come as (k,), (R, k) and (R, 1)
    arrays, infinite ones included."""
    values = values_of([[float(v) for v in vals] for vals in groups])
    bounds_shape = {"k": (values.k,), "R,k": (3, values.k), "R,1": (4, 1)}[shape]
    size = int(np.prod(bounds_shape))
    a = np.array(data.draw(st.lists(whole_bound, min_size=size, max_size=size)))
    b = np.array(data.draw(st.lists(whole_bound, min_size=size, max_size=size)))
    low, high = np.minimum(a, b).reshape(bounds_shape), np.maximum(a, b).reshape(bounds_shape)
    got = values.clipped_sums(low, high)
    want = brute_clipped(values, low, high)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


huge = st.sampled_from([-1.7e308, -9e307, 9e307, 1.7e308])


@settings(max_examples=100, deadline=None)
@given(
    groups=st.lists(
        st.lists(st.one_of(huge, st.floats(-100, 100)), min_size=1, max_size=40),
        min_size=1,
        max_size=5,
    ),
    data=st.data(),
)
def test_clipped_sums_stay_finite_beside_values_near_the_largest_float(groups, data):
    """Values near ±1.8e308 outside finite bounds are clipped like any other: the sums stay
    finite and equal the per-group ``np.clip`` sums (two values near −9e307 once made them
    NaN)."""
    values = values_of(groups)
    bound = st.floats(-1e3, 1e3)
    pairs = data.draw(st.lists(st.tuples(bound, bound), min_size=2 * values.k,
                               max_size=2 * values.k))  # fmt: skip
    low = np.array([min(p) for p in pairs]).reshape(2, values.k)
    high = np.array([max(p) for p in pairs]).reshape(2, values.k)
    got = values.clipped_sums(low, high)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, brute_clipped(values, low, high), rtol=1e-9, atol=1e-9)


def test_subset_keeps_groups_and_statistics():
    values = GroupValues.from_frame(random_frame(), ["race", "sex"], "x")
    sub = values.subset(np.array([0, 3, 5]))
    assert sub.labels == tuple(values.labels[i] for i in (0, 3, 5))
    np.testing.assert_array_equal(sub.sizes, values.sizes[[0, 3, 5]])
    np.testing.assert_array_equal(sub.group_values(1), values.group_values(3))
    np.testing.assert_allclose(sub.clipped_sums(30, 50), values.clipped_sums(30, 50)[[0, 3, 5]])
    mask = np.zeros(values.k, dtype=bool)
    mask[[1, 2]] = True
    assert values.subset(mask).labels == values.labels[1:3]
    with pytest.raises(ValueError, match="at least one group"):
        values.subset(np.zeros(values.k, dtype=bool))


def test_missing_values_are_left_out_within_their_group_and_counted():
    df = pd.DataFrame(
        {
            "g": ["a", "a", "a", "b", "b", "b", "b"],
            "v": [1.0, np.nan, 2.0, np.inf, -np.inf, 3.0, 4.0],
        }
    )
    values = GroupValues.from_frame(df, "g", "v")
    assert values.labels == ("b", "a")  # the grouping's order: b has 4 rows, a 3
    np.testing.assert_array_equal(values.sizes, [2, 2])
    np.testing.assert_array_equal(values.means, [3.5, 1.5])
    assert values.n == 4 and values.n_missing == 3
    assert values.messages() == ["3 rows with a missing or infinite value in `v` were left out."]
    # the shares are the grouping's (rows of the group), not the counts of usable values
    np.testing.assert_allclose(values.shares.values, [4 / 7, 3 / 7])
    df_na = pd.DataFrame({"g": ["a", "a", "a", "b", "b"], "v": pd.array([1, None, 2, 3, 4])})
    values_na = GroupValues.from_frame(df_na, "g", "v")
    assert values_na.n_missing == 1
    assert values_na.messages()[0].startswith("1 row with a missing")


def test_a_group_without_any_usable_value_is_left_out_with_its_share():
    df = frame_from_groups({"A": [1.0] * 6, "B": [np.nan] * 5, "C": [3.0] * 4})
    values = GroupValues.from_frame(df, "g", "x")
    assert values.labels == ("A", "C") and values.empty_groups == ("B",)
    np.testing.assert_allclose(values.shares.values, [6 / 10, 4 / 10])
    assert values.shares.labels == ("A", "C")
    assert "left out" in values.shares.description
    assert values.messages()[-1] == "1 group has no usable value in `x` and is not estimated: “B”."


def test_values_follow_the_grouping_merges_and_leave_the_holdout_out():
    df = small_groups_frame().assign(x=lambda f: f["x"].where(f.index != 12))  # one d is NaN
    spec = GroupingSpec(by=("g",), min_group_size=3)
    values = GroupValues.from_grouping(spec.build(df), df, "x")
    assert values.labels == ("A", "B", "Other (merged)")
    np.testing.assert_array_equal(values.sizes, [6, 5, 3])  # the merges come from every row
    holdout = GroupingSpec(by=("race",), share_source="holdout", holdout_fraction=0.25)
    frame = random_frame(800)
    grouping = holdout.build(frame)
    values = GroupValues.from_grouping(grouping, frame, "x")
    assert values.n == grouping.n == int(grouping.private.sum())


def test_no_messages_when_nothing_is_left_out():
    values = GroupValues.from_frame(random_frame(), ["race", "sex"], "x")
    assert values.messages() == [] and values.n_missing == 0 and values.empty_groups == ()


def test_entirely_missing_value_column():
    df = pd.DataFrame({"g": ["a", "b", "a", "b"], "v": [np.nan] * 4})
    with pytest.raises(ValueError, match=r"'v' has no usable values: all 4 rows of the groups"):
        GroupValues.from_frame(df, "g", "v")


def test_unknown_or_grouping_value_column_is_refused():
    df = random_frame()
    with pytest.raises(ValueError, match=r"'y'.*available columns"):
        GroupValues.from_frame(df, ["race"], "y")
    with pytest.raises(ValueError, match="also a grouping column"):
        GroupValues.from_frame(df, ["race", "sex"], "sex")
    grouping = Grouping.from_frame(df, "race")
    with pytest.raises(ValueError, match="built from a frame of"):
        GroupValues.from_grouping(grouping, df.iloc[:5], "x")


def test_direct_construction_is_validated():
    with pytest.raises(ValueError, match="sorted ascending"):
        GroupValues(
            value="x",
            labels=("a", "b"),
            sizes=[2, 1],
            sorted_values=[2.0, 1.0, 1.0],
            offsets=[0, 2, 3],
        )
    ok = GroupValues(
        value="x",
        labels=("a", "b"),
        sizes=[2, 1],
        sorted_values=[1.0, 2.0, 1.0],
        offsets=[0, 2, 3],
    )
    np.testing.assert_allclose(ok.clipped_sums(1.5, 1.5), [3.0, 1.5])


def test_values_survive_pickling():
    """st.cache_data pickles cached values."""
    values = GroupValues.from_frame(random_frame(), ["race", "age"], "x", edges={"age": [40]})
    copy = pickle.loads(pickle.dumps(values))
    assert copy.labels == values.labels and copy.by == ("race", "age")
    np.testing.assert_array_equal(copy.clipped_sums(30, 50), values.clipped_sums(30, 50))
    np.testing.assert_array_equal(copy.shares.values, values.shares.values)


# ---- values near the largest float (issue 15, item 4) -----------------------------------------


def test_values_near_the_largest_float_leave_clipped_sums_and_means_finite():
    """Two finite values near −9e307 in a group: their plain sum overflows to −inf, and prefix
    sums over them made every clipped sum NaN (so a release could never be committed)."""
    df = pd.DataFrame({
        "g": ["a"] * 5 + ["b"] * 3,
        "x": [-9e307, -9e307, 5.0, 50.0, 1e308, 1.0, 2.0, 3.0],
    })  # fmt: skip
    values = GroupValues.from_frame(df, "g", "x")
    np.testing.assert_array_equal(values.clipped_sums(0.0, 100.0), [155.0, 6.0])
    np.testing.assert_array_equal(values.clipped_sums(-10.0, 10.0), [5.0, 6.0])
    np.testing.assert_array_equal(values.clipped_sums(10.0, 20.0), [70.0, 30.0])
    assert np.all(np.isfinite(values.means)) and np.isfinite(values.global_mean)
    assert values.means[0] == pytest.approx(-9e307 / 5 * 2 + 1e308 / 5 + 11.0, rel=1e-12)


def test_small_values_are_not_lost_beside_huge_ones_outside_the_bounds():
    """Prefix sums that started at the smallest value lost 1 + 2 + 3 to cancellation against
    −1e20 (the difference of two sums of size 1e20 is only exact to about 1e4)."""
    values = GroupValues.from_values([-1e20, 1.0, 2.0, 3.0, 1e20])
    assert values.clipped_sums(0.0, 10.0)[0] == 16.0
    assert values.clipped_sums(-1.0, 2.5)[0] == 7.0


@pytest.mark.parametrize("seed", range(3))
def test_clipped_sums_match_clipping_each_value_for_mixed_signs(seed):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"g": rng.integers(0, 4, 300).astype(str), "x": rng.normal(0, 50, 300)})
    values = GroupValues.from_frame(df, "g", "x")
    low, high = rng.uniform(-80, 0, (10, values.k)), rng.uniform(0, 80, (10, values.k))
    low[0], high[1] = 5.0, -5.0  # bounds entirely above and below zero
    high[0], low[1] = 60.0, -60.0
    for r in range(10):
        for g, label in enumerate(values.labels):
            clipped = df.loc[df["g"] == label, "x"].clip(low[r, g], high[r, g]).sum()
            assert values.clipped_sums(low, high)[r, g] == pytest.approx(clipped, rel=1e-12)
