"""Noisy release of the ratio's sums (Miao & Li 2022, §2.3.1 and eq. 5).

Each released sum gets Gaussian (the paper's eq. 5, Balle & Wang's analytic calibration, or a zCDP
split) or Laplace noise through a :class:`~dpcore.foundations.mechanisms.NoiseSource`: numpy for previews,
OpenDP for releases. Everything after the release is post-processing.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from dpcore.analyses.ratio.sums import (
    COMPOSITIONS,
    MECHANISMS,
    Composition,
    Mechanism,
    RatioBounds,
    RatioSums,
    as_ratio_bounds,
    check_exact_sums,
)
from dpcore.foundations.accounting import (
    ZCDP,
    ApproxDP,
    Budget,
    PureDP,
)
from dpcore.foundations.errors import ClassicGaussianRangeError
from dpcore.foundations.mechanisms import (
    NoiseKind,
    NoiseSource,
    as_noise_source,
    gaussian_sigma,
)
from dpcore.foundations.validation import (
    as_rng,
    open_unit_interval,
    positive_int,
    positive_number,
    real_number,
)

__all__ = [
    "RatioRelease",
    "release_ratio_sums",
    "zcdp_rho",
]


@functools.lru_cache(maxsize=256)
def zcdp_rho(epsilon: float, delta: float) -> float:
    r"""The largest ρ such that ρ-zCDP implies (ε, δ)-DP under the tight conversion.

    Inverts :meth:`dpcore.foundations.accounting.ZCDP.to_approx_dp` (Canonne, Kamath & Steinke 2020), so the
    ledger's own conversion confirms the guarantee. Starts from the inverse of the standard bound
    :math:`\varepsilon = \rho + 2\sqrt{\rho\log(1/\delta)}` (Bun & Steinke 2016, Prop. 1.3),
    :math:`\rho = (\sqrt{\log(1/\delta) + \varepsilon} - \sqrt{\log(1/\delta)})^2`, which the tight
    conversion always improves on.
    """
    from scipy.optimize import brentq  # deferred: slow to import, rarely needed

    epsilon = positive_number("epsilon", epsilon)
    delta = open_unit_interval("delta", delta)
    log_inv_delta = -math.log(delta)
    standard = (math.sqrt(log_inv_delta + epsilon) - math.sqrt(log_inv_delta)) ** 2

    def excess(rho: float) -> float:
        return ZCDP(rho).to_approx_dp(delta).epsilon - epsilon

    high = standard
    while excess(high) <= 0:
        high *= 2
    rho = brentq(excess, standard, high, rtol=1e-12)
    # brentq may land a hair past the root; step back so the conversion holds exactly.
    while excess(rho) > 0:
        rho *= 1 - 1e-9
    return rho


@dataclass(frozen=True, eq=False)
class RatioRelease:
    """Noisy sums and how they were made: the only part of the pipeline that spends budget.

    ``sensitivity`` and ``noise_scale`` map each released sum (see :data:`SUM_NAMES`) to its
    sensitivity Δ and its noise scale (σ for Gaussian noise, b for Laplace noise). ``cost`` is the
    guarantee of the whole release; ``rho`` the total zCDP budget when ``composition="zcdp"``.
    ``noise_terms``: how many independent draws of the mechanism each sum's noise adds up (1 for
    a group's own release; k for totals over k groups, :func:`~dpcore.analyses.ratio.recombine`,
    whose ``noise_scale`` is then √k times a group's).
    """

    sums: RatioSums
    bounds: RatioBounds
    mechanism: Mechanism
    composition: Composition
    epsilon: float
    delta: float
    sensitivity: dict[str, float]
    noise_scale: dict[str, float]
    cost: Budget
    rho: float | None = None
    noise_terms: int = 1

    def noise_variance(self, name: str) -> float:
        """Variance of the noise on sum ``name``: σ² (Gaussian) or 2b² (Laplace)."""
        scale = self.noise_scale[name]
        return 2 * scale**2 if self.mechanism == "laplace" else scale**2


def check_noise_choice(mechanism: object, composition: object) -> None:
    """``ValueError`` naming the choices unless ``mechanism`` and ``composition`` are known."""
    MECHANISMS.check("mechanism", mechanism)
    COMPOSITIONS.check("composition", composition)


def check_budget_args(
    epsilon: object, delta: object, mechanism: object, composition: object
) -> tuple[float, float]:
    """Validated (ε, δ); δ is 0 for the Laplace mechanism, which does not use it."""
    check_noise_choice(mechanism, composition)
    epsilon = positive_number("epsilon", epsilon)
    if composition == "zcdp" and mechanism != "gaussian":
        raise ValueError(
            "`composition='zcdp'` calibrates Gaussian noise as σ = Δ/√(2ρ) and needs "
            f"mechanism='gaussian', got mechanism={mechanism!r}"
        )
    if mechanism == "laplace":
        if delta is not None and not 0 <= real_number("delta", delta) < 1:
            raise ValueError(f"`delta` must be None or in [0, 1) for Laplace, got {delta!r}")
        return epsilon, 0.0
    if delta is None:
        raise TypeError(f"`delta` must be a number in (0, 1) for mechanism={mechanism!r}, got None")
    return epsilon, open_unit_interval("delta", delta)


def noise_scales(
    sensitivity: dict[str, float],
    epsilon: float,
    delta: float,
    mechanism: Mechanism,
    composition: Composition,
) -> tuple[dict[str, float], float | None]:
    """Per-sum noise scales under an even budget split over the m released sums (§2.3.1)."""
    m = len(sensitivity)
    if composition == "zcdp":
        rho = zcdp_rho(epsilon, delta)
        return {k: d / math.sqrt(2 * rho / m) for k, d in sensitivity.items()}, rho
    eps_i, delta_i = epsilon / m, delta / m
    if mechanism == "laplace":
        return {k: d / eps_i for k, d in sensitivity.items()}, None
    if mechanism == "gaussian" and eps_i >= 1:
        raise ClassicGaussianRangeError(
            f"`epsilon` split over {m} sums gives ε/{m} = {eps_i:.6g} per sum, but the classic "
            "Gaussian mechanism (eq. 5) needs ε < 1 per sum; use mechanism='gaussian_analytic' "
            f"or composition='zcdp', or an `epsilon` below {m}, got {epsilon!r}",
            epsilon=eps_i,
        )
    method = "classic" if mechanism == "gaussian" else "analytic"
    unit = gaussian_sigma(1.0, eps_i, delta_i, method)  # σ is linear in Δ for both calibrations
    return {k: d * unit for k, d in sensitivity.items()}, None


def _replicate(sums: RatioSums, replicates: int | None) -> np.ndarray:
    stacked = sums.stack()
    if replicates is None:
        return stacked
    replicates = positive_int("replicates", replicates)
    return np.broadcast_to(stacked, (replicates, *stacked.shape)).copy()


def release_ratio_sums(
    sums: RatioSums,
    *,
    epsilon: float,
    delta: float | None,
    mechanism: Mechanism,
    bounds: RatioBounds | tuple[float, ...],
    composition: Composition = "basic",
    noise: NoiseKind | NoiseSource | None = None,
    rng: np.random.Generator | int | None = None,
    replicates: int | None = None,
) -> RatioRelease:
    r"""Add DP noise to each released sum, splitting (ε, δ) evenly over them (§2.3.1).

    With m released sums (5 unweighted, 6 weighted for binary y) and basic composition, sum i gets
    :math:`(\varepsilon/m, \delta/m)` and

    - ``"gaussian"``: :math:`\sigma_i = \Delta_i\sqrt{2\log(1.25 m/\delta)}\,m/\varepsilon`
      (eq. 5; valid only when ε/m < 1, refused otherwise);
    - ``"gaussian_analytic"``: the smallest σ_i of Balle & Wang (2018) at (ε/m, δ/m);
    - ``"laplace"``: :math:`b_i = \Delta_i m/\varepsilon` (appendix A), pure ε-DP, δ unused.

    With ``composition="zcdp"`` the Gaussian sums share ρ = :func:`zcdp_rho` (ε, δ) instead.
    Noise comes from ``noise`` (default: numpy :class:`~dpcore.foundations.mechanisms.SimulationNoise` seeded
    by ``rng``; ``"secure"`` for OpenDP). ``replicates=R`` draws R independent releases of the same
    sums (a leading axis), for previews.
    """
    if not isinstance(sums, RatioSums):
        raise TypeError(f"`sums` must be RatioSums (see ratio_sums), got {type(sums).__name__}")
    b = as_ratio_bounds(bounds)
    epsilon, delta = check_budget_args(epsilon, delta, mechanism, composition)
    check_exact_sums(sums, b)
    source = as_noise_source(noise, rng=as_rng(rng))
    sensitivity = b.sensitivities(sums.released)
    scales, rho = noise_scales(sensitivity, epsilon, delta, mechanism, composition)
    values, scale_vector = _replicate(sums, replicates), np.array(list(scales.values()))
    if mechanism == "laplace":
        noisy = source.add_laplace(values, scale_vector)
    else:
        noisy = source.add_gaussian(values, scale_vector)
    cost = PureDP(epsilon) if mechanism == "laplace" else ApproxDP(epsilon, delta)
    return RatioRelease(
        sums=RatioSums.from_stack(sums.released, np.asarray(noisy, dtype=float)),
        bounds=b,
        mechanism=mechanism,
        composition=composition,
        epsilon=epsilon,
        delta=delta,
        sensitivity=sensitivity,
        noise_scale=scales,
        cost=cost,
        rho=rho,
    )
