"""App tests of the synthetic-data analysis: Estimator preview, Compare charts, bad inputs, and a
committed synthetic release on the Release page."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.analyses.synth import SynthSettings
from dpcore.foundations.accounting import PureDP
from dpcore.foundations.ledger import Ledger
from dpcore.release import ReleaseRecord, to_csv
from strata_ui.analyses.synth.estimator import PREVIEW_ROWS
from strata_ui.analyses.synth.settings import SynthView
from tests.app import helpers
from tests.app.helpers import (
    change_settings,
    charts,
    commit,
    declare_exact_counts,
    errors,
    go,
    settings_of,
    state_of,
    text,
    titles,
    use_frame,
    values,
)
from tests.frames import pets_frame

DEMO_COLUMNS = [
    "age", "workclass", "education", "marital_status", "hours_per_week", "income_over_50k",
    "race", "sex",
]  # fmt: skip
TIMEOUT_S = 90  # a cold Compare sweep of MWEM on two busy cores


def start() -> AppTest:
    """The Estimator page with "Synthetic data" chosen."""
    return helpers.start_with("synth", timeout_s=TIMEOUT_S)


def settings(at: AppTest) -> SynthSettings:
    return settings_of(at, SynthSettings)


def view(at: AppTest) -> SynthView:
    return settings_of(at, SynthView)


def preview_table(at: AppTest) -> pd.DataFrame:
    [table] = [d.value for d in at.main.dataframe if "sex" in d.value.columns]
    return table


def has_preview(at: AppTest) -> bool:
    return any("sex" in d.value.columns for d in at.main.dataframe)


def chart_titles(at: AppTest) -> list[str]:
    """Titles of the page's charts, "" for an untitled one (the Release page's gauge)."""
    return [c["layout"].get("title", {}).get("text", "") for c in charts(at)]


def downloads(at: AppTest, key: str = "") -> list[str]:
    return [d.proto.label for d in at.get("download_button") if f"-{key}" in d.proto.id]


@pytest.mark.parametrize("method", ["independent", "mwem", "histogram"])
def test_each_synthesizer_previews_labelled_dp_rows_that_cannot_be_downloaded(method):
    at = start()
    at.radio(key="synth.method").set_value(method).run()
    assert not at.exception and not at.main.error, errors(at)
    [label] = [i.value for i in at.info if "synthetic rows" in i.value]
    names = {"independent": "independent marginals", "mwem": "MWEM", "histogram": "full histogram"}
    assert label == (
        f"Differentially private synthetic rows, ε = 1, {names[method]}, one model per group of race × sex; "
        "simulation noise — a preview, not a release."
    )
    table = preview_table(at)
    assert len(table) == PREVIEW_ROWS and list(table.columns) == DEMO_COLUMNS
    assert set(table["age"]) <= {"< 25", "[25, 35)", "[35, 45)", "[45, 55)", "[55, 65)", "≥ 65"}
    assert set(table["income_over_50k"]) <= {"0", "1"}
    page = text(at.caption)
    assert "20 of 10,000 rows, picked at random" in page and "cannot be downloaded" in page
    assert "**Not protected:** the category lists of `workclass`, `education`" in page
    assert "Rows per group come from the release's own noisy group counts" in page
    assert "Privacy budget: ε = 1 from the Budget page." in page
    assert not at.get("download_button")  # a preview spends nothing, so it never leaves


def test_vanilla_preview_and_the_seed_change_the_rows():
    at = start()
    first = preview_table(at)
    at.number_input(key="synth_view.seed").set_value(1).run()
    assert not preview_table(at).equals(first)
    at.radio(key="synth.strategy").set_value("vanilla").run()
    assert "one model for everyone (race × sex modelled as columns)" in text(at.info)
    assert list(preview_table(at).columns) == DEMO_COLUMNS


def test_a_zcdp_budget_runs_at_epsilon_sqrt_two_rho_and_says_so():
    at = start()
    state_of(at).budget_kind, state_of(at).rho = "zcdp", 0.125
    at.run()
    assert "they run at ε = √(2ρ) = 0.5, which costs exactly ρ = 0.125" in text(at.caption)
    assert "ε = 0.5, MWEM" in text(at.info)


@pytest.mark.parametrize("method", ["independent", "mwem", "histogram"])
def test_compare_shows_four_labelled_charts_with_a_summary_each(method):
    at = start()
    at.radio(key="synth.method").set_value(method).run()
    change_settings(at, SynthView, runs=1)
    change_settings(at, SynthSettings, n_rows=3000)
    go(at, "compare")
    assert not at.main.error, errors(at)
    figures = charts(at)
    assert len(figures) == 4
    for figure in figures:
        layout = figure["layout"]
        assert layout["title"]["text"] and layout["xaxis"]["title"]["text"]
        assert layout["yaxis"]["title"]["text"]
    titles = [f["layout"]["title"]["text"] for f in figures]
    assert titles[0] == (
        "3-way error in each group at ε = 1: mean of 1 run, bars from lowest to highest"
    )
    assert titles[2].startswith("Worst-group 3-way error as ε grows")
    assert titles[3].startswith("Parity error as ε grows")
    groups = figures[0]["data"]
    assert [t["name"] for t in groups] == ["One model per group", "One model for everyone"]
    assert len(values(groups[0]["x"])) == 10
    sweep = [t for t in figures[2]["data"] if t["mode"] == "lines+markers"]
    assert [values(t["x"]).tolist() for t in sweep] == [[0.1, 0.3, 1.0, 3.0, 10.0]] * 2
    summaries = [m.value for m in at.main.markdown if "one model per group" in m.value]
    summaries = [s for s in summaries if s.startswith(("At ε", "3-way", "Worst", "Parity"))]
    assert len(summaries) == 4
    assert all("for everyone" in s for s in summaries)
    assert "not themselves differentially private" in text(at.info)
    assert "nothing spent" in text(at.caption)


def test_compare_on_many_groups_draws_the_smallest_and_worst_and_what_a_search_finds():
    at = start()
    at.radio(key="synth.method").set_value("independent").run()
    change_settings(at, SynthView, runs=1)
    change_settings(at, SynthSettings, n_rows=20_000)  # a row for the smallest group's share
    state_of(at).strata_columns = ["race", "sex", "marital_status"]  # 62 groups
    # The groups found in the data, the one of a single row merged by its exact size.
    state_of(at).group_list = "data"
    declare_exact_counts(at)
    go(at, "compare")
    assert not at.main.error, errors(at)
    figure = charts(at)[0]
    assert figure["layout"]["title"]["text"].startswith("3-way error in ")
    assert " of the 62 groups at ε = 1: mean of 1 run" in figure["layout"]["title"]["text"]
    sections = [a["text"] for a in figure["layout"]["annotations"]]
    assert sections == ["The 10 smallest of 62 groups", "The 10 groups with the largest errors"]
    assert sum(len(t["y"]) for t in figure["data"]) <= 2 * 20
    for words, found in (("black widowed", "Black × Female × Widowed"),
                         ("asian male never", "Asian-Pac-Islander × Male × Never-married")):  # fmt: skip
        at.text_input(key="synth_view.group_search").input(words).run()
        assert not at.exception, [e.value for e in at.exception]
        figure = charts(at)[0]
        assert figure["layout"]["annotations"][-1]["text"] == f"Groups matching “{words}”"
        assert found in figure["data"][-1]["y"]


def test_compare_adds_the_current_epsilon_to_the_sweep():
    at = start()
    at.radio(key="synth.method").set_value("independent").run()
    change_settings(at, SynthView, runs=1)
    change_settings(at, SynthSettings, n_rows=2000)
    state_of(at).epsilon = 2.0
    go(at, "compare")
    figures = charts(at)
    assert figures[0]["layout"]["title"]["text"].startswith("3-way error in each group at ε = 2:")
    sweep = [t for t in figures[1]["data"] if t["mode"] == "lines+markers"]
    assert values(sweep[0]["x"]).tolist() == [0.1, 0.3, 1.0, 2.0, 3.0, 10.0]
    assert figures[1]["data"][-1]["name"] == "your ε = 2"


def set_edges(at: AppTest, value: str) -> None:
    at.text_input(key="synth.edges.age").input(value).run()


def set_columns(at: AppTest, columns: list[str]) -> None:
    [widget] = [m for m in at.multiselect if m.label == "Columns to synthesize"]
    widget.set_value(columns).run()


def histogram_of_everything(at: AppTest) -> None:
    at.radio(key="synth.method").set_value("histogram").run()
    at.radio(key="synth.strategy").set_value("vanilla").run()
    set_columns(at, [*DEMO_COLUMNS[:6], "occupation"])


def too_big_rho(at: AppTest) -> None:
    state_of(at).epsilon = 50.0
    at.run()


def merged_groups(at: AppTest) -> None:
    """Small groups merged by their exact sizes (the data's counts declared public)."""
    declare_exact_counts(at)
    state_of(at).min_group_size, state_of(at).small_groups = 200, "merge"
    at.run()


BAD_INPUTS = {
    "missing edges": (lambda at: set_edges(at, ""), "Column `age` is numeric: type public bucket"),
    "domain too large": (
        histogram_of_everything,
        "The full histogram of the vanilla model (strata columns included) has 9,072,000 cells",
    ),
    "too few columns": (
        lambda at: set_columns(at, ["workclass", "education"]),
        "Choose at least 3 columns to synthesize besides the strata columns (race, sex)",
    ),
    "a group with no rows": (  # with shares fixed in advance (the data's, declared public)
        lambda at: declare_exact_counts(at).number_input(key="synth.n_rows").set_value(100).run(),
        "With 100 synthetic rows, 3 group(s) would get no rows",
    ),
    "epsilon out of range": (too_big_rho, "ε = 50 is outside the range this app allows"),
    "merged groups": (merged_groups, "drop small groups instead of merging them"),
}


@pytest.mark.parametrize("case", BAD_INPUTS, ids=list(BAD_INPUTS))
def test_bad_input_shows_what_to_fix_and_no_traceback(case):
    change, message = BAD_INPUTS[case]
    at = start()
    change(at)
    assert not at.exception, [e.value for e in at.exception]
    assert message in errors(at)
    assert not has_preview(at)
    if case == "domain too large":
        assert "Use MWEM (up to 8,000,000 cells)" in errors(at)
    if case == "a group with no rows":
        assert "raise the number of rows to at least 299" in errors(at)
    go(at, "release")
    assert "The release is not ready:" in errors(at)
    assert not any(b.key == "release.commit" for b in at.button)


AGE_EDGES = (25.0, 35.0, 45.0, 55.0, 65.0)


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("25, forty", "Bucket edges for `age`: “forty” is not a number."),
        ("45, 25", "Bucket edges for `age` must increase from left to right, but 25 follows 45."),
    ],
)
def test_edges_that_do_not_parse_keep_the_last_edges_and_the_typed_text(typed, message):
    at = start()
    set_edges(at, typed)
    assert not at.exception, [e.value for e in at.exception]
    assert message in errors(at)
    assert at.text_input(key="synth.edges.age").value == typed  # nothing typed is lost
    assert settings(at).edges_of("age") == AGE_EDGES
    assert has_preview(at)  # drawn with the last valid edges
    at.run()
    assert message in errors(at) and settings(at).edges_of("age") == AGE_EDGES
    set_edges(at, "20; 40, 60")
    assert not at.main.error, errors(at)
    assert settings(at).edges_of("age") == (20.0, 40.0, 60.0)
    assert set(preview_table(at)["age"]) <= {"< 20", "[20, 40)", "[40, 60)", "≥ 60"}


