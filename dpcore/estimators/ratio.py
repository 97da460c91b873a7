r"""Ratio of two (weighted) sums with differentially private confidence intervals.

Miao & Li, *Privacy-Preserving Inference on the Ratio of Two Gaussians Using Sums* (JDS 2022),
"the paper" below. The target is the calibration ratio :math:`r = \mu_s/\mu_y`, estimated by
:math:`\hat r = \sum w s / \sum w y` (§2.1). Inference needs up to seven sums (§2.3.1):

.. math:: \textstyle\sum w,\ \sum ws,\ \sum wy,\ \sum w^2,\ \sum ws^2,\ \sum wy^2,\ \sum wys,

minus the redundant ones: :math:`\sum wy^2 = \sum wy` for binary y and :math:`\sum w^2 = \sum w`
without weights (so 5 sums unweighted, 6 weighted, for binary y). Each released sum gets Gaussian
(eq. 5, or Balle & Wang's analytic calibration) or Laplace noise; everything after the release is
post-processing (§2.4): the delta-method variance (eq. 1–4) and an interval with no correction, the
Monte Carlo correction (§2.4.2) or the analytical correction (§2.4.3), on the ratio or log scale.

The pieces, from lowest level up:

- :func:`ratio_sums` — the clipped sums of raw rows (the only pass over the data);
- :func:`release_ratio_sums` — adds noise to exact sums through a
  :class:`~dpcore.mechanisms.NoiseSource` (numpy for previews, OpenDP for releases);
- :func:`ratio_interval` — a confidence interval from a release (post-processing, no budget);
- :func:`ratio_ci_from_sums` / :func:`ratio_ci` — release + interval in one call;
- :func:`compare_ratios` — the z-test for the difference of two groups' ratios (§2.4);
- :func:`ratio_study` — the paper's simulation (§3), vectorized over replicates;
- :func:`load_table1` — the paper's Table 1, bundled for comparison.

Every function is vectorized: sums may be arrays (one entry per replicate or group), and results
have their shape.

Choices where the paper leaves room (each also noted where it is implemented):

- **Degenerate releases are flagged, not raised.** A non-positive noisy Σw, Σw², Σwy or Σws, or a
  negative / non-finite variance, gives a result whose ``flag`` names the reason and whose bounds
  are NaN. The paper's code lets such cases become NaN silently; its tables then count them as not
  covering and leave them out of mean width and score (pandas skips NaN). :func:`ratio_study` does
  the same and reports how many were flagged.
- **Binary y is declared, not detected** (``binary_y=True``): whether Σwy² is released must not
  depend on the data. Unweighted data (``w=None``) need u_w = 1, since every weight is 1.
- **Everything after the release uses the noisy sums**, the Kish n included (§2.4.1, §2.4.3
  step 1), as the paper's code does.
- **Noise for the Monte Carlo correction** re-noises only Σws and Σwy around their *noisy* values
  (§2.4.2), with a numpy generator even when the release used OpenDP: it only resamples public
  quantities (post-processing).
- **Log scale** (§2.3): the interval is built for log r; results report it exponentiated back to
  the ratio scale, while ``variance`` stays the variance of log r̂.
- **zCDP composition** (``composition="zcdp"``) is an improvement the paper suggests (§4) but does
  not use: the (ε, δ) budget is converted to the largest ρ whose tight conversion back
  (:meth:`~dpcore.accounting.ZCDP.to_approx_dp`) fits in (ε, δ), split evenly, and each sum gets
  :math:`\sigma_i = \Delta_i/\sqrt{2\rho/m}`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from importlib import resources
from itertools import product
from typing import Literal

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri

from dpcore._validate import (
    as_rng,
    open_unit_interval,
    positive_int,
    positive_number,
    real_number,
)
from dpcore.accounting import ZCDP, ApproxDP, Budget, PureDP
from dpcore.mechanisms import NoiseKind, NoiseSource, SimulationNoise, gaussian_sigma, noise_source
from dpcore.metrics import coverage, interval_score

__all__ = [
    "COMPOSITIONS",
    "MECHANISMS",
    "METHODS",
    "SCALES",
    "SUM_LABELS",
    "SUM_NAMES",
    "RatioBounds",
    "RatioCI",
    "RatioComparison",
    "RatioRelease",
    "RatioSums",
    "compare_ratios",
    "load_table1",
    "nonprivate_ratio_ci",
    "ratio_ci",
    "ratio_ci_from_sums",
    "ratio_interval",
    "ratio_study",
    "ratio_sums",
    "release_ratio_sums",
    "simulate_calibration_sums",
    "zcdp_rho",
]

Mechanism = Literal["gaussian", "gaussian_analytic", "laplace"]
Method = Literal["none", "monte_carlo", "analytical"]
Scale = Literal["ratio", "log"]
Composition = Literal["basic", "zcdp"]

MECHANISMS: dict[str, str] = {
    "gaussian": "Gaussian, classic calibration (paper eq. 5)",
    "gaussian_analytic": "Gaussian, analytic calibration (Balle & Wang 2018)",
    "laplace": "Laplace (pure ε-DP; paper appendix A)",
}
METHODS: dict[str, str] = {
    "none": "No correction (§2.4.1)",
    "monte_carlo": "Monte Carlo correction (§2.4.2)",
    "analytical": "Analytical correction (§2.4.3)",
}
SCALES: dict[str, str] = {"ratio": "Ratio scale (eq. 1)", "log": "Log scale (§2.3)"}
COMPOSITIONS: dict[str, str] = {
    "basic": "Basic composition: ε/m and δ/m per sum (the paper's choice)",
    "zcdp": "zCDP: ρ from (ε, δ), ρ/m per sum (Bun & Steinke 2016)",
}

SUM_NAMES: tuple[str, ...] = ("w", "ws", "wy", "ww", "wss", "wyy", "wys")
"""Every sum the paper may release (§2.3.1), in release order: Σw, Σws, Σwy, Σw², Σws², Σwy²,
Σwys. ``ww`` is absent for unweighted data and ``wyy`` for binary y."""

SUM_LABELS: dict[str, str] = {
    "w": "Σw",
    "ws": "Σws",
    "wy": "Σwy",
    "ww": "Σw²",
    "wss": "Σws²",
    "wyy": "Σwy²",
    "wys": "Σwys",
}

_REASONS = np.array(
    [
        None,
        "noisy Σw ≤ 0: the weighted means (eq. 2) are undefined",
        "noisy Σw² ≤ 0: the Kish effective n is undefined",
        "noisy Σwy ≤ 0: the ratio's denominator is not positive",
        "noisy Σws ≤ 0: the ratio's numerator is not positive",
        "the variance estimate is negative or not finite",
    ],
    dtype=object,
)
_COMPARISON_REASONS = np.array(
    [None, "ratio `a` is flagged", "ratio `b` is flagged", "both ratios are flagged"], dtype=object
)
_MC_CHUNK = 1 << 20  # Monte Carlo draws held in memory at once
_SIM_CHUNK_ROWS = 1 << 16  # simulated rows per block: float32 arrays of 256 kB stay in cache
TABLE1_PATH = "data/ratio_table1_gaussian.csv"


# ---- sums and bounds ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RatioBounds:
    """Public upper bounds :math:`u_s, u_y, u_w` of s, y and the weight w; the lower bounds are 0.

    The paper's data are non-negative (§2): s and y lie in [0, u_s] and [0, u_y], w in [0, u_w].
    Rows are clipped to these bounds before summing; the bounds must never come from the data.
    Unweighted data have w ≡ 1, so ``w`` must then be 1.
    """

    s: float = 1.0
    y: float = 1.0
    w: float = 1.0

    def __post_init__(self) -> None:
        for name in ("s", "y", "w"):
            object.__setattr__(self, name, positive_number(f"bounds.{name}", getattr(self, name)))

    def sensitivities(self, names: Sequence[str]) -> dict[str, float]:
        r"""Add/remove-one sensitivity of each named sum: its summand at the upper bounds (§2.3.1).

        :math:`\Delta_{\sum w} = u_w`, :math:`\Delta_{\sum ws} = u_w u_s`,
        :math:`\Delta_{\sum w^2} = u_w^2`, :math:`\Delta_{\sum wys} = u_w u_y u_s`, and so on;
        with the paper's bounds s, y ∈ [0, 1] every sum has sensitivity :math:`u_w` except Σw².
        """
        s, y, w = self.s, self.y, self.w
        table = {
            "w": w,
            "ws": w * s,
            "wy": w * y,
            "ww": w * w,
            "wss": w * s * s,
            "wyy": w * y * y,
            "wys": w * y * s,
        }
        return {name: table[name] for name in names}


def as_ratio_bounds(bounds: object) -> RatioBounds:
    """``bounds`` as :class:`RatioBounds`: the class itself, or a tuple (u_s, u_y[, u_w])."""
    if isinstance(bounds, RatioBounds):
        return bounds
    if isinstance(bounds, tuple | list) and len(bounds) in (2, 3):
        return RatioBounds(*bounds)
    raise TypeError(
        f"`bounds` must be RatioBounds or a tuple (u_s, u_y) or (u_s, u_y, u_w), got {bounds!r}"
    )


@dataclass(frozen=True, eq=False)
class RatioSums:
    """The sums the ratio's inference needs (§2.3.1), exact or noisy; each a float or an array.

    ``ww`` (Σw²) is None for unweighted data, where it equals Σw = n; ``wyy`` (Σwy²) is None for
    binary y, where it equals Σwy. Absent sums are not released and :meth:`value` returns their
    twin. Arrays broadcast against each other (e.g. one entry per replicate).
    """

    w: float | np.ndarray
    ws: float | np.ndarray
    wy: float | np.ndarray
    wss: float | np.ndarray
    wys: float | np.ndarray
    ww: float | np.ndarray | None = None
    wyy: float | np.ndarray | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                object.__setattr__(self, f.name, _finite_array(f"sums.{f.name}", value))
        try:
            np.broadcast_shapes(*(np.shape(self.value(name)) for name in self.released))
        except ValueError:
            shapes = {name: np.shape(self.value(name)) for name in self.released}
            raise ValueError(f"`sums` must have broadcastable shapes, got {shapes}") from None

    @property
    def weighted(self) -> bool:
        return self.ww is not None

    @property
    def binary_y(self) -> bool:
        return self.wyy is None

    @property
    def released(self) -> tuple[str, ...]:
        """Names of the sums that are released (the non-redundant ones), in release order."""
        absent = {"ww"} if self.ww is None else set()
        absent |= {"wyy"} if self.wyy is None else set()
        return tuple(name for name in SUM_NAMES if name not in absent)

    @property
    def shape(self) -> tuple[int, ...]:
        return np.broadcast_shapes(*(np.shape(self.value(name)) for name in self.released))

    @property
    def effective_n(self) -> float | np.ndarray:
        r"""Kish's effective sample size :math:`(\sum w)^2/\sum w^2` (§2.3.1; Kish 1965)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return _out(self.w**2 / self.value("ww"))

    def value(self, name: str) -> np.ndarray:
        """The sum called ``name``; Σw² is Σw without weights and Σwy² is Σwy for binary y."""
        if name == "ww" and self.ww is None:
            return self.w
        if name == "wyy" and self.wyy is None:
            return self.wy
        return getattr(self, name)

    def stack(self) -> np.ndarray:
        """The released sums as one array, shape ``(*shape, len(released))``."""
        shape = self.shape
        return np.stack([np.broadcast_to(self.value(n), shape) for n in self.released], axis=-1)

    @classmethod
    def from_stack(cls, names: Sequence[str], stacked: np.ndarray) -> RatioSums:
        """Inverse of :meth:`stack`: the sums named ``names`` from the last axis of ``stacked``."""
        return cls(**{name: stacked[..., i] for i, name in enumerate(names)})


