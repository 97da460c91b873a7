r"""Synthetic data's error model for the planner (:mod:`dpcore.planner`), and its check by
simulation.

**The error.** The planner scores a synthetic release as the Compare page does: for each group of
the Strata page, the 3-way marginal workload error (Rosenblatt, Stoyanovich & Musco, AAAI 2024
arXiv, Def. 14 per group, Fig. 9; :meth:`~dpcore.foundations.metrics.GroupWorkload.score`),

.. math:: W(G, \hat G) = \frac{1}{|\mathcal S|}\sum_{S \in \mathcal S}
          \Bigl\lVert \frac{M_S(G)}{|G|} - \frac{M_S(\hat G)}{|\hat G|} \Bigr\rVert_1 \in [0, 2],

the average, over every 3 of the synthesized columns (fewer with fewer columns), of the L1
distance between the group's real and synthetic shares of each combination; half of it is the
share of the group's rows that would have to change cell to turn one table into the other. Then
the same on all rows (the whole population), as the Compare page reports it. The strategy is the
settings' (one model per group, or one for everyone scored group by group).

**As a function of ε.** No formula gives W: the synthesizer's own model (independent marginals
lose every correlation), the Laplace noise on its counts and the sampling of the synthetic rows
all enter it. :class:`SynthWorkloadErrors` runs seeded syntheses at ε with numpy simulation noise
(:meth:`~dpcore.analyses.synth.workload.EncodedRows.draw`, the Compare page's path) and scores
them, one synthesis per replicate (each a Python call: a synthesis cannot be vectorised over
replicates). :class:`~dpcore.planner.simulated.SimulatedErrorModel` then takes, for a target "at
most h with probability L", the L-quantile of each group's W over the replicates, on a log grid
of ε simulated once (below: how an answer is read off it). Replicate r draws from its own stream at every ε (common random numbers), so
W moves smoothly with ε. W does not fall to 0 as ε grows (the synthesizer's model and the
sampling of rows remain): a target below that floor has no budget, and the planner says so.

**Every synthesizer is planned, at a price said beforehand.** A synthesis cannot be vectorised
over replicates, so the grid costs (budgets × syntheses) × the seconds of one synthesis, and the
simulation is sized per synthesizer (:data:`SIMULATION_SIZES`; our choices, the paper plans no
budget): independent marginals 17 budgets (ε from 0.01 to 100, four per decade) × 12 syntheses;
the full histogram 9 budgets (two per decade) × 8; MWEM 9 × 6; MST and AIM 5 budgets (ε from 0.1
to 10) × 2. :func:`synth_planner_cost` multiplies the syntheses by the seconds of one, timed once
on the data (OpenDP's MST and AIM: :func:`~dpcore.analyses.synth.mbi_models.estimate_seconds`,
since one fit takes minutes); a page shows that estimate on a button and builds the model only
when asked, and refuses a simulation longer than :data:`MAX_PLANNER_SECONDS` with its cost and
the nearest synthesizer the planner simulates in minutes. On the demo (UCI Adult, race × sex,
10,000 synthetic rows, 2 cores) one synthesis and its scoring take about 20 ms with independent
marginals, 70 ms with the full histogram, 150–250 ms with MWEM, 2 min for stratified MST and
75 min for stratified AIM: models of about 4 s, 5 s and 10 s on a quiet machine (twice that
while other work shares the cores); stratified MST (20 min) and AIM are refused, one MST model
for everyone (about 6 min) is offered.

**What the smaller simulations cost in precision.** With r syntheses the L-quantile of a group's
W is read between the largest few of r draws: P(the largest of r is below the true 0.95 quantile)
= 0.95^r, 54% for r = 12, 74% for r = 6 and 90% for r = 2, so the smaller simulations lean
optimistic at a high level. A group's W averages many cells and varies little between
syntheses (on the demo at ε = 1 its standard deviation is 1% to 9% of W, for every group and
each of independent marginals, the full histogram and MWEM), so in budget this is a small
error; the check by fresh syntheses at the answer (a separate step) shows it. Two budgets per decade instead of four halve the grid's cost and widen the
interpolation below.

**A change of target reads the grid, with no synthesis.** An estimate's needed ε is where its
error envelope (the running maximum from above, non-increasing in ε:
:class:`~dpcore.planner.simulated.SimulatedErrorModel`) crosses the target, interpolated
linearly in (log ε, log W) between the two grid budgets around it (``refine_steps`` 0: no
bisection); the errors at a budget (the answer's, the ledger's) are read off the same lines. W
bends as it nears its floor, and the simulated envelope is itself a little noisy, so the line
can err either way, by at most one grid step (1.78 times with four budgets per decade, 3.16 with
two) and in practice :data:`INTERPOLATION_ERROR`: on the demo by race × sex, against a bisection
with fresh syntheses at the same seed, the interpolated ε was 0.88 to 1.03 times the bisected
one with independent marginals (targets 1.2 to 1.6) and 0.93 to 1.14 times with the full
histogram (two budgets per decade).
The check by simulation at the answer then runs :data:`CHECK_REPLICATES` fresh syntheses (2 for
MST and AIM) when asked.

**What the demo shows.** The smallest groups get few synthetic rows (10,000 × a share of 0.3% is
30 rows) against 3-way tables of hundreds of cells, so their workload error stays above 1 at any
budget: the Plan page starts from a target of 1.5 (:data:`TYPICAL_TARGET`), which every group of
the demo meets with independent marginals, one model per group or one for everyone.

Reads of the confidential data: every synthesis is fitted on the group's rows and scored against
them, so every answer is a curator preview.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpcore.analyses.base import PlannerUnavailable
from dpcore.analyses.mean.accuracy import POPULATION_LABEL
from dpcore.analyses.synth.config import (
    METHOD_NAMES,
    PreparedRows,
    Strategy,
    model_columns,
    output_columns,
)
from dpcore.analyses.synth.mbi_models import MBI_METHODS, estimate_seconds
from dpcore.analyses.synth.workload import EncodedRows, build_workload
from dpcore.foundations.labels import plain_number
from dpcore.foundations.metrics import GroupWorkload, binomial_band
from dpcore.foundations.validation import as_rng, positive_int
from dpcore.planner.accuracy import AccuracyTarget
from dpcore.planner.simulated import PlannerCost, SimulatedErrorModel, duration_text, log_grid
from dpcore.release.plan import Progress

__all__ = [
    "CHECK_REPLICATES",
    "MAX_PLANNER_SECONDS",
    "SIMULATION_SIZES",
    "SimulationSize",
    "SynthErrorModel",
    "SynthWorkloadErrors",
    "check_synth_accuracy",
    "seconds_per_synthesis",
    "synth_error_model",
    "synth_planner_cost",
]


@dataclass(frozen=True, eq=False)
class SimulationSize:
    """How much the planner simulates for one synthesizer: ``replicates`` syntheses at each
    budget of ``grid`` (ε), and at most ``check_replicates`` fresh ones to check an answer."""

    grid: np.ndarray
    replicates: int
    check_replicates: int

    @property
    def syntheses(self) -> int:
        """Syntheses that build the error model."""
        return len(self.grid) * self.replicates


CHECK_REPLICATES = 20
"""Most fresh syntheses in a check by simulation (MST and AIM: 2), whatever the Compare page's
replicates."""
_MBI_SIZE = SimulationSize(log_grid(1e-1, 1e1, 2), 2, 2)
SIMULATION_SIZES = {
    "independent": SimulationSize(log_grid(1e-2, 1e2, 4), 12, CHECK_REPLICATES),
    "histogram": SimulationSize(log_grid(1e-2, 1e2, 2), 8, CHECK_REPLICATES),
    "mwem": SimulationSize(log_grid(1e-2, 1e2, 2), 6, CHECK_REPLICATES),
    "mst": _MBI_SIZE,
    "aim": _MBI_SIZE,
}
"""Each synthesizer's simulation (module docstring: what the smaller ones cost in precision)."""
MAX_PLANNER_SECONDS = 600.0
"""The longest simulation a page offers (10 minutes): beyond it the planner says what it would
cost and which synthesizer to plan with instead."""
NEAREST_PLANNED = {"mst": "mwem", "aim": "mwem", "mwem": "independent", "histogram": "independent"}
"""The synthesizer to plan with when one is too slow: MWEM for MST and AIM (it too measures
marginals and fits a model to them), independent marginals for the others."""
MAX_WORKLOAD_ERROR = 2.0
"""The largest a workload error can be (no overlap): the error below the grid's smallest ε."""
INTERPOLATION_ERROR = "within 15% either way"
"""How far the interpolated answer lay from a bisection with fresh syntheses on the demo."""
SEED = 20_240_214
TIMING_EPSILON = 1.0
"""The ε of the one synthesis timed for :func:`seconds_per_synthesis` (its cost barely depends
on ε)."""
TYPICAL_TARGET = 1.5
"""The Plan page's first target: a workload error of at most 1.5 (module docstring: the demo's
smallest groups cannot go below about 1.1 with 10,000 synthetic rows)."""
MEASURED_IN = "workload error, 0 to 2"
CHECK_NOTE = (
    "Curator preview, not differentially private: fresh simulated syntheses on the "
    "confidential rows, counting how often each group's workload error is within the target."
)


