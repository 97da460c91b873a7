"""App tests of the Learn page (explainers and presets) and of workshop mode (AppTest layer)."""

import base64
import json

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.analyses.mean import MeanSettings
from dpcore.foundations.ledger import Ledger
from strata_ui import constants
from strata_ui.learn import all_explainers, all_presets
from tests.app.helpers import go, settings_of, start, state_of, text

EXPLAINERS, PRESETS = all_explainers(), all_presets()

WORKSHOP = constants.WORKSHOP_QUERY_KEY
# Per explainer/preset: a widget to move, its new value, and which charts must change.
MOVES = {
    "epsilon": ("learn.epsilon.epsilon", 0.1, [0, 1]),
    "small_groups": ("learn.small_groups.size", 100, [0]),
    "stratify": ("learn.stratify.alpha", 1.0, [0, 1]),
    "coinpress": ("learn.coinpress.steps", 5, [0]),
    "clipping": ("learn.clipping.epsilon", 2.0, [0]),
    "figure1": ("learn.preset.figure1.alpha", 0.5, [0]),
    "figure3": ("learn.preset.figure3.rho", 0.1, [0, 1]),
    "ratio_ci": ("learn.ratio_ci.n", 20_000, [0, 1]),
    "gvdp_bounds": ("learn.gvdp_bounds.rho", 1.0, [0, 1]),
    "ratio_table1": ("learn.preset.ratio_table1.setting", "unweighted-10000", [1]),
    "gvdp_ols": ("learn.preset.gvdp_ols.panel", "a", [0, 1]),
    "sampling": ("learn.sample.categories", 5, [0]),
}
OPEN_KEYS = {e.key: f"learn.open.{e.key}" for e in EXPLAINERS} | {
    p.key: f"learn.preset.open.{p.key}" for p in PRESETS
}


def open_item(at: AppTest, key: str) -> AppTest:
    """Open an explainer's or preset's (lazy) expander, as a click on its header does."""
    at.session_state[OPEN_KEYS[key]] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def specs(at: AppTest) -> list[str]:
    return [chart.proto.spec for chart in at.get("plotly_chart")]


def widget(at: AppTest, key: str):
    for kind in ("select_slider", "slider", "radio", "selectbox"):
        for element in getattr(at, kind):
            if element.key == key:
                return element
    raise KeyError(key)


def plotted(array) -> np.ndarray:
    """A chart spec's array, including Plotly's base64 typed arrays."""
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"])
    return np.asarray(array, dtype=float)


def table_with(at: AppTest, column: str) -> pd.DataFrame:
    """The one table (data grid or static table) on the page that has ``column``."""
    (frame,) = [d.value for d in [*at.dataframe, *at.table] if column in d.value.columns]
    return frame


def test_learn_page_lists_every_explainer_and_preset_closed_and_fast():
    at = start("learn")
    assert [t.value for t in at.title] == ["Learn"]
    labels = [e.label for e in at.expander]
    assert labels == [e.title for e in EXPLAINERS] + [p.title for p in PRESETS]
    assert not at.get("plotly_chart")  # nothing is computed until an expander opens
    assert len(EXPLAINERS) == 8 and len(PRESETS) == 5


@pytest.mark.parametrize("key", list(MOVES), ids=list(MOVES))
def test_each_item_renders_and_moving_its_slider_changes_the_chart(key):
    at = open_item(start("learn"), key)
    before = specs(at)
    assert before, "no chart drawn"
    for spec in before:
        layout = json.loads(spec)["layout"]
        assert layout["title"]["text"]
        assert layout["xaxis"]["title"]["text"]
    # The formula is typeset and cites its source; every chart has a summary sentence under it.
    assert at.latex and any(c.value.startswith("Source:") for c in at.caption)
    assert not at.main.error, [e.value for e in at.main.error]
    name, value, changed = MOVES[key]
    widget(at, name).set_value(value).run()
    assert not at.exception, [e.value for e in at.exception]
    after = specs(at)
    assert len(after) == len(before)
    for i in changed:
        assert after[i] != before[i], f"chart {i} did not move"


