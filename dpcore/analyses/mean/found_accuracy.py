r"""The planner for a mean that finds its bounds privately
(:mod:`~dpcore.analyses.mean.found_bounds`): its errors by seeded simulation, and the split of
the budget between the bounds and the means chosen for each target.

The bounds are random and their clipping bias depends on the values, so the error of such a
release has no formula: as for CoinPress (:func:`~dpcore.analyses.mean.accuracy.coinpress_error_model`)
it is simulated — seeded releases on a log grid of budgets, each finding its bounds and clipping
its estimates into them as a release does, every estimate scored against its *true* mean (the
clipping at the found bounds included). One such model per candidate share of the budget for
the bounds (:data:`FRACTIONS`); the planner answers each target with the share that meets it at
the least total budget (:class:`~dpcore.planner.split.BestSplitModel`) and shows both parts.

Pure numpy; never imports streamlit or plotly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from dpcore.analyses.mean.accuracy import (
    DRAW_SEED,
    POPULATION_LABEL,
    _person_assumptions,
    _published,
    _require_rows,
    _typical_half_width,
)
from dpcore.analyses.mean.estimators import LaplaceMean
from dpcore.analyses.mean.found_bounds import PrivatelyBounded, released_found
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import Strategy
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.private_bounds import BOUNDS_SCOPES
from dpcore.planner.simulated import SimulatedErrorModel, log_grid
from dpcore.planner.split import BestSplitModel, SplitChoice

__all__ = ["FRACTIONS", "FoundBoundsErrors", "found_bounds_error_model"]

FRACTIONS = (0.05, 0.1, 0.2, 0.3, 0.4)
"""The shares of the budget for the bounds the planner tries."""
REPLICATES = 1000
"""Simulated releases at each budget of the grid (as many as CoinPress's: the 0.95 quantile of
errors whose tails hold the rare wide bounds needs them)."""
GRID = log_grid(1e-2, 1e2, 3)
"""Budget scales ε (or √ρ) from 0.01 to 100, three per decade."""


@dataclass(frozen=True, eq=False)
class FoundBoundsErrors:
    """The absolute errors of simulated releases that find their bounds, at budget scale s
    (ε, or √ρ), against the true means: the simulator of one split's model."""

    values: GroupValues
    estimator: PrivatelyBounded
    strategy: Strategy
    global_fraction: float

    def __call__(self, scale: float, replicates: int, rng: np.random.Generator) -> np.ndarray:
        laplace = isinstance(self.estimator.base, LaplaceMean)
        budget = PureDP(scale) if laplace else ZCDP(scale**2)
        estimates = released_found(
            self.values, self.estimator, budget, self.strategy, self.global_fraction,
            replicates, rng,
        )  # fmt: skip
        return np.abs(estimates - _published(self.values, self.strategy)[2])


def found_bounds_error_model(
    values: GroupValues,
    estimator: PrivatelyBounded,
    strategy: Strategy = "stratified",
    global_fraction: float = 0.5,
    *,
    replicates: int = REPLICATES,
    fractions: tuple[float, ...] = FRACTIONS,
) -> BestSplitModel:
    """The errors of a release that finds its bounds, one seeded simulated model per share of
    the budget in ``fractions``; each target is answered with the best share (module doc). A
    curator preview: the simulations read the values."""
    _require_rows(values, strategy)
    labels, sizes, truth = _published(values, strategy)
    unit = "epsilon" if isinstance(estimator.base, LaplaceMean) else "rho"
    common = {
        "labels": labels, "sizes": sizes, "shapes": (), "unit": unit,
        "groups": 0 if strategy == "global_only" else values.k, "truth": truth,
        "assumptions": (
            *_assumptions(estimator, replicates, fractions), *_person_assumptions(values.unit)
        ),
        "reads": ("each group's values, from which every simulated release finds its bounds",),
        "typical_half_width": _typical_half_width(*estimator.bounds.search) / 10,
        "check_note": (
            "Curator preview, not differentially private: simulated releases that find their "
            "bounds on the confidential data, each estimate scored against its true mean."
        ),
    }  # fmt: skip
    choices = []
    for fraction in fractions:
        split = PrivatelyBounded(estimator.base, dataclasses.replace(estimator.bounds,
                                                                     fraction=fraction))  # fmt: skip
        model = SimulatedErrorModel(
            **common, simulator=FoundBoundsErrors(values, split, strategy, global_fraction),
            grid=GRID, replicates=replicates, seed=DRAW_SEED,
        )  # fmt: skip
        choices.append(SplitChoice(
            (("finding the bounds", fraction), ("the means", 1 - fraction)),
            {"bounds_fraction": fraction}, model,
        ))  # fmt: skip
    return BestSplitModel(**common, choices=tuple(choices))


def _assumptions(
    estimator: PrivatelyBounded, replicates: int, fractions: tuple[float, ...]
) -> tuple[str, ...]:
    low, high = estimator.bounds.search
    tail = estimator.bounds.tail
    aim = "the automatic aim" if tail is None else f"{tail:.1%} of the values beyond each bound"
    return (
        f"{estimator.base.name} whose bounds are found privately within the search range "
        f"[{low:g}, {high:g}] ({BOUNDS_SCOPES[estimator.bounds.scope]}; {aim}).",
        "The found bounds are random and their clipping bias depends on the values, so the "
        f"error is simulated: {replicates:,} seeded releases at each of {len(GRID)} budgets, "
        "each finding its bounds and clipping its estimates into them, scored against the true "
        f"means ({POPULATION_LABEL.lower()} included).",
        "The planner tries the shares "
        + ", ".join(f"{f:.0%}" for f in fractions)
        + " of the budget for the bounds and answers with the one that meets the target at "
        "the least total budget.",
        "More budget is assumed never to make an estimate worse; the smallest budget is found by "
        "bisection between two budgets of that grid.",
    )
