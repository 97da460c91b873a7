"""Browser test of a governed budget: the people's loss in the sidebar, a raise typed and changed
twice then submitted with a double click (recorded once), a new ledger refused for released data
until a curator raises the people's total with a reason, a refresh mid-flow, and the audit trail
downloaded and verified. Screenshots of each step."""

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from dpcore.foundations.ledger import Ledger, verify_audit, verify_ledger_file
from tests.e2e.helpers import (
    commit_release,
    downloaded_text,
    open_app,
    open_page,
    save_screen,
    settle,
    sidebar_remaining,
)

VIEWPORT = {"width": 1280, "height": 900}


def sidebar(page: Page):
    return page.get_by_test_id("stSidebar")


def open_expander(page: Page, label: str) -> None:
    page.get_by_test_id("stExpander").filter(has_text=label).locator("summary").click()
    settle(page)


def fill(page: Page, label: str, value: str) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Tab")  # outside a form, a text box's value reaches the app on blur


def start_new_ledger(page: Page, name: str, raise_reason: str | None = None) -> None:
    """On the Budget page, start the ledger ``name``: for other data, or with ``raise_reason``
    for the data already released on, raising its people's total."""
    open_expander(page, "Start a new ledger, or raise this one's total")
    new_form = page.get_by_test_id("stForm").filter(has_text="Start a new ledger")
    new_form.get_by_label("Name", exact=True).fill(name)
    if raise_reason is not None:
        new_form.get_by_text("already released on: raise its people's total").click()
        new_form.get_by_label("Reason for the raise (recorded with it)").fill(raise_reason)
    new_form.get_by_text("I confirm: start a new ledger").click()
    new_form.get_by_role("button", name="Start new ledger").click()


def name_the_release(page: Page, label: str) -> None:
    """Open the Release page and give the release the name ``label``."""
    open_page(page, "Release")
    fill(page, "Name of the release", label)
    settle(page)


@pytest.mark.e2e
def test_a_governed_budget_in_the_browser(page: Page, fresh_app_url: str, tmp_path: Path):
    open_app(page, fresh_app_url, VIEWPORT)
    open_page(page, "Release")
    commit_release(page)
    expect(sidebar(page).get_by_text("Lost in all by the people of")).to_contain_text(
        "ε = 1 (pure DP) (ρ = 0.5 in zCDP), over 1 release under ledger “default”"
    )

    open_page(page, "Budget")
    open_expander(page, "Start a new ledger, or raise this one's total")
    raise_form = page.get_by_test_id("stForm").filter(has_text="Raise the total of")
    amount = raise_form.get_by_label("Raise by ρ (zCDP)")
    for value in ("3", "0.5"):  # changed twice in a row; the last one counts
        amount.fill(value)
    raise_form.get_by_label("Reason (recorded with the raise)").fill("a second study, agreed")
    raise_form.get_by_label("Type the ledger's name (default) to confirm").fill("default")
    raise_form.get_by_role("button", name="Raise the total").dblclick()
    expect(page.get_by_text("Raised the total of “default” by ρ = 0.5 (zCDP)")).to_be_visible()
    settle(page)
    expect(sidebar_remaining(page)).to_have_text("2 of 2.5")
    save_screen(page, "budget-raised", VIEWPORT)

    # A new ledger "for other data" while the released demo is in use: its releases are refused.
    start_new_ledger(page, "fresh start")
    expect(page.get_by_text("Started “fresh start”")).to_be_visible()
    name_the_release(page, "Hours again")
    expect(page.get_by_text("Released on under another ledger.")).to_be_visible()
    expect(page.get_by_role("button", name="Commit release")).to_be_disabled()
    save_screen(page, "release-refused-elsewhere", VIEWPORT)

    page.reload()  # a refresh mid-flow: a new session, the same ledger file
    settle(page)
    open_page(page, "Budget")
    start_new_ledger(page, "second study", raise_reason="owner agreed")
    expect(page.get_by_text("its people's total rose by ρ = 2 (zCDP)")).to_be_visible()
    name_the_release(page, "Hours again")
    commit_release(page)
    expect(sidebar(page).get_by_text("Lost in all by the people of")).to_contain_text(
        "ε = 2 (pure DP) (ρ = 1 in zCDP), over 2 releases under ledgers “default” and "
        "“second study”"
    )

    open_page(page, "Budget")
    open_expander(page, "Audit trail: every release, raise and approval")
    save_screen(page, "budget-audit-trail", VIEWPORT)
    trail = downloaded_text(page, "Audit trail (CSV)")
    assert verify_audit(trail).ok and "content:" not in trail
    assert trail.count('"raise"') == 1 and "a second study, agreed" in trail  # one raise
    assert verify_ledger_file(tmp_path / "ledger.sqlite").ok
    assert len(Ledger.open(tmp_path / "ledger.sqlite", "fresh start").history()) == 0
