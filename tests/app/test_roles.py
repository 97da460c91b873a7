"""Roles when the app is served: who gets in, what each role sees, and that the action
functions themselves refuse what a role may not do (not only hidden buttons)."""

from __future__ import annotations

import time

import pytest

from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.ledger import Ledger, list_ledgers
from strata_ui import allowances, ledger_admin, roles, uploads
from strata_ui.files import FilesSource
from strata_ui.roles import NotAllowed, Role, User
from strata_ui.state import AppState
from tests.app.helpers import commit, errors, go, text
from tests.app.team import ANALYST, AUTH, CURATOR, VIEWER, served_on, start_as

CURATOR_USER = User(CURATOR, Role.CURATOR)
ANALYST_USER = User(ANALYST, Role.ANALYST)
VIEWER_USER = User(VIEWER, Role.VIEWER)


def test_a_served_app_without_a_team_file_refuses_to_start_and_says_how_to_configure():
    served_on("0.0.0.0")
    at = start_as(None, auth=None)
    assert [t.value for t in at.title] == ["Strata Lab is not set up to be served"]
    assert "STRATA_LAB_CONFIG" in errors(at) and "make run" in errors(at)
    assert not at.button  # nothing else: no page ran, no sign-in offered


def test_served_with_a_team_file_but_no_sign_in_it_refuses_to_start(team):
    served_on("0.0.0.0")
    at = start_as(CURATOR, auth=None)
    assert "has no [auth] section" in errors(at)


def test_an_incomplete_sign_in_set_up_is_named_before_anyone_signs_in(team):
    at = start_as(CURATOR, auth={k: v for k, v in AUTH.items() if k != "client_secret"})
    assert "lacks `client_secret`: add them" in errors(at)
    assert not at.button


def test_served_without_a_data_root_it_refuses_to_start(team):
    team.file.write_text(team.file.read_text().replace(f'data_root = "{team.root}"\n', ""))
    served_on("0.0.0.0")
    at = start_as(CURATOR)
    assert "without a data root that exists" in errors(at) and "`data_root`" in errors(at)


def test_a_team_file_with_a_mistake_stops_the_app_with_its_line_and_fix(team):
    team.file.write_text(team.file.read_text().replace('"viewer"', '"watcher"'))
    at = start_as(VIEWER)
    message = errors(at)
    assert f"{team.file}, line 8: gives 'vic@example.org' the role 'watcher'" in message
    assert "Use one of 'curator', 'analyst', 'viewer'." in message


def test_a_visitor_not_signed_in_sees_only_the_sign_in(team):
    at = start_as(None)
    assert [b.label for b in at.button] == ["Sign in"]
    assert "Data" not in [t.value for t in at.title] and not at.caption
    at = start_as(None, epsilon="2.0")  # a shared link: its choices are not lost silently
    assert "open the link again once you are signed in" in text(at.caption)
    assert at.query_params["epsilon"] == "2.0"


def test_someone_the_team_file_does_not_name_is_told_to_ask_a_curator(team):
    at = start_as("stranger@example.org")
    assert "whom this installation's team file does not name" in text(at.warning)
    assert [b.label for b in at.button] == ["Sign out"]


def test_the_sidebar_says_who_is_signed_in_and_single_user_mode_says_so(team, monkeypatch):
    at = start_as(ANALYST)
    assert "Signed in as **ana@example.org**" in text(at.sidebar.markdown)
    assert "Role: **analyst**" in text(at.sidebar.markdown)
    monkeypatch.delenv("STRATA_LAB_CONFIG")
    at = start_as(None, auth=None)
    assert "Single-user mode" in text(at.sidebar.caption)


def test_a_viewer_reaches_released_results_and_no_page_computed_from_the_data(team):
    at = start_as(VIEWER)
    assert [t.value for t in at.title] == ["Release"]  # the viewer's first page
    assert "Released results" in [h.value for h in at.subheader]
    assert "No releases yet" in text(at.markdown)
    assert "Dataset" not in [h.value for h in at.sidebar.subheader]  # its size is confidential
    for page in ("data", "strata", "estimator", "budget", "plan", "compare"):
        go(at, page)
        assert "is not open to a viewer" in text(at.info), page
        assert not at.get("plotly_chart") and not at.dataframe, page


