"""A real Spark cluster: a standalone master and two workers on 127.0.0.1, started from the
installed PySpark for this module. The command line's seeded dry runs of the mean, the ratio and
synthetic data read a Parquet file through the cluster's executors and give pandas' release; the
app connects to the cluster's master and runs the same three analyses on a table of its session.

One cluster per module (the JVMs take seconds to start); every other Spark test runs on
``local[2]``, so the session those left running is stopped first, and this module's after."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dpcore import load_demo
from dpcore.analyses.mean import MeanSettings
from dpcore.analyses.ratio import RatioSettings
from dpcore.analyses.synth import SynthSettings
from dpcore.engines import spark_session
from strata_cli.main import main
from tests.app.helpers import change_settings, charts, errors, go, settings_of, start, text
from tests.app.test_spark import connect, register

pytestmark = pytest.mark.slow

STARTUP_S = 60.0
"""How long the master and each worker may take to accept connections."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(port: int, process: subprocess.Popen, log: Path) -> None:
    """Until something accepts connections on ``port``; the process's log if it dies first."""
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"a Spark daemon stopped: {log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"no Spark daemon on port {port} after {STARTUP_S:g} s: {log.read_text()}")


def stop_running_session() -> None:
    from pyspark.sql import SparkSession

    running = SparkSession.getActiveSession()
    if running is not None:
        running.stop()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """``spark://127.0.0.1:PORT`` of a standalone master with two one-core workers, and the
    session connected to it (stopped, with the daemons, after the module)."""
    import pyspark

    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    folder = tmp_path_factory.mktemp("spark-cluster")
    environment = {
        **os.environ, "SPARK_HOME": str(spark_class.parent.parent),
        "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(folder), "SPARK_WORKER_DIR": str(folder / "work"),
    }  # fmt: skip
    port = free_port()
    master = f"spark://127.0.0.1:{port}"
    daemons: list[subprocess.Popen] = []

    def launch(name: str, *args: str) -> tuple[subprocess.Popen, Path]:
        log = folder / f"{name}.log"
        with log.open("w") as out:
            daemon = subprocess.Popen([str(spark_class), *args], env=environment, stdout=out,
                                      stderr=subprocess.STDOUT)  # fmt: skip
        daemons.append(daemon)
        return daemon, log

    try:
        daemon, log = launch("master", "org.apache.spark.deploy.master.Master", "--host",
                             "127.0.0.1", "--port", str(port), "--webui-port", str(free_port()))  # fmt: skip
        wait_for(port, daemon, log)
        workers = []
        for i in range(2):  # started together, then waited for
            worker_port = free_port()
            workers.append((worker_port, *launch(
                f"worker{i}", "org.apache.spark.deploy.worker.Worker", master, "--host",
                "127.0.0.1", "--port", str(worker_port), "--webui-port", str(free_port()),
                "--cores", "1", "--memory", "1g", "--work-dir", str(folder / f"work{i}"),
            )))  # fmt: skip
        for worker_port, daemon, log in workers:
            wait_for(worker_port, daemon, log)
        stop_running_session()
        session = spark_session(master)
        yield master, session
    finally:
        stop_running_session()
        for daemon in daemons:
            daemon.terminate()
        for daemon in daemons:
            daemon.wait(timeout=30)
        shutil.rmtree(folder / "work", ignore_errors=True)


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cluster-data") / "adult.parquet"
    load_demo().to_parquet(path)
    return path


ANALYSES = {
    "mean": ["--value", "hours_per_week", "--bounds", "0,100", "--estimator", "laplace",
             "--epsilon", "1"],
    "ratio": ["--analysis", "ratio", "--score", "score", "--label", "income_over_50k",
              "--score-bound", "1", "--estimator", "gaussian", "--rho", "0.5"],
    "synth": ["--analysis", "synth", "--synthesizer", "independent", "--columns",
              "sex,workclass,income_over_50k", "--categorical", "income_over_50k",
              "--synth-rows", "200", "--estimator", "laplace", "--epsilon", "1"],
}  # fmt: skip


@pytest.mark.parametrize("analysis", ANALYSES)
def test_the_cluster_gives_the_seeded_release_of_pandas(cluster, demo_file, capsys, analysis):
    master, _ = cluster
    outputs = []
    for engine in (["--engine", "pandas"], ["--engine", "spark", "--spark-master", master]):
        argv = ["release", str(demo_file), "--by", "race", *ANALYSES[analysis],
                "--sizes-public", "--dry-run", "--seed", "5", *engine]  # fmt: skip
        assert main(argv) == 0, capsys.readouterr().err
        outputs.append(json.loads(capsys.readouterr().out)["outputs"])
    assert outputs[0] == outputs[1] and outputs[0]


def test_the_session_runs_an_executor_on_each_worker(cluster):
    _, session = cluster
    status = session.sparkContext._jsc.sc().getExecutorMemoryStatus()
    deadline = time.monotonic() + STARTUP_S
    while status.size() < 3 and time.monotonic() < deadline:  # executors register as they start
        time.sleep(0.5)
        status = session.sparkContext._jsc.sc().getExecutorMemoryStatus()
    assert status.size() == 3  # the driver's block manager and one executor on each worker


def test_the_app_runs_the_mean_ratio_and_synthetic_data_on_the_cluster(cluster):
    master, session = cluster
    register(session, "adult", load_demo())
    at = start("data")
    at.default_timeout = 90  # each pass is a Spark job on two one-core workers
    connect(at, master, "adult")
    assert at.main.metric[0].value == "32,561"
    assert f"in Spark at {master}" in text(at.sidebar.markdown)
    at.selectbox(key="mean.value").set_value("hours_per_week").run()
    go(at, "strata").main.multiselect[0].set_value(["race"]).run()
    change_settings(at, MeanSettings, clip_low=0.0, clip_high=100.0)
    go(at, "estimator")
    for analysis in ("ratio", "synth", "mean"):
        at.radio(key="estimator.analysis").set_value(analysis).run()
        if analysis == "ratio":
            at.selectbox(key="ratio.s_column").set_value("score").run()
            at.selectbox(key="ratio.y_column").set_value("income_over_50k").run()
            assert settings_of(at, RatioSettings).s_column == "score"
        if analysis == "synth":
            [columns] = [m for m in at.main.multiselect if m.label == "Columns to synthesize"]
            columns.set_value(["sex", "workclass", "income_over_50k"]).run()
            assert settings_of(at, SynthSettings).columns == ("sex", "workclass", "income_over_50k")
        assert not at.main.error, (analysis, errors(at))
        go(at, "compare")
        assert not at.main.error, (analysis, errors(at))
        assert charts(at), analysis
        go(at, "estimator")
    review = text(go(at, "release").main.markdown)
    assert f"**Data:** adult (Spark at {master}), 32,561 rows" in review
    assert "**Read by:** the spark engine, where the data lies" in review
