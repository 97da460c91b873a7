r"""The ratio's error model for the planner (:mod:`dpcore.planner.accuracy`), and its check by
simulation.

A release adds independent noise :math:`e_s` to Σws and :math:`e_y` to Σwy of every group
(Miao & Li 2022, §2.3.1), so the published ratio is :math:`\hat r = (S + e_s)/(Y + e_y)` for the
exact sums S = Σws, Y = Σwy and ratio r = S/Y. The delta method — the paper's eq. (1) on the
sums, with the noise variances in place of the sampling ones as in its analytical correction
(§2.4.3, steps 3–4: independent noises add their variances and leave the covariance at 0) —
gives, to first order,

.. math:: \hat r - r \approx \frac{e_s - r\,e_y}{Y},\qquad
          \mathrm{Var}(\hat r - r) \approx \frac{\sigma_s^2}{Y^2} + \frac{S^2\sigma_y^2}{Y^4}.

Each noise scale is the release's (:func:`~dpcore.analyses.ratio.release_cost`) at a budget of
scale 1 divided by the budget scale s:

========================================  =================  ====================================
Mechanism                                 Budget scale s     Error's law at s = 1
========================================  =================  ====================================
Laplace, ``b_i = Δ_i m/ε`` (appendix A)   ε                  Lap(b_s/Y) + Lap(r·b_y/Y), closed
                                                             form (:class:`LaplaceSumError`)
Classic Gaussian, eq. (5), ε/m < 1        ε                  N(0, σ_s²/Y² + r²σ_y²/Y²)
Gaussian with zCDP, σ_i = Δ_i/√(2ρ/m)     √ρ                 the same, with the zCDP σ_i
========================================  =================  ====================================

The ratio over all groups adds the k noisy group sums (:func:`recombine`): its noises are sums
of k independent group noises, Gaussian in closed form and Laplace by inverting its
characteristic function (:class:`~dpcore.planner.error_shapes.WeightedLaplaceSumError`).

Choices where the paper leaves room:

- **The target is on the noise**: the distance of a published ratio to the ratio of the same
  clipped rows, which is what the noise decides. The release's interval also covers the sampling
  error (§2.4), which no budget removes; the Compare page shows it.
- **Curator preview.** The error divides by Y and scales with r, both confidential: the model
  reads them, and every answer is labelled a curator preview (issue 17, "Honest inputs").
- **Exact law for the groups** (:class:`RatioErrorModel`). The first order holds when the noise
  on Y is small beside Y; at loose targets (small budgets) it is not, the ratio's error has
  heavier tails, and the first-order answer met its target less often than the level (demo by
  race × sex, 4,000 simulated releases: ±0.5 met 0.930 with Laplace, 0.923 with the Gaussian;
  ±1 met 0.873 and 0.854; ``benchmarks/bench_ratio_planner_coverage.py``). So each group's
  probability of meeting ±h is computed from the exact law of the noisy ratio instead: with
  u = e_s, v = e_y independent and Y + v > 0, :math:`|(S + u)/(Y + v) - r| \le h` iff
  :math:`u \in [L(v), U(v)] = [(r - h)v - hY, (r + h)v + hY]`, and the release also needs S + u > 0 (and
  the noisy Σw, Σw² positive) or it withholds the ratio, which counts as missing, as in the
  check. So

  .. math:: P(s) = \prod_i P(W_i + e_{w_i} > 0)\;
            E_v\big[1\{Y + v > 0\}\,(F_u(U(v)) - F_u(\max(L(v), -S)))\big],

  with F_u the CDF of the noise on Σws at scale s; the expectation is a mean over
  equal-probability quantiles of v (:data:`EXACT_NODES`), the same at every budget, so P is
  smooth in s. The needed scale is the smallest s with P(s) ≥ level (bisection in log s, from
  the first-order answer), and the error at a budget the smallest h with P ≥ level. The
  all-groups ratio divides by the whole label sum, where the first order holds; it keeps the
  first order. After the change the same table reads 0.942–0.949 at every target (the
  binomial band of 4,000 releases is 0.943–0.957; 20,000 releases at ±1 with the Gaussian
  give 0.950).
- **The analytic Gaussian calibration** (Balle & Wang 2018) finds σ numerically, not in a fixed
  proportion to 1/ε, so the planner does not cover it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

from dpcore.analyses.ratio.budget import release_arguments, release_cost
from dpcore.analyses.ratio.groups import GroupRatioSums
from dpcore.analyses.ratio.intervals import NO_VARIANCE, ratio_interval
from dpcore.analyses.ratio.noise import release_ratio_sums
from dpcore.analyses.ratio.preview import ALL_GROUPS, recombine
from dpcore.analyses.ratio.sums import MECHANISMS, Composition, Mechanism
from dpcore.foundations.accounting import ZCDP, Budget, PureDP
from dpcore.foundations.labels import list_labels
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.metrics import binomial_band
from dpcore.foundations.validation import as_rng, positive_int
from dpcore.planner.accuracy import AccuracyTarget, ErrorModel
from dpcore.planner.error_shapes import GaussianError, LaplaceSumError, WeightedLaplaceSumError

__all__ = ["UNPLANNED_MECHANISM", "RatioErrorModel", "ratio_check", "ratio_error_model"]

UNPLANNED_MECHANISM = (
    "The planner covers the ratio with Laplace noise or the classic Gaussian calibration. The "
    "analytic calibration (Balle & Wang 2018) finds its noise numerically, so its error has no "
    "closed form in the budget: choose another mechanism on the Estimator page to plan, or "
    "compare budgets on the Compare page."
)


def _unit_scales(
    sums: GroupRatioSums, mechanism: Mechanism, composition: Composition, delta: float
) -> dict[str, float]:
    """The noise scale (b or σ) of every released sum at a budget of scale 1: ε = 1, or ρ = 1
    with zCDP, read off the release's own calibration (:func:`release_cost`)."""
    zcdp = mechanism != "laplace" and composition == "zcdp"
    reference = ZCDP(1.0) if zcdp else PureDP(1.0)
    options = {"bounds": sums.bounds, "weighted": sums.w_column is not None,
               "binary_y": sums.binary_y}  # fmt: skip
    arguments = release_arguments(reference, mechanism=mechanism, composition=composition,
                                  delta=delta, **options)  # fmt: skip
    return release_cost(**options, **arguments)[2]


