"""App tests of the synthetic-data analysis: Estimator preview, Compare charts, bad inputs, and a
committed synthetic release on the Release page."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.accounting import PureDP
from dpcore.ledger import Ledger
from dpcore.release import ReleaseRecord, to_csv
from strata_ui.analyses.synth.widgets import PREVIEW_ROWS, SynthSettings
from strata_ui.state import AppState, settings_key

REPO = Path(__file__).resolve().parents[2]
DEMO_COLUMNS = [
    "age", "workclass", "education", "marital_status", "hours_per_week", "income_over_50k",
    "race", "sex",
]  # fmt: skip


def start() -> AppTest:
    """The Estimator page with "Synthetic data" chosen."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=90)
    at.run()
    go(at, "estimator")
    at.radio(key="estimator.analysis").set_value("synth").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def go(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"app_pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def state(at: AppTest) -> AppState:
    return at.session_state[settings_key(AppState)]


def settings(at: AppTest) -> SynthSettings:
    return at.session_state[settings_key(SynthSettings)]


def text(elements) -> str:
    return " ".join(e.value for e in elements)


def charts(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def values(array: list | dict) -> list:
    """A Plotly JSON array, plain or typed (``{"dtype": ..., "bdata": ...}``), as a list."""
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"]).tolist()
    return list(array)


def preview_table(at: AppTest) -> pd.DataFrame:
    [table] = [d.value for d in at.main.dataframe if "sex" in d.value.columns]
    return table


def downloads(at: AppTest, key: str = "") -> list[str]:
    return [d.proto.label for d in at.get("download_button") if f"-{key}" in d.proto.id]


@pytest.mark.parametrize("method", ["independent", "mwem", "histogram"])
def test_each_synthesizer_previews_labelled_dp_rows_that_cannot_be_downloaded(method):
    at = start()
    at.radio(key="synth.method").set_value(method).run()
    assert not at.exception and not at.main.error, text(at.main.error)
    [label] = [i.value for i in at.info if "synthetic rows" in i.value]
    names = {"independent": "independent marginals", "mwem": "MWEM", "histogram": "full histogram"}
    assert label == (
        f"Differentially private synthetic rows, ε = 1, {names[method]}, stratified by race × sex; "
        "simulation noise — a preview, not a release."
    )
    table = preview_table(at)
    assert len(table) == PREVIEW_ROWS and list(table.columns) == DEMO_COLUMNS
    assert set(table["age"]) <= {"< 25", "[25, 35)", "[35, 45)", "[45, 55)", "[55, 65)", "≥ 65"}
    assert set(table["income_over_50k"]) <= {"0", "1"}
    page = text(at.caption)
    assert "20 of 10,000 rows, picked at random" in page and "cannot be downloaded" in page
    assert "**Not protected:** the category lists of `workclass`, `education`" in page
    assert "group counts of the data, treated as public" in page
    assert "Privacy budget: ε = 1 from the Budget page." in page
    assert not at.get("download_button")  # a preview spends nothing, so it never leaves


def test_vanilla_preview_and_the_seed_change_the_rows():
    at = start()
    first = preview_table(at)
    at.number_input(key="synth.seed").set_value(1).run()
    assert not preview_table(at).equals(first)
    at.radio(key="synth.strategy").set_value("vanilla").run()
    assert "vanilla (one model; race × sex modelled)" in text(at.info)
    assert list(preview_table(at).columns) == DEMO_COLUMNS


def test_a_zcdp_budget_runs_at_epsilon_sqrt_two_rho_and_says_so():
    at = start()
    state(at).budget_kind, state(at).rho = "zcdp", 0.125
    at.run()
    assert "they run at ε = √(2ρ) = 0.5, which costs exactly ρ = 0.125" in text(at.caption)
    assert "ε = 0.5, MWEM" in text(at.info)


@pytest.mark.parametrize("method", ["independent", "mwem", "histogram"])
def test_compare_shows_four_labelled_charts_with_a_summary_each(method):
    at = start()
    at.radio(key="synth.method").set_value(method).run()
    settings(at).runs, settings(at).n_rows = 1, 3000
    go(at, "compare")
    assert not at.main.error, text(at.main.error)
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
    assert [t["name"] for t in groups] == ["Stratified", "Vanilla"]
    assert len(values(groups[0]["x"])) == 10
    sweep = [t for t in figures[2]["data"] if t["mode"] == "lines+markers"]
    assert [values(t["x"]) for t in sweep] == [[0.1, 0.3, 1.0, 3.0, 10.0]] * 2
    summaries = [m.value for m in at.main.markdown if "stratified" in m.value.lower()]
    summaries = [s for s in summaries if s.startswith(("At ε", "3-way", "Worst", "Parity"))]
    assert len(summaries) == 4
    assert all("vanilla" in s for s in summaries)
    assert "not themselves differentially private" in text(at.info)
    assert "nothing spent" in text(at.caption)


def test_compare_adds_the_current_epsilon_to_the_sweep():
    at = start()
    at.radio(key="synth.method").set_value("independent").run()
    settings(at).runs, settings(at).n_rows = 1, 2000
    state(at).epsilon = 2.0
    go(at, "compare")
    figures = charts(at)
    assert figures[0]["layout"]["title"]["text"].startswith("3-way error in each group at ε = 2:")
    sweep = [t for t in figures[1]["data"] if t["mode"] == "lines+markers"]
    assert values(sweep[0]["x"]) == [0.1, 0.3, 1.0, 2.0, 3.0, 10.0]
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
    state(at).epsilon = 50.0
    at.run()


def merged_groups(at: AppTest) -> None:
    state(at).min_group_size, state(at).small_groups = 200, "merge"
    at.run()


BAD_INPUTS = {
    "missing edges": (lambda at: set_edges(at, ""), "Column `age` is numeric: type public bucket"),
    "edges not numbers": (
        lambda at: set_edges(at, "25, forty"),
        "Bucket edges for `age` must be numbers separated by commas, got “25, forty”.",
    ),
    "edges not increasing": (
        lambda at: set_edges(at, "45, 25"),
        "Bucket edges for `age` must increase from left to right",
    ),
    "domain too large": (
        histogram_of_everything,
        "The full histogram of the vanilla model (strata columns included) has 9,072,000 cells",
    ),
    "too few columns": (
        lambda at: set_columns(at, ["workclass", "education"]),
        "Choose at least 3 columns to synthesize besides the strata columns (race, sex)",
    ),
    "a group with no rows": (
        lambda at: at.number_input(key="synth.n_rows").set_value(100).run(),
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
    assert message in text(at.main.error)
    assert not [d for d in at.main.dataframe if "sex" in d.value.columns]  # no preview
    if case == "domain too large":
        assert "Use MWEM (up to 8,000,000 cells)" in text(at.main.error)
    if case == "a group with no rows":
        assert "raise the number of rows to at least 299" in text(at.main.error)
    go(at, "release")
    assert "The release is not ready:" in text(at.main.error)
    assert not any(b.key == "release.commit" for b in at.button)


def test_compare_refuses_a_histogram_that_only_vanilla_cannot_afford():
    at = start()
    at.radio(key="synth.method").set_value("histogram").run()
    set_columns(at, [*DEMO_COLUMNS[:6], "occupation"])
    assert not at.main.error  # stratified: 907,200 cells per group
    go(at, "compare")
    assert "vanilla model (strata columns included) has 9,072,000 cells" in text(at.main.error)
    assert not at.get("plotly_chart")


def test_cached_category_counts_follow_the_bucket_edges_and_columns():
    at = start()
    at.radio(key="synth.method").set_value("histogram").run()
    set_columns(at, [*DEMO_COLUMNS[:6], "occupation"])
    assert not at.main.error  # 6 age buckets: 907,200 cells per group
    set_edges(at, "20, 25, 30, 35, 45, 55, 65")  # 8 age buckets
    assert "each group's model has 1,209,600 cells" in text(at.main.error)
    set_edges(at, "25, 35, 45, 55, 65")
    assert not at.main.error, text(at.main.error)
    at.radio(key="synth.strategy").set_value("vanilla").run()
    assert "has 9,072,000 cells" in text(at.main.error)
    set_columns(at, [*DEMO_COLUMNS[:5], "occupation"])  # income (2 values) left out
    assert "has 4,536,000 cells" in text(at.main.error)


def upload(at: AppTest) -> pd.DataFrame:
    """Replace the demo with an upload whose categories look like spreadsheet formulas."""
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame(
        {
            "region": np.repeat(["north", "south"], [300, 100]),
            "job": rng.choice(["office", "field"], n),
            "pet": rng.choice(['=HYPERLINK("http://x")', "+1", "dog"], n),
            "car": rng.choice(["yes", "no"], n),
            "hours": rng.uniform(0, 60, n),
        }
    )
    app = state(at)
    app.uploaded, app.dataset_name, app.dataset_fingerprint = frame, "evil.csv", "evil"
    app.strata_columns, app.bucket_edges = ["region"], {}
    settings(at).columns = None
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
    assert "region — 2 groups, one model each with the full ε" in page
    assert "Cost: **ε = 1 (pure DP)**, charged to the ledger as **ρ = 0.5**." in page
    ledger = Ledger.open(None, "default")
    assert ledger.remaining() == {"rho": 1.0}

    at.checkbox(key="release.confirm").check().run()
    at.button(key="release.commit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Released and recorded" in text(at.success)
    [entry] = ledger.history()
    assert entry.cost == PureDP(1.0)
    assert ledger.remaining() == {"rho": 0.5}  # exactly ε²/2, once
    record = ReleaseRecord.from_ledger(entry)
    assert record.metadata["plan"]["kind"] == "synth"
    assert "OpenDP" in record.metadata["noise"]
    assert record.metadata["intervals"].startswith("none: synthetic rows carry no intervals")
    rows = record.frame
    assert len(rows) == 500 and list(rows.columns) == ["job", "pet", "car", "region"]
    assert rows["region"].value_counts().to_dict() == {"north": 375, "south": 125}

    # The page shows the rows (DP output) and offers them for download, formulas escaped.
    [shown] = [d.value for d in at.main.dataframe if "pet" in d.value.columns]
    assert len(shown) == 500
    assert "Differentially private synthetic rows" in text(at.main.markdown)
    assert downloads(at, "release.current") == ["CSV", "JSON", "Python script"]
    csv = to_csv(record)
    assert set(rows["pet"]) == {'=HYPERLINK("http://x")', "+1", "dog"}
    assert "=HYPERLINK" not in csv.replace("'=HYPERLINK", "")
    assert '"\'+1"' in csv and ',"+1"' not in csv
    titles = [c["layout"].get("title", {}).get("text", "") for c in charts(at)]
    assert "Share of synthetic rows in each category of job" in titles

    at.run()  # a rerun spends nothing
    assert not at.exception
    assert len(ledger.history()) == 1 and ledger.remaining() == {"rho": 0.5}
    assert downloads(at, "release.history.1") == ["CSV", "JSON", "Python script"]
