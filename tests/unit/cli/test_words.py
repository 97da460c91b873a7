"""The command line never sends anyone to an app page: dpcore's messages name pages, the
command line names its options (strata_cli.words)."""

import re

import pytest

from strata_cli.words import in_cli_words

PAGE = re.compile(r"\b(Data|Strata|Estimator|Budget|Compare|Plan|Release) page\b")


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Count the budget in ρ-zCDP on the Budget page (the ratio then…)",
         "Count the budget in ρ-zCDP with the budget options (--epsilon or --rho) (the ratio"),
        ("Use a ρ-zCDP ledger (Budget page), or", "ledger (the budget options (--epsilon or"),
        ("Switch the Budget page to ρ-zCDP", "Switch the budget options (--epsilon or --rho) to"),
        ("The Budget page sets ρ = 1 (zCDP).", "The budget options (--epsilon or --rho) sets"),
        ("Enter public lower and upper bounds for the value on the Estimator page.",
         "with the analysis' options (--estimator, --bounds"),
        ("merge small groups on the Strata page, or", "with the grouping options (--by, --edges"),
        ("in the Strata page's table, give a share", "with the grouping options"),
    ],
)  # fmt: skip
def test_pages_become_the_options_that_make_the_same_choice(message, expected):
    said = in_cli_words(message)
    assert expected in said and not PAGE.search(said), said


def test_a_sentence_about_the_app_itself_keeps_its_words():
    """Ledgers are started in the app: the command line says so."""
    advice = "start a ledger for it on the app's Budget page and pass its --ledger-name"
    assert in_cli_words(advice) == advice
