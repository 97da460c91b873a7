"""Fixtures of the library's tests."""

import pathlib

import pytest

from dpcore.engines import spark_session


@pytest.fixture(scope="module")
def spark():
    """The local Spark session of this test process (started once, in seconds; later calls get
    the same session again)."""
    return spark_session("local[2]")


@pytest.fixture
def db(tmp_path: pathlib.Path) -> pathlib.Path:
    """The path of a ledger file not yet created (a test module may define its own ``db``)."""
    return tmp_path / "ledger.sqlite"
