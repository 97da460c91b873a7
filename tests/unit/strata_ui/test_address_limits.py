"""Every number the address bar carries is held to its widget's bounds (one table in
strata_ui.constants for both), so a new numeric setting cannot slip into the address unchecked."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from dpcore.analyses import ANALYSES
from strata_ui.analyses import every
from strata_ui.constants import ADDRESS_LIMITS, Limit, plain_number
from strata_ui.state import AppState, widget_key
from strata_ui.url_state import SHARED_FIELDS, numbers_in

FREE_NUMBERS = {
    "bucket_edges", "share_table", "mean.clip_low", "mean.clip_high", "ratio.s_bound",
    "ratio.y_bound", "ratio.w_bound", "gvdp.box", "gvdp.guess", "synth.edges",
}  # fmt: skip
"""Numbers the user types freely (public bounds, edges, shares): held to being finite only."""


def address_fields():
    """(parameter, its type, its default) of every field the address carries."""
    hints = typing.get_type_hints(AppState)
    defaults = AppState()
    for name in SHARED_FIELDS:
        yield name, hints[name], getattr(defaults, name)
    owners = [(a.settings_type, [f.name for f in dataclasses.fields(a.settings_type)])
              for a in ANALYSES]  # fmt: skip
    owners += [ui.address_view for ui in every() if ui.address_view is not None]
    for cls, names in owners:
        hints, defaults = typing.get_type_hints(cls), cls()
        for name in names:
            yield widget_key(cls, name), hints[name], getattr(defaults, name)


def holds_numbers(hint) -> bool:
    if hint in (int, float):
        return True
    return any(holds_numbers(arg) for arg in typing.get_args(hint) if arg is not Ellipsis)


@pytest.mark.parametrize(("param", "hint", "default"), list(address_fields()))
def test_each_number_of_the_address_has_its_widgets_limit_and_its_default_is_within(
    param, hint, default
):
    if not holds_numbers(hint) or param in FREE_NUMBERS:
        return
    assert param in ADDRESS_LIMITS, f"`{param}` reaches the address with no limit"
    for number in numbers_in(default):
        assert ADDRESS_LIMITS[param].admits(number), (param, number)


def test_the_numbers_held_to_a_limit_are_found_inside_lists_and_mappings_but_not_in_flags():
    value = [1, (2.5, {"a": 3, "b": [4]}), True, "5", None]
    assert list(numbers_in(value)) == [1, 2.5, 3, 4]


def test_no_limit_is_left_over_from_a_field_that_went_away():
    params = {param for param, _, _ in address_fields()}
    assert set(ADDRESS_LIMITS) <= params


def test_a_limit_admits_its_range_or_its_options_and_says_which():
    assert Limit(2, 10).admits(2) and Limit(2, 10).admits(10) and not Limit(2, 10).admits(10.5)
    assert Limit(1e-6).admits(1e9) and not Limit(1e-6).admits(0)
    assert Limit(options=(0.8, 0.95)).admits(0.95) and not Limit(options=(0.8, 0.95)).admits(0.9)
    assert str(Limit(100, 5000)) == "from 100 to 5,000"
    assert str(Limit(options=(1e-6, 0.5))) == "one of 1e-06, 0.5"
    assert plain_number(10_000_000.0) == "10,000,000"
