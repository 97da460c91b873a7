"""The address bar keeps the session's choices: a refresh (a new session opened on the same
address) or a shared link restores them; an uploaded file is asked for again, never replaced by the
demo data silently; the address never carries the data or its fingerprint."""

from __future__ import annotations

import pytest

from dpcore.analyses.mean import MeanSettings
from dpcore.analyses.ratio import RatioSettings
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.ledger import Ledger, list_ledgers
from strata_ui.analyses import every
from strata_ui.analyses.ratio.view import RatioView
from tests.app import helpers

MESSY = (
    "Region ,hours,Paid\n"
    + "".join(f"{'North' if i % 3 else 'South'},{20 + i % 30},{i % 2}\n" for i in range(300))
).encode()


def messy_upload_grouped_by_region():
    """The Strata page after uploading ``MESSY`` as "messy.csv" and grouping by its Region."""
    at = helpers.start("data")
    helpers.upload(at, MESSY, "messy.csv")
    helpers.go(at, "strata")
    at.main.multiselect[0].set_value(["Region"]).run()
    return at


def test_the_default_address_is_empty_and_each_change_shows_in_it_at_once():
    at = helpers.start("budget")
    assert not (set(helpers.address(at)) - {"workshop"})
    at.number_input(key="budget.epsilon").set_value(2.0).run()
    assert helpers.address(at)["epsilon"] == "2.0"
    at.number_input(key="budget.epsilon").set_value(0.5).run()  # the second change too
    assert helpers.address(at)["epsilon"] == "0.5"
    at.number_input(key="budget.epsilon").set_value(1.0).run()  # back to the default
    assert "epsilon" not in helpers.address(at)


def test_a_refresh_restores_grouping_analysis_settings_and_budget_on_every_page():
    at = helpers.go(helpers.start("strata"), "strata")
    at.main.multiselect[0].set_value(["sex"]).run()
    at.main.multiselect[0].set_value(["sex", "education"]).run()
    helpers.go(at, "estimator")
    helpers.change_settings(at, MeanSettings, clip_high=80.0, estimator="gaussian")
    helpers.go(at, "budget")
    at.radio(key="budget.kind").set_value("zcdp").run()
    link = helpers.address(at)
    assert link["strata_columns"] == '["sex", "education"]'
    assert link["mean.clip_high"] == "80.0" and link["mean.estimator"] == "gaussian"

    again = helpers.start("compare", **link)
    state = helpers.state_of(again)
    assert state.strata_columns == ["sex", "education"]
    assert state.budget_kind == "zcdp"
    assert helpers.settings_of(again, MeanSettings).clip_high == 80.0
    assert helpers.settings_of(again, MeanSettings).estimator == "gaussian"
    assert not again.warning, helpers.text(again.warning)
    helpers.go(again, "strata")
    assert again.main.multiselect[0].value == ["sex", "education"]


def test_the_address_is_written_again_on_a_page_that_ends_early():
    """A page change clears the address in the browser before the new page runs; a page that
    ends early (Strata with no grouping column: a hint and nothing more) must still write it,
    or a refresh there loses every choice."""
    at = helpers.start("budget")
    at.number_input(key="budget.epsilon").set_value(2.0).run()
    helpers.go(at, "strata")
    at.main.multiselect[0].set_value([]).run()
    assert "Choose one or more grouping columns" in helpers.text(at.info)
    at.query_params.clear()  # what the browser does on the way to another page
    at.run()
    assert helpers.address(at)["epsilon"] == "2.0" and helpers.address(at)["strata_columns"] == "[]"


def test_another_analysis_and_its_settings_come_back():
    at = helpers.start("estimator")
    at.radio(key="estimator.analysis").set_value("ratio").run()
    at.radio(key="ratio.mechanism.pure").set_value("laplace").run()
    at.number_input(key="ratio.s_bound").set_value(2.0).run()
    at.number_input(key="ratio.s_bound").set_value(3.0).run()
    link = helpers.address(at)
    assert link["analysis"] == "ratio" and link["ratio.mechanism"] == "laplace"
    assert not any(name.startswith("mean.") for name in link)  # only the current analysis
    again = helpers.start("estimator", **link)
    assert helpers.state_of(again).analysis == "ratio"
    assert helpers.settings_of(again, RatioSettings).s_bound == 3.0
    assert again.number_input(key="ratio.s_bound").value == 3.0