def test_every_item_open_at_once_draws_every_chart_and_reruns_cleanly():
    """With everything open, each item draws its charts; a rerun draws the same ones (its time
    is measured by benchmarks/bench_page_reruns.py)."""
    at = start("learn")
    for key in OPEN_KEYS:
        at.session_state[OPEN_KEYS[key]] = True
    at.run()  # first run fills the caches
    assert not at.exception
    assert len(at.get("plotly_chart")) == 20
    first = specs(at)
    at.run()
    assert not at.exception and specs(at) == first


def test_explainers_explain_every_control():
    at = start("learn")
    for key in OPEN_KEYS:
        at.session_state[OPEN_KEYS[key]] = True
    at.run()
    controls = [*at.select_slider, *at.slider, *at.radio, *at.selectbox]
    learn_controls = [c for c in controls if (c.key or "").startswith("learn.")]
    assert len(learn_controls) == 22
    assert all(c.help for c in learn_controls), [c.key for c in learn_controls if not c.help]


def test_epsilon_explainer_states_the_e_to_the_epsilon_bound():
    at = open_item(start("learn"), "epsilon")
    widget(at, "learn.epsilon.epsilon").set_value(2.0).run()
    text = " ".join(m.value for m in at.markdown)
    assert "e^ε = 7.39" in text
    ratio = json.loads(specs(at)[1])
    assert "max ratio = e^ε = 7.39" in [a["text"] for a in ratio["layout"]["annotations"]]


def test_coinpress_explainer_follows_the_chosen_group():
    at = open_item(start("learn"), "coinpress")
    groups = widget(at, "learn.coinpress.group")
    assert groups.value == "Other × Female"  # the smallest demo group
    before = specs(at)[0]
    groups.set_value("White × Male").run()
    assert "White × Male" in json.loads(specs(at)[0])["layout"]["title"]["subtitle"]["text"]
    assert specs(at)[0] != before


@pytest.mark.parametrize(("item", "key"), [("coinpress", "learn.coinpress.group"),
                                           ("clipping", "learn.clipping.group")])  # fmt: skip
def test_a_learn_group_picker_draws_the_chosen_group_when_a_declared_group_is_empty(item, key):
    at = start("learn", **{"mean.clip_high": "1000"})
    state = state_of(at)
    state.strata_columns, state.group_list, state.small_groups = ["race"], "declared", "keep"
    state.declared_categories = {"race": ["Atlantis", "Black", "White"]}  # Atlantis has no rows
    at = open_item(at, item)
    picker = widget(at, key)
    assert "Atlantis" not in picker.options
    for group, size in (("White", 27_816), ("Black", 3_124)):  # not the group before it
        picker.set_value(group).run()
        subtitle = json.loads(specs(at)[0])["layout"]["title"]["subtitle"]["text"]
        assert f"{group}, n = {size:,}" in subtitle


def test_explainers_explain_what_is_missing_without_groups():
    at = start()
    state_of(at).strata_columns = []
    at.switch_page("app_pages/learn.py")
    for key in ("small_groups", "stratify", "coinpress"):
        at.session_state[OPEN_KEYS[key]] = True
    at.run()
    assert not at.exception
    infos = " ".join(i.value for i in at.info)
    assert "Choose at least one column to group by" in infos
    assert len(at.get("plotly_chart")) == 1  # the error curve still draws, without group markers


def test_figure1_preset_shows_the_paper_beside_ours():
    at = open_item(start("learn"), "figure1")
    claims = table_with(at, "claim")
    assert list(claims.columns) == ["claim", "paper", "ours"]
    assert "≈ 80%" in set(claims["paper"]) and "72%" in set(claims["ours"])
    settings = table_with(at, "setting")
    assert "✱ no" in set(settings["same as the paper?"])
    widget(at, "learn.preset.figure1.groups").set_value("sex_race").run()
    assert "k = 18" in json.loads(specs(at)[0])["layout"]["title"]["subtitle"]["text"]


def test_figure3_preset_loads_its_data_and_settings_for_the_other_pages():
    at = open_item(start("learn"), "figure3")
    claims = table_with(at, "claim")
    assert claims["claim"].str.contains("converges").any()
    at.button(key="learn.preset.figure3.load").click().run()
    assert not at.exception
    state = state_of(at)
    assert state.dataset_name.startswith("Synthetic Gaussian mixture")
    mean = settings_of(at, MeanSettings)
    assert (mean.estimator, state.budget_kind, state.rho) == ("coinpress", "zcdp", 0.5)
    assert state.strata_columns == ["group"] and mean.value == "value"
    at.switch_page("app_pages/strata.py").run()
    assert not at.exception and not at.main.error
    # Ten Dirichlet groups; with this seed one holds a single row and is left out (min size 2).
    assert {m.label: m.value for m in at.metric}["Groups"] == "9"
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception and not at.main.error
    assert len(at.get("plotly_chart")) == 3


