r"""GVDP: unbiased private estimates with valid confidence intervals for general estimators.

Covington, He, Honaker & Kamath, *Unbiased Statistical Estimation and Valid Confidence Intervals
Under Differential Privacy* (the "paper" below), Alg. 1, in the diagonal (per-coordinate interval)
case that the paper's experiments use:

1. **Bag of little bootstraps** (Alg. 2). A random partition of the n rows into k subsets; on each
   subset, r multinomial resamples of total size n, drawn as integer row weights, so the estimator
   runs once per (subset, resample) as a batched weighted fit. Subset i yields
   :math:`\hat\theta_i^{BLB}` (mean of its r estimates) and :math:`\hat V_i^{BLB}` (their
   per-coordinate sample variance). One person is in one subset, so a change of one row moves one
   of the k points of each set (Sample & Aggregate).
2. **Modified CoinPress** (Alg. 3–4) on the k variance vectors (budget :math:`\rho_\Sigma`), then
   on the k estimates (budget :math:`\rho_\theta`), t steps each. Each step projects the whitened
   points onto an ℓ2 ball, releases their mean with Gaussian noise and shrinks the ball.
3. **Post-processing.** Precision weighting of the t iterates (Thm. 2.9, 2.11); a conservative
   per-coordinate variance :math:`\tilde\Sigma_{jj}` (Thm. 2.10, Cor. D.1) projected onto the PSD
   cone; intervals :math:`\tilde\theta_j \pm z_{1-\alpha/2}\sqrt{\tilde\Sigma_{jj} +
   (\Sigma_{\tilde\theta})_{jj}}` (Thm. 2.12, normal case; Cor. E.1).

With probability at least :math:`1 - \beta` over the privacy noise (β split in three, see
:func:`gvdp`), no point is clipped, :math:`\tilde\theta` is :math:`\hat\theta^{BLB}` plus known
Gaussian noise (unbiased) and the variance bound holds, so each interval covers with probability
≥ 1 − α under the paper's Assumption 2.4 (the BLB is a good approximation of the sampling law).

Where this package deviates from the paper's text (each is repeated where it applies):

- **No data-dependent centring.** Alg. 3 lines 5–6 and 10 subtract the points' *empirical* mean
  before CoinPress and add it back afterwards. That puts the exact (un-noised) mean into the
  release, which is not private; we whiten with :math:`S^{-1}` only (a public scaling), which is
  what the privacy proof of Thm. C.2 (invariance to a *data-independent* shift) covers.
- **Tail radii by a union bound over coordinates.** Fact C.5 (Laurent–Massart) needs the whitened
  points to have covariance :math:`\preceq I_d`. A diagonal :math:`\tilde\Sigma` only bounds the
  *variances* (OLS coefficients are correlated), so we use
  :math:`\gamma(\beta) = \sqrt d\,\Phi^{-1}(1 - \beta/(2d))`, valid for any correlation (and the
  exact Gaussian radius when d = 1). The paper's Fact C.5 also drops the factor 2 of
  Laurent–Massart's :math:`2\sqrt{d\log(1/\beta)}` term.
- **Radius of the whitened starting ball.** Alg. 3 line 4 scales :math:`r_0` by
  :math:`\max\operatorname{diag}(S^{-1}) = 1/\min_j s_j`, as here (a public implementation divides
  by :math:`\max_j s_j`, which can start from a ball that misses the mean).
- **Precision weighting of the estimates uses privacy variances only** (Thm. 2.11). Adding the
  sampling variance to every iterate (as a public implementation does) counts the one sampling
  error t times as independent and understates the variance.
- **PSD projection clips negative eigenvalues at 0** (:func:`psd_projection`), not :math:`|\lambda|`.
- **The variance bound is floored, and falls back to the public bound when it fails.** We use
  :math:`\max(\tilde S_j, 0) + c_j` instead of Cor. D.1's :math:`\tilde S_j + c_j` (never
  smaller, so valid whenever that is, and never below the public margin :math:`c_j > 0`), and
  the public :math:`v_j` (``bounds.variance_high``) for a coordinate whose Cor. D.1 bound is
  ≤ 0 (only possible in the failure event of Thm. 2.10). Both the whitening
  :math:`S = (k\tilde\Sigma)^{1/2}` (Alg. 3 line 2, App. C.6) and the interval (Thm. 2.12)
  use it; see :func:`.private.variance_bound`. A near-zero :math:`s_j` would otherwise inflate the
  starting radius :math:`r_0/\min_j s_j` (Alg. 3 line 4), hence the noise on every
  coordinate, by up to ~10⁵.

The modules:

- :mod:`.analysis` — GVDP as an analysis (:data:`GVDP`): settings, budget, plan, study;
- :mod:`.accuracy` — the planner's error model (each interval's half-width as a function of ρ)
  and its check by simulated releases;
- :mod:`.bounds` — the public bounds (:class:`GVDPBounds`) and the budget split;
- :mod:`.blb` — the bag of little bootstraps and the batched weighted fits (where the rows
  stay in files or Spark, the mean's and OLS's bag is drawn by an engine's passes instead:
  :mod:`dpcore.engines.blb`, :func:`dpcore.analyses.gvdp.aggregate.aggregate_gvdp`);
- :mod:`.private` — modified CoinPress and the post-processing (Thm. 2.9–2.12);
- :mod:`.estimator` — :func:`gvdp`, the non-private reference and coverage by simulation;
- :mod:`.model` — what to estimate on a table (:class:`GvdpModel`) and public bounds in the
  coefficients' units (:class:`GvdpBoundsSpec`);
- :mod:`.data` — the model's usable rows, grouped (the analysis' sufficient data);
- :mod:`.groups` — runs on the population and in every group, recombined with public shares;
- :mod:`.diagnostics` — coverage studies and the k diagnostic (curator views);
- :mod:`.plan` — :class:`GvdpPlan`, the release committed on the Release page;
- :mod:`.withhold` — when a group's release would say nothing: withheld, or the plan refused.

Privacy model (stated on screen too):

- **Bounds never come from the private data.** In "guess" mode the guess is typed by the analyst
  (an earlier study, a codebook, theory); the factor widens it. :meth:`GVDPBounds.overestimated`
  is called with that public guess, never with the data's own estimate. Only the synthetic
  coverage study, where the truth is known and public, builds bounds from the truth.
- **The number of rows is public** (paper §2.2), so k may depend on it: every group uses the
  same subset size :math:`b = \lfloor N/k \rfloor` and gets :math:`k_g = \max(1,
  \lfloor n_g/b \rfloor)` subsets; each variance bound is scaled to the group's own rows.
- **Groups are disjoint**, so per-group runs with the full ρ compose in parallel (cost ρ); the
  recombined estimate :math:`\sum_g w_g\tilde\theta_g` is post-processing of DP outputs.

Everything here is numpy; noise goes through a :class:`~dpcore.foundations.mechanisms.NoiseSource`, so a real
release uses OpenDP (:class:`~dpcore.foundations.mechanisms.SecureNoise`) and previews use numpy.
"""

# Each module names its public API in `__all__`; the package re-exports exactly those names.
from dpcore.analyses.gvdp import (
    accuracy,
    analysis,
    bounds,
    data,
    diagnostics,
    estimator,
    found_box,
    groups,
    model,
    plan,
    withhold,
)
from dpcore.analyses.gvdp.accuracy import *
from dpcore.analyses.gvdp.analysis import *
from dpcore.analyses.gvdp.bounds import *
from dpcore.analyses.gvdp.data import *
from dpcore.analyses.gvdp.diagnostics import *
from dpcore.analyses.gvdp.estimator import *
from dpcore.analyses.gvdp.found_box import *
from dpcore.analyses.gvdp.groups import *
from dpcore.analyses.gvdp.model import *
from dpcore.analyses.gvdp.plan import *
from dpcore.analyses.gvdp.withhold import *

__all__ = [
    *accuracy.__all__,
    *analysis.__all__,
    *bounds.__all__,
    *estimator.__all__,
    *found_box.__all__,
    *model.__all__,
    *data.__all__,
    *groups.__all__,
    *diagnostics.__all__,
    *plan.__all__,
    *withhold.__all__,
]
