"""App tests of the project's ledger: chosen, started and raised on the Budget page, named in the
sidebar with its people's loss in all, bound to the data of its first release (the Release page
asks before charging it for other data, and refuses data another ledger released on), and its
audit trail listed and downloaded."""

from __future__ import annotations

import functools

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.analyses.mean import MeanSettings
from dpcore.foundations.datasets import DEMO_DATASET_NAME, load_demo
from dpcore.foundations.ledger import Ledger
from strata_ui.roles import single_user
from tests.app.helpers import (
    change_settings,
    commit,
    commit_allowed,
    declare_exact_counts,
    go,
    ledgers,
    sidebar_left,
    start,
    state_of,
    submit,
    text,
    upload,
)

SWITCH = "ledger.switch"
OTHER_DATA = "release.other_data"


def sidebar(at: AppTest) -> str:
    return text([*at.sidebar.markdown, *at.sidebar.caption])


def start_ledger(at: AppTest, name: str, rho: float | None = None) -> AppTest:
    at.text_input(key="ledger.new_name").input(name)
    if rho is not None:
        at.number_input(key="ledger.new_rho").set_value(rho)
    at.checkbox(key="ledger.new_confirm").check()
    return submit(at, "Start new ledger")


@functools.cache
def survey_csv() -> bytes:
    """A file with the demo's columns (here a sample of its rows)."""
    return load_demo().sample(3000, random_state=1).to_csv(index=False).encode()


def upload_survey(at: AppTest) -> AppTest:
    """Upload :func:`survey_csv` and plan the mean of hours by sex on it, as a user would."""
    upload(go(at, "data"), survey_csv(), "survey.csv")
    change_settings(at, MeanSettings, value="hours_per_week", clip_low=0.0, clip_high=100.0)
    state_of(at).strata_columns = ["sex"]
    return at


def test_the_sidebar_names_the_ledger_and_switching_it_sticks_back_and_forth():
    at = start("budget")
    assert "Project ledger: **default**" in sidebar(at)
    assert "Nothing released from it yet." in sidebar(at)
    start_ledger(at, "survey 2026")
    assert "Started “survey 2026”" in text(at.success)
    # the sidebar says the new ledger is in use, and does not ask to choose or start one
    assert "Project ledger: **survey 2026**" in sidebar(at)
    assert "Nothing released from it yet." in sidebar(at)
    assert "Choose or start a ledger" not in sidebar(at)
    for name in ("default", "survey 2026", "default", "survey 2026"):
        at.selectbox(key=SWITCH).select(name).run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.selectbox(key=SWITCH).value == name
        assert f"Project ledger: **{name}**" in sidebar(at)
    go(at, "release")  # the choice holds on every page, and releases charge it
    assert "Left in “survey 2026”" in text(at.main.markdown)
    go(at, "budget")
    assert at.selectbox(key=SWITCH).value == "survey 2026"


def test_overspend_in_a_new_tiny_ledger_is_refused_with_the_numbers():
    at = start_ledger(start("budget"), "tiny", rho=0.01)
    assert ledgers()["tiny"].total.components() == {"rho": 0.01}
    assert at.selectbox(key=SWITCH).value == "tiny"  # the session now uses the new ledger
    assert sidebar_left(at) == "0.01 of 0.01"
    go(at, "release")
    assert "**Not affordable:** “tiny” has only **ρ = 0.01** left." in text(at.main.markdown)

    # Ticking the box does not enable Commit, and the page says why.
    assert not commit_allowed(at)
    assert "Commit is off: “tiny” cannot afford this plan." in text(at.main.caption)
    assert {name: s.releases for name, s in ledgers().items()} == {"default": 0, "tiny": 0}

    # Switching back charges the default ledger again.
    go(at, "budget").selectbox(key=SWITCH).select("default").run()
    assert sidebar_left(at) == "2 of 2"
    go(at, "release")
    assert "Left in “default”: **ρ = 2** now" in text(at.main.markdown)


def test_a_new_ledger_needs_the_tick_a_name_and_a_name_not_taken():
    at = start("budget")
    at.text_input(key="ledger.new_name").input("second")
    submit(at, "Start new ledger")
    assert "Nothing started: tick the confirmation box first." in text(at.main.error)
    assert set(ledgers()) == {"default"}

    at.checkbox(key="ledger.new_confirm").check()
    at.text_input(key="ledger.new_name").input("default")
    submit(at, "Start new ledger")
    assert "a ledger called “default” already exists" in text(at.main.error)

    at.text_input(key="ledger.new_name").input("   ")
    submit(at, "Start new ledger")
    assert "give the new ledger a name" in text(at.main.error)
    assert set(ledgers()) == {"default"}
    assert at.selectbox(key=SWITCH).value == "default"