def test_ratio_ci_explainer_shows_the_undercoverage_and_its_fix():
    at = open_item(start("learn"), "ratio_ci")
    text = " ".join(m.value for m in at.markdown)
    assert "7.6%" in text  # the paper's worst case, in the plain sentences
    assert "Intervals that ignore the DP noise cover the true ratio only" in text
    coverage = json.loads(specs(at)[0])
    no_correction = next(t for t in coverage["data"] if t["name"] == "No correction")
    assert plotted(no_correction["y"])[0] < 40  # ε = 0.1: far below the nominal 95%
    assert "unweighted" in coverage["layout"]["title"]["subtitle"]["text"]
    widget(at, "learn.ratio_ci.weighted").set_value(True).run()
    assert not at.exception
    assert " weighted rows" in json.loads(specs(at)[0])["layout"]["title"]["subtitle"]["text"]
    assert any("eq. 1" in c.value and "§2.4.3" in c.value for c in at.caption)


def test_gvdp_bounds_explainer_compares_gvdp_with_clipping():
    at = open_item(start("learn"), "gvdp_bounds")
    estimates, coverage = (json.loads(spec) for spec in specs(at))
    assert estimates["layout"]["xaxis"]["type"] == "log"
    names = [t["name"] for t in estimates["data"]]
    assert any(n.startswith("GVDP") for n in names) and any(n.startswith("clipped") for n in names)
    assert "ρ = 0.1" in estimates["layout"]["title"]["subtitle"]["text"]
    text = " ".join(m.value for m in at.markdown)
    assert "GVDP's intervals hold the true mean" in text
    widget(at, "learn.gvdp_bounds.rho").set_value(0.01).run()
    assert "ρ = 0.01" in json.loads(specs(at)[0])["layout"]["title"]["subtitle"]["text"]


def test_ratio_table1_preset_shows_the_paper_beside_ours():
    at = open_item(start("learn"), "ratio_table1")
    overview = json.loads(specs(at)[0])
    assert overview["layout"]["title"]["text"].startswith("Table 1 rebuilt")
    claims, settings = table_with(at, "claim"), table_with(at, "setting")
    assert "7.6%" in set(claims["paper"])
    worst = claims.loc[claims["claim"].str.startswith("no correction covers"), "ours"].iloc[0]
    assert float(worst.rstrip("%")) < 15
    effective = claims.loc[claims["claim"].str.endswith("weighted n = 5,000"), "ours"].iloc[0]
    assert "3,080.1 expected" in effective
    assert "✱ no" in set(settings["same as the paper?"])
    full = table_with(at, "Coverage (ours)")  # the whole table, in a popover
    assert len(full) == 16 * 4
    text = " ".join(m.value for m in at.markdown)
    assert "±1.4 percentage points" in text and "3,032" in text and "3,082" in text
    widget(at, "learn.preset.ratio_table1.setting").set_value("unweighted-5000").run()
    assert "n = 5,000 unweighted" in json.loads(specs(at)[1])["layout"]["title"]["subtitle"]["text"]


def test_gvdp_ols_preset_reruns_figure_2_and_states_the_differences():
    at = open_item(start("learn"), "gvdp_ols")
    figure2 = json.loads(specs(at)[0])
    assert "n = 50,000, k = 1,000" in figure2["layout"]["title"]["subtitle"]["text"]
    claims = table_with(at, "claim")
    assert claims["claim"].str.contains("essentially identical").any()
    assert claims["ours"].str.contains("median width").any()
    settings = table_with(at, "setting")
    assert "400 (25 rows)" in set(settings["here"])
    text = " ".join(m.value for m in at.markdown)
    assert "k = 400 (25 rows)" in text
    widget(at, "learn.preset.gvdp_ols.panel").set_value("b").run()
    assert "n = 10,000, k = 400" in json.loads(specs(at)[0])["layout"]["title"]["subtitle"]["text"]


