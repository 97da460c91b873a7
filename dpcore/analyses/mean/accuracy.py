r"""The mean's error model for the planner (:mod:`dpcore.planner.accuracy`), and its check by
simulation.

Noise of a group mean at budget scale s = 1 (ε for Laplace, √ρ for Gaussian), with the public
range [L, U], width Δ = U − L and magnitude M = max(|L|, |U|):

============================  =====================================  ===========================
Mechanism, group sizes        Noise of the group mean                Source
============================  =====================================  ===========================
Laplace, public               Lap(Δ/n_g)                             AAAI 2024, eq. 3
Gaussian, public              N(0, (Δ/(n_g√2))²)                     AAAI 2024, eq. 1: σ = Δ/√(2ρ)
Laplace, private              (2M/n_g)·(L₁ + L₂), L_i ~ Lap(1)       see below
Gaussian, private             N(0, (√2·M/n_g)²)                      see below
============================  =====================================  ===========================

With private sizes the estimator halves the budget between a noisy clipped sum (sensitivity M)
and a noisy count (sensitivity 1) and divides them
(:class:`~dpcore.analyses.mean.estimators.ClippedMean`). To first order (delta method) its error
is :math:`(e_S - \mu_g e_n)/n_g`; we take the public worst case :math:`|\mu_g| = M`, which gives
the rows above (our choice: the paper keeps sizes public, and the true μ_g is confidential). It
is the worst case to first order only: the noisy count in the denominator adds a
second-order term, so for a mean near a bound the unclipped estimate can meet the target a
little less often than the level (0.942 for 0.95 in a review's simulation). A release clips
every mean into [L, U], which can only shrink the error, and the check by simulation scores
estimates clipped the same way (0.988 in that case). The floor of the noisy count at 1 is
ignored.

Shares from the release's own noisy counts (``share_source="noisy_counts"``, private sizes
only). The recombined estimate is :math:`\hat\theta = \sum_g \hat s_g \hat\mu_g` (AAAI 2024,
eq. 4, with estimated shares) where :math:`\hat\mu_g = \tilde S_g / \tilde n_g`,
:math:`\tilde S_g = S_g + a_g`, :math:`\tilde n_g = n_g + b_g` and
:math:`\hat s_g = \tilde n_g / \sum_h \tilde n_h` (:func:`~dpcore.foundations.shares.noisy_count_shares`,
whose floors at 0 and 1 we ignore as above). Its error splits into the groups' noise weighted
by the exact shares :math:`w_g = n_g/n` and the shares' own noise:

.. math::
   \hat\theta - \theta \approx \underbrace{\frac1n \sum_g (a_g - \mu_g b_g)}_{\sum_g w_g
   (\hat\mu_g - \mu_g)} + \underbrace{\frac1n \sum_g b_g (\mu_g - \theta)}_{\sum_g (\hat s_g
   - w_g)\mu_g} = \frac1n \sum_g (a_g - \theta\, b_g),

to first order, since :math:`\hat s_g - w_g \approx (b_g - w_g \sum_h b_h)/n`. The share term
has variance :math:`\sigma_b^2 \sum_g (\mu_g - \theta)^2 / n^2` and covariance
:math:`-\sigma_b^2 \sum_g \mu_g(\mu_g - \theta)/n^2` with the groups' term, so the total is
:math:`k(\sigma_a^2 + \theta^2 \sigma_b^2)/n^2`: the count noise enters through the population
mean θ, not each group's μ_g. We take the public worst case :math:`|\theta| = M`; each group
then adds noise distributed as a private-size mean over all n rows (the table's last two rows
with n for n_g), which is what :func:`mean_error_model` uses. At that worst case the law
equals Σ w_g X_g with every :math:`|\mu_g| = M`, so fixed-share formulas gave the same numbers,
for a reason they did not state; a test checks the law by simulated releases at θ = M.

A strategy decides which estimates are published and at what share of the budget:
stratified publishes every group at the full budget and their share-weighted sum (its noise is
:math:`\sum_g w_g X_g`: Gaussian in closed form, Laplace by inverting its characteristic
function); the whole population
only publishes one estimate over all n rows; global and groups spends a fraction f on the
population and 1 − f on the groups (Laplace noise scales by 1/f, Gaussian by 1/√f).

CoinPress (Biswas et al. 2020; AAAI 2024, appendix B, Alg. 1–2) clips to an interval that
moves with the data and the budget at every step, so its error is no fixed law over a budget
scale: :func:`coinpress_error_model` is a :class:`~dpcore.planner.simulated.SimulatedErrorModel`
over seeded simulated releases of the strategy (:class:`CoinPressErrors`), each estimate clipped
into the public range as a release does and scored against its true mean.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpcore.analyses.mean.coinpress import CoinPressMean
from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.analyses.mean.found_bounds import PrivatelyBounded, released_found
from dpcore.analyses.mean.statistics import GroupValues, kept_without_rows
from dpcore.analyses.mean.strategies import (
    MeanEstimator,
    Strategy,
    simulated_releases,
)
from dpcore.foundations.accounting import ZCDP, Budget
from dpcore.foundations.labels import list_labels, plain_number
from dpcore.foundations.metrics import binomial_band
from dpcore.foundations.privacy_unit import PrivacyUnit
from dpcore.foundations.shares import share_values
from dpcore.foundations.validation import positive_int
from dpcore.planner.accuracy import AccuracyTarget, ErrorModel, round_to_one_two_five
from dpcore.planner.error_shapes import (
    GaussianError,
    LaplaceError,
    LaplacePairError,
    WeightedLaplaceSumError,
)
from dpcore.planner.simulated import SimulatedErrorModel, log_grid

__all__ = [
    "POPULATION_LABEL",
    "CoinPressErrors",
    "SimulatedMeanErrors",
    "check_by_simulation",
    "coinpress_error_model",
    "mean_error_model",
]

POPULATION_LABEL = "Whole population"
DRAW_SEED = 20_240_217
PLAN_REPLICATES = 1000
"""Simulated CoinPress releases at each budget of the planner's grid (the 0.95 quantile's
binomial standard error is then about 0.7 percentage points of coverage)."""
PLAN_GRID = log_grid(1e-3, 1e3, 8)
"""CoinPress's budget scales √ρ: ρ from 1e-6 to 1e6, four per decade of ρ (49 budgets)."""


