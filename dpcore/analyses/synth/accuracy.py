r"""Synthetic data's error model for the planner (:mod:`dpcore.planner`), and its check by
simulation.

**The error.** The planner scores a synthetic release as the Compare page does: for each group of
the Strata page, the 3-way marginal workload error (Rosenblatt, Stoyanovich & Musco, AAAI 2024
arXiv, Def. 14 per group, Fig. 9; :meth:`~dpcore.metrics.GroupWorkload.score`),

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
of ε, and bisects. Replicate r draws from its own stream at every ε (common random numbers), so
W moves smoothly with ε. W does not fall to 0 as ε grows (the synthesizer's model and the
sampling of rows remain): a target below that floor has no budget, and the planner says so.

**Choices** (ours; the paper plans no budget). ε from 0.01 to 100, four per decade
(:data:`PLAN_GRID`, 17 budgets); :data:`PLAN_REPLICATES` syntheses at each; :data:`REFINE_STEPS`
bisection halvings, so an answer lies within 16% above the smallest budget the simulation would
find. On the demo (UCI Adult, race × sex, 10,000 synthetic rows) a synthesis with independent
marginals and its scoring take about 11 ms, the full histogram 50–70 ms, MWEM 150–200 ms: the
model is built from 17 × 12 syntheses (2–3 s with independent marginals, 11–15 s with the full
histogram) and each target change costs 2 × 12 more and a check of :data:`CHECK_REPLICATES`, so
only independent marginals are planned (:data:`PLANNED_METHODS`); the full histogram, MWEM, MST
and AIM raise :class:`~dpcore.analyses.base.PlannerUnavailable` saying what to do instead.

**What the demo shows.** The smallest groups get few synthetic rows (10,000 × a share of 0.3% is
30 rows) against 3-way tables of hundreds of cells, so their workload error stays above 1 at any
budget: the Plan page starts from a target of 1.5 (:data:`TYPICAL_TARGET`), which every group of
the demo meets with independent marginals, one model per group or one for everyone.

Reads of the confidential data: every synthesis is fitted on the group's rows and scored against
them, so every answer is a curator preview.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpcore._validate import as_rng, positive_int
from dpcore.analyses.base import PlannerUnavailable
from dpcore.analyses.mean.accuracy import POPULATION_LABEL
from dpcore.analyses.synth.config import METHOD_NAMES, PreparedRows, Strategy
from dpcore.analyses.synth.mbi_models import MBI_METHODS
from dpcore.analyses.synth.workload import EncodedRows, build_workload
from dpcore.metrics import GroupWorkload, binomial_band
from dpcore.planner.accuracy import AccuracyTarget
from dpcore.planner.simulated import SimulatedErrorModel, log_grid

__all__ = [
    "CHECK_REPLICATES",
    "PLANNED_METHODS",
    "PLAN_GRID",
    "PLAN_REPLICATES",
    "REFINE_STEPS",
    "SECONDS_PER_SYNTHESIS",
    "SynthErrorModel",
    "SynthWorkloadErrors",
    "check_synth_accuracy",
    "synth_error_model",
    "unplanned_reason",
]

PLANNED_METHODS = ("independent",)
"""The synthesizers fast enough to simulate the planner's few hundred releases in seconds."""
SECONDS_PER_SYNTHESIS = {"histogram": 0.06, "mwem": 0.2}
"""Measured on the demo (race × sex, 10,000 rows), for the message that refuses them."""
PLAN_GRID = log_grid(1e-2, 1e2, 4)
"""Budget scales ε from 0.01 to 100, four per decade (17 budgets)."""
PLAN_REPLICATES = 12
"""Syntheses at each budget. Few, since each is a full synthesis; a group's W varies little
between syntheses (it averages many cells), so its 0.95 quantile is close to the largest of 12."""
REFINE_STEPS = 2
"""Halvings of the quarter decade between two grid budgets: the answer is at most 1.16 times the
smallest budget the simulation would find, and a target change costs 2 × 12 syntheses."""
CHECK_REPLICATES = 20
"""Most fresh syntheses in a check by simulation, whatever the Compare page's replicates: a
check runs on every target change (20 syntheses with independent marginals: about 0.2 s)."""
SEED = 20_240_214
TYPICAL_TARGET = 1.5
"""The Plan page's first target: a workload error of at most 1.5 (module docstring: the demo's
smallest groups cannot go below about 1.1 with 10,000 synthetic rows)."""
MEASURED_IN = "workload error, 0 to 2"
CHECK_NOTE = (
    "Curator preview, not differentially private: fresh simulated syntheses on the "
    "confidential rows, counting how often each group's workload error is within the target."
)


def unplanned_reason(method: str) -> str | None:
    """Why the planner cannot simulate ``method`` interactively and what to do (None: it can)."""
    if method in PLANNED_METHODS:
        return None
    name = METHOD_NAMES.get(method, method)
    cost = (
        "fits each model with OpenDP in 30 seconds to 10 minutes"
        if method in MBI_METHODS
        else f"takes about {SECONDS_PER_SYNTHESIS.get(method, 0.1):g} s per synthesis on the demo"
    )
    return (
        f"The planner cannot plan {name}: it {cost}, and the planner simulates a few hundred "
        "syntheses. Choose independent marginals on the Estimator page to "
        f"plan a budget, then check {name} at that budget on the Compare page."
    )