def seconds_per_synthesis(prepared: PreparedRows, strategy: Strategy) -> float:
    """Seconds of one synthesis and its scoring on ``prepared``: timed at ε = 1 with simulation
    noise, or for MST and AIM (minutes a fit) the measured time model
    :func:`~dpcore.analyses.synth.mbi_models.estimate_seconds`."""
    config, by = prepared.config, prepared.grouping.spec.by
    if config.method in MBI_METHODS:
        if strategy == "stratified":
            groups = len(prepared.grouping.shares.values)
            return estimate_seconds(config.method, groups, len(model_columns(config, by)))
        return estimate_seconds(config.method, 1, len(output_columns(config, by)))
    simulate = SynthWorkloadErrors(*_encoded(prepared, strategy), prepared)
    times = []
    for _ in range(2):  # the faster of two: the first pays one-off costs (memory, caches)
        started = time.perf_counter()
        simulate(TIMING_EPSILON, 1, np.random.default_rng(SEED))
        times.append(time.perf_counter() - started)
    return min(times)


def synth_planner_cost(
    prepared: PreparedRows, strategy: Strategy, check_releases: int, per_synthesis: float
) -> PlannerCost:
    """The planner's seconds for ``prepared`` at ``per_synthesis`` seconds a synthesis
    (:func:`seconds_per_synthesis`): the error model's grid and a check of
    ``check_releases`` (capped by the synthesizer's :data:`SIMULATION_SIZES`).
    :class:`PlannerUnavailable` when the grid would take more than :data:`MAX_PLANNER_SECONDS`,
    saying what it would cost and what to plan with instead."""
    method = prepared.config.method
    size = SIMULATION_SIZES[method]
    seconds = per_synthesis * size.syntheses
    if seconds > MAX_PLANNER_SECONDS:
        raise PlannerUnavailable(_too_slow(method, strategy, size, per_synthesis))
    checks = min(positive_int("check_releases", check_releases), size.check_replicates)
    simulation = (
        f"{_syntheses(size)} with {METHOD_NAMES[method]}, {_each(per_synthesis)} each on this data"
    )
    return PlannerCost(seconds, per_synthesis * checks, checks, simulation)