def _unit_scales(
    estimator: LaplaceMean | GaussianMean, sizes: np.ndarray, rows_per_person: int
) -> np.ndarray:
    """Each mean's noise scale at budget scale 1 (the module docstring's table), for a person
    who may own ``rows_per_person`` rows: the mechanisms then run at ε/c or ρ/c²
    (:meth:`~dpcore.foundations.privacy_unit.PrivacyUnit.row_budget`), budget scale s/c, so the noise at
    scale s is c times one row's."""
    low, high = estimator.bounds
    laplace = isinstance(estimator, LaplaceMean)
    if estimator.n_public:
        one_row = (high - low) / sizes / (1 if laplace else math.sqrt(2))
    else:
        one_row = max(abs(low), abs(high)) / sizes * (2 if laplace else math.sqrt(2))
    return one_row * rows_per_person


def _shape(estimator: LaplaceMean | GaussianMean, scales: np.ndarray):
    if isinstance(estimator, GaussianMean):
        return GaussianError(scales)
    return LaplaceError(scales) if estimator.n_public else LaplacePairError(scales)


def _weighted_sum(
    estimator: LaplaceMean | GaussianMean, scales: np.ndarray, weights: np.ndarray
) -> GaussianError | WeightedLaplaceSumError:
    """The noise of Σ w_g X_g: Gaussian in closed form, Laplace from its characteristic
    function (:class:`~dpcore.planner.error_shapes.WeightedLaplaceSumError`)."""
    if isinstance(estimator, GaussianMean):
        return GaussianError(np.array([math.sqrt(np.sum((weights * scales) ** 2))]))
    terms = 1 if estimator.n_public else 2  # a Laplace pair per group when sizes are private
    return WeightedLaplaceSumError(np.repeat(weights * scales, terms))


