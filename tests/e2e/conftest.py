"""Browser-test fixtures: Debian's chromium and one Streamlit server per test session."""

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from dpcore.foundations.identity_cache import CACHE_PATH_ENV
from dpcore.foundations.ledger import LEDGER_PATH_ENV
from tests.e2e.helpers import LOAD_TIMEOUT_MS

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVER_START_TIMEOUT_SECONDS = 60

# Every expectation waits as long as a page load may take. Playwright's default of 5 s is too
# short when three test workers share two cores: a chart that draws in 1 s alone took more than
# 5 s in a full run, and the test failed with a count of 0.
expect.set_options(timeout=LOAD_TIMEOUT_MS)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Launch Debian's chromium: `playwright install` cannot download browsers here."""
    return {
        **browser_type_launch_args,
        "executable_path": "/usr/bin/chromium",
        "args": [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    }


def free_port() -> int:
    """A port nothing listens on now; each xdist worker picks its own."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def is_healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().decode() == "ok"
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


@contextlib.contextmanager
def running_app(
    workdir: Path, *, address: str = "127.0.0.1", port: int | None = None,
    env: dict[str, str] | None = None, args: tuple[str, ...] = (),
) -> Iterator[str]:  # fmt: skip
    """Serve app.py on ``port`` (a free one by default) of ``address`` with a throwaway ledger in
    ``workdir``, ``env`` added to the environment and ``args`` to the command line; yield its
    URL."""
    port = free_port() if port is None else port
    url = f"http://{address}:{port}"
    env = {
        **os.environ,
        LEDGER_PATH_ENV: str(workdir / "ledger.sqlite"),
        CACHE_PATH_ENV: str(workdir / "identities.sqlite"),
        **(env or {}),
    }
    stderr_path = workdir / "stderr.log"
    with open(workdir / "stdout.log", "w") as stdout, open(stderr_path, "w") as stderr:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app.py",
                "--server.headless",
                "true",
                "--server.address",
                address,
                "--server.port",
                str(port),
                "--server.fileWatcherType",
                "none",
                "--browser.gatherUsageStats",
                "false",
                *args,
            ],
            cwd=REPO_ROOT,
            env=env,
            stdout=stdout,
            stderr=stderr,
        )
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_SECONDS
        while not is_healthy(url):
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(
                    f"Streamlit did not come up at {url} within {SERVER_START_TIMEOUT_SECONDS} s "
                    f"(exit code {server.poll()}). stderr:\n{stderr_path.read_text()}"
                )
            time.sleep(0.25)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    """One server shared by the session's browser tests."""
    with running_app(tmp_path_factory.mktemp("streamlit")) as url:
        yield url


@pytest.fixture
def fresh_app_url(tmp_path):
    """A server no browser has visited yet, for behaviour that depends on the first request."""
    with running_app(tmp_path) as url:
        yield url


def pytest_collection_modifyitems(config, items):
    """A browser test that fails is run once more before it counts as failed. On two loaded
    cores a click can land while Streamlit redraws the page (a form submit or a multiselect pick
    lost in about one clean-clone run in three this session, never twice in a row); a test
    that fails twice fails. The product's own checks are not retried: unit and app tests run once."""
    for item in items:
        if item.nodeid.startswith("tests/e2e/"):
            item.add_marker(pytest.mark.flaky(reruns=1))
