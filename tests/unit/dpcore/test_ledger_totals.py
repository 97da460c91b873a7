"""A ledger's total: checking a cost against what is left, opening a ledger with its stored
total, raising it, and listing the ledgers of a missing file."""

from __future__ import annotations

import pytest

from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP
from dpcore.foundations.ledger import BudgetExceededError, Ledger, list_ledgers


def test_check_affordable_raises_without_recording(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite", "survey", ZCDP(1.0))
    ledger.spend("first", ZCDP(0.75), {})
    assert ledger.check_affordable(ZCDP(0.25)) is None  # exactly what is left
    for cost, requested in ((ZCDP(0.3), "ρ = 0.3"), (PureDP(1.0), "ρ = 0.5")):
        with pytest.raises(BudgetExceededError) as refused:
            ledger.check_affordable(cost)
        message = str(refused.value)
        assert f"Requested {requested}" in message
        assert "Remaining ρ = 0.25" in message and "Difference" in message
    with pytest.raises(ValueError, match="cannot be expressed"):
        ledger.check_affordable(ApproxDP(0.1, 1e-6))
    assert len(ledger.history()) == 1
    assert ledger.remaining() == {"rho": 0.25}


def test_open_uses_the_stored_total_and_refuses_unknown_names(tmp_path):
    file = tmp_path / "l.sqlite"
    created = Ledger(file, "survey", ApproxDP(2.0, 1e-6))
    created.spend("mean", PureDP(0.5), {"mean": 1.0})
    opened = Ledger.open(file, "survey")
    assert opened.total == ApproxDP(2.0, 1e-6)
    assert opened.history() == created.history()
    with pytest.raises(ValueError, match="existing ledger, got 'census'"):
        Ledger.open(file, "census")
    missing = tmp_path / "missing.sqlite"
    with pytest.raises(ValueError, match="existing ledger"):
        Ledger.open(missing, "survey")
    assert not missing.exists()


def test_a_raise_adds_to_the_total_and_keeps_every_record(tmp_path):
    """What a reset did (a fresh budget for the same people) is a raise now: nothing is moved or
    forgotten, and the raise is a record of its own."""
    file = tmp_path / "l.sqlite"
    ledger = Ledger(file, "survey", ZCDP(1.0))
    old = [ledger.spend("a", ZCDP(0.5), {"x": 1}, key="k1"), ledger.spend("b", ZCDP(0.5), {})]
    raised = ledger.raise_total(ZCDP(1.0), reason="second study agreed", actor="ana")
    assert (raised.entry, raised.reason, raised.actor) == ("raise", "second study agreed", "ana")
    assert ledger.history() == old
    assert ledger.remaining() == {"rho": 1.0} and ledger.granted() == ZCDP(2.0)
    assert ledger.total == ZCDP(1.0)  # what it started with, as the exported script opens it
    [summary] = list_ledgers(file)
    assert (summary.releases, summary.total, summary.granted) == (2, ZCDP(1.0), ZCDP(2.0))
    # The same key still names the recorded spend: a raise renews no release.
    assert ledger.spend("a", ZCDP(0.5), {"x": 2}, key="k1") == old[0]


def test_list_ledgers_on_a_missing_file_is_empty_and_creates_nothing(tmp_path):
    missing = tmp_path / "nowhere" / "ledger.sqlite"
    assert list_ledgers(missing) == []
    assert not missing.parent.exists()
