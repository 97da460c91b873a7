"""GVDP's public bounds (GVDPBounds: a ball, a box, or overestimated from a guess) and the BLB
variance spread: their definitions and the errors naming what is wrong."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.analyses.gvdp.bounds import GVDPBounds, blb_variance_spread


def test_bounds_validation():
    with pytest.raises(ValueError, match="`radius` must be a finite number > 0"):
        GVDPBounds([0.0], 0.0, [1.0])
    with pytest.raises(ValueError, match="`variance_high` must be finite and > 0"):
        GVDPBounds([0.0], 1.0, [-1.0])
    with pytest.raises(ValueError, match="one entry per coordinate"):
        GVDPBounds([0.0, 1.0], 1.0, [1.0])
    with pytest.raises(ValueError, match="`low` must be below `high`"):
        GVDPBounds.box([1.0], [0.0], [1.0])
    with pytest.raises(ValueError, match="`factor` must be >= 1"):
        GVDPBounds.overestimated([1.0], [1.0], 0.5, resamples=5, subset_size=10)
    with pytest.raises(ValueError, match="`theta` must not be all zero"):
        GVDPBounds.overestimated([0.0], [1.0], 10, resamples=5, subset_size=10)
    with pytest.raises(TypeError, match="`center` must be an array of numbers"):
        GVDPBounds(["a"], 1.0, [1.0])


def test_box_and_overestimated_follow_their_definitions():
    box = GVDPBounds.box([-1.0, 0.0], [3.0, 2.0], [1.0, 4.0])
    np.testing.assert_allclose(box.center, [1.0, 1.0])
    assert box.radius == pytest.approx(math.sqrt(4**2 + 2**2) / 2)
    np.testing.assert_allclose(box.spread(11, 50), blb_variance_spread(11, 50) * np.array([1, 4]))
    assert blb_variance_spread(11, 50) == pytest.approx(math.sqrt(0.2 + 0.04))
    loose = GVDPBounds.overestimated([3.0, 4.0], [0.5, 2.0], 100, resamples=11, subset_size=50)
    np.testing.assert_allclose(loose.center, [0.0, 0.0])
    assert loose.radius == pytest.approx(500.0)
    np.testing.assert_allclose(loose.variance_high, [50.0, 200.0])
    np.testing.assert_allclose(loose.variance_sd, 10 * math.sqrt(0.24) * np.array([0.5, 2.0]))