@dataclass(frozen=True, eq=False)
class SynthWorkloadErrors:
    """The simulator of :func:`synth_error_model`: the workload error of each group, then of all
    rows, for ``replicates`` seeded syntheses at ε = ``scale`` (module docstring); shape
    (replicates, groups + 1). ``encoded`` holds the rows encoded once for ``strategy``."""

    encoded: EncodedRows
    workload: GroupWorkload
    prepared: PreparedRows

    def __call__(self, scale: float, replicates: int, rng: np.random.Generator) -> np.ndarray:
        streams = rng.spawn(replicates)  # one per replicate: the same draws at every ε
        return np.array([self._score(scale, stream) for stream in streams])

    def _score(self, epsilon: float, rng: np.random.Generator) -> np.ndarray:
        errors = self.workload.score(self.encoded.draw(self.prepared.config, epsilon, rng))
        return np.append(errors.groups, errors.overall)


@dataclass(frozen=True, eq=False)
class SynthErrorModel(SimulatedErrorModel):
    """The workload error of each group as a function of ε (module docstring). Each budget's
    syntheses are kept once simulated (a bisection's last budget is the answer's)."""

    _simulated: dict = field(default_factory=dict, init=False, repr=False)

    rows_reason = (
        "a synthetic group's error comes from the synthesizer's model as much as from its "
        "size, so the planner cannot say how many rows a group would need: merge the smaller "
        "groups or choose a coarser grouping, then plan again"
    )

    def _simulate(self, scale: float) -> np.ndarray:
        if scale not in self._simulated:
            self._simulated[scale] = super()._simulate(scale)
        return self._simulated[scale]

    def target_half_widths(self, target: AccuracyTarget) -> np.ndarray:
        return super().target_half_widths(_absolute(target))

    def unreachable_reasons(self, target: AccuracyTarget, needed: np.ndarray) -> tuple[str, ...]:
        """The groups whose workload error stays above the target even at the largest ε."""
        _, envelope = self._raw_and_envelope(target.level)
        largest = self.budget_text(self.grid[-1])
        return tuple(
            f"{label}: even at {largest} its workload error is {error:.3g}, above {target.amount:g} "
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
    replicates: int = PLAN_REPLICATES,
    grid: np.ndarray = PLAN_GRID,
    refine_steps: int = REFINE_STEPS,
) -> SynthErrorModel:
    """Each group's workload error as a function of ε (module docstring): a curator preview,
    since every synthesis is fitted on and scored against the confidential rows. ``replicates``,
    ``grid`` and ``refine_steps`` default to the Plan page's choices."""
    replicates = positive_int("replicates", replicates)
    reason = unplanned_reason(prepared.config.method)
    if reason is not None:
        raise PlannerUnavailable(reason)
    encoded, workload = _encoded(prepared, strategy)
    return SynthErrorModel(
        labels=(*workload.labels, POPULATION_LABEL),
        sizes=np.append(workload.sizes, workload.sizes.sum()),
        shapes=(), unit="epsilon", groups=len(workload.labels),
        assumptions=_assumptions(prepared, strategy, replicates, np.asarray(grid), refine_steps),
        reads=("each group's rows, on which every simulated synthesis is fitted and scored",),
        simulator=SynthWorkloadErrors(encoded, workload, prepared), grid=grid,
        replicates=replicates, seed=SEED, refine_steps=refine_steps,
        measured_in=MEASURED_IN, typical_half_width=TYPICAL_TARGET, check_note=CHECK_NOTE,
    )  # fmt: skip


def _assumptions(
    prepared: PreparedRows, strategy: Strategy, replicates: int, grid: np.ndarray, halvings: int
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
        f"It has no formula, so it is simulated: {replicates} syntheses at each of {len(grid)} "
        f"budgets from ε = {grid[0]:g} to {grid[-1]:g} (the same random draws at every budget), "
        f"then {halvings} halvings between two of them; the target is met when the error is "
        "within it in the target's share of syntheses.",
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
) -> pd.DataFrame:
    """How often fresh syntheses at ``epsilon`` (streams from ``rng``, independent of the
    model's) have each group's workload error within ``target``.

    Returns one row per estimate: ``estimate``, ``target``, ``met`` and the binomial band
    ``band_low``/``band_high`` of a calibrated ``target.level``
    (:func:`dpcore.metrics.binomial_band`): the binding group should sit in it.
    """
    replicates, target = positive_int("replicates", replicates), _absolute(target)
    encoded, workload = _encoded(prepared, strategy)
    simulate = SynthWorkloadErrors(encoded, workload, prepared)
    errors = simulate(float(epsilon), replicates, as_rng(rng))
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
