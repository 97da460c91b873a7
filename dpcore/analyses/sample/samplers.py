"""Differentially private samplers (Raskhodnikova, Sivakumar, Smith & Swanberg, NeurIPS 2021) and
the numerics the synthesizers share with them (simplex projection, vectorized categorical draws).

A DP *sampler* takes a dataset of n i.i.d. draws from an unknown distribution P and outputs one
draw whose distribution is close to P in total variation, while the output is differentially
private with respect to the dataset (their Def. 1.1 and 1.3):

- :func:`kary_sample` — the k-ary sampler (Alg. 3, Thm. 1.4): Laplace noise on the empirical
  distribution, projection onto the simplex, one draw;
- :func:`bernoulli_sample` — bits with bias in [1/3, 2/3] (Thm. 6.1): draw from the clipped
  sample proportion, no added noise;
- :func:`product_bernoulli_sample` — products of such bits (Thm. 6.4, ρ-zCDP).

**Neighbouring relation.** The paper's, used by every sampler here: datasets of the same size n
that differ in *one record replaced* (replace-one). n itself is public. (The synthesizers of
:mod:`dpcore.analyses.synth` use add/remove-one instead, Strata Lab's default.)

Each function is vectorized over independent runs (``runs=R``): R independent executions of the
mechanism, each with its own privacy cost — R releases cost R times as much by composition, so
runs serve simulation and tests. The general product-of-Bernoulli sampler with recursive
preconditioning (Alg. 4, Thm. 5.1) is not implemented.

Pure numpy; never imports streamlit or plotly.
"""

from __future__ import annotations

import math

import numpy as np

from dpcore.foundations.mechanisms import NoiseKind, NoiseSource, as_noise_source
from dpcore.foundations.validation import as_rng, positive_int, positive_number, shown

__all__ = [
    "bernoulli_sample",
    "bernoulli_sampler_epsilon",
    "clipped_proportion",
    "kary_distribution",
    "kary_laplace_scale",
    "kary_sample",
    "product_bernoulli_min_n",
    "product_bernoulli_sample",
    "product_bernoulli_sampler_rho",
    "project_simplex",
]


def project_simplex(values: np.ndarray) -> np.ndarray:
    r"""Euclidean projection onto the probability simplex along the last axis.

    .. math:: \Pi(x) = \arg\min_{q \in \Delta_k} \lVert x - q \rVert_2 = \max(x - \tau, 0),

    with the sort-based threshold of Held, Wolfe & Crowder (1974) (Duchi et al. 2008, Fig. 1):
    sort :math:`u_1 \ge \dots \ge u_k`, let
    :math:`\rho = \max\{j : u_j - (\sum_{i \le j} u_i - 1)/j > 0\}` and
    :math:`\tau = (\sum_{i \le \rho} u_i - 1)/\rho`. Cost :math:`O(k \log k)` per row, vectorized
    over leading axes.

    :math:`\Pi(x)` is also a nearest point of the simplex in :math:`\ell_1`:
    :math:`\lVert x - \Pi(x)\rVert_1 = \sum_i (x_i)_- + |\sum_i (x_i)_+ - 1|`, the
    :math:`\ell_1` distance from x to the simplex (if :math:`\tau \ge 0`, positive coordinates
    only move down and negative ones up to 0; if :math:`\tau < 0`, every coordinate moves up).
    So the accuracy proof of Raskhodnikova
    et al. (NeurIPS 2021, Thm. 1.4), which uses :math:`\lVert \Pi(x) - x \rVert_1 \le
    \lVert p - x \rVert_1` for every distribution p, applies to this projection unchanged.
    """
    x = np.asarray(values, dtype=float)
    if x.ndim == 0 or x.shape[-1] == 0 or not np.all(np.isfinite(x)):
        raise ValueError(
            f"`values` must be a non-empty array of finite numbers, got {shown(values)}"
        )
    u = -np.sort(-x, axis=-1)
    excess = np.cumsum(u, axis=-1) - 1.0
    positive = u - excess / np.arange(1, x.shape[-1] + 1) > 0  # a prefix of True values
    rho = positive.sum(axis=-1, keepdims=True)
    tau = np.take_along_axis(excess, rho - 1, axis=-1) / rho
    return np.maximum(x - tau, 0.0)


