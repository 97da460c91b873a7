"""Part digests remembered across processes, so a large file is hashed once, not on every run.

A dataset's identity (:mod:`dpcore.foundations.dataset`) reads every byte of its files: about
0.5 s per GB on this project's machines, paid by every command, preview and release on a folder
of 10⁸ rows. This cache keeps each file part's digest under the status of the file it was read
from — device, inode, size, modification and change times in nanoseconds (``os.fstat`` of the
open file) — and the digest scheme, and returns it while that status is unchanged, as ``git``
does for its index.

Why it must be exact. The identity decides which population a release is charged to. A stale
digest would give new bytes an old identity here while an upload, another machine or a later
read gives them their own: two identities, two budgets, for the same people. So a digest is kept
only when nothing can have changed unseen:

- the status is read from the open descriptor before and after the read (the same inode that
  was read, and on a network filesystem the open revalidates it with the server), and must be
  equal;
- the file's times must be :data:`SETTLED_SECONDS` older than the start of the read: a write
  within the timestamps' resolution of the first status could otherwise leave the same status
  on other bytes (git's "racy clean" case);
- only on local filesystems whose change time is the kernel's own (:data:`LOCAL_FILESYSTEMS`,
  read from ``/proc/self/mountinfo``): any write moves it, and no user can set it (``utime``
  sets the modification time only). Network and FUSE filesystems (NFS, SMB, s3fs, …), whose
  times may be cached or made up, are always read in full; so is everything off Linux.

The one way left to fool it is to turn the system clock back and rewrite a file within the
same nanosecond-stamped status: that needs root, who can also edit the ledger.

Where it lives: ``$STRATA_LAB_IDENTITY_CACHE`` (a file path; ``off`` turns the cache off),
else ``$XDG_CACHE_HOME/strata-lab/identities.sqlite``, else
``~/.cache/strata-lab/identities.sqlite``; created readable by its owner only. A digest is a
deterministic function of confidential bytes and stays with the curator like the ledger's
identities. A cache that cannot be opened, read or written is passed over: the part is hashed.

Stdlib ``sqlite3``; pure Python.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "CACHE_PATH_ENV",
    "LOCAL_FILESYSTEMS",
    "SETTLED_SECONDS",
    "PartCache",
    "cache_path",
    "open_cache",
    "status",
]

CACHE_PATH_ENV = "STRATA_LAB_IDENTITY_CACHE"
SETTLED_SECONDS = 2.0
"""How much older than the start of the read a file's times must be before its digest is kept."""
LOCAL_FILESYSTEMS = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "f2fs", "tmpfs", "overlay", "jfs", "reiserfs"}
)
"""Filesystems whose change times the kernel keeps for every write (module doc)."""
BUSY_SECONDS = 0.2
"""How long to wait for another process holding the cache: a miss only means reading the file."""
_TABLE = "part_digests_v2"
"""The cache's table, named by its layout's version: a cache file written by another version
keeps its own table beside it, instead of failing every insert into a table of other columns."""
_SCHEMA = f"""CREATE TABLE IF NOT EXISTS {_TABLE} (
    scheme TEXT NOT NULL, path TEXT NOT NULL, status TEXT NOT NULL, digest TEXT NOT NULL,
    PRIMARY KEY (scheme, path))"""

Status = tuple[int, int, int, int, int]
"""(device, inode, size, modification ns, change ns) of an open file."""


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


def status(descriptor: int) -> Status:
    """The status of an open file, as the cache keys it."""
    info = os.fstat(descriptor)
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


class PartCache:
    """The digests of one identity's parts under ``scheme`` (what the digests depend on: the
    part header and the chunk size), on one connection (``None``: the cache is off or
    unusable, and every part is read)."""

    def __init__(self, connection: sqlite3.Connection | None, scheme: str) -> None:
        self._connection = connection
        self._scheme = scheme

    def remembered(self, path: Path, descriptor: int) -> str | None:
        """The digest kept for the open file ``path`` at its current status, or None."""
        if self._connection is None or not _on_local_filesystem(descriptor):
            return None
        row = self._run(
            f"SELECT digest FROM {_TABLE} WHERE scheme = ? AND path = ? AND status = ?",
            (self._scheme, str(path.resolve()), _key(status(descriptor))),
        )
        return row[0] if row else None

    def remember(self, path: Path, descriptor: int, before: Status, started: float,
                 digest: str) -> None:  # fmt: skip
        """Keep ``digest`` if the open file's status was ``before`` when its read began at
        ``started`` (``time.time()``), is the same now, and had settled (module doc)."""
        if self._connection is None or not _on_local_filesystem(descriptor):
            return
        newest = max(before[3], before[4]) / 1e9
        if status(descriptor) != before or started - newest < SETTLED_SECONDS:
            return
        self._run(
            f"INSERT OR REPLACE INTO {_TABLE} VALUES (?, ?, ?, ?)",
            (self._scheme, str(path.resolve()), _key(before), digest),
        )

    def _run(self, sql: str, values: tuple) -> tuple | None:
        try:
            return self._connection.execute(sql, values).fetchone()
        except (sqlite3.Error, OSError, ValueError, OverflowError):
            return None


@contextlib.contextmanager
def open_cache(scheme: str) -> Iterator[PartCache]:
    """The cache for the parts of one identity: one connection and one transaction for all of
    them (module doc for where it lives); a cache that cannot be used is passed over."""
    connection = _connect()
    try:
        yield PartCache(connection, scheme)
        if connection is not None:
            with contextlib.suppress(sqlite3.Error):
                connection.commit()
    finally:
        if connection is not None:
            connection.close()


def _connect() -> sqlite3.Connection | None:
    file = cache_path()
    if file is None:
        return None
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(file, os.O_CREAT | os.O_RDWR, 0o600))  # owner-only from the start
        connection = sqlite3.connect(file, timeout=BUSY_SECONDS)
    except (OSError, sqlite3.Error, ValueError):
        return None
    try:
        connection.execute("PRAGMA synchronous = OFF")  # a lost cache is only a re-read
        connection.execute(_SCHEMA)
    except sqlite3.Error:  # not a database, or locked past the wait
        connection.close()
        return None
    return connection


def _key(seen: Status) -> str:
    """A status as text: device and inode numbers can exceed SQLite's 64-bit integers."""
    return ":".join(map(str, seen))


def _on_local_filesystem(descriptor: int) -> bool:
    device = os.fstat(descriptor).st_dev
    return _filesystems().get((os.major(device), os.minor(device))) in LOCAL_FILESYSTEMS


@functools.cache
def _filesystems() -> dict[tuple[int, int], str]:
    """Each mounted device's (major, minor) and filesystem type, from /proc/self/mountinfo
    (empty off Linux: nothing is cached there)."""
    found: dict[tuple[int, int], str] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        fields = line.split()
        if " - " not in line or len(fields) < 3:
            continue
        major, _, minor = fields[2].partition(":")
        kind = line.split(" - ", 1)[1].split()[0]
        with contextlib.suppress(ValueError):
            found[(int(major), int(minor))] = kind
    return found
