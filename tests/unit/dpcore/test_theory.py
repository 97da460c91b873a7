"""The paper's error terms (AAAI 2024, Prop. 8, Thm. 9, Figure 1) and the symmetric-Dirichlet fit."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy.special import digamma

from dpcore.foundations.theory import (
    ALPHA_MAX,
    best_case_log_sizes,
    dirichlet_alpha,
    dirichlet_expected_log_sizes,
    observed_log_sizes,
    worst_case_log_sizes,
)

ACS_NY_RACE = np.array([0.70, 0.12, 0.086, 0.056, 0.029, 0.004, 0.003, 0.0015, 0.0005])


@pytest.mark.parametrize(("n", "k"), [(100, 2), (1e5, 10), (196_967, 9)])
def test_worst_case_is_k_log_n_over_k(n, k):
    assert worst_case_log_sizes(n, k) == pytest.approx(k * math.log(n / k))
    # equal group sizes attain it
    assert observed_log_sizes(np.full(k, n / k)) == pytest.approx(worst_case_log_sizes(n, k))


def test_best_case_formula():
    assert best_case_log_sizes(1000, 5) == pytest.approx(4 + math.log(995))
    assert best_case_log_sizes(196_967, 9) == pytest.approx(8 + math.log(196_958))


def test_thm9_formula_by_hand():
    # ψ(1) = −γ_E, ψ(k) = −γ_E + H_{k−1}: for α = 1 the bound is k(log n − H_{k−1})
    n, k = 1e4, 4
    harmonic = 1 + 1 / 2 + 1 / 3
    assert dirichlet_expected_log_sizes(n, k, 1.0) == pytest.approx(k * (math.log(n) - harmonic))
    # ψ(1/2) = −γ_E − 2 log 2, and ψ(1) = −γ_E: for α = 1/2, k = 2 the bound is 2(log n − 2 log 2)
    assert dirichlet_expected_log_sizes(n, 2, 0.5) == pytest.approx(
        2 * (math.log(n) - 2 * math.log(2))
    )


@pytest.mark.parametrize("alpha", [0.3, 1.0, 3.0])
def test_thm9_against_monte_carlo(alpha):
    """E[Σ log(g_i n)] under Dirichlet(α): the MC mean must not exceed the bound (it is exact, as
    E[log g_i] = ψ(α) − ψ(kα), so it is also close)."""
    n, k, draws = 1e5, 10, 200_000
    g = np.random.default_rng(int(alpha * 100)).dirichlet(np.full(k, alpha), size=draws)
    totals = np.log(g * n).sum(axis=1)
    assert np.all(np.isfinite(totals))
    mc, se = totals.mean(), totals.std(ddof=1) / math.sqrt(draws)
    bound = dirichlet_expected_log_sizes(n, k, alpha)
    assert mc <= bound + 4.5 * se
    assert abs(mc - bound) < 4.5 * se


def test_observed_log_sizes():
    assert observed_log_sizes(np.array([1, 10, 100])) == pytest.approx(math.log(1000))
    assert observed_log_sizes(np.array([5.0])) == pytest.approx(math.log(5))


@pytest.mark.parametrize(("n", "k"), [(1e5, 10), (196_967, 9), (1e4, 5)])
def test_figure1_ordering(n, k):
    """Figure 1: for α in [0.2, 1) and beyond, best ≤ Thm 9(α) ≤ worst, increasing in α."""
    alphas = [0.2, 0.3, 0.5, 0.7, 1.0, 2.0, 5.0, 50.0]
    values = [dirichlet_expected_log_sizes(n, k, a) for a in alphas]
    assert all(best_case_log_sizes(n, k) <= v <= worst_case_log_sizes(n, k) for v in values)
    assert all(b > a for a, b in itertools.pairwise(values))
    # α → ∞ gives equal shares, hence the worst case
    assert dirichlet_expected_log_sizes(n, k, 1e6) == pytest.approx(
        worst_case_log_sizes(n, k), rel=1e-4
    )


def test_thm9_drops_below_the_best_case_benchmark_for_tiny_alpha():
    """As α → 0 the digamma term → −∞ (shares below 1/n are allowed in the continuous model); the
    paper's Figure 1 only shows α ≥ 0.2, where the ordering holds."""
    assert dirichlet_expected_log_sizes(1e5, 10, 0.02) < best_case_log_sizes(1e5, 10)


