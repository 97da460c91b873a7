"""The ratio's intervals refuse bad arguments, bad data and impossible sums with actionable
messages that never echo a private value."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dpcore.analyses.ratio.intervals import ratio_ci, ratio_interval
from dpcore.analyses.ratio.noise import release_ratio_sums
from dpcore.analyses.ratio.sums import RatioSums, ratio_sums
from tests.unit.dpcore.analyses.ratio.helpers import GAUSSIAN, paper_ci, paper_rows


@pytest.mark.parametrize(
    ("override", "error", "message"),
    [
        ({"epsilon": -1}, ValueError, r"`epsilon` must be a finite number > 0, got -1.0"),
        ({"epsilon": "1"}, TypeError, r"`epsilon` must be a real number"),
        ({"delta": 0}, ValueError, r"`delta` must be a number with 0 < delta < 1, got 0.0"),
        ({"delta": None}, TypeError, r"`delta` must be a number in \(0, 1\)"),
        ({"delta": 1.5, "mechanism": "laplace"}, ValueError, r"`delta` must be None or in"),
        ({"mechanism": "exponential"}, ValueError, r"`mechanism` must be one of .*'exponential'"),
        ({"method": "bootstrap"}, ValueError, r"`method` must be one of .*'bootstrap'"),
        ({"scale": "sqrt"}, ValueError, r"`scale` must be one of .*'sqrt'"),
        ({"composition": "advanced"}, ValueError, r"`composition` must be one of"),
        ({"composition": "zcdp", "mechanism": "laplace"}, ValueError, r"mechanism='gaussian'"),
        ({"level": 1.0}, ValueError, r"`level` must be a number with 0 < level < 1, got 1.0"),
        ({"B": 0}, ValueError, r"`B` must be an integer >= 1, got 0"),
        ({"B": 2.5}, TypeError, r"`B` must be an integer"),
        ({"bounds": (1, -1, 3)}, ValueError, r"`bounds.y` must be a finite number > 0, got -1.0"),
        ({"bounds": "wide"}, TypeError, r"`bounds` must be RatioBounds or a tuple"),
        ({"bounds": (1, 0.5, 3)}, ValueError, r"`bounds.y` must be >= 1 for binary y"),
        ({"rng": "seed"}, TypeError, r"`rng` must be a numpy Generator"),
        ({"noise": object()}, TypeError, r"`noise` must be a NoiseSource"),
        ({"binary_y": 1}, TypeError, r"`binary_y` must be True or False"),
    ],
)
def test_bad_arguments_are_refused_with_actionable_messages(override, error, message):
    s, y, w = paper_rows(50, True, 9)
    with pytest.raises(error, match=message):
        paper_ci((s, y, w), True, **override)


@pytest.mark.parametrize(
    ("rows", "error", "message"),
    [
        (lambda s, y, w: (s, y[:-1], w), ValueError, r"`y` must have the same length as `s`"),
        (lambda s, y, w: (np.where(s > 0.9, np.nan, s), y, w), ValueError, r"`s` must be finite"),
        (lambda s, y, w: (s.astype(str), y, w), TypeError, r"`s` must be a numeric array"),
        (lambda s, y, w: (s, y * 0.5, w), ValueError, r"`y` must contain only 0 and 1"),
        (lambda s, y, w: (s, y, None), ValueError, r"`bounds.w` must be 1 for unweighted data"),
        (lambda s, y, w: (s[:, None], y, w), ValueError, r"`s` must be one-dimensional"),
    ],
)
def test_bad_data_is_refused_without_echoing_it(rows, error, message):
    s, y, w = rows(*paper_rows(50, True, 9))
    with pytest.raises(error, match=message) as info:
        ratio_ci(
            s,
            y,
            w,
            epsilon=1.0,
            delta=1e-6,
            mechanism="gaussian",
            method="none",
            bounds=(1, 1, 3),
            binary_y=True,
        )
    original = paper_rows(50, True, 9)[0]
    assert not any(f"{v:.3f}" in str(info.value) for v in original)  # private values stay out


def test_sums_that_clipped_rows_cannot_produce_are_refused():
    exact = ratio_sums(*paper_rows(100, True, 10), bounds=(1, 1, 3), binary_y=True)
    unclipped = replace(exact, ws=exact.w * 2)  # as if s = 2 > u_s = 1 in every row
    kwargs = dict(epsilon=1.0, **GAUSSIAN, bounds=(1, 1, 3))
    with pytest.raises(ValueError, match=r"`sums.ws` is not a sum of rows clipped"):
        release_ratio_sums(unclipped, **kwargs)
    with pytest.raises(ValueError, match=r"`sums.wy` is not a sum of rows clipped"):
        release_ratio_sums(replace(exact, wy=-1.0), **kwargs)
    with pytest.raises(ValueError, match=r"`bounds.w` must be 1 for unweighted sums"):
        release_ratio_sums(replace(exact, ww=None), **kwargs)
    with pytest.raises(TypeError, match=r"`sums` must be RatioSums"):
        release_ratio_sums({"w": 1}, **kwargs)
    with pytest.raises(ValueError, match=r"`sums.ws` must be finite"):
        RatioSums(w=1, ws=np.nan, wy=1, wss=1, wys=1)
    with pytest.raises(ValueError, match=r"broadcastable shapes"):
        RatioSums(w=np.ones(3), ws=np.ones(2), wy=1, wss=1, wys=1)
    with pytest.raises(TypeError, match=r"`release` must be a RatioRelease"):
        ratio_interval(exact, method="none")
