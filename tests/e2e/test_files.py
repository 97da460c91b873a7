"""Browser test: a folder of Parquet parts on this machine, opened by its path as a user would
(a wrong path first), grouped, compared, and opened again by a refresh (issue 16 item 5;
screenshots files-*.png)."""

import re

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from dpcore.foundations.datasets import load_demo
from tests.e2e.helpers import (
    choose_hours_by_race,
    enter_and_press,
    expect_title,
    open_app,
    open_page,
    save_screen,
    settle,
)

VIEWPORT = {"width": 1280, "height": 900}


def type_path_and_open(page: Page, path: str) -> None:
    enter_and_press(page, "Path on the machine running the app", path, "Open")


@pytest.mark.e2e
def test_a_folder_opened_by_path_is_compared_and_opened_again_by_a_refresh(
    page: Page, app_url: str, tmp_path
):
    folder = tmp_path / "adult"
    (folder / "year=1994").mkdir(parents=True)
    demo = load_demo()
    names = ["part-0.parquet", "part-1.parquet", "year=1994/part-2.parquet"]
    for name, rows in zip(names, np.array_split(np.arange(len(demo)), 3), strict=True):
        demo.iloc[rows].to_parquet(folder / name)

    open_app(page, app_url, VIEWPORT)
    type_path_and_open(page, str(tmp_path / "no-such-folder"))
    expect(page.get_by_text("Still using the demo data.")).to_be_visible()

    type_path_and_open(page, str(folder))
    expect(page.get_by_text("Rows (curator's view)")).to_be_visible()
    settle(page)
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_text(str(folder))).to_be_visible()
    expect(sidebar.get_by_text(f"{len(demo):,} rows")).to_be_visible()
    # New data starts without a value column or bounds: the user chooses them.
    choose_hours_by_race(page, "files-data", VIEWPORT)
    expect(page).to_have_url(re.compile(r"strata_columns=[^&]*race"))

    open_page(page, "Compare")
    expect(page.locator(".js-plotly-plot")).to_have_count(3)
    expect(page.get_by_text(re.compile(r"Simulated 1,000 releases per strategy"))).to_be_visible()
    expect(page.locator(".stException")).to_have_count(0)
    save_screen(page, "files-compare", VIEWPORT)

    page.reload()  # a new session: the address opens the files again, grouping included
    expect_title(page, "Compare")
    settle(page)
    expect(page.get_by_test_id("stSidebar").get_by_text(str(folder))).to_be_visible()
    expect(page.locator(".js-plotly-plot")).to_have_count(3)
    expect(
        page.get_by_text(re.compile(r"Estimating the mean of hours_per_week by race "))
    ).to_be_visible()
