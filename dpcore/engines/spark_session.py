"""Starting Spark for the engine (:class:`~dpcore.engines.SparkEngine`): a session at a master
URL, with the checks that turn Spark's slow or cryptic failures (no Java, a master that does
not answer, a second master in one program) into messages a user can act on.

PySpark is imported when a session is started, so the rest of dpcore never needs a JVM. Never
imports streamlit or plotly.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
from pathlib import Path

from dpcore.engines.base import EngineError

__all__ = ["MASTER_EXAMPLES", "spark_session"]

MASTER_ANSWER_S = 5.0
"""How long a cluster's master may take to accept a connection before it counts as silent."""
_MASTER = re.compile(
    r"local(\[(\*|\d+)(,\d+)?\])?|spark://[^\s/:,]+:\d+(,[^\s/:,]+:\d+)*|yarn|k8s://\S+"
)
MASTER_EXAMPLES = (
    "local[*] (this machine, all its cores), local[2] (two cores) or spark://host:7077 (a "
    "cluster's master, as its web page shows it)"
)


def spark_session(master: str = "local[*]"):
    """A Spark session at ``master`` (``local[*]`` on this machine, or a cluster's URL such as
    ``spark://host:7077``), quiet and without its web UI.

    A cluster's master is first asked whether it accepts a connection, within
    :data:`MASTER_ANSWER_S` seconds: Spark itself retries a silent master for about a minute
    before it gives up. Spark runs one session per program: while one runs, the same master
    gets it again and another master is refused (``getOrCreate`` would silently return the
    running one).

    Raises
    ------
    EngineError
        A master URL of no known form, Java missing, another master already in use, a master
        that does not answer, or Spark failing to start; each message says how to fix it.
    """
    master = master.strip()
    if not _MASTER.fullmatch(master):
        raise EngineError(f"“{master}” is not a Spark master URL. Give {MASTER_EXAMPLES}.")
    _check_java()
    if master.startswith("spark://"):
        _check_master_answers(master)
    running = _running_master()
    if running is not None and running != master:
        raise EngineError(
            f"Strata Lab is already connected to Spark at {running} here, and Spark allows one "
            f"connection per program. Use {running}, or restart Strata Lab to connect to "
            f"{master}."
        )
    try:
        from pyspark.sql import SparkSession

        session = (
            SparkSession.builder.master(master).appName("strata-lab")
            .config("spark.ui.enabled", "false").config("spark.log.level", "ERROR")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", str(max(4, os.cpu_count() or 1)))
            .getOrCreate()
        )  # fmt: skip
    except Exception as exc:  # the JVM's errors come as many types; each ends here
        raise EngineError(
            f"Could not start Spark at {master}: {_first_line(exc)}. Check that the master "
            "answers (spark://host:7077) and that Java 17 is installed."
        ) from None
    session.sparkContext.setLogLevel("ERROR")
    return session


def _check_java() -> None:
    """Refuse to start Spark without Java, where PySpark looks for it (``JAVA_HOME``, else the
    ``PATH``): PySpark's own error is a failed launch of a gateway."""
    home = os.environ.get("JAVA_HOME", "").strip()
    found = os.access(Path(home, "bin", "java"), os.X_OK) if home else shutil.which("java")
    if not found:
        where = f"JAVA_HOME is {home}, which holds no bin/java" if home else "no `java` on the PATH"
        raise EngineError(
            f"Spark needs Java 17, and this machine has none ({where}). Install it (on Debian: "
            "apt-get install openjdk-17-jre-headless), or set JAVA_HOME to a Java 17 folder, "
            "then restart the program."
        )


def _running_master() -> str | None:
    """The master of the Spark session this program runs, if any."""
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    return None if context is None else context.master


def _check_master_answers(master: str) -> None:
    """Refuse a ``spark://`` master none of whose hosts accepts a connection in time."""
    addresses = master.removeprefix("spark://").split(",")
    for address in addresses:
        host, port = address.rsplit(":", 1)
        try:
            socket.create_connection((host, int(port)), timeout=MASTER_ANSWER_S).close()
            return
        except OSError:
            continue
    raise EngineError(
        f"The Spark master at {master} does not answer (no connection within "
        f"{MASTER_ANSWER_S:g} s). Check the host and port (the master's web page shows its "
        "URL, usually spark://host:7077), that the master is running, and that this machine "
        "may reach it."
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