def raise_total(at: AppTest, typed: str, reason: str, rho: float | None = None) -> AppTest:
    if rho is not None:
        at.number_input(key="ledger.raise_rho").set_value(rho)
    at.text_area(key="ledger.raise_reason").input(reason)
    at.text_input(key="ledger.raise_name").input(typed)
    return submit(at, "Raise the total")


def test_a_raise_needs_the_exact_name_and_a_reason_then_is_recorded_and_nothing_is_reset():
    at = go(commit(start("release")), "budget")
    assert not [b for b in at.button if b.label == "Archive and reset"]  # no reset any more
    raise_total(at, "Default", "second study")
    assert "Nothing raised: type the ledger's name exactly (default) to confirm." in text(
        at.main.error
    )
    raise_total(at, "default", "   ")
    assert "Nothing raised: give the reason for the raise" in text(at.main.error)
    assert Ledger.open(None, "default").granted().components() == {"rho": 2.0}

    for rho, granted in ((1.0, 3.0), (0.5, 3.5)):  # twice in a row, each recorded
        raise_total(at, "default", "the owner agreed to a second study", rho)
        assert "Raised the total of “default” by ρ = " in text(at.success)
        assert sidebar_left(at) == f"{granted - 0.5:g} of {granted:g}"
    ledger = Ledger.open(None, "default")
    assert [r.entry for r in ledger.records()] == ["start", "release", "raise", "raise"]
    assert {r.reason for r in ledger.records() if r.entry == "raise"} == {
        "the owner agreed to a second study"
    }
    assert len(ledger.history()) == 1 and set(ledgers()) == {"default"}  # nothing archived


def test_a_new_ledger_for_released_data_is_refused_until_a_curator_raises_with_a_reason():
    at = go(commit(start("release")), "budget")  # the demo is released on under “default”
    assert "Lost in all by the people of “UCI Adult (demo)”: **ε = 1 (pure DP)**" in sidebar(at)
    start_ledger(at, "fresh start")  # “for other data”, the default answer
    go(at, "release")
    assert "This plan was released on" in text(at.main.info)  # the same plan: the same release
    at.text_input(key="release.label").input("Hours again").run()  # another plan
    refusal = text(at.main.error)
    assert "Released on under another ledger." in refusal
    assert "“UCI Adult (demo)” was released on under ledger “default”" in refusal
    assert "switch to ledger “default” on the Budget page" in refusal
    assert not commit_allowed(at)
    assert Ledger.open(None, "fresh start").history() == []

    go(at, "budget")
    at.text_input(key="ledger.new_name").input("second study")
    at.radio(key="ledger.new_purpose").set_value(DEMO_DATASET_NAME)
    at.checkbox(key="ledger.new_confirm").check()
    submit(at, "Start new ledger")
    assert "give the reason for raising the total" in text(at.main.error)
    assert "second study" not in ledgers()
    at.text_area(key="ledger.new_reason").input("the owner agreed to a second study")
    submit(at, "Start new ledger")
    assert "its people's total rose by ρ = 2 (zCDP), recorded with your reason" in text(at.success)
    commit(go(at, "release").run())
    assert "Released and recorded" in text(at.success)
    assert (
        "**ε = 2 (pure DP)** (ρ = 1 in zCDP), over 2 releases under ledgers “default” and "
        "“second study”; granted them in all: ρ = 4 (zCDP)."
    ) in sidebar(at)
    [join] = [r for r in Ledger.open(None, "second study").records() if r.entry == "join"]
    assert (join.actor, join.reason) == (single_user().actor, "the owner agreed to a second study")


def test_the_audit_trail_lists_and_downloads_the_peoples_history_without_their_identity():
    at = go(commit(start("release")), "budget")
    raise_total(at, "default", "second study")
    [table] = [d.value for d in at.dataframe if "what" in d.value]
    assert list(table["what"]) == ["ledger started", "release", "raise"]
    assert list(table["reason"]) == ["", "", "second study"]
    downloads = {b.label: b for b in at.get("download_button")}
    assert {"Audit trail (CSV)", "Audit trail (JSON)"} <= set(downloads)
    identity = Ledger.open(None, "default").datasets()[0].identity
    assert identity.startswith("content:")
    page = text([*at.main.markdown, *at.main.caption]) + str(table.to_dict())
    assert identity.removeprefix("content:")[:12] not in page


