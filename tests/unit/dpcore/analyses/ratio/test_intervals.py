"""Ratio of sums with DP confidence intervals (Miao & Li, JDS 2022): point estimate, variances and
corrections, interval scales, degenerate releases and coverage (dpcore.analyses.ratio.intervals).

Expected values are derived by hand in the tests (row-level formulas, the mechanisms' noise
formulas written out, closed forms of the corrections), never copied from the implementation's
output. Randomized checks are seeded; statistical ones use binomial / KS tests at a 1e-3 level or
>= 4.5 standard errors of slack.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from dpcore.analyses.ratio.intervals import nonprivate_ratio_ci, ratio_ci_from_sums, ratio_interval
from dpcore.analyses.ratio.noise import RatioRelease, release_ratio_sums
from dpcore.analyses.ratio.study import ratio_study
from dpcore.analyses.ratio.sums import RatioBounds, RatioSums, ratio_sums
from dpcore.foundations.accounting import ApproxDP
from dpcore.foundations.intervals import Interval
from dpcore.foundations.mechanisms import SimulationNoise
from tests.unit.dpcore.analyses.ratio.helpers import ALPHA_TEST, GAUSSIAN, paper_ci, paper_rows


def test_public_variance_matches_the_delta_method_on_rows(rows_weighted):
    s, y, w = rows_weighted
    sums = ratio_sums(s, y, w, bounds=(1, 1, 3), binary_y=True)
    # eq. 2–4 from the rows: weighted means, variances and covariance, times 1/Kish n.
    inv_kish = np.sum(w**2) / np.sum(w) ** 2
    mu_s, mu_y = np.average(s, weights=w), np.average(y, weights=w)
    var_s = np.average((s - mu_s) ** 2, weights=w) * inv_kish
    var_y = np.average((y - mu_y) ** 2, weights=w) * inv_kish
    cov = np.average((s - mu_s) * (y - mu_y), weights=w) * inv_kish
    ratio_var = var_s / mu_y**2 - 2 * mu_s / mu_y**3 * cov + mu_s**2 / mu_y**4 * var_y
    log_var = var_s / mu_s**2 - 2 * cov / (mu_s * mu_y) + var_y / mu_y**2
    public = nonprivate_ratio_ci(sums)
    assert public.estimate == pytest.approx(mu_s / mu_y, rel=1e-12)
    assert public.variance == pytest.approx(ratio_var, rel=1e-9)
    assert public.effective_n == pytest.approx(np.sum(w) ** 2 / np.sum(w**2))
    assert public.high - public.estimate == pytest.approx(1.959964 * math.sqrt(ratio_var), rel=1e-6)
    assert public.release is None and public.method == "public"
    # The one interval type: width and coverage read the same as any estimator's.
    assert isinstance(public, Interval) and public.width == public.high - public.low
    assert public.covers(public.estimate) and not public.covers(public.high + 1)
    log = nonprivate_ratio_ci(sums, scale="log", level=0.9)
    assert log.variance == pytest.approx(log_var, rel=1e-9)
    assert math.log(log.high / log.estimate) == pytest.approx(1.644854 * math.sqrt(log_var), 1e-6)


def test_point_estimate_is_the_ratio_of_the_noisy_sums(rows_weighted):
    ci = paper_ci(rows_weighted, True, epsilon=0.5)
    assert ci.estimate == ci.sums.ws / ci.sums.wy
    assert ci.sums is ci.release.sums
    assert ci.effective_n == pytest.approx(ci.sums.w**2 / ci.sums.ww)  # from the noisy sums
    exact = ratio_sums(*rows_weighted, bounds=(1, 1, 3), binary_y=True)
    assert ci.estimate != exact.ws / exact.wy


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_analytical_correction_adds_the_noise_variance_of_both_sums(mechanism, rows_weighted):
    sums = ratio_sums(*rows_weighted, bounds=(1, 1, 3), binary_y=True)
    release = release_ratio_sums(
        sums, epsilon=0.5, delta=1e-6, mechanism=mechanism, bounds=(1, 1, 3), rng=11
    )
    factor = 2 if mechanism == "laplace" else 1  # Var Laplace(b) = 2b²
    var_s = factor * release.noise_scale["ws"] ** 2
    var_y = factor * release.noise_scale["wy"] ** 2
    ss, sy = release.sums.ws, release.sums.wy
    r = ss / sy
    for scale, extra in (
        ("ratio", (var_s + r**2 * var_y) / sy**2),
        ("log", var_s / ss**2 + var_y / sy**2),
    ):
        none = ratio_interval(release, method="none", scale=scale)
        analytical = ratio_interval(release, method="analytical", scale=scale)
        assert analytical.variance - none.variance == pytest.approx(extra, rel=1e-9)
        assert analytical.estimate == none.estimate


def test_monte_carlo_correction_approaches_the_analytical_one_and_is_seeded(rows_unweighted):
    sums = ratio_sums(*rows_unweighted, bounds=(1, 1, 1), binary_y=True)
    release = release_ratio_sums(sums, epsilon=2.0, **GAUSSIAN, bounds=(1, 1, 1), rng=12)
    none = ratio_interval(release, method="none")
    analytical = ratio_interval(release, method="analytical").variance - none.variance
    mc = ratio_interval(release, method="monte_carlo", B=40_000, rng=13).variance - none.variance
    # With small relative noise the simulated extra variance is the delta-method one (§2.4.2).
    assert mc == pytest.approx(analytical, rel=0.05)
    again = ratio_interval(release, method="monte_carlo", B=200, rng=14)
    assert again.variance == ratio_interval(release, method="monte_carlo", B=200, rng=14).variance
    assert again.variance != ratio_interval(release, method="monte_carlo", B=200, rng=15).variance


def test_ratio_ci_is_a_thin_wrapper_over_the_sums(rows_weighted):
    direct = paper_ci(rows_weighted, True, method="monte_carlo", rng=21)
    sums = ratio_sums(*rows_weighted, bounds=(1, 1, 3), binary_y=True)
    via_sums = ratio_ci_from_sums(
        sums, epsilon=1.0, **GAUSSIAN, method="monte_carlo", bounds=(1, 1, 3), rng=21
    )
    assert (direct.estimate, direct.low, direct.high) == (
        via_sums.estimate,
        via_sums.low,
        via_sums.high,
    )


def test_a_noise_source_object_and_secure_noise_are_accepted(rows_weighted):
    via_object = paper_ci(rows_weighted, True, noise=SimulationNoise(rng=3), rng=None)
    via_seed = paper_ci(rows_weighted, True, noise=SimulationNoise(rng=3), rng=99)
    assert via_object.estimate == via_seed.estimate  # the release draws from the source only
    secure = paper_ci(rows_weighted, True, noise="secure", method="monte_carlo", rng=4)
    assert secure.flag is None and secure.low < secure.estimate < secure.high
    assert secure.release.sums.w != via_object.release.sums.w


# ---- intervals, scales, degenerate cases ---------------------------------------------------------


def test_ratio_scale_cuts_the_lower_end_at_zero_and_log_scale_stays_positive():
    sums = ratio_sums(*paper_rows(400, False, 16), bounds=(1, 1, 1), binary_y=True)
    release = release_ratio_sums(
        sums, epsilon=0.2, **GAUSSIAN, bounds=(1, 1, 1), rng=17, replicates=2000
    )
    ratio = ratio_interval(release, method="analytical")
    ok = ~ratio.flagged
    assert np.any(ratio.low[ok] == 0.0)  # the symmetric interval would go below 0 there
    assert np.all(ratio.low[ok] >= 0.0)
    cut = ok & (ratio.low == 0.0)
    assert np.all(ratio.estimate[cut] - 1.959964 * np.sqrt(ratio.variance[cut]) < 0)
    log = ratio_interval(release, method="analytical", scale="log")
    assert np.all(log.low[~log.flagged] >= 0)
    ok = ~log.flagged & (log.variance < 4)  # beyond that exp(log r̂ ± 1.96 sd) under/overflows
    assert np.all((log.low[ok] > 0) & (log.low[ok] < log.estimate[ok]))
    assert np.all(log.estimate[ok] < log.high[ok])
    # Log-scale intervals are symmetric in log r, so the geometric mean of the ends is r̂.
    np.testing.assert_allclose(np.sqrt(log.low[ok] * log.high[ok]), log.estimate[ok], rtol=1e-9)


def test_huge_noise_on_tiny_data_is_flagged_not_raised():
    sums = ratio_sums([0.2, 0.9, 0.6], [0, 1, 1], bounds=(1, 1, 1), binary_y=True)
    ci = ratio_ci_from_sums(
        sums,
        epsilon=0.1,
        **GAUSSIAN,
        method="monte_carlo",
        bounds=(1, 1, 1),
        rng=18,
        replicates=500,
    )
    flagged = ci.flagged
    assert flagged.shape == (500,) and flagged.mean() > 0.5
    reasons = set(ci.flag[flagged])
    assert "noisy Σwy ≤ 0: the ratio's denominator is not positive" in reasons
    assert "noisy Σw ≤ 0: the weighted means (eq. 2) are undefined" in reasons
    assert np.all(np.isnan(ci.low[flagged]) & np.isnan(ci.high[flagged]))
    assert all(f is None for f in ci.flag[~flagged])
    assert np.all(ci.low[~flagged] <= ci.high[~flagged])


def test_a_single_degenerate_release_gives_a_scalar_flag():
    # eq. 1 by hand, in units of 1/Kish n: v_s = 0.05 − 0.16, v_y = 0.3 − 0.09, c = 0.3 − 0.12,
    # so −0.11/0.09 − 2·0.4·0.18/0.027 + 0.16·0.21/0.0081 = −2.41 < 0.
    noisy = RatioSums(w=100.0, ws=40.0, wy=30.0, wss=5.0, wys=30.0)
    release = RatioRelease(
        noisy,
        RatioBounds(),
        "gaussian",
        "basic",
        1.0,
        1e-6,
        dict.fromkeys(noisy.released, 1.0),
        dict.fromkeys(noisy.released, 1e-3),
        ApproxDP(1.0, 1e-6),
    )
    ci = ratio_interval(release, method="none")
    assert ci.flag == "the variance estimate is negative or not finite"
    assert ci.flagged is True and ci.variance < 0 and math.isnan(ci.low)
    negative = replace(release, sums=RatioSums(w=100.0, ws=40.0, wy=-3.0, wss=30.0, wys=1.0))
    assert ratio_interval(negative, method="analytical").flag.startswith("noisy Σwy ≤ 0")


@pytest.mark.parametrize("scale", ["ratio", "log"])
def test_corrected_intervals_cover_at_the_nominal_level_and_the_uncorrected_do_not(scale):
    study = ratio_study(
        n=5000,
        epsilon=1.0,
        weighted=(False, True),
        method=("none", "monte_carlo", "analytical"),
        scale=scale,
        reps=2000,
        rng=19,
    )
    for row in study.itertuples():
        covered = round(row.coverage * row.reps)
        if row.method == "none":
            assert stats.binomtest(covered, row.reps, 0.95, alternative="less").pvalue < 1e-6
        else:
            assert stats.binomtest(covered, row.reps, 0.95).pvalue > ALPHA_TEST, row
