"""Bounds found privately for the mean, as a user sets them on the Estimator page and releases
them (AppTest layer): every new widget changed at least twice, its cost shown before the commit,
refusals said without a traceback, and the release publishing the bounds it found."""

from __future__ import annotations

import json

from dpcore.analyses.mean import MeanSettings
from dpcore.foundations.accounting import PureDP
from tests.app.helpers import (
    charts,
    commit_once,
    errors,
    exact_sizes_public,
    go,
    release_review,
    settings_of,
    start,
    state_of,
    text,
    values,
)


def public_sizes_on_estimator():
    """The Estimator page with group sizes treated as public and the data's counts declared
    public (sizes are private by default, issue 37: then the bounds aim at a share of values,
    tested below)."""
    return go(exact_sizes_public(start()), "estimator")


def private_bounds_on_estimator():
    """The Estimator page with bounds found privately in the search range [0, 1000]."""
    at = public_sizes_on_estimator()
    at.radio(key="mean.bounds_source").set_value("private").run()
    at.number_input(key="mean.clip_high.search").set_value(1000.0).run()
    assert not at.exception and not at.main.error, errors(at)
    return at


def test_choosing_private_bounds_shows_the_search_range_the_cost_and_the_aim():
    at = public_sizes_on_estimator()
    # Back and forth: typed, private, typed, private; the typed bounds' widgets come back.
    for source in ("private", "typed", "private"):
        at.radio(key="mean.bounds_source").set_value(source).run()
        assert not at.exception and not at.main.error, errors(at)
        searching = source == "private"
        assert bool(at.number_input(key="mean.clip_high.search")) if searching else True
        assert ("Lower bound L" in [n.label for n in at.number_input]) != searching
    at.number_input(key="mean.clip_high.search").set_value(1000.0).run()
    info = text(at.main.info)
    assert "public candidates, log-spaced within [0, 1000]" in info
    assert "Cost:** ε = 0.2 (pure DP) of the release's ε = 1 (pure DP)" in info
    assert "the means run at ε = 0.8 (pure DP)" in info
    assert "values beyond each bound" in info
    # The estimator's own line says the split once, without nested brackets.
    assert (
        "Each release will use ε = 1 (pure DP): ε = 0.2 of it finds the bounds, the means run at "
        "ε = 0.8. Set the budget on the Budget page."
    ) in text(at.main.caption)
    assert "bounds found privately within the public search range [0, 1000]" in text(
        at.main.markdown
    )


def test_the_share_the_scope_and_the_aim_each_change_twice():
    at = private_bounds_on_estimator()
    for share in (0.3, 0.1):
        at.select_slider(key="mean.bounds_fraction").set_value(share).run()
        assert settings_of(at, MeanSettings).bounds_fraction == share
        assert f"the means run at ε = {1 - share:g} (pure DP)" in text(at.main.info)
    for scope in ("per_group", "pooled"):
        at.radio(key="mean.bounds_scope").set_value(scope).run()
        assert settings_of(at, MeanSettings).bounds_scope == scope
        assert not at.main.error, errors(at)
    at.radio(key="mean.bounds_scope").set_value("per_group").run()
    assert "find one range together" in text(at.main.caption)  # the race × sex groups are small
    for tail in (0.01, 0.0):
        at.selectbox(key="mean.bounds_tail").set_value(tail).run()
        assert settings_of(at, MeanSettings).bounds_tail == tail
        aim = "1.0% of the values beyond each bound" if tail else "values beyond each bound in"
        assert aim in text(at.main.info)


def test_the_preview_shows_the_bounds_a_simulated_release_found():
    at = private_bounds_on_estimator()
    [table] = [d.value for d in at.main.dataframe if "bounds found (simulated)" in d.value]
    found = table["bounds found (simulated)"]
    assert len(set(found)) == 1  # one range for everyone
    low, high = json.loads(found.iloc[0])
    assert 0 <= low < 20 and 60 < high < 200


def test_private_sizes_need_a_share_and_coinpress_is_refused_without_a_traceback():
    at = private_bounds_on_estimator()
    at.checkbox(key="mean.n_public").uncheck().run()
    assert "choose the share of values to leave beyond each bound" in errors(at)
    assert not any("Automatic" in o for o in at.selectbox(key="mean.bounds_tail").options)
    at.selectbox(key="mean.bounds_tail").set_value("1% of the values").run()
    assert not at.main.error, errors(at)
    at.checkbox(key="mean.n_public").check().run()
    at.radio(key="mean.estimator").set_value("coinpress").run()
    assert not at.exception
    assert "CoinPress narrows its own range" in errors(at)
    at.radio(key="mean.estimator").set_value("laplace").run()
    assert not at.main.error, errors(at)


def test_a_release_with_bounds_found_privately_says_so_and_publishes_them():
    at = private_bounds_on_estimator()
    go(at, "budget")
    review = release_review(at)
    assert "Bounds:** found privately on the whole population" in review
    assert "the means run at" in review
    ledger, record = commit_once(at)
    payload = record.payload
    assert payload["metadata"]["plan"]["bounds"]["search_range"] == [0.0, 1000.0]
    for row in payload["outputs"]:
        assert row["clip_low"] <= row["estimate"] <= row["clip_high"]
    # The release's whole cost is the Budget page's ε, the bounds' share included.
    assert record.cost == PureDP(state_of(at).epsilon)
    assert ledger.remaining() == {"rho": ledger.total.rho - state_of(at).epsilon ** 2 / 2}


def test_the_compare_page_shows_what_the_found_bounds_cost_beside_the_typed_range():
    at = private_bounds_on_estimator()
    go(at, "compare")
    assert not at.main.error, errors(at)
    [cost] = [c for c in charts(at) if "bounds found" in c["layout"]["title"]["text"]]
    typed, found = cost["data"]
    assert typed["name"] == "Typed range [0, 1000]" and found["name"].startswith("Found privately")
    # Every group's error is smaller with the found bounds: the typed range's noise is 10× wider.
    assert all(f < t for f, t in zip(values(found["y"]), values(typed["y"]), strict=True))
    summary = text(at.main.markdown)
    assert "the typed range's noise gives an error of" in summary
    for budget in (0.2, 2.0):  # the section follows the budget slider
        at.select_slider(key="compare.budget.pure").set_value(budget).run()
        assert not at.main.error, errors(at)
        [moved] = [c for c in charts(at) if "bounds found" in c["layout"]["title"]["text"]]
        assert values(moved["data"][1]["y"])[0] != values(found["y"])[0]


def test_the_plan_page_chooses_the_split_and_the_adopt_button_takes_it():
    at = private_bounds_on_estimator()
    go(at, "plan")
    assert not at.main.error, errors(at)
    split = [m.value for m in at.main.markdown if m.value.startswith("**How the budget splits:**")]
    assert split and "finding the bounds" in split[0] and "the means" in split[0]
    assert "The planner split the budget" in text(at.main.caption)
    [adopt] = [b for b in at.button if b.key == "plan.adopt_budget"]
    assert adopt.label.endswith("and this split")
    adopt.click().run()
    assert not at.exception
    planned = float(split[0].split("**How the budget splits:** ")[1].split("%")[0]) / 100
    assert settings_of(at, MeanSettings).bounds_fraction == planned
    # A new target plans again, still with both parts shown.
    [target_input] = [n for n in at.number_input if n.label.startswith("Within ±")]
    for target in (2.0, 0.5):
        at.number_input(key=target_input.key).set_value(target).run()
        assert not at.main.error, errors(at)
        assert any(m.value.startswith("**How the budget splits:**") for m in at.main.markdown)