def test_an_analyst_sees_no_ledger_administration_and_cannot_commit_without_allowance(team):
    at = start_as(ANALYST, "budget")
    assert not [e for e in at.expander if "reset" in e.label]
    assert "You have no allowance on “default”" in text(at.markdown)
    go(at, "release")
    assert "has no allowance on the ledger “default”" in text(at.caption)
    assert at.button(key="release.commit").disabled


def test_a_curator_gives_an_allowance_and_the_analysts_commits_are_held_to_it(team):
    at = start_as(CURATOR, "budget")
    at.selectbox(key="ledger.allowance_who").select(ANALYST)
    at.number_input(key="ledger.allowance_amount").set_value(0.5)
    [button] = [b for b in at.button if b.label == "Set allowance"]
    button.click().run()
    assert f"{ANALYST} may now commit up to 0.5 on “default”" in text(at.success)
    ledger = Ledger.open(None, "default")
    assert allowances.allowances(ledger)[ANALYST].set_by == CURATOR

    analyst = start_as(ANALYST, "release")  # ε = 1 costs ρ = 0.5: the whole allowance
    commit(analyst)
    assert "Released and recorded" in text(analyst.success)
    [record] = ledger.history()
    assert allowances.actors_of(ledger) == {record.id: ANALYST}
    assert "metadata" in record.payload and ANALYST not in str(record.payload["metadata"])
    analyst.text_input(key="release.label").input("another release").run()
    assert "exceeds your allowance on “default”" in text(analyst.caption)
    assert analyst.button(key="release.commit").disabled


def test_the_action_functions_refuse_what_a_role_may_not_do(team, monkeypatch):
    ledger = Ledger(None, "default", ZCDP(2.0))
    monkeypatch.setattr(roles, "current_user", lambda: ANALYST_USER)
    # The forms are hidden from an analyst; the functions behind them refuse too.
    ledger_admin._raise(ledger, ZCDP(1.0), "more", "default", "token")
    ledger_admin._start_ledger("mine", ZCDP(1.0), True, None, "", "token")
    assert [s.name for s in list_ledgers()] == ["default"]
    assert ledger.granted() == ZCDP(2.0)
    with pytest.raises(NotAllowed, match="may not set analysts' allowances"):
        allowances.set_allowance(ledger, ANALYST, 2.0, by=ANALYST_USER)
    refusal = uploads.handle_upload(AppState(), b"a,b\n1,2\n", "mine.csv")
    assert "may not upload data" in refusal
    with pytest.raises(NotAllowed, match="has no allowance"):
        allowances.check_commit(ledger, ANALYST_USER, PureDP(0.1))
    monkeypatch.setattr(roles, "current_user", lambda: VIEWER_USER)
    source = FilesSource(str(team.root / "survey.csv"))
    assert "may not open data in files or in Spark" in uploads.open_source(AppState(), source)
    with pytest.raises(NotAllowed, match="a viewer may not commit a release"):
        allowances.check_commit(ledger, VIEWER_USER, PureDP(0.1))


def test_an_expired_sign_in_asks_again_and_brings_the_page_and_choices_back(team):
    two_hours_ago = time.time() - 7200  # the team file's sign-ins last 1 hour
    at = start_as(CURATOR, signed_in_at=two_hours_ago, epsilon="2.0", replicates="300")
    at.switch_page("app_pages/compare.py").run()  # the page the user was on
    assert [t.value for t in at.title] == ["Please sign in again"]
    assert "sign-ins here last 1 hours" in text(at.info)
    assert [b.label for b in at.button] == ["Sign in again"]
    assert not at.sidebar.markdown and not at.sidebar.metric  # nothing of the data meanwhile
    assert at.query_params["epsilon"] == "2.0"  # the address keeps the choices meanwhile

    again = start_as(CURATOR)  # a new sign-in lands on the first page with an empty address
    assert [t.value for t in again.title] == ["Compare"]
    state = again.session_state["_strata_lab_settings.strata_ui.state.AppState"]
    assert (state.epsilon, state.replicates) == (2.0, 300)


def test_an_analyst_opens_the_curators_data_but_uploads_nothing(team):
    at = start_as(ANALYST, "data")
    assert not at.get("file_uploader")
    assert "Uploads are for curators" in text(at.caption)
    assert at.selectbox(key="data.spark_master_0").options == ["local[1]"]  # the team file's
    at.text_input(key="data.path_0").input(str(team.root / "survey.csv"))
    at.button(key="data.open").click().run()
    assert at.session_state["_strata_lab_settings.strata_ui.state.AppState"].source is not None
