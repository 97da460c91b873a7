"""The ratio's sums (Miao & Li, JDS 2022): which are released, rows clipped to the public bounds,
and each sum's sensitivity, derived by hand from the row-level formulas."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.analyses.ratio.noise import release_ratio_sums
from dpcore.analyses.ratio.sums import SUM_NAMES, RatioBounds, ratio_sums
from tests.unit.dpcore.analyses.ratio.helpers import GAUSSIAN, PAPER_BOUNDS, paper_ci


@pytest.mark.parametrize(
    ("weighted", "binary_y", "released"),
    [
        (False, True, ("w", "ws", "wy", "wss", "wys")),
        (True, True, ("w", "ws", "wy", "ww", "wss", "wys")),
        (False, False, ("w", "ws", "wy", "wss", "wyy", "wys")),
        (True, False, SUM_NAMES),
    ],
)
def test_redundant_sums_are_not_released(weighted, binary_y, released, rows_weighted):
    s, y, w = rows_weighted
    sums = ratio_sums(
        s, y, w if weighted else None, bounds=PAPER_BOUNDS[weighted], binary_y=binary_y
    )
    assert sums.released == released
    # The redundant twin is exact: Σw² = Σw = n unweighted, Σwy² = Σwy for binary y.
    weights = w if weighted else np.ones_like(s)
    assert sums.value("ww") == pytest.approx(np.sum(weights**2))
    assert sums.value("wyy") == pytest.approx(np.sum(weights * y**2))
    release = release_ratio_sums(
        sums, epsilon=1.0, **GAUSSIAN, bounds=PAPER_BOUNDS[weighted], rng=0
    )
    assert tuple(release.noise_scale) == released  # 5 sums unweighted, 6 weighted (binary y)
    if not weighted:
        assert release.sums.value("ww") == release.sums.w  # the noisy twin is the same number
    if binary_y:
        assert release.sums.value("wyy") == release.sums.wy


def test_rows_are_clipped_to_the_public_bounds():
    s = np.array([-0.5, 0.3, 2.5, 1.0])
    y = np.array([0.0, 1.5, 0.2, -1.0])
    w = np.array([0.5, 4.0, -1.0, 2.0])
    sums = ratio_sums(s, y, w, bounds=RatioBounds(s=2.0, y=1.0, w=3.0))
    cs, cy, cw = np.array([0, 0.3, 2.0, 1.0]), np.array([0, 1.0, 0.2, 0]), np.array([0.5, 3, 0, 2])
    expected = {
        "w": cw.sum(),
        "ws": (cw * cs).sum(),
        "wy": (cw * cy).sum(),
        "ww": (cw**2).sum(),
        "wss": (cw * cs**2).sum(),
        "wyy": (cw * cy**2).sum(),
        "wys": (cw * cy * cs).sum(),
    }
    assert {k: float(sums.value(k)) for k in SUM_NAMES} == pytest.approx(expected)


def test_sensitivity_of_each_sum_is_its_summand_at_the_upper_bounds():
    u_s, u_y, u_w = 2.0, 0.5, 3.0
    got = RatioBounds(s=u_s, y=u_y, w=u_w).sensitivities(SUM_NAMES)
    assert got == pytest.approx(
        {
            "w": 3.0,
            "ws": 6.0,
            "wy": 1.5,
            "ww": 9.0,
            "wss": 12.0,
            "wyy": 0.75,
            "wys": 3.0,
        }
    )


def test_paper_sensitivities_are_u_w_except_the_sum_of_squared_weights(rows_weighted):
    release = paper_ci(rows_weighted, True).release
    assert release.sensitivity == {"w": 3, "ws": 3, "wy": 3, "ww": 9, "wss": 3, "wys": 3}
