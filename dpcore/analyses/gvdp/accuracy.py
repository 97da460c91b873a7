r"""GVDP's error model for the planner (:mod:`dpcore.planner`), and its check by simulation.

What a GVDP release promises is its interval (Covington et al., Thm. 2.12, normal case, per
coordinate j):

.. math:: \tilde\theta_j \pm z_{(1+L)/2}\sqrt{\tilde\Sigma_{jj} + (\Sigma_{\tilde\theta})_{jj}},

where :math:`\tilde\Sigma_{jj}` is the private upper bound on the sampling variance, read off the
bag of little bootstraps (Thm. 2.10, Cor. D.1, with the floor and fallback of
:func:`~dpcore.analyses.gvdp.private.variance_bound`), and :math:`(\Sigma_{\tilde\theta})_{jj} =
1/\sum_m \sigma_{\theta,m,j}^{-2}` the variance of the privacy noise of the precision-weighted
estimate (Thm. 2.11). The budget enters both: the noise scales :math:`\sigma_m \propto
1/\sqrt{2\rho_m}` of every CoinPress step (Alg. 4), and the margin the variance bound adds for its
own noise. The interval at level L covers the parameter with probability ≥ L, so a target
"within ±h at level L" is met when that half-width is at most h.

**The half-width is itself random**: :math:`\tilde\Sigma` is a DP estimate and the whitening of
the mean step depends on it (App. C.6), so a release's interval is wider or narrower by luck.
The planner's error of an estimate at budget ρ is the L-quantile, over simulated releases, of its
level-L half-width: with probability L a release at that budget publishes an interval at most
that wide (our choice: the level plays both parts, as the mean's target is met with probability
L; the paper plans no budget).

**How it is simulated** (:class:`GvdpStandardErrors`). The bag of little bootstraps (Alg. 2) is
run :data:`BLB_DRAWS` times on each group's confidential rows (seeded); each simulated release
takes one of them. Every CoinPress step's noise scale follows from public inputs and the
starting radius (Alg. 4), so a release's interval variance is a closed function of the bag's
mean variance and the noise of the variance part (:meth:`RunInputs.variances`: the variance
floor and the fallback to the public bound included, vectorised over the releases). It leaves
out the clipping of points, which happens only in the paper's failure event (probability β);
a unit test compares it with the release's own private stage
(:func:`~dpcore.analyses.gvdp.private.release_estimates`, within 3% at the median and the 0.95
quantile), and the check by simulation (:func:`check_gvdp_accuracy`) runs that private stage
on fresh bags. The same seed at every budget (common random numbers) lets
:class:`~dpcore.planner.SimulatedErrorModel` scan a grid of budgets and bisect, as for CoinPress.

**Withheld groups.** A group with fewer subsets than a run at ρ needs
(:func:`~dpcore.analyses.gvdp.withhold.subsets_needed`) is withheld at ρ: it publishes no
interval, so the planner counts its error as unbounded there and answers a budget at which every
group is published, naming those whose answer that sets (:meth:`GvdpErrorModel.notes`). The
whole population of a stratified release recombines every group's estimate,
:math:`\operatorname{Var} = \sum_g w_g^2 V_g` (public shares), withheld or not, as the release does.

**Scored before clipping.** A release clips each interval into the public range; the planner
scores the interval before clipping, which is never narrower. A target below half the public
range also rules out the other withholding rule (an interval wider than the range).

Reads of the confidential data: the bootstrap variances, and the rows per group that set each
group's subsets (treated as public by GVDP, paper §2.2): every answer is a curator preview.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtri

from dpcore.analyses.gvdp.blb import prepare_rows, run_blb
from dpcore.analyses.gvdp.bounds import GVDPBounds, RunParameters
from dpcore.analyses.gvdp.data import GvdpData
from dpcore.analyses.gvdp.groups import Strategy, check_model_bounds, draw_salt, nonprivate
from dpcore.analyses.gvdp.model import GvdpBoundsSpec
from dpcore.analyses.gvdp.private import release_estimates, step_noises, whitened_radius
from dpcore.analyses.gvdp.withhold import subsets_needed
from dpcore.analyses.mean.accuracy import POPULATION_LABEL
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.metrics import binomial_band
from dpcore.foundations.validation import as_rng, positive_int
from dpcore.planner.accuracy import AccuracyTarget, round_to_one_two_five
from dpcore.planner.simulated import SimulatedErrorModel, log_grid

__all__ = [
    "BLB_DRAWS",
    "GvdpErrorModel",
    "GvdpRunSettings",
    "GvdpStandardErrors",
    "check_gvdp_accuracy",
    "gvdp_error_model",
]

BLB_DRAWS = 20
"""Bags of little bootstraps per group that the simulated releases share out (each release takes
one): enough to carry the bootstrap's own spread into the half-widths of a group with a handful
of subsets, where it is largest; a bag of every group of the demo takes about 20 ms (a mean)."""
PLAN_REPLICATES = 2000
"""Simulated releases at each budget of the grid (the 0.95 quantile's binomial standard error is
then about 0.5 percentage points)."""
ENGINE_DRAWS = 3
"""Bags per group when an engine keeps the rows where they lie: each is one more pass over every
row, so the planner takes a few (their spread still enters the half-widths) rather than
:data:`BLB_DRAWS`."""
CHECK_DRAWS = 3
"""Fresh bags of little bootstraps per group in a check by simulation (the check's releases
share them out). Few: on the demo a bag of the largest group costs 20 ms, and the check's time
goes to the release's own private stage (0.12 s for 1,000 releases)."""
PLAN_GRID = log_grid(1e-2, 1e3, 8)
r"""Budget scales :math:`\sqrt\rho`: ρ from 1e-4 to 1e6, four per decade of ρ (41 budgets)."""
SEED = 20_240_419
TYPICAL_TARGET_OF_RANGE = 0.05
"""The Plan page's first target: ±5% of the narrowest public range of a coefficient, rounded
(the mean's is 2%, but GVDP's intervals carry sampling error too, which no budget removes: ±2 hours
is out of reach for the demo's smallest groups)."""
CHECK_NOTE = (
    "Curator preview, not differentially private: simulated releases of the general estimator "
    "on the confidential data (fresh bags of little bootstraps and privacy noise, the release's "
    "own steps), counting how often each published interval is within the target."
)


