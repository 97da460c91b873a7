"""App tests of the Data and Strata pages: uploads, choices, charts, and every bad input.

Each bad input must show a clear ``st.error`` (or warning) naming the problem, and never an
exception. Uploads go through the real ``st.file_uploader`` path (AppTest can stage files).
"""

import html

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.analyses.mean import MeanSettings
from dpcore.foundations.datasets import DEMO_DATASET_NAME
from strata_ui.constants import SMALL_FILE_MAX_MB
from tests.app.helpers import (
    change_settings,
    edit_table,
    errors,
    go,
    metric,
    settings_of,
    start,
    state_of,
    text,
    upload,
    values,
)
from tests.app.helpers import charts as figures
from tests.frames import BAD_FILES

STRATA = "app_pages/strata.py"
ESTIMATOR = "app_pages/estimator.py"
DEMO_ROWS = f"{32_561:,}"

GOOD_CSV = b"name,group,hours,score\nann,a,40,0.5\nbob,b,35,0.25\ncy,a,50,1\ndee,b,20,0\n"


def strata_page(at: AppTest, *, value: str | None = None, **changes) -> AppTest:
    """Open the Strata page after choosing the mean's ``value`` column (if given) and applying
    ``changes`` to the session's AppState."""
    if value is not None:
        change_settings(at, MeanSettings, value=value)
    state = state_of(at)
    for name, change in changes.items():
        setattr(state, name, change)
    return go(at, STRATA)


def mean_of(at: AppTest) -> MeanSettings:
    return settings_of(at, MeanSettings)


def rows_metric(at: AppTest) -> str:
    return next(m.value for m in at.main.metric if m.label == "Rows")


# ---- Data page ---------------------------------------------------------------------------


def test_an_uploaded_file_is_still_named_in_use_after_another_page_was_opened():
    """The uploader empties when the page is left; it must not look as if the file was lost."""
    at = upload(start(), GOOD_CSV, "mine.csv")
    go(go(at, "strata"), "data")
    assert at.main.file_uploader[0].value is None
    assert "Using “mine.csv”, uploaded earlier in this session" in text(at.main.success)
    assert rows_metric(at) == "4"


def test_data_page_offers_numeric_value_columns_with_the_demo_default():
    at = start()
    value, person = at.main.selectbox  # the value, then who is one person
    assert value.value == "hours_per_week" and person.value is None
    assert "race" not in value.options and "age" in value.options
    assert any("Only numeric columns" in c.value for c in at.main.caption)
    assert any("not differentially private" in c.value for c in at.main.caption)
    assert at.main.file_uploader and not at.main.error


def test_choosing_a_value_column_is_stored():
    at = start()
    at.main.selectbox[0].select("age").run()
    assert mean_of(at).value == "age"


def test_good_upload_replaces_the_demo():
    at = upload(start(), GOOD_CSV)
    assert "mine.csv" in text(at.main.success)
    assert rows_metric(at) == "4"
    assert [h.value for h in at.main.subheader if h.value == "mine.csv"]
    value = at.main.selectbox[0]
    assert value.options == ["hours", "score"]
    assert value.value is None
    state = state_of(at)
    assert state.dataset_name == "mine.csv" and state.strata_columns == []
    assert len(state.dataset_fingerprint) == 16
    # A rerun with the same file keeps the user's choice.
    at.main.selectbox[0].select("hours").run()
    at.run()
    assert mean_of(at).value == "hours"


# The uploader itself refuses file types other than the ones it lists, before the page runs.
UPLOADABLE_BAD_FILES = [case for case, (_, name, _) in BAD_FILES.items() if ".xlsx" not in name]


@pytest.mark.parametrize("case", UPLOADABLE_BAD_FILES, ids=str)
def test_bad_upload_shows_an_error_and_keeps_the_demo(case):
    data, name, words = BAD_FILES[case]
    at = upload(start(), data, name)
    assert words in errors(at)
    assert "Still using the demo data" in errors(at)
    assert rows_metric(at) == DEMO_ROWS
    assert state_of(at).dataset_name == DEMO_DATASET_NAME


def test_bad_upload_after_a_good_one_keeps_the_good_one():
    at = upload(start(), GOOD_CSV)
    at.main.selectbox[0].select("hours").run()
    upload(at, b"a,b\n", "bad.csv")
    assert "no data rows" in errors(at) and "Still using “mine.csv”" in errors(at)
    assert rows_metric(at) == "4"
    assert mean_of(at).value == "hours"