def _syntheses(size: SimulationSize) -> str:
    return f"{size.syntheses} syntheses ({size.replicates} at each of {len(size.grid)} budgets)"


def _each(seconds: float) -> str:
    """One synthesis' time: ``"0.21 s"`` below a second, else :func:`duration_text`."""
    return f"{seconds:.2g} s" if seconds < 1 else duration_text(seconds)


def _too_slow(method: str, strategy: Strategy, size: SimulationSize, per_synthesis: float) -> str:
    name, other = METHOD_NAMES[method], METHOD_NAMES[NEAREST_PLANNED[method]]
    model = "one model per group" if strategy == "stratified" else "one model for everyone"
    return (
        f"Planning {name} ({model}) would take {duration_text(per_synthesis * size.syntheses)} "
        f"here: {_syntheses(size)}, each {_each(per_synthesis)}; the planner offers at most "
        f"{duration_text(MAX_PLANNER_SECONDS)}. Plan with {other} instead (the nearest "
        f"synthesizer it simulates in minutes; choose it on the Estimator page), then check "
        f"{name} at that budget on the Compare page."
        + (" One model for everyone is quicker to plan." if strategy == "stratified" else "")
    )


@dataclass
class _Counter:
    """Group models fitted so far across a simulation, for one progress bar."""

    progress: Progress
    total: int
    done: int = 0

    def report(self, group: int, _groups: int) -> None:
        self.progress(self.done + group, self.total)