def _released_sums(sums: GroupRatioSums) -> int:
    """m, the number of sums a group releases (5 to 7, §2.3.1)."""
    return len(sums.sums.released)


def _all_groups_laplace(scale_s: float, scale_y: float, k: int, ratio: float, total_y: float):
    """The law of (Σ_g e_s,g − R Σ_g e_y,g)/Y over k groups: 2k weighted Laplace noises (a
    Laplace noise is symmetric, so −R weighs as |R|)."""
    weights = np.concatenate([np.full(k, scale_s), np.full(k, abs(ratio) * scale_y)]) / total_y
    return WeightedLaplaceSumError(weights)


def _check_denominators(sums: GroupRatioSums) -> None:
    empty = [label for label, y in zip(sums.labels, np.asarray(sums.sums.wy), strict=True)
             if y <= 0]  # fmt: skip
    if empty:
        raise ValueError(
            f"{list_labels(empty)} {'has' if len(empty) == 1 else 'have'} a label sum of 0: "
            "the ratio is undefined there, so no budget makes it accurate. To plan, merge or "
            "drop small groups on the Strata page, or group by other columns."
        )


def _assumptions(
    sums: GroupRatioSums, mechanism: Mechanism, composition: Composition, delta: float
) -> list[str]:
    m = _released_sums(sums)
    out = [
        "Each group's ratio by the exact law of (Σ score + noise) / (Σ label + noise), a "
        "ratio the release would withhold (a noisy sum not positive) counting as missing; the "
        "all-groups ratio to first order (the delta method, eq. (1) of Miao & Li 2022 with "
        "the noise variances of §2.4.3: (noise on Σ score − ratio × noise on Σ label) / "
        "Σ label).",
        f"{MECHANISMS[mechanism]} on each of the {m} sums a group releases, the budget split "
        "evenly over them"
        + (" with zCDP accounting." if mechanism != "laplace" and composition == "zcdp" else "."),
        "The target is on the noise: the distance to the ratio of the same rows. The release's "
        "interval also covers the sampling error, which no budget removes.",
        "The model divides by each group's exact Σ label and scales with its exact ratio, both "
        "confidential: its numbers are a curator preview.",
    ]
    if mechanism == "gaussian" and composition == "basic":
        out.append(
            f"The classic calibration (eq. 5) needs ε/{m} < 1 per sum, so it plans budgets "
            f"below ε = {m}; δ = {delta:.0e}."
        )
    if mechanism == "laplace":
        out.append(
            "The all-groups ratio's noise is a sum of Laplace noises, computed from its "
            "characteristic function (to within 1e-10 in probability)."
        )
    return out


EXACT_NODES = 1000
"""Equal-probability nodes of the label sum's noise over which a group's exact probability of
meeting a target is averaged (fewer with many groups: at most a million evaluations a step)."""
EXACT_EVALUATIONS = 1_000_000
SEARCH_STEPS = 30
"""Halvings of log s (or of h) in the exact searches: a step below 1e-8 of the bracket."""
MAX_DOUBLINGS = 60