def test_use_the_demo_data_again():
    at = upload(start(), GOOD_CSV)
    (button,) = [b for b in at.main.button if b.key not in ("data.open", "data.spark_connect")]
    assert button.label == "Use the demo data again"
    button.click().run()
    assert not at.exception
    assert rows_metric(at) == DEMO_ROWS
    state = state_of(at)
    assert state.uploaded is None and state.dataset_fingerprint == "demo"
    assert state.strata_columns == ["race", "sex"]
    assert mean_of(at) == MeanSettings()  # hours per week in 0–100
    # the uploader was emptied, so there is nothing to undo
    assert [b.key for b in at.main.button] == ["data.open", "data.spark_connect"]


def test_table_without_numeric_columns_says_so():
    at = upload(start(), b"a,b\nx,y\nz,w\n")
    assert "no numeric column" in errors(at)
    assert [box.label for box in at.main.selectbox] == ["Column that identifies a person"]


# ---- Strata page: the demo -----------------------------------------------------------------


def test_strata_page_shows_group_sizes_and_figure_1_for_the_demo():
    at = strata_page(start())
    assert not at.main.error
    assert at.main.multiselect[0].value == ["race", "sex"]
    sizes, fig1 = figures(at)

    assert "10 groups" in sizes["layout"]["title"]["text"]
    assert sizes["layout"]["yaxis"]["type"] == "log"
    assert sizes["layout"]["yaxis"]["title"]["text"] == "rows (log scale)"
    big, small = sizes["data"]
    assert big["x"][0] == "White × Male"
    assert "Other × Female" in small["x"] and "Small groups" in small["name"]

    assert fig1["layout"]["xaxis"]["type"] == "log"
    assert "How uneven the group sizes are, α" in fig1["layout"]["xaxis"]["title"]["text"]
    assert "Extra noise from stratifying" in fig1["layout"]["yaxis"]["title"]["text"]
    # The paper's formulas are in the hover, not in the names the user reads.
    assert "Prop. 8" in fig1["data"][0]["hovertemplate"]
    assert "n = 32,561" in fig1["layout"]["title"]["text"]
    marker = fig1["data"][-1]
    assert marker["name"].startswith("This dataset")
    assert values(marker["y"])[0] == pytest.approx(65.836, abs=1e-2)
    alpha = next(m.value for m in at.main.metric if "How uneven" in m.label)
    assert float(alpha) == pytest.approx(values(marker["x"])[0], rel=1e-2)
    assert any("small α" in m.value for m in at.main.markdown)
    assert any("Figure 1" in c.value for c in at.main.caption)
    # Private by default: the shares are the release's own noisy counts.
    assert "The release's own noisy group counts" in text(at.main.success)


def test_small_group_policy_is_stated_and_applied():
    """The exact-size rule, which applies once the data's own counts are declared public."""
    at = strata_page(start(), share_source="data")
    at.main.number_input[0].set_value(150).run()
    assert any("merged into “Other (merged)”" in i.value for i in at.main.info)
    assert any("Policy: groups with fewer than 150 rows are merged" in c.value for c in at.caption)
    at.radio(key="strata.small_groups").set_value("drop").run()
    assert not at.exception
    assert state_of(at).small_groups == "drop"
    assert any("dropped" in i.value for i in at.main.info)


def test_holdout_shares():
    at = strata_page(start())
    at.radio(key="strata.share_source").set_value("holdout").run()
    assert not at.exception and not at.main.error
    assert at.main.slider[0].value == pytest.approx(0.1)
    assert any("holdout" in s.value.lower() for s in at.main.success)


def test_share_table_is_prefilled_and_accepted():
    shares = {"a": 3, "b": 1}
    at = upload(start(), GOOD_CSV)
    at = strata_page(
        at, value="hours", strata_columns=["group"], share_source="table",
        share_table=shares,
    )  # fmt: skip
    assert not at.main.error, errors(at)
    assert any("rescaled from a total of 4" in s.value for s in at.main.success)


@pytest.mark.parametrize(
    ("table", "words"),
    [({"a": 0.5}, "no share for 1 group"), ({"a": 0.5, "b": -0.1}, "negative")],
    ids=["missing group", "negative share"],
)
def test_bad_share_table_shows_an_error(table, words):
    at = upload(start(), GOOD_CSV)
    at = strata_page(
        at, value="hours", strata_columns=["group"], share_source="table",
        share_table=table,
    )  # fmt: skip
    assert words in errors(at)
    assert len(at.get("plotly_chart")) == 2  # the groups are still shown


