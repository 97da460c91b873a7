"""A change the browser sent is kept even when its run never reaches the widget.

A bound entered and a sidebar link clicked while the bound's run is still going send the value
and then the page change. The new page's run can start before the old page draws the box again
(AppTest: the new value sent with the page change), and Streamlit forgets the value of a widget
the new page does not draw; the widget's callback keeps it (:mod:`strata_ui.widgets`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.analyses.gvdp import GvdpSettings
from dpcore.analyses.mean import MeanSettings
from dpcore.analyses.sample.plan import SampleSettings
from dpcore.analyses.synth import SynthSettings
from strata_ui.planner import PlannerView
from strata_ui.portfolio import PlanEntry, PlanOfReleases
from strata_ui.state import widget_key
from tests.app.helpers import declare_exact_counts, edit_table, go, settings_of, start, state_of

UPPER_BOUND = widget_key(MeanSettings, "clip_high")


def test_a_bound_typed_just_before_a_page_change_is_kept_each_time():
    at = start("estimator")
    for bound in (80.0, 60.0):  # twice in a row: the second change must stick too
        at.number_input(key=UPPER_BOUND).set_value(bound)
        go(at, "strata")  # the Estimator page never ran with the new value
        assert settings_of(at, MeanSettings).clip_high == bound
        go(at, "estimator")
        assert at.number_input(key=UPPER_BOUND).value == bound


def test_a_grouping_chosen_just_before_a_page_change_is_kept():
    at = start("strata")
    at.main.multiselect[0].set_value(["sex"])
    go(at, "compare")
    assert state_of(at).strata_columns == ["sex"]


def test_a_share_typed_just_before_a_page_change_is_kept_each_time():
    at = start()  # another page, whose run does not send the Strata page's widgets
    state = state_of(at)
    # The groups found in the data, listed by size.
    state.strata_columns, state.share_source, state.group_list = ["sex"], "table", "data"
    go(at, "strata")
    [table] = at.main.dataframe
    editor = table.proto.id.split("-", 2)[2]  # its key, after Streamlit's "$$ID-<hash>-"
    assert table.value["group"].tolist() == ["Male", "Female"]  # the larger group first
    for share in (0.7, 0.4):  # twice in a row: the second change must stick too
        edit_table(at, editor, {"1": {"share": share}}, then_open="compare")
        assert state_of(at).share_table == {"Female": share}
        go(at, "strata")
        [table] = at.main.dataframe
        assert table.value["share"].tolist()[1] == share


def analysis(name: str) -> Callable[[], AppTest]:
    def start_with_it() -> AppTest:
        # The data's counts declared public: the general estimator treats sizes as public.
        at = declare_exact_counts(start("estimator"))
        at.radio(key="estimator.analysis").set_value(name).run()
        return at

    return start_with_it


def sample_of_sex() -> AppTest:
    at = analysis("sample")()
    at.multiselect(key="sample.columns.demo").set_value(["sex"]).run()
    return at


HALF_WIDTHS = widget_key(PlannerView, "half_widths")


def half_width_box(at: AppTest):
    return next(n for n in at.number_input if n.key.startswith(HALF_WIDTHS))


def half_width_kept(at: AppTest, key: str) -> float:
    return dict(settings_of(at, PlannerView).half_widths)[key.removeprefix(f"{HALF_WIDTHS}.")]


def grouped_by_age() -> AppTest:
    at = start("strata")
    at.main.multiselect[0].set_value(["age"]).run()
    return at


def planned_release() -> AppTest:
    """The Plan page with the demo's release added to the plan of releases."""
    at = start("plan")
    at.button(key="plan.portfolio.add").click().run()
    return at


def planned(at: AppTest, key: str) -> PlanEntry:
    """The planned release whose widget is keyed ``key`` (which ends in its id)."""
    return next(e for e in settings_of(at, PlanOfReleases).entries if key.endswith(f".{e.id}"))


def target_kept(at: AppTest, key: str) -> float:
    target = planned(at, key).target
    return round(target.amount * 100 if target.relative else target.amount, 9)


def portfolio_widget(kind: str, name: str) -> Callable[[AppTest], object]:
    return lambda at: next(
        w for w in getattr(at, kind) if w.key.startswith(f"plan.portfolio.{name}.")
    )


# What a user types, on which page, and where the app keeps it: (start there, the page, the
# widget, two values in a row, the kept value, read with the widget's key).
TYPED = {
    "the analysis": (
        lambda: start("estimator"), "estimator",
        lambda at: at.radio(key="estimator.analysis"),
        ("ratio", "gvdp"),
        lambda at, _: state_of(at).analysis,
    ),
    "a grouping column's bucket edges": (
        grouped_by_age, "strata",
        lambda at: at.text_input(key="strata.edges.age.demo"),
        ("25, 45", "30, 60"),
        lambda at, _: ", ".join(f"{e:g}" for e in state_of(at).bucket_edges["age"]),
    ),
    "synthetic data's bucket edges": (
        analysis("synth"), "estimator",
        lambda at: at.text_input(key="synth.edges.age"),
        ("30, 50", "20, 40, 60"),
        lambda at, _: ", ".join(f"{e:g}" for e in settings_of(at, SynthSettings).edges_of("age")),
    ),
    "a sample's public categories": (
        sample_of_sex, "estimator",
        lambda at: at.text_input(key="sample.categories.demo.sex"),
        ("Male, Female", "Female, Male, Other"),
        lambda at, _: ", ".join(settings_of(at, SampleSettings).declared("sex")),
    ),
    "the general estimator's k": (
        analysis("gvdp"), "estimator",
        lambda at: at.number_input(key="gvdp.ks.mean"),
        (500, 800),
        lambda at, _: settings_of(at, GvdpSettings).k,
    ),
    "a bound of the general estimator's mean": (
        analysis("gvdp"), "estimator",
        lambda at: at.number_input(key="gvdp.box.mean.hours_per_week.hours_per_week.high"),
        (90.0, 80.0),
        lambda at, _: settings_of(at, GvdpSettings).box_row(
            ("mean", "hours_per_week", "hours_per_week")
        )[1],
    ),
    "the Plan page's target": (
        lambda: start("plan"), "plan", half_width_box, (0.4, 0.7), half_width_kept,
    ),
    "a planned release's target": (
        planned_release, "plan", portfolio_widget("number_input", "target"), (4.0, 6.0),
        target_kept,
    ),
    "a planned release's lock": (
        planned_release, "plan", portfolio_widget("toggle", "lock"), (True, False),
        lambda at, key: planned(at, key).locked is not None,
    ),
    "the simulation seed": (
        lambda: start("compare"), "compare",
        lambda at: at.number_input(key="compare.seed"),
        (7, 11),
        lambda at, _: state_of(at).seed,
    ),
    "the release's name": (
        lambda: start("release"), "release",
        lambda at: at.text_input(key="release.label"),
        ("Hours by race", "Hours by race, 2026"),
        lambda at, _: state_of(at).release_label,
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(TYPED))
def test_what_is_typed_just_before_a_page_change_is_kept(name):
    begin, page, widget, typed, kept = TYPED[name]
    at = begin()
    for value in typed:  # twice in a row: the second change must stick too
        box = widget(at).set_value(value)
        go(at, "data")  # the page with the widget never ran with the new value
        assert kept(at, box.key) == value
        go(at, page)
        assert widget(at).value == value
