"""App tests of the Release page: commit once, refuse an overspend, history (ledgers are managed
on the Budget page: test_budget_ledgers.py)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.analyses.mean import MeanSettings
from dpcore.foundations.accounting import PureDP
from dpcore.foundations.ledger import Ledger
from tests.app import helpers
from tests.app.helpers import change_settings, commit, go, ledgers, sidebar_left, text

REPO = Path(__file__).resolve().parents[2]
DEFAULT_LABEL = "Mean of hours_per_week by race × sex"
DOWNLOADS = ["CSV", "JSON", "Python script"]  # the HTML report is prepared on request
RACES = ("White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other")


def start(page: str = "release") -> AppTest:
    return helpers.start(page)


def has_commit_button(at: AppTest) -> bool:
    return any(b.key == "release.commit" for b in at.button)


def downloads(at: AppTest, key: str) -> list[str]:
    """Labels of the download buttons whose widget key starts with ``key``."""
    return [d.proto.label for d in at.get("download_button") if f"-{key}." in d.proto.id]


def test_the_html_report_is_prepared_on_request_then_downloads(monkeypatch):
    """Drawing the report's image took 10.9 s with nothing on screen: the report is now a
    button that prepares it under a spinner, then a download that stays ready."""
    from strata_ui import static_image  # the image itself is tested in test_report

    monkeypatch.setattr(static_image, "render_png", lambda *args, **kwargs: None)
    at = start()
    at.checkbox(key="release.confirm").check().run()
    at.button(key="release.commit").click().run()
    prepare = at.button(key="release.current.html.prepare")
    assert prepare.label == "HTML report" and "5 to 15 s" in prepare.help
    assert "Download the HTML report" not in downloads(at, "release.current")
    prepare.click().run()
    assert not at.exception, [e.value for e in at.exception]
    for _ in range(2):  # ready at once, and still after a rerun
        assert downloads(at, "release.current")[-1] == "Download the HTML report"
        at.run()
    assert not [b for b in at.button if b.key == "release.current.html.prepare"]


def test_commit_is_confirmed_spends_the_cost_once_and_shows_the_release():
    at = start()
    assert not at.main.error, text(at.main.error)
    page = text(at.main.markdown)
    assert "mean of `hours_per_week`" in page
    assert "UCI Adult (demo), 32,561 rows" in page
    assert "race × sex — 10 groups" in page
    assert "Cost: **ε = 1 (pure DP)**, charged to the ledger as **ρ = 0.5**." in page
    assert "Left in “default”: **ρ = 2** now, **ρ = 1.5** after this release." in page

    assert at.button(key="release.commit").disabled
    assert helpers.commit_allowed(at)
    assert ledgers()["default"].releases == 0  # ticking the box spends nothing

    at.button(key="release.commit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Released and recorded: the budget was spent once." in text(at.success)
    ledger = Ledger.open(None, "default")
    [record] = ledger.history()
    assert record.cost == PureDP(1.0)
    assert ledger.remaining() == {"rho": 1.5}  # exactly ε²/2 = 0.5 of the ρ = 2 ledger
    assert sidebar_left(at) == "1.5 of 2"

    [table] = [d.value for d in at.main.dataframe if "DP estimate" in d.value.columns]
    assert list(table["group"]) == [row["group"] for row in record.payload["outputs"]]
    # Written as people read them (31,491, not 31490.6899), to the precision of each interval.
    shown = [float(value.replace(",", "")) for value in table["DP estimate"]]
    np.testing.assert_allclose(
        shown, [row["estimate"] for row in record.payload["outputs"]], rtol=1e-3, atol=0.5
    )
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    titles = [spec["layout"].get("title", {}).get("text", "") for spec in specs]
    assert f"{DEFAULT_LABEL} — DP estimates with 95% intervals" in titles
    gauge = next(spec["data"][0] for spec in specs if spec["data"][0]["type"] == "indicator")
    assert gauge["value"] == 1.5
    assert downloads(at, "release.current") == DOWNLOADS
    assert not has_commit_button(at)

    at.run()  # a rerun (or a refresh) spends nothing and shows the flash no more
    assert not at.exception
    assert not at.success
    assert "committing it again would spend nothing" in text(at.info)
    assert not has_commit_button(at)
    assert len(ledger.history()) == 1
    assert ledger.remaining() == {"rho": 1.5}


def test_a_second_session_committing_the_same_plan_spends_nothing():
    first, second = start(), start()
    second.checkbox(key="release.confirm").check().run()
    commit(first)
    second.button(key="release.commit").click().run()  # clicked after the first commit landed
    assert not second.exception, [e.value for e in second.exception]
    assert not second.main.error, text(second.main.error)
    assert "committing it again would spend nothing" in text(second.info)
    assert sidebar_left(second) == "1.5 of 2"
    assert len(Ledger.open(None, "default").history()) == 1


def test_a_budget_above_epsilon_2_is_flagged_before_the_commit_and_two_is_not():
    at = start()
    for epsilon, warned in ((5.0, True), (2.0, False), (5.0, True)):
        helpers.state_of(at).epsilon = epsilon
        at.run()
        warning = text(at.main.warning)
        assert ("A large budget for one release:** ε = 5" in warning) == warned, epsilon
    assert "e^5 ≈ 148" in text(at.main.warning)
    assert ledgers()["default"].releases == 0


def test_a_gaussian_estimator_at_an_epsilon_budget_is_charged_what_laplace_is():
    """Issue 37's one rule: at ε = 1 the Gaussian mean runs at ρ = ε²/2 = 0.5, the charge of
    the Laplace mean at ε = 1, and the page says so before the commit."""
    at = start("estimator")
    at.radio(key="mean.estimator").set_value("gaussian").run()
    go(at, "release")
    assert not at.main.error, text(at.main.error)
    page = text(at.main.markdown)
    assert "ε = 1 is charged **ρ = 0.5** (ρ = ε²/2)." in page
    assert "Cost: **ρ = 0.5 (zCDP)**" in page
    assert has_commit_button(at)


def test_bounds_out_of_order_or_missing_show_an_error_not_a_traceback():
    at = start("estimator")
    at.number_input(key="mean.clip_high").set_value(50.0).run()
    at.number_input(key="mean.clip_low").set_value(60.0).run()
    go(at, "release")
    assert (
        "The release is not ready: The lower bound L must be below the upper bound U, got L = 60 "
        "and U = 50." in text(at.main.error)
    )
    assert not has_commit_button(at)

    # A number input that starts with a value cannot be emptied, so clear the bound in the state.
    change_settings(at, MeanSettings, clip_low=None)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Enter public lower and upper bounds for the value on the Estimator page" in text(
        at.main.error
    )
    assert not has_commit_button(at)
    assert ledgers()["default"].releases == 0


def test_history_lists_both_releases_and_offers_each_for_download():
    at = commit(start())
    at.text_input(key="release.label").input("Second release").run()
    assert has_commit_button(at)  # renaming plans a new release
    commit(at)
    assert Ledger.open(None, "default").remaining() == {"rho": 1.0}  # 2 × ρ 0.5, exactly

    [history] = [d.value for d in at.main.dataframe if "release" in d.value.columns]
    assert list(history["release"]) == [DEFAULT_LABEL, "Second release"]
    assert list(history["cost"]) == ["ε = 1 (pure DP)"] * 2
    choice = at.selectbox(key="release.history.choice")
    assert [option.split(" · ")[:2] for option in choice.options] == [
        ["#3", "Second release"],  # the ledger's record numbers: #1 is its start
        ["#2", DEFAULT_LABEL],
    ]
    choice.select_index(1).run()
    assert downloads(at, "release.history.2") == DOWNLOADS
    choice = at.selectbox(key="release.history.choice")
    choice.select_index(0).run()
    assert downloads(at, "release.history.3") == DOWNLOADS


def test_private_sizes_need_public_shares_and_declared_groups_before_a_release():
    """Sizes kept private: the Estimator page lists what the Strata page must still declare,
    the Release page refuses with where to fix it, one declaration at a time, and once shares,
    a declared list and every group kept are in place the plan is releasable. (From groups
    and shares read off the data, the setting before sizes became private by default.)"""
    at = start("estimator")
    helpers.state_of(at).group_list = "data"
    helpers.declare_exact_counts(at)
    for private in (True, False, True):
        at.checkbox(key="mean.n_public").set_value(not private).run()
        warned = "group sizes kept private here" in text(at.main.warning)
        assert warned == private
    assert "declare the list of categories" in text(at.main.warning)
    go(at, "release")
    assert "Group sizes are private in this release" in text(at.main.error)
    assert not has_commit_button(at)

    go(at, "strata")
    at.multiselect(key=at.multiselect[0].key).set_value(["sex"]).run()
    at.radio(key="strata.share_source").set_value("table").run()
    helpers.state_of(at).share_table = {"Female": 0.5, "Male": 0.5}  # as typed in its editor
    go(at, "release")
    assert "declare the categories of each grouping column" in text(at.main.error)
    go(at, "strata")
    at.radio(key="strata.group_list").set_value("declared").run()
    go(at, "release")
    assert "keep every group whatever its size" in text(at.main.error)
    go(at, "strata")
    at.radio(key="strata.small_groups").set_value("keep").run()
    go(at, "release")
    assert not at.main.error, text(at.main.error)
    assert has_commit_button(at)
    assert ledgers()["default"].releases == 0


def test_shares_read_from_the_data_are_named_before_the_commit_and_public_ones_are_not():
    """The default source of the shares publishes them exactly as in the data: not DP, so the
    page says so above the commit box; a table of public shares is not announced."""
    at = go(helpers.exact_sizes_public(start()), "release")
    notice = "publishes each group's share of the rows, exactly as in the data"
    assert notice in text(at.main.warning)
    assert "give each group's exact size" in text(at.main.warning)
    go(at, "strata")
    at.radio(key="strata.share_source").set_value("table").run()
    shares = {f"{r} × {s}": 1.0 for r in RACES for s in ("Female", "Male")}
    helpers.state_of(at).share_table = shares  # as typed in its editor
    go(at, "release")
    assert not at.main.error, text(at.main.error)
    assert notice not in text(at.main.warning)
    assert has_commit_button(at)


def test_private_sizes_may_recombine_with_the_release_s_own_noisy_counts():
    """The Strata page offers the release's noisy counts as the shares' source (switched to and
    away twice); with private sizes, a declared list and every group kept, the release commits
    and publishes each group's noisy share, saying so, and no public share."""
    at = start("strata")
    change_settings(at, MeanSettings, n_public=True)
    at.multiselect(key=at.multiselect[0].key).set_value(["sex"]).run()
    at.radio(key="strata.group_list").set_value("declared").run()
    at.radio(key="strata.small_groups").set_value("keep").run()
    for source in ("noisy_counts", "data", "noisy_counts"):
        at.radio(key="strata.share_source").set_value(source).run()
        assert not at.exception, [e.value for e in at.exception]
        said = "noisy count over the sum of the noisy counts" in text(at.main.caption)
        assert said == (source == "noisy_counts")
    assert "The release's own noisy group counts" in text(at.main.success)
    go(at, "release")
    assert "treats group sizes as public and draws no counts" in text(at.main.warning)
    assert not has_commit_button(at)
    go(at, "estimator")
    at.checkbox(key="mean.n_public").set_value(False).run()
    go(at, "compare")  # the simulations recombine with noisy shares too
    go(at, "release")
    assert not at.main.error, text(at.main.error)
    assert "shares: the release's own noisy group counts" in text(at.main.markdown)
    _, record = helpers.commit_once(at)
    groups = [row for row in record.payload["outputs"] if row["level"] == "group"]
    assert all("public_share" not in row for row in groups)
    assert sum(row["noisy_share"] for row in groups) == pytest.approx(1.0)
    assert downloads(at, "release.current") == DOWNLOADS