def test_edges_of_a_column_of_categories_are_neither_checked_nor_lost():
    at = start()
    set_edges(at, "25, forty")
    assert "“forty” is not a number" in errors(at)
    at.checkbox(key="synth.categorical.age").check().run()
    assert at.text_input(key="synth.edges.age").disabled
    assert not at.main.error, errors(at)  # a column of categories has no edges to check
    assert settings(at).edges_of("age") == AGE_EDGES and "age" in settings(at).categorical
    assert at.text_input(key="synth.edges.age").value == "25, forty"
    at.checkbox(key="synth.categorical.age").uncheck().run()
    assert "“forty” is not a number" in errors(at)
    assert at.text_input(key="synth.edges.age").value == "25, forty"


ESTIMATOR_WIDGETS = {
    # name: (widget of the page, two values in a row, the stored value)
    "method": (
        lambda at: at.radio(key="synth.method"), ("independent", "histogram"),
        lambda at: settings(at).method,
    ),
    "rounds": (lambda at: at.slider(key="synth.rounds"), (3, 9), lambda at: settings(at).rounds),
    "strategy": (
        lambda at: at.radio(key="synth.strategy"), ("vanilla", "stratified"),
        lambda at: settings(at).strategy,
    ),
    "columns": (
        lambda at: at.multiselect(key="synth.columns.demo.race-sex"),
        (["age", "workclass", "education"], ["workclass", "education", "occupation", "age"]),
        lambda at: list(settings(at).columns),
    ),
    "categorical": (
        lambda at: at.checkbox(key="synth.categorical.hours_per_week"), (True, False),
        lambda at: "hours_per_week" in settings(at).categorical,
    ),
    "edges": (
        lambda at: at.text_input(key="synth.edges.age"), ("20, 40", "30, 50, 70"),
        lambda at: ", ".join(f"{e:g}" for e in settings(at).edges_of("age")),
    ),
    "n_rows": (
        lambda at: at.number_input(key="synth.n_rows"), (5000, 7000),
        lambda at: settings(at).n_rows,
    ),
    "seed": (lambda at: at.number_input(key="synth_view.seed"), (4, 5), lambda at: view(at).seed),
}  # fmt: skip