def test_acs_example_is_mostly_towards_the_best_case():
    """Paper: for NY ACS race (n = 196,967, k = 9, α ≈ 0.13) the expected error is "approximately
    ~80% better than the worst case, relative to the best case". With α = 0.13 we get 72%."""
    n, k = 196_967, 9
    worst, best = worst_case_log_sizes(n, k), best_case_log_sizes(n, k)
    thm9 = k * (digamma(0.13) - digamma(9 * 0.13) + math.log(n))
    assert dirichlet_expected_log_sizes(n, k, 0.13) == pytest.approx(thm9)
    assert 0.65 < (worst - thm9) / (worst - best) < 0.85


@pytest.mark.slow
@pytest.mark.parametrize("method", ["sorted", "mle"])
def test_dirichlet_alpha_recovers_alpha(method):
    """On average over seeds (geometric mean), the fit is within a factor 1.6 of the true α."""
    k = 10
    for alpha in (0.3, 1.0, 3.0):
        logs = []
        for seed in range(12):
            g = np.random.default_rng(1000 + seed).dirichlet(np.full(k, alpha))
            kwargs = {"draws": 500} if method == "sorted" else {}
            logs.append(math.log(dirichlet_alpha(g, method=method, **kwargs) / alpha))
        ratio = math.exp(np.mean(logs))
        assert 1 / 1.6 < ratio < 1.6, (method, alpha, ratio)


def test_dirichlet_alpha_on_the_paper_acs_shares():
    """The paper reports α ≈ 0.13 for these shares; the default method lands nearby."""
    alpha = dirichlet_alpha(ACS_NY_RACE)
    assert 0.05 <= alpha <= 0.2
    assert dirichlet_alpha(ACS_NY_RACE) == alpha  # deterministic
    # unnormalised counts give the same answer
    assert dirichlet_alpha(ACS_NY_RACE * 196_967) == pytest.approx(alpha, rel=1e-6)
    # a uniform vector means α large; a dominated one means α small
    assert dirichlet_alpha(np.array([0.33, 0.33, 0.34]), method="mle") > 50
    assert dirichlet_alpha(ACS_NY_RACE, method="mle") < 1


@pytest.mark.parametrize(
    ("func", "args"),
    [
        (worst_case_log_sizes, (100, 1)),  # k < 2
        (worst_case_log_sizes, (5, 10)),  # n <= k
        (worst_case_log_sizes, (-1.0, 2)),
        (best_case_log_sizes, (10, 10)),
        (dirichlet_expected_log_sizes, (100, 3, 0.0)),
        (dirichlet_expected_log_sizes, (100, 3, -1.0)),
        (dirichlet_expected_log_sizes, (100, 3, math.nan)),
        (dirichlet_expected_log_sizes, (math.inf, 3, 1.0)),
        (observed_log_sizes, (np.array([0.5, 3.0]),)),
        (observed_log_sizes, (np.ones((2, 2)),)),
    ],
)
def test_bad_inputs_raise_value_error(func, args):
    with pytest.raises(ValueError):
        func(*args)


@pytest.mark.parametrize(
    "shares", [[1.0], [0.5, 0.0, 0.5], [0.5, -0.1, 0.6], [0.5, math.nan], [[0.5, 0.5]]]
)
def test_dirichlet_alpha_bad_shares(shares):
    with pytest.raises(ValueError, match="shares"):
        dirichlet_alpha(np.array(shares))


def test_dirichlet_alpha_mle_on_equal_shares_reports_the_cap():
    # The MLE of equal shares is +inf; both fits report the documented cap instead.
    assert dirichlet_alpha(np.full(4, 0.25), method="mle") == ALPHA_MAX
    assert dirichlet_alpha(np.full(4, 0.25)) == pytest.approx(ALPHA_MAX, rel=1e-3)


def test_dirichlet_alpha_bad_method_and_draws():
    with pytest.raises(ValueError, match="method"):
        dirichlet_alpha(ACS_NY_RACE, method="moments")
    with pytest.raises(ValueError, match="draws"):
        dirichlet_alpha(ACS_NY_RACE, draws=0)


def test_dirichlet_alpha_of_one_dominant_group_is_the_smallest_without_a_warning():
    """Every Gamma quantile underflows to 0 at the smallest α: the draw is then one group."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # was: invalid value encountered in divide (0/0)
        alpha = dirichlet_alpha([0.9999, 0.00005, 0.00005])
    assert alpha == pytest.approx(1e-3, rel=0.01)