def _noisy_shares(values: GroupValues) -> bool:
    return values.shares is not None and values.shares.drawn_with_release


def _stratified_population(
    estimator: LaplaceMean | GaussianMean, values: GroupValues, group_scales, weights
) -> GaussianError | WeightedLaplaceSumError:
    """The noise of the stratified population estimate: Σ w_g X_g with fixed public shares;
    with shares from the noisy counts, Σ_g (a_g − θ b_g)/n at |θ| = M (module notes), each
    group adding the noise of a private-size mean over all n rows."""
    if not _noisy_shares(values):
        return _weighted_sum(estimator, group_scales, weights)
    pooled = _unit_scales(
        estimator, np.full(values.k, float(values.n)), values.unit.rows_per_person
    )
    return _weighted_sum(estimator, pooled, np.ones(values.k))


def _fraction_factor(estimator: LaplaceMean | GaussianMean, fraction: float) -> float:
    """How a mean's noise grows when it gets ``fraction`` of the budget: ε·f gives 1/f, ρ·f gives
    σ/√f."""
    return 1 / fraction if isinstance(estimator, LaplaceMean) else 1 / math.sqrt(fraction)


def _assumptions(
    estimator: LaplaceMean | GaussianMean, strategy: Strategy, noisy_shares: bool
) -> list[str]:
    mechanism = "Laplace" if isinstance(estimator, LaplaceMean) else "Gaussian"
    out = [
        f"{mechanism} noise on each mean, scaled to the public range "
        f"[{plain_number(estimator.bounds[0], 6)}, {plain_number(estimator.bounds[1], 6)}] (AAAI 2024, eq. "
        f"{3 if mechanism == 'Laplace' else 1})."
    ]
    if estimator.n_public:
        out.append("Group sizes are treated as public, as the release does.")
    else:
        out.append(
            "Group sizes are private: the noisy sum over the noisy count, to first order, at the "
            "worst case |mean| = max(|L|, |U|). The sizes the planner divides by are "
            "confidential, so its numbers are a curator preview."
        )
    if strategy == "stratified" and noisy_shares:
        out.append(
            "The whole population recombines the groups with shares from the release's noisy "
            "counts: their noise is included (to first order, at the worst case |population "
            "mean| = max(|L|, |U|)). Groups that noisy counts merge or leave out are planned "
            "as if released."
        )
    if strategy == "stratified" and mechanism == "Laplace":
        out.append(
            "The whole population's noise is a share-weighted sum of Laplace noises, computed "
            "from its characteristic function (to within 1e-10 in probability)."
        )
    return out


def _person_assumptions(unit: PrivacyUnit) -> tuple[str, ...]:
    if unit.column is None:
        return ()
    return (
        f"One person may own up to {unit.rows_per_person} rows here ({unit.describe()}): "
        "each mean runs at the budget divided accordingly, so its noise is that many times "
        "one row's.",
    )


TYPICAL_TARGET_OF_RANGE = 0.02
"""The Plan page's first target for a mean: ±2% of the public range, rounded (±2 on [0, 100])."""


def _without_empty_groups_a_rule_removes(
    values: GroupValues, strategy: Strategy
) -> tuple[GroupValues, tuple[str, ...]]:
    """The values without the declared groups that have no rows, when the release's noisy
    counts merge or drop small groups (they remove such a group but in the rare release whose
    noise lifts its count to the minimum), with a sentence saying so; as they are otherwise.
    A group with no rows has no accuracy to plan: its estimate is noise alone at any budget."""
    empty = kept_without_rows(values.labels, values.sizes)
    rule = values.shares.rule if values.shares is not None else None
    if not empty or strategy == "global_only" or rule is None:
        return values, ()
    note = (
        f"{list_labels(empty)} {'has' if len(empty) == 1 else 'have'} no rows: the release "
        f"merges or drops {'it' if len(empty) == 1 else 'them'} by the noisy count (below "
        f"{rule.min_size:,}), and no budget would make a mean of noise accurate, so the planner "
        "leaves them out."
    )
    return values.subset(np.asarray(values.sizes) > 0), (note,)


