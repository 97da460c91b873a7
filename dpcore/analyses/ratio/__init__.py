r"""Ratio of two (weighted) sums with differentially private confidence intervals, per group.

Miao & Li, *Privacy-Preserving Inference on the Ratio of Two Gaussians Using Sums* (JDS 2022),
"the paper" below. The target is the calibration ratio :math:`r = \mu_s/\mu_y`, estimated by
:math:`\hat r = \sum w s / \sum w y` (§2.1; 1 means the scores s add up to the labels y). For
every group :math:`G_g` the target is

.. math:: r_g = \frac{\sum_{i \in G_g} w_i s_i}{\sum_{i \in G_g} w_i y_i}.

Each group releases its own noisy sums (§2.3.1, 5 sums unweighted / 6 weighted for binary y) and
gets its own interval (§2.4). The modules, from lowest level up:

- :mod:`.analysis` — the ratio as an analysis (:data:`RATIO`): settings, checks, budget, plan,
  simulation study;
- :mod:`.sums` — the sums, their public bounds (:class:`RatioBounds`) and :func:`ratio_sums`, the
  only pass over raw rows;
- :mod:`.noise` — :func:`release_ratio_sums` adds noise through a
  :class:`~dpcore.foundations.mechanisms.NoiseSource` (numpy for previews, OpenDP for releases);
- :mod:`.intervals` — a confidence interval from a release (post-processing, no budget) and the
  z-test for two groups (:func:`compare_ratios`);
- :mod:`.study` — the paper's simulation (§3), vectorized over replicates, beside its Table 1;
- :mod:`.groups` — every group's clipped sums in one vectorized pass (the analysis' sufficient
  statistics) and a within-group bootstrap of the rows;
- :mod:`.preview` — one release of every group (:func:`estimate_ratios`), the global ratio
  recombined from the noisy group sums (:func:`recombine`), and coverage, width and interval
  score over simulated releases (:func:`simulate_ratio_intervals`);
- :mod:`.budget` — the exact privacy cost of a release and how a ledger budget (ε, (ε, δ) or ρ)
  maps to the estimator's arguments;
- :mod:`.plan` — :class:`RatioPlan`, the release committed on the Release page;
- :mod:`.accuracy` — the planner's error model of every published ratio as a function of the
  budget (the delta method on the noisy sums) and its check by simulated releases.

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
  (:meth:`~dpcore.foundations.accounting.ZCDP.to_approx_dp`) fits in (ε, δ), split evenly, and each sum gets
  :math:`\sigma_i = \Delta_i/\sqrt{2\rho/m}`.

Privacy accounting (stated on screen too):

- **Groups are disjoint**, so the group releases compose in parallel: the cost of all groups is
  the cost of one group's release.
- **The global ratio is post-processing.** Each noisy group sum is a DP output; their total over
  the groups is a function of DP outputs only, so it costs nothing extra. Its noise variance is
  the sum of the groups' (k σ² for k groups), which is what its interval uses.
- **The ledger is charged in ρ-zCDP.** A Gaussian with standard deviation σ added to a sum of L2
  sensitivity Δ is :math:`\Delta^2/(2\sigma^2)`-zCDP whatever rule chose σ (Bun & Steinke 2016,
  Prop. 1.6), so a Gaussian release costs exactly :math:`\rho = \sum_i \Delta_i^2/(2\sigma_i^2)`
  over the released sums i — whether σ came from the paper's eq. 5 with basic composition, from
  Balle & Wang's analytic calibration, or from zCDP. The (ε, δ) guarantee the user asked for
  holds as well; it is not what the ledger adds up. A Laplace release costs pure ε-DP (basic
  composition of ε/m per sum), which the ledger converts to ρ = ε²/2.
"""

# Each module names its public API in `__all__`; the package re-exports exactly those names.
from dpcore.analyses.ratio import (
    accuracy,
    analysis,
    budget,
    groups,
    intervals,
    noise,
    plan,
    preview,
    study,
    sums,
)
from dpcore.analyses.ratio.accuracy import *
from dpcore.analyses.ratio.analysis import *
from dpcore.analyses.ratio.budget import *
from dpcore.analyses.ratio.groups import *
from dpcore.analyses.ratio.intervals import *
from dpcore.analyses.ratio.noise import *
from dpcore.analyses.ratio.plan import *
from dpcore.analyses.ratio.preview import *
from dpcore.analyses.ratio.study import *
from dpcore.analyses.ratio.sums import *

__all__ = [
    *analysis.__all__,
    *sums.__all__,
    *noise.__all__,
    *intervals.__all__,
    *study.__all__,
    *groups.__all__,
    *preview.__all__,
    *budget.__all__,
    *plan.__all__,
    *accuracy.__all__,
]
