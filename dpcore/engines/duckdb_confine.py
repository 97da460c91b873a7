"""What a DuckDB connection of :class:`~dpcore.engines.DuckDBEngine` may touch: the files it
listed, and its folder for spilling. Nothing else of the machine, for good.

Pure Python over DuckDB; never imports streamlit or plotly.
"""

from __future__ import annotations

import os

import duckdb

__all__ = ["confine"]


def confine(con: duckdb.DuckDBPyConnection, files: set[str], spill: str) -> None:
    """Let ``con`` read ``files`` and spill to ``spill``, and touch nothing else on the machine
    for good: no other file (a path smuggled into SQL, such as a column named after
    ``/etc/passwd``), no extension download, no attached database, and no setting changed back
    (DuckDB's ``enable_external_access``, ``allowed_paths`` and ``lock_configuration``). Files
    under the app's data root are the only ones ever listed (:mod:`strata_ui.files`)."""
    con.execute(f"SET allowed_paths = [{', '.join(_literal(f) for f in sorted(files))}]")
    con.execute(f"SET allowed_directories = [{_literal(os.path.join(spill, ''))}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