def test_a_commit_while_another_process_holds_the_ledger_says_so_and_spends_nothing(monkeypatch):
    at = start()
    ledger = Ledger.open(None, "default")
    monkeypatch.setattr("dpcore.foundations.ledger.store.BUSY_TIMEOUT_SECONDS", 0.2)
    with contextlib.closing(sqlite3.connect(ledger.path, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")  # another process in the middle of a spend
        commit(at)
        writer.execute("ROLLBACK")
    assert "is busy: another release is being recorded in it" in text(at.main.error)
    assert "locked" not in text(at.main.error)
    assert ledger.history() == []
    assert has_commit_button(at)  # the page stays usable: commit again once it is free


def test_intervals_with_sampling_error_are_chosen_paid_for_and_stated():
    """Switch what the intervals cover twice and back; the review and the committed release
    say what they cover, and the budget is spent once, in full."""
    at = go(helpers.exact_sizes_public(start()), "release")
    for sampling in (True, False, True):
        at.radio(key="mean.sampling_error").set_value(sampling).run()
        assert not at.exception, [e.value for e in at.exception]
        review = text(at.main.markdown)
        assert ("population mean of the clipped values" in review) == sampling
        assert ("they cover the clipped sample mean, not sampling error" in review) != sampling
    for fraction in (0.3, 0.1):
        at.select_slider(key="mean.variance_fraction").set_value(fraction).run()
        assert f"took {fraction:.0%} of the budget" in text(at.main.markdown)
    assert "Cost: **ε = 1 (pure DP)**" in text(at.main.markdown)  # the same total cost

    ledger, record = helpers.commit_once(at)
    assert record.cost == PureDP(1.0)
    assert "population mean of the clipped values" in record.payload["metadata"]["intervals"]
    for row in record.payload["outputs"]:
        assert 0.0 <= row["low"] <= row["estimate"] <= row["high"] <= 100.0

    change = at.radio(key="mean.sampling_error")
    change.set_value(False).run()  # a different plan: committable again, nothing spent yet
    assert has_commit_button(at)
    assert len(ledger.history()) == 1
