"""How the Spark engine identifies its data (:meth:`~dpcore.engines.SparkEngine.identity`): a
path on this machine by its files' bytes, a table by the snapshot its catalog keeps, otherwise
by what the curator declares.

PySpark is only called through the session given; never imports streamlit or plotly.
"""

from __future__ import annotations

import re

from dpcore.engines.base import EngineError
from dpcore.engines.parts import location_identity
from dpcore.foundations.dataset import declared_identity, snapshot_identity

__all__ = ["checked_declaration", "find_identity", "local_path", "table_snapshot"]


def find_identity(session, location: str, declared: str | None) -> str:
    """A path on this machine: its files' bytes, as the DuckDB engine and an upload identify
    them (:func:`~dpcore.engines.parts.location_identity`). A table: the snapshot its catalog
    keeps (:func:`table_snapshot`), else the ``declared`` identity. A remote path: the
    ``declared`` identity. Empty when there is none."""
    local = local_path(location)
    if local is not None:
        return location_identity(local)
    if location.startswith("spark:"):
        table = location.removeprefix("spark:")
        snapshot = table_snapshot(session, table)
        if snapshot is not None:
            return snapshot_identity(table, snapshot)
    return "" if declared is None else declared_identity(declared)


def table_snapshot(session, table: str) -> dict | None:
    """The snapshot of ``table`` that its catalog keeps, or None: Delta's table id and latest
    version (``DESCRIBE DETAIL``, ``DESCRIBE HISTORY``), or Iceberg's current snapshot id (its
    ``snapshots`` metadata table). A plain table or a view has none: Spark answers these
    queries with an error, which means "no snapshot" here."""
    quoted = ".".join("`" + part.replace("`", "``") + "`" for part in table.split("."))
    try:
        detail = session.sql(f"DESCRIBE DETAIL {quoted}").first()
        if detail is not None and str(detail["format"]).lower() == "delta":
            version = session.sql(f"DESCRIBE HISTORY {quoted} LIMIT 1").first()["version"]
            return {"format": "delta", "id": str(detail["id"]), "version": int(version)}
    except Exception:  # not Delta (or no Delta in this session); the JVM's errors vary
        pass
    try:
        found = session.sql(
            f"SELECT snapshot_id FROM {quoted}.snapshots ORDER BY committed_at DESC LIMIT 1"
        ).first()
    except Exception:  # not Iceberg
        return None
    return None if found is None else {"format": "iceberg", "snapshot": int(found["snapshot_id"])}


def local_path(location: str) -> str | None:
    """``location`` as a path on this machine (a ``file://`` URL or a plain path); None for a
    table or a remote URL (hdfs://, s3a://, ...)."""
    if location.startswith("spark:"):
        return None
    if location.startswith("file://"):
        return location.removeprefix("file://")
    return None if re.match(r"[a-zA-Z][\w+.-]*://", location) else location


def checked_declaration(location: str, declared: str | None) -> str | None:
    """The curator's declared identity, refused for a path on this machine (its bytes are its
    identity, and another name for them would make one dataset two)."""
    if declared is None or not declared.strip():
        return None
    if local_path(location) is not None:
        raise EngineError(
            f"{location} is a path on this machine: its files' bytes identify it, whichever "
            "engine reads it. Declare an identity only for a Spark table or a remote path."
        )
    return declared.strip()
