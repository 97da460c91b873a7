"""Text from a user's file shown as written in Streamlit's markdown."""

import pytest

from strata_ui.style import as_written


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
