r"""When a GVDP release of a group would say nothing: withhold it, or refuse the plan.

Two rules, both applied by :meth:`~dpcore.analyses.gvdp.GvdpPlan.run`:

1. **Too few subsets** (decided before any noise, from public quantities only):
   :func:`subsets_needed`. A group with :math:`k_g` below it is withheld, or, if the user chose
   so, the plan is refused before the commit.
2. **An interval wider than the public range** (decided after the noise, from the DP interval
   only): :func:`wider_than_range`. Post-processing of the DP output, so it costs no privacy.

Privacy. Rule 1 reads :math:`k_g = \max(1, \lfloor n_g/b\rfloor)`, ρ, β, t, the estimate's share
of ρ and the number of coefficients. GVDP treats the number of rows as public (paper §2.2 and
App. G.4: "we assume that n is public knowledge"; :class:`~dpcore.analyses.gvdp.GvdpPlan` says
so in every release), so the groups' exact sizes — and the set of withheld groups — are public
inputs of the release, as the subsets per group already were. Rule 2 reads only the released
interval and the public bounds.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from dpcore.analyses.gvdp.bounds import RhoSpent
from dpcore.analyses.gvdp.private import tail_radius
from dpcore.foundations.choices import Choices

__all__ = [
    "UNINFORMATIVE",
    "Uninformative",
    "subsets_needed",
    "too_few_subsets",
    "wider_than_range",
]

Uninformative = Literal["withhold", "refuse"]

UNINFORMATIVE = Choices(
    Uninformative,
    {
        "withhold": "Withhold those groups and release the others",
        "refuse": "Refuse the whole release until every group has enough subsets",
    },
)
"""What to do with a group too small for an informative GVDP release (the user's choice)."""

_MAX_SUBSETS = 10**9


def subsets_needed(*, rho: float, mean_fraction: float, steps: int, beta: float, d: int) -> int:
    r"""The fewest BLB subsets k with which GVDP's private mean beats one subset's estimate.

    Paper Alg. 4 (MVM), line 7: each CoinPress step of the estimate adds Gaussian noise of scale
    :math:`\sigma_m = 2(r_m + \gamma_1)/(k\sqrt{2\rho_m})` to the mean of the k whitened subset
    estimates, whose spread is at most 1 (App. C.6: they are whitened by
    :math:`(k\tilde\Sigma)^{1/2}`, and :math:`\tilde\Sigma` bounds the sampling variance, Thm.
    2.10). Whatever the radius :math:`r_m \ge 0`, the last step's noise is at least
    :math:`2\gamma_1/(k\sqrt{2\rho_t})`, with :math:`\gamma_1 = \sqrt d\,\Phi^{-1}(1 -
    \beta_1/(2d))` the per-point tail radius at :math:`\beta_1 = \beta/(6tk)` (the split of
    :func:`~dpcore.analyses.gvdp.gvdp`). We say a group *needs* the smallest k with

    .. math:: \frac{2\gamma_1(k)}{k\sqrt{2\rho_t}} \le 1,

    i.e. the privacy noise of the aggregate is no larger than the sampling spread of a *single*
    subset's estimate. Below it, Sample & Aggregate gains nothing over one subset of
    :math:`n_g/k_g` rows, and the interval (sampling variance plus noise variance, Thm. 2.12)
    typically spans more than the public range: on the demo at ρ = 0.5, groups with 3–10 subsets
    gave half-widths of 90–490 hours per week. The paper states no minimum (App. G.4 only asks
    for k large and n/k large); this threshold is our choice, and it grows as ρ shrinks.

    Only public inputs: ρ, the estimate's share of it, t, β and d.
    """
    rho_last = RhoSpent.split(rho, mean_fraction, steps).mean_steps[-1]
    factor = math.sqrt(2 / rho_last)
    beta_point = beta / (6 * steps)  # β/3 per part, /(2t) per step, /k per point (Alg. 4)
    k = 1
    while k < _MAX_SUBSETS:
        needed = math.ceil(factor * tail_radius(d, beta_point / k))
        if needed <= k:
            return k
        k = needed  # γ₁ grows with k, so the smallest solution is reached from below
    return _MAX_SUBSETS


def too_few_subsets(subsets: int, needed: int) -> str:
    """The reason a group with ``subsets`` is withheld, or "" when it has enough."""
    if subsets >= needed:
        return ""
    return (
        f"withheld: {subsets} subsets, fewer than the {needed} this budget needs for an "
        "informative estimate"
    )


def wider_than_range(low: np.ndarray, high: np.ndarray, public_low: np.ndarray,
                     public_high: np.ndarray) -> list[str]:  # fmt: skip
    """Per coefficient, the reason its DP interval is withheld ("" when it is not): wider than
    the public range it is known to lie in, so it says nothing the bounds did not."""
    return [
        "withheld: its interval is wider than the public range" if hi - lo > p_hi - p_lo else ""
        for lo, hi, p_lo, p_hi in zip(low, high, public_low, public_high, strict=True)
    ]