def test_choosing_a_shares_table_is_a_starting_state_with_a_hint_on_every_page():
    """Issue 14: choosing a table of shares, still empty, is no error until the user types."""
    at = strata_page(start())
    for source in ("table", "data", "table"):
        at.radio(key="strata.share_source").set_value(source).run()
        assert not at.main.error, errors(at)
    assert "No public shares entered yet" in text(at.main.info)
    for page in ("compare", "release", "strata"):
        go(at, page)
        assert not at.main.error, (page, errors(at))
        assert "No public shares entered yet" in text(at.main.info), page
    at = strata_page(at, share_table={"White × Male": 0.6})  # the user has acted
    assert "no share for 9 groups" in errors(at)


def shares_page() -> AppTest:
    at = upload(start(), GOOD_CSV)
    return strata_page(at, value="hours", strata_columns=["group"], share_source="table")


def load_shares(at: AppTest, data: bytes, name: str = "shares.csv") -> AppTest:
    [shares_file] = [
        u for u in at.main.file_uploader if u.proto.label.startswith("Fill the table from a CSV")
    ]
    shares_file.set_value((name, data, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_shares_uploaded_edited_and_uploaded_again_each_take_effect():
    at = load_shares(shares_page(), b"group,share\na,30\nb,10\n")
    assert state_of(at).share_table == {"a": 30.0, "b": 10.0}
    assert "Filled 2 shares from shares.csv" in text(at.main.success)
    assert "rescaled from a total of 40" in text(at.main.success) and not at.main.error
    edit_table(at, f"share_table_{hash(('a', 'b'))}", {"1": {"share": 20.0}})
    assert state_of(at).share_table == {"a": 30.0, "b": 20.0}
    at.run()
    assert state_of(at).share_table == {"a": 30.0, "b": 20.0}  # the edit sticks
    load_shares(at, b"group,share\nb,0.75\na,0.25\n", "census.csv")
    assert state_of(at).share_table == {"a": 0.25, "b": 0.75}  # the new file wins over the edit
    assert "Shares in use: User-supplied table of public shares." in text(at.main.success)
    at.run()
    assert state_of(at).share_table == {"a": 0.25, "b": 0.75}


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"group,share\na,1\nmars,2\n", "row 3: “mars” is not one of the groups"),
        (b"group,share\na,1\na,2\n", "row 3: “a” is listed again (first on row 2)"),
        (b"group,share\na,1\nb,12%\n", "row 3: the share “12%” is not a number"),
        (b"group,share\na,-1\nb,2\n", "row 2: the share -1 is not a number of at least 0"),
        (b"team,share\na,1\n", "needs the columns “group” and “share”"),
        (b"group,share\n" + b"a,1\n" * 300_000, "has 1,200,012 bytes; a shares file is one"),
    ],
    ids=["unknown group", "duplicate", "not a number", "negative", "no group column", "too large"],
)
def test_a_bad_shares_file_names_the_row_and_changes_nothing(data, words):
    at = load_shares(shares_page(), b"group,share\na,3\nb,1\n", "good.csv")
    load_shares(at, data, "bad.csv")
    assert "The shares file bad.csv could not be used" in errors(at)
    assert words in errors(at)
    assert state_of(at).share_table == {"a": 3.0, "b": 1.0}


def test_the_small_files_uploaders_say_their_limit_to_the_browser():
    """The browser refuses a larger file before sending it, with the limit on the widget."""
    at = upload(start(), GOOD_CSV)
    strata_page(  # a declared list of groups shows the codebook's uploader too
        at, value="hours", strata_columns=["group"], share_source="table", group_list="declared"
    )
    limits = {
        u.proto.label.split(" (")[0]: u.proto.max_upload_size_mb for u in at.main.file_uploader
    }
    assert limits == {
        "Load the lists from a codebook": SMALL_FILE_MAX_MB,
        "Fill the table from a CSV file": SMALL_FILE_MAX_MB,
    }


def test_groups_missing_from_the_shares_file_are_listed():
    at = load_shares(shares_page(), b"group,share\na,0.6\n")
    assert "The file has no share for 1 group(s): b." in text(at.main.warning)
    assert "no share for 1 group" in errors(at)  # until the user types it in


# ---- Strata page: bad choices ------------------------------------------------------------------


def estimator_page(at: AppTest) -> AppTest:
    return go(at, ESTIMATOR)


