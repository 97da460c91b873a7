"""The ratio release's exact privacy cost, and how a ledger budget maps to its arguments.

Gaussian noise of standard deviation σ on a sum of L2 sensitivity Δ is Δ²/(2σ²)-zCDP whatever
rule chose σ (Bun & Steinke 2016, Prop. 1.6), so the ledger is charged ρ = Σ_i Δ_i²/(2σ_i²) over
the released sums; Laplace costs pure ε-DP.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dpcore.analyses.ratio.groups import check_ratio_bounds
from dpcore.analyses.ratio.noise import check_noise_choice, release_ratio_sums
from dpcore.analyses.ratio.sums import (
    Composition,
    Mechanism,
    RatioBounds,
    RatioSums,
)
from dpcore.foundations.accounting import (
    ZCDP,
    ApproxDP,
    Budget,
    PureDP,
    check_budget,
    exact_components,
    pure_epsilon_within,
)
from dpcore.foundations.errors import BudgetKindError
from dpcore.foundations.validation import open_unit_interval

__all__ = [
    "release_arguments",
    "release_cost",
]


class _NoNoise:
    """A noise source that adds nothing: reads a release's noise scales without drawing noise."""

    kind = "simulation"

    def add_laplace(self, values: np.ndarray, scale: float | np.ndarray) -> np.ndarray:
        return np.asarray(values, dtype=float)

    def add_gaussian(self, values: np.ndarray, sigma: float | np.ndarray) -> np.ndarray:
        return np.asarray(values, dtype=float)


@functools.lru_cache(maxsize=256)
def _cost(
    bounds: RatioBounds,
    weighted: bool,
    binary_y: bool,
    epsilon: float,
    delta: float | None,
    mechanism: str,
    composition: str,
) -> tuple[Budget, tuple[tuple[str, float], ...], tuple[tuple[str, float], ...]]:
    template = RatioSums(
        w=1.0, ws=0.0, wy=0.0, wss=0.0, wys=0.0,
        ww=1.0 if weighted else None, wyy=None if binary_y else 0.0,
    )  # fmt: skip
    dry = release_ratio_sums(
        template,
        epsilon=epsilon,
        delta=delta,
        mechanism=mechanism,
        bounds=bounds,
        composition=composition,
        noise=_NoNoise(),
    )
    if mechanism == "laplace":
        cost: Budget = PureDP(dry.epsilon)
    else:
        cost = ZCDP(
            math.fsum(
                dry.sensitivity[n] ** 2 / (2 * dry.noise_scale[n] ** 2) for n in dry.sensitivity
            )
        )
    return cost, tuple(dry.sensitivity.items()), tuple(dry.noise_scale.items())


def release_cost(
    *,
    bounds: RatioBounds,
    weighted: bool,
    binary_y: bool,
    epsilon: float,
    delta: float | None,
    mechanism: Mechanism,
    composition: Composition = "basic",
) -> tuple[Budget, dict[str, float], dict[str, float]]:
    r"""The ledger cost of a release, with each released sum's sensitivity and noise scale.

    Gaussian mechanisms cost :math:`\rho = \sum_i \Delta_i^2/(2\sigma_i^2)`-zCDP over the m
    released sums (Bun & Steinke 2016, Prop. 1.6 and Lemma 2.3 for composition), whichever rule
    chose σ_i (eq. 5, Balle & Wang, or zCDP); the Laplace mechanism costs pure ε-DP (m sums at
    ε/m, basic composition). One group's cost: the groups are disjoint (parallel composition), and
    the global ratio is post-processing. Depends only on public parameters, never on the data.
    """
    if not isinstance(weighted, bool) or not isinstance(binary_y, bool):
        raise TypeError(
            f"`weighted` and `binary_y` must be True or False, got {weighted!r} and {binary_y!r}"
        )
    bounds = check_ratio_bounds(bounds, weighted, binary_y)
    cost, sensitivity, scales = _cost(
        bounds, weighted, binary_y, epsilon, delta, mechanism, composition
    )
    return cost, dict(sensitivity), dict(scales)


