"""The Compare page on thousands of groups: the demo grouped by its six text columns (2,380
groups after merging those under 2 rows). The group chart draws a bounded number of marks in
titled sections, summarises the rest, and a search box adds the groups it finds."""

from __future__ import annotations

import dataclasses

import pytest

from strata_ui.group_selection import FOUND, SMALLEST, WORST
from strata_ui.state import AppState, settings_key
from tests.app.helpers import charts, exact_sizes_public, go, start, state_of, text

TEXT_COLUMNS = ["race", "sex", "workclass", "education", "marital_status", "occupation"]
GROUPS = 2380
SEARCH_KEY = "mean_view.group_search"


@pytest.fixture(scope="module")
def at():
    """The app on Compare with the many-group grouping and the fewest simulated releases."""
    app = exact_sizes_public(start())
    # The groups found in the data (a declared list of every combination would be 151,200).
    app.session_state[settings_key(AppState)] = dataclasses.replace(
        state_of(app), strata_columns=list(TEXT_COLUMNS), replicates=100, group_list="data"
    )
    return go(app, "compare")


def group_chart(at) -> dict:
    [figure] = [f for f in charts(at) if f["layout"]["title"]["text"].startswith("Error in ")]
    return figure


def section_titles(figure: dict) -> list[str]:
    return [a["text"] for a in figure["layout"]["annotations"]]


def marks(figure: dict) -> int:
    return sum(len(trace["y"]) for trace in figure["data"])


def search(at, words: str):
    at.text_input(key=SEARCH_KEY).input(words).run()
    assert not at.exception, [e.value for e in at.exception]
    return group_chart(at)


def test_the_group_chart_draws_the_smallest_and_worst_in_titled_sections(at):
    figure = search(at, "")
    assert section_titles(figure) == [
        f"The {SMALLEST} smallest of {GROUPS:,} groups",
        f"The {WORST} groups with the largest errors",
    ]
    assert marks(figure) <= 2 * (SMALLEST + WORST)  # two strategies, one mark per group each
    assert {trace["orientation"] for trace in figure["data"]} == {"h"}
    summary = text(at.main.markdown)
    assert f"The chart shows 20 of {GROUPS:,} groups." in summary
    assert "One estimate per group: median" in summary and "90th percentile" in summary
    assert len(charts(at)) == 3  # the page's other charts are all there


def test_two_searches_in_a_row_each_show_their_groups(at):
    first = search(at, "Doctorate Female")
    found = section_titles(first)[-1]
    assert found.startswith("Groups matching “Doctorate Female”")
    assert all("Doctorate" in g and "Female" in g for g in first["data"][-1]["y"])
    second = search(at, "amer-indian-eskimo male farming")
    assert section_titles(second)[-1] == "Groups matching “amer-indian-eskimo male farming”"
    [group] = second["data"][-1]["y"]
    assert group.startswith("Amer-Indian-Eskimo × Male") and "Farming-fishing" in group
    assert marks(second) <= 2 * (SMALLEST + WORST + FOUND)
    assert at.text_input(key=SEARCH_KEY).value == "amer-indian-eskimo male farming"


def test_a_search_that_finds_nothing_says_so_and_keeps_the_chart(at):
    figure = search(at, "Martian")
    assert len(section_titles(figure)) == 2
    assert "No group's name contains every word of “Martian”" in text(at.main.caption)
    search(at, "$1 <b>*x*")  # shown as typed: no formula, emphasis or tag
    assert "every word of “$1 <b>*x*”" in text(at.main.caption)


def test_a_broad_search_says_how_many_match_and_draws_the_smallest(at):
    figure = search(at, "female")
    assert section_titles(figure)[-1].startswith("Groups matching “female”: the 10 smallest of")
    assert "groups match; the chart shows the 10 smallest" in text(at.main.caption)


def test_the_log_scale_applies_to_the_error_axis_and_back(at):
    for log, axis_type in ((True, "log"), (False, "linear")):
        at.toggle(key="mean_view.log_axis").set_value(log).run()
        assert not at.exception, [e.value for e in at.exception]
        assert group_chart(at)["layout"]["xaxis"].get("type", "linear") == axis_type


def test_twenty_groups_are_all_drawn_one_row_each_without_a_search():
    app = start()
    app.session_state[settings_key(AppState)] = dataclasses.replace(
        state_of(app), strata_columns=["race", "sex", "income_over_50k"], replicates=100
    )
    go(app, "compare")
    figure = group_chart(app)
    assert figure["layout"]["title"]["text"] == "Error in each of the 20 groups"
    assert section_titles(figure) == ["All 20 groups"]
    assert marks(figure) == 2 * 20
    assert not [t for t in app.text_input if t.key == SEARCH_KEY]
    assert "Mean error per group over the 20 groups" in text(app.main.markdown)