@pytest.mark.parametrize(
    ("param", "text_value"),
    [
        ("epsilon", "lots"),
        ("strata_columns", '["race", 3]'),
        ("mean.estimator", "magic"),
        ("min_group_size", "2.5"),
        ("analysis", "astrology"),
        ("bucket_edges", '{"age": "young"}'),
    ],
)
def test_a_hand_edited_address_is_named_and_left_at_the_defaults(param, text_value):
    at = helpers.start(**{param: text_value, "seed": "7"})
    assert f"`{param}`" in helpers.text(at.warning)
    assert helpers.state_of(at).seed == 7  # the usable parameters still apply
    assert param not in helpers.address(at)  # the address now shows what is in use
    at.run()
    assert f"`{param}`" not in helpers.text(at.warning)  # said once


def test_strata_columns_the_data_lacks_are_dropped_after_the_upload():
    at = messy_upload_grouped_by_region()
    link = helpers.address(at)
    assert link["data"] == "upload" and link["file"] == "messy.csv"
    link["strata_columns"] = '["Region", "Planet"]'
    again = helpers.start("strata", **link)
    again = helpers.upload(helpers.go(again, "data"), MESSY, "messy.csv")
    assert helpers.state_of(again).strata_columns == ["Region"]


def test_a_refresh_after_an_upload_asks_for_the_file_and_restores_its_choices():
    at = messy_upload_grouped_by_region()
    at.main.multiselect[0].set_value(["Region", "Paid"]).run()
    link = helpers.address(at)
    assert helpers.state_of(at).dataset_fingerprint not in str(link)  # no hash of the data

    again = helpers.start("compare", **link)
    notice = helpers.text(again.warning)
    assert "messy.csv" in notice and "Upload it again on the Data page" in notice
    assert helpers.state_of(again).uploaded is None  # shown as waiting, not silently the demo
    again.run()  # a second refresh or rerun keeps waiting, and keeps the address
    assert "messy.csv" in helpers.text(again.warning) and helpers.address(again) == link

    helpers.go(again, "data")
    helpers.upload(again, MESSY, "messy.csv")
    state = helpers.state_of(again)
    assert state.dataset_name == "messy.csv" and state.strata_columns == ["Region", "Paid"]
    assert "are back" in helpers.text(again.info)
    assert "messy.csv" not in helpers.text(again.warning)


def test_a_different_file_starts_fresh_and_the_demo_button_ends_the_wait():
    at = messy_upload_grouped_by_region()
    link = helpers.address(at)

    other = helpers.upload(helpers.start("data", **link), MESSY, "other.csv")
    assert helpers.state_of(other).strata_columns == []
    assert "not applied" in helpers.text(other.info)

    demo = helpers.start("strata", **link)
    demo.button(key="url_state.use_demo").click().run()
    assert not demo.warning
    assert "data" not in helpers.address(demo) and "file" not in helpers.address(demo)
    assert helpers.state_of(demo).strata_columns == ["race", "sex"]


def test_workshop_mode_keeps_its_own_parameter_beside_the_choices():
    at = helpers.start("learn", workshop="true", epsilon="2.0")
    assert helpers.state_of(at).workshop_mode and helpers.state_of(at).epsilon == 2.0
    at.run()
    assert helpers.address(at)["workshop"] == "true" and helpers.address(at)["epsilon"] == "2.0"


def test_the_address_is_the_same_on_neighbouring_datasets():
    """D and D′ (one person added, of a new region): the same clicks give the same address, so
    a shared link says nothing about who is in the data."""

    def address_after_choices(data: bytes) -> dict[str, str]:
        at = helpers.upload(helpers.start("data"), data, "survey.csv")
        helpers.go(at, "strata")
        at.main.multiselect[0].set_value(["Region"]).run()
        at.main.multiselect[0].set_value(["Region", "Paid"]).run()
        helpers.go(at, "budget")
        at.number_input(key="budget.epsilon").set_value(2.0).run()
        return helpers.address(at)

    neighbour = MESSY + b"West,41,1\n"
    assert address_after_choices(MESSY) == address_after_choices(neighbour)