@dataclass(frozen=True, eq=False)
class RatioErrorModel(ErrorModel):
    r"""The ratio's errors: every group's by the exact law of its published ratio, the all-groups
    ratio's to first order (module docstring, "Exact law").

    ``numerator`` and ``denominator`` are each group's exact S = Σws and Y = Σwy,
    ``unit_scales`` the noise scales of Σws and Σwy at budget scale 1, ``positive`` the other
    sums a release needs positive (exact values per group, unit noise scale), ``laplace``
    whether the noise is Laplace (else Gaussian).
    """

    numerator: np.ndarray | None = None
    denominator: np.ndarray | None = None
    unit_scales: tuple[float, float] = (1.0, 1.0)
    positive: tuple[tuple[np.ndarray, float], ...] = ()
    laplace: bool = False

    def _unit_cdf(self, x: np.ndarray) -> np.ndarray:
        if self.laplace:
            return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0)), 1 - 0.5 * np.exp(-np.abs(x)))
        return ndtr(x)

    def _nodes(self) -> np.ndarray:
        """The unit noise's quantiles at the midpoints of equal-probability bins."""
        count = max(200, min(EXACT_NODES, EXACT_EVALUATIONS // max(self.groups, 1)))
        p = (np.arange(count) + 0.5) / count
        if self.laplace:
            return -np.sign(p - 0.5) * np.log1p(-2 * np.abs(p - 0.5))
        return ndtri(p)

    def group_probability_within(self, scale: np.ndarray, half: np.ndarray) -> np.ndarray:
        r"""P(a group's published ratio lies within ±``half`` of its exact ratio) at budget
        scales ``scale`` (both one per group, broadcast): the module docstring's integral."""
        b_s, b_y = self.unit_scales
        s, y = self.numerator, self.denominator
        r = s / y
        v = self._nodes()[:, None] * b_y / scale  # the noise on Σwy at each node, (nodes, k)
        upper = (r + half) * v + half * y
        lower = np.maximum((r - half) * v - half * y, -s)
        inside = self._unit_cdf(upper * scale / b_s) - self._unit_cdf(lower * scale / b_s)
        p = np.where(y + v > 0, np.maximum(inside, 0.0), 0.0).mean(axis=0)
        for exact, unit in self.positive:
            p = p * (1 - self._unit_cdf(-exact * scale / unit))
        return p

    def needed_scales(self, target: AccuracyTarget) -> np.ndarray:
        """The first order's needed scales, each group's replaced by the smallest scale at
        which its exact probability of meeting ``target`` reaches the level."""
        needed = super().needed_scales(target)
        k, half = self.groups, self.target_half_widths(target)[: self.groups]
        start = needed[:k]
        low, high = start / 16, start.copy()
        for _ in range(MAX_DOUBLINGS):
            short = self.group_probability_within(high, half) < target.level
            if not short.any():
                break
            low, high = np.where(short, high, low), np.where(short, 2 * high, high)
        met_low = self.group_probability_within(low, half) >= target.level
        for _ in range(SEARCH_STEPS):
            mid = np.sqrt(low * high)
            met = self.group_probability_within(mid, half) >= target.level
            low, high = np.where(met, low, mid), np.where(met, mid, high)
        needed[:k] = np.where(met_low, low, high)
        return needed

    def half_widths_at(self, scale: float, target: AccuracyTarget) -> np.ndarray:
        """The first order's errors, each group's replaced by the smallest ±h its published
        ratio stays within with probability ``target.level`` (inf when the release withholds
        it more often than 1 − level)."""
        errors = super().half_widths_at(scale, target)
        k, scales = self.groups, np.full(self.groups, float(scale))
        low, high = np.zeros(k), 2 * errors[:k]
        for _ in range(MAX_DOUBLINGS):
            short = self.group_probability_within(scales, high) < target.level
            if not short.any():
                break
            high = np.where(short, 2 * high, high)
        never = self.group_probability_within(scales, high) < target.level
        for _ in range(SEARCH_STEPS):
            mid = (low + high) / 2
            met = self.group_probability_within(scales, mid) >= target.level
            low, high = np.where(met, low, mid), np.where(met, mid, high)
        errors[:k] = np.where(never, np.inf, high)
        return errors


TYPICAL_RATIO_TARGET = 0.05
"""The Plan page's first target for a ratio: ±0.05, five hundredths of a calibration ratio
near 1."""


def ratio_error_model(
    sums: GroupRatioSums,
    *,
    mechanism: Mechanism,
    composition: Composition = "basic",
    delta: float = 1e-6,
) -> RatioErrorModel:
    """The errors of a ratio release, every group's and the all-groups ratio's, as functions of
    the budget (module docstring). ``ValueError`` for the analytic Gaussian calibration and for
    a group whose label sum is 0."""
    if mechanism == "gaussian_analytic":
        raise ValueError(UNPLANNED_MECHANISM)
    _check_denominators(sums)
    unit = _unit_scales(sums, mechanism, composition, delta)
    scale_s, scale_y = unit["ws"], unit["wy"]
    total_s, total_y = np.asarray(sums.sums.ws, dtype=float), np.asarray(sums.sums.wy, dtype=float)
    ratio, k = total_s / total_y, sums.k
    overall = float(total_s.sum() / total_y.sum())
    numerator, denominator = scale_s / total_y, ratio * scale_y / total_y
    # The all-groups sums carry k group noises each: √k times a group's spread.
    all_numerator = np.sqrt(k) * scale_s / total_y.sum()
    all_denominator = np.sqrt(k) * overall * scale_y / total_y.sum()
    if mechanism == "laplace":
        groups = LaplaceSumError(numerator, denominator)
        everyone = _all_groups_laplace(scale_s, scale_y, k, overall, float(total_y.sum()))
    else:
        groups = GaussianError(np.hypot(numerator, denominator))
        everyone = GaussianError(np.array([np.hypot(all_numerator, all_denominator)]))
    zcdp = mechanism != "laplace" and composition == "zcdp"
    classic = mechanism == "gaussian" and not zcdp
    m = _released_sums(sums)
    # Σw (and Σw² when weighted) must come out positive too, or the release withholds the ratio.
    needed_positive = ("w", "ww") if sums.w_column is not None else ("w",)
    return RatioErrorModel(
        numerator=total_s,
        denominator=total_y,
        unit_scales=(scale_s, scale_y),
        positive=tuple(
            (np.asarray(sums.sums.value(name), dtype=float), unit[name]) for name in needed_positive
        ),
        laplace=mechanism == "laplace",
        labels=(*sums.labels, ALL_GROUPS),
        sizes=np.append(sums.rows, np.sum(sums.rows)),
        shapes=((groups, k), (everyone, 1)),
        unit="rho" if zcdp else "epsilon",
        groups=k,
        truth=np.append(ratio, overall),
        reads=("each group's exact Σ label and ratio",),
        assumptions=tuple(_assumptions(sums, mechanism, composition, delta)),
        scale_limit=float(m) if classic else np.inf,
        measured_in="units of the ratio",
        typical_half_width=TYPICAL_RATIO_TARGET,
        limit_reason=(
            f"the classic Gaussian calibration (eq. 5) runs only below ε = {m} (ε/{m} < 1 per "
            "sum), and this target needs more. Count the budget in ρ-zCDP on the Budget page "
            "(the ratio then uses zCDP accounting, which has no such limit), or choose Laplace "
            "noise on the Estimator page"
        ),
    )


def ratio_check(
    sums: GroupRatioSums,
    budget: Budget,
    target: AccuracyTarget,
    *,
    mechanism: Mechanism,
    composition: Composition = "basic",
    delta: float = 1e-6,
    replicates: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Simulate ``replicates`` releases at ``budget`` with the release's own noise
    (:func:`release_ratio_sums`, vectorised over replicates) and count how often each published
    ratio lies within the target of the exact ratio of its clipped rows. A ratio the release
    would withhold (a noisy sum it needs is not positive) counts as missing the target.

    Returns one row per estimate: ``estimate``, ``target``, ``met`` and the binomial band
    ``band_low``/``band_high`` of a calibrated ``target.level``, as the mean's check does.
    """
    replicates = positive_int("replicates", replicates)
    if target.include_bias:
        raise ValueError(
            "The ratio's planner sets the target on the noise: the clipped sums show no "
            "clipping bias. Untick the clipping bias."
        )
    model = ratio_error_model(sums, mechanism=mechanism, composition=composition, delta=delta)
    arguments = release_arguments(
        budget, mechanism=mechanism, composition=composition, delta=delta, bounds=sums.bounds,
        weighted=sums.w_column is not None, binary_y=sums.binary_y,
    )  # fmt: skip
    release = release_ratio_sums(
        sums.sums, **arguments, bounds=sums.bounds, replicates=replicates,
        noise=SimulationNoise(rng=as_rng(rng)),
    )  # fmt: skip
    estimates = [ratio_interval(part, method="none") for part in (release, recombine(release))]
    published = np.column_stack([np.isin(ci.flag, [None, NO_VARIANCE]) for ci in estimates])
    values = np.column_stack([ci.estimate for ci in estimates])
    half = model.target_half_widths(target)
    with np.errstate(invalid="ignore"):
        met = published & (np.abs(values - model.truth) <= half)
    band = binomial_band(target.level, replicates)
    return pd.DataFrame(
        {
            "estimate": model.labels,
            "target": half,
            "met": met.mean(axis=0),
            "band_low": band[0],
            "band_high": band[1],
        }
    )