def _finite_array(name: str, value: object) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a number or numeric array, got {value!r}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` must be finite, got {value!r}")
    return arr


def _out(x: np.ndarray) -> float | np.ndarray:
    """A 0-d result as a Python float, anything else unchanged."""
    return float(x) if np.ndim(x) == 0 else x


def _column(name: str, values: object, length: int | None = None) -> np.ndarray:
    """One data column as a finite 1-D float array; never echoes private values in errors."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"`{name}` must be a numeric array, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional, got shape {arr.shape}")
    if length is not None and arr.size != length:
        raise ValueError(f"`{name}` must have the same length as `s` ({length}), got {arr.size}")
    arr = arr.astype(float)
    bad = int(np.count_nonzero(~np.isfinite(arr)))
    if bad:
        raise ValueError(
            f"`{name}` must be finite, got {bad} missing or infinite values; drop or impute them"
        )
    return arr


def ratio_sums(
    s: np.ndarray,
    y: np.ndarray,
    w: np.ndarray | None = None,
    *,
    bounds: RatioBounds | tuple[float, ...],
    binary_y: bool = False,
) -> RatioSums:
    r"""Clipped sums of raw rows: the only pass over the data (§2.3.1).

    Values are clipped to the public ``bounds``: s to [0, u_s], y to [0, u_y], w to [0, u_w]. With
    ``binary_y=True`` (a public fact about the column, not read from the data) y must be 0 or 1 and
    Σwy² = Σwy is not released; with ``w=None`` every weight is 1 and Σw² = Σw = n is not released.
    """
    b = as_ratio_bounds(bounds)
    s_arr = _column("s", s)
    y_arr = _column("y", y, s_arr.size)
    if not isinstance(binary_y, bool):
        raise TypeError(f"`binary_y` must be True or False, got {binary_y!r}")
    if binary_y and not np.all((y_arr == 0) | (y_arr == 1)):
        raise ValueError("`y` must contain only 0 and 1 when `binary_y=True`; pass binary_y=False")
    if binary_y and b.y < 1:
        raise ValueError(f"`bounds.y` must be >= 1 for binary y (it would clip y = 1), got {b.y!r}")
    if w is None and b.w != 1:
        raise ValueError(f"`bounds.w` must be 1 for unweighted data (`w` is None), got {b.w!r}")
    s_arr, y_arr = np.clip(s_arr, 0.0, b.s), np.clip(y_arr, 0.0, b.y)
    w_arr = np.ones_like(s_arr) if w is None else np.clip(_column("w", w, s_arr.size), 0.0, b.w)
    ws, wy = w_arr * s_arr, w_arr * y_arr
    return RatioSums(
        w=w_arr.sum(),
        ws=ws.sum(),
        wy=wy.sum(),
        wss=ws @ s_arr,
        wys=wy @ s_arr,
        ww=None if w is None else w_arr @ w_arr,
        wyy=None if binary_y else wy @ y_arr,
    )


def _check_exact_sums(sums: RatioSums, bounds: RatioBounds) -> None:
    """Refuse exact sums that rows clipped to ``bounds`` cannot produce.

    The sensitivities assume clipped rows; sums outside these limits mean the rows were not clipped
    (or the sums are already noisy), and noise calibrated to the bounds would not protect them.
    """
    if not sums.weighted and bounds.w != 1:
        raise ValueError(f"`bounds.w` must be 1 for unweighted sums (no Σw²), got {bounds.w!r}")
    v = sums.value
    limits = {
        "ws": bounds.s * v("w"),
        "wy": bounds.y * v("w"),
        "ww": bounds.w * v("w"),
        "wss": bounds.s * v("ws"),
        "wyy": bounds.y * v("wy"),
        "wys": np.minimum(bounds.y * v("ws"), bounds.s * v("wy")),
    }
    slack = 1e-9 * (1.0 + np.abs(v("w")) * bounds.w * max(bounds.s, bounds.y, 1.0) ** 2)
    for name in sums.released:
        value = v(name)
        if np.any(value < 0) or (name in limits and np.any(value > limits[name] + slack)):
            raise ValueError(
                f"`sums.{name}` is not a sum of rows clipped to {bounds}: clip s, y and w to the "
                "bounds before summing (see ratio_sums), and pass exact, not noisy, sums"
            )


# ---- release ------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def zcdp_rho(epsilon: float, delta: float) -> float:
    r"""The largest ρ such that ρ-zCDP implies (ε, δ)-DP under the tight conversion.

    Inverts :meth:`dpcore.accounting.ZCDP.to_approx_dp` (Canonne, Kamath & Steinke 2020), so the
    ledger's own conversion confirms the guarantee. Starts from the inverse of the standard bound
    :math:`\varepsilon = \rho + 2\sqrt{\rho\log(1/\delta)}` (Bun & Steinke 2016, Prop. 1.3),
    :math:`\rho = (\sqrt{\log(1/\delta) + \varepsilon} - \sqrt{\log(1/\delta)})^2`, which the tight
    conversion always improves on.
    """
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

    def noise_variance(self, name: str) -> float:
        """Variance of the noise on sum ``name``: σ² (Gaussian) or 2b² (Laplace)."""
        scale = self.noise_scale[name]
        return 2 * scale**2 if self.mechanism == "laplace" else scale**2


def _check_option(name: str, value: object, options: dict[str, str]) -> str:
    if value not in options:
        raise ValueError(f"`{name}` must be one of {', '.join(map(repr, options))}, got {value!r}")
    return value


def _check_budget_args(
    epsilon: object, delta: object, mechanism: object, composition: object
) -> tuple[float, float]:
    """Validated (ε, δ); δ is 0 for the Laplace mechanism, which does not use it."""
    _check_option("mechanism", mechanism, MECHANISMS)
    _check_option("composition", composition, COMPOSITIONS)
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


def _noise_scales(
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
        raise ValueError(
            f"`epsilon` split over {m} sums gives ε/{m} = {eps_i:.6g} per sum, but the classic "
            "Gaussian mechanism (eq. 5) needs ε < 1 per sum; use mechanism='gaussian_analytic' "
            f"or composition='zcdp', or an `epsilon` below {m}, got {epsilon!r}"
        )
    method = "classic" if mechanism == "gaussian" else "analytic"
    unit = gaussian_sigma(1.0, eps_i, delta_i, method)  # σ is linear in Δ for both calibrations
    return {k: d * unit for k, d in sensitivity.items()}, None


def _noise_source(noise: NoiseKind | NoiseSource | None, rng: np.random.Generator) -> NoiseSource:
    """Simulation noise from ``rng`` by default; secure noise never takes a seed."""
    if noise is None or noise == "simulation":
        return SimulationNoise(rng=rng)
    if isinstance(noise, str):
        return noise_source(_check_option("noise", noise, {"simulation": "", "secure": ""}))
    if not (hasattr(noise, "add_gaussian") and hasattr(noise, "add_laplace")):
        raise TypeError(f"`noise` must be a NoiseSource, 'simulation' or 'secure', got {noise!r}")
    return noise


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
    Noise comes from ``noise`` (default: numpy :class:`~dpcore.mechanisms.SimulationNoise` seeded
    by ``rng``; ``"secure"`` for OpenDP). ``replicates=R`` draws R independent releases of the same
    sums (a leading axis), for previews.
    """
    if not isinstance(sums, RatioSums):
        raise TypeError(f"`sums` must be RatioSums (see ratio_sums), got {type(sums).__name__}")
    b = as_ratio_bounds(bounds)
    epsilon, delta = _check_budget_args(epsilon, delta, mechanism, composition)
    _check_exact_sums(sums, b)
    source = _noise_source(noise, as_rng(rng))
    sensitivity = b.sensitivities(sums.released)
    scales, rho = _noise_scales(sensitivity, epsilon, delta, mechanism, composition)
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


# ---- intervals ----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class RatioCI:
    """A ratio estimate with its confidence interval; arrays when the sums were arrays.

    ``estimate``, ``low`` and ``high`` are on the ratio scale (for ``scale="log"`` the interval is
    built for log r and exponentiated back); ``variance`` is on the analysis scale (of r̂, or of
    log r̂). ``flag`` is None, or a string saying why the interval could not be formed (then
    ``low`` and ``high`` are NaN); an object array of those when vectorized. ``sums`` are the
    noisy sums used (the exact ones for :func:`nonprivate_ratio_ci`, where ``release`` is None).
    """

    estimate: float | np.ndarray
    low: float | np.ndarray
    high: float | np.ndarray
    variance: float | np.ndarray
    flag: str | None | np.ndarray
    method: Method | Literal["public"]
    scale: Scale
    level: float
    sums: RatioSums
    effective_n: float | np.ndarray
    release: RatioRelease | None = None

    @property
    def flagged(self) -> bool | np.ndarray:
        flagged = np.not_equal(self.flag, None)
        return bool(flagged) if np.ndim(flagged) == 0 else flagged

    @property
    def sensitivity(self) -> dict[str, float]:
        return {} if self.release is None else self.release.sensitivity

    @property
    def noise_scale(self) -> dict[str, float]:
        return {} if self.release is None else self.release.noise_scale


def _moments(sums: RatioSums) -> tuple[np.ndarray, ...]:
    r"""Plug-in means, variances and covariance of s̄ and ȳ from sums (eq. 2–4).

    .. math:: \hat\mu_{\bar x} = \frac{\sum wx}{\sum w},\quad
              \hat\sigma^2_{\bar x} = \frac{\sum w^2}{(\sum w)^2}
              \Big\{\frac{\sum wx^2}{\sum w} - \hat\mu_{\bar x}^2\Big\},\quad
              \hat\sigma_{\bar y\bar s} = \frac{\sum w^2}{(\sum w)^2}
              \Big\{\frac{\sum wys}{\sum w} - \hat\mu_{\bar y}\hat\mu_{\bar s}\Big\}
    """
    v = sums.value
    total = v("w")
    inverse_n = v("ww") / total**2  # 1 / Kish effective n
    m_s, m_y = v("ws") / total, v("wy") / total
    var_s = (v("wss") / total - m_s**2) * inverse_n
    var_y = (v("wyy") / total - m_y**2) * inverse_n
    cov = (v("wys") / total - m_s * m_y) * inverse_n
    return m_s, m_y, var_s, var_y, cov


def _delta_variance(m_s, m_y, var_s, var_y, cov, scale: Scale) -> np.ndarray:
    r"""Delta-method variance of r̂ = m_s/m_y (eq. 1), or of log r̂ (§2.3).

    .. math:: \mathrm{Var}(\hat r) = \frac{\sigma^2_{\bar s}}{\mu_{\bar y}^2}
              - 2\frac{\mu_{\bar s}}{\mu_{\bar y}^3}\sigma_{\bar y\bar s}
              + \frac{\mu_{\bar s}^2}{\mu_{\bar y}^4}\sigma^2_{\bar y},\qquad
              \mathrm{Var}(\log\hat r) = \frac{\sigma^2_{\bar s}}{\mu_{\bar s}^2}
              - \frac{2\sigma_{\bar y\bar s}}{\mu_{\bar s}\mu_{\bar y}}
              + \frac{\sigma^2_{\bar y}}{\mu_{\bar y}^2}
    """
    if scale == "log":
        return var_s / m_s**2 - 2 * cov / (m_s * m_y) + var_y / m_y**2
    return var_s / m_y**2 - 2 * m_s * cov / m_y**3 + m_s**2 * var_y / m_y**4


def _analytical_variance(release: RatioRelease, scale: Scale) -> np.ndarray:
    """Steps 1–4 of §2.4.3: the delta method on sums, with the noise variance added to Var(Σws)
    and Var(Σwy); the covariance is unchanged because the noises are independent."""
    m_s, m_y, var_s, var_y, cov = _moments(release.sums)  # step 1
    total2 = release.sums.w**2
    sum_s, sum_y = m_s * release.sums.w, m_y * release.sums.w  # step 2
    var_sum_s = var_s * total2 + release.noise_variance("ws")  # step 3(a)
    var_sum_y = var_y * total2 + release.noise_variance("wy")  # step 3(b)
    return _delta_variance(sum_s, sum_y, var_sum_s, var_sum_y, cov * total2, scale)  # step 4


def _monte_carlo_extra(
    release: RatioRelease, estimate: np.ndarray, scale: Scale, B: int, rng: np.random.Generator
) -> np.ndarray:
    r"""Extra variance from DP noise by simulation (§2.4.2, steps 2–3).

    .. math:: \sigma^2_{extra} = \frac1B\sum_{b=1}^B (g(\hat r_b) - g(\hat r))^2,\quad
              \hat r_b = \frac{(\sum ws)_{dp} + e_{s,b}}{(\sum wy)_{dp} + e_{y,b}}

    with g the identity or log, and fresh noise of the release's law added to the *noisy* sums, as
    in the paper (which notes the resulting bias shrinks as n grows). Post-processing: numpy noise.
    Draws are made in chunks so memory stays bounded for many replicates.
    """
    shape = np.shape(estimate)
    sum_s = np.broadcast_to(release.sums.ws, shape).ravel()
    sum_y = np.broadcast_to(release.sums.wy, shape).ravel()
    centre = np.broadcast_to(estimate, shape).ravel()
    draw = rng.laplace if release.mechanism == "laplace" else rng.normal
    scale_s, scale_y = release.noise_scale["ws"], release.noise_scale["wy"]
    transform = np.log if scale == "log" else (lambda x: x)
    extra = np.empty(sum_s.size)
    step = max(1, _MC_CHUNK // B)
    for start in range(0, sum_s.size, step):
        part = slice(start, start + step)
        size = (len(extra[part]), B)
        ratios = (sum_s[part, None] + draw(0.0, scale_s, size)) / (
            sum_y[part, None] + draw(0.0, scale_y, size)
        )
        extra[part] = np.mean((transform(ratios) - transform(centre[part, None])) ** 2, axis=-1)
    return extra.reshape(shape)


def _flag_codes(sums: RatioSums, variance: np.ndarray) -> np.ndarray:
    """Index into the reasons table: 0 when the interval can be formed, else the first failure."""
    v = sums.value
    conditions = [
        v("w") <= 0,
        v("ww") <= 0,
        v("wy") <= 0,
        v("ws") <= 0,
        ~np.isfinite(variance) | (variance < 0),
    ]
    return np.select(conditions, np.arange(1, len(conditions) + 1), 0)


def _interval(
    sums: RatioSums,
    variance: np.ndarray,
    *,
    method: str,
    scale: Scale,
    level: float,
    release: RatioRelease | None,
) -> RatioCI:
    r"""Wald interval :math:`g(\hat r) \pm z_{1-\alpha/2}\sqrt{V}` (§3), mapped back to the ratio.

    On the ratio scale the lower end is cut at 0, as in the paper's code: a ratio of non-negative
    quantities cannot be negative. On the log scale both ends are exponentiated (§2.3).
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        estimate = sums.ws / sums.wy
        codes = _flag_codes(sums, variance)
        ok = codes == 0
        half = ndtri(0.5 + level / 2) * np.sqrt(np.where(ok, variance, np.nan))
        if scale == "log":
            centre = np.log(np.where(ok, estimate, np.nan))
            low, high = np.exp(centre - half), np.exp(centre + half)
        else:
            low, high = np.maximum(estimate - half, 0.0), estimate + half
    return RatioCI(
        estimate=_out(estimate),
        low=_out(low),
        high=_out(high),
        variance=_out(variance),
        flag=_REASONS[codes] if codes.ndim else _REASONS[int(codes)],
        method=method,
        scale=scale,
        level=level,
        sums=sums,
        effective_n=sums.effective_n,
        release=release,
    )


def _check_interval_args(method: object, scale: object, level: object, B: object) -> float:
    _check_option("method", method, METHODS)
    _check_option("scale", scale, SCALES)
    positive_int("B", B)
    return open_unit_interval("level", level)


def ratio_interval(
    release: RatioRelease,
    *,
    method: Method,
    scale: Scale = "ratio",
    level: float = 0.95,
    B: int = 200,
    rng: np.random.Generator | int | None = None,
) -> RatioCI:
    r"""Confidence interval for the ratio from a release: post-processing, no further budget (§2.4).

    The point estimate is :math:`\hat r = (\sum ws)_{dp}/(\sum wy)_{dp}`. The variance is the delta
    method (eq. 1–4) on the noisy sums, plus, by ``method``:

    - ``"none"``: nothing (§2.4.1) — ignores the DP noise, so the interval is too narrow;
    - ``"monte_carlo"``: :math:`\sigma^2_{extra}` from ``B`` simulated re-noisings (§2.4.2),
      drawn with ``rng``;
    - ``"analytical"``: the noise variances of Σws and Σwy added to the variances of the sums
      before the delta method (§2.4.3). On the ratio scale this equals
      :math:`V_{none} + (\sigma^2_{\sum ws} + \hat r^2\sigma^2_{\sum wy})/(\sum wy)_{dp}^2`.
    """
    if not isinstance(release, RatioRelease):
        raise TypeError(
            f"`release` must be a RatioRelease (see release_ratio_sums), got {type(release).__name__}"
        )
    level = _check_interval_args(method, scale, level, B)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if method == "analytical":
            variance = _analytical_variance(release, scale)
        else:
            variance = _delta_variance(*_moments(release.sums), scale)
        if method == "monte_carlo":
            estimate = release.sums.ws / release.sums.wy
            variance = variance + _monte_carlo_extra(release, estimate, scale, B, as_rng(rng))
    return _interval(
        release.sums, variance, method=method, scale=scale, level=level, release=release
    )


def nonprivate_ratio_ci(sums: RatioSums, *, scale: Scale = "ratio", level: float = 0.95) -> RatioCI:
    """The non-private ("public" in the paper's tables) delta-method interval from exact sums.

    NOT differentially private: for simulations and the curator's own preview only, labelled as
    such. Same interval as method ``"none"`` without noise; ``method`` is ``"public"``.
    """
    if not isinstance(sums, RatioSums):
        raise TypeError(f"`sums` must be RatioSums (see ratio_sums), got {type(sums).__name__}")
    level = _check_interval_args("none", scale, level, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = _delta_variance(*_moments(sums), scale)
    return _interval(sums, variance, method="public", scale=scale, level=level, release=None)


def ratio_ci_from_sums(
    sums: RatioSums,
    *,
    epsilon: float,
    delta: float | None,
    mechanism: Mechanism,
    method: Method,
    bounds: RatioBounds | tuple[float, ...],
    scale: Scale = "ratio",
    level: float = 0.95,
    B: int = 200,
    composition: Composition = "basic",
    noise: NoiseKind | NoiseSource | None = None,
    rng: np.random.Generator | int | None = None,
    replicates: int | None = None,
) -> RatioCI:
    """Release ``sums`` with DP noise, then form the interval: :func:`release_ratio_sums` followed
    by :func:`ratio_interval`. ``rng`` seeds both the simulation noise (unless ``noise`` is given)
    and the Monte Carlo correction. Every argument is checked before any noise is drawn.
    """
    _check_interval_args(method, scale, level, B)
    generator = as_rng(rng)
    release = release_ratio_sums(
        sums,
        epsilon=epsilon,
        delta=delta,
        mechanism=mechanism,
        bounds=bounds,
        composition=composition,
        noise=_noise_source(noise, generator),
        replicates=replicates,
    )
    return ratio_interval(release, method=method, scale=scale, level=level, B=B, rng=generator)


def ratio_ci(
    s: np.ndarray,
    y: np.ndarray,
    w: np.ndarray | None = None,
    *,
    epsilon: float,
    delta: float | None,
    mechanism: Mechanism,
    method: Method,
    scale: Scale = "ratio",
    level: float = 0.95,
    bounds: RatioBounds | tuple[float, ...],
    B: int = 200,
    binary_y: bool = False,
    composition: Composition = "basic",
    noise: NoiseKind | NoiseSource | None = None,
    rng: np.random.Generator | int | None = None,
) -> RatioCI:
    r"""DP estimate and confidence interval of :math:`\sum ws/\sum wy` from raw rows (Miao & Li 2022).

    A thin wrapper: :func:`ratio_sums` (clip to ``bounds`` and sum) then
    :func:`ratio_ci_from_sums`. ``bounds`` is :class:`RatioBounds` or a tuple (u_s, u_y[, u_w]) of
    public upper bounds (lower bounds are 0). ``binary_y=True`` declares y ∈ {0, 1}, saving one
    released sum. Example, the paper's weighted setting::

        ratio_ci(s, y, w, epsilon=1.0, delta=1e-6, mechanism="gaussian", method="analytical",
                 bounds=(1, 1, 3), binary_y=True, rng=0)
    """
    _check_interval_args(method, scale, level, B)
    _check_budget_args(epsilon, delta, mechanism, composition)
    sums = ratio_sums(s, y, w, bounds=bounds, binary_y=binary_y)
    return ratio_ci_from_sums(
        sums,
        epsilon=epsilon,
        delta=delta,
        mechanism=mechanism,
        method=method,
        bounds=bounds,
        scale=scale,
        level=level,
        B=B,
        composition=composition,
        noise=noise,
        rng=rng,
    )


# ---- two groups ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class RatioComparison:
    """Difference of two ratios (on their analysis scale) with its interval and z-test."""

    difference: float | np.ndarray
    low: float | np.ndarray
    high: float | np.ndarray
    z: float | np.ndarray
    p_value: float | np.ndarray
    scale: Scale
    level: float
    flag: str | None | np.ndarray


def compare_ratios(a: RatioCI, b: RatioCI, level: float = 0.95) -> RatioComparison:
    r"""Two-sided z-test of :math:`r_a = r_b` for two independent groups (§2.4).

    .. math:: \hat r_a - \hat r_b \xrightarrow{d} N(r_a - r_b, \sigma^2_{r_a} + \sigma^2_{r_b}),
              \quad z = \frac{\hat r_a - \hat r_b}{\sqrt{V_a + V_b}},\quad p = 2\Phi(-|z|)

    with each V from its own method. For ``scale="log"`` the difference is of log ratios (the log
    of the ratio of ratios). The groups must be disjoint, with separate releases (their noises and
    samples independent). If either input is flagged the result is flagged and NaN.
    """
    for name, value in (("a", a), ("b", b)):
        if not isinstance(value, RatioCI):
            raise TypeError(f"`{name}` must be a RatioCI, got {type(value).__name__}")
    if a.scale != b.scale:
        raise ValueError(f"`a` and `b` must be on the same scale, got {a.scale!r} and {b.scale!r}")
    level = open_unit_interval("level", level)
    codes = np.asarray(a.flagged, dtype=int) + 2 * np.asarray(b.flagged, dtype=int)
    transform = np.log if a.scale == "log" else np.asarray
    with np.errstate(divide="ignore", invalid="ignore"):
        difference = np.where(
            codes == 0,
            transform(np.asarray(a.estimate)) - transform(np.asarray(b.estimate)),
            np.nan,
        )
        se = np.sqrt(np.asarray(a.variance) + np.asarray(b.variance))
        z = difference / se
        half = ndtri(0.5 + level / 2) * se
    return RatioComparison(
        _out(difference),
        _out(difference - half),
        _out(difference + half),
        _out(z),
        _out(2 * ndtr(-np.abs(z))),
        a.scale,
        level,
        _COMPARISON_REASONS[codes] if codes.ndim else _COMPARISON_REASONS[int(codes)],
    )


# ---- simulation study (§3) ----------------------------------------------------------------------


def simulate_calibration_sums(
    n: int,
    *,
    reps: int,
    weighted: bool,
    weight_bound: float = 3.0,
    true_ratio: float = 1.1,
    rng: np.random.Generator | int | None = None,
) -> RatioSums:
    r"""Exact sums of ``reps`` simulated datasets of the paper's design (§3), shape (reps,).

    Per row :math:`s \sim \mathrm{Beta}(2,2)`, :math:`y \sim \mathrm{Bernoulli}(s/1.1)` (so the
    true ratio E s / E y is ``true_ratio`` = 1.1), and with ``weighted`` :math:`w \sim
    \mathrm{Exp}(1)` clipped to [1/u_w, u_w], else w = 1. Rows are generated in float32 blocks and
    only their sums (accumulated in float64) are kept; Beta(2, 2) is drawn as the median of three
    uniforms, which has exactly that law and is ~4× faster than ``Generator.beta``.
    """
    n, reps = positive_int("n", n), positive_int("reps", reps)
    weight_bound, true_ratio = _check_design(weighted, weight_bound, true_ratio)
    generator = as_rng(rng)
    per_block = max(1, _SIM_CHUNK_ROWS // n)
    blocks = [
        _simulated_block(
            generator, min(per_block, reps - start), n, weighted, weight_bound, true_ratio
        )
        for start in range(0, reps, per_block)
    ]
    stacked = np.concatenate(blocks, axis=0)
    names = ("w", "ws", "wy", "ww", "wss", "wys") if weighted else ("ws", "wy", "wss", "wys")
    sums = {name: stacked[:, i] for i, name in enumerate(names)}
    if not weighted:
        sums["w"] = np.full(reps, float(n))
    return RatioSums(**sums)


def _check_design(weighted: bool, weight_bound: object, true_ratio: object) -> tuple[float, float]:
    weight_bound = positive_number("weight_bound", weight_bound)
    true_ratio = positive_number("true_ratio", true_ratio)
    if true_ratio < 1:
        raise ValueError(
            f"`true_ratio` must be >= 1 so that s/true_ratio is a probability, got {true_ratio!r}"
        )
    if weighted and weight_bound <= 1:
        raise ValueError(f"`weight_bound` must be > 1 for weighted data, got {weight_bound!r}")
    return weight_bound, true_ratio


def _simulated_block(
    generator: np.random.Generator,
    reps: int,
    n: int,
    weighted: bool,
    weight_bound: float,
    true_ratio: float,
) -> np.ndarray:
    """Sums of one block of replicates, shape (reps, 4) unweighted or (reps, 6) weighted."""
    u = generator.random((3, reps, n), dtype=np.float32)
    low = np.minimum(u[0], u[1])
    high = np.maximum(u[0], u[1], out=u[0])
    s = np.maximum(low, np.minimum(high, u[2], out=high), out=low)  # median of three uniforms
    y = generator.random((reps, n), dtype=np.float32) * np.float32(true_ratio) < s
    if weighted:
        w = generator.standard_exponential((reps, n), dtype=np.float32)
        np.clip(w, np.float32(1 / weight_bound), np.float32(weight_bound), out=w)
    else:
        w = np.float32(1.0)
    ws = w * s
    wy = np.where(y, w, np.float32(0.0))
    columns = [ws, wy, ws * s, wy * s]
    if weighted:
        columns = [w, ws, wy, w * w, ws * s, wy * s]
    return np.stack([c.sum(axis=1, dtype=np.float64) for c in columns], axis=1)


def _as_grid(name: str, values: object) -> tuple:
    items = tuple(values) if isinstance(values, list | tuple) else (values,)
    if not items:
        raise ValueError(f"`{name}` must list at least one value, got {values!r}")
    return items


def _summarise(ci: RatioCI, scale: Scale, truth: float) -> dict[str, float]:
    """Mean width, coverage, mean interval score and flagged count, on the analysis scale.

    As in the paper's tables, flagged replicates count as not covering and are left out of the
    mean width and score (the paper's NaN intervals are skipped by pandas' mean).
    """
    low, high = np.asarray(ci.low), np.asarray(ci.high)
    if scale == "log":
        low, high, truth = np.log(low), np.log(high), math.log(truth)
    ok = ~np.asarray(ci.flagged)
    score = interval_score(low[ok], high[ok], truth, 1 - ci.level)
    return {
        "width": float(np.mean(high[ok] - low[ok])) if ok.any() else math.nan,
        "coverage": float(coverage(low, high, truth)),
        "score": float(np.mean(score)) if ok.any() else math.nan,
        "flagged": int(np.count_nonzero(~ok)),
    }


@dataclass(frozen=True)
class _StudyGrid:
    """The validated grid of :func:`ratio_study`."""

    ns: tuple[int, ...]
    weightings: tuple[bool, ...]
    budgets: tuple[tuple[float, str, str], ...]  # (ε, mechanism, composition)
    methods: tuple[str, ...]
    scales: tuple[str, ...]
    reps: int
    B: int
    delta: float
    level: float
    weight_bound: float
    true_ratio: float


def _validate_study(
    n,
    epsilon,
    weighted,
    mechanism,
    composition,
    method,
    scale,
    reps,
    B,
    delta,
    level,
    weight_bound,
    true_ratio,
) -> _StudyGrid:
    """Check the whole grid, and refuse impossible budgets (e.g. classic Gaussian with ε/m >= 1),
    before anything is simulated."""
    weightings = _as_grid("weighted", weighted)
    for value in weightings:
        if not isinstance(value, bool | np.bool_):
            raise TypeError(f"`weighted` must be True or False, got {value!r}")
    epsilons = tuple(positive_number("epsilon", v) for v in _as_grid("epsilon", epsilon))
    pairs = product(
        (_check_option("mechanism", v, MECHANISMS) for v in _as_grid("mechanism", mechanism)),
        (
            _check_option("composition", v, COMPOSITIONS)
            for v in _as_grid("composition", composition)
        ),
    )
    # zCDP calibrates only the Gaussian mechanism; other pairs with it are skipped.
    usable = [(mech, comp) for mech, comp in pairs if comp == "basic" or mech == "gaussian"]
    if not usable:
        raise ValueError(
            "no usable (mechanism, composition) pair: 'zcdp' needs mechanism='gaussian'"
        )
    budgets = tuple((eps, mech, comp) for eps, (mech, comp) in product(epsilons, usable))
    for is_weighted, (eps, mech, comp) in product(weightings, budgets):
        eps, delta_used = _check_budget_args(eps, delta, mech, comp)
        _noise_scales(
            dict.fromkeys(SUM_NAMES[: 6 if is_weighted else 5], 1.0), eps, delta_used, mech, comp
        )
    weight_bound, true_ratio = _check_design(any(weightings), weight_bound, true_ratio)
    return _StudyGrid(
        ns=tuple(positive_int("n", v) for v in _as_grid("n", n)),
        weightings=tuple(bool(v) for v in weightings),
        budgets=budgets,
        methods=tuple(
            _check_option("method", v, {"public": "", **METHODS})
            for v in _as_grid("method", method)
        ),
        scales=tuple(_check_option("scale", v, SCALES) for v in _as_grid("scale", scale)),
        reps=positive_int("reps", reps),
        B=positive_int("B", B),
        delta=delta,
        level=open_unit_interval("level", level),
        weight_bound=weight_bound,
        true_ratio=true_ratio,
    )


def _setting_rows(
    grid: _StudyGrid, n: int, weighted: bool, generator: np.random.Generator
) -> list[dict]:
    """Rows of one (n, weighting): its data simulated once, released once per budget."""
    exact = simulate_calibration_sums(
        n,
        reps=grid.reps,
        weighted=weighted,
        weight_bound=grid.weight_bound,
        true_ratio=grid.true_ratio,
        rng=generator,
    )
    bounds = RatioBounds(1.0, 1.0, grid.weight_bound if weighted else 1.0)
    setting = {"n": n, "effective_n": float(np.mean(exact.effective_n)), "weighted": weighted}
    truth = grid.true_ratio
    public = {
        sc: _summarise(nonprivate_ratio_ci(exact, scale=sc, level=grid.level), sc, truth)
        for sc in grid.scales
    }
    rows = []
    for eps, mech, comp in grid.budgets:
        release = release_ratio_sums(
            exact,
            epsilon=eps,
            delta=grid.delta,
            mechanism=mech,
            bounds=bounds,
            composition=comp,
            noise=SimulationNoise(rng=generator),
        )
        budget = {"epsilon": eps, "delta": release.delta, "mechanism": mech, "composition": comp}
        for sc, meth in product(grid.scales, grid.methods):
            if meth == "public":
                summary = public[sc]
            else:
                ci = ratio_interval(
                    release, method=meth, scale=sc, level=grid.level, B=grid.B, rng=generator
                )
                summary = _summarise(ci, sc, truth)
            rows.append(
                {**setting, **budget, "method": meth, "scale": sc, "reps": grid.reps, **summary}
            )
    return rows


def ratio_study(
    *,
    n: int | Sequence[int] = (5000, 10000),
    epsilon: float | Sequence[float] = (0.2, 0.5, 1.0, 4.0),
    weighted: bool | Sequence[bool] = (False, True),
    mechanism: Mechanism | Sequence[Mechanism] = "gaussian",
    composition: Composition | Sequence[Composition] = "basic",
    method: str | Sequence[str] = ("public", "none", "monte_carlo", "analytical"),
    scale: Scale | Sequence[Scale] = "ratio",
    reps: int = 1000,
    B: int = 200,
    delta: float = 1e-6,
    level: float = 0.95,
    weight_bound: float = 3.0,
    true_ratio: float = 1.1,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """The paper's simulation (§3, Tables 1–4) over a grid, vectorized over replicates.

    Every grid argument takes one value or a sequence. For every n, weighting, ε, mechanism and
    composition, ``reps`` datasets are released once and every ``method`` × ``scale`` is computed
    from that same release. ``method`` may include ``"public"``, the non-private interval of the
    exact sums (the paper's public_* columns; it does not depend on the budget, so its row repeats
    for every budget setting). Pairs that cannot be combined (``composition="zcdp"`` with a
    mechanism other than ``"gaussian"``) are skipped, so ``composition=("basic", "zcdp")`` shows
    the two accountings side by side.

    Common random numbers: the data of each (n, weighting) are generated once and reused for every
    ε, mechanism, composition and method (the paper's code does the same in effect: it seeds each
    replicate identically across settings). Each setting's estimates stay unbiased, and differences
    between settings are less noisy than with independent data per setting.

    Returns a tidy frame, one row per setting and method: n, effective_n (mean Kish n of the exact
    data), weighted, epsilon, delta (0 for Laplace), mechanism, composition, method, scale, reps,
    width, coverage, score (mean interval score, Gneiting & Raftery 2007 eq. 43) and flagged (the
    count of degenerate replicates, which count as not covering and are left out of width and
    score, as the paper's NaN intervals are). Width and score are on the analysis scale (log units
    for ``scale="log"``, as in the paper's Tables 2 and 4).
    """
    grid = _validate_study(
        n,
        epsilon,
        weighted,
        mechanism,
        composition,
        method,
        scale,
        reps,
        B,
        delta,
        level,
        weight_bound,
        true_ratio,
    )
    generator = as_rng(rng)
    rows = [
        row
        for size, is_weighted in product(grid.ns, grid.weightings)
        for row in _setting_rows(grid, size, is_weighted, generator)
    ]
    return pd.DataFrame(rows)


def load_table1() -> pd.DataFrame:
    """Table 1 of the paper (Gaussian mechanism, ratio scale, 1000 replicates), as published.

    One row per setting: weighted (bool), n, effective_n, epsilon, then width, coverage and score
    for the public, nc (no correction), mc (Monte Carlo) and an (analytical) methods. Source:
    ``dpcore/data/ratio_table1_gaussian.csv`` (header comments describe the design).
    """
    with resources.files("dpcore").joinpath(TABLE1_PATH).open("r", encoding="utf-8") as handle:
        table = pd.read_csv(handle, comment="#")
    return table.assign(weighted=table["weighted"].map({"yes": True, "no": False}))
