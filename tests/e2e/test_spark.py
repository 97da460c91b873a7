"""Browser test: Spark on the machine that runs the app (local[*]) reading a folder of Parquet
parts, connected as a user would (a missing table first), grouped and compared (issue 16 item
5; screenshots spark-*.png). Its own server, so that Spark's JVM ends with the test."""

import re

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from dpcore.foundations.datasets import load_demo
from tests.e2e.helpers import (
    choose_hours_by_race,
    enter_and_press,
    open_app,
    open_page,
    save_screen,
    settle,
)

VIEWPORT = {"width": 1280, "height": 900}
SPARK_START_MS = 180_000  # a first start of Spark on two busy cores


def connect(page: Page, table: str) -> None:
    enter_and_press(page, "Table, or a folder Spark reads", table, "Connect")


@pytest.mark.e2e
def test_a_parquet_folder_read_by_local_spark_is_compared(page: Page, fresh_app_url: str, tmp_path):
    folder = tmp_path / "adult"
    folder.mkdir()
    demo = load_demo()
    for i, rows in enumerate(np.array_split(np.arange(len(demo)), 2)):
        demo.iloc[rows].to_parquet(folder / f"part-{i}.parquet")

    open_app(page, fresh_app_url, VIEWPORT)
    expect(page.get_by_role("textbox", name="Spark master")).to_have_value("local[*]")
    connect(page, "survey")  # no such table: Spark starts, then says which tables it has
    expect(page.get_by_text(re.compile("has no table “survey”"))).to_be_visible(
        timeout=SPARK_START_MS
    )
    expect(page.get_by_text("Still using the demo data.")).to_be_visible()

    connect(page, str(folder))
    expect(page.get_by_text("Rows (curator's view)")).to_be_visible(timeout=SPARK_START_MS)
    settle(page)
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_text(f"{len(demo):,} rows")).to_be_visible()
    expect(
        sidebar.get_by_text(
            re.compile(
                r"read where it lies, in the files at .*adult, which Spark at local\[\*\] reads"
            )
        )
    ).to_be_visible()
    choose_hours_by_race(page, "spark-data", VIEWPORT)

    open_page(page, "Compare")
    expect(page.locator(".js-plotly-plot")).to_have_count(3)
    expect(page.get_by_text(re.compile(r"Simulated 1,000 releases per strategy"))).to_be_visible()
    expect(page.locator(".stException")).to_have_count(0)
    expect(page).to_have_url(re.compile(r"data=spark&.*master=local"))
    save_screen(page, "spark-compare", VIEWPORT)
