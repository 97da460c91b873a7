"""Hostile files, round 2, uploaded one after another on the Data page as a user would (issue 38):
what the page says of each, decimal commas read on request, and a label written as markdown or
HTML shown as text on the Strata page and its chart."""

from __future__ import annotations

import json
import re
import unicodedata

from streamlit.testing.v1 import AppTest

from dpcore.analyses.mean.analysis import MeanSettings
from tests.app import helpers

BEACON = "![x](http://host/beacon.png) [Verify your account](http://evil/)"
LINK = '<a href="http://evil/">click</a>'
UNESCAPED_MARKUP = re.compile(r"(?<!\\)!(?<!\\)\[|(?<!\\)\]\(|(?<!\\)<a href|(?<!\\)<img")


def notes(at: AppTest) -> str:
    return helpers.text(at.main.info) + " " + helpers.text(at.main.warning)


def markdown_sources(at: AppTest) -> list[str]:
    """The markdown source of every element that renders markdown on the page."""
    kinds = ("markdown", "caption", "info", "warning", "error", "success")
    return [str(e.value) for kind in kinds for e in getattr(at.main, kind)]


def test_hostile_files_in_a_row_each_say_what_reading_changed():
    at = helpers.start("data")
    helpers.upload(at, b'group,"note;a;b"\nx,"1;2"\ny,3\n', "note.csv")
    assert "Using “note.csv”" in helpers.text(at.main.success)
    assert helpers.metric(at, "Columns") == "2"  # the quoted ; is data, not a separator

    helpers.upload(at, "g,x\nb,1\n\ufeffb,2\n".encode(), "joined.csv")
    assert "byte-order mark" in notes(at) and helpers.metric(at, "Rows") == "2"
    assert helpers.state_of(at).uploaded["g"].tolist() == ["b", "b"]  # one group, not two

    helpers.upload(at, b"g,x\na,inf\nb,1e400\nc,5\n", "inf.csv")
    assert "Infinite values were read as missing values: `x` 2 (first in data row 1)" in notes(at)

    helpers.upload(at, b"code,n\n12345678901234567890,1\n12345678901234567891,2\n", "codes.csv")
    assert "kept as text" in notes(at)
    assert helpers.state_of(at).uploaded["code"].nunique() == 2

    nfd = unicodedata.normalize("NFD", "café")
    helpers.upload(at, f"café,{nfd}\n1,2\n".encode(), "cafe.csv")
    assert "duplicate column names" in helpers.errors(at) and "different Unicode" in helpers.errors(
        at
    )
    assert "Still using “codes.csv”" in helpers.errors(at)

    helpers.upload(at, b"item;price\na;3,25\nb;-0,5\nc;12\n", "prices.csv")
    assert "was read as text" in notes(at) and "decimal comma" in notes(at)
    at.checkbox(key="data.decimal_comma").check().run()
    assert not at.exception and not helpers.errors(at)
    assert helpers.state_of(at).uploaded["price"].tolist() == [3.25, -0.5, 12.0]
    assert "was read as text" not in notes(at)
    at.checkbox(key="data.decimal_comma").uncheck().run()
    assert helpers.state_of(at).uploaded["price"].dtype == "str"  # read again, as the box now says


def test_a_label_written_as_markdown_or_html_is_shown_as_text():
    at = helpers.start("data")
    rows = [f'"{BEACON}",{h}' for h in (40, 35, 20)] + [f"'{LINK}',{h}" for h in (50, 45)]
    helpers.upload(at, ("g,hours\n" + "\n".join(rows) + "\n").encode(), "beacon.csv")
    assert "Using “beacon.csv”" in helpers.text(at.main.success)
    helpers.change_settings(at, MeanSettings, value="hours", clip_low=0.0, clip_high=100.0)
    helpers.state_of(at).strata_columns = ["g"]
    helpers.go(at, "strata")
    specs = json.dumps(helpers.charts(at))  # the group sizes' chart
    assert "click" in specs and "<a href" not in specs and "&lt;a href" in specs
    helpers.go(at, "compare")  # the per-group error's sentence names the smallest group
    assert_shown_as_text(at)
    # A release whose own noisy counts merge every group names them in its small-groups
    # notice. It estimates the whole population on its own too: a release that would publish
    # nothing at all is refused (issue 37).
    helpers.change_settings(at, MeanSettings, n_public=False, strategy="global_and_groups")
    state = helpers.state_of(at)
    state.share_source, state.small_groups, state.min_group_size = "noisy_counts", "merge", 1000
    state.group_list, state.declared_categories = "declared", {"g": [BEACON, LINK]}
    helpers.commit(helpers.go(at, "release"))
    assert "Released and recorded" in helpers.text(at.main.success), helpers.errors(at)
    notice = next(str(e.value) for e in at.main.info if "Small groups" in str(e.value))
    assert "Verify your account" in notice and "click" in notice
    assert_shown_as_text(at)


def assert_shown_as_text(at: AppTest) -> None:
    """The page shows the labels, and no markdown source or chart renders them as markup."""
    shown = markdown_sources(at)
    assert any("Verify your account" in source for source in shown)
    leaks = [source for source in shown if UNESCAPED_MARKUP.search(source)]
    assert not leaks, leaks
    assert "<a href" not in json.dumps(helpers.charts(at))


def test_bounds_beyond_the_widgets_range_are_moved_into_it_with_a_warning():
    """Bounds of ±1e308 held by the session (as from an old link) reach the Estimator page: the
    widgets take them within their range (±1e15, the library's limit), say so, and raise
    nothing; the other pages then run on the bounds shown."""
    at = helpers.start("data")  # before the Estimator page's widgets exist, as after a refresh
    helpers.change_settings(at, MeanSettings, clip_low=-1e308, clip_high=1e308)
    helpers.go(at, "estimator")
    warned = helpers.text(at.main.warning)
    assert "Lower bound L: -1e+308 is outside what this setting takes" in warned, warned
    assert "Upper bound U: 1e+308 is outside" in warned and "it is set to 1e+15" in warned
    assert (
        helpers.settings_of(at, MeanSettings).clip_low,
        helpers.settings_of(at, MeanSettings).clip_high,
    ) == (
        -1e15,
        1e15,
    )
    for page in ("compare", "release"):
        helpers.go(at, page)
        assert "array(" not in helpers.errors(at)
