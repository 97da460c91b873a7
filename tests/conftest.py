"""Fixtures shared by every test layer."""

import os

import pytest
import streamlit as st
from streamlit import config

from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.identity_cache import CACHE_PATH_ENV
from dpcore.foundations.ledger import LEDGER_PATH_ENV, Ledger
from strata_ui.team_config import CONFIG_ENV

# Every Java the tests start (Spark's JVM in a test process, in a Streamlit server of the browser
# tests, in an exported script) compiles with the quick JIT only, and collects garbage on one
# thread. The tests run many small Spark queries on two shared cores: the optimising JIT's
# threads spent more CPU than the queries (a module of Spark tests ran in 97 s instead of 218 s
# with these options) and never paid back on data this small. Results are unchanged: these
# choose how the JVM compiles and collects, not what Spark computes. Set JAVA_TOOL_OPTIONS
# yourself to run the tests with other options.
os.environ.setdefault("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")


@pytest.fixture(autouse=True)
def isolated_ledger(tmp_path, monkeypatch):
    """Point the ledger (and the identities remembered for files) at fresh files: keeps tests
    away from a user's real ledger and from each other's spends. No team file either, unless a
    test writes one."""
    monkeypatch.setenv(LEDGER_PATH_ENV, str(tmp_path / "ledger.sqlite"))
    monkeypatch.setenv(CACHE_PATH_ENV, str(tmp_path / "identities.sqlite"))
    monkeypatch.delenv(CONFIG_ENV, raising=False)


@pytest.fixture(autouse=True)
def served_as_make_run_does():
    """AppTest runs app.py in this process, where Streamlit's ``server.address`` keeps its
    default (every address), which the app counts as served to others: run it as ``make run``
    does, on 127.0.0.1, unless a test says otherwise."""
    config.set_option("server.address", "127.0.0.1")


@pytest.fixture(autouse=True, scope="module")
def fresh_data_cache():
    """Empty Streamlit's data and resource caches (shared by every AppTest in a process) before
    each test module, so no module depends on what another computed. Tests within a module
    share them, as reruns of one session do: every cache key names all it depends on (data
    fingerprints, settings), and a cold cache for each of hundreds of tests cost a third of the
    app tests' time."""
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture
def ledger():
    """The default ledger (ρ = 1) in the fresh file :func:`isolated_ledger` points at."""
    return Ledger(None, "default", ZCDP(1.0))
