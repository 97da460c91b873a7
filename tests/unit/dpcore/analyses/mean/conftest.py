"""Fixtures of the mean's tests: three groups of different sizes whose values the bounds (0, 10)
clip at both ends, as a frame and as group values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.mean.statistics import GroupValues


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """Three groups of different sizes; uniform(-2, 12) values, so (0, 10) clips both ends."""
    rng = np.random.default_rng(11)
    sizes = {"a": 400, "b": 100, "c": 25}
    return pd.DataFrame(
        {
            "group": np.repeat(list(sizes), list(sizes.values())),
            "value": rng.uniform(-2.0, 12.0, sum(sizes.values())),
        }
    )


@pytest.fixture(scope="module")
def strata(frame: pd.DataFrame) -> GroupValues:
    return GroupValues.from_frame(frame, "group", "value")