def test_a_release_on_a_second_file_waits_for_the_tick_that_the_ledger_covers_both():
    at = commit(start("release"))
    assert f"The budget of “{DEMO_DATASET_NAME}”." in sidebar(at)
    upload_survey(at)
    go(at, "release")
    warning = text(at.main.warning)
    assert "Other data than this ledger's." in warning
    assert "this release is on “survey.csv”" in warning
    assert "start a new ledger for it on the Budget page" in warning

    # Commit stays off, with the reason, until the box is ticked; unticking turns it off again.
    assert not commit_allowed(at)
    assert "Commit is off: this plan's data is not the data of “default” (see above)." in text(
        at.main.caption
    )
    for ticked in (True, False, True):
        box = at.checkbox(key=OTHER_DATA)
        (box.check() if ticked else box.uncheck()).run()
        assert at.button(key="release.commit").disabled is not ticked
    assert len(Ledger.open(None, "default").history()) == 1  # nothing spent meanwhile

    at.button(key="release.commit").click().run()
    assert "Released and recorded" in text(at.success)
    ledger = Ledger.open(None, "default")
    assert len(ledger.history()) == 2 and ledger.remaining() == {"rho": 1.0}
    assert [d.name for d in ledger.datasets()][1] == "survey.csv"
    assert "and “survey.csv”." in sidebar(at)


def test_a_new_ledger_for_the_second_file_takes_it_without_asking():
    at = commit(start("release"))
    upload_survey(at)
    start_ledger(go(at, "budget"), "survey")
    go(at, "release")
    assert "Other data than this ledger's." not in text(at.main.warning)
    assert commit_allowed(at)
    at.button(key="release.commit").click().run()
    assert [d.name for d in Ledger.open(None, "survey").datasets()] == ["survey.csv"]
    assert len(Ledger.open(None, "default").datasets()) == 1


@pytest.mark.parametrize(
    ("analysis", "kind", "cost"),
    [
        ("mean", "pure", "ε = 1 (pure DP); the ledger counts ε-DP as ρ = ε²/2, so the ledger is "
         "charged **ρ = 0.5**. “default” has room for **4 more releases**"),
        ("gvdp", "pure", "ρ = 0.5 (zCDP), that is (ε = 5.22, δ = 1e-06)-DP; the ledger is charged "
         "**ρ = 0.5**. “default” has room for **4 more releases**"),
        ("synth", "zcdp", "ε = 1 (pure DP); the ledger counts ε-DP as ρ = ε²/2, so the ledger is "
         "charged **ρ = 0.5**. “default” has room for **4 more releases**"),
        ("sample", "pure", "ε = 1 (pure DP); the ledger counts ε-DP as ρ = ε²/2, so the ledger "
         "is charged **ρ = 0.5**. “default” has room for **4 more releases**"),
        # The ratio's Gaussian noise is calibrated to (ε, δ) = (1, 1e-6): its exact zCDP cost is
        # far below ε²/2, so the same ε buys far more of its releases.
        ("ratio", "pure", "ρ = 0.00319528 (zCDP), that is (ε = 0.339, δ = 1e-06)-DP; the ledger "
         "is charged **ρ = 0.00319528**. “default” has room for **625 more releases**"),
        ("ratio", "zcdp", "ρ = 0.5 (zCDP), that is (ε = 5.22, δ = 1e-06)-DP; the ledger is "
         "charged **ρ = 0.5**. “default” has room for **4 more releases**"),
    ],
)  # fmt: skip
def test_the_budget_page_prices_one_release_of_each_analysis_in_epsilon_and_rho(
    analysis, kind, cost
):
    """At the defaults a fresh ledger takes four releases of every analysis, and the Budget
    page says what one costs in ε and in the ledger's ρ, in the same words for each."""
    at = start()
    if analysis == "gvdp":  # it treats group sizes as public: the data's counts, declared so
        declare_exact_counts(at)
    state_of(at).analysis, state_of(at).budget_kind = analysis, kind
    go(at, "budget")
    assert f"**One release costs** {cost}" in text(at.main.markdown)
