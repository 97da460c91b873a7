"""Who acts in this session, for the ledger's records, and whether they may make a record only
a curator makes (:data:`~dpcore.foundations.ledger.CURATOR_ENTRIES`: starting a ledger, raising
a total, letting a ledger take on released data, approving that other data is about the same
people).

The person is the sign-in gate's (:func:`strata_ui.roles.current_user`): a signed-in identity
with its role, or in single-user mode this machine's account as curator. Each kind of ledger
record is one of the roles' actions, so the pages and the ledger ask the same question.
"""

from __future__ import annotations

from dpcore.foundations.ledger import ENTRIES
from strata_ui.roles import Action, allows, current_user

__all__ = ["current_actor", "may"]

ACTION_OF_ENTRY = {
    "release": Action.COMMIT,
    "start": Action.MANAGE_LEDGERS,
    "raise": Action.RAISE,
    "join": Action.RAISE,
    "cover": Action.CONFIRM_OTHER_DATA,
}
"""The role's action each kind of ledger record needs."""


def current_actor() -> str:
    """The name every record made in this session carries."""
    return current_user().actor


def may(entry: str) -> bool:
    """Whether the session's user may make a record of kind ``entry`` (``"release"``, or one
    of :data:`~dpcore.foundations.ledger.CURATOR_ENTRIES`)."""
    if entry not in ENTRIES:
        raise ValueError(f"`entry` must be one of {', '.join(ENTRIES)}, got {entry!r}")
    return allows(ACTION_OF_ENTRY[entry])