def draw_categorical(
    probs: np.ndarray, size: int, *, rng: np.random.Generator | int | None
) -> np.ndarray:
    """``size`` independent draws from each distribution in ``probs`` (..., k), by inverse CDF.

    Returns integer codes of shape ``probs.shape[:-1] + (size,)``. All rows are drawn with one
    ``searchsorted`` over the concatenated CDFs, each shifted by its row number.
    """
    p = np.asarray(probs, dtype=float)
    k = p.shape[-1]
    cdf = np.cumsum(p.reshape(-1, k), axis=1)
    cdf /= cdf[:, -1:]
    rows = np.arange(cdf.shape[0])[:, None]
    u = as_rng(rng).random((cdf.shape[0], size))
    flat = np.searchsorted((cdf + rows).ravel(), (u + rows).ravel(), side="right")
    codes = np.minimum(flat.reshape(u.shape) - rows * k, k - 1)
    return codes.reshape(p.shape[:-1] + (size,))


BIAS_BOUNDS = (1 / 3, 2 / 3)
"""The bias interval of the bounded-bias samplers (NeurIPS 2021, §6)."""


def _runs(runs: int | None) -> int:
    return 1 if runs is None else positive_int("runs", runs)


def _squeeze(out: np.ndarray, runs: int | None) -> np.ndarray:
    return out[0] if runs is None else out


# --------------------------------------------------------------------------------------------
# k-ary sampler (Alg. 3)
# --------------------------------------------------------------------------------------------


def kary_laplace_scale(n: int, epsilon: float) -> float:
    r"""Laplace scale of Alg. 3: :math:`b = 2/(\varepsilon n)` per cell.

    Replacing one of n records moves two cells of the empirical distribution by 1/n each, so its
    L1 sensitivity is 2/n (NeurIPS 2021, proof of Thm. 1.4).
    """
    return 2.0 / (positive_int("n", n) * positive_number("epsilon", epsilon))


def _check_codes(data: object, k: int) -> np.ndarray:
    codes = np.asarray(data)
    if codes.ndim != 1 or codes.size == 0:
        raise ValueError(f"`data` must be a non-empty 1-D array of codes, got shape {codes.shape}")
    if not np.issubdtype(codes.dtype, np.integer):
        raise TypeError(f"`data` must hold integer codes 0..k-1, got dtype {codes.dtype}")
    if codes.min() < 0 or codes.max() >= k:
        raise ValueError(
            f"`data` codes must lie in 0..{k - 1} (k = {k}), got {codes.min()}..{codes.max()}"
        )
    return codes


def kary_distribution(
    data: np.ndarray,
    k: int,
    epsilon: float,
    *,
    runs: int | None = None,
    rng: np.random.Generator | int | None = None,
    noise: NoiseKind | NoiseSource = "simulation",
) -> np.ndarray:
    r"""The private distribution of Alg. 3 (NeurIPS 2021), before the draw.

    .. math:: \hat p = \Pi_{\Delta_k}\!\left(p_D + Z\right), \qquad
              Z_i \sim \mathrm{Lap}\!\left(\frac{2}{\varepsilon n}\right) \text{ i.i.d.},

    with :math:`p_D` the empirical distribution of ``data`` (codes 0..k-1) and :math:`\Pi` the
    Euclidean projection onto the simplex (:func:`project_simplex`, also an :math:`\ell_1`
    projection, so Thm. 1.4's accuracy proof holds). ε-DP under replace-one neighbours (n
    public): Laplace mechanism plus post-processing. Returns shape (k,), or (runs, k) for
    ``runs`` independent executions.
    """
    k = positive_int("k", k)
    codes = _check_codes(data, k)
    scale = kary_laplace_scale(codes.size, epsilon)
    empirical = np.bincount(codes, minlength=k) / codes.size
    noisy = as_noise_source(noise, rng=as_rng(rng)).add_laplace(
        np.broadcast_to(empirical, (_runs(runs), k)), scale
    )
    return _squeeze(project_simplex(noisy), runs)