def _require_rows(values: GroupValues, strategy: Strategy) -> None:
    empty = kept_without_rows(values.labels, values.sizes)
    if empty and strategy != "global_only":
        raise ValueError(
            f"{list_labels(empty)} {'has' if len(empty) == 1 else 'have'} no rows: a release "
            "estimates such a group from noise alone, so no budget makes its mean accurate. To "
            "plan, remove the category from the declared list, or merge or drop small groups, "
            "on the Strata page."
        )


def _published(values: GroupValues, strategy: Strategy):
    """The labels, sizes and true means of the estimates ``strategy`` publishes."""
    if strategy == "global_only":
        return (POPULATION_LABEL,), np.array([values.n]), np.array([values.global_mean])
    labels = tuple(str(label) for label in (*values.labels, POPULATION_LABEL))
    return labels, np.append(values.sizes, values.n), np.append(values.means, values.global_mean)


def _released(
    values: GroupValues, estimator: MeanEstimator, budget: Budget, strategy: Strategy,
    global_fraction: float, replicates: int, rng: np.random.Generator | int | None,
) -> np.ndarray:  # fmt: skip
    """(replicates, estimates) simulated releases of ``strategy`` at a person's ``budget``,
    each mean at the budget of one of the person's rows and clipped into the public range, as a
    release runs and clips it (MeanPlan.run)."""
    result = simulated_releases(
        strategy, values, estimator, budget, global_fraction, replicates, rng
    )
    if strategy == "global_only":
        estimates = result.global_estimate[:, None]
    else:
        estimates = np.column_stack([result.group_estimates, result.global_estimate])
    return np.clip(estimates, *estimator.public_range)


@dataclass(frozen=True, eq=False)
class SimulatedMeanErrors:
    """The absolute errors of simulated releases of ``strategy`` at budget scale s against the
    true means (the estimates :func:`_published` lists): the simulator of a
    :class:`~dpcore.planner.simulated.SimulatedErrorModel`. A subclass says how a release at
    scale s is simulated (:meth:`released`)."""

    values: GroupValues
    estimator: MeanEstimator
    strategy: Strategy
    global_fraction: float

    def released(self, scale: float, replicates: int, rng: np.random.Generator) -> np.ndarray:
        """(replicates, estimates) simulated releases at budget scale ``scale``."""
        raise NotImplementedError

    def __call__(self, scale: float, replicates: int, rng: np.random.Generator) -> np.ndarray:
        estimates = self.released(scale, replicates, rng)
        return np.abs(estimates - _published(self.values, self.strategy)[2])


@dataclass(frozen=True, eq=False)
class CoinPressErrors(SimulatedMeanErrors):
    """CoinPress's errors at budget scale s = √ρ: the simulator of
    :func:`coinpress_error_model`."""

    estimator: CoinPressMean

    def released(self, scale: float, replicates: int, rng: np.random.Generator) -> np.ndarray:
        return _released(
            self.values, self.estimator, ZCDP(scale**2), self.strategy, self.global_fraction,
            replicates, rng,
        )  # fmt: skip


def coinpress_error_model(
    values: GroupValues,
    estimator: CoinPressMean,
    strategy: Strategy = "stratified",
    global_fraction: float = 0.5,
    *,
    replicates: int = PLAN_REPLICATES,
) -> SimulatedErrorModel:
    """CoinPress's errors, known by seeded simulation on a log grid of ρ
    (:mod:`dpcore.planner.simulated`): a curator preview, since its steps read the values."""
    _require_rows(values, strategy)
    labels, sizes, truth = _published(values, strategy)
    replicates = positive_int("replicates", replicates)
    return SimulatedErrorModel(
        labels=labels, sizes=sizes, shapes=(), unit="rho",
        groups=0 if strategy == "global_only" else values.k, truth=truth,
        assumptions=(
            *_coinpress_assumptions(estimator, strategy, replicates),
            *_person_assumptions(values.unit),
        ),
        reads=("each group's values, to which CoinPress adapts every step",),
        simulator=CoinPressErrors(values, estimator, strategy, global_fraction),
        grid=PLAN_GRID, replicates=replicates, seed=DRAW_SEED,
        typical_half_width=_typical_half_width(*estimator.prior),
        widest_error=estimator.prior[1] - estimator.prior[0],
    )  # fmt: skip


