"""The files a location names (a file, a glob, a folder of parts), and their identity.

The DuckDB engine reads these files, the Spark engine reads the same folder, and both identify
the data by the files' bytes (:func:`location_identity`, after
:func:`dpcore.foundations.dataset.files_identity`): the identity an upload of the same file
has, whichever engine reads it.

Pure Python; never imports streamlit or plotly.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from dpcore.engines.base import EngineError
from dpcore.foundations.dataset import files_identity

__all__ = [
    "CSV_SUFFIXES", "PARQUET_SUFFIXES", "data_files", "location_identity", "parts_identity",
]  # fmt: skip

PARQUET_SUFFIXES = (".parquet", ".pq")
CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".txt")


def data_files(location: str | os.PathLike) -> tuple[list[Path], str]:
    """The files a location names — a file, a glob, or a folder (searched recursively) — and
    their format, ``"parquet"`` or ``"csv"``.

    A folder's files whose path within it has a part starting with ``_`` or ``.`` are left
    out, as Spark and Hive leave them out (``_SUCCESS``, ``.part-0.parquet.crc``, a
    ``_temporary`` folder), so that both engines read, and identify, the same parts.

    Raises
    ------
    EngineError
        Nothing there, files of no known format, or Parquet mixed with CSV.
    """
    text = os.fspath(location)
    path = Path(text).expanduser()
    if any(ch in text for ch in "*?["):
        files = [Path(p) for p in sorted(glob.glob(os.path.expanduser(text), recursive=True))]
    elif path.is_dir():
        files = sorted(
            p for p in path.rglob("*")
            if p.is_file() and _format(p) and not _hidden(p.relative_to(path))
        )  # fmt: skip
    else:
        files = [path] if path.exists() else []
    if not files:
        raise EngineError(
            f"No data at {text}: give a Parquet or CSV file, a folder of them, or a glob such "
            "as data/*.parquet."
        )
    formats = {_format(p) for p in files}
    if None in formats:
        odd = next(p for p in files if _format(p) is None)
        raise EngineError(
            f"{odd} is neither Parquet ({', '.join(PARQUET_SUFFIXES)}) nor CSV "
            f"({', '.join(CSV_SUFFIXES)}); rename it or leave it out of the location."
        )
    if len(formats) > 1:
        raise EngineError(
            f"{text} holds both Parquet and CSV files; point to one format (e.g. a glob "
            "ending in *.parquet)."
        )
    return files, formats.pop()


def location_identity(location: str | os.PathLike) -> str:
    """The identity of the data at ``location``: the bytes of every file :func:`data_files`
    lists (one read).

    Raises
    ------
    EngineError
        Nothing there, or a file that cannot be read or decompressed.
    """
    return parts_identity(data_files(location)[0])


def parts_identity(files: list[str] | list[Path]) -> str:
    """The identity of the data in ``files`` (:func:`~dpcore.foundations.dataset.files_identity`),
    with a message for the user when a file cannot be read or decompressed."""
    try:
        return files_identity(files)
    except ValueError as exc:
        raise EngineError(f"Cannot identify the data: {exc}.") from None


def _format(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    return None


def _hidden(relative: Path) -> bool:
    return any(part.startswith(("_", ".")) for part in relative.parts)
