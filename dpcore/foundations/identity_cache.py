"""Part digests remembered across processes, so a large file is hashed once, not on every run.

A dataset's identity (:mod:`dpcore.foundations.dataset`) reads every byte of its files: about
0.5 s per GB on this project's machines, paid by every command, preview and release on a folder
of 10⁸ rows. This cache keeps each file part's digest under the file's status — device, inode,
size, modification and change times in nanoseconds (``os.stat``) — and returns it while that
status is unchanged, as ``git`` does for its index.

Why it is safe for the budget. A digest is stored only for a status seen unchanged before and
after the read, and only once the file's times are :data:`SETTLED_SECONDS` old (a write within
the clock's resolution of the read could otherwise leave the same status on other bytes: git's
"racy clean" case). Any write changes the change time, which no user can set (``utime`` sets
the modification time only), so new bytes under an old status need the system clock turned
back. Even then the error is on the conservative side: changed data keeps its old identity, so
its releases are charged to the old population's budget — the cache can never give the same
bytes a second identity, which is what would renew a budget.

Where it lives: ``$STRATA_LAB_IDENTITY_CACHE`` (a file path; ``off`` turns the cache off),
else ``$XDG_CACHE_HOME/strata-lab/identities.sqlite``, else
``~/.cache/strata-lab/identities.sqlite``; created readable by its owner only. A digest is a
deterministic function of confidential bytes and stays with the curator like the ledger's
identities. A cache that cannot be opened or written is passed over: the part is hashed.

Stdlib ``sqlite3``; pure Python.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path

__all__ = ["CACHE_PATH_ENV", "SETTLED_SECONDS", "cache_path", "remember", "remembered", "status"]

CACHE_PATH_ENV = "STRATA_LAB_IDENTITY_CACHE"
SETTLED_SECONDS = 2.0
"""How old a file's modification and change times must be before its digest is kept."""
_SCHEMA = """CREATE TABLE IF NOT EXISTS parts (
    path TEXT NOT NULL, device INTEGER NOT NULL, inode INTEGER NOT NULL, size INTEGER NOT NULL,
    modified_ns INTEGER NOT NULL, changed_ns INTEGER NOT NULL, digest TEXT NOT NULL,
    PRIMARY KEY (path, device, inode))"""

Status = tuple[int, int, int, int, int]
"""(device, inode, size, modification ns, change ns) of a file."""


def cache_path() -> Path | None:
    """The cache file (module doc), or None when ``$STRATA_LAB_IDENTITY_CACHE`` is ``off``."""
    explicit = os.environ.get(CACHE_PATH_ENV, "")
    if explicit.strip().lower() == "off":
        return None
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    home = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return home / "strata-lab" / "identities.sqlite"


def status(path: Path) -> Status | None:
    """The file's status as the cache keys it, or None when it cannot be read."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def remembered(path: Path, seen: Status | None) -> str | None:
    """The digest kept for ``path`` at status ``seen``, or None."""
    if seen is None:
        return None
    row = _query(
        "SELECT digest FROM parts WHERE path = ? AND device = ? AND inode = ? AND size = ? "
        "AND modified_ns = ? AND changed_ns = ?",
        (str(path.resolve()), *seen),
    )
    return row[0] if row else None


def remember(path: Path, before: Status | None, digest: str) -> None:
    """Keep ``digest`` for ``path`` if its status was ``before`` the read, is the same after it,
    and has settled (module doc)."""
    if before is None or status(path) != before:
        return
    newest = max(before[3], before[4]) / 1e9
    if time.time() - newest < SETTLED_SECONDS:
        return
    _query(
        "INSERT OR REPLACE INTO parts VALUES (?, ?, ?, ?, ?, ?, ?)",
        (str(path.resolve()), *before, digest),
    )


def _query(sql: str, values: tuple) -> tuple | None:
    """Run one statement on the cache; None (and nothing kept) when it cannot be used."""
    file = cache_path()
    if file is None:
        return None
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(file, os.O_CREAT | os.O_RDWR, 0o600))  # owner-only from the start
        with contextlib.closing(sqlite3.connect(file, timeout=5)) as conn, conn:
            conn.execute(_SCHEMA)
            return conn.execute(sql, values).fetchone()
    except (OSError, sqlite3.Error):
        return None
