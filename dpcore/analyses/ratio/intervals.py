"""Confidence intervals for the ratio from released sums (Miao & Li 2022, §2.4).

Post-processing only: the delta-method variance (eq. 1–4) and an interval with no correction
(§2.4.1), the Monte Carlo correction (§2.4.2) or the analytical correction (§2.4.3), on the ratio
or log scale; and the z-test for the difference of two groups' ratios.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import log_ndtr, ndtr, ndtri

from dpcore.analyses.ratio.noise import (
    RatioRelease,
    check_budget_args,
    release_ratio_sums,
)
from dpcore.analyses.ratio.sums import (
    METHODS,
    SCALES,
    Composition,
    Mechanism,
    Method,
    RatioBounds,
    RatioSums,
    Scale,
    as_float_if_scalar,
    ratio_sums,
)
from dpcore.foundations.intervals import Interval
from dpcore.foundations.mechanisms import NoiseKind, NoiseSource, as_noise_source
from dpcore.foundations.validation import as_rng, open_unit_interval, positive_int

__all__ = [
    "NO_VARIANCE",
    "RatioCI",
    "RatioComparison",
    "compare_ratios",
    "laplace_quantile_factor",
    "normal_two_laplace_quantile",
    "nonprivate_ratio_ci",
    "ratio_ci",
    "ratio_ci_from_sums",
    "ratio_interval",
]


NO_VARIANCE = "the variance estimate is negative or not finite"
"""The one flag under which the ratio itself is still defined (only its interval is missing)."""

_REASONS = np.array(
    [
        None,
        "noisy Σw ≤ 0: the weighted means (eq. 2) are undefined",
        "noisy Σw² ≤ 0: the Kish effective n is undefined",
        "noisy Σwy ≤ 0: the ratio's denominator is not positive",
        "noisy Σws ≤ 0: the ratio's numerator is not positive",
        NO_VARIANCE,
    ],
    dtype=object,
)


_COMPARISON_REASONS = np.array(
    [None, "ratio `a` is flagged", "ratio `b` is flagged", "both ratios are flagged"], dtype=object
)


_MC_CHUNK = 1 << 20  # Monte Carlo draws held in memory at once


@dataclass(frozen=True, eq=False, kw_only=True)
class RatioCI(Interval):
    """A ratio estimate with its confidence interval (an :class:`~dpcore.foundations.intervals.Interval`);
    arrays when the sums were arrays.

    ``estimate``, ``low`` and ``high`` are on the ratio scale (for ``scale="log"`` the interval is
    built for log r and exponentiated back); ``method`` is the correction (``"public"`` for
    :func:`nonprivate_ratio_ci`); ``variance`` is on the analysis scale (of r̂, or of log r̂).
    ``flag`` is None, or a string saying why the interval could not be formed (then ``low`` and
    ``high`` are NaN); an object array of those when vectorized. ``sums`` are the noisy sums used
    (the exact ones for :func:`nonprivate_ratio_ci`, where ``release`` is None).
    """

    method: Method | Literal["public"]
    variance: float | np.ndarray
    flag: str | None | np.ndarray
    scale: Scale
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


_NORMAL_LIMIT = 20.0
"""Where the normal part's sd exceeds a Laplace scale this many times, that Laplace part is
taken as normal of its variance (its tails are then below 1e-80 of the normal's)."""


def _normal_laplace_tail(
    x: np.ndarray, sd: np.ndarray, scale: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`P(N(0, s^2) + \mathrm{Lap}(a) > x)` for x ≥ 0 and its density at x, the
    normal–Laplace law (Reed & Jorgensen 2004, *Commun. Stat. Theory Methods* 33(6), eq. 4–5
    with α = β = 1/a): with :math:`E_\pm = e^{s^2/2a^2 \mp x/a}\Phi(\pm x/s - s/a)`,

    .. math:: P(X > x) = \bar\Phi(x/s) + (E_+ - E_-)/2, \qquad f(x) = (E_+ + E_-)/(2a),

    each product taken in logs (``log_ndtr``); s = 0 gives the Laplace law
    (:math:`e^{-x/a}/2`, :math:`e^{-x/a}/2a`), and a ≪ s the normal of variance
    :math:`s^2 + 2a^2`."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = sd / scale
        lift = ratio**2 / 2
        z = x / sd
        plus = np.exp(lift - x / scale + log_ndtr(z - ratio))
        minus = np.exp(lift + x / scale + log_ndtr(-z - ratio))
        mixed = (ndtr(-z) + (plus - minus) / 2, (plus + minus) / (2 * scale))
        laplace = np.exp(-x / scale) / 2
        total = np.sqrt(sd**2 + 2 * scale**2)
        normal = (ndtr(-x / total), np.exp(-((x / total) ** 2) / 2) / (total * np.sqrt(2 * np.pi)))
    pure, wide = sd <= 0, ratio > _NORMAL_LIMIT
    return tuple(  # type: ignore[return-value]
        np.where(pure, lap, np.where(wide, nor, mix))
        for lap, nor, mix in zip((laplace, laplace / scale), normal, mixed, strict=True)
    )


def normal_two_laplace_quantile(
    level: float, sd: np.ndarray, first: np.ndarray, second: np.ndarray
) -> np.ndarray:
    r"""The ``level`` quantile of :math:`|X|`, :math:`X = N(0, s^2) + \mathrm{Lap}(a) +
    \mathrm{Lap}(c)` (independent), vectorised over broadcast (s, a, c).

    The two Laplace laws' characteristic function :math:`1/((1+a^2t^2)(1+c^2t^2))` is the
    signed mixture :math:`[a^2/(1+a^2t^2) - c^2/(1+c^2t^2)]/(a^2 - c^2)` (as in
    :class:`~dpcore.planner.error_shapes.LaplaceSumError`), so X's tail and density are that
    mixture of two normal–Laplace ones (:func:`_normal_laplace_tail`). Scales within 0.1% of
    each other, where the mixture cancels, are parted by raising the larger to 1/0.999 of the
    smaller (a wider law: the quantile can only grow, by under 0.1%). A zero scale drops its
    part. The quantile solves :math:`2P(X > q) = 1 - \text{level}` by Newton's method from
    the normal quantile of X's variance, safeguarded by bisection inside the bracket
    :math:`[0, z s + 2(a + c)\log(2/(1-\text{level}))]` (past which the tail is below it);
    X's law is log-concave (a convolution of log-concave laws), so the iteration settles in a
    few steps, to within 1e-12 relative.
    """
    sd, first, second = (np.asarray(v, dtype=float) for v in (sd, first, second))
    sd, first, second = np.broadcast_arrays(sd, first, second)
    big, small = np.maximum(first, second), np.minimum(first, second)
    big = np.where((small > 0) & (small > 0.999 * big), small / 0.999, big)
    single = small <= 0
    tiny = np.finfo(float).tiny
    weight_big = np.where(single, 1.0, big**2 / np.maximum(big**2 - small**2, tiny))
    weight_small = np.where(single, 0.0, small**2 / np.maximum(big**2 - small**2, tiny))
    big, small = np.maximum(big, tiny), np.maximum(small, tiny)

    def tail(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        (big_tail, big_density), (small_tail, small_density) = (
            _normal_laplace_tail(x, sd, big), _normal_laplace_tail(x, sd, small)
        )  # fmt: skip
        return (
            weight_big * big_tail - weight_small * small_tail,
            weight_big * big_density - weight_small * small_density,
        )

    target = (1 - level) / 2
    z = ndtri(1 - target)
    low = np.zeros_like(sd)
    high = z * sd + 2 * (big + small) * np.log(2 / (1 - level)) + tiny
    x = np.clip(z * np.sqrt(sd**2 + 2 * big**2 + 2 * weight_small * small**2), low, high)
    for _ in range(NEWTON_STEPS):
        probability, density = tail(x)
        above = probability > target
        low, high = np.where(above, x, low), np.where(above, high, x)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x + (probability - target) / density
        inside = np.isfinite(step) & (step >= low) & (step <= high)
        x = np.where(inside, step, (low + high) / 2)
    return x


NEWTON_STEPS = 12
"""Newton steps of :func:`normal_two_laplace_quantile` (quadratic convergence; the bisection
fallback halves the bracket at worst)."""


def laplace_quantile_factor(
    release: RatioRelease, sampling_variance: np.ndarray, scale: Scale, level: float
) -> np.ndarray:
    r"""How much wider than the normal's the ratio's interval must be for Laplace noise: the
    ``level`` quantile of its first-order error law over :math:`z\sqrt{V}` of the same law.

    To first order (the delta method of eq. 1, §2.3) the error of :math:`\hat r` is
    :math:`(e_s - \hat r e_y)/\sum wy` plus sampling error, and of :math:`\log\hat r`,
    :math:`e_s/\sum ws - e_y/\sum wy` plus sampling error; with Laplace noise
    :math:`e \sim \mathrm{Lap}(b)` on each released sum that law is
    :math:`N(0, V_{none}) + \mathrm{Lap}(a) + \mathrm{Lap}(c)` with
    :math:`a = b_s/|\sum wy|, c = |\hat r| b_y/|\sum wy|` (ratio) or
    :math:`a = b_s/|\sum ws|, c = b_y/|\sum wy|` (log), of variance
    :math:`V_{none} + 2a^2 + 2c^2` — the analytical correction's (§2.4.3). The paper's Wald
    interval :math:`\pm z\sqrt V` assumes that law normal; where Laplace noise dominates its
    95% quantile is :math:`3.00b = 2.12` sds, not 1.96, so the interval covered 93.7% (issue
    42). The factor :math:`q_{level}/(z\,\mathrm{sd})` (:func:`normal_two_laplace_quantile`)
    rescales any method's half-width :math:`z\sqrt V`: 1 where sampling error dominates,
    2.12/1.96 = 1.08 for one Laplace alone at 95% (and below 1 at levels under about 85%,
    where a Laplace law is narrower than the normal). The paper does not treat it (its App.
    notes the Laplace law breaks the analytical method's assumption); our choice.

    Totals over k groups (``release.noise_terms`` = k) add k Laplace noises per sum, a law
    between the one-Laplace law of their variance and the normal; the factor is then the larger
    of that one-Laplace law's and 1, which covers at least the level either way.
    """
    sums = release.sums
    b_s, b_y = release.noise_scale["ws"], release.noise_scale["wy"]
    with np.errstate(divide="ignore", invalid="ignore"):
        if scale == "log":
            first, second = b_s / np.abs(sums.ws), b_y / np.abs(sums.wy)
        else:
            first = b_s / np.abs(sums.wy)
            second = np.abs(sums.ws / sums.wy) * b_y / np.abs(sums.wy)
        sd = np.sqrt(np.maximum(np.where(np.isfinite(sampling_variance), sampling_variance, 0), 0))
        quantile = normal_two_laplace_quantile(level, sd, first, second)
        factor = quantile / (ndtri(0.5 + level / 2) * np.sqrt(sd**2 + 2 * first**2 + 2 * second**2))
    factor = np.where(np.isfinite(factor), factor, 1.0)
    return np.maximum(factor, 1.0) if release.noise_terms > 1 else factor


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
    factor: np.ndarray | float = 1.0,
) -> RatioCI:
    r"""Wald interval :math:`g(\hat r) \pm z_{1-\alpha/2}\sqrt{V}` (§3), mapped back to the ratio;
    the half-width times ``factor`` (:func:`laplace_quantile_factor` for Laplace noise).

    On the ratio scale the lower end is cut at 0, as in the paper's code: a ratio of non-negative
    quantities cannot be negative. On the log scale both ends are exponentiated (§2.3).
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        estimate = sums.ws / sums.wy
        codes = _flag_codes(sums, variance)
        ok = codes == 0
        half = factor * ndtri(0.5 + level / 2) * np.sqrt(np.where(ok, variance, np.nan))
        if scale == "log":
            centre = np.log(np.where(ok, estimate, np.nan))
            low, high = np.exp(centre - half), np.exp(centre + half)
        else:
            low, high = np.maximum(estimate - half, 0.0), estimate + half
    return RatioCI(
        estimate=as_float_if_scalar(estimate),
        low=as_float_if_scalar(low),
        high=as_float_if_scalar(high),
        variance=as_float_if_scalar(variance),
        flag=_REASONS[codes] if codes.ndim else _REASONS[int(codes)],
        method=method,
        scale=scale,
        level=level,
        sums=sums,
        effective_n=sums.effective_n,
        release=release,
    )


def _check_interval_args(method: object, scale: object, level: object, B: object) -> float:
    METHODS.check("method", method)
    SCALES.check("scale", scale)
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

    With Laplace noise the corrected methods' half-width :math:`z\sqrt V` is scaled by
    :func:`laplace_quantile_factor`, the noise's own quantile (issue 42); ``"none"`` ignores
    the noise and stays as the paper has it.
    """
    if not isinstance(release, RatioRelease):
        raise TypeError(
            f"`release` must be a RatioRelease (see release_ratio_sums), got {type(release).__name__}"
        )
    level = _check_interval_args(method, scale, level, B)
    factor = 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sampling = _delta_variance(*_moments(release.sums), scale)
        if method == "analytical":
            variance = _analytical_variance(release, scale)
        else:
            variance = sampling
        if method == "monte_carlo":
            estimate = release.sums.ws / release.sums.wy
            variance = variance + _monte_carlo_extra(release, estimate, scale, B, as_rng(rng))
        if method != "none" and release.mechanism == "laplace":
            factor = laplace_quantile_factor(release, sampling, scale, level)
    return _interval(
        release.sums, variance, method=method, scale=scale, level=level, release=release,
        factor=factor,
    )  # fmt: skip


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
        noise=as_noise_source(noise, rng=generator),
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
    check_budget_args(epsilon, delta, mechanism, composition)
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
        as_float_if_scalar(difference),
        as_float_if_scalar(difference - half),
        as_float_if_scalar(difference + half),
        as_float_if_scalar(z),
        as_float_if_scalar(2 * ndtr(-np.abs(z))),
        a.scale,
        level,
        _COMPARISON_REASONS[codes] if codes.ndim else _COMPARISON_REASONS[int(codes)],
    )
