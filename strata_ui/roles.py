"""Who is using the app and what their role lets them do.

Three roles (DESIGN.md, privacy model):

- **curator**: data sources (uploads, files under the data root, Spark), ledgers (start, switch,
  reset), raises of a ledger's total, analysts' allowances, commits, and the confirmation that
  other data is about the same people;
- **analyst**: opens the curator's data sources (files under the data root, the allowed Spark
  masters), previews, plans and Compare on the confidential data, and commits on the ledgers
  where a curator gave them an allowance, within it (:mod:`strata_ui.allowances`);
- **viewer**: released results, their reports and downloads; nothing computed from the
  confidential data.

The pages show only what a role may do, and every action function checks it again with
:func:`require`, so a hidden button is never the only guard. In single-user mode
(:mod:`strata_ui.serving`) the one person on this machine is the curator.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from enum import StrEnum

import streamlit as st

__all__ = [
    "PAGES_OF",
    "Action",
    "NotAllowed",
    "Role",
    "User",
    "allows",
    "current_user",
    "may_open_page",
    "render_page_refused",
    "require",
    "set_current_user",
    "single_user",
]


class Role(StrEnum):
    CURATOR = "curator"
    ANALYST = "analyst"
    VIEWER = "viewer"


class Action(StrEnum):
    """What a role may or may not do, worded to follow "may not"."""

    UPLOAD = "upload data"
    OPEN_DATA = "open data in files or in Spark"
    PREVIEW = "see pages computed from the confidential data"
    COMMIT = "commit a release"
    CONFIRM_OTHER_DATA = "confirm that other data shares a ledger's budget"
    MANAGE_LEDGERS = "start, reset or switch to any ledger"
    RAISE = "raise a ledger's total"
    SET_ALLOWANCES = "set analysts' allowances"


_CURATOR_ONLY = {
    Action.UPLOAD, Action.CONFIRM_OTHER_DATA, Action.MANAGE_LEDGERS, Action.RAISE,
    Action.SET_ALLOWANCES,
}  # fmt: skip
PERMISSIONS: dict[Role, frozenset[Action]] = {
    Role.CURATOR: frozenset(Action),
    Role.ANALYST: frozenset(set(Action) - _CURATOR_ONLY),
    Role.VIEWER: frozenset(),
}
PAGES_OF: dict[Role, tuple[str, ...] | None] = {
    Role.CURATOR: None,  # every page
    Role.ANALYST: None,
    Role.VIEWER: ("release", "learn"),  # released results, and teaching on built-in data
}
"""The pages (URL paths) each role reaches; None for all."""


class NotAllowed(PermissionError):
    """An action the signed-in user's role does not allow; the message says who may."""


@dataclass(frozen=True)
class User:
    """The person using this browser session.

    ``identity`` is what the team file names (an e-mail or an OpenID Connect subject), or
    ``local:<account>`` in single-user mode; it is what ledger records name as the actor.
    """

    identity: str
    role: Role
    name: str = ""
    single_user: bool = False

    @property
    def actor(self) -> str:
        """Who did it, as ledger records name them."""
        return self.identity


_USER = "_strata_lab_roles.user"


def single_user() -> User:
    """The one person of single-user mode: this machine's account, as curator."""
    try:
        account = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        account = "user"
    return User(f"local:{account}", Role.CURATOR, account, single_user=True)


def set_current_user(user: User) -> None:
    """Remember who uses this session (the sign-in gate calls it on every run)."""
    st.session_state[_USER] = user


def current_user() -> User:
    """Who uses this session. A session the gate has not let in is nobody: a viewer with no
    identity, so that nothing is allowed by mistake."""
    user = st.session_state.get(_USER)
    return user if isinstance(user, User) else User("", Role.VIEWER)


def allows(action: Action, user: User | None = None) -> bool:
    """Whether ``user`` (this session's by default) may do ``action``."""
    user = current_user() if user is None else user
    return action in PERMISSIONS[user.role]


def require(action: Action, user: User | None = None) -> User:
    """Return ``user`` (this session's by default) if their role allows ``action``; raise
    :class:`NotAllowed` saying who may otherwise."""
    user = current_user() if user is None else user
    if action not in PERMISSIONS[user.role]:
        who = [role.value + "s" for role in Role if action in PERMISSIONS[role]]
        raise NotAllowed(
            f"Refused: {user.identity or 'a visitor who is not signed in'} is "
            f"{_article(user.role)} {user.role}, and {_article(user.role)} {user.role} may not "
            f"{action}. Only {' and '.join(who)} may; ask a curator."
        )
    return user


def may_open_page(url_path: str, user: User | None = None) -> bool:
    """Whether ``user``'s role reaches the page at ``url_path``."""
    pages = PAGES_OF[(current_user() if user is None else user).role]
    return pages is None or url_path in pages


def _article(role: Role) -> str:
    return "an" if role.value[0] in "aeiou" else "a"


def render_page_refused(title: str, user: User) -> None:
    """What a deep link to a page outside ``user``'s role shows instead of the page."""
    st.title(title)
    st.info(
        f"{title} is not open to {_article(user.role)} {user.role}: it is computed from the "
        "confidential data, which your role does not see. The released results, with their "
        "reports and downloads, are on the Release page.",
        icon=":material/visibility_off:",
    )