def test_non_numeric_value_column_shows_the_dpcore_message_where_the_mean_is_estimated():
    at = strata_page(start(), value="race", strata_columns=["sex"])
    # The groups never depend on the value column: the Strata page draws them anyway.
    assert errors(at) == "" and at.get("plotly_chart")
    assert "must be numeric" in errors(estimator_page(at))


def test_entirely_missing_value_column():
    at = upload(start(), b"group,hours,empty\na,1,\nb,2,\na,3,\nb,4,\n")
    at = strata_page(at, value="empty", strata_columns=["group"])
    # The groups count the rows with a value to estimate, and no row has one: both pages say so.
    assert "no row has a usable number in `empty`" in errors(at)
    assert "no row has a usable number in `empty`" in errors(estimator_page(at))


def test_no_value_column_chosen():
    at = upload(start(), GOOD_CSV)
    at = strata_page(at, strata_columns=["group"])
    assert errors(at) == ""
    page = estimator_page(at)
    # A normal starting state: a hint saying what to choose, not an error.
    assert errors(page) == "" and "Choose the value column" in text(page.info)


def test_single_group():
    at = upload(start(), b"group,hours\na,1\na,2\na,3\n")
    at = strata_page(at, value="hours", strata_columns=["group"])
    assert "at least 2 groups" in errors(at)


def test_more_than_5000_groups():
    """Groups read off the data, or a list prefilled from them (the default): either way the
    limit is named."""
    rows = "".join(f"p{i},{h}\n" for i in range(6000) for h in (1, 2))
    at = upload(start(), ("id,hours\n" + rows).encode())
    at = strata_page(at, value="hours", strata_columns=["id"])
    assert "make 6,000 groups, more than the limit of 5,000" in errors(at)
    assert "take the categories found in the data as public" in errors(at)
    at.radio(key="strata.group_list").set_value("data").run()
    assert "6,000 groups is more than the limit of 5,000" in errors(at)


def test_numeric_grouping_column_needs_public_edges():
    at = strata_page(start(), strata_columns=["age"])
    assert any("enter bucket edges" in w.value for w in at.main.warning)
    assert not at.main.error  # a hint until the user acts, not a red error
    assert not at.get("plotly_chart")  # the groups wait for the edges
    (edges,) = at.main.text_input
    edges.set_value("25, thirty, 50").run()
    assert "“thirty” is not a number" in errors(at)
    at.main.text_input[0].set_value("25, 35, 50, 65").run()
    assert not at.exception and not at.main.error
    assert state_of(at).bucket_edges == {"age": [25.0, 35.0, 50.0, 65.0]}
    sizes, _ = figures(at)
    # The chart's labels are HTML-escaped for Plotly, which shows "&lt; 25" as "< 25".
    groups = [html.unescape(g) for trace in sizes["data"] for g in trace["x"]]
    assert sorted(groups) == sorted(["< 25", "[25, 35)", "[35, 50)", "[50, 65)", "≥ 65"])


def test_a_0_1_column_groups_as_it_is_chosen_twice_in_a_row_and_its_list_is_labelled():
    at = strata_page(start(), group_list="data")
    for choice in (["income_over_50k"], ["sex", "income_over_50k"]):
        at.multiselect(key="strata.columns.demo").set_value(choice).run()
        assert not at.exception and not at.main.error, errors(at)
        assert state_of(at).strata_columns == choice
        assert not any("bucket edges" in w.value for w in at.main.warning)
        assert not any(t.key.startswith("strata.edges") for t in at.main.text_input)
        assert "`income_over_50k`: whole numbers with at most 20 values" in text(at.main.caption)
    sizes, _ = figures(at)
    groups = {g for trace in sizes["data"] for g in trace["x"]}
    assert groups == {"Female × 0", "Female × 1", "Male × 0", "Male × 1"}
    # A declared list starts from the data's codes and says it is treated as public.
    at.radio(key="strata.group_list").set_value("declared").run()
    assert categories_of(at, "income_over_50k").value == ["0", "1"]
    assert "Prefilled from the data (sex, income_over_50k)" in text(at.main.caption)


