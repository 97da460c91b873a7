"""One declaration for a setting's options, labels and check (dpcore.foundations.choices)."""

from typing import Literal

import numpy as np
import pytest

from dpcore.foundations.choices import Choices, one_of

Colour = Literal["red", "blue"]


def test_choices_read_as_the_labels_in_declared_order():
    colours = Choices(Colour, {"red": "Warm red", "blue": "Cool blue"})
    assert list(colours) == ["red", "blue"]
    assert colours["blue"] == "Cool blue"
    assert dict(colours) == {"red": "Warm red", "blue": "Cool blue"}
    assert colours.check("colour", "red") == "red"


@pytest.mark.parametrize(
    "labels",
    [{"red": "Red"}, {"red": "Red", "blue": "Blue", "green": "Green"}, {"blue": "B", "red": "R"}],
)
def test_labels_that_drift_from_the_literal_are_refused_at_declaration(labels):
    with pytest.raises(TypeError, match="must name the options of"):
        Choices(Colour, labels)


@pytest.mark.parametrize("value", ["green", 3, None, ["red"]])
def test_any_other_value_is_refused_naming_the_options(value):
    colours = Choices(Colour, {"red": "Red", "blue": "Blue"})
    with pytest.raises(ValueError, match=r"`colour` must be one of 'red', 'blue', got "):
        colours.check("colour", value)


def test_a_refusal_never_shows_the_values_of_an_array():
    with pytest.raises(ValueError, match="got an array of 3 values") as refused:
        one_of("method", np.array([0.5, 1.5, 2.5]), {"none": ""})
    assert "0.5" not in str(refused.value)
