"""Ways through the app (issue 14, items 2 and 7): the first screen offers three journeys, every
page ends with where to go next, and a workshop link opens on Learn without a ledger or a way to
the Release page."""

from __future__ import annotations

import pytest

from strata_ui.constants import JOURNEYS, NEXT_STEPS, PAGES
from tests.app.helpers import go, start, text


def links(at) -> list[tuple[str, str]]:
    """The page links drawn, as (label, target page's URL path; the default page's is "")."""
    return [
        (link.proto.label, link.proto.page or PAGES[0].url_path) for link in at.get("page_link")
    ]


def test_the_first_screen_offers_three_journeys_one_click_each():
    at = start()
    assert at.title[0].value == "Data"
    journeys = links(at)[: len(JOURNEYS)]
    assert [target for _, target in journeys] == ["strata", "learn", "release"]
    assert "Compare ways of grouping" in journeys[0][0]


# Not `page`, which pytest-playwright would parametrize by browser (see tests/app/test_pages.py).
@pytest.mark.parametrize("page_name", [page.url_path for page in PAGES])
def test_every_page_ends_with_what_comes_next(page_name):
    at = go(start(), page_name)
    ending = links(at)[-len(NEXT_STEPS[page_name]) :]
    assert [target for _, target in ending] == [target for target, _ in NEXT_STEPS[page_name]]
    assert all(" page)" in label for label, _ in ending)


def test_a_workshop_link_opens_on_learn_with_no_ledger_and_no_way_to_release():
    at = start(workshop="true")
    assert at.title[0].value == "Learn"
    assert not at.sidebar.metric  # no remaining budget of a real ledger
    assert "no ledger is shown" in text(at.sidebar.caption)
    for page in ("data", "plan", "compare", "learn"):
        go(at, page)
        assert "release" not in [target for _, target in links(at)], page


def test_switching_workshop_mode_on_goes_to_learn_and_hides_the_ledger_at_once():
    at = start("budget")
    assert at.sidebar.metric
    at.toggle(key="workshop").set_value(True).run()
    assert at.title[0].value == "Learn" and not at.sidebar.metric
    go(at, "compare")  # later runs stay where the user goes
    assert at.title[0].value == "Compare"
    at.toggle(key="workshop").set_value(False).run()
    assert at.title[0].value == "Compare" and at.sidebar.metric


def test_a_workshop_deep_link_to_another_page_is_kept():
    at = start("compare", workshop="true")
    assert at.title[0].value == "Compare"
