"""Fixtures of the library's tests."""

import pathlib

import pandas as pd
import pytest

from dpcore.engines import spark_session
from dpcore.foundations.datasets import load_demo
from dpcore.release.commit import ReleaseRecord, release
from tests.unit.dpcore.release_helpers import make_plan


@pytest.fixture(scope="module")
def spark():
    """The local Spark session of this test process (started once, in seconds; later calls get
    the same session again)."""
    return spark_session("local[2]")


@pytest.fixture
def db(tmp_path: pathlib.Path) -> pathlib.Path:
    """The path of a ledger file not yet created (a test module may define its own ``db``)."""
    return tmp_path / "ledger.sqlite"


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    """The demo data set (a test module may define its own ``demo``)."""
    return load_demo()


@pytest.fixture
def demo_record(demo, ledger) -> ReleaseRecord:
    """A simulated release of the demo's mean by race and sex, its title holding HTML."""
    return release(
        make_plan(demo, label="Hours <b>by</b> group"), ledger, noise="simulation", rng=11
    )
