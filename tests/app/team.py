"""A team installation for AppTest: a team file with one curator, one analyst and one viewer,
a data root holding a small file and, outside it, a file no one may open; and the app started
as one of them (signed in through OpenID Connect, as ``st.user`` reports it)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from streamlit import config
from streamlit.testing.v1 import AppTest

from strata_ui.team_config import CONFIG_ENV
from tests.app.helpers import REPO, TIMEOUT_S, installed_components

CURATOR, ANALYST, VIEWER = "cura@example.org", "ana@example.org", "vic@example.org"
AUTH = {
    "redirect_uri": "http://127.0.0.1:8501/oauth2callback",
    "cookie_secret": "a test secret, long enough for the cookie signer",
    "client_id": "strata-lab",
    "client_secret": "unused",
    "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
}
ROWS = "group,value\n" + "".join(f"{'ab'[i % 2]},{i % 7}\n" for i in range(40))


@dataclass(frozen=True)
class Team:
    root: Path
    outside: Path
    file: Path


@pytest.fixture
def team(tmp_path, monkeypatch) -> Team:
    root, outside = tmp_path / "data", tmp_path / "elsewhere"
    root.mkdir()
    outside.mkdir()
    (root / "survey.csv").write_text(ROWS)
    (outside / "secret.csv").write_text(ROWS)
    file = tmp_path / "team.toml"
    file.write_text(
        f'data_root = "{root}"\nspark_masters = ["local[1]"]\nsign_in_hours = 1\n\n[people]\n'
        f'"{CURATOR}" = "curator"\n"{ANALYST}" = "analyst"\n"{VIEWER}" = "viewer"\n'
    )
    monkeypatch.setenv(CONFIG_ENV, str(file))
    return Team(root, outside, file)


def served_on(address: str | None) -> None:
    """Run the next AppTests as a server bound to ``address`` (None: every address)."""
    config.set_option("server.address", address)


def start_as(
    email: str | None, page: str | None = None, *, signed_in_at: float | None = None,
    auth: dict | None = AUTH, **query: str,
) -> AppTest:  # fmt: skip
    """The app run once as ``email`` signed in (None: a visitor not signed in), with ``auth``
    as the ``[auth]`` secrets (None: none) and ``query`` in the address, then on ``page``."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT_S)
    at._bidi_component_manager = installed_components()
    if auth is not None:
        at.secrets["auth"] = dict(auth)
    issued = time.time() if signed_in_at is None else signed_in_at
    at.user = (
        {"is_logged_in": False}
        if email is None
        else {"is_logged_in": True, "email": email, "sub": f"sub-{email}", "iat": issued}
    )
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if page is not None:
        at.switch_page(f"app_pages/{page}.py")
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    return at
