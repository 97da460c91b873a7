"""The stratification paper's error terms and a symmetric-Dirichlet fit of group shares.

Rosenblatt, Stoyanovich & Musco (AAAI 2024). Stratified Laplace means cost, relative to one global
estimate, a factor driven by :math:`\\sum_i \\log|G_i|` (proof of Prop. 8). That sum is at most
k·log(n/k) (equal groups), at least about (k − 1) + log(n − k) (one majority group), and in
expectation under Dirichlet(α) group shares below Thm. 9's digamma bound. Figure 1 plots the three
against α.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy.special import digamma, gammaincinv

from dpcore.foundations.validation import positive_int, positive_number, shown

# Shares this even are indistinguishable from equal groups; both fits report at most this α.
ALPHA_MAX = 1e3


def _check_n_k(n: float, k: int) -> tuple[float, int]:
    n = positive_number("n", n)
    k = positive_int("k", k)
    if k < 2 or n <= k:
        raise ValueError(f"need k >= 2 groups and n > k rows, got n = {n!r}, k = {k!r}")
    return n, k


def worst_case_log_sizes(n: float, k: int) -> float:
    r"""Prop. 8's term :math:`k\log(n/k)`: the largest :math:`\sum_i\log|G_i|` (equal group sizes)."""
    n, k = _check_n_k(n, k)
    return k * np.log(n / k)


def dirichlet_expected_log_sizes(n: float, k: int, alpha: float) -> float:
    r"""Thm. 9: :math:`E\left[\sum_i\log|G_i|\right] \le k(\psi(\alpha) - \psi(k\alpha) + \log n)`
    when the shares are Dirichlet(α, …, α) and :math:`|G_i| = g_i n`. ψ is the digamma function.
    """
    n, k = _check_n_k(n, k)
    alpha = positive_number("alpha", alpha)
    return float(k * (digamma(alpha) - digamma(k * alpha) + np.log(n)))


def best_case_log_sizes(n: float, k: int) -> float:
    r"""The paper's lower benchmark :math:`(k - 1) + \log(n - k)` (one majority group, the rest tiny)."""
    n, k = _check_n_k(n, k)
    return (k - 1) + float(np.log(n - k))


def observed_log_sizes(sizes: np.ndarray) -> float:
    r""":math:`\sum_i\log|G_i|` for actual group sizes, to mark a dataset on the Figure 1 plot."""
    sizes = np.asarray(sizes, dtype=float)
    if sizes.ndim != 1 or np.any(sizes < 1):
        raise ValueError(f"`sizes` must be a 1-D array of group sizes >= 1, got {shown(sizes)}")
    return float(np.log(sizes).sum())


def _validate_shares(shares: np.ndarray) -> np.ndarray:
    values = np.asarray(shares, dtype=float)
    if values.ndim != 1 or values.size < 2:
        raise ValueError(
            f"`shares` must be a 1-D array of at least 2 group shares, got {shown(shares)}"
        )
    if not np.all(np.isfinite(values) & (values > 0)):
        raise ValueError(
            f"`shares` must be finite and > 0 (drop empty groups), got {shown(shares)}"
        )
    return values / values.sum()


def dirichlet_alpha(
    shares: np.ndarray,
    *,
    method: Literal["sorted", "mle"] = "sorted",
    draws: int | None = None,
) -> float:
    r"""Estimate α of a symmetric Dirichlet prior from one observed vector of group shares.

    ``"sorted"`` (default) — the paper fits α by "an iterative Monte Carlo approach" without
    details; we match the observed shares, sorted largest first, to the expected sorted shares of
    Dirichlet(α) draws, minimising the squared distance over log α. The draws use common random
    numbers (fixed uniforms pushed through the inverse Gamma CDF, :math:`g_i = G_i/\sum_j G_j` with
    :math:`G_i \sim \mathrm{Gamma}(\alpha)`), so the objective is smooth and the result
    deterministic. It is driven by the large shares, which are known precisely.

    ``"mle"`` — the maximum-likelihood α, the root of
    :math:`k\psi(k\alpha) - k\psi(\alpha) + \sum_i\log g_i = 0`. It leans on the log of the
    smallest shares, so tiny or rounded shares move it a lot.

    Both methods return at most :data:`ALPHA_MAX` (1000): near-equal shares.

    For New York ACS 2018 race shares [0.70, 0.12, 0.086, 0.056, 0.029, …] (k = 9) the paper reports
    α ≈ 0.13; ``"sorted"`` gives about 0.1 and ``"mle"`` about 0.33, depending on the unreported tail.
    """
    values = _validate_shares(shares)
    from scipy.optimize import brentq, minimize_scalar  # deferred: slow to import

    k = values.size
    if method == "mle":
        total_log = np.log(values).sum()

        def score(a: float) -> float:  # d/dα of the log-likelihood; decreasing in α
            return k * digamma(k * a) - k * digamma(a) + total_log

        # Equal shares push the MLE to infinity; report the cap, as the sorted fit does.
        if score(ALPHA_MAX) >= 0:
            return ALPHA_MAX
        return float(brentq(score, 1e-8, ALPHA_MAX))
    if method != "sorted":
        raise ValueError(f"`method` must be 'sorted' or 'mle', got {method!r}")
    draws = max(20, 20_000 // k) if draws is None else positive_int("draws", draws)
    # Uniforms kept away from 0 and 1 so the inverse CDF stays finite for every α searched.
    uniforms = (np.random.default_rng(20240101).random((draws, k)) * (1 - 2e-12)) + 1e-12
    observed = np.sort(values)[::-1]
    # For a very small α every quantile underflows to 0; the Dirichlet draw is then one-hot at
    # the largest uniform (the gamma quantile increases with u), not 0/0.
    one_hot = np.zeros_like(uniforms)
    one_hot[np.arange(draws), uniforms.argmax(axis=1)] = 1.0

    def distance(log_alpha: float) -> float:
        gammas = gammaincinv(np.exp(log_alpha), uniforms)
        totals = gammas.sum(axis=1, keepdims=True)
        shares = np.divide(gammas, totals, out=one_hot.copy(), where=totals > 0)
        sorted_shares = np.sort(shares, axis=1)[:, ::-1]
        return float(np.sum((sorted_shares.mean(axis=0) - observed) ** 2))

    best = minimize_scalar(distance, bounds=(np.log(1e-3), np.log(ALPHA_MAX)), method="bounded")
    return float(np.exp(best.x))
