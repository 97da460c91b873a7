"""Browser test: households whose members own several rows. A link (or a refresh) with the person
column waits for the file; once it is uploaded the Data page shows the person column, its
bounds and the curator's preview of what they leave out, which moves when M moves
(screenshot: person-column-preview.png)."""

from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect

from tests.app.test_person_column import NAME, households
from tests.e2e.helpers import expect_title, save_screen, settle

VIEWPORT = {"width": 1280, "height": 1100}


@pytest.mark.e2e
def test_the_person_column_comes_back_with_its_preview(page: Page, app_url: str, tmp_path):
    query = {
        "data": "upload", "file": NAME, "strata_columns": '["race", "sex"]',
        "person_column": "household", "max_groups_per_person": "2",
    }  # fmt: skip
    page.set_viewport_size(VIEWPORT)
    page.goto(f"{app_url}/?{urlencode(query)}")
    expect_title(page, "Data")
    expect(page.get_by_text(f"your file “{NAME}”")).to_be_visible()
    data = tmp_path / NAME
    data.write_bytes(households())
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(data)
    expect(page.get_by_text("Your choices for")).to_be_visible()
    expect(page.get_by_role("heading", name="Who is one person?")).to_be_visible()
    settle(page)
    left_out = page.get_by_test_id("stMetric").filter(has_text="Rows left out")
    expect(left_out).to_be_visible()
    before = left_out.get_by_test_id("stMetricValue").inner_text()

    bound = page.get_by_role("spinbutton", name="At most M rows per person in a group")
    bound.fill("2")
    bound.press("Enter")
    expect(left_out.get_by_test_id("stMetricValue")).not_to_have_text(before)
    expect(page.get_by_text("curator's view", exact=False).first).to_be_visible()
    expect(page.get_by_test_id("stAlertContentError")).to_have_count(0)
    page.get_by_role("heading", name="Who is one person?").scroll_into_view_if_needed()
    save_screen(page, "person-column-preview", VIEWPORT)
