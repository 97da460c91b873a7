r"""GVDP's box found privately (issue 39, item 2): a small private pass over a bag of little
bootstraps finds each coefficient's box and spread bound, so that a regression on data whose
coefficients nobody can guess publishes informative intervals instead of withholding them.

The pass (sample and aggregate, Nissim, Raskhodnikova & Smith 2007; Smith 2011): a bag of
little bootstraps of its own (:func:`~dpcore.analyses.gvdp.blb.run_blb`, k disjoint subsets,
drawn apart from the run's) gives k subset estimates :math:`\hat\theta_i` and k variance
estimates :math:`\hat V_i` (at the full size n). One person is in one subset, so replacing them
changes one estimate and one variance: the rank scores of a quantile over the k values move by
at most 1 (k is public, as n is in GVDP, paper §2.2). For each coefficient j, with a share of
ρ each (sequential composition, :func:`~dpcore.foundations.private_bounds.private_quantile`,
the exponential mechanism under zCDP):

- the median :math:`m_j` of the :math:`\hat\theta_{ij}`, searched over the public grid of the
  typed (or generic) box :math:`[\ell_j, h_j]`;
- the median :math:`q_j` of the standard errors :math:`\sqrt{\hat V_{ij}}`, searched over
  :math:`(0, h_j - \ell_j]`. (A median, not a high percentile: with k of a few hundred values a
  high percentile's target sits few ranks from the top, and every candidate above the data
  scores alike, so the selection would land far out; the median's far candidates score k/2.)

Then the box is :math:`m_j \pm c\,q_j\sqrt{k}` within :math:`[\ell_j, h_j]` (a subset estimate
on n/k rows spreads :math:`\sqrt k` times more than the full one, so the box spans c of its
standard deviations around their median; c = :data:`BOX_FACTOR`) and the per-row spread bound
:math:`s_j = 3 q_j\sqrt n` (the variance bound :math:`v_j = s_j^2/n = 9q_j^2`: nine times the
subsets' typical variance estimate, :data:`SPREAD_FACTOR`). Both are post-processing of the DP
quantiles. GVDP then runs with the rest of ρ inside that box; the box holds θ whenever the
median lands within c subset deviations of it, and a release refuses nothing it would not
refuse with a typed box of that size.

Pure numpy; never imports streamlit or plotly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpcore.analyses.gvdp.blb import Bag
from dpcore.analyses.gvdp.model import GvdpBoundsSpec
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.mechanisms import NoiseSource
from dpcore.foundations.private_bounds import GridCounts, candidate_grid, private_quantile
from dpcore.foundations.validation import open_unit_interval

__all__ = ["BOX_FACTOR", "BOX_FRACTION", "PrivateBox"]

BOX_FRACTION = 0.2
"""The share of ρ the pass takes by default."""
BOX_FACTOR = 8.0
"""c: the box's half-width in standard deviations of a subset estimate."""
DECADES = 12
"""How deep the grids go below the search range's magnitude."""
SPREAD_FACTOR = 3.0
"""The spread bound over the subsets' median standard error (its square bounds the variance)."""


@dataclass(frozen=True)
class PrivateBox:
    """How a GVDP release finds its box: ``fraction`` of ρ, within the typed search box."""

    fraction: float = BOX_FRACTION

    def __post_init__(self) -> None:
        open_unit_interval("fraction", self.fraction)

    def rest(self, rho: float) -> float:
        """The ρ the GVDP run keeps."""
        return rho * (1 - self.fraction)

    def find(self, bag: Bag, search: GvdpBoundsSpec, rho: float, *, noise: NoiseSource
             ) -> GvdpBoundsSpec:  # fmt: skip
        """The box (mode ``"box"``) found from ``bag`` within ``search`` (a box), at
        ``fraction`` × ``rho`` split over 2d quantiles (module doc)."""
        if search.mode != "box":
            raise ValueError("the box is found within a typed box (its search range)")
        each = ZCDP(rho * self.fraction / (2 * bag.d))
        low, high, spread = [], [], []
        for j, (lo, hi) in enumerate(zip(search.low, search.high, strict=True)):
            median = _quantile(bag.estimates[:, j], 0.5, (lo, hi), each, noise)
            errors = np.sqrt(np.maximum(bag.variances[:, j], 0.0))
            error = _quantile(errors, 0.5, (0.0, hi - lo), each, noise)
            error = max(error, (hi - lo) * 1e-9)  # a zero draw would make an empty box
            half = BOX_FACTOR * error * math.sqrt(bag.k)
            low.append(max(lo, median - half))
            high.append(min(hi, median + half))
            if not low[-1] < high[-1]:
                low[-1], high[-1] = lo, hi
            spread.append(SPREAD_FACTOR * error * math.sqrt(bag.n))
        return GvdpBoundsSpec("box", search.coefficients, spread=tuple(spread), low=tuple(low),
                              high=tuple(high))  # fmt: skip

    def to_dict(self, rho: float) -> dict:
        return {
            "source": "private",
            "method": "sample and aggregate: per coefficient, the medians of the subset "
            "estimates and of their standard errors q, each by private selection over a public "
            f"grid; box = median ± {BOX_FACTOR:g}·q·√k, spread = {SPREAD_FACTOR:g}·q·√n",
            "fraction": self.fraction,
            "cost": {"kind": "zcdp", "rho": rho * self.fraction},
        }

    def describe(self, rho: float) -> str:
        return (
            f"found privately: {self.fraction:.0%} of ρ (ρ = {rho * self.fraction:.4g}) finds each "
            "coefficient's box and spread from a bag of little bootstraps of its own (the "
            "medians of the subset estimates and of their standard errors, by private "
            f"selection), within the typed box; GVDP runs at ρ = {self.rest(rho):.4g}"
        )


def _quantile(values: np.ndarray, alpha: float, search: tuple[float, float], budget: ZCDP,
              noise: NoiseSource) -> float:  # fmt: skip
    """The α-quantile of ``values`` (one per subset, k public: sensitivity 1), privately, over
    a grid :data:`DECADES` deep (a standard error may be a millionth of its coefficient's
    range and more)."""
    grid = candidate_grid(*search, DECADES)
    counts = GridCounts.from_sorted(np.sort(values), [0, values.size], grid)
    return float(private_quantile(counts, alpha, budget, noise=noise, sizes_public=True)[0])
