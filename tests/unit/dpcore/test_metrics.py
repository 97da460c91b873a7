"""Error metrics: normalized error, parity error (AAAI 2024, Def. 10), worst-group summaries.

Expected values are worked out by hand in each test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.foundations.metrics import (
    binomial_band,
    clopper_pearson,
    normalized_error,
    parity_error,
    parity_from_errors,
    worst_group_error,
    worst_to_best_ratio,
)


def test_normalized_error_by_hand():
    assert normalized_error(11.0, 10.0) == pytest.approx(0.1)
    assert normalized_error(9.0, 10.0) == pytest.approx(0.1)
    assert normalized_error(-3.0, -2.0) == pytest.approx(0.5)  # |(-3) - (-2)| / |-2|
    assert normalized_error(2.0, -2.0) == pytest.approx(2.0)
    got = normalized_error(np.array([[1.0, 4.0], [3.0, 0.0]]), np.array([2.0, 4.0]))
    np.testing.assert_allclose(got, [[0.5, 0.0], [0.5, 1.0]])


def test_normalized_error_leaves_its_inputs_alone_and_keeps_scalars_scalar():
    estimate, truth = np.array([[1.0, -4.0]]), np.array([2.0, -2.0])
    got = normalized_error(estimate, truth)
    np.testing.assert_array_equal(got, [[0.5, 1.0]])
    np.testing.assert_array_equal(estimate, [[1.0, -4.0]])  # computed in place on a copy
    np.testing.assert_array_equal(truth, [2.0, -2.0])
    assert np.ndim(normalized_error(11.0, 10.0)) == 0
    assert isinstance(normalized_error(11.0, 10.0), float)


def test_parity_from_errors_matches_parity_from_estimates():
    rng = np.random.default_rng(3)
    groups, truth = rng.normal(5, 1, (40, 7)), rng.uniform(2, 8, 7)
    whole, whole_truth = rng.normal(5, 0.1, 40), 5.0
    from_errors = parity_from_errors(
        normalized_error(groups, truth), normalized_error(whole, whole_truth), 0.3
    )
    np.testing.assert_array_equal(from_errors, parity_error(groups, truth, whole, whole_truth, 0.3))


@pytest.mark.parametrize("truth", [0.0, [1.0, 0.0], math.nan, math.inf])
def test_normalized_error_undefined_truth_raises(truth):
    with pytest.raises(ValueError, match="relative to the true value is undefined"):
        normalized_error(np.ones(np.shape(truth)), truth)


def test_parity_error_default_omega_is_one_over_k():
    # k = 2 groups with truths 10 and 20, global truth 15.
    groups = np.array([12.0, 19.0])  # errors 0.2 and 0.05 -> average 0.125
    glob = 18.0  # error 3/15 = 0.2, weighted by 1/k = 1/2 -> 0.1
    assert parity_error(groups, np.array([10.0, 20.0]), glob, 15.0) == pytest.approx(0.225)


def test_parity_error_explicit_omega_and_replicates():
    truth = np.array([1.0, 2.0, 4.0])
    groups = np.array(
        [
            [1.0, 2.0, 4.0],  # exact groups
            [2.0, 1.0, 2.0],  # errors 1, 0.5, 0.5 -> mean 2/3
        ]
    )
    glob = np.array([5.0, 2.5])  # global truth 2 -> errors 1.5, 0.25
    got = parity_error(groups, truth, glob, 2.0, omega=2.0)
    np.testing.assert_allclose(got, [2 * 1.5 + 0.0, 2 * 0.25 + 2 / 3])
    default = parity_error(groups, truth, glob, 2.0)
    np.testing.assert_allclose(default, [1.5 / 3, 0.25 / 3 + 2 / 3])


@pytest.mark.parametrize("omega", [0.0, -1.0, math.inf, math.nan])
def test_parity_error_rejects_bad_omega(omega):
    with pytest.raises(ValueError, match="omega"):
        parity_error(np.ones(2), np.ones(2), 1.0, 1.0, omega=omega)


def test_parity_error_zero_group_truth_raises():
    with pytest.raises(ValueError, match="compare absolute errors instead"):
        parity_error(np.ones(2), np.array([1.0, 0.0]), 1.0, 1.0)


def test_worst_group_error_and_ratio():
    errors = np.array([[0.1, 0.4, 0.2], [0.3, 0.3, 0.3], [0.0, 0.5, 0.1]])
    np.testing.assert_allclose(worst_group_error(errors), [0.4, 0.3, 0.5])
    ratio = worst_to_best_ratio(errors)
    np.testing.assert_allclose(ratio[:2], [4.0, 1.0])
    assert math.isinf(ratio[2])  # best group exact
    assert worst_group_error(np.array([0.2, 0.7])) == pytest.approx(0.7)


# ---- the binomial band and Clopper–Pearson intervals of a coverage -----------------------------


@pytest.mark.parametrize(("level", "reps"), [(0.95, 1000), (0.9, 300), (0.99, 100), (0.95, 40)])
def test_binomial_band_holds_the_central_mass_of_the_binomial(level, reps):
    low, high = binomial_band(level, reps)
    law = stats.binom(reps, level)
    inside = law.cdf(round(high * reps)) - law.cdf(round(low * reps) - 1)
    assert inside >= 0.95
    # Each end is the binomial quantile: one count further in would hold less than 2.5% outside.
    assert law.cdf(round(low * reps) - 1) <= 0.025 < law.cdf(round(low * reps))
    assert low <= level <= high <= 1


def test_binomial_band_is_near_the_normal_approximation_for_many_replications():
    low, high = binomial_band(0.95, 100_000)
    half = 1.959963984540054 * (0.95 * 0.05 / 100_000) ** 0.5
    assert low == pytest.approx(0.95 - half, abs=2e-5)
    assert high == pytest.approx(0.95 + half, abs=2e-5)


def test_clopper_pearson_is_exact_at_the_ends_and_vectorised():
    low, high = clopper_pearson(np.array([0, 5, 10]), 10)
    assert low[0] == 0.0 and high[2] == 1.0
    assert high[0] == pytest.approx(1 - 0.025 ** (1 / 10))  # closed form when none covered
    assert low[2] == pytest.approx(0.025 ** (1 / 10))
    assert low[1] < 0.5 < high[1]


def test_clopper_pearson_covers_at_least_its_level():
    rng = np.random.default_rng(3)
    reps, p = 50, 0.9
    covered = rng.binomial(reps, p, size=4000)
    low, high = clopper_pearson(covered, reps)
    assert np.mean((low <= p) & (p <= high)) >= 0.95  # exact intervals are conservative


@pytest.mark.parametrize("bad", [0.0, 1.0, 1.5, -0.1])
def test_binomial_band_rejects_a_level_outside_zero_one(bad):
    with pytest.raises(ValueError, match="0 < level < 1"):
        binomial_band(bad, 100)