def kary_sample(
    data: np.ndarray,
    k: int,
    epsilon: float,
    *,
    size: int | None = None,
    runs: int | None = None,
    rng: np.random.Generator | int | None = None,
    noise: NoiseKind | NoiseSource = "simulation",
) -> np.ndarray:
    r"""The ε-DP k-ary sampler (NeurIPS 2021, Alg. 3, Thm. 1.4): draws from :func:`kary_distribution`.

    Thm. 1.4: for data of :math:`n = O(k/(\alpha\varepsilon))` i.i.d. draws from any P on [k],
    the output is within α of P in total variation, since
    :math:`E\lVert\hat p - P\rVert_1 \le E\lVert p_D - P\rVert_1 + 2E\lVert Z\rVert_1` and
    :math:`E\lVert Z\rVert_1 = 2k/(\varepsilon n)`.

    Parameters
    ----------
    data
        Codes 0..k-1 of the n records. Neighbours: one record replaced (n public).
    k
        Size of the universe.
    epsilon
        ε of each run.
    size
        Draws per run, all from the run's one private distribution: releasing any number of
        them is post-processing, still ε-DP. ``None``: one draw, without the axis.
    runs
        Independent executions (each ε-DP; R of them cost Rε). ``None``: one, without the axis.
    rng
        Seeds the draws, and the Laplace noise when it is ``"simulation"``.
    noise
        Source of the Laplace noise: ``"simulation"`` (numpy), ``"secure"`` (OpenDP) or a
        :class:`~dpcore.foundations.mechanisms.NoiseSource`.

    Returns
    -------
    numpy.ndarray
        Codes of shape ``(runs, size)`` with the ``None`` axes dropped.
    """
    generator = as_rng(rng)
    probs = kary_distribution(data, k, epsilon, runs=runs, rng=generator, noise=noise)
    draws = draw_categorical(
        probs, 1 if size is None else positive_int("size", size), rng=generator
    )
    return draws[..., 0] if size is None else draws


# --------------------------------------------------------------------------------------------
# Bounded-bias Bernoulli and product samplers (§6)
# --------------------------------------------------------------------------------------------


def _check_bits(bits: object, name: str, ndim: int | None = None) -> np.ndarray:
    arr = np.asarray(bits)
    if arr.ndim == 0 or arr.shape[-1] == 0 or (ndim is not None and arr.ndim != ndim):
        raise ValueError(f"`{name}` must be a non-empty array of records, got shape {arr.shape}")
    numeric = np.issubdtype(arr.dtype, np.number) or arr.dtype == bool
    if not numeric or not np.all((arr == 0) | (arr == 1)):
        raise ValueError(f"`{name}` must contain only 0/1 (or False/True) values")
    return arr.astype(float)


def _check_bounds(bounds: object) -> tuple[float, float]:
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise TypeError(f"`bounds` must be a pair of numbers (low, high), got {bounds!r}") from None
    if not 0 < low < high < 1:
        raise ValueError(f"`bounds` must satisfy 0 < low < high < 1, got {bounds!r}")
    return low, high


def clipped_proportion(
    bits: np.ndarray, axis: int = -1, *, bounds: tuple[float, float] = BIAS_BOUNDS
) -> np.ndarray:
    r"""The sample proportion clipped to ``bounds`` = [a, b]: :math:`c = \min(\max(\bar x, a), b)`.

    It is the probability that :func:`bernoulli_sample` outputs 1 (NeurIPS 2021, proof of
    Thm. 6.1); ``axis`` holds the records.
    """
    low, high = _check_bounds(bounds)
    return np.clip(np.mean(_check_bits(bits, "bits"), axis=axis), low, high)


def bernoulli_sampler_epsilon(n: int, bounds: tuple[float, float] = BIAS_BOUNDS) -> float:
    r"""ε of the bounded-bias Bernoulli sampler on n records: :math:`\varepsilon = 1/(n m)`,
    :math:`m = \min(a, 1 - b)` — with the default [1/3, 2/3], :math:`\varepsilon = 3/n`.

    NeurIPS 2021, Claim 6.3: replacing one record moves the clipped proportion c by at most
    1/n, and :math:`c \ge a`, :math:`1 - c \ge 1 - b`, so both output probabilities change by a
    factor of at most :math:`1 + 1/(nm) \le e^{1/(nm)}`. (The exact worst case,
    :math:`\ln(1 + 1/(nm))`, is a little smaller.) For a target ε use :math:`n \ge 1/(m\varepsilon)`.
    """
    low, high = _check_bounds(bounds)
    return 1.0 / (positive_int("n", n) * min(low, 1 - high))


