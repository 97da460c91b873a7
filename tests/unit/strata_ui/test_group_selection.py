"""Which groups a chart of many groups draws: the smallest, the largest errors, a search's matches."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from strata_ui.group_selection import (
    FOUND,
    MAX_DRAWN,
    SMALLEST,
    WORST,
    matching,
    search_terms,
    select_groups,
)


def groups(k: int, seed: int = 0) -> tuple[pd.Series, pd.Series]:
    """``k`` groups named ``g0000 × A`` … with distinct sizes and errors in a shuffled order."""
    rng = np.random.default_rng(seed)
    labels = [f"g{i:04d} × {'AB'[i % 2]}" for i in range(k)]
    sizes = pd.Series(rng.permutation(np.arange(1, k + 1)) * 3, index=labels)
    errors = pd.Series(rng.permutation(k) / k, index=labels)
    return sizes, errors


def test_up_to_the_limit_every_group_is_drawn_smallest_first():
    sizes, errors = groups(MAX_DRAWN)
    selection = select_groups(sizes, errors, "g0001")
    assert len(selection.sections) == 1
    assert selection.sections[0].title == f"All {MAX_DRAWN} groups"
    assert list(selection.shown) == list(sizes.sort_values().index)
    assert selection.total == MAX_DRAWN and selection.matches == 0


def test_past_the_limit_the_smallest_and_the_worst_are_drawn():
    sizes, errors = groups(500)
    selection = select_groups(sizes, errors)
    smallest, worst = selection.sections
    assert smallest.title == f"The {SMALLEST} smallest of 500 groups"
    assert list(smallest.groups) == list(sizes.nsmallest(SMALLEST).index)
    assert worst.title == f"The {WORST} groups with the largest errors"
    assert list(worst.groups) == list(errors.nlargest(WORST).index)
    assert len(selection.shown) == len(set(smallest.groups) | set(worst.groups))
    assert selection.total == 500


def test_a_search_adds_the_smallest_matching_groups_whatever_the_case_and_order():
    sizes, errors = groups(500)
    selection = select_groups(sizes, errors, "  b G001 ")
    found = selection.sections[-1]
    expected = [g for g in sizes.sort_values().index if g.startswith("g001") and g.endswith("B")]
    assert selection.matches == len(expected) == 5  # g0011, g0013, …, g0019
    assert found.title == "Groups matching “b G001”"
    assert list(found.groups) == expected
    assert set(found.groups) <= set(selection.shown)


def test_a_search_matching_many_draws_the_smallest_few_and_says_so():
    sizes, errors = groups(500)
    selection = select_groups(sizes, errors, "A")
    found = selection.sections[-1]
    assert selection.matches == 250
    assert found.title == f"Groups matching “A”: the {FOUND} smallest of 250"
    assert list(found.groups) == list(sizes[sizes.index.str.endswith("A")].nsmallest(FOUND).index)


def test_a_search_matching_nothing_adds_no_section():
    sizes, errors = groups(500)
    selection = select_groups(sizes, errors, "nobody")
    assert selection.matches == 0 and len(selection.sections) == 2


def test_ties_go_by_label_so_the_input_order_does_not_matter():
    labels = [f"group {i:03d}" for i in range(100)]
    sizes, errors = pd.Series(5, index=labels), pd.Series(0.5, index=labels)
    forward = select_groups(sizes, errors)
    backward = select_groups(sizes[::-1], errors[::-1])
    assert forward == backward
    assert list(forward.sections[0].groups) == labels[:SMALLEST]


def test_groups_without_an_error_rank_last_among_the_worst():
    sizes, errors = groups(100)
    errors.iloc[:50] = np.nan
    worst = select_groups(sizes, errors).sections[1]
    assert errors[list(worst.groups)].notna().all()


@pytest.mark.parametrize(
    ("text", "terms"), [("", []), ("  ", []), ("Female  Asian", ["female", "asian"])]
)
def test_search_terms_are_lower_case_words(text, terms):
    assert search_terms(text) == terms


def test_matching_needs_every_word_and_keeps_the_order():
    labels = pd.Index(["White × Female", "Black × Female", "White × Male"], dtype=object)
    assert list(matching(labels, "female")) == ["White × Female", "Black × Female"]
    assert list(matching(labels, "white FEMALE")) == ["White × Female"]
    assert list(matching(labels, "")) == []
    assert list(matching(labels, "(merged)")) == []  # a plain substring, not a pattern