@pytest.mark.parametrize("name", ESTIMATOR_WIDGETS)
def test_each_estimator_widget_keeps_the_last_of_two_changes(name):
    widget, changes, stored = ESTIMATOR_WIDGETS[name]
    at = start()
    at.radio(key="synth.method").set_value("independent").run()  # fast previews
    if name == "rounds":
        at.radio(key="synth.method").set_value("mwem").run()
    for value in changes:
        widget(at).set_value(value).run()
        at.run()  # a rerun keeps the change
        assert not at.exception, [e.value for e in at.exception]
        assert stored(at) == value and widget(at).value == value
    assert not at.main.error, errors(at)
    go(at, "data")
    go(at, "estimator")  # the widget comes back with the stored value
    assert stored(at) == changes[-1] and widget(at).value == changes[-1]


def test_compare_page_runs_keep_the_last_of_two_changes():
    at = start()
    at.radio(key="synth.method").set_value("independent").run()
    change_settings(at, SynthSettings, n_rows=2000)
    go(at, "compare")
    for runs in (2, 1):
        at.slider(key="synth_view.runs").set_value(runs).run()
        at.run()
        assert not at.main.error, errors(at)
        assert view(at).runs == runs and at.slider(key="synth_view.runs").value == runs
        assert f"{runs} run(s) per ε and strategy" in text(at.caption)
        assert titles(at)[0].startswith(f"3-way error in each group at ε = 1: mean of {runs} run")


