"""Text from a user's file shown as written in Streamlit's markdown."""

import pytest

from strata_ui.style import as_written, three_digits


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
