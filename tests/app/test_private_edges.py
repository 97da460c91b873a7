"""Bucket edges found privately on the Strata page (AppTest layer): a release of a numeric
column's quantiles, its cost shown before the commit, the ledger charged once, and its edges
filling the column's edges, labelled as found privately."""

from __future__ import annotations

from dpcore.foundations.ledger import Ledger
from strata_ui import allowances
from strata_ui.roles import Role, User
from tests.app.helpers import errors, go, start, state_of, text
from tests.app.team import ANALYST, CURATOR, start_as

BASE = "strata.private_edges.age.demo"


def strata_with_age():
    at = go(start(), "strata")
    at.multiselect(key="strata.columns.demo").set_value(["sex", "age"]).run()
    assert not at.exception
    return at


def test_the_edges_are_released_once_and_fill_the_columns_edges():
    at = strata_with_age()
    assert "needs" not in errors(at)
    for buckets in (3, 4):
        at.slider(key=f"{BASE}.buckets").set_value(buckets).run()
        assert f"{buckets - 1} bucket edges of `age`" in text(at.main.markdown)
    at.number_input(key=f"{BASE}.high").set_value(150.0).run()
    for cost in (0.5, 0.2):
        at.select_slider(key=f"{BASE}.cost").set_value(cost).run()
        assert f"**Cost:** ε = {cost:g} (pure DP), charged once to the ledger" in text(
            at.main.markdown
        )
    release = at.button(key=f"{BASE}.release")
    assert release.disabled  # not before the box is ticked
    at.checkbox(key=f"{BASE}.confirm").check().run()
    at.button(key=f"{BASE}.release").click().run()
    assert not at.exception and not at.main.error, errors(at)
    edges = state_of(at).bucket_edges["age"]
    assert len(edges) == 3 and edges == sorted(edges) and 20 < edges[0] < edges[-1] < 60
    assert at.text_input(key="strata.edges.age.demo").value == ", ".join(f"{e:g}" for e in edges)
    assert "Found privately in the release “Bucket edges of age”" in text(at.main.caption)
    assert f"Edges released: {', '.join(f'{e:g}' for e in edges)}." in text(at.main.success)
    assert at.sidebar.metric[0].value == "1.98 of 2"  # the sidebar shows the spend (ρ = 0.02)
    [record] = Ledger.open(None, "default").history()
    assert record.label == "Bucket edges of age" and record.cost.epsilon == 0.2
    # The groups follow the edges: four age buckets × two sexes.
    assert not at.main.error, errors(at)


def test_a_search_range_that_is_not_one_is_refused_and_spends_nothing():
    at = strata_with_age()
    at.number_input(key=f"{BASE}.high").set_value(-5.0).run()
    assert "The search range must run from a lower to a higher value" in errors(at)
    assert not at.exception
    assert Ledger.open(None, "default").history() == []


def test_an_analyst_releases_edges_only_within_an_allowance_and_the_record_names_them(team):
    """The edges are a release like the Release page's: an analyst commits them only within
    the allowance a curator gave, and the ledger records who did."""
    analyst = start_as(ANALYST, "strata")
    analyst.multiselect(key="strata.columns.demo").set_value(["sex", "age"]).run()
    analyst.number_input(key=f"{BASE}.high").set_value(150.0).run()
    analyst.checkbox(key=f"{BASE}.confirm").check().run()
    assert "has no allowance on the ledger “default”" in text(analyst.caption)
    assert analyst.button(key=f"{BASE}.release").disabled
    ledger, curator = Ledger.open(None, "default"), User(CURATOR, Role.CURATOR)
    allowances.set_allowance(ledger, ANALYST, 0.01, by=curator)  # ε = 0.2 costs ρ = 0.02
    analyst.run()
    assert "exceeds your allowance on “default”" in text(analyst.caption)
    assert analyst.button(key=f"{BASE}.release").disabled and ledger.history() == []
    allowances.set_allowance(ledger, ANALYST, 0.5, by=curator)
    analyst.run()
    analyst.button(key=f"{BASE}.release").click().run()
    assert not analyst.exception and not analyst.main.error, errors(analyst)
    [record] = ledger.history()
    assert record.label == "Bucket edges of age"
    assert allowances.actors_of(ledger) == {record.id: ANALYST}
