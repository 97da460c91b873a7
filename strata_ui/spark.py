"""Data in Spark — a table of the session's catalog, or Parquet or CSV files that Spark reads —
aggregated by :class:`~dpcore.engines.SparkEngine`: an engine source
(:mod:`strata_ui.engine_sources`) whose fingerprint is the master, the table and Spark's key of
what it will read (:meth:`~dpcore.engines.SparkEngine.plan_key`).

Spark runs one session per server process: it is a shared resource, started once per master
(:func:`session`) behind a spinner, since a local Spark takes ten seconds or more to start, and
given up on after :data:`START_TIMEOUT_S` so that a page never hangs.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from concurrent import futures
from dataclasses import dataclass
from typing import ClassVar

import streamlit as st

from dpcore.engines import EngineError, SparkEngine, spark_session
from strata_ui.engine_sources import EngineSource, in_background
from strata_ui.files import DATA_ROOT_ENV, check_under_root, data_root
from strata_ui.text import as_text

__all__ = ["DEFAULT_MASTER", "START_TIMEOUT_S", "SparkSource", "is_path", "session"]

DEFAULT_MASTER = "local[*]"
"""Spark on the machine that runs the app, with all its cores."""
START_TIMEOUT_S = 180.0
"""How long Spark may take to start before the page gives up on it (a local start takes
10–30 s on a busy two-core machine; a cluster's master that does not answer is refused within
seconds by :func:`~dpcore.engines.spark_session`)."""
_URL = re.compile(r"[a-zA-Z][\w+.-]*://")
_STARTING = threading.Lock()  # one start at a time: Spark allows one session per process


@st.cache_resource(max_entries=1, show_spinner=False)
def _session(master: str):
    with _STARTING:
        return spark_session(master)


def session(master: str):
    """The server's Spark session at ``master``, started on first use (with a spinner), shared
    by every browser session.

    Raises
    ------
    EngineError
        Spark cannot start there (:func:`~dpcore.engines.spark_session` says why), or did not
        start within :data:`START_TIMEOUT_S`.
    """
    with st.spinner(
        f"Starting Spark at {as_text(master)}: the first start takes ten seconds or more…"
    ):
        started = in_background(lambda: _session(master))
        try:
            return started.result(timeout=START_TIMEOUT_S)
        except futures.TimeoutError:
            raise EngineError(
                f"Spark at {master} did not start within {START_TIMEOUT_S:g} s. Check that "
                "the master answers and has free workers; if it is only slow, connect again "
                "in a minute."
            ) from None


def is_path(table: str) -> bool:
    """Whether the user's ``table`` is a path Spark reads rather than a table's name (a name
    holds no slash)."""
    return "/" in table or "\\" in table or table.lower().endswith((".parquet", ".csv", ".csv.gz"))


@dataclass(frozen=True)
class SparkSource(EngineSource):
    """A table of the Spark session at ``master`` (or a path Spark reads), as the user typed
    them."""

    master: str
    table: str
    kind: ClassVar[str] = "spark"

    @property
    def name(self) -> str:
        return f"{self.table} (Spark at {self.master})"

    @property
    def place(self) -> str:
        if is_path(self.table):
            return f"in the files at {self.table}, which Spark at {self.master} reads"
        return f"in Spark at {self.master}"

    @property
    def location(self) -> str:
        """What :class:`~dpcore.engines.SparkEngine` reads: ``spark:TABLE`` or the path."""
        return self.table if is_path(self.table) else f"spark:{self.table}"

    def fingerprint(self) -> str:
        if not self.table.strip():
            raise EngineError(
                "Type the name of a table in Spark, or the path of Parquet files that Spark "
                "can read, such as /data/survey/."
            )
        if is_path(self.table):
            _check_path(self.table)
        key = [self.master, self.location, self.open_engine().plan_key()]
        return "spark:" + hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]

    def open_engine(self) -> SparkEngine:
        return SparkEngine(self.location, session=session(self.master))

    def address(self) -> dict[str, str]:
        return {"data": self.kind, "master": self.master, "table": self.table}


def _check_path(path: str) -> None:
    """Hold a path Spark reads to :data:`~strata_ui.files.DATA_ROOT_ENV`'s folder when it is
    set: only files on this machine under it (a URL such as hdfs://… could name anything)."""
    root = data_root()
    if root is None:
        return
    local = path.removeprefix("file://")
    if _URL.match(local):
        raise EngineError(
            f"{path} is not a folder on this machine, and this installation reads files from "
            f"{root} only (set by {DATA_ROOT_ENV}). Give a path under {root}, or a table."
        )
    check_under_root(local)
