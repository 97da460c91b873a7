"""GVDP's private stage: modified CoinPress on the BLB points and post-processing.

Covington et al., Alg. 3–4 (CoinPress on the k variance vectors, then on the k estimates), Thm.
2.9–2.12 (precision weighting, the conservative variance bound and the interval), with the
deviations from the paper listed in :mod:`dpcore.analyses.gvdp`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri

from dpcore.analyses.gvdp.bounds import GVDPBounds
from dpcore.analyses.gvdp.estimator import (
    RunParameters,
)
from dpcore.foundations.mechanisms import NoiseSource

__all__ = [
    "psd_projection",
    "step_noises",
    "whitened_radius",
]


def psd_projection(matrix: np.ndarray) -> np.ndarray:
    r"""Nearest symmetric PSD matrix in Frobenius norm: :math:`V\max(\Lambda, 0)V^\top`.

    Negative eigenvalues are clipped at 0 (Higham 1988). Taking :math:`|\lambda|` instead, as a
    public CoinPress implementation does, turns a large negative eigenvalue into a large positive
    one. Works on stacks (..., d, d); the input is symmetrised first.
    """
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim < 2 or matrix.shape[-1] != matrix.shape[-2]:
        raise ValueError(f"`matrix` must be square (..., d, d), got shape {matrix.shape}")
    values, vectors = np.linalg.eigh((matrix + np.swapaxes(matrix, -1, -2)) / 2)
    return (vectors * np.maximum(values, 0.0)[..., None, :]) @ np.swapaxes(vectors, -1, -2)


def readonly_array(arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr, dtype=float)
    arr.setflags(write=False)
    return arr


def tail_radius(d: int, beta: float) -> float:
    r""":math:`\gamma` with :math:`P(\|R\|_2 > \gamma) \le \beta` for every R with N(0, ≤ 1)
    coordinates: :math:`\sqrt d\,\Phi^{-1}(1 - \beta/(2d))` (union bound over coordinates; used
    instead of Fact C.5, which needs Cov(R) ⪯ I, not implied by a diagonal bound)."""
    return math.sqrt(d) * float(-ndtri(beta / (2 * d)))


def whitened_radius(radius: float, half_widths: np.ndarray | None, scale: np.ndarray) -> np.ndarray:
    r"""The radius of a ball, in whitened coordinates :math:`y = S^{-1}x`, that holds the
    parameter: Alg. 3 line 4's :math:`r_0\max\operatorname{diag}(S^{-1}) = r_0/\min_j s_j`,
    or, when the parameter is known to lie in a box :math:`|\theta_j - c_j| \le h_j`, the
    smaller :math:`\|h/s\|_2`, the radius of the ball around the whitened box (shape
    (...,) for ``scale`` (..., d)).

    The paper's rule bounds the image of the ball :math:`B_2(c, r_0)` by its longest axis,
    :math:`r_0/\min_j s_j`: with coefficients on different scales (an OLS intercept in hours,
    a slope per year of age) or few rows (small :math:`s_j = \sqrt{k\tilde\Sigma_{jj}}`) that
    is the widest coordinate's range over the narrowest one's scale, and the first steps'
    noise, proportional to the radius, was thousands of times the estimate's standard error
    (issue 42). Both balls contain the whitened parameter whenever the public bounds hold, so
    the privacy and validity arguments of Alg. 3–4 are unchanged; the box is a public input.
    """
    paper = radius / np.min(scale, axis=-1)
    if half_widths is None:
        return np.asarray(paper)
    return np.minimum(paper, np.linalg.norm(half_widths / scale, axis=-1))


def _coinpress(
    points: np.ndarray,
    center: np.ndarray,
    radius: float,
    scale: np.ndarray,
    rho_steps: tuple[float, ...],
    beta: float,
    noise: NoiseSource,
    half_widths: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Alg. 3 (MVMRec) with a diagonal public scale :math:`S = \operatorname{diag}(s)`.

    ``points`` (..., k, d), ``scale`` (..., d). Returns the t iterates :math:`S\tilde\mu_m` and
    their noise variances :math:`\sigma_m^2 s_j^2` (Alg. 3 lines 10–11), each (t, ..., d). Each
    step has failure probability β/t, half for :math:`\gamma_1` (per point, β/(2tk)) and half for
    :math:`\gamma_2` (Alg. 4 lines 2–5). No empirical-mean centring (module docstring). The
    starting radius is :func:`whitened_radius` (the box's, when ``half_widths`` are given).
    """
    k, d = points.shape[-2:]
    beta_s = beta / (2 * len(rho_steps))
    gamma1, gamma2 = tail_radius(d, beta_s / k), tail_radius(d, beta_s)
    whitened = points / scale[..., None, :]
    centre = np.broadcast_to(center / scale, scale.shape)
    ball = whitened_radius(radius, half_widths, scale)  # Alg. 3 line 4, or the box's
    iterates, variances = [], []
    for rho_m in rho_steps:
        centre, ball, sigma = coinpress_step(whitened, centre, ball, gamma1, gamma2, rho_m, noise)
        iterates.append(centre * scale)
        variances.append((sigma[..., None] * scale) ** 2)
    return np.stack(iterates), np.stack(variances)


