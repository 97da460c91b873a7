"""Analysts' allowances: set by a curator, used up by the analyst's own commits, read back
from a ledger file that may be read-only."""

from __future__ import annotations

import sqlite3

import pytest

from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.ledger import Ledger
from strata_ui import allowances
from strata_ui.allowances import AllowanceExceededError
from strata_ui.roles import NotAllowed, Role, User

CURATOR = User("cura@example.org", Role.CURATOR)
ANALYST = User("ana@example.org", Role.ANALYST)


def spend(ledger: Ledger, label: str, rho: float, actor: str) -> None:
    ledger.spend(label, ZCDP(rho), {"outputs": [], "metadata": {}}, actor=actor)


def test_an_analysts_commits_add_up_against_their_allowance_on_that_ledger(ledger):
    other = Ledger(None, "other", ZCDP(1.0))
    allowances.set_allowance(ledger, ANALYST.identity, 0.3, by=CURATOR)
    spend(ledger, "theirs", 0.2, ANALYST.identity)
    spend(ledger, "the curator's", 0.5, CURATOR.identity)
    spend(other, "elsewhere", 0.4, ANALYST.identity)
    assert allowances.used_by(ledger, ANALYST.identity) == pytest.approx(0.2)
    allowances.check_commit(ledger, ANALYST, ZCDP(0.1))  # 0.2 + 0.1 fits in 0.3
    with pytest.raises(AllowanceExceededError, match="Requested: ρ = 0.125; Remaining: ρ = 0.1"):
        allowances.check_commit(ledger, ANALYST, PureDP(0.5))  # ρ = ε²/2 = 0.125
    allowances.check_commit(ledger, CURATOR, ZCDP(0.5))  # the ledger alone bounds a curator
    assert allowances.usable_ledgers(ANALYST) == ["default"]
    assert allowances.usable_ledgers(CURATOR) is None


def test_only_a_curator_sets_an_allowance_and_it_records_who(ledger):
    with pytest.raises(NotAllowed, match="an analyst may not set analysts' allowances"):
        allowances.set_allowance(ledger, ANALYST.identity, 1.0, by=ANALYST)
    for bad in (-0.1, float("nan"), float("inf"), True):
        with pytest.raises(ValueError, match="`amount` must be"):
            allowances.set_allowance(ledger, ANALYST.identity, bad, by=CURATOR)
    allowances.set_allowance(ledger, ANALYST.identity, 0.25, by=CURATOR)
    granted = allowances.allowances(ledger)[ANALYST.identity]
    assert (granted.amount, granted.set_by) == (0.25, CURATOR.identity)


def test_reading_writes_nothing_so_a_read_only_ledger_file_can_be_shown(ledger):
    spend(ledger, "theirs", 0.2, ANALYST.identity)
    [record] = ledger.history(payloads=False)
    assert allowances.actors_of(ledger) == {record.id: ANALYST.identity}
    assert allowances.allowances(ledger) == {} and allowances.usable_ledgers(ANALYST) == []
    with sqlite3.connect(ledger.path) as conn:  # reads opened the file read-only: no table made
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert "strata_allowances" not in tables


def test_a_ledger_without_allowances_yet_gives_none_and_refuses_analysts(ledger):
    assert allowances.allowances(ledger) == {} and allowances.usable_ledgers(ANALYST) == []
    with pytest.raises(NotAllowed, match="has no allowance on the ledger “default”"):
        allowances.check_commit(ledger, ANALYST, ZCDP(0.01))