def _coinpress_assumptions(
    estimator: CoinPressMean, strategy: Strategy, replicates: int
) -> tuple[str, ...]:
    low, high = estimator.prior
    grid = PLAN_GRID
    out = [
        f"CoinPress (AAAI 2024, appendix B, Alg. 1–2) with {estimator.steps} narrowing steps "
        f"from the public range [{plain_number(low, 6)}, {plain_number(high, 6)}], for values whose spread is at most "
        f"σ = {plain_number(estimator.sigma, 6)}; group sizes treated as public.",
        "Its clipping interval moves with the data and the budget at every step, so its error "
        f"has no formula: it is simulated ({replicates:,} seeded releases at each of "
        f"{len(grid)} budgets from ρ = {grid[0] ** 2:g} to {grid[-1] ** 2:g}, the same random "
        "draws at every budget), each estimate scored against its true mean, clipping included.",
        "More budget is assumed never to make an estimate worse; where the simulation shows "
        "otherwise, the planner says so. The smallest budget is found by bisection between "
        "two budgets of that list, with a fresh seeded simulation at each step.",
        "CoinPress reads each group's values at every step, so the planner's numbers are a "
        "curator preview.",
    ]
    if strategy == "stratified":
        out.append("The whole population's estimate is the share-weighted sum of the groups'.")
    return tuple(out)


def mean_error_model(
    values: GroupValues,
    estimator: MeanEstimator,
    strategy: Strategy = "stratified",
    global_fraction: float = 0.5,
) -> ErrorModel:
    """The errors of a mean release (module docstring), with the confidential true means and
    clipping biases attached for the curator's relative and bias-inclusive targets; CoinPress's
    by simulation (:func:`coinpress_error_model`)."""
    if isinstance(estimator, CoinPressMean):
        return coinpress_error_model(values, estimator, strategy, global_fraction)
    if not isinstance(estimator, LaplaceMean | GaussianMean) or estimator.bounds is None:
        raise ValueError(
            "The planner covers the Laplace, Gaussian and CoinPress means with public bounds: "
            "enter the value's public range on the Estimator page."
        )
    values, left_out = _without_empty_groups_a_rule_removes(values, strategy)
    _require_rows(values, strategy)
    low, high = estimator.bounds
    sizes = values.sizes.astype(float)
    weights = (
        share_values(values.shares, values.k) if values.shares is not None else sizes / values.n
    )
    rows_per_person = values.unit.rows_per_person
    pooled_scale = _unit_scales(estimator, np.array([float(values.n)]), rows_per_person)
    pooled_clipped = float(values.pooled.clipped_sums(np.array([low]), np.array([high]))[0])
    pooled_bias = pooled_clipped / values.n - values.global_mean
    if strategy == "global_only":
        shapes = ((_shape(estimator, pooled_scale), 1),)
        labels, out_sizes = (POPULATION_LABEL,), np.array([values.n])
        truth, bias = np.array([values.global_mean]), np.array([pooled_bias])
    else:  # a kept group without rows is refused above, so every size divides
        clipped_means = values.clipped_sums(np.full(values.k, low), np.full(values.k, high)) / sizes
        group_scales = _unit_scales(estimator, sizes, rows_per_person)
        if strategy == "stratified":
            group_factor = 1.0
            population = _stratified_population(estimator, values, group_scales, weights)
            population_bias = float(weights @ clipped_means) - values.global_mean
        else:
            group_factor = _fraction_factor(estimator, 1 - global_fraction)
            population = _shape(
                estimator, pooled_scale * _fraction_factor(estimator, global_fraction)
            )
            population_bias = pooled_bias
        shapes = ((_shape(estimator, group_scales * group_factor), values.k), (population, 1))
        labels = (*values.labels, POPULATION_LABEL)
        out_sizes = np.append(values.sizes, values.n)
        truth = np.append(values.means, values.global_mean)
        bias = np.append(clipped_means - values.means, population_bias)
    return ErrorModel(
        labels=tuple(str(label) for label in labels),
        sizes=out_sizes,
        shapes=shapes,
        unit="epsilon" if isinstance(estimator, LaplaceMean) else "rho",
        groups=0 if strategy == "global_only" else values.k,
        truth=truth,
        bias=bias,
        sizes_public=estimator.n_public,
        assumptions=(
            *_assumptions(estimator, strategy, _noisy_shares(values)),
            *_person_assumptions(values.unit),
            *left_out,
        ),
        typical_half_width=_typical_half_width(low, high),
        widest_error=high - low,  # a release clamps every estimate into [low, high]
    )