def _fits(cost: Budget, budget: Budget) -> bool:
    """Whether ``cost`` is at most ``budget`` in exact decimal (the ledger's arithmetic)."""
    spent = exact_components(cost, budget.kind)
    allowed = exact_components(budget, budget.kind)
    return all(spent[k] <= allowed[k] for k in allowed)


def release_arguments(
    budget: Budget,
    *,
    mechanism: Mechanism,
    composition: Composition = "basic",
    delta: float = 1e-6,
    bounds: RatioBounds,
    weighted: bool,
    binary_y: bool,
) -> dict:
    r"""How a budget from the Budget page becomes the estimator's (ε, δ, mechanism, composition).

    - ``PureDP(ε)``: Laplace at ε (pure DP, as budgeted); a Gaussian mechanism at (ε, ``delta``),
      which is (ε, δ)-DP — weaker than pure ε-DP, charged its exact zCDP cost.
    - ``ApproxDP(ε, δ)``: its own ε and δ.
    - ``ZCDP(ρ)``: the Gaussian with ``composition="zcdp"``, σ_i = Δ_i/√(2ρ/m): the estimator takes
      (ε, δ), so ρ is converted to the ε at which :func:`~dpcore.analyses.ratio.zcdp_rho` gives
      ρ back (ρ → ε by the tight conversion of Canonne, Kamath & Steinke 2020; ``delta`` is only
      the bridge and the noise does not depend on it), then nudged down until the exact cost is at
      most ρ. Laplace runs at ε = √(2ρ), which is ρ-zCDP (Bun & Steinke 2016, Prop. 1.4). The
      analytic Gaussian calibration splits an (ε, δ) budget and is refused with a ρ budget.

    Returns a dict with ``epsilon``, ``delta``, ``mechanism`` and ``composition``.
    """
    check_budget("budget", budget)
    check_noise_choice(mechanism, composition)
    delta = open_unit_interval("delta", delta)
    if mechanism == "laplace":
        if isinstance(budget, ZCDP):
            epsilon = pure_epsilon_within(budget.rho)
        else:
            epsilon = budget.epsilon
        return {"epsilon": epsilon, "delta": None, "mechanism": "laplace", "composition": "basic"}
    if isinstance(budget, ZCDP):
        if mechanism != "gaussian":
            raise BudgetKindError(
                "`mechanism` 'gaussian_analytic' splits an (ε, δ) budget; with a ρ-zCDP budget "
                "choose mechanism='gaussian' (σ from ρ directly) or 'laplace', or switch the "
                "budget to ε",
                mechanism=mechanism, kind=budget.kind, needs=("pure", "approx"),
            )  # fmt: skip
        epsilon = ZCDP(budget.rho).to_approx_dp(delta).epsilon
        options = {"bounds": bounds, "weighted": weighted, "binary_y": binary_y}
        for _ in range(100):
            cost = release_cost(**options, epsilon=epsilon, delta=delta, mechanism="gaussian",
                                composition="zcdp")[0]  # fmt: skip
            if _fits(cost, budget):
                break
            epsilon *= 1 - 1e-12
        else:  # pragma: no cover - the conversion is tight to ~1e-12
            raise ValueError(f"could not fit the release into `budget` {budget}")
        return {"epsilon": epsilon, "delta": delta, "mechanism": "gaussian", "composition": "zcdp"}
    delta = budget.delta if isinstance(budget, ApproxDP) else delta
    if composition == "zcdp" and mechanism != "gaussian":
        composition = "basic"  # zCDP calibrates σ = Δ/√(2ρ/m): the classic/analytic choice is moot
    return {
        "epsilon": budget.epsilon,
        "delta": delta,
        "mechanism": mechanism,
        "composition": composition,
    }
