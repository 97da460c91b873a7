"""Grouping: the rules that split rows into groups, the small-group policy and the recipe
(GroupingSpec) — independent of any value column."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

from dpcore.foundations.grouping import (
    DROPPED_CODE,
    HOLDOUT_CODE,
    MISSING_LABEL,
    OTHER_LABEL,
    Grouping,
    GroupingSpec,
    codebook_categories,
    codebook_order,
    is_category_codes,
    needs_edges,
)
from dpcore.foundations.shares import HOLDOUT_SEED, holdout_mask
from tests.frames import frame_from_groups, random_frame, small_groups_frame


def sizes_of(grouping: Grouping) -> dict[str, int]:
    return dict(zip(grouping.labels, grouping.sizes.tolist(), strict=True))


# --------------------------------------------------------------------------------------------
# labels, codes and sizes
# --------------------------------------------------------------------------------------------


def test_codes_and_sizes_match_pandas_groupby():
    df = random_frame()
    grouping = Grouping.from_frame(df, ["race", "sex"])
    expected = df.groupby(["race", "sex"]).size()
    assert sizes_of(grouping) == {f"{r} × {s}": int(v) for (r, s), v in expected.items()}
    assert grouping.k == 8 and grouping.n == len(df) and grouping.codes.shape == (len(df),)
    for g, label in enumerate(grouping.labels):
        race, sex = label.split(" × ")
        rows = (df["race"] == race) & (df["sex"] == sex)
        np.testing.assert_array_equal(grouping.codes == g, rows.to_numpy())
    assert grouping.sizes.dtype == np.int64 and grouping.codes.dtype == np.int64


def test_labels_are_the_intersections_present_ordered_by_size_then_label():
    df = pd.DataFrame(
        {
            "a": ["p", "p", "p", "q", "q", "r", "r", "p", "q", "r"],
            "b": ["x", "x", "y", "x", "x", "y", "y", "y", "x", "y"],
        }
    )
    grouping = Grouping.from_frame(df, ["a", "b"], min_group_size=1)
    # sizes: q×x 3, r×y 3, p×x 2, p×y 2 ; r×x and q×y are absent
    assert grouping.labels == ("q × x", "r × y", "p × x", "p × y")
    np.testing.assert_array_equal(grouping.sizes, [3, 3, 2, 2])
    assert grouping.by == ("a", "b")


def test_single_by_column_as_string_and_bool_grouping():
    df = pd.DataFrame({"flag": [True, False, True, True, False]})
    grouping = Grouping.from_frame(df, "flag")
    assert grouping.by == ("flag",)
    assert grouping.labels == ("True", "False")
    np.testing.assert_array_equal(grouping.codes, [0, 1, 0, 0, 1])


def test_numeric_bucketing_with_edges_values_at_edges_go_up():
    df = pd.DataFrame({"age": [5.0, 10.0, 15.0, 20.0, 30.0, -np.inf, np.inf, np.nan, 9.999, 19.0]})
    grouping = Grouping.from_frame(df, ["age"], edges={"age": [10, 20]}, min_group_size=1)
    # < 10: 5, -inf, 9.999 ; [10, 20): 10, 15, 19 ; ≥ 20: 20, 30, inf ; missing: nan
    assert sizes_of(grouping) == {"< 10": 3, "[10, 20)": 3, "≥ 20": 3, MISSING_LABEL: 1}
    index = {label: g for g, label in enumerate(grouping.labels)}
    assert [grouping.labels[c] for c in grouping.codes[[1, 3, 7]]] == [
        "[10, 20)", "≥ 20", MISSING_LABEL,
    ]  # fmt: skip
    assert index["[10, 20)"] == grouping.codes[9]
    assert grouping.edges == {"age": (10.0, 20.0)}


def test_bucket_labels_for_fractional_edges_and_intersection():
    df = pd.DataFrame({"s": [0.1, 0.3, 0.6, 0.2], "sex": ["F", "M", "F", "M"]})
    grouping = Grouping.from_frame(df, ["sex", "s"], edges={"s": [0.25, 0.5]}, min_group_size=1)
    assert set(grouping.labels) == {"F × < 0.25", "M × [0.25, 0.5)", "F × ≥ 0.5", "M × < 0.25"}


def test_missing_category_in_text_column():
    df = pd.DataFrame({"g": pd.Series(["a", None, "a", np.nan, "b", "b"], dtype="object")})
    assert sizes_of(Grouping.from_frame(df, "g")) == {MISSING_LABEL: 2, "a": 2, "b": 2}
    # string dtype with NA as well
    assert MISSING_LABEL in Grouping.from_frame(df.astype({"g": "string"}), "g").labels


def test_groups_do_not_depend_on_any_value_column():
    """The same rows give the same groups, sizes and merges whatever another column holds:
    a missing value elsewhere never moves a row out of its group."""
    df = small_groups_frame()
    holes = df.assign(x=np.where(np.arange(len(df)) % 3 == 0, np.nan, df["x"]))
    for frame in (df, holes):
        grouping = Grouping.from_frame(frame, "g", min_group_size=3)
        assert grouping.labels == ("A", "B", OTHER_LABEL)
        np.testing.assert_array_equal(grouping.sizes, [6, 5, 4])
        assert grouping.report.merged_groups == ("c", "d", "e")


def test_no_messages_when_nothing_is_merged_or_dropped():
    grouping = Grouping.from_frame(random_frame(), ["race", "sex"])
    assert grouping.report.messages() == []
    assert grouping.report.merged_groups == () and grouping.report.dropped_groups == ()
    assert grouping.report.n_rows_used == grouping.n


def test_arrays_are_read_only():
    grouping = Grouping.from_frame(random_frame(200), "race")
    for name in ("codes", "sizes"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(grouping, name)[0] = 1


def test_shares_default_to_the_counts_treated_as_public():
    grouping = Grouping.from_frame(random_frame(), ["race", "sex"])
    assert grouping.shares.source == "data" and grouping.shares.labels == grouping.labels
    np.testing.assert_allclose(grouping.shares.values, grouping.sizes / grouping.n)


def test_assign_groups_another_frame_by_the_same_rules():
    grouping = Grouping.from_frame(small_groups_frame(), "g", min_group_size=3)
    other = frame_from_groups({"B": [0.0], "d": [0.0], "zzz": [0.0]})
    np.testing.assert_array_equal(grouping.assign(other), [1, 2, DROPPED_CODE])
    # a holdout's unseen group counts toward Other (merged)
    np.testing.assert_array_equal(grouping.assign(other, unseen_to_other=True), [1, 2, 2])
    with pytest.raises(ValueError, match="`df` lacks the grouping column"):
        grouping.assign(pd.DataFrame({"h": ["A"]}))


def test_codes_are_checked_against_the_frame():
    df = random_frame(300)
    grouping = Grouping.from_frame(df, "race")
    assert grouping.codes_for(df) is grouping.codes
    with pytest.raises(ValueError, match="built from a frame of 300 rows"):
        grouping.codes_for(df.iloc[:10])


# --------------------------------------------------------------------------------------------
# bad inputs
# --------------------------------------------------------------------------------------------


def test_numeric_by_column_without_edges_is_refused():
    message = r"(?s)'age' holds numbers.*more than 20 distinct.*never derives.*edges=.*0/1"
    with pytest.raises(ValueError, match=message):
        Grouping.from_frame(random_frame(), ["race", "age"])


def test_whole_number_codes_and_bools_group_by_their_values_without_edges():
    frame = random_frame(400)
    n = len(frame)
    frame["flag"] = np.arange(n) % 2  # int64 0/1
    frame["scale"] = pd.Series(np.arange(n) % 20 + 1, dtype="Int64")  # 1–20, nullable
    frame.loc[0, "scale"] = pd.NA
    frame["member"] = np.arange(n) % 3 == 0
    grouping = Grouping.from_frame(frame, ["flag"])
    assert sorted(grouping.labels) == ["0", "1"] and grouping.n == n
    assert len(Grouping.from_frame(frame, ["scale"], min_group_size=1).labels) == 21
    assert MISSING_LABEL in Grouping.from_frame(frame, ["scale"], min_group_size=1).labels
    assert sorted(Grouping.from_frame(frame, ["member"]).labels) == ["False", "True"]
    # A declared list of codes works as for text; edges still bucket a code column.
    declared = GroupingSpec(
        by=("flag",), categories=(("flag", ("0", "1", "2")),), small_groups="keep"
    ).build(frame)
    assert declared.labels == ("0", "1", "2") and declared.sizes[2] == 0
    bucketed = Grouping.from_frame(frame, ["scale"], edges={"scale": [10]}, min_group_size=1)
    assert set(bucketed.labels) == {"< 10", "≥ 10", MISSING_LABEL}


def test_whole_numbers_written_as_decimals_are_codes_labelled_as_integers():
    """A 0/1 column exported as 0.0/1.0, or an integer column that a gap turned into floats,
    groups without edges; its labels are the integers ("1", not "1.0")."""
    frame = random_frame(400)
    frame["flag"] = (np.arange(400) % 2).astype(float)
    frame["grade"] = np.where(np.arange(400) % 50 == 0, np.nan, np.arange(400) % 12 + 1.0)
    assert is_category_codes(frame["flag"]) and is_category_codes(frame["grade"])
    assert sorted(Grouping.from_frame(frame, ["flag"]).labels) == ["0", "1"]
    grades = Grouping.from_frame(frame, ["grade"], min_group_size=1).labels
    assert sorted(grades, key=codebook_order) == [*map(str, range(1, 13)), MISSING_LABEL]
    # Declared codes match the integer labels.
    declared = GroupingSpec(
        by=("flag",), categories=(("flag", ("0", "1")),), small_groups="keep"
    ).build(frame)
    assert declared.sizes.tolist() == [200, 200]


def test_codebook_order_sorts_numbers_by_value_then_text_then_missing():
    labels = ["10", "b", MISSING_LABEL, "2", "-1.5", "A", "1"]
    assert sorted(labels, key=codebook_order) == ["-1.5", "1", "2", "10", "A", "b", MISSING_LABEL]


@pytest.mark.parametrize(
    "column",
    [np.arange(400) % 21, (np.arange(400) % 2) / 2, np.where(np.arange(400) % 2, np.inf, 0.0)],
    ids=["21 whole numbers", "0 and 0.5", "0 and infinity"],
)
def test_numbers_other_than_few_whole_codes_still_need_edges(column):
    frame = random_frame(400).assign(code=column)
    assert needs_edges(frame["code"]) and not is_category_codes(frame["code"])
    with pytest.raises(ValueError, match="pass public bucket edges"):
        Grouping.from_frame(frame, ["code"])


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
        Grouping.from_frame(random_frame(), ["sex", "age"], edges=edges)


def test_unknown_columns_list_the_available_ones():
    with pytest.raises(ValueError, match=r"unknown column\(s\) 'nope'.*available columns: race"):
        Grouping.from_frame(random_frame(), ["nope"])


def test_repeated_or_no_by_columns_are_refused():
    df = random_frame()
    with pytest.raises(ValueError, match="must not repeat"):
        Grouping.from_frame(df, ["race", "race"])
    with pytest.raises(ValueError, match="at least one grouping column"):
        Grouping.from_frame(df, [])


def test_empty_frame_is_refused():
    with pytest.raises(ValueError, match="no rows"):
        Grouping.from_frame(random_frame().iloc[:0], "race")


def test_wrong_argument_types_and_values():
    df = random_frame(100)
    with pytest.raises(TypeError, match="DataFrame"):
        Grouping.from_frame(df.to_dict(), "race")
    with pytest.raises(ValueError, match="small_groups"):
        Grouping.from_frame(df, "race", small_groups="merge all")
    with pytest.raises(ValueError, match="min_group_size"):
        Grouping.from_frame(df, "race", min_group_size=0)


def test_single_group_is_refused():
    df = random_frame(300)
    df["all"] = "everyone"
    with pytest.raises(ValueError, match=r"at least 2 groups; got 1: 'everyone'.*another"):
        Grouping.from_frame(df, "all")


def test_single_group_after_merging_is_refused():
    df = frame_from_groups({"big": [1.0] * 10, "s1": [1.0], "s2": [2.0]})
    with pytest.raises(ValueError, match="at least 2 groups; got 1: 'big'"):
        Grouping.from_frame(df, "g", min_group_size=3)


def test_more_than_max_groups_is_refused():
    df = random_frame()
    with pytest.raises(ValueError, match=r"8 groups is more than the limit of 3.*fewer or coarser"):
        Grouping.from_frame(df, ["race", "sex"], max_groups=3)
    assert Grouping.from_frame(df, ["race", "sex"], max_groups=8).k == 8


def test_no_rows_left_when_all_groups_too_small():
    df = frame_from_groups({"a": [1.0], "b": [2.0], "c": [3.0]})
    with pytest.raises(ValueError, match="no rows are left"):
        Grouping.from_frame(df, "g", min_group_size=2, small_groups="drop")


# --------------------------------------------------------------------------------------------
# small-group policy
# --------------------------------------------------------------------------------------------


def test_merge_policy_collects_small_groups_into_other():
    grouping = Grouping.from_frame(small_groups_frame(), "g", min_group_size=3)
    assert grouping.labels == ("A", "B", OTHER_LABEL)
    np.testing.assert_array_equal(grouping.sizes, [6, 5, 4])
    np.testing.assert_array_equal(np.flatnonzero(grouping.codes == 2), [11, 12, 13, 14])
    rep = grouping.report
    assert rep.merged_groups == ("c", "d", "e")  # by size, then label
    assert rep.n_rows_merged == 4 and rep.dropped_groups == () and rep.n_rows_dropped_small == 0
    (msg,) = rep.messages()
    assert msg == (
        "3 groups with fewer than 3 rows (4 rows in total) were merged into “Other (merged)”: "
        "“c”, “d”, “e”."
    )


def test_drop_policy_drops_small_groups():
    grouping = Grouping.from_frame(small_groups_frame(), "g", min_group_size=3, small_groups="drop")
    assert grouping.labels == ("A", "B")
    assert grouping.n == 11 and int(np.sum(grouping.codes == DROPPED_CODE)) == 4
    rep = grouping.report
    assert rep.dropped_groups == ("c", "d", "e") and rep.n_rows_dropped_small == 4
    assert rep.merged_groups == () and not rep.merged_group_too_small
    assert rep.n_rows_used == 11
    (msg,) = rep.messages()
    assert msg.startswith("3 groups with fewer than 3 rows were dropped (4 rows in total)")


def test_merged_group_still_too_small_is_dropped_and_reported():
    grouping = Grouping.from_frame(small_groups_frame(), "g", min_group_size=5)
    assert grouping.labels == ("A", "B")
    rep = grouping.report
    assert rep.merged_group_too_small
    assert rep.merged_groups == () and rep.dropped_groups == ("c", "d", "e")
    assert rep.n_rows_dropped_small == 4
    (msg,) = rep.messages()
    assert "even merged into “Other (merged)”" in msg and "dropped" in msg


def test_default_min_group_size_is_two():
    grouping = Grouping.from_frame(
        frame_from_groups({"A": [1.0] * 3, "B": [1.0] * 2, "c": [5.0], "d": [6.0]}), "g"
    )
    assert grouping.labels == ("A", "B", OTHER_LABEL)
    assert grouping.report.merged_groups == ("c", "d")


def test_long_group_lists_are_shortened_in_messages():
    groups = {"A": [1.0] * 30, "B": [1.0] * 30} | {f"s{i:02d}": [1.0] for i in range(15)}
    (msg,) = Grouping.from_frame(frame_from_groups(groups), "g").report.messages()
    assert "and 5 more" in msg and "“s09”" in msg and "“s10”" not in msg


# --------------------------------------------------------------------------------------------
# the recipe
# --------------------------------------------------------------------------------------------


def test_spec_builds_the_same_groups_as_from_frame():
    df = random_frame()
    spec = GroupingSpec(by=("race", "age"), edges=(("age", (40,)),), min_group_size=5)
    grouping = spec.build(df)
    direct = Grouping.from_frame(df, ["race", "age"], {"age": [40]}, min_group_size=5)
    assert grouping.labels == direct.labels
    np.testing.assert_array_equal(grouping.codes, direct.codes)
    assert spec.to_dict()["edges"] == {"age": [40.0]} and "value" not in spec.to_dict()


def test_spec_with_a_holdout_marks_its_rows_and_groups_the_rest():
    df = random_frame(4000, seed=2)
    spec = GroupingSpec(by=("race",), share_source="holdout", holdout_fraction=0.2)
    grouping = spec.build(df)
    public = holdout_mask(len(df), 0.2, rng=HOLDOUT_SEED)
    np.testing.assert_array_equal(grouping.codes == HOLDOUT_CODE, public)
    np.testing.assert_array_equal(grouping.private, ~public)
    assert grouping.n == int((~public).sum()) == grouping.report.n_input_rows
    assert grouping.shares.source == "holdout"
    counts = df.loc[public, "race"].value_counts()
    np.testing.assert_allclose(
        grouping.shares.values, [counts[g] / public.sum() for g in grouping.labels]
    )


def test_spec_with_a_table_of_shares():
    spec = GroupingSpec(
        by=("g",), min_group_size=3, share_source="table",
        share_table=(("A", 40.0), ("B", 40.0), (OTHER_LABEL, 20.0)),
    )  # fmt: skip
    grouping = spec.build(small_groups_frame())
    np.testing.assert_allclose(grouping.shares.values, [0.4, 0.4, 0.2])


def test_spec_validates_its_share_source():
    with pytest.raises(ValueError, match="`share_source` must be"):
        GroupingSpec(by=("g",), share_source="census")
    with pytest.raises(ValueError, match="`holdout_fraction` must be given exactly"):
        GroupingSpec(by=("g",), share_source="holdout")


def test_demo_data_groups_every_row_once():
    from dpcore.foundations.datasets import load_demo

    df = load_demo()
    grouping = Grouping.from_frame(df, ["race", "sex", "age"], edges={"age": [25, 45, 65]})
    assert grouping.n + grouping.report.n_rows_dropped_small == len(df)
    expected = df.groupby(["race", "sex"]).size()
    two_way = Grouping.from_frame(df, ["race", "sex"])
    assert sizes_of(two_way) == {f"{r} × {s}": int(v) for (r, s), v in expected.items()}


def test_grouping_survives_pickling():
    """st.cache_data pickles cached values."""
    grouping = Grouping.from_frame(random_frame(), ["race", "age"], edges={"age": [40]})
    copy = pickle.loads(pickle.dumps(grouping))
    assert copy.labels == grouping.labels and copy.edges == {"age": (40.0,)}
    np.testing.assert_array_equal(copy.codes, grouping.codes)
    np.testing.assert_array_equal(copy.shares.values, grouping.shares.values)


# ---- declared categories: the public domain of the groups ----------------------------------

SMALL = pd.DataFrame(
    {
        "race": ["A", "A", "B", "C", "A", "B"],
        "sex": ["F", "M", "F", "F", "M", "M"],
        "age": [20.0, 30.0, 40.0, 50.0, 60.0, np.nan],
    }
)


def test_declared_groups_are_every_combination_in_declared_order_empty_ones_included():
    grouping = Grouping.from_frame(
        SMALL, ["race", "sex"], small_groups="keep",
        categories={"race": ["B", "A", "D"], "sex": ["M", "F"]},
    )  # fmt: skip
    assert grouping.labels == ("B × M", "B × F", "A × M", "A × F", "D × M", "D × F")
    assert list(grouping.sizes) == [1, 1, 2, 1, 0, 0]
    # The C row is left out: its category is not declared.
    assert list(grouping.codes) == [3, 2, 1, DROPPED_CODE, 2, 0]
    assert grouping.report.n_rows_undeclared == 1
    assert grouping.report.undeclared == (("race", ("C",)),)
    assert grouping.report.n_rows_used == 5
    assert "“C”" in grouping.report.messages()[0]


def test_declared_groups_do_not_depend_on_which_categories_the_rows_have():
    declared = {"race": ["A", "B", "C", "D"], "sex": ["F", "M"]}
    labels = {
        Grouping.from_frame(frame, ["race", "sex"], small_groups="keep", categories=declared).labels
        for frame in (SMALL, SMALL.iloc[:2], SMALL.assign(race="D"))
    }
    assert len(labels) == 1


def test_merge_and_drop_leave_out_declared_groups_with_no_rows_and_say_so():
    grouping = Grouping.from_frame(
        SMALL, ["race", "age"], edges={"age": [35]}, min_group_size=2,
        categories={"race": ["A", "B"], "age": ["< 35", "≥ 35", "(missing)"]},
    )  # fmt: skip
    assert grouping.report.empty_groups == ("A × (missing)", "B × < 35")
    assert grouping.report.merged_groups == ("A × ≥ 35", "B × (missing)", "B × ≥ 35")
    assert grouping.labels == ("A × < 35", OTHER_LABEL)
    assert "2 declared groups have no rows" in grouping.report.messages()[1]


@pytest.mark.parametrize(
    ("categories", "match"),
    [
        ({"race": ["A"]}, "sex has none"),
        ({"race": ["A"], "sex": ["F"], "age": ["x"]}, "'age', which is not a grouping column"),
        ({"race": ["A", "A"], "sex": ["F"]}, "repeat “A”"),
        ({"race": [], "sex": ["F"]}, "at least one category of 'race'"),
        ({"race": "AB", "sex": ["F"]}, "must be a list of texts"),
        ({"race": [str(i) for i in range(100)], "sex": [str(i) for i in range(60)]}, "6,000"),
    ],
)
def test_bad_declarations_are_refused_with_what_to_fix(categories, match):
    with pytest.raises((ValueError, TypeError), match=match):
        Grouping.from_frame(SMALL, ["race", "sex"], categories=categories)


def test_a_bucketed_column_declares_its_buckets():
    with pytest.raises(ValueError, match="not a bucket of 'age'"):
        Grouping.from_frame(
            SMALL, ["race", "age"], edges={"age": [35]},
            categories={"race": ["A", "B"], "age": ["young"]},
        )  # fmt: skip


def test_no_row_with_a_declared_category_is_refused():
    with pytest.raises(ValueError, match="no row has a declared category"):
        Grouping.from_frame(
            SMALL, ["race", "sex"], small_groups="keep",
            categories={"race": ["X", "Y"], "sex": ["F", "M"]},
        )  # fmt: skip


def test_the_spec_declares_categories_only_when_given():
    plain = GroupingSpec(by=("race",))
    declared = GroupingSpec(by=("race",), categories=(("race", ["A", "B"]),), small_groups="keep")
    assert "categories" not in plain.to_dict() and not plain.declared
    assert declared.to_dict()["categories"] == {"race": ["A", "B"]}
    assert declared.build(SMALL).labels == ("A", "B")


def test_a_codebook_table_gives_the_categories_in_its_order():
    codebook = pd.DataFrame({"column": ["sex", "race", "sex"], "category": ["M", "A", "F"]})
    assert codebook_categories(codebook) == {"sex": ("M", "F"), "race": ("A",)}
    with pytest.raises(ValueError, match="no 'category'"):
        codebook_categories(codebook.rename(columns={"category": "value"}))
    with pytest.raises(ValueError, match="row 3 has an empty"):
        codebook_categories(codebook.assign(category=["M", None, "F"]))
