"""Data in files on the machine that runs the app — a CSV or Parquet file, a folder of Parquet
parts, or a glob — read where it lies by DuckDB (:class:`~dpcore.engines.DuckDBEngine`): an
engine source (:mod:`strata_ui.engine_sources`), whose cache key is a fingerprint of the files'
names, sizes and modification times (:func:`files_fingerprint`); the data's identity in the
ledger is the files' bytes, as for an upload of the same file (:mod:`dpcore.foundations.dataset`).

In single-user mode any path on the machine may be opened unless the environment variable
:data:`DATA_ROOT_ENV` names a folder: then only files under it. Served to a team, the app always
has a data root (that variable, or ``data_root`` in the team file; :mod:`strata_ui.serving`
refuses to start without one), so no one reads the server's other files through the app; a path
Spark reads is held to the same folder (:func:`check_under_root`), and DuckDB itself may read
the listed files only (:class:`~dpcore.engines.DuckDBEngine`). A path outside the root gets the
same answer whether or not anything is there.
"""

from __future__ import annotations

import glob
import hashlib
import itertools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from dpcore.engines import DuckDBEngine, EngineError, data_files
from strata_ui import serving
from strata_ui.engine_sources import EngineSource

__all__ = ["DATA_ROOT_ENV", "FilesSource", "check_under_root", "data_root", "files_fingerprint"]

DATA_ROOT_ENV = serving.DATA_ROOT_ENV
"""The folder under which files may be opened; unset: anywhere on the machine."""


def data_root() -> Path | None:
    """The folder files must lie under (:data:`DATA_ROOT_ENV`, else the team file's), or None
    when any may be opened (single-user mode without either)."""
    root = os.environ.get(DATA_ROOT_ENV, "").strip()
    if root:
        return Path(root).expanduser().resolve()
    config = serving.mode().config
    return None if config is None else config.data_root


def files_fingerprint(location: str) -> str:
    """A fingerprint of the files at ``location``: their resolved paths, sizes and modification
    times (not their contents, which a large folder would take minutes to read). It stays on the
    server, as every dataset's fingerprint does.

    Raises
    ------
    EngineError
        Nothing at ``location``, files of no known format (:func:`~dpcore.engines.data_files`),
        or a file outside :func:`data_root`.
    """
    root = check_under_root(location)
    if root is not None and _links_out_of(location, root):
        raise _outside_root(location, root)
    found = [path.resolve() for path in data_files(location)[0]]
    if root is not None and any(not path.is_relative_to(root) for path in found):  # symlinks
        raise _outside_root(location, root)
    listing = [[str(path), path.stat().st_size, path.stat().st_mtime_ns] for path in found]
    return "files:" + hashlib.sha256(json.dumps(listing).encode()).hexdigest()[:16]


def check_under_root(location: str) -> Path | None:
    """Refuse a path (or glob) whose folder is outside :func:`data_root`; return the root.

    The folder a glob starts from is checked before anything is listed: a listing's messages
    ("… is neither Parquet nor CSV", "no data at …") would name files outside the root."""
    root = data_root()
    if root is not None and not _glob_base(location).is_relative_to(root):
        raise _outside_root(location, root)
    return root


def _links_out_of(location: str, root: Path) -> bool:
    """Whether a symbolic link among the entries ``location`` names leads out of ``root``,
    whether or not its target exists: a listing follows only links to files that exist, so
    telling those apart would say what exists outside the root."""
    text = os.path.expanduser(location)
    if any(c in text for c in "*?["):
        entries = [Path(p) for p in glob.glob(text, recursive=True)]
    else:
        path = Path(text)
        entries = [path, *path.rglob("*")] if path.is_dir() else [path]
    return any(e.is_symlink() and not e.resolve().is_relative_to(root) for e in entries)


def _glob_base(location: str) -> Path:
    """The resolved folder ``location`` starts from: its parts before the first with a glob
    character (``/data/*/x.parquet`` → ``/data``)."""
    parts = Path(location).expanduser().parts
    fixed = itertools.takewhile(lambda part: not any(c in part for c in "*?["), parts)
    return Path(*fixed).resolve() if parts else Path.cwd()


def _outside_root(location: str, root: Path) -> EngineError:
    return EngineError(
        f"{location} is not under {root}, the only folder this installation opens files "
        f"from (set by {DATA_ROOT_ENV} on the machine that runs the app). Give a path "
        f"under {root}, or ask whoever runs the app to place the data there."
    )


@dataclass(frozen=True)
class FilesSource(EngineSource):
    """Files on the machine that runs the app, at ``location`` as the user typed it (a file, a
    folder of Parquet parts, or a glob)."""

    location: str
    kind: ClassVar[str] = "files"

    @property
    def name(self) -> str:
        return self.location

    @property
    def place(self) -> str:
        return f"in the files at {self.location}"

    def fingerprint(self) -> str:
        if not self.location.strip():
            raise EngineError(
                "Type the path of a CSV or Parquet file, a folder of Parquet files, or a glob "
                "such as /data/survey/*.parquet."
            )
        return files_fingerprint(self.location)

    def open_engine(self) -> DuckDBEngine:
        return DuckDBEngine(self.location)

    def address(self) -> dict[str, str]:
        return {"data": self.kind, "path": self.location}