def test_compare_refuses_a_histogram_that_only_vanilla_cannot_afford():
    at = start()
    at.radio(key="synth.method").set_value("histogram").run()
    set_columns(at, [*DEMO_COLUMNS[:6], "occupation"])
    assert not at.main.error  # stratified: 907,200 cells per group
    go(at, "compare")
    assert "vanilla model (strata columns included) has 9,072,000 cells" in errors(at)
    assert not at.get("plotly_chart")


def test_cached_category_counts_follow_the_bucket_edges_and_columns():
    at = start()
    at.radio(key="synth.method").set_value("histogram").run()
    set_columns(at, [*DEMO_COLUMNS[:6], "occupation"])
    assert not at.main.error  # 6 age buckets: 907,200 cells per group
    set_edges(at, "20, 25, 30, 35, 45, 55, 65")  # 8 age buckets
    assert "each group's model has 1,209,600 cells" in errors(at)
    set_edges(at, "25, 35, 45, 55, 65")
    assert not at.main.error, errors(at)
    at.radio(key="synth.strategy").set_value("vanilla").run()
    assert "has 9,072,000 cells" in errors(at)
    set_columns(at, [*DEMO_COLUMNS[:5], "occupation"])  # income (2 values) left out
    assert "has 4,536,000 cells" in errors(at)