def test_a_refresh_keeps_the_ledger_in_use_and_says_so():
    """The tester's case: a new ledger started, then a refresh, charged the default one."""
    at = helpers.start("budget")
    Ledger(None, "Income survey 2026", ZCDP(1.0))  # as the Budget page's form starts one
    helpers.state_of(at).ledger_name = "Income survey 2026"
    at.run()
    link = helpers.address(at)
    assert link["ledger"] == "Income survey 2026"

    again = helpers.start(**link)
    assert helpers.state_of(again).ledger_name == "Income survey 2026"
    assert "The ledger “Income survey 2026” from the address is in use" in helpers.text(again.info)
    helpers.go(again, "release")
    assert "from the address is in use" not in helpers.text(again.info)  # said once
    assert "Left in “Income survey 2026”" in helpers.text(again.main.markdown)


def test_an_address_never_starts_a_ledger():
    at = helpers.start(ledger="Somebody else's", seed="7")
    assert helpers.state_of(at).ledger_name == "default"
    assert "`ledger`" in helpers.text(at.warning)
    assert helpers.state_of(at).seed == 7
    assert "ledger" not in helpers.address(at)
    assert "Somebody else's" not in {summary.name for summary in list_ledgers()}


def test_a_refresh_redraws_compare_with_its_display_choices_twice_changed():
    """The tester's case: log scale, the error to plot and the strategy came back at their
    defaults after a refresh."""
    at = helpers.start("compare")
    for log_axis, metric, vanilla in (
        (True, "global", "global_and_groups"),
        (False, "worst group", "global_only"),
        (True, "global", "global_and_groups"),
    ):
        at.toggle(key="mean_view.log_axis").set_value(log_axis).run()
        at.radio(key="mean_view.sweep_metric").set_value(metric).run()
        at.radio(key="mean_view.vanilla_strategy").set_value(vanilla).run()
    link = helpers.address(at)
    assert link["mean_view.log_axis"] == "true"
    assert link["mean_view.sweep_metric"] == "global"

    again = helpers.start("compare", **link)
    assert again.toggle(key="mean_view.log_axis").value is True
    assert again.radio(key="mean_view.sweep_metric").value == "global"
    assert again.radio(key="mean_view.vanilla_strategy").value == "global_and_groups"
    assert not again.warning, helpers.text(again.warning)


def test_view_choices_read_from_the_data_stay_out_of_the_address():
    """Group labels come from the confidential data: a view's choice of one is not shared."""
    at = helpers.start("estimator")
    at.radio(key="estimator.analysis").set_value("ratio").run()
    helpers.change_settings(at, RatioView, compare_a="Female", sweep_group="Female", bootstrap=True)
    helpers.go(at, "compare")
    assert helpers.address(at)["ratio_view.bootstrap"] == "true"  # a display choice is shared
    assert not any("Female" in value for value in helpers.address(at).values())
    for ui in every():
        _, names = ui.address_view
        assert {"compare_a", "compare_b", "sweep_group", "group_search"}.isdisjoint(names)


def test_a_refresh_keeps_the_compare_page_s_own_budget_apart_from_the_budget_page_s():
    """Compare's ε is its own (issue 37): twice moved, it comes back after a refresh, and the
    Budget page's ε stays where it was; an ε the slider does not offer is named, not used."""
    at = helpers.start("compare")
    for chosen in (3.0, 0.2):
        at.select_slider(key="compare.budget.pure").set_value(chosen).run()
        assert helpers.address(at)["compare_epsilon"] == str(chosen)
    assert "epsilon" not in helpers.address(at)

    again = helpers.start("compare", **helpers.address(at))
    assert (helpers.state_of(again).compare_epsilon, helpers.state_of(again).epsilon) == (0.2, 1.0)
    assert again.select_slider(key="compare.budget.pure").value == 0.2
    assert not again.warning, helpers.text(again.warning)

    odd = helpers.start(compare_epsilon="0.37")
    assert "`compare_epsilon`" in helpers.text(odd.warning)
    assert (
        helpers.state_of(helpers.go(odd, "compare")).compare_epsilon == 1.0
    )  # the Budget page's, not 0.37