def test_codes_written_as_decimals_group_without_edges_and_list_in_number_order():
    """A 0/1 column exported as 0.0/1.0 and a 1–12 code column with a gap (read as floats)."""
    rows = "".join(f"{i % 2}.0,{'' if i % 40 == 0 else i % 12 + 1},{i % 9}\n" for i in range(480))
    at = upload(start(), ("flag,grade,hours\n" + rows).encode())
    at = strata_page(at, value="hours")
    columns = at.multiselect(key=f"strata.columns.{state_of(at).dataset_fingerprint}")
    for choice in (["flag"], ["grade"]):
        columns.set_value(choice).run()
        assert not at.exception and not at.main.error, errors(at)
        assert not any(t.key.startswith("strata.edges") for t in at.main.text_input)
    at.radio(key="strata.group_list").set_value("declared").run()
    assert categories_of(at, "grade").value == [*map(str, range(1, 13)), "(missing)"]


def test_no_grouping_column_is_a_starting_state_with_a_hint_not_an_error():
    at = strata_page(start(), strata_columns=[])
    assert not at.main.error and not at.exception
    assert "Choose one or more grouping columns above" in text(at.main.info)
    assert not at.get("plotly_chart")


# ---- choices reset by a new dataset stay reset ----------------------------------------------------


AGE_CSV = b"group,age,hours\na,30,40\nb,41,35\na,52,50\nb,23,20\n"


def test_a_new_file_clears_the_value_column_even_if_it_has_the_same_column():
    at = start()
    at.main.selectbox[0].select("age").run()
    assert mean_of(at).value == "age"
    upload(at, AGE_CSV)
    at.run()  # the widget must not write its old choice back
    assert mean_of(at).value is None
    assert at.main.selectbox[0].value is None
    assert (mean_of(at).clip_low, mean_of(at).clip_high) == (None, None)


def test_the_demo_data_again_brings_back_its_value_column_and_bounds():
    at = upload(start(), AGE_CSV)
    at.main.selectbox[0].select("age").run()
    at.main.selectbox[0].select("hours").run()
    at.main.selectbox[0].select("age").run()
    assert mean_of(at).value == "age"
    at.button[[b.label for b in at.button].index("Use the demo data again")].click().run()
    at.run()
    assert mean_of(at) == MeanSettings()
    assert at.main.selectbox[0].value == "hours_per_week"


def test_the_small_group_policy_keeps_the_last_of_several_changes():
    at = strata_page(start())
    for policy in ("drop", "merge", "drop"):
        at.radio(key="strata.small_groups").set_value(policy).run()
        assert state_of(at).small_groups == policy
    at.run()
    assert at.radio(key="strata.small_groups").value == "drop"


def test_every_strata_widget_keeps_the_last_of_several_changes():
    at = strata_page(start())
    for choice in (["race"], ["sex"], ["race", "age"]):
        # Found anew each time: a column's list of categories comes and goes with it.
        at.multiselect(key="strata.columns.demo").set_value(choice).run()
        assert state_of(at).strata_columns == choice
    edges = at.text_input(key="strata.edges.age.demo")
    for typed, expected in (("30, 50", [30.0, 50.0]), ("25, 65", [25.0, 65.0])):
        edges.set_value(typed).run()
        assert state_of(at).bucket_edges == {"age": expected}
    for size in (50, 80, 120):
        at.number_input(key="strata.min_group_size").set_value(size).run()
        assert state_of(at).min_group_size == size
    for source in ("holdout", "data", "holdout"):
        at.radio(key="strata.share_source").set_value(source).run()
        assert state_of(at).share_source == source
    for fraction in (0.2, 0.3):
        at.slider(key="strata.holdout_fraction").set_value(fraction).run()
        assert state_of(at).holdout_fraction == fraction
    at.run()  # a rerun keeps every last choice
    state = state_of(at)
    assert (state.strata_columns, state.bucket_edges) == (["race", "age"], {"age": [25.0, 65.0]})
    assert (state.min_group_size, state.share_source, state.holdout_fraction) == (
        120, "holdout", 0.3,
    )  # fmt: skip


# ---- Strata page: a declared list of groups --------------------------------------------------


def categories_of(at: AppTest, column: str):
    return next(m for m in at.main.multiselect if m.label == f"Categories of {column}")


