"""The Strata page's warning about many groups, in plain words (no streamlit run)."""

import numpy as np

from strata_ui.data import MANY_GROUPS, many_groups_warning


def test_few_groups_are_not_warned_about():
    assert many_groups_warning(np.full(MANY_GROUPS, 100)) is None


def test_a_median_of_one_row_is_said_in_the_singular():
    warning = many_groups_warning(np.ones(MANY_GROUPS + 1, dtype=int))
    assert f"{MANY_GROUPS + 1:,} groups is a lot. Half of them have 1 row or fewer" in warning


def test_a_larger_median_keeps_the_plural_and_counts_the_tiny_groups():
    sizes = np.array([1] * 10 + [40] * (MANY_GROUPS - 9))
    warning = many_groups_warning(sizes)
    assert "Half of them have 40 rows or fewer and 10 have fewer than" in warning
