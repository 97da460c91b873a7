"""Browser test: hostile files, round 2 (issue 38), uploaded one after another on the Data page as
a user would: each says what reading changed or why it was refused; decimal commas are read once
the box is ticked; and a group label written as markdown and HTML is shown as text on the
Compare page, neither fetching an image nor making a link (screenshots: hostile-*.png)."""

import unicodedata

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import choose_hours_by_race, open_app, open_page, save_screen, settle

VIEWPORT = {"width": 1280, "height": 720}
BEACON = "![x](http://host/beacon.png) [Verify your account](http://evil.example/)"
LINK = '<a href="http://evil.example/">click here</a>'


def upload(page: Page, tmp_path, name: str, data: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(path)


@pytest.mark.e2e
def test_hostile_files_in_a_row_and_a_markup_label(page: Page, app_url: str, tmp_path):
    open_app(page, app_url, VIEWPORT)
    notes = page.get_by_test_id("stAlertContentInfo")

    upload(page, tmp_path, "joined.csv", "g,x\nb,1\n\ufeffb,2\n".encode())
    expect(page.get_by_text("Using “joined.csv”")).to_be_visible()
    expect(notes.filter(has_text="byte-order mark")).to_have_count(1)
    save_screen(page, "hostile-1-byte-order-marks", VIEWPORT)

    upload(page, tmp_path, "inf.csv", b"g,x\na,inf\nb,1e400\nc,5\n")
    expect(notes.filter(has_text="Infinite values were read as missing values")).to_have_count(1)
    save_screen(page, "hostile-2-infinities", VIEWPORT)

    nfd = unicodedata.normalize("NFD", "café")
    upload(page, tmp_path, "cafe.csv", f"café,{nfd}\n1,2\n".encode())
    expect(page.get_by_text("different Unicode characters that look the same")).to_be_visible()
    expect(page.get_by_text("Still using “inf.csv”")).to_be_visible()
    save_screen(page, "hostile-3-unicode-names-refused", VIEWPORT)

    upload(page, tmp_path, "prices.csv", b"item;price\na;3,25\nb;-0,5\nc;12\n")
    expect(notes.filter(has_text="cells with a decimal comma")).to_have_count(1)
    page.get_by_text("Numbers in my file use decimal commas").click()
    expect(notes.filter(has_text="cells with a decimal comma")).to_have_count(0)
    save_screen(page, "hostile-4-decimal-commas-read", VIEWPORT)
    page.get_by_text("Numbers in my file use decimal commas").click()  # back to points
    expect(notes.filter(has_text="cells with a decimal comma")).to_have_count(1)
    settle(page)  # the file is read again before the next one comes

    rows = [f'"{BEACON}",{h}' for h in (40, 35)] + [f"'{LINK}',{h}" for h in (50, 45, 30)]
    rows += [f"Plain,{h}" for h in (20, 25, 38, 41)]
    upload(page, tmp_path, "labels.csv", ("race,hours_per_week\n" + "\n".join(rows)).encode())
    expect(page.get_by_text("Using “labels.csv”")).to_be_visible()
    choose_hours_by_race(page, "hostile-5-markup-labels-data", VIEWPORT)
    open_page(page, "Compare")
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("Verify your account", exact=False).first).to_be_visible()
    expect(main.locator("img[src*='beacon']")).to_have_count(0)  # no image fetched
    expect(main.locator("a[href*='evil.example']")).to_have_count(0)  # no link, in text or chart
    save_screen(page, "hostile-6-markup-labels-compare", VIEWPORT)