@dataclass(frozen=True)
class GvdpRunSettings:
    """The GVDP choices every run of a release shares (paper Alg. 1's inputs besides the data
    and the bounds): k subsets of the population, r resamples, t steps, β, and the estimate's
    share of ρ; ``strategy`` is what the release publishes. ``k`` None: each run's subsets by
    the rule of :func:`~dpcore.analyses.gvdp.recommended_subsets`."""

    k: int | None
    resamples: int = 10
    steps: int = 5
    beta: float = 0.03
    mean_fraction: float = 0.5
    strategy: Strategy = "stratified"

    def parameters(self, rows: int, subsets: int, rho: float, d: int) -> RunParameters:
        """A run's validated parameters (the level is any: it does not enter the variances)."""
        return RunParameters.build(
            k=subsets, rho=rho, t=self.steps, resamples=self.resamples, level=0.5,
            mean_fraction=self.mean_fraction, beta=self.beta, n=rows, d=d,
        )  # fmt: skip

    def needed(self, rho: float, d: int) -> int:
        """The fewest subsets a run at ``rho`` needs to be published (public inputs only)."""
        return subsets_needed(
            rho=rho, mean_fraction=self.mean_fraction, steps=self.steps, beta=self.beta, d=d
        )


@dataclass(frozen=True, eq=False)
class BootstrapDraws:
    """The bag of little bootstraps of one run (a group's, or the population's) drawn several
    times: ``theta`` and ``variance`` of shape (draws, subsets, d), with the run's public
    bounds (:meth:`GvdpBoundsSpec.for_rows`) and rows. **Not private**: planner input only."""

    theta: np.ndarray
    variance: np.ndarray
    bounds: GVDPBounds
    rows: int

    @property
    def subsets(self) -> int:
        return self.theta.shape[1]

    @classmethod
    def draw(cls, data: object, estimator: str, rows: int, subsets: int, bounds: GVDPBounds,
             resamples: int, draws: int, rng: np.random.Generator) -> BootstrapDraws:  # fmt: skip
        prepared, _ = prepare_rows(data, estimator)
        bags = [run_blb(prepared, estimator, subsets, resamples, rng) for _ in range(draws)]
        theta, variance = (np.stack(parts) for parts in zip(*bags, strict=True))
        return cls(theta, variance, bounds, rows)

    def released_variances(
        self, settings: GvdpRunSettings, rho: float, replicates: int, rng: np.random.Generator
    ) -> np.ndarray:
        """(replicates, d) interval variances of releases at ``rho`` by the release's own private
        stage (:func:`release_estimates`, clipping included); release r takes bag r mod draws."""
        which = np.arange(replicates) % self.theta.shape[0]
        parameters = settings.parameters(self.rows, self.subsets, rho, self.theta.shape[-1])
        release = release_estimates(
            self.theta[which], self.variance[which], self.bounds, parameters,
            SimulationNoise(rng=rng),
        )  # fmt: skip
        return release["variance"]


