"""One CoinPress call on a raw array against the authors' reference, n = 1e3 to 1e6 (issue 16).

For each n, one univariate CoinPress release (t = 2 steps, ρ = 0.5) from a 1-D array of values
drawn N(3, 2²): ``dpcore.coinpress_mean`` against a plain numpy transcription of the authors'
univariate algorithm (Biswas, Dong, Kamath & Ullman 2020; AAAI 2024 appendix B, Alg. 1–2): per
step, clip the raw array with ``np.clip``, average, add Gaussian noise, shrink the interval.
Both draw their noise from a generator made once, and take the budget made once (the reference
its estimator's fractions and failure probabilities too, as bench_monte_carlo.py's ``baseline``
does); ours checks its arguments and the data at each call. Times are per call, the best of
several repeats of a timeit loop. Floor: ours at least as fast as the reference at every n (ratio ≥ 1).
"""

from __future__ import annotations

import timeit

import numpy as np

from benchmarks._coinpress_reference import reference_coinpress
from dpcore.analyses.mean.array_api import coinpress_mean
from dpcore.analyses.mean.coinpress import CoinPressMean
from dpcore.foundations.accounting import ZCDP

SIZES = (1_000, 10_000, 100_000, 1_000_000)
PRIOR, SIGMA, STEPS, RHO = (-50.0, 50.0), 2.0, 2, 0.5
ESTIMATOR = CoinPressMean(prior=PRIOR, sigma=SIGMA, steps=STEPS)
BUDGET = ZCDP(RHO)
REPEATS, MIN_SECONDS = 7, 0.2


def reference(values: np.ndarray, rng: np.random.Generator) -> float:
    """The authors' univariate CoinPress (UVMRec), step by step on the raw values: the
    ``baseline`` of bench_monte_carlo.py for one group and one release."""
    return reference_coinpress(values, ESTIMATOR, BUDGET.rho, rng)


def ours(values: np.ndarray, rng: np.random.Generator) -> float:
    release = coinpress_mean(values, BUDGET, prior=PRIOR, sigma=SIGMA, steps=STEPS, rng=rng)
    return release.estimate


def per_call(function, values: np.ndarray) -> float:
    """Seconds per call: the best of REPEATS timeit loops of at least MIN_SECONDS each."""
    rng = np.random.default_rng(0)
    timer = timeit.Timer(lambda: function(values, rng))
    number, _ = timer.autorange()
    number = max(number, int(np.ceil(number * MIN_SECONDS / 0.2)))
    return min(timer.repeat(repeat=REPEATS, number=number)) / number


def main() -> None:
    data = np.random.default_rng(1)
    worst = np.inf
    print(f"CoinPress, t = {STEPS}, ρ = {RHO}: time per call (best of {REPEATS})")
    for n in SIZES:
        values = data.normal(3.0, 2.0, n)
        # Same noise draws, same answer (up to the summation order of the clipped sums).
        assert np.isclose(
            ours(values, np.random.default_rng(5)), reference(values, np.random.default_rng(5))
        )
        mine, theirs = per_call(ours, values), per_call(reference, values)
        ratio = theirs / mine
        worst = min(worst, ratio)
        print(
            f"  n = {n:>9,}: ours {mine * 1e6:9.1f} µs, reference {theirs * 1e6:9.1f} µs, "
            f"speed ratio {ratio:.2f}x"
        )
    verdict = "OK" if worst >= 1 else "TOO SLOW"
    print(f"slowest ratio {worst:.2f}x (floor 1x: at least the reference's speed) — {verdict}")


if __name__ == "__main__":
    main()