def coinpress_step(
    whitened: np.ndarray,
    centre: np.ndarray,
    ball: np.ndarray,
    gamma1: float,
    gamma2: float,
    rho_m: float,
    noise: NoiseSource,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Alg. 4 (MVM): project onto :math:`B_2(\tilde\mu, r + \gamma_1)`, add
    :math:`N(0, \sigma^2 I)` with :math:`\sigma = 2(r+\gamma_1)/(k\sqrt{2\rho_m})`, and return the
    new centre, radius :math:`\gamma_2\sqrt{1/k + \sigma^2}` and σ."""
    k = whitened.shape[-2]
    clip = ball + gamma1
    offsets = whitened - centre[..., None, :]
    norms = np.linalg.norm(offsets, axis=-1)
    outside = norms > clip[..., None]  # pulled onto the ball's surface; the rest stay as they are
    shrink = np.divide(clip[..., None], norms, out=np.ones_like(norms), where=outside)
    mean = centre + (offsets * shrink[..., None]).mean(axis=-2)
    sigma, next_ball = step_noise(ball, gamma1, gamma2, k, rho_m)
    noisy = noise.add_gaussian(mean, np.broadcast_to(sigma[..., None], mean.shape))
    return noisy, next_ball, sigma


def step_noise(
    ball: np.ndarray, gamma1: float, gamma2: float, k: int, rho_m: float
) -> tuple[np.ndarray, np.ndarray]:
    r"""Alg. 4 (MVM), lines 6–8: a step's noise scale :math:`\sigma = 2(r + \gamma_1)/(k
    \sqrt{2\rho_m})` and the next radius :math:`\gamma_2\sqrt{1/k + \sigma^2}`. Neither reads the
    points: the noise of every step follows from the public starting radius."""
    sigma = 2 * (ball + gamma1) / (k * math.sqrt(2 * rho_m))
    return sigma, gamma2 * np.sqrt(1 / k + sigma**2)


def step_noises(
    ball: np.ndarray, d: int, k: int, rho_steps: tuple[float, ...], beta: float
) -> np.ndarray:
    """The noise scales σ_m of every step of :func:`_coinpress` from the whitened starting
    radius ``ball`` (any shape), shape (t, ...): the same tail radii, the same recurrence
    (:func:`step_noise`)."""
    beta_s = beta / (2 * len(rho_steps))
    gamma1, gamma2 = tail_radius(d, beta_s / k), tail_radius(d, beta_s)
    sigmas = []
    for rho_m in rho_steps:
        sigma, ball = step_noise(np.asarray(ball, dtype=float), gamma1, gamma2, k, rho_m)
        sigmas.append(sigma)
    return np.stack(sigmas)


def precision_weighted(
    iterates: np.ndarray, variances: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r"""Thm. 2.9 / 2.11 with diagonal covariances: :math:`\sum_m \tau_m/\sigma_m^2 \big/ \sum_m
    1/\sigma_m^2` and its variance :math:`1/\sum_m \sigma_m^{-2}` (over the leading axis)."""
    precision = 1 / variances
    total = precision.sum(axis=0)
    return (precision * iterates).sum(axis=0) / total, 1 / total


def variance_upper_bound(iterates: np.ndarray, variances: np.ndarray, beta_ub: float) -> np.ndarray:
    r"""Cor. D.1 (Thm. 2.10, diagonal case), then :func:`psd_projection`.

    :math:`\tilde\Sigma_{jj} = \tilde S_j + c_j`, :math:`c_j = b_j\,\Phi^{-1}(1 - \beta^{ub}/d)`,
    where :math:`\tilde S` is the precision-weighted variance iterate and :math:`b_j^2` its
    variance; then negative entries of the diagonal matrix are clipped at 0.
    """
    combined, spread = precision_weighted(iterates, variances)
    d = combined.shape[-1]
    upper = combined - np.sqrt(spread) * ndtri(beta_ub / d)
    diagonal = upper[..., :, None] * np.eye(d)
    return np.diagonal(psd_projection(diagonal), axis1=-2, axis2=-1).copy()


def variance_bound(
    iterates: np.ndarray, variances: np.ndarray, beta_ub: float, high: np.ndarray
) -> np.ndarray:
    r"""The variance bound :math:`\tilde\Sigma_{jj}` GVDP uses, for both the whitening of the mean
    step (Alg. 3 line 2, App. C.6) and the interval (Thm. 2.12): never below Cor. D.1's.

    With :math:`\tilde S_j` the precision-weighted variance iterate and :math:`c_j = b_j
    \Phi^{-1}(1 - \beta^{ub}/d)` (see :func:`variance_upper_bound`),

    .. math:: \tilde\Sigma_{jj} = \max(\tilde S_j, 0) + c_j \text{ if } \tilde S_j + c_j > 0,
              \qquad \tilde\Sigma_{jj} = v_j \text{ otherwise.}

    - **Floor** :math:`\max(\tilde S_j, 0)`: the BLB variance is ≥ 0, so a negative estimate is
      clipped before the margin is added. The result is ≥ Cor. D.1's :math:`\tilde S_j + c_j`,
      so it bounds :math:`\hat V_j^{BLB}` whenever that does (Thm. 2.10), and it is ≥
      :math:`c_j > 0`. Without it a bound near 0, whose :math:`s_j = \sqrt{k\tilde\Sigma_{jj}}`
      is near 0, inflates the whitened starting radius :math:`r_0 \max_j s_j^{-1}` (Alg. 3
      line 4), hence the noise on *every* coordinate (by ~10⁵ when the bound hit 0).
    - **Fallback** to the public :math:`v_j` (``bounds.variance_high``): Cor. D.1's bound ≤ 0 can
      only happen in its failure event (a positive variance is not bounded by 0), which the
      release itself reveals. :math:`v_j` bounds :math:`\operatorname{Var}(\hat\theta_j)` by
      assumption, whatever the noise, so that coordinate keeps a valid scale and interval, at the
      cost of a wider interval on it alone.

    :math:`c_j` depends only on public inputs (the CoinPress noise scales do not depend on the
    data) and :math:`\tilde S_j` is the ρ_Σ-zCDP release, so this is post-processing: the mean
    step's whitening is still fixed before it touches the data (Thm. C.2) and the accounting is
    unchanged.
    """
    paper = variance_upper_bound(iterates, variances, beta_ub)
    combined, spread = precision_weighted(iterates, variances)
    margin = -np.sqrt(spread) * ndtri(beta_ub / combined.shape[-1])
    return np.where(paper > 0, np.maximum(combined, 0.0) + margin, high)


def release_estimates(
    theta_blb: np.ndarray,
    var_blb: np.ndarray,
    bounds: GVDPBounds,
    plan: RunParameters,
    noise: NoiseSource,
) -> dict[str, np.ndarray]:
    """Alg. 1 lines 4–8 for every leading batch index of (..., k, d) BLB summaries."""
    k, d = theta_blb.shape[-2:]
    batch = theta_blb.shape[:-2] + (d,)
    high = bounds.variance_high
    tau = np.broadcast_to(bounds.spread(plan.resamples, plan.n // plan.k), batch)
    v_iter, v_var = _coinpress(
        var_blb,
        high / 2,
        float(np.linalg.norm(high)) / 2,
        tau,
        plan.rho.variance_steps,
        plan.beta_part,
        noise,
        high / 2,  # the box [0, v]
    )
    sampling = variance_bound(v_iter, v_var, plan.beta_part, high)
    # App. C.6: Cov(θ̂ᵢᴮᴸᴮ) ≈ kΣ for √n-consistent estimators, so S = (kΣ̃)^{1/2} (Alg. 3 line 2).
    scale = np.sqrt(k * sampling)
    m_iter, m_var = _coinpress(
        theta_blb, bounds.center, bounds.radius, scale, plan.rho.mean_steps, plan.beta_part, noise,
        bounds.half_widths,
    )  # fmt: skip
    estimate, noise_variance = precision_weighted(m_iter, m_var)
    variance = sampling + noise_variance
    half = ndtri(0.5 + plan.level / 2) * np.sqrt(variance)
    out = {
        "estimate": estimate,
        "low": estimate - half,
        "high": estimate + half,
        "variance": variance,
        "sampling_variance": sampling,
        "noise_variance": noise_variance,
        "mean_iterates": m_iter,
        "mean_iterate_variances": m_var,
        "variance_iterates": v_iter,
        "variance_iterate_variances": v_var,
    }
    return {key: readonly_array(value) for key, value in out.items()}
