"""Public shares: from the data's counts, a user's table or a disjoint public holdout."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest

from dpcore.foundations.grouping import MISSING_LABEL, OTHER_LABEL, Grouping
from dpcore.foundations.shares import (
    PublicShares,
    share_file_rows,
    share_values,
    shares_from_counts,
    shares_from_holdout,
    shares_from_table,
    split_holdout,
)
from tests.frames import frame_from_groups, random_frame, small_groups_frame


def simple_grouping() -> Grouping:
    return Grouping.from_frame(
        frame_from_groups({"A": [1.0] * 5, "B": [2.0] * 3, "C": [3.0] * 2}), "g"
    )


def test_shares_from_counts():
    grouping = Grouping.from_frame(random_frame(), ["race", "sex"])
    shares = shares_from_counts(grouping)
    assert shares.source == "data"
    assert "declared public" in shares.description
    assert shares.labels == grouping.labels
    assert math.isclose(shares.values.sum(), 1.0)
    np.testing.assert_allclose(shares.values, grouping.sizes / grouping.n)


@pytest.mark.parametrize(
    "table",
    [
        {"A": 0.5, "B": 0.3, "C": 0.2},
        pd.Series({"C": 0.2, "A": 0.5, "B": 0.3}),
        pd.DataFrame({"group": ["B", "C", "A"], "share": [0.3, 0.2, 0.5]}),
    ],
)
def test_shares_from_table_forms(table):
    shares = shares_from_table(simple_grouping(), table)
    assert shares.source == "table"
    np.testing.assert_allclose(shares.values, [0.5, 0.3, 0.2])
    assert shares.description == "User-supplied table of public shares"


def test_shares_from_table_normalises_and_says_so():
    shares = shares_from_table(simple_grouping(), {"A": 50, "B": 30, "C": 40})
    np.testing.assert_allclose(shares.values, [50 / 120, 30 / 120, 40 / 120])
    assert "rescaled from a total of 120" in shares.description


@pytest.mark.parametrize(
    ("table", "match"),
    [
        ({"A": 0.5, "B": 0.5}, r"no share for 1 group: “C”"),
        ({"A": 0.5}, r"no share for 2 groups: “B”, “C”"),
        ({"A": 0.5, "B": -0.1, "C": 0.6}, r"negative.*“B”"),
        ({"A": np.nan, "B": 0.5, "C": 0.5}, r"negative, missing.*“A”"),
        ({"A": np.inf, "B": 0.5, "C": np.inf}, r"infinite.*“A”, “C”"),
        ({"A": 0, "B": 0, "C": 0}, "all zero"),
        ({"A": 0.4, "B": 0.3, "C": 0.2, "Z": 0.1, "Y": 0.0}, r"not among the groups: “Z”, “Y”"),
        (pd.DataFrame({"group": ["A", "A"], "share": [0.5, 0.5]}), "more than once: “A”"),
        (
            pd.DataFrame({"grp": ["A"], "share": [1.0]}),
            "`table` as a DataFrame needs the columns “group” and “share”.*no 'group'",
        ),
    ],
)
def test_shares_from_table_bad_tables(table, match):
    with pytest.raises(ValueError, match=match):
        shares_from_table(simple_grouping(), table)


def test_shares_from_table_merged_and_dropped_groups():
    merged = Grouping.from_frame(small_groups_frame(), "g", min_group_size=3)
    # the merged group's members add up to "Other (merged)"
    shares = shares_from_table(merged, {"A": 0.4, "B": 0.4, "c": 0.1, "d": 0.05, "e": 0.05})
    np.testing.assert_allclose(shares.values, [0.4, 0.4, 0.2])
    direct = shares_from_table(merged, {"A": 0.4, "B": 0.4, OTHER_LABEL: 0.2})
    np.testing.assert_allclose(direct.values, shares.values)
    with pytest.raises(ValueError, match="missing “e”"):
        shares_from_table(merged, {"A": 0.4, "B": 0.4, "c": 0.1, "d": 0.1})
    with pytest.raises(ValueError, match="one or the other"):
        shares_from_table(merged, {"A": 0.4, "B": 0.4, OTHER_LABEL: 0.1, "c": 0.1})
    dropped = Grouping.from_frame(small_groups_frame(), "g", min_group_size=3, small_groups="drop")
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


def test_restricted_shares_rescale_and_say_which_groups_are_left_out():
    shares = shares_from_counts(simple_grouping())  # 0.5, 0.3, 0.2
    kept = shares.restricted(np.array([True, False, True]))
    np.testing.assert_allclose(kept.values, [0.5 / 0.7, 0.2 / 0.7])
    assert kept.labels == ("A", "C") and kept.source == "data"
    assert "rescaled over the 2 groups estimated (1 group left out)" in kept.description
    assert shares.restricted(np.ones(3, dtype=bool)) is shares


def test_share_values_checks_the_recombination_weights():
    np.testing.assert_allclose(share_values([0.25, 0.75], 2), [0.25, 0.75])
    with pytest.raises(ValueError, match="one entry per group"):
        share_values([1.0], 2)
    with pytest.raises(ValueError, match="sum to 1"):
        share_values([0.5, 0.6], 2)


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
    grouping = Grouping.from_frame(private, ["race", "age"], edges={"age": [30, 50]})
    assert any(MISSING_LABEL in lab for lab in grouping.labels)
    shares = shares_from_holdout(grouping, public)
    assert shares.source == "holdout" and shares.labels == grouping.labels
    assert "Public holdout: 30% of rows" in shares.description
    bucket = pd.cut(
        public["age"], [-np.inf, 30, 50, np.inf], right=False, labels=["< 30", "[30, 50)", "≥ 50"]
    )
    race = public["race"].fillna(MISSING_LABEL)
    counts = (race + " × " + bucket.astype(str)).value_counts()
    want = np.array([counts.get(lab, 0) for lab in grouping.labels], dtype=float)
    np.testing.assert_allclose(shares.values, want / want.sum())


def test_shares_from_holdout_absent_groups_merged_and_unknown_rows():
    private = small_groups_frame()  # A 6, B 5, c 2, d 1, e 1
    grouping = Grouping.from_frame(private, "g", min_group_size=3)  # A, B, Other(c, d, e)
    public = frame_from_groups({"A": [1.0] * 3, "c": [1.0], "zzz": [1.0] * 2, "d": [np.nan]})
    shares = shares_from_holdout(grouping, public)
    # B absent -> 0; c, d and the unseen zzz count toward Other. A row counts whatever its other
    # columns hold: the groups never depend on a value column.
    np.testing.assert_allclose(shares.values, [3 / 7, 0.0, 4 / 7])
    assert "1 group absent from the holdout get share 0" in shares.description

    dropped = Grouping.from_frame(private, "g", min_group_size=3, small_groups="drop")
    shares = shares_from_holdout(dropped, public)  # no Other: c, d and zzz are ignored
    np.testing.assert_allclose(shares.values, [1.0, 0.0])


def test_shares_from_holdout_errors():
    grouping = simple_grouping()
    with pytest.raises(ValueError, match="`public_df` lacks the grouping column"):
        shares_from_holdout(grouping, pd.DataFrame({"h": ["A"], "x": [1.0]}))
    with pytest.raises(ValueError, match="none of the holdout rows"):
        shares_from_holdout(grouping, frame_from_groups({"Q": [1.0, 2.0]}))
    with pytest.raises(ValueError, match="no rows"):
        shares_from_holdout(grouping, frame_from_groups({"A": [1.0]}).iloc[:0])


# --------------------------------------------------------------------------------------------
# a shares file (group, share)
# --------------------------------------------------------------------------------------------


def shares_file(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)


def test_a_shares_file_gives_its_rows_in_order_with_extra_columns_ignored():
    table = shares_file("group,share,source\nb, 30 ,census\na,70.5,census\n")
    assert share_file_rows(table, ["a", "b", "c"]) == (("b", 30.0), ("a", 70.5))
    assert share_file_rows(table) == (("b", 30.0), ("a", 70.5))  # groups checked later


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name,share\na,1\n", "needs the columns “group” and “share”.*no 'group'"),
        ("group,share\n", "has no rows"),
        ("group,share\na,1\n,2\n", "row 3: the group is empty"),
        ("group,share\na,1\nb,2\na,3\n", "row 4: “a” is listed again \\(first on row 2\\)"),
        ("group,share\na,1\nmars,2\n", "row 3: “mars” is not one of the groups"),
        ("group,share\na,12%\n", "row 2: the share “12%” is not a number"),
        ("group,share\na,-1\n", "row 2: the share -1 is not a number of at least 0"),
        ("group,share\na,\n", "row 2: the share is empty"),
        ("group,share\na,x\nb,-2\n", "2 rows of the shares file.*row 2:.*row 3:"),
    ],
)
def test_a_bad_shares_file_names_each_bad_row_and_the_fix(text, message):
    with pytest.raises(ValueError, match=message):
        share_file_rows(shares_file(text), ["a", "b", "c"])
