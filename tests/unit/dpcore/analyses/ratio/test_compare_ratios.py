"""Two ratios compared (compare_ratios): the z-test of the difference, its level under the null,
its power, and a flagged group flagging the comparison."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.analyses.ratio.intervals import compare_ratios, nonprivate_ratio_ci, ratio_ci_from_sums
from dpcore.analyses.ratio.study import simulate_calibration_sums
from dpcore.analyses.ratio.sums import RatioSums
from tests.unit.dpcore.analyses.ratio.helpers import ALPHA_TEST, GAUSSIAN, paper_ci


def test_compare_ratios_is_the_z_test_of_the_difference(rows_unweighted, rows_weighted):
    a = paper_ci(rows_unweighted, False, rng=22)
    b = paper_ci(rows_weighted, True, rng=23)
    result = compare_ratios(a, b, level=0.9)
    se = math.sqrt(a.variance + b.variance)
    z = (a.estimate - b.estimate) / se
    assert result.difference == pytest.approx(a.estimate - b.estimate)
    assert result.z == pytest.approx(z)
    assert result.p_value == pytest.approx(2 * stats.norm.sf(abs(z)))
    assert result.high - result.difference == pytest.approx(stats.norm.ppf(0.95) * se)
    assert result.flag is None
    log = compare_ratios(
        paper_ci(rows_unweighted, False, scale="log"), paper_ci(rows_weighted, True, scale="log")
    )
    assert log.difference == pytest.approx(math.log(a.estimate / b.estimate), abs=0.05)
    with pytest.raises(ValueError, match=r"same scale"):
        compare_ratios(a, paper_ci(rows_weighted, True, scale="log"))
    with pytest.raises(TypeError, match=r"`b` must be a RatioCI"):
        compare_ratios(a, 1.1)


def _group_releases(true_ratio: float, seed: int, reps: int):
    sums = simulate_calibration_sums(
        5000, reps=reps, weighted=False, true_ratio=true_ratio, rng=seed
    )
    return ratio_ci_from_sums(
        sums, epsilon=1.0, **GAUSSIAN, method="analytical", bounds=(1, 1, 1), rng=seed + 1
    )


def test_compare_ratios_holds_its_level_under_the_null_and_has_power_otherwise():
    reps = 4000
    a, b = _group_releases(1.1, 30, reps), _group_releases(1.1, 32, reps)
    p = compare_ratios(a, b).p_value
    rejections = int(np.sum(p < 0.05))
    assert stats.binomtest(rejections, reps, 0.05).pvalue > ALPHA_TEST
    assert stats.kstest(p, "uniform").pvalue > ALPHA_TEST  # p-values ~ U(0, 1) under H0
    power = np.mean(compare_ratios(a, _group_releases(1.3, 34, reps)).p_value < 0.05)
    assert power > 0.95


def test_a_flagged_group_flags_the_comparison():
    a = _group_releases(1.1, 40, 3)
    noisy = RatioSums(w=100.0, ws=40.0, wy=-3.0, wss=30.0, wys=1.0)
    b = nonprivate_ratio_ci(noisy)
    result = compare_ratios(a, b)
    assert list(result.flag) == ["ratio `b` is flagged"] * 3
    assert np.all(np.isnan(result.p_value))
