""""""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtr

from dpcore.foundations.mechanisms import gaussian_sigma, laplace_scale


@dataclass(frozen=True)
class NeighbourNoise:
    r"""Output densities of the Laplace and Gaussian mechanisms on two neighbouring datasets.

    A statistic is :math:`f(D) = c` on dataset D and :math:`f(D') = c + \Delta` on its neighbour
    D′ (one more person; Δ is the sensitivity). ``frame`` has one row per output x and mechanism:
    ``x``, ``mechanism`` (``"Laplace"``/``"Gaussian"``), ``p_d``, ``p_d_prime`` and
    ``ratio`` = p(x | D) / p(x | D′).
    """

    epsilon: float
    delta: float
    sensitivity: float
    centre: float
    laplace_b: float
    gaussian_sigma: float
    # Gaussian: outputs below ``low_cut`` are more than e^ε times likelier under D than under D′,
    # outputs above ``high_cut`` more than e^ε times likelier under D′.
    low_cut: float
    high_cut: float
    # P[x < low_cut | D]: the chance of an output whose ratio exceeds e^ε (0 for Laplace).
    tail_probability: float
    frame: pd.DataFrame


def neighbour_noise(
    epsilon: float,
    delta: float,
    *,
    sensitivity: float = 1.0,
    centre: float = 100.0,
    points: int = 801,
) -> NeighbourNoise:
    r"""Densities and their ratio for Laplace (ε-DP) and Gaussian ((ε, δ)-DP) noise.

    Laplace: :math:`p(x \mid D) = \frac{1}{2b}e^{-|x - f(D)|/b}` with :math:`b = \Delta/\varepsilon`
    (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014, Thm. 3.6), so

    .. math:: \frac{p(x \mid D)}{p(x \mid D')} = e^{(|x - f(D')| - |x - f(D)|)/b}
              \in [e^{-\varepsilon}, e^{\varepsilon}]

    for every x, with the bounds reached outside [f(D), f(D′)].

    Gaussian: σ is the analytic Gaussian mechanism's (Balle & Wang 2018, Thm. 8), and the log
    ratio :math:`\Delta(\Delta/2 - (x - f(D)))/\sigma^2` is unbounded; it exceeds ε for
    :math:`x < f(D) + \Delta/2 - \varepsilon\sigma^2/\Delta`, an event of probability
    :math:`\Phi(\Delta/(2\sigma) - \varepsilon\sigma/\Delta)` under D (the first term of Balle &
    Wang's Thm. 8, which δ accounts for).
    """
    b = laplace_scale(sensitivity, epsilon)
    sigma = gaussian_sigma(sensitivity, epsilon, delta, method="analytic")
    other = centre + sensitivity
    shift = epsilon * sigma**2 / sensitivity
    midpoint = centre + sensitivity / 2
    # Wide enough for both densities and for where the Gaussian's ratio leaves [e^−ε, e^ε].
    half_width = max(4.5 * max(b, sigma), 2.5 * sensitivity, 1.25 * shift)
    x = np.linspace(centre - half_width, other + half_width, points)
    # Laplace, in log space so that the ratio is exact even where the densities underflow.
    lap_log_d = -np.abs(x - centre) / b - math.log(2 * b)
    lap_log_d2 = -np.abs(x - other) / b - math.log(2 * b)
    norm = -0.5 * math.log(2 * math.pi) - math.log(sigma)
    gau_log_d = norm - (x - centre) ** 2 / (2 * sigma**2)
    gau_log_d2 = norm - (x - other) ** 2 / (2 * sigma**2)
    frame = pd.concat(
        [
            pd.DataFrame(
                {
                    "x": x,
                    "mechanism": name,
                    "p_d": np.exp(log_d),
                    "p_d_prime": np.exp(log_d2),
                    "ratio": np.exp(log_d - log_d2),
                }
            )
            for name, log_d, log_d2 in (
                ("Laplace", lap_log_d, lap_log_d2),
                ("Gaussian", gau_log_d, gau_log_d2),
            )
        ],
        ignore_index=True,
    )
    return NeighbourNoise(
        epsilon=float(epsilon),
        delta=float(delta),
        sensitivity=float(sensitivity),
        centre=float(centre),
        laplace_b=float(b),
        gaussian_sigma=float(sigma),
        low_cut=float(midpoint - shift),
        high_cut=float(midpoint + shift),
        tail_probability=float(ndtr(sensitivity / (2 * sigma) - epsilon * sigma / sensitivity)),
        frame=frame,
    )