def upload(at: AppTest) -> pd.DataFrame:
    """Replace the demo with an upload whose categories look like spreadsheet formulas."""
    rng = np.random.default_rng(0)
    frame = pets_frame({"north": 300, "south": 100}, ['=HYPERLINK("http://x")', "+1", "dog"], rng)
    frame["hours"] = rng.uniform(0, 60, len(frame))
    use_frame(at, frame, "evil.csv", ["region"])
    change_settings(at, SynthSettings, columns=None)
    at.number_input(key="synth.n_rows").set_value(500).run()
    assert not at.exception, [e.value for e in at.exception]
    return frame


def test_release_commits_a_synthetic_release_once_and_offers_escaped_downloads():
    at = start()
    upload(at)
    [table] = [d.value for d in at.main.dataframe if "pet" in d.value.columns]
    assert list(table.columns) == ["job", "pet", "car", "region"]
    go(at, "release")
    page = text(at.main.markdown)
    assert "**Statistic:** synthetic data, 500 rows of `job`, `pet`, `car`, `region`" in page
    assert "region — 2 groups, one model each with the rest of the budget" in page
    assert "in proportion to the release's own noisy group counts" in page
    assert "Cost: **ε = 1 (pure DP)**, charged to the ledger as **ρ = 0.5**." in page
    ledger = Ledger.open(None, "default")
    assert ledger.remaining() == {"rho": 2.0}

    commit(at)
    assert "Released and recorded" in text(at.success)
    [entry] = ledger.history()
    assert entry.cost == PureDP(1.0)
    assert ledger.remaining() == {"rho": 1.5}  # exactly ε²/2, once
    record = ReleaseRecord.from_ledger(entry)
    assert record.metadata["plan"]["kind"] == "synth"
    assert "OpenDP" in record.metadata["noise"]
    assert record.metadata["intervals"].startswith("none: synthetic rows carry no intervals")
    rows = record.frame
    assert len(rows) == 500 and list(rows.columns) == ["job", "pet", "car", "region"]
    # Rows per group from the release's noisy counts: about 375 and 125, never exactly read.
    per_region = rows["region"].value_counts().to_dict()
    assert set(per_region) == {"north", "south"} and sum(per_region.values()) == 500
    assert record.metadata["plan"]["rows_per_group"].startswith("rows per group in proportion to")

    # The page shows the rows (DP output) and offers them for download, formulas escaped.
    [shown] = [d.value for d in at.main.dataframe if "pet" in d.value.columns]
    assert len(shown) == 500
    assert "Differentially private synthetic rows" in text(at.main.markdown)
    assert downloads(at, "release.current") == ["CSV", "JSON", "Python script"]
    csv = to_csv(record)
    assert set(rows["pet"]) == {'=HYPERLINK("http://x")', "+1", "dog"}
    assert "=HYPERLINK" not in csv.replace("'=HYPERLINK", "")
    assert '"\'+1"' in csv and ',"+1"' not in csv
    assert "Share of synthetic rows in each category of job" in chart_titles(at)

    at.run()  # a rerun spends nothing
    assert not at.exception
    assert len(ledger.history()) == 1 and ledger.remaining() == {"rho": 1.5}
    assert downloads(at, "release.history.2") == ["CSV", "JSON", "Python script"]

    # The charted column is a view choice: it keeps the last of two changes, and spends nothing.
    column = "synth_view.release_column.release.current"
    for name in ("pet", "car"):
        at.selectbox(key=column).set_value(name).run()
        at.run()
        assert view(at).release_column == name and at.selectbox(key=column).value == name
        assert f"Share of synthetic rows in each category of {name}" in chart_titles(at)
    assert len(ledger.history()) == 1
