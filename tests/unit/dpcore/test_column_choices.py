"""Per-column choices of frozen settings: set, replaced in place, removed with None."""

from dpcore.foundations.column_choices import choice_of, with_choice


def test_a_choice_is_set_replaced_in_its_place_and_removed_with_none():
    choices = with_choice((), "age", (0.0, 30.0))
    choices = with_choice(choices, "hours", (0.0, 40.0))
    assert choices == (("age", (0.0, 30.0)), ("hours", (0.0, 40.0)))
    replaced = with_choice(choices, "age", (0.0, 50.0))
    assert replaced == (("age", (0.0, 50.0)), ("hours", (0.0, 40.0)))
    assert choice_of(replaced, "age") == (0.0, 50.0)
    removed = with_choice(replaced, "age", None)
    assert removed == (("hours", (0.0, 40.0)),)
    assert choice_of(removed, "age") is None
    assert with_choice(removed, "absent", None) == removed
