"""What issue 36 found a link could do, each refused with a message: charge another ledger,
open any file of the server, make it connect to any host, pin it with out-of-bounds numbers."""

from __future__ import annotations

import time

import pytest

from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.ledger import Ledger
from strata_ui import allowances
from strata_ui.roles import Role, User
from tests.app.helpers import start, state_of, text
from tests.app.team import ANALYST, CURATOR, start_as


def refused(at) -> str:
    """The notice naming the address's parameters that were not used, and why."""
    return text(at.warning)


@pytest.mark.parametrize(
    ("param", "value", "why"),
    [
        ("replicates", "10000000", "10,000,000 is not offered by its control, which takes from "
         "100 to 5,000"),
        ("min_group_size", "-5", "-5 is not offered by its control, which takes from 2 to "
         "1,000,000"),
        ("epsilon", "1e9", "1,000,000,000 is not offered by its control, which takes from 0.01 "
         "to 4.47214"),  # ρ = ε²/2 fills the largest ledger, ρ = 10
        ("epsilon", "NaN", "nan is not a finite number"),
        ("ratio.B", "100000", "which takes from 50 to 1,000"),
        ("gvdp.resamples", "1000", "which takes from 2 to 50"),
        ("gvdp.ks", '[["mean", 0]]', "which takes at least 1"),
        ("release_level", "0.5", "which takes one of 0.8, 0.9, 0.95, 0.99"),
    ],
)  # fmt: skip
def test_numbers_outside_their_widgets_bounds_are_refused_and_left_at_default(param, value, why):
    at = start(**{param: value})
    assert f"`{param}` (" in refused(at) and why in refused(at)
    assert state_of(at).replicates == 1000 and state_of(at).epsilon == 1.0
    assert state_of(at).min_group_size == 2 and state_of(at).release_level == 0.95


def test_an_analyst_cannot_take_a_ledger_without_an_allowance_through_the_address(team):
    other = Ledger(None, "other-team", ZCDP(1.0))
    at = start_as(ANALYST, ledger="other-team")
    assert "`ledger` (a ledger your role may not use)" in refused(at)
    assert state_of(at).ledger_name == "default"
    allowances.set_allowance(other, ANALYST, 0.5, by=User(CURATOR, Role.CURATOR))
    at = start_as(ANALYST, ledger="other-team")
    assert state_of(at).ledger_name == "other-team"
    assert "The ledger “other-team” from the address is in use" in text(at.info)


def test_a_path_outside_the_data_root_is_refused_alike_whether_or_not_it_exists(team):
    messages = []
    for name in ("secret.csv", "absent.csv"):
        path = team.outside / name
        at = start_as(CURATOR, data="files", path=str(path))
        assert state_of(at).source is None  # the demo data stays; nothing of the file is read
        messages.append(text(at.error).replace(str(path), "PATH"))
    assert messages[0] == messages[1]
    assert f"PATH is not under {team.root}, the only folder this installation" in messages[0]
    at = start_as(CURATOR, data="files", path=str(team.root / "survey.csv"))
    assert state_of(at).source is not None  # under the root it opens


def test_a_viewer_opens_no_data_through_the_address(team):
    at = start_as("vic@example.org", data="files", path=str(team.root / "survey.csv"))
    assert "`data` (your role does not open data)" in refused(at)
    assert state_of(at).source is None


@pytest.mark.parametrize("team_mode", [False, True])
def test_a_spark_master_from_the_address_is_refused_without_connecting(team_mode, request):
    if team_mode:
        request.getfixturevalue("team")
    began = time.perf_counter()
    query = {"data": "spark", "master": "spark://10.255.255.1:7077", "table": "people"}
    at = start_as(CURATOR, **query) if team_mode else start(**query)
    assert time.perf_counter() - began < 10  # no connection tried (the issue saw 90 s)
    message = text(at.error)
    if team_mode:
        assert "is not one this installation connects to (its team file's `spark_masters`: " \
            "local[1])" in message  # fmt: skip
    else:
        assert "came from the address, not from you" in message
    assert state_of(at).source is None
