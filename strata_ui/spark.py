"""Data in Spark — a table of the session's catalog, or Parquet or CSV files that Spark reads —
aggregated by :class:`~dpcore.engines.SparkEngine`: an engine source
(:mod:`strata_ui.engine_sources`) whose fingerprint is the master, the table and Spark's key of
what it will read (:meth:`~dpcore.engines.SparkEngine.plan_key`).

Spark runs one session per server process: it is a shared resource, started once per master
(:func:`session`) behind a spinner, since a local Spark takes ten seconds or more to start, and
given up on after :data:`START_TIMEOUT_S` so that a page never hangs.

The server connects only to masters it was allowed (:func:`check_master`): served to a team,
those of the team file's ``spark_masters``; in single-user mode, Spark on this machine
(``local[N]``, N up to its cores) and masters typed on the Data page of this server. Never one
that only an address names: a link must not make the server connect to a host of its choosing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from concurrent import futures
from dataclasses import dataclass
from typing import ClassVar

import streamlit as st

from dpcore.engines import EngineError, SparkEngine, spark_session
from strata_ui import serving
from strata_ui.engine_sources import EngineSource, in_background
from strata_ui.files import DATA_ROOT_ENV, check_under_root, data_root
from strata_ui.text import as_code, as_text

__all__ = [
    "DEFAULT_MASTER",
    "START_TIMEOUT_S",
    "SparkSource",
    "allow_typed",
    "check_master",
    "is_path",
    "listed_masters",
    "masters_sentence",
    "render_master_input",
    "session",
]

DEFAULT_MASTER = "local[*]"
"""Spark on the machine that runs the app, with all its cores."""
START_TIMEOUT_S = 180.0
"""How long Spark may take to start before the page gives up on it (a local start takes
10–30 s on a busy two-core machine; a cluster's master that does not answer is refused within
seconds by :func:`~dpcore.engines.spark_session`)."""
_URL = re.compile(r"[a-zA-Z][\w+.-]*://")
_STARTING = threading.Lock()  # one start at a time: Spark allows one session per process


_LOCAL = re.compile(r"local(\[(\*|[1-9]\d*)(,\s*[1-9]\d*)?\])?")


@st.cache_resource(show_spinner=False)
def _typed() -> set[str]:
    """Masters typed on the Data page of this server, in single-user mode."""
    return set()


def listed_masters() -> tuple[str, ...] | None:
    """The masters the team file allows, to offer on the Data page; None in single-user mode,
    where the master is typed."""
    config = serving.mode().config
    return None if config is None else config.spark_masters


def allow_typed(master: str) -> None:
    """Allow ``master``, typed on the Data page in single-user mode, for this server's life."""
    if listed_masters() is None:
        _typed().add(master)


def masters_sentence(listed: tuple[str, ...] | None) -> str:
    """Which masters the Data page offers, in a sentence (``listed``: :func:`listed_masters`)."""
    if listed is None:
        return (
            f"The master is `{DEFAULT_MASTER}` for Spark on the machine that runs the app, or "
            "your cluster's address, such as `spark://host:7077`."
        )
    return (
        "This installation connects to the masters its team file lists: "
        + ", ".join(map(as_code, listed))
        + "."
    )


def render_master_input(column, connected: SparkSource | None, *, key: str) -> str:
    """The master to connect to, in ``column``: typed in single-user mode, chosen among the
    team file's otherwise; returns it without surrounding spaces."""
    listed = listed_masters()
    if listed is None:
        typed = column.text_input(
            "Spark master",
            value=DEFAULT_MASTER if connected is None else connected.master,
            key=key,
            help="local[*]: Spark on this server with all its cores (local[2]: two cores). A "
            "cluster: the URL its master's web page shows, spark://host:7077.",
        )
        return typed.strip()
    current = connected.master if connected is not None else None
    chosen = column.selectbox(
        "Spark master",
        listed,
        index=listed.index(current) if current in listed else 0,
        key=key,
        help="The masters this installation's team file allows (`spark_masters`).",
    )
    return chosen or ""


def check_master(master: str) -> None:
    """Refuse ``master`` unless this server may connect to it (module doc).

    Raises
    ------
    EngineError
        Says which masters are allowed and how to allow another.
    """
    listed = listed_masters()
    if listed is not None:
        if master not in listed:
            offered = ", ".join(listed) or "none"
            raise EngineError(
                f"Spark master {master} is not one this installation connects to (its team "
                f"file's `spark_masters`: {offered}). Choose one of those, or ask whoever runs "
                "the app to add it."
            )
        return
    if not (_is_local(master) or master in _typed()):
        raise EngineError(
            f"Spark master {master} came from the address, not from you: this app connects to "
            "a cluster only once it was typed on the Data page. Type it under Connect to Spark "
            "and press Connect."
        )


def _is_local(master: str) -> bool:
    found = _LOCAL.fullmatch(master)
    cores = found and found.group(2)
    return bool(found) and (not cores or cores == "*" or int(cores) <= (os.cpu_count() or 1))


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
    them, and what the curator declared the data to be (``declared``: the identity of a table
    whose catalog keeps no snapshot, :meth:`~dpcore.engines.SparkEngine.identity`)."""

    master: str
    table: str
    declared: str = ""
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
        check_master(self.master)
        if not self.table.strip():
            raise EngineError(
                "Type the name of a table in Spark, or the path of Parquet files that Spark "
                "can read, such as /data/survey/."
            )
        if is_path(self.table):
            _check_path(self.table)
        key = [self.master, self.location, self.open_engine().plan_key(), self.declared]
        return "spark:" + hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]

    def open_engine(self) -> SparkEngine:
        check_master(self.master)
        return SparkEngine(
            self.location, session=session(self.master), declared_identity=self.declared or None
        )

    def address(self) -> dict[str, str]:
        declared = {"identity": self.declared} if self.declared else {}
        return {"data": self.kind, "master": self.master, "table": self.table, **declared}


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