def test_a_declared_list_is_prefilled_from_the_data_and_each_edit_sticks():
    at = strata_page(start())
    assert metric(at, "Groups") == "10"
    at.radio(key="strata.group_list").set_value("declared").run()
    race = categories_of(at, "race")
    assert race.value == [
        "Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White",
    ]  # fmt: skip
    assert "treated as public" in text(at.main.caption)
    # Two edits in a row: leave out Other, then Black; both stay.
    race.set_value(["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "White"]).run()
    categories_of(at, "race").set_value(["Amer-Indian-Eskimo", "Asian-Pac-Islander", "White"]).run()
    assert not at.exception and not errors(at)
    assert categories_of(at, "race").value == ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "White"]
    assert metric(at, "Groups") == "6"
    assert "with a category that is not declared are left out" in text(at.main.info)
    assert "“Black”, “Other”" in text(at.main.info)
    # Away to another page and back: the list is the same.
    go(at, ESTIMATOR)
    go(at, STRATA)
    assert categories_of(at, "race").value == ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "White"]


def test_a_declared_category_with_no_rows_is_a_group_kept_or_left_out_by_the_policy():
    """With exact sizes deciding small groups (the data's counts declared public)."""
    at = strata_page(start(), share_source="data")
    at.radio(key="strata.group_list").set_value("declared").run()
    sex = categories_of(at, "sex")
    sex.set_value(["Female", "Male", "Another"]).run()
    assert categories_of(at, "sex").value == ["Female", "Male", "Another"]
    assert "5 declared groups have no rows and are not estimated" in text(at.main.info)
    assert metric(at, "Groups") == "10"
    for policy, groups in (("keep", "15"), ("merge", "10"), ("keep", "15")):
        at.radio(key="strata.small_groups").set_value(policy).run()
        assert not at.exception and not errors(at)
        assert metric(at, "Groups") == groups
    assert metric(at, "Smallest group") == "0 rows"
    # Figure 1's k is the 10 groups with rows, said beside the 15 of the Groups box.
    assert "k = 10 groups with rows (5 groups without rows left out)" in text(at.main.markdown)
    assert at.number_input(key="strata.min_group_size").disabled
    # Every page still draws with groups of no rows, and the private-sizes preview estimates them.
    change_settings(at, MeanSettings, n_public=False)
    for page in ("estimator", "budget", "compare", "release"):
        go(at, f"app_pages/{page}.py")
        assert not at.exception, page


def test_an_emptied_list_says_what_to_declare():
    at = strata_page(start())
    at.radio(key="strata.group_list").set_value("declared").run()
    categories_of(at, "sex").set_value([]).run()
    assert "declare at least one category of 'sex'" in errors(at)
    at.radio(key="strata.group_list").set_value("data").run()
    assert not errors(at)
    assert metric(at, "Groups") == "10"


def test_new_bucket_edges_replace_the_declared_buckets_without_an_error():
    at = strata_page(start(), strata_columns=["age", "sex"])
    edges = at.text_input(key=next(t.key for t in at.main.text_input if "edges" in t.label))
    edges.set_value("30, 60").run()
    at.radio(key="strata.group_list").set_value("declared").run()
    assert categories_of(at, "age").value == ["< 30", "[30, 60)", "≥ 60"]
    for typed, buckets in (("25, 45, 65", 4), ("40", 2)):
        edges = at.text_input(key=next(t.key for t in at.main.text_input if "edges" in t.label))
        edges.set_value(typed).run()
        assert not at.exception and not errors(at)
        assert len(categories_of(at, "age").value) == buckets
        assert metric(at, "Groups") == str(2 * buckets)


def test_an_upload_starts_its_groups_from_its_own_data():
    at = strata_page(start())
    at.radio(key="strata.group_list").set_value("declared").run()
    categories_of(at, "sex").set_value(["Female", "Male", "Another"]).run()
    go(at, "app_pages/data.py")
    upload(at, GOOD_CSV)
    state = state_of(at)
    # A declared list again, prefilled from the new file's own categories.
    assert (state.group_list, state.declared_categories, state.codebook_columns) == (
        "declared", {}, [],
    )  # fmt: skip


def test_many_groups_are_warned_about_with_what_they_cost_and_the_warning_goes_with_them():
    at = start("strata")
    # The warning is about the groups found in the data.
    at.radio(key="strata.group_list").set_value("data").run()
    columns = at.multiselect[0]
    many = ["workclass", "education", "marital_status", "occupation", "race", "sex"]
    for chosen, warned in ((many, True), (["race", "sex"], False), (many, True)):
        at.multiselect(key=columns.key).set_value(chosen).run()
        assert not at.exception, [e.value for e in at.exception]
        warning = text(at.main.warning)
        assert ("groups is a lot" in warning) == warned, warning
    groups = at.main.metric[0].value
    assert f"{groups} groups is a lot. Half of them have" in text(at.main.warning)
    assert "fewer than 30" in text(at.main.warning)
