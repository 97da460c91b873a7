"""A change the browser sent is kept even when its run never reaches the widget.

A number typed in a box is sent when the box loses focus, so typing a bound and clicking a
sidebar link at once sends the value and then the page change. The new page's run can start
before the old page draws the box again (AppTest: the new value sent with the page change), and
Streamlit forgets the value of a widget the new page does not draw; the widget's callback keeps
it (:mod:`strata_ui.widgets`)."""

from __future__ import annotations

from dpcore.analyses.mean import MeanSettings
from strata_ui.state import widget_key
from tests.app.helpers import go, settings_of, start, state_of

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
