"""Text from a user's file shown as written in Streamlit's markdown."""

import pytest

from strata_ui.style import rounded_up, three_digits, wrap_label_wide
from strata_ui.text import as_written


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        ("row 1 “$1,000.50”, row 2 “$3”", r"row 1 “\$1\,000\.50”\, row 2 “\$3”"),  # no formula
        ("a_b *c* [d](e) <b>", r"a\_b \*c\* \[d\]\(e\) \<b\>"),  # no emphasis, link or tag
        ("`my_col$` held 12%", r"`my_col$` held 12\%"),  # code spans are shown as they are
        ("plain words", "plain words"),
    ],
)
def test_markdown_punctuation_is_escaped_outside_code_spans(message, shown):
    assert as_written(message) == shown


@pytest.mark.parametrize(
    ("number", "shown"),
    [(1000.0, "1,000"), (999.4, "999"), (0.139, "0.139"), (1.5, "1.5"), (12.345, "12.3"),
     (250_000.4, "250,000"), (0.0, "0"), (1e7, "1e+07"), (-3.14159, "-3.14")],
)  # fmt: skip
def test_three_digits_reads_without_exponents_in_everyday_ranges(number, shown):
    assert three_digits(number) == shown


@pytest.mark.parametrize(
    ("budget", "shown"),
    [(1.37419, 1.38), (1.23, 1.23), (1.2, 1.2), (0.0123001, 0.0124), (2.0, 2.0),
     (999.1, 1000.0), (7.3e-05, 7.3e-05), (4.00000001, 4.01)],
)  # fmt: skip
def test_a_budget_read_off_the_screen_is_never_below_the_exact_one(budget, shown):
    assert rounded_up(budget) == shown
    assert rounded_up(budget) >= budget


def test_wide_labels_break_between_parts_and_never_inside_one():
    label = "Self-emp-not-inc × Assoc-acdm × Married-civ-spouse × Exec-managerial × Female"
    wrapped = wrap_label_wide(label, width=36)
    lines = wrapped.split("<br>")
    assert lines == [
        "Self-emp-not-inc × Assoc-acdm",
        "× Married-civ-spouse",
        "× Exec-managerial × Female",
    ]
    assert wrapped.replace("<br>", " ") == label  # nothing dropped or cut
    assert wrap_label_wide("x" * 50 + " × b", width=36) == "x" * 50 + "<br>× b"
    assert wrap_label_wide("White × Male") == "White × Male"
