"""The door of the app: who may come in, before any page runs.

:func:`gate` lets a session in as the single user, or as the team member their OpenID Connect
sign-in names (``st.login``, :mod:`strata_ui.serving`); otherwise it draws why not — the app
refused to start, a visitor not signed in, someone the team file does not name — and stops
the run. A sign-in older than the team file's ``sign_in_hours`` is *expired*
(:func:`has_expired`, :func:`ask_again`): Streamlit does not check an ID token's age itself. Signing in
again lands on the app's first page with an empty address, so the choices in the address and
the page are kept on the server for that person (:func:`_keep_choices`) and come back after the
sign-in.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

import streamlit as st

from strata_ui import roles, serving
from strata_ui.constants import PAGES, PageSpec
from strata_ui.roles import Role, User
from strata_ui.team_config import TeamConfig

__all__ = ["ask_again", "gate", "has_expired", "page_to_resume", "render_who"]

_LOGGER = logging.getLogger(__name__)
KEPT_CHOICES_S = 3600.0
"""How long choices wait on the server for their owner to sign in again."""
_RESUME_PAGE = "_strata_lab_sign_in.resume_page"


def gate() -> User:
    """Let this session in and return who uses it; otherwise draw why not and stop the run."""
    serving_mode = serving.mode()
    if serving_mode.kind == "refused":
        _refuse(serving_mode.problem)
    user = roles.single_user() if serving_mode.kind == "single" else _member(serving_mode.config)
    roles.set_current_user(user)
    if not user.single_user:
        _resume_choices(user)
    return user


def _refuse(problem: str) -> None:
    _log_once(problem)
    st.title("Strata Lab is not set up to be served")
    st.error(problem, icon=":material/lock:")
    st.stop()


@st.cache_resource(max_entries=8, show_spinner=False)
def _log_once(problem: str) -> None:
    """Say it in the server's log too, once: whoever started the server reads it there."""
    _LOGGER.error("Strata Lab refuses to serve: %s", problem)


def _member(config: TeamConfig) -> User:
    if not st.user.is_logged_in:
        _ask_to_sign_in()
    found = config.role_of(_claim("email"), _claim("sub"))
    if found is None:
        _not_in_team(config)
    identity, role = found
    return User(identity, Role(role), _claim("name") or identity)


def _claim(name: str) -> str | None:
    value = st.user.get(name)
    return value if isinstance(value, str) and value.strip() else None


def _ask_to_sign_in() -> None:
    st.title("Strata Lab")
    st.markdown(
        "Explore what differential privacy costs each group, preview releases and publish them. "
        "This installation is shared by a team: **sign in** to see what your role lets you do."
    )
    st.button("Sign in", type="primary", icon=":material/login:", on_click=st.login)
    if st.query_params.to_dict():
        st.caption(
            "This link holds choices (data, groups, budget). Signing in returns to the app's "
            "first page: open the link again once you are signed in to get them back."
        )
    st.stop()


def _not_in_team(config: TeamConfig) -> None:
    who = _claim("email") or _claim("sub") or "this account"
    st.title("Strata Lab")
    st.warning(
        f"You are signed in as **{who}**, whom this installation's team file does not name, so "
        "you have no role here. Ask a curator to add you (with a role: curator, analyst or "
        "viewer), then sign in again.",
        icon=":material/person_off:",
    )
    _LOGGER.info("Signed in but not in %s: %s", config.path, who)
    st.button("Sign out", icon=":material/logout:", on_click=st.logout)
    st.stop()


def has_expired(user: User, config: TeamConfig | None) -> bool:
    """Whether ``user``'s sign-in is older than the team file's ``sign_in_hours`` (one with no
    time of issue counts as expired)."""
    if user.single_user or config is None:
        return False
    issued = st.user.get("iat")
    limit_s = config.sign_in_hours * 3600
    return not (isinstance(issued, int | float) and time.time() - issued <= limit_s)


def ask_again(user: User, url_path: str, config: TeamConfig) -> None:
    """Stop the run with a request to sign in again (:func:`has_expired`); the page
    (``url_path``) and the address's choices wait on the server for ``user``."""
    issued = st.user.get("iat")
    _keep_choices(user.identity, url_path, st.query_params.to_dict())
    when = (
        datetime.fromtimestamp(issued, UTC).strftime("%Y-%m-%d %H:%M UTC")
        if isinstance(issued, int | float)
        else "an unknown time"
    )
    st.title("Please sign in again")
    st.info(
        f"Your sign-in as **{user.identity}** dates from {when}, and sign-ins here last "
        f"{config.sign_in_hours:g} hours. Sign in again to go on: this page and the choices in "
        "the address come back as they are.",
        icon=":material/schedule:",
    )
    st.button("Sign in again", type="primary", icon=":material/login:", on_click=st.login)
    st.stop()


@st.cache_resource(show_spinner=False)
def _kept() -> dict[str, tuple[float, str, dict[str, str]]]:
    """Choices waiting for their owner's sign-in: identity -> (kept at, page, address)."""
    return {}


def _keep_choices(identity: str, url_path: str, params: dict[str, str]) -> None:
    _kept()[identity] = (time.time(), url_path, params)


def _resume_choices(user: User) -> None:
    """After a sign-in with an empty address, bring back what was kept for this person."""
    kept = _kept().get(user.identity)
    if kept is None or st.query_params.to_dict():
        return
    del _kept()[user.identity]
    kept_at, url_path, params = kept
    if time.time() - kept_at > KEPT_CHOICES_S:
        return
    st.query_params.from_dict(params)
    st.session_state[_RESUME_PAGE] = url_path


def page_to_resume() -> PageSpec | None:
    """The page a sign-in interrupted, once (None when there is none)."""
    url_path = st.session_state.pop(_RESUME_PAGE, None)
    return next((page for page in PAGES if page.url_path == url_path), None)


def render_who(user: User) -> None:
    """The sidebar's line on who is signed in (or that no one needs to be) and sign-out."""
    if user.single_user:
        st.caption(
            f"**Single-user mode**: served on this machine only ({user.name}, as curator), with "
            "no sign-in. To share it with a team, see “Serving Strata Lab to a team” in the "
            "README."
        )
        return
    who = user.identity if user.name == user.identity else f"{user.name} ({user.identity})"
    st.markdown(f"Signed in as **{who}**  \nRole: **{user.role}**")
    st.button("Sign out", icon=":material/logout:", on_click=st.logout, key="sign_in.out")
