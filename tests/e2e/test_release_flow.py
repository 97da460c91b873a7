"""Browser test of the whole release flow: demo data → strata → estimator → budget → release →
download, checking the downloaded file and that the budget dropped by exactly the cost, once."""

import io
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.ledger import Ledger
from strata_ui.constants import DEFAULT_LEDGER_NAME
from tests.e2e.helpers import (
    commit_release,
    downloaded_text,
    open_app,
    open_page,
    screenshot,
    sidebar_remaining,
)

VIEWPORT = {"width": 1280, "height": 720}


@pytest.mark.e2e
def test_release_spends_once_and_downloads(page: Page, fresh_app_url: str, tmp_path: Path):
    open_app(page, fresh_app_url, VIEWPORT)
    for title in ("Strata", "Estimator", "Budget"):
        open_page(page, title)
    # The Budget page's ε is a number box (issue 37), at its default of 1.
    expect(page.get_by_role("spinbutton", name="ε per release")).to_have_value("1")
    open_page(page, "Release")
    expect(sidebar_remaining(page)).to_have_text("2 of 2")

    commit_release(page)
    # ε = 1 (pure DP) is charged as ρ = ε²/2 = 0.5 against the ρ = 2 ledger.
    expect(sidebar_remaining(page)).to_have_text("1.5 of 2")

    text = downloaded_text(page, "CSV")
    assert text.startswith("# release: Mean of hours_per_week by race × sex\n")
    assert "# mechanism: OpenDP vetted samplers" in text
    table = pd.read_csv(io.StringIO(text), comment="#")
    # Group sizes are private by default (issue 37): the groups are recombined with shares of
    # the release's own noisy counts, which also decide the small groups (``flag``).
    columns = ["level", "group", "estimate", "low", "high", "noisy_share", "flag"]
    assert list(table.columns) == columns
    assert len(table) == 11  # ten race × sex groups and the whole population
    assert table["flag"].isna().all()  # every group released as itself (none merged)
    groups = table[table["level"] == "group"]
    assert groups["noisy_share"].sum() == pytest.approx(1.0)
    assert table["estimate"].between(table["low"], table["high"]).all()
    assert table["estimate"].between(0, 100).all()
    screenshot(page, "release-committed")

    # A browser refresh starts a new session on the same plan: nothing more is spent.
    page.reload()
    expect(page.get_by_text("This plan was released on")).to_be_visible()
    expect(page.get_by_role("button", name="Commit release")).to_have_count(0)

    ledger = Ledger(tmp_path / "ledger.sqlite", DEFAULT_LEDGER_NAME, ZCDP(2.0))
    assert ledger.remaining() == {"rho": 1.5}
    assert len(ledger.history()) == 1
