"""Browser test: a messy spreadsheet export uploaded on the Data page, as a user would (issue
15): the page says which columns hold numbers written as text and how to fix them, and what
reading changed; a refused file keeps the table in use (screenshots: upload-*.png)."""

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import open_app, open_page, save_screen

VIEWPORT = {"width": 1280, "height": 720}

# A survey exported from a spreadsheet with a European locale: semicolons, decimal commas,
# currency amounts, an id beyond 64 bits, CRLF line ends and a byte-order mark.
MESSY_EXPORT = "\ufeff" + "\r\n".join(
    ["household_id;region;income;weight;hours"]
    + [f"9{i:019d};{region};${1000 + 37 * i:,}.50;{1 + i % 7},25;{20 + i % 40}"
       for i, region in enumerate(["North", "South", "East", "West"] * 30)]
) + "\r\n"  # fmt: skip


@pytest.mark.e2e
def test_a_messy_export_loads_with_its_problems_explained(page: Page, app_url: str, tmp_path):
    open_app(page, app_url, VIEWPORT)
    upload = page.get_by_test_id("stFileUploaderDropzoneInput")
    messy = tmp_path / "survey export.csv"
    messy.write_text(MESSY_EXPORT, encoding="utf-8")
    upload.set_input_files(messy)
    expect(page.get_by_text("Using “survey export.csv”")).to_be_visible()
    notes = page.get_by_test_id("stAlertContentInfo")
    expect(notes.filter(has_text="household_id held whole numbers beyond")).to_have_count(1)
    expect(notes.filter(has_text="cells with a currency sign")).to_have_count(1)
    # The cells read as written, not as a formula between two dollar signs.
    expect(notes.filter(has_text="row 1 “$1,000.50”, row 2 “$1,037.50”")).to_have_count(1)
    # The sidebar names the upload on the same visit, not the demo data it replaced.
    expect(page.get_by_test_id("stSidebar").get_by_text("survey export.csv")).to_be_visible()
    expect(notes.filter(has_text="cells with a decimal comma")).to_have_count(1)
    save_screen(page, "upload-messy-export", VIEWPORT)

    # The Strata page offers the upload's columns, none chosen yet (not the demo's race × sex).
    open_page(page, "Strata")
    save_screen(page, "upload-strata", VIEWPORT)
    expect(page.get_by_placeholder("Choose one or more columns")).to_be_visible()
    expect(page.get_by_text("race", exact=True)).to_have_count(0)
    # Nothing chosen yet is a starting state: a hint, no red error.
    expect(page.get_by_text("Choose one or more grouping columns above")).to_be_visible()
    expect(page.get_by_test_id("stAlertContentError")).to_have_count(0)
    open_page(page, "Data")

    # A file that cannot be read leaves the messy export in use, with the reason.
    broken = tmp_path / "broken.csv"
    broken.write_bytes(b"a,b\n1,2\n3,4,5\n")
    upload.set_input_files(broken)
    expect(page.get_by_text("line 3 has 3 fields")).to_be_visible()
    expect(page.get_by_text("Still using “survey export.csv”")).to_be_visible()
    save_screen(page, "upload-refused", VIEWPORT)