@dataclass(frozen=True, eq=False)
class SynthWorkloadErrors:
    """The simulator of :func:`synth_error_model`: the workload error of each group, then of all
    rows, for ``replicates`` seeded syntheses at ε = ``scale`` (module docstring); shape
    (replicates, groups + 1). ``encoded`` holds the rows encoded once for ``strategy``."""

    encoded: EncodedRows
    workload: GroupWorkload
    prepared: PreparedRows

    def __call__(self, scale: float, replicates: int, rng: np.random.Generator) -> np.ndarray:
        return self.at(scale, replicates, rng)

    def at(
        self,
        scale: float,
        replicates: int,
        rng: np.random.Generator,
        progress: Progress | None = None,
    ) -> np.ndarray:
        """(replicates, estimates) at ε = ``scale``, ``progress(done, total)`` counting the
        group models fitted."""
        return self._simulate(scale, replicates, rng, self._counter(progress, replicates))

    def on_grid(
        self, grid: np.ndarray, replicates: int, seed: int, progress: Progress | None = None
    ) -> np.ndarray:
        """(grid, replicates, estimates): every budget from ``seed`` (common random numbers),
        ``progress(done, total)`` counting the group models fitted."""
        counter = self._counter(progress, len(grid) * replicates)
        return np.stack(
            [self._simulate(s, replicates, np.random.default_rng(seed), counter) for s in grid]
        )

    def _counter(self, progress: Progress | None, syntheses: int) -> _Counter | None:
        if progress is None:
            return None
        return _Counter(progress, syntheses * len(self.encoded.weights))

    def _simulate(
        self, scale: float, replicates: int, rng: np.random.Generator, counter: _Counter | None
    ) -> np.ndarray:
        streams = rng.spawn(replicates)  # one per replicate: the same draws at every ε
        return np.array([self._score(float(scale), stream, counter) for stream in streams])

    def _score(
        self, epsilon: float, rng: np.random.Generator, counter: _Counter | None
    ) -> np.ndarray:
        report = counter.report if counter is not None else None
        synthetic = self.encoded.draw(self.prepared.config, epsilon, rng, report)
        if counter is not None:
            counter.done += len(self.encoded.weights)
        errors = self.workload.score(synthetic)
        return np.append(errors.groups, errors.overall)