def bernoulli_sample(
    bits: np.ndarray,
    *,
    bounds: tuple[float, float] = BIAS_BOUNDS,
    runs: int | None = None,
    rng: np.random.Generator | int | None = None,
    noise: NoiseKind | NoiseSource = "simulation",
) -> np.ndarray:
    r"""The bounded-bias Bernoulli sampler (NeurIPS 2021, Thm. 6.1): one bit per dataset.

    .. math:: \Pr[\text{output} = 1] = c = \min\!\left(\max\!\left(\bar x, a\right), b\right),
              \qquad [a, b] = [1/3, 2/3] \text{ by default}

    (:func:`clipped_proportion`). It adds no noise — the draw itself is the mechanism — and is
    :math:`1/(n\min(a, 1-b))`-DP (3/n by default) under replace-one neighbours
    (:func:`bernoulli_sampler_epsilon`).

    Accuracy: for Bernoulli(p) data the output is exactly Bernoulli(p) whenever
    :math:`\bar x` was not clipped. For p well inside [a, b], Hoeffding's bound makes clipping
    exponentially rare in n. For p at an end of [a, b] clipping happens about half the time and
    biases the output by :math:`O(1/\sqrt n)`; to sample biases in [1/3, 2/3] with the
    exponential accuracy of Thm. 6.1, clip to a strictly wider interval, e.g.
    ``bounds=(1/4, 3/4)`` at ε = 4/n. (The paper's extracted text we work from does not show its
    clipping interval; [1/3, 2/3] is the default asked of this module.)

    ``bits`` has shape (..., n): leading axes are independent datasets. The output has shape
    ``(runs,) + bits.shape[:-1]`` (``runs=None`` drops the axis). Every bit released costs ε:
    R bits from one dataset cost Rε by composition, since c is not re-randomized between draws.

    The draw is the mechanism, so it comes from ``noise``: ``"simulation"`` (numpy, seeded by
    ``rng``, vectorized over runs) or ``"secure"`` (OpenDP, for a release;
    :meth:`~dpcore.foundations.mechanisms.SecureNoise.draw_bernoulli`).
    """
    c = clipped_proportion(bits, bounds=bounds)
    source = as_noise_source(noise, rng=as_rng(rng))
    return _squeeze(source.draw_bernoulli(np.broadcast_to(c, (_runs(runs),) + c.shape)), runs)


def product_bernoulli_sampler_rho(
    n: int, d: int, bounds: tuple[float, float] = BIAS_BOUNDS
) -> float:
    r"""ρ of the product sampler on n records of d bits: :math:`\rho = d\varepsilon^2/2`, with
    ε of :func:`bernoulli_sampler_epsilon` — :math:`9d/(2n^2)` by default.

    NeurIPS 2021, proof of Thm. 6.4: each coordinate is ε-DP, hence :math:`\varepsilon^2/2`-zCDP
    (Bun & Steinke 2016, Prop. 1.4), and d of them compose.
    """
    return positive_int("d", d) * bernoulli_sampler_epsilon(n, bounds) ** 2 / 2


def product_bernoulli_min_n(rho: float, d: int, bounds: tuple[float, float] = BIAS_BOUNDS) -> int:
    r"""Fewest records for which the product sampler is ρ-zCDP:
    :math:`n \ge \sqrt{d/(2\rho)}/\min(a, 1-b)` — :math:`3\sqrt{d/(2\rho)}` by default.
    """
    rho = positive_number("rho", rho)
    low, high = _check_bounds(bounds)
    n = math.ceil(math.sqrt(positive_int("d", d) / (2 * rho)) / min(low, 1 - high))
    return n + (product_bernoulli_sampler_rho(n, d, bounds) > rho)  # guard against rounding


def product_bernoulli_sample(
    data: np.ndarray,
    *,
    bounds: tuple[float, float] = BIAS_BOUNDS,
    runs: int | None = None,
    rng: np.random.Generator | int | None = None,
    noise: NoiseKind | NoiseSource = "simulation",
) -> np.ndarray:
    r"""The product sampler for bounded biases (NeurIPS 2021, Thm. 6.4).

    For each of the d columns of ``data`` (n records × d bits) draw a bit with probability the
    column's clipped proportion :math:`c_j` (:func:`clipped_proportion`), independently:
    output :math:`\sim \prod_j \mathrm{Bernoulli}(c_j)`. It is :math:`9d/(2n^2)`-zCDP under
    replace-one neighbours with the default bounds (:func:`product_bernoulli_sampler_rho`);
    Thm. 6.4 takes :math:`n \ge 3\sqrt{d/(2\rho)}` (:func:`product_bernoulli_min_n`), plus
    enough records for accuracy (see :func:`bernoulli_sample`).

    Returns int8 bits of shape ``(runs, d)`` (``runs=None`` drops the first axis); every run is a
    separate release. The bits are drawn by ``noise`` (as in :func:`bernoulli_sample`).
    """
    c = clipped_proportion(_check_bits(data, "data", ndim=2), axis=0, bounds=bounds)
    source = as_noise_source(noise, rng=as_rng(rng))
    return _squeeze(source.draw_bernoulli(np.broadcast_to(c, (_runs(runs), c.size))), runs)
