"""The Release page's budget checks: what the ledger can afford, and when a budget is large."""

from types import SimpleNamespace

import pandas as pd
import pytest

from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP
from dpcore.foundations.ledger import Ledger
from strata_ui.charts_release import gauge_summary, written_number
from strata_ui.release_ui import (
    affordable,
    download_stem,
    large_budget_warning,
    released_table,
)


@pytest.mark.parametrize(
    "cost, warned",
    [
        (PureDP(2.0), False),
        (PureDP(2.5), True),
        (ApproxDP(3.0, 1e-6), True),
        (ZCDP(2.0), False),  # ε²/2 at ε = 2
        (ZCDP(4.5), True),  # as much as ε = 3
    ],
)
def test_budgets_above_epsilon_2_or_its_zcdp_equivalent_are_flagged(cost, warned):
    warning = large_budget_warning(cost)
    assert (warning is not None) == warned
    if isinstance(cost, ZCDP) and warned:
        assert "ρ = 4.5 (as much as ε = 3 of pure DP)" in warning and "e^3 ≈ 20" in warning


def test_affordable_allows_the_last_of_the_budget_and_no_more(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite", "default", ZCDP(0.5))
    assert affordable(PureDP(1.0), ledger)  # ρ = ε²/2 = 0.5, exactly what is left
    assert not affordable(ZCDP(0.5000001), ledger)


def test_a_huge_odds_factor_reads_as_a_power_of_ten():
    warning = large_budget_warning(ZCDP(1148.31))
    assert "e^47.9 ≈ 6.5 × 10^20" in warning
    assert "e^7 ≈ 1,097" in large_budget_warning(PureDP(7.0))


@pytest.mark.parametrize(
    ("value", "digits", "written"),
    [
        (2437.9, 3, "2,440"),
        (40.5, 4, "40.5"),
        (0.012345, 3, "0.0123"),
        (-1234567.0, 4, "-1,235,000"),
        (0.0, 4, "0"),
        (3e-7, 3, "3e-07"),
        (float("nan"), 4, "undefined"),
    ],
)
def test_release_sentences_write_numbers_out_to_their_significant_digits(value, digits, written):
    assert written_number(value, digits) == written


def test_download_names_keep_accented_letters_without_their_accents():
    record = SimpleNamespace(
        metadata={"title": "Income by région — test «1»"}, ledger_record=SimpleNamespace(id=2)
    )
    assert download_stem(record) == "income-by-region-test-1-2"
    record.metadata["title"] = "東京"  # nothing left of it in ASCII
    assert download_stem(record) == "release-2"


def test_the_released_table_writes_numbers_as_precisely_as_their_interval_allows():
    """Issue 37: "31490.6899" beside an interval 2,000 wide; each row now shows the decimals its
    interval supports, with separators, and a dash where nothing was released."""
    frame = pd.DataFrame({
        "level": ["group", "group", "group", "population"],
        "group": ["wide", "narrow", "withheld", "All"],
        "estimate": [38038.4427, 0.51234, None, 31490.6899],
        "low": [26782.5438, 0.4811, None, 30470.1],
        "high": [48858.5126, 0.5392, None, 32530.7],
        "noisy_share": [0.07341, 0.5, None, 1.0],
        "flag": ["", "", "not released: its noisy count was below 2", ""],
    })  # fmt: skip
    shown = released_table(frame)
    cells = shown[["DP estimate", "interval low", "interval high", "noisy share"]].values.tolist()
    assert cells == [
        ["38,038", "26,783", "48,859", "0.0734"],
        ["0.512", "0.481", "0.539", "0.5"],
        ["—", "—", "—", "—"],
        ["31,491", "30,470", "32,531", "1"],
    ]


def test_the_ledger_gauge_is_said_in_words():
    assert gauge_summary(1.5, 2.0, "ρ", "my_project") == (
        r"The gauge: ρ = 1.5 of 2 left in “my\_project” (75%)."
    )