def test_workshop_mode_hides_upload_and_returns_to_the_demo():
    at = start()
    at.file_uploader[0].set_value(("mine.csv", b"age,score\n30,0.5\n40,0.7\n", "text/csv")).run()
    assert state_of(at).dataset_name == "mine.csv"
    at.run()  # the sidebar is drawn before the page: it shows the upload from the next run on
    assert "mine.csv" in text(at.sidebar.markdown)  # as read: markdown escapes undone
    at.sidebar.toggle(key=WORKSHOP).set_value(True).run()
    assert not at.exception
    state = state_of(at)
    assert state.workshop_mode and state.uploaded is None
    assert state.dataset_name == "UCI Adult (demo)"
    assert settings_of(at, MeanSettings).value == "hours_per_week"
    assert at.title[0].value == "Learn"  # switching it on goes to the Learn page
    go(at, "data")
    assert not at.get("file_uploader")
    assert any("Workshop mode" in i.value for i in at.info)
    assert "UCI Adult (demo)" in text(at.sidebar.markdown)
    # Switching it off brings the uploader back.
    at.sidebar.toggle(key=WORKSHOP).set_value(False).run()
    assert at.get("file_uploader")


def test_workshop_mode_keeps_a_presets_built_in_data():
    at = open_item(start("learn"), "figure3")
    at.button(key="learn.preset.figure3.load").click().run()
    at.sidebar.toggle(key=WORKSHOP).set_value(True).run()
    assert state_of(at).dataset_name.startswith("Synthetic Gaussian mixture")


def test_workshop_mode_hides_release_and_a_deep_link_spends_nothing():
    ledger = Ledger(None, constants.DEFAULT_LEDGER_NAME, constants.DEFAULT_LEDGER_TOTAL)
    at = start("release", **{WORKSHOP: "true"})  # a shared link: /release?workshop=true
    assert state_of(at).workshop_mode
    assert [t.value for t in at.title] == ["Release"]
    assert any("Release is hidden in workshop mode" in i.value for i in at.info)
    assert not [b for b in at.button if b.key == "release.commit"]
    assert not at.checkbox
    assert not ledger.history()


def test_workshop_mode_shows_one_item_at_a_time_sized_for_a_projector():
    """On a projector the Learn page draws the item chosen at its top (not in an expander
    further down), each chart at most a projector's first screen high."""
    at = start("learn", **{WORKSHOP: "true"})
    assert not at.expander  # no list of expanders to scroll through
    titles = {item.key: item.title for item in (*all_explainers(), *all_presets())}
    for key in ("epsilon", "stratify", "ratio_ci", "gvdp_bounds", "ratio_table1", "gvdp_ols"):
        at.selectbox(key="learn.workshop.item").set_value(titles[key]).run()
        assert not at.exception, [e.value for e in at.exception]
        assert specs(at), key
        for spec in specs(at):
            layout = json.loads(spec)["layout"]
            assert layout["height"] <= constants.WORKSHOP_CHART_HEIGHT
            assert layout["font"]["size"] == constants.WORKSHOP_FONT_SIZE


def test_the_clipping_explainer_puts_typed_and_found_bounds_on_one_curve():
    """Group, ε and the bounds' share each changed twice; the chart keeps its three curves and
    both markers, and the summary follows."""
    at = open_item(start("learn", **{"mean.clip_high": "1000"}), "clipping")
    figure = json.loads(at.get("plotly_chart")[0].proto.spec)
    names = [trace["name"] for trace in figure["data"]]
    assert names[:3] == ["error (bias and noise together)", "clipping bias: too narrow",
                         "noise: too wide"]  # fmt: skip
    assert names[3] == "typed U = 1000" and names[4].startswith("found privately (20% of ε)")
    summaries = set()
    for key, values in (
        ("learn.clipping.group", widget(at, "learn.clipping.group").options[:2]),
        ("learn.clipping.epsilon", (2.0, 0.1)),
        ("learn.clipping.fraction", (0.4, 0.1)),
    ):
        for value in values:
            widget(at, key).set_value(value).run()
            assert not at.exception and not at.main.error
            summaries |= {m.value for m in at.main.markdown if "The error is smallest" in m.value}
    assert len(summaries) >= 4  # the picture moved with the choices
    assert (
        "found privately (10% of ε)"
        in [t["name"] for t in json.loads(at.get("plotly_chart")[0].proto.spec)["data"]][4]
    )
