"""Analysts' allowances: how much of a ledger's budget each analyst may commit, set by a curator.

An analyst commits on a ledger only where a curator gave them an allowance, and only while
their commits on it (the records that name them as the actor) stay within it; the ledger's own
total still bounds everyone. (The other way, proposals a curator approves one by one, would
make every release wait for a curator; an allowance lets analysts work alone within a budget
the curator chose, and the curator can lower it to zero at any time.)

Allowances live beside the ledger, in the same SQLite file (the curator's), in a table of their
own that records who set each and when. Every release record names who committed it
(:func:`dpcore.release.release`'s ``actor``, read back by :func:`actors_of`).
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from dpcore.foundations.accounting import SYMBOLS, Budget, exact_components
from dpcore.foundations.ledger import Ledger, default_ledger_path
from strata_ui.roles import Action, NotAllowed, Role, User, require

__all__ = [
    "Allowance",
    "AllowanceExceededError",
    "actors_of",
    "allowances",
    "check_commit",
    "committing",
    "may_use_ledger",
    "set_allowance",
    "unit_of",
    "usable_ledgers",
    "used_by",
]

_TABLE = """CREATE TABLE IF NOT EXISTS strata_allowances (
    ledger   TEXT NOT NULL,
    identity TEXT NOT NULL,
    amount   REAL NOT NULL,  -- in the ledger's first unit (rho for zCDP, epsilon otherwise)
    set_by   TEXT NOT NULL,
    set_at   TEXT NOT NULL,
    PRIMARY KEY (ledger, identity)
)"""
_BUSY_TIMEOUT_S = 30.0  # a curator setting an allowance queues behind a spend
_READ_TIMEOUT_S = 2.0  # a page reading allowances says nothing rather than hang
_COMMITTING = threading.Lock()  # an analyst's check and spend, one at a time in this server


class AllowanceExceededError(NotAllowed):
    """A commit beyond the analyst's allowance; nothing was spent."""


@dataclass(frozen=True)
class Allowance:
    identity: str
    amount: float
    set_by: str
    set_at: str


def unit_of(ledger: Ledger) -> str:
    """The ledger component allowances are counted in: the one that runs out first."""
    return next(iter(ledger.total.components()))


def _read(path: Path, sql: str, params: tuple) -> list[tuple]:
    """The rows of ``sql``, read without writing (a read-only ledger file can still be shown);
    none when the file has no such table yet, or cannot be read now: an allowance that cannot
    be read is no allowance, so a commit is refused rather than let through."""
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=_READ_TIMEOUT_S)
    except sqlite3.Error:
        return []
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError:  # no such table yet, or the file is busy
        return []
    finally:
        conn.close()


def allowances(ledger: Ledger) -> dict[str, Allowance]:
    """Every analyst's allowance on ``ledger``, by identity."""
    rows = _read(
        ledger.path,
        "SELECT identity, amount, set_by, set_at FROM strata_allowances WHERE ledger = ?",
        (ledger.name,),
    )
    return {row[0]: Allowance(*row) for row in rows}


def set_allowance(ledger: Ledger, identity: str, amount: float, *, by: User) -> None:
    """Give the analyst ``identity`` an allowance of ``amount`` (in :func:`unit_of` the ledger)
    on ``ledger``, recorded as set by ``by``, a curator."""
    require(Action.SET_ALLOWANCES, by)
    if isinstance(amount, bool) or not isinstance(amount, int | float) or not amount >= 0:
        raise ValueError(f"`amount` must be a number ≥ 0, got {amount!r}")
    if not math.isfinite(amount):
        raise ValueError(f"`amount` must be finite, got {amount!r}")
    conn = sqlite3.connect(ledger.path, timeout=_BUSY_TIMEOUT_S)
    try:
        with conn:
            conn.execute(_TABLE)
            conn.execute(
                "INSERT OR REPLACE INTO strata_allowances VALUES (?, ?, ?, ?, ?)",
                (ledger.name, identity, float(amount), by.actor, datetime.now(UTC).isoformat()),
            )
    finally:
        conn.close()


def actors_of(ledger: Ledger) -> dict[int, str]:
    """Who committed each of ``ledger``'s releases (by record id): the ledger's own record of
    the actor (:func:`dpcore.release.release`'s ``actor``)."""
    return {record.id: record.actor for record in ledger.history(payloads=False)}


def used_by(ledger: Ledger, identity: str) -> float:
    """What ``identity``'s commits on ``ledger`` cost, in :func:`unit_of` the ledger."""
    return ledger.spent(by=identity)[unit_of(ledger)]


def _charge(cost: Budget, ledger: Ledger) -> float:
    return float(exact_components(cost, ledger.total.kind)[unit_of(ledger)])


def usable_ledgers(user: User, path: Path | None = None) -> list[str] | None:
    """The ledgers (in the file at ``path``, the default ledger file if None) that ``user`` may
    use: None for every ledger (curators, and viewers, who only read released results); an
    analyst's are those where a curator gave them an allowance."""
    if user.role != Role.ANALYST:
        return None
    path = default_ledger_path() if path is None else path
    if not path.exists():
        return []
    rows = _read(
        path,
        "SELECT ledger FROM strata_allowances WHERE identity = ? ORDER BY ledger",
        (user.identity,),
    )
    return [row[0] for row in rows]


def may_use_ledger(name: str, user: User, path: Path | None = None) -> bool:
    usable = usable_ledgers(user, path)
    return usable is None or name in usable


def check_commit(ledger: Ledger, user: User, cost: Budget) -> None:
    """Raise :class:`NotAllowed` unless ``user``'s role commits, and, for an analyst,
    :class:`AllowanceExceededError` unless ``cost`` fits in what is left of their allowance on
    ``ledger``; records nothing."""
    require(Action.COMMIT, user)
    if user.role != Role.ANALYST:
        return
    granted = allowances(ledger).get(user.identity)
    if granted is None:
        raise NotAllowed(
            f"Refused: {user.identity} has no allowance on the ledger “{ledger.name}”. A "
            "curator gives analysts allowances on the Budget page."
        )
    requested, used = _charge(cost, ledger), used_by(ledger, user.identity)
    remaining = granted.amount - used
    if requested > remaining * (1 + 1e-12):
        symbol = SYMBOLS[unit_of(ledger)]
        raise AllowanceExceededError(
            f"Refused: this release exceeds your allowance on “{ledger.name}”. Requested: "
            f"{symbol} = {requested:.6g}; Remaining: {symbol} = {max(remaining, 0):.6g} of "
            f"{granted.amount:.6g}; Difference: {symbol} = {requested - remaining:.6g}. Lower "
            "the budget, or ask a curator to raise your allowance."
        )


@contextlib.contextmanager
def committing(ledger: Ledger, user: User, cost: Budget) -> Iterator[None]:
    """Run the body (the release) only if :func:`check_commit` lets ``user`` commit ``cost`` on
    ``ledger``, with no other commit of this server checked in between: two tabs of one analyst
    cannot both fit in the same remainder."""
    with _COMMITTING:
        check_commit(ledger, user, cost)
        yield
