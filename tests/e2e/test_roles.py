"""Browser test: the app served to a team that signs in through a real OpenID Connect provider
(``oidc-provider-mock``, started here on 127.0.0.1). A curator, an analyst and a viewer, each in
a browser context of their own, see and can do exactly what their role allows, and the ledger
names who committed each release. And an app served on another address without set-up refuses.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator

import oidc_provider_mock
import pytest
import werkzeug.serving
from playwright.sync_api import Browser, Page, expect

from strata_ui.team_config import CONFIG_ENV
from tests.e2e.conftest import free_port, running_app
from tests.e2e.helpers import commit_release, expect_title, open_page, save_screen, settle

pytestmark = pytest.mark.e2e

VIEWPORT = {"width": 1280, "height": 900}
CURATOR, ANALYST, VIEWER = "cura@example.org", "ana@example.org", "vic@example.org"


@contextlib.contextmanager
def identity_provider() -> Iterator[str]:
    """An OpenID Connect provider on 127.0.0.1 that knows the three people; yield its URL."""
    users = [
        oidc_provider_mock.User(sub=f"sub-{email}", claims={"email": email, "name": name})
        for email, name in ((CURATOR, "Cura"), (ANALYST, "Ana"), (VIEWER, "Vic"))
    ]
    server = werkzeug.serving.make_server(
        "127.0.0.1", 0, oidc_provider_mock.app(user_claims=users), threaded=True
    )
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()


@pytest.fixture(scope="module")
def team_app(tmp_path_factory) -> Iterator[str]:
    """The app on 127.0.0.1 with sign-in ([auth] secrets), a team file and a data root."""
    workdir = tmp_path_factory.mktemp("team")
    (workdir / "data").mkdir()
    team_file = workdir / "team.toml"
    team_file.write_text(
        f'data_root = "{workdir / "data"}"\n\n[people]\n"{CURATOR}" = "curator"\n'
        f'"{ANALYST}" = "analyst"\n"{VIEWER}" = "viewer"\n'
    )
    port = free_port()
    with identity_provider() as provider:
        secrets = workdir / "secrets.toml"
        secrets.write_text(
            f'[auth]\nredirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
            'cookie_secret = "a cookie secret for the browser test, long enough"\n'
            'client_id = "strata-lab"\nclient_secret = "any"\n'
            f'server_metadata_url = "{provider}/.well-known/openid-configuration"\n'
        )
        env = {CONFIG_ENV: str(team_file), "AUTHLIB_INSECURE_TRANSPORT": "1"}
        args = ("--secrets.files", str(secrets))
        with running_app(workdir, port=port, env=env, args=args) as url:
            yield url


def sign_in(browser: Browser, url: str, email: str) -> Page:
    """A fresh browser context (cookies of its own) signed in as ``email`` at the provider."""
    page = browser.new_context(viewport=VIEWPORT).new_page()
    page.goto(url)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name=f"sub-{email}").click()  # the provider's own page
    expect(page.get_by_test_id("stSidebar")).to_contain_text(f"({email})")
    settle(page)
    return page


def menu(page: Page) -> list[str]:
    """The pages of the sidebar's menu, by title (each link's last line: its icon comes first)."""
    links = page.get_by_test_id("stSidebarNav").get_by_role("link").all_inner_texts()
    return [link.split("\n")[-1] for link in links]


def test_three_people_in_three_roles_each_do_exactly_what_their_role_allows(browser, team_app):
    curator = sign_in(browser, team_app, CURATOR)
    expect_title(curator, "Data")
    assert menu(curator) == [
        "Data", "Strata", "Estimator", "Budget", "Plan", "Compare", "Release", "Learn",
    ]  # fmt: skip
    expect(curator.get_by_text("Upload a CSV or Parquet file")).to_be_visible()
    save_screen(curator, "roles_curator_data", VIEWPORT)

    # The curator gives the analyst an allowance, changing it twice: the last one holds.
    open_page(curator, "Budget")
    expect(curator.get_by_text("Start a new ledger, or raise this one's total")).to_be_visible()
    for amount in ("0.25", "0.5"):
        curator.get_by_role("spinbutton", name="Allowance (ρ)").fill(amount)
        curator.get_by_role("button", name="Set allowance").click()
        expect(curator.get_by_text(f"may now commit up to {float(amount):g}")).to_be_visible()
        settle(curator)
    save_screen(curator, "roles_curator_allowance", VIEWPORT)

    open_page(curator, "Release")
    commit_release(curator)
    expect(curator.get_by_text("Released and recorded")).to_be_visible()
    history = curator.get_by_test_id("stDataFrame").last
    expect(history).to_contain_text(CURATOR)
    save_screen(curator, "roles_curator_released", VIEWPORT)

    analyst = sign_in(browser, team_app, ANALYST)
    open_page(analyst, "Budget")
    expect(analyst.get_by_text("Your allowance on “default”:")).to_be_visible()
    expect(analyst.get_by_text("Start a new ledger, or raise this one's total")).to_have_count(0)
    expect(analyst.get_by_text("Analysts' allowances")).to_have_count(0)
    save_screen(analyst, "roles_analyst_budget", VIEWPORT)
    open_page(analyst, "Data")
    expect(analyst.get_by_text("Uploads are for curators")).to_be_visible()

    open_page(analyst, "Release")  # the curator's plan is released: name the analyst's own
    label = analyst.get_by_role("textbox", name="Name of the release")
    label.fill("Analyst's hours by race and sex")
    label.press("Enter")
    settle(analyst)
    expect(analyst).to_have_url(re.compile(r"release_label=Analyst"))  # the address keeps it
    analyst.reload()  # a refresh mid-flow: still signed in, the name back from the address
    expect_title(analyst, "Release")
    expect(analyst.get_by_role("textbox", name="Name of the release")).to_have_value(
        "Analyst's hours by race and sex"
    )
    commit = analyst.get_by_role("button", name="Commit release")
    analyst.get_by_text("I understand that committing spends this budget for good.").click()
    commit.dblclick()  # a double click spends once
    expect(analyst.get_by_text("Released and recorded")).to_be_visible()
    label = analyst.get_by_role("textbox", name="Name of the release")
    label.fill("One more release")
    label.press("Enter")
    expect(analyst.get_by_text("this release exceeds your allowance on “default”")).to_be_visible()
    expect(analyst.get_by_role("button", name="Commit release")).to_be_disabled()
    save_screen(analyst, "roles_analyst_over_allowance", VIEWPORT)

    viewer = sign_in(browser, team_app, VIEWER)
    expect_title(viewer, "Release")
    assert menu(viewer) == ["Release", "Learn"]
    history = viewer.get_by_test_id("stDataFrame").first
    expect(history).to_contain_text(CURATOR)
    expect(history).to_contain_text(ANALYST)
    expect(history).to_contain_text("Analyst's hours by race and sex")
    expect(viewer.get_by_test_id("stDownloadButton").first).to_be_visible()
    expect(viewer.get_by_test_id("stSidebar")).not_to_contain_text("rows ×")
    save_screen(viewer, "roles_viewer_released", VIEWPORT)
    viewer.goto(f"{team_app}/compare")  # a deep link to a page computed from the data
    expect(viewer.get_by_text("Compare is not open to a viewer")).to_be_visible()
    expect(viewer.get_by_test_id("stPlotlyChart")).to_have_count(0)
    save_screen(viewer, "roles_viewer_deep_link", VIEWPORT)


def test_served_on_another_address_without_set_up_it_refuses(browser, tmp_path):
    # 127.0.0.2 is this machine too, but not what `make run` binds: it counts as served.
    with running_app(tmp_path, address="127.0.0.2") as url:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(url)
        expect_title(page, "Strata Lab is not set up to be served")
        expect(page.get_by_text("has no team file (STRATA_LAB_CONFIG)")).to_be_visible()
        save_screen(page, "roles_served_refused", VIEWPORT)
        assert "refuses to serve" in (tmp_path / "stderr.log").read_text()
