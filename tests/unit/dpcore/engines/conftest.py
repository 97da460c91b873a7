"""Fixtures of the engine tests: the messy frame in memory and as a folder of Parquet parts."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.frames import write_shuffled_parts
from tests.unit.dpcore.engines.helpers import messy_frame


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return messy_frame()


@pytest.fixture(scope="module")
def parquet_folder(frame, tmp_path_factory):
    """The frame in three Parquet parts, rows shuffled, in a folder."""
    return write_shuffled_parts(frame, tmp_path_factory.mktemp("parts"), seed=1)
