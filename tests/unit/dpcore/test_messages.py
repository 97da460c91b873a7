"""Messages that never show confidential values (issue 37, item 5): a message raised by dpcore's
validation says what is wrong and where, never numpy's ``array([...])`` repr of the data."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore.analyses.ratio.sums import RatioSums
from dpcore.foundations import validation
from dpcore.foundations.metrics import normalized_error, parity_error
from dpcore.foundations.shares import PublicShares, share_values

SECRET = 45695.6044
"""A distinctive confidential value: no message may contain it."""
DATA = np.array([SECRET, 368.0, 0.0, 71234.5])


def assert_safe(raised: pytest.ExceptionInfo) -> None:
    message = str(raised.value)
    assert "array(" not in message, message
    assert "45695" not in message and "71234" not in message, message


@pytest.mark.parametrize(
    "check",
    [
        name
        for name, function in inspect.getmembers(validation, inspect.isfunction)
        if function.__module__ == validation.__name__
        and list(inspect.signature(function).parameters) == ["name", "value"]
    ],
)
def test_every_validation_check_refuses_an_array_without_showing_it(check):
    """Each ``check(name, value)`` of dpcore's validation, handed confidential data where one
    number was expected, names the parameter and what it must be, not the data."""
    with pytest.raises((TypeError, ValueError)) as raised:
        getattr(validation, check)("epsilon", DATA)
    assert_safe(raised)
    assert "`epsilon`" in str(raised.value)


@pytest.mark.parametrize(
    "call",
    [
        # Compare's crash: a group whose true mean is 0 (its message showed all 40 true means).
        lambda: normalized_error(DATA + 1, DATA),
        lambda: parity_error(DATA[None] + 1, DATA, 1.0, 0.0),
        lambda: share_values(DATA, 4),
        lambda: PublicShares(values=-DATA, source="table", description="shares"),
        lambda: RatioSums(w=DATA, ws=np.array([np.inf, *DATA[1:]]), wy=DATA, wss=DATA, wys=DATA),
        lambda: validation.validate_bounds(DATA),
        lambda: validation.numeric_values(pd.DataFrame({"x": DATA}), "value", DATA),
    ],
    ids=[
        "normalized error",
        "parity error",
        "shares",
        "public shares",
        "ratio sums",
        "bounds",
        "column name",
    ],  # fmt: skip
)
def test_refusals_of_data_arrays_show_their_shape_not_their_values(call):
    with pytest.raises((TypeError, ValueError)) as raised:
        call()
    assert_safe(raised)


def test_the_zero_truth_message_says_how_many_and_what_to_do():
    with pytest.raises(ValueError, match="as 1 of 4 true values are; compare absolute errors"):
        normalized_error(DATA + 1, DATA)


# A value that may hold data: a raise that shows one of these names with ``!r`` prints numpy's
# repr of the data. Shown through ``validation.shown`` they give their shape.
DATA_NAMES = {"values", "value", "truth", "sizes", "shares", "estimate", "estimates", "counts",
              "bound", "low", "high", "weights", "frame", "data", "x", "arr"}  # fmt: skip


def _data_reprs_in_raises(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Raise) or node.exc is None:
            continue
        for part in ast.walk(node.exc):
            if (
                isinstance(part, ast.FormattedValue)
                and part.conversion == ord("r")
                and isinstance(part.value, ast.Name)
                and part.value.id in DATA_NAMES
            ):
                found.append(f"line {node.lineno}: {part.value.id}!r")
    return found


def test_no_dpcore_message_shows_a_data_value_with_its_repr():
    """Every module of dpcore: no ``raise`` formats a data-holding name with ``!r``."""
    root = Path(dpcore.__file__).parent
    offenders = {
        str(path.relative_to(root)): found
        for path in sorted(root.rglob("*.py"))
        if (found := _data_reprs_in_raises(path.read_text()))
    }
    assert not offenders, offenders
