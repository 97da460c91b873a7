"""Fixtures of the library's tests."""

import pytest

from dpcore.engines import spark_session


@pytest.fixture(scope="module")
def spark():
    """The local Spark session of this test process (started once, in seconds; later calls get
    the same session again)."""
    return spark_session("local[2]")
