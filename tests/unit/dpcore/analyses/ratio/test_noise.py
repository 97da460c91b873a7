"""The noise on the ratio's sums (privacy sanity): σ and b from the mechanisms' formulas written
out (Eq. 5, Balle-Wang, zCDP), the released noise's law and neighbouring datasets, seeded tests
at a 1e-3 level."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.analyses.ratio.noise import release_ratio_sums, zcdp_rho
from dpcore.analyses.ratio.sums import ratio_sums
from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP
from dpcore.foundations.mechanisms import gaussian_sigma
from tests.unit.dpcore.analyses.ratio.helpers import Z, paper_ci, paper_rows


@pytest.mark.parametrize("weighted", [False, True])
def test_classic_gaussian_sigma_is_eq5_with_the_budget_split_evenly(weighted, rows_weighted):
    eps, delta = 0.5, 1e-6
    ci = paper_ci(rows_weighted if weighted else paper_rows(500, False, 3), weighted, epsilon=eps)
    m = 6 if weighted else 5
    for name, sens in ci.sensitivity.items():
        expected = sens * math.sqrt(2 * math.log(1.25 / (delta / m))) / (eps / m)
        assert ci.noise_scale[name] == pytest.approx(expected, rel=1e-12)
    assert ci.release.cost == ApproxDP(eps, delta)


def test_laplace_scale_is_sensitivity_over_the_split_epsilon_and_needs_no_delta(rows_weighted):
    for delta in (None, 0, 0.0):
        ci = paper_ci(rows_weighted, True, mechanism="laplace", delta=delta)
        assert ci.noise_scale == pytest.approx({k: d * 6 / 1.0 for k, d in ci.sensitivity.items()})
        assert ci.release.cost == PureDP(1.0)
        assert ci.release.delta == 0.0


def test_analytic_gaussian_uses_balle_wang_per_sum_and_beats_eq5(rows_weighted):
    classic = paper_ci(rows_weighted, True, epsilon=0.5)
    analytic = paper_ci(rows_weighted, True, epsilon=0.5, mechanism="gaussian_analytic")
    for name, sens in analytic.sensitivity.items():
        expected = gaussian_sigma(sens, 0.5 / 6, 1e-6 / 6, "analytic")
        assert analytic.noise_scale[name] == pytest.approx(expected, rel=1e-9)
        assert analytic.noise_scale[name] < classic.noise_scale[name]


def test_zcdp_composition_converts_the_budget_tightly_and_adds_less_noise(rows_weighted):
    eps, delta = 1.0, 1e-6
    rho = zcdp_rho(eps, delta)
    # The ledger's own conversion confirms (ε, δ), and the tight ρ beats the standard inversion.
    assert ZCDP(rho).to_approx_dp(delta).epsilon <= eps
    assert ZCDP(rho * 1.001).to_approx_dp(delta).epsilon > eps
    log_inv = math.log(1 / delta)
    assert rho > (math.sqrt(log_inv + eps) - math.sqrt(log_inv)) ** 2
    zcdp = paper_ci(rows_weighted, True, epsilon=eps, composition="zcdp")
    basic = paper_ci(rows_weighted, True, epsilon=eps)
    assert zcdp.release.rho == rho
    for name, sens in zcdp.sensitivity.items():
        assert zcdp.noise_scale[name] == pytest.approx(sens / math.sqrt(2 * rho / 6), rel=1e-12)
        assert zcdp.noise_scale[name] < 0.7 * basic.noise_scale[name]


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace"])
def test_released_noise_has_the_stated_law(mechanism):
    sums = ratio_sums(*paper_rows(2000, True, 4), bounds=(1, 1, 3), binary_y=True)
    reps = 20_000
    release = release_ratio_sums(
        sums,
        epsilon=0.5,
        delta=1e-6,
        mechanism=mechanism,
        bounds=(1, 1, 3),
        rng=5,
        replicates=reps,
    )
    for name, scale in release.noise_scale.items():
        noise = getattr(release.sums, name) - getattr(sums, name)
        assert abs(noise.mean()) < Z * math.sqrt(release.noise_variance(name) / reps)
        if mechanism == "gaussian":  # sd of the sample sd is ~ σ/√(2R)
            assert abs(noise.std() - scale) < Z * scale / math.sqrt(2 * reps)
        else:  # E|Laplace(b)| = b, sd b
            assert abs(np.abs(noise).mean() - scale) < Z * scale / math.sqrt(reps)


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_neighbouring_datasets_are_hard_to_tell_apart(mechanism):
    """Empirical (ε_i, δ_i)-DP of the noisy Σwy on add/remove-one neighbours, both directions."""
    s, y, w = paper_rows(300, True, 6)
    bounds, eps, delta, reps = (1, 1, 3), 1.0, 1e-6, 200_000
    d = ratio_sums(s, y, w, bounds=bounds, binary_y=True)
    # The neighbour adds one person at the upper bounds: the largest change of every sum.
    d2 = ratio_sums(
        np.append(s, 1.0), np.append(y, 1.0), np.append(w, 3.0), bounds=bounds, binary_y=True
    )
    kwargs = dict(epsilon=eps, delta=delta, mechanism=mechanism, bounds=bounds, replicates=reps)
    a = release_ratio_sums(d, rng=7, **kwargs).sums.wy
    b = release_ratio_sums(d2, rng=8, **kwargs).sums.wy
    eps_i, delta_i = eps / 6, (0.0 if mechanism == "laplace" else delta / 6)
    for t in np.quantile(np.concatenate([a, b]), [0.1, 0.3, 0.5, 0.7, 0.9]):
        p, q = np.mean(a > t), np.mean(b > t)
        slack = Z * math.sqrt((p * (1 - p) + q * (1 - q)) / reps) * math.exp(eps_i)
        assert p <= math.exp(eps_i) * q + delta_i + slack
        assert q <= math.exp(eps_i) * p + delta_i + slack
    # Not vacuous: the two release distributions do differ.
    assert np.mean(b) - np.mean(a) > 1.0


def test_classic_gaussian_refuses_a_per_sum_epsilon_of_one_or_more(rows_unweighted):
    with pytest.raises(ValueError, match=r"ε/5 = 1 per sum.*gaussian_analytic"):
        paper_ci(rows_unweighted, False, epsilon=5.0)
    assert paper_ci(rows_unweighted, False, epsilon=5.0, mechanism="gaussian_analytic").flag is None
    assert paper_ci(rows_unweighted, False, epsilon=4.9).flag is None