@dataclass(frozen=True, eq=False)
class SynthErrorModel(SimulatedErrorModel):
    """The workload error of each group as a function of ε (module docstring), from the
    syntheses ``errors`` simulated once on the grid, shape (grid, replicates, estimates): a
    target change interpolates on the grid and never synthesizes."""

    errors: np.ndarray | None = None

    rows_reason = (
        "a synthetic group's error comes from the synthesizer's model as much as from its "
        "size, so the planner cannot say how many rows a group would need: merge the smaller "
        "groups or choose a coarser grouping, then plan again"
    )

    unreachable_advice = (
        "Choose a richer synthesizer or more synthetic rows on the Estimator page, merge the "
        "smaller groups on the Strata page, or loosen the target."
    )

    def __post_init__(self) -> None:
        expected = (len(self.grid), self.replicates, len(self.labels))
        if self.errors is None or np.shape(self.errors) != expected:
            raise ValueError(f"`errors` must have shape {expected}, got {np.shape(self.errors)}")
        super().__post_init__()

    def _simulate(self, scale: float) -> np.ndarray:
        """The simulated errors at a grid budget (the model simulates nowhere else)."""
        return self.errors[int(np.argmin(np.abs(np.log(self.grid / scale))))]

    def half_widths_at(self, scale: float, target: AccuracyTarget) -> np.ndarray:
        """Each estimate's error at ε = ``scale``, read off the envelope's lines in
        (log ε, log W) between grid budgets (the lines the needed ε is read from); the floor
        beyond the grid's largest ε, :data:`MAX_WORKLOAD_ERROR` below its smallest."""
        self._check_target(target)
        _, envelope = self._raw_and_envelope(target.level)
        if scale < self.grid[0] * (1 - 1e-12):
            return np.full(len(self.labels), MAX_WORKLOAD_ERROR)
        x, at = np.log(self.grid), np.log(scale)
        g = int(np.clip(np.searchsorted(x, at, side="right"), 1, len(x) - 1))
        weight = min((at - x[g - 1]) / (x[g] - x[g - 1]), 1.0)
        log_error = np.log(np.maximum(envelope[g - 1 : g + 1], np.finfo(float).tiny))
        return np.exp((1 - weight) * log_error[0] + weight * log_error[1])

    def target_half_widths(self, target: AccuracyTarget) -> np.ndarray:
        return super().target_half_widths(_absolute(target))

    def describe(self, target: AccuracyTarget) -> str:
        return target.describe(what="3-way workload error")

    def unreachable_reasons(self, target: AccuracyTarget, needed: np.ndarray) -> tuple[str, ...]:
        """The groups whose workload error stays above the target even at the largest ε."""
        _, envelope = self._raw_and_envelope(target.level)
        largest = self.budget_text(self.grid[-1])
        return tuple(
            f"{label}: even at {largest} its workload error is {plain_number(error, 3)}, above {plain_number(target.amount, 6)} "
            "(what is left is the synthesizer's own model and the sampling of rows, which no "
            "budget removes: a richer synthesizer, more synthetic rows or a looser target)"
            for label, error, need in zip(self.labels, envelope[-1], needed, strict=True)
            if not np.isfinite(need)
        )


def _absolute(target: AccuracyTarget) -> AccuracyTarget:
    """``target``, refused when relative: a workload error has no true value to scale."""
    if target.relative:
        raise ValueError(
            "Synthetic data has no true value to take a percentage of: its error is already a "
            f"share of the rows. Choose “± in {MEASURED_IN}” instead."
        )
    return target


def _encoded(prepared: PreparedRows, strategy: Strategy) -> tuple[EncodedRows, GroupWorkload]:
    grouping = prepared.grouping
    encoded = EncodedRows.of(prepared, prepared.config, grouping.spec, grouping.shares, strategy)
    return encoded, build_workload(prepared, prepared.config, grouping.spec)