def _typical_half_width(low: float, high: float) -> float:
    """A round ±2% of the public range [low, high]: the Plan page's first target."""
    return round_to_one_two_five(TYPICAL_TARGET_OF_RANGE * (high - low))


def _scored(
    values: GroupValues, estimator: MeanEstimator, strategy: Strategy, global_fraction: float,
    target: AccuracyTarget,
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:  # fmt: skip
    """The labels, what each estimate is scored against, and its target half-width: the true
    means for CoinPress and bounds found privately (their models' errors include their
    clipping) and for a bias-inclusive target, else the clipped means (a noise-only target:
    what the model promises)."""
    if isinstance(estimator, CoinPressMean | PrivatelyBounded):
        if target.include_bias:
            raise ValueError(
                "This estimator's planned errors are measured against each true mean, so they "
                "already include its clipping: set the target without the clipping bias."
            )
        labels, _, truth = _published(values, strategy)
        return labels, truth, target.half_widths(truth if target.relative else np.zeros(len(truth)))
    model = mean_error_model(values, estimator, strategy, global_fraction)
    reference = model.truth if target.include_bias else model.truth + model.bias
    return model.labels, reference, model.target_half_widths(target)


def check_by_simulation(
    values: GroupValues,
    estimator: MeanEstimator,
    budget: Budget,
    target: AccuracyTarget,
    *,
    strategy: Strategy = "stratified",
    global_fraction: float = 0.5,
    replicates: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Simulate ``replicates`` releases at ``budget``, clip each estimate into the public range
    as a release does, and count how often each estimate meets the target: against the clipped means for a noise-only target (what the model promises), against
    the true means for a bias-inclusive one.

    Returns one row per estimate: ``estimate``, ``target``, ``met`` (the fraction of releases
    within the target) and ``band_low``/``band_high``, the binomial band of a calibrated
    ``target.level`` (:func:`dpcore.foundations.metrics.binomial_band`). The binding estimate should sit in
    its band; the others above it.
    """
    replicates = positive_int("replicates", replicates)
    labels, reference, half = _scored(values, estimator, strategy, global_fraction, target)
    draw = released_found if isinstance(estimator, PrivatelyBounded) else _released
    estimates = draw(values, estimator, budget, strategy, global_fraction, replicates, rng)
    if strategy != "global_only":  # the groups the model plans (not those a rule removes)
        planned = [*(str(label) for label in values.labels), POPULATION_LABEL]
        estimates = estimates[:, [planned.index(label) for label in labels]]
    met = (np.abs(estimates - reference) <= half).mean(axis=0)
    band = binomial_band(target.level, replicates)
    return pd.DataFrame(
        {
            "estimate": labels,
            "target": half,
            "met": met,
            "band_low": band[0],
            "band_high": band[1],
        }
    )