@dataclass(frozen=True, eq=False)
class RunInputs:
    r"""What the interval variance of one run depends on: :math:`\bar V = \frac1k\sum_i \hat
    V_i^{BLB}` of each bag drawn (shape (draws, d)), the public bounds, rows and subsets."""

    mean_variance: np.ndarray
    bounds: GVDPBounds
    rows: int
    subsets: int

    @classmethod
    def of(cls, bags: BootstrapDraws) -> RunInputs:
        return cls(bags.variance.mean(axis=1), bags.bounds, bags.rows, bags.subsets)

    def variances(
        self, settings: GvdpRunSettings, rho: float, replicates: int, rng: np.random.Generator
    ) -> np.ndarray:
        r"""(replicates, d) interval variances :math:`\tilde\Sigma_{jj} +
        (\Sigma_{\tilde\theta})_{jj}` of releases at ``rho`` when no point is clipped.

        Every CoinPress step's noise scale follows from public inputs and the starting radius
        (:func:`~dpcore.analyses.gvdp.private.step_noises`). Unclipped, the variance part's
        precision-weighted estimate is :math:`\tilde S = \bar V + b\,Z` with
        :math:`b^2 = \tau^2/\sum_m\sigma_m^{-2}` (Thm. 2.9), so :math:`\tilde\Sigma` is
        :func:`~dpcore.analyses.gvdp.private.variance_bound` of it; the mean part, whitened by
        :math:`s = \sqrt{k\tilde\Sigma}`, starts from the radius of
        :func:`~dpcore.analyses.gvdp.private.whitened_radius` and its
        estimate's noise variance is :math:`s_j^2/\sum_m\sigma_m^{-2}` (Thm. 2.11). Clipping
        happens only in the failure event of probability β by the paper's design; the check by
        simulation (:func:`check_gvdp_accuracy`) runs the release's own private stage, clipping
        included.
        """
        d, k = self.mean_variance.shape[-1], self.subsets
        parameters = settings.parameters(self.rows, k, rho, d)
        beta = parameters.beta_part
        high = self.bounds.variance_high
        tau = self.bounds.spread(settings.resamples, self.rows // k)
        start = whitened_radius(float(np.linalg.norm(high)) / 2, high / 2, tau)  # as _coinpress
        sigmas = step_noises(start, d, k, parameters.rho.variance_steps, beta)
        spread = tau**2 / np.sum(sigmas**-2.0)
        combined = self.mean_variance[np.arange(replicates) % len(self.mean_variance)]
        combined = combined + np.sqrt(spread) * rng.standard_normal((replicates, d))
        margin = -np.sqrt(spread) * ndtri(beta / d)
        sampling = np.where(combined + margin > 0, np.maximum(combined, 0.0) + margin, high)
        scale = np.sqrt(k * sampling)
        start = whitened_radius(self.bounds.radius, self.bounds.half_widths, scale)
        sigmas = step_noises(start, d, k, parameters.rho.mean_steps, beta)
        return sampling + scale**2 / np.sum(sigmas**-2.0, axis=0)[:, None]


def _with_population(variances: list[np.ndarray], shares: np.ndarray | None) -> np.ndarray:
    r"""(replicates, estimates): the runs' variances side by side, then the recombined whole
    population's :math:`\sum_g w_g^2 V_g` when the release is stratified (``shares`` given)."""
    if shares is not None:
        variances = [*variances, np.einsum("g,grd->rd", shares**2, np.stack(variances))]
    return np.concatenate(variances, axis=1)


def _withheld(subsets: list[int], shares: np.ndarray | None, settings: GvdpRunSettings,
              rho: float, d: int) -> np.ndarray:  # fmt: skip
    """Per estimate, whether a release at ``rho`` withholds it: its run has fewer subsets than
    :meth:`GvdpRunSettings.needed`; the recombined population never is."""
    short = np.repeat(np.array(subsets) < settings.needed(rho, d), d)
    return short if shares is None else np.append(short, np.zeros(d, dtype=bool))


@dataclass(frozen=True, eq=False)
class GvdpStandardErrors:
    r"""The simulator of :class:`GvdpErrorModel`: the standard errors
    :math:`\sqrt{\tilde\Sigma_{jj} + (\Sigma_{\tilde\theta})_{jj}}` of simulated releases at
    budget scale s = √ρ (:meth:`RunInputs.variances`), shape (replicates, estimates): every
    group's coefficients, then the whole population's (recombined with ``shares`` when
    stratified; ``shares`` is None when the release runs once on everyone, the one run)."""

    runs: tuple[RunInputs, ...]
    shares: np.ndarray | None
    settings: GvdpRunSettings

    @property
    def d(self) -> int:
        return self.runs[0].mean_variance.shape[-1]

    def __call__(self, scale: float, replicates: int, rng: np.random.Generator) -> np.ndarray:
        variances = [run.variances(self.settings, scale**2, replicates, rng) for run in self.runs]
        return np.sqrt(_with_population(variances, self.shares))

    def withheld(self, scale: float) -> np.ndarray:
        """Per estimate, whether a release at budget scale ``scale`` withholds it."""
        subsets = [run.subsets for run in self.runs]
        return _withheld(subsets, self.shares, self.settings, scale**2, self.d)


@dataclass(frozen=True, eq=False)
class GvdpErrorModel(SimulatedErrorModel):
    """GVDP's errors (module docstring): the level-L quantile of the level-L interval's
    half-width over simulated releases, unbounded where the estimate is withheld."""

    rows_reason = (
        "GVDP's interval carries the sampling error the bag of little bootstraps reads off each "
        "group's rows, which the planner cannot extrapolate to a larger group: merge the "
        "smaller groups or choose a coarser grouping, then plan again"
    )

    # Not the closed forms' "widen the public bounds": what stands in the way here is each
    # group's sampling error (or too few subsets), which neither budget nor bounds remove.
    unreachable_advice = (
        "Merge the smaller groups or choose a coarser grouping (more rows per group), or loosen "
        "the target."
    )

    def quantiles_at(self, scale: float, levels: tuple[float, ...]) -> np.ndarray:
        levels_array = np.asarray(levels, dtype=float)
        errors = self._simulate(scale)
        z = ndtri((1 + levels_array) / 2)[:, None]
        half_widths = z * np.quantile(errors, levels_array, axis=0)
        half_widths[:, self.simulator.withheld(scale)] = np.inf
        return half_widths

    def describe(self, target: AccuracyTarget) -> str:
        return target.describe(what="interval")

    def _published_from(self) -> np.ndarray:
        """Per estimate, the index of the first grid budget at which it is published."""
        withheld = np.array([self.simulator.withheld(float(s)) for s in self.grid])
        return np.where(withheld.all(axis=0), len(self.grid), (~withheld).argmax(axis=0))

    def unreachable_reasons(self, target: AccuracyTarget, needed: np.ndarray) -> tuple[str, ...]:
        """The estimates that miss ``target`` even at the grid's largest budget: withheld there,
        or their interval still too wide."""
        largest = float(self.grid[-1])
        withheld = self.simulator.withheld(largest)
        widths = self.quantiles_at(largest, (target.level,))[0]
        half = self.target_half_widths(target)
        budget = self.budget_text(largest)
        return tuple(
            f"{label}: withheld even at {budget}, too few subsets for an informative estimate"
            if short
            else f"{label}: even at {budget} its interval is ±{width:.3g}, wider than ±{h:.3g} "
            "(nearly all of it sampling error, which no budget removes: merge it with another "
            "group or loosen the target)"
            for label, short, width, h, need in zip(
                self.labels, withheld, widths, half, needed, strict=True
            )
            if not np.isfinite(need)
        )

    def notes(self, target: AccuracyTarget) -> tuple[str, ...]:
        """The simulated model's notes, and the groups whose answer is set by being published
        at all (withheld below it: too few subsets for a smaller budget)."""
        _, envelope = self._raw_and_envelope(target.level)
        half = self.target_half_widths(target)
        meets = envelope <= half
        first_met = np.where(meets.any(axis=0), meets.argmax(axis=0), len(self.grid))
        published = self._published_from()
        set_by_withholding = (
            (first_met == published) & (published > 0) & (published < len(self.grid))
        )
        out = list(super().notes(target))
        if set_by_withholding.any():
            labels = [label for label, flag in zip(self.labels, set_by_withholding, strict=True)
                      if flag]  # fmt: skip
            below = self.budget_text(self.grid[published[set_by_withholding].max()])
            out.append(
                f"{', '.join(labels[:5])}{' and more' if len(labels) > 5 else ''}: withheld at "
                f"smaller budgets (too few subsets for an informative estimate), published from "
                f"about {below}; once published, the target is met, so what they need is set by "
                "being published at all."
            )
        return tuple(out)


def _labels(data: GvdpData, strategy: Strategy) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """The labels, row counts and non-private estimates of what ``strategy`` publishes: one per
    (group, coefficient), then the whole population's; coefficients named when there are
    several."""
    names = data.model.coefficients
    reference = nonprivate(data)

    def named(label: str) -> list[str]:
        return [label] if len(names) == 1 else [f"{label} · {name}" for name in names]

    if strategy == "global_only":
        return tuple(named(POPULATION_LABEL)), np.full(len(names), data.rows), np.asarray(
            reference.population.estimate
        )  # fmt: skip
    labels = [label for group in data.labels for label in named(str(group))]
    sizes = np.repeat(data.group_rows, len(names))
    truth = [group.estimate for group in reference.groups] + [reference.recombined[0]]
    return (
        (*labels, *named(POPULATION_LABEL)),
        np.append(sizes, np.full(len(names), data.rows)),
        np.concatenate(truth),
    )


def _bags(
    data: GvdpData, bounds: GvdpBoundsSpec, settings: GvdpRunSettings, draws: int,
    rng: np.random.Generator,
) -> tuple[list[BootstrapDraws], np.ndarray | None]:  # fmt: skip
    """Each run's bags of little bootstraps, drawn from ``rng`` on the confidential rows, and
    the public shares that recombine them (None: one run on everyone); a ``ValueError`` says
    what stops the release (subsets too small, a fit that would fail in a group)."""
    check_model_bounds(bounds, data.model)
    data.check_k(settings.k, settings.resamples)
    shares = None if settings.strategy == "global_only" else np.asarray(data.shares, float)
    if shares is not None and (problem := data.group_problem(settings.k, settings.resamples)):
        raise ValueError(problem)
    if not data.in_memory:
        return _engine_bags(data, bounds, settings, min(draws, ENGINE_DRAWS), rng), shares
    if shares is None:
        runs = [(data.population, data.rows, data.subsets(settings.k, settings.resamples))]
    else:
        subsets = data.group_subsets(settings.k, settings.resamples)
        runs = list(zip(data.groups, data.group_rows, subsets, strict=True))
    bags = [
        BootstrapDraws.draw(
            rows,
            data.model.estimator,
            int(n),
            int(k),
            bounds.for_rows(int(n), int(k), settings.resamples),
            settings.resamples,
            draws,
            rng,
        )  # fmt: skip
        for rows, n, k in runs
    ]
    return bags, shares


def _engine_bags(
    data: GvdpData, bounds: GvdpBoundsSpec, settings: GvdpRunSettings, draws: int,
    rng: np.random.Generator,
) -> list[BootstrapDraws]:  # fmt: skip
    """As :func:`_bags`, for rows an engine keeps where they lie: each draw is one pass of the
    engine with a salt from ``rng`` (:mod:`dpcore.engines.blb`), which gives every run's bag."""
    if settings.strategy == "global_only":
        k = data.subsets(settings.k, settings.resamples)
        sizes, subsets = (data.rows,), (k,)
        drawn = [[data.bags.population(draw_salt(rng), k, settings.resamples, data.rows)]
                 for _ in range(draws)]  # fmt: skip
    else:
        sizes, subsets = (
            tuple(data.group_rows),
            tuple(data.group_subsets(settings.k, settings.resamples)),
        )
        drawn = [data.bags.groups(draw_salt(rng), subsets, settings.resamples, sizes)
                 for _ in range(draws)]  # fmt: skip
    return [
        BootstrapDraws(
            np.stack([bags[run].estimates for bags in drawn]),
            np.stack([bags[run].variances for bags in drawn]),
            bounds.for_rows(int(n), int(k), settings.resamples),
            int(n),
        )  # fmt: skip
        for run, (n, k) in enumerate(zip(sizes, subsets, strict=True))
    ]


def gvdp_error_model(
    data: GvdpData,
    bounds: GvdpBoundsSpec,
    settings: GvdpRunSettings,
    *,
    replicates: int = PLAN_REPLICATES,
    draws: int = BLB_DRAWS,
) -> GvdpErrorModel:
    """GVDP's errors as functions of ρ (module docstring): a curator preview, since the bag of
    little bootstraps reads the confidential rows."""
    replicates, draws = positive_int("replicates", replicates), positive_int("draws", draws)
    bags, shares = _bags(data, bounds, settings, draws, np.random.default_rng(SEED))
    simulator = GvdpStandardErrors(tuple(RunInputs.of(bag) for bag in bags), shares, settings)
    labels, sizes, truth = _labels(data, settings.strategy)
    return GvdpErrorModel(
        labels=labels, sizes=sizes, shapes=(), unit="rho",
        groups=0 if settings.strategy == "global_only" else len(data.labels) * data.model.d,
        truth=truth, assumptions=_assumptions(data, settings, replicates, draws),
        reads=(
            "each group's rows, on which the bag of little bootstraps measures the sampling "
            "variance",
            "each group's number of rows, which sets its subsets (GVDP treats it as public)",
        ),
        simulator=simulator, grid=PLAN_GRID, replicates=replicates, seed=SEED,
        measured_in=_measured_in(data), typical_half_width=_typical_half_width(bounds),
        check_note=CHECK_NOTE,
    )  # fmt: skip


def _measured_in(data: GvdpData) -> str:
    """The outcome's units for a mean (as the mean per group names them, so a target typed for
    one carries over to the other), else each coefficient's."""
    if data.model.kind == "mean":
        return f"`{data.model.outcome}`"
    return "each coefficient's units"


def _typical_half_width(bounds: GvdpBoundsSpec) -> float:
    """A round ±5% of the narrowest public range (for a guess, of ±the guess before the safety
    factor): public information only."""
    low, high = bounds.public_range()
    if bounds.mode == "guess":
        low, high = low / bounds.factor, high / bounds.factor
    return round_to_one_two_five(TYPICAL_TARGET_OF_RANGE * float(np.min(high - low)))


def _assumptions(
    data: GvdpData, settings: GvdpRunSettings, replicates: int, draws: int
) -> tuple[str, ...]:
    grid = PLAN_GRID
    out = [
        f"GVDP (Covington et al., Alg. 1) with k = {data.subsets(settings.k, settings.resamples):,} subsets of the "
        f"population{' (chosen from its rows)' if settings.k is None else ''}, "
        f"r = {settings.resamples} resamples, t = {settings.steps} steps, β = "
        f"{settings.beta:g} and {settings.mean_fraction:.0%} of ρ for the estimate.",
        "The target is on each interval's half-width z·√(sampling variance bound + noise "
        "variance) (Thm. 2.12, normal case; Thm. 2.10–2.11): the interval at the target's "
        "confidence covers the true value with at least that probability.",
        f"Both terms are simulated: the bag of little bootstraps run {draws} times on each "
        f"group's rows, and {replicates:,} simulated releases at each of {len(grid)} budgets "
        f"from ρ = {grid[0] ** 2:g} to {grid[-1] ** 2:g} (the same random draws at every "
        "budget). The interval's width is itself noisy (its variance bound is a DP estimate): "
        "the planner takes the width that releases stay within with the target's probability.",
        "A group with too few subsets for the budget is withheld (no interval); the planner "
        "counts it as missing the target, so its answer publishes every group. Subsets per "
        "group come from each group's row count, which GVDP treats as public.",
        "A release clips each interval into the public range; the planner scores it before "
        "clipping (never narrower).",
        "The bag of little bootstraps reads each group's rows, so the planner's numbers are a "
        "curator preview.",
    ]
    if data.model.d > 1:
        out.append(
            "One ± target applies to every coefficient; for coefficients in different units a "
            "percentage of each true value (a curator preview) compares them more fairly."
        )
    if settings.strategy == "stratified":
        out.append(
            "The whole population's interval recombines the groups' with their public shares "
            "(variance Σ w_g² V_g), as the release does."
        )
    return tuple(out)


@functools.lru_cache(maxsize=4)
def _seeded_check_bags(
    data: GvdpData, bounds: GvdpBoundsSpec, settings: GvdpRunSettings, draws: int, seed: int
) -> tuple[list[BootstrapDraws], np.ndarray | None]:
    """A check's fresh bags for an integer seed, from their own stream (the seed's child 1; the
    releases' noise takes the seed itself). They depend on the data, bounds, settings and seed,
    not on the budget or the target: the Plan page checks answer after answer at one seed, and
    drawing the bags again took 90 of a target change's 290 ms on the demo."""
    return _bags(data, bounds, settings, draws, np.random.default_rng([seed, 1]))


def check_gvdp_accuracy(
    data: GvdpData,
    bounds: GvdpBoundsSpec,
    settings: GvdpRunSettings,
    budget: ZCDP,
    target: AccuracyTarget,
    *,
    replicates: int = 1000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """How often simulated releases at ``budget`` publish an interval, at the target's level,
    within the target: bags of little bootstraps and privacy noise fresh from ``rng``
    (independent of the model's), a withheld estimate counted as missing.

    Returns one row per estimate: ``estimate``, ``target``, ``met`` and the binomial band
    ``band_low``/``band_high`` of a calibrated ``target.level``
    (:func:`dpcore.foundations.metrics.binomial_band`): the binding estimate should sit in it.
    """
    replicates = positive_int("replicates", replicates)
    generator = as_rng(rng)
    draws = min(CHECK_DRAWS, replicates)
    if isinstance(rng, (int, np.integer)):
        bags, shares = _seeded_check_bags(data, bounds, settings, draws, int(rng))
    else:
        bags, shares = _bags(data, bounds, settings, draws, generator)
    labels, _, truth = _labels(data, settings.strategy)
    half = target.half_widths(truth if target.relative else np.zeros(len(labels)))
    variances = [bag.released_variances(settings, budget.rho, replicates, generator)
                 for bag in bags]  # fmt: skip
    widths = ndtri((1 + target.level) / 2) * np.sqrt(_with_population(variances, shares))
    withheld = _withheld([bag.subsets for bag in bags], shares, settings, budget.rho,
                         data.model.d)  # fmt: skip
    met = (widths <= half) & ~withheld
    band = binomial_band(target.level, replicates)
    return pd.DataFrame(
        {
            "estimate": labels,
            "target": half,
            "met": met.mean(axis=0),
            "band_low": band[0],
            "band_high": band[1],
        }
    )