def synth_error_model(
    prepared: PreparedRows,
    strategy: Strategy,
    *,
    size: SimulationSize | None = None,
    progress: Progress | None = None,
) -> SynthErrorModel:
    """Each group's workload error as a function of ε (module docstring): a curator preview,
    since every synthesis is fitted on and scored against the confidential rows. ``size``
    defaults to the synthesizer's :data:`SIMULATION_SIZES`; ``progress(done, total)`` counts
    the group models fitted (a page's progress bar)."""
    size = size or SIMULATION_SIZES[prepared.config.method]
    replicates = positive_int("replicates", size.replicates)
    encoded, workload = _encoded(prepared, strategy)
    simulator = SynthWorkloadErrors(encoded, workload, prepared)
    return SynthErrorModel(
        labels=(*workload.labels, POPULATION_LABEL),
        sizes=np.append(workload.sizes, workload.sizes.sum()),
        shapes=(), unit="epsilon", groups=len(workload.labels),
        assumptions=_assumptions(prepared, strategy, replicates, np.asarray(size.grid)),
        reads=("each group's rows, on which every simulated synthesis is fitted and scored",),
        simulator=simulator, grid=size.grid, replicates=replicates, seed=SEED, refine_steps=0,
        errors=simulator.on_grid(np.asarray(size.grid, dtype=float), replicates, SEED, progress),
        measured_in=MEASURED_IN, typical_half_width=TYPICAL_TARGET, check_note=CHECK_NOTE,
    )  # fmt: skip


def _assumptions(
    prepared: PreparedRows, strategy: Strategy, replicates: int, grid: np.ndarray
) -> tuple[str, ...]:
    config = prepared.config
    model = "one model per group" if strategy == "stratified" else "one model for everyone"
    return (
        f"{METHOD_NAMES[config.method].capitalize()}, {model}, {config.n_rows:,} synthetic rows "
        "in proportion to the public shares.",
        "Each group's error is the Compare page's 3-way workload error (AAAI 2024, Def. 14): the "
        "average, over every 3 synthesized columns, of the L1 distance between the group's real "
        "and synthetic shares of each combination, from 0 (the same tables) to 2 (no overlap); "
        "half of it is the share of the group's rows in the wrong cell. The whole population's "
        "is the same on all rows.",
        f"It has no formula, so it is simulated once: {replicates} syntheses at each of "
        f"{len(grid)} budgets from ε = {grid[0]:g} to {grid[-1]:g} (the same random draws at "
        "every budget); the target is met when the error is within it in the target's share of "
        "syntheses. Between two of those budgets the answer is read off a straight line on log "
        "scales (on the demo within 15% of a finer search), so a change of target costs no "
        "new synthesis; the check below runs fresh syntheses at the answer.",
        "The error does not fall to 0 however large the budget: the synthesizer's own model "
        "and the sampling of rows remain.",
        "Every synthesis is fitted on the group's rows and scored against them, so the "
        "planner's numbers are a curator preview.",
    )


def check_synth_accuracy(
    prepared: PreparedRows,
    strategy: Strategy,
    epsilon: float,
    target: AccuracyTarget,
    *,
    replicates: int = CHECK_REPLICATES,
    rng: np.random.Generator | int | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """How often fresh syntheses at ``epsilon`` (streams from ``rng``, independent of the
    model's) have each group's workload error within ``target``; ``progress(done, total)``
    counts the group models fitted.

    Returns one row per estimate: ``estimate``, ``target``, ``met`` and the binomial band
    ``band_low``/``band_high`` of a calibrated ``target.level``
    (:func:`dpcore.foundations.metrics.binomial_band`): the binding group should sit in it.
    """
    replicates, target = positive_int("replicates", replicates), _absolute(target)
    encoded, workload = _encoded(prepared, strategy)
    simulate = SynthWorkloadErrors(encoded, workload, prepared)
    errors = simulate.at(float(epsilon), replicates, as_rng(rng), progress)
    band = binomial_band(target.level, replicates)
    return pd.DataFrame(
        {
            "estimate": (*workload.labels, POPULATION_LABEL),
            "target": target.amount,
            "met": (errors <= target.amount).mean(axis=0),
            "band_low": band[0],
            "band_high": band[1],
        }
    )
