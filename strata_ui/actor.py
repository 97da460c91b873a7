"""Who acts in this session, for the ledger's records, and whether they may make a record only
a curator makes (:data:`~dpcore.foundations.ledger.CURATOR_ENTRIES`: starting a ledger, raising
a total, letting a ledger take on released data, approving that other data is about the same
people).

Single-user mode (the app on 127.0.0.1 with no sign-in configured) has one user, who holds the
data and is therefore its curator: :data:`~dpcore.foundations.ledger.LOCAL_USER`, allowed
everything. Signing in (``st.login``) and roles are the sign-in module's: it makes
:func:`current_actor` return the signed-in identity and :func:`may` answer from the user's role.
"""

from __future__ import annotations

from dpcore.foundations.ledger import CURATOR_ENTRIES, ENTRIES, LOCAL_USER

__all__ = ["current_actor", "may"]


def current_actor() -> str:
    """The name every record made in this session carries."""
    return LOCAL_USER


def may(entry: str) -> bool:
    """Whether the session's user may make a record of kind ``entry`` (``"release"``, or one
    of :data:`~dpcore.foundations.ledger.CURATOR_ENTRIES`)."""
    if entry not in ENTRIES:
        raise ValueError(f"`entry` must be one of {', '.join(ENTRIES)}, got {entry!r}")
    return entry not in CURATOR_ENTRIES or current_actor() == LOCAL_USER
