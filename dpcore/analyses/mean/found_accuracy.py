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
import pandas as pd

from dpcore.analyses.mean.accuracy import (
    DRAW_SEED,
    POPULATION_LABEL,
    SimulatedMeanErrors,
    _person_assumptions,
    _published,
    _require_rows,
    _typical_half_width,
)
from dpcore.analyses.mean.estimators import LaplaceMean
from dpcore.analyses.mean.found_bounds import PrivatelyBounded, released_found
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import Strategy, run_strategy
from dpcore.foundations.accounting import ZCDP, Budget, PureDP
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.private_bounds import BOUNDS_SCOPES
from dpcore.planner.simulated import SimulatedErrorModel, log_grid
from dpcore.planner.split import BestSplitModel, SplitChoice

__all__ = ["FRACTIONS", "FoundBoundsErrors", "bounds_costs", "found_bounds_error_model"]

FRACTIONS = (0.05, 0.1, 0.2, 0.3, 0.4)
"""The shares of the budget for the bounds the planner tries."""
REPLICATES = 1000
"""Simulated releases at each budget of the grid (as many as CoinPress's: the 0.95 quantile of
errors whose tails hold the rare wide bounds needs them)."""
GRID = log_grid(1e-2, 1e2, 3)
"""Budget scales ε (or √ρ) from 0.01 to 100, three per decade."""


@dataclass(frozen=True, eq=False)
class FoundBoundsErrors(SimulatedMeanErrors):
    """The errors of simulated releases that find their bounds, at budget scale s (ε, or
    √ρ): the simulator of one split's model."""

    estimator: PrivatelyBounded

    def released(self, scale: float, replicates: int, rng: np.random.Generator) -> np.ndarray:
        laplace = isinstance(self.estimator.base, LaplaceMean)
        budget = PureDP(scale) if laplace else ZCDP(scale**2)
        return released_found(
            self.values, self.estimator, budget, self.strategy, self.global_fraction,
            replicates, rng,
        )  # fmt: skip


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


def bounds_costs(
    values: GroupValues,
    estimator: PrivatelyBounded,
    budget: Budget,
    *,
    replicates: int,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    r"""What the bounds cost each group's estimate, typed (the search range) beside found
    privately, in ``replicates`` simulated stratified releases at a person's ``budget`` (a
    curator preview: the truth is confidential).

    For each group and way of bounding, over the releases: the clipping ``bias`` (the mean of
    the clipped mean at the release's bounds minus the true mean), the ``noise`` (the root mean
    square of the estimate around the clipped mean it estimates) and the ``rmse`` against the
    true mean (at least each part: with random bounds the bias also varies between releases),
    with the median bounds (``low``, ``high``). Estimates are clipped into their bounds, as a
    release clips them.
    """
    generator = np.random.default_rng(rng)
    shares = values.shares if values.shares is not None else values.sizes / values.n
    sizes = np.asarray(values.sizes, dtype=float)
    rows = []
    for method, used in (("typed", estimator.base), ("found", estimator)):
        result = run_strategy(
            "stratified", values, used, values.unit.row_budget(budget), shares,
            replicates=replicates, noise=SimulationNoise(rng=generator),
        )  # fmt: skip
        if result.bounds is None:
            low, high = (np.full((replicates, values.k), b) for b in used.bounds)
        else:
            low, high = (np.broadcast_to(b, (replicates, values.k)) for b in
                         (result.bounds.low, result.bounds.high))  # fmt: skip
        clipped = values.clipped_sums(low, high) / np.maximum(sizes, 1)
        estimates = np.clip(result.group_estimates, low, high)
        truth = np.asarray(values.means)
        for g, label in enumerate(values.labels):
            rows.append({
                "group": label, "size": int(values.sizes[g]), "method": method,
                "low": float(np.median(low[:, g])), "high": float(np.median(high[:, g])),
                "bias": float(np.mean(clipped[:, g] - truth[g])),
                "noise": float(np.sqrt(np.mean((estimates[:, g] - clipped[:, g]) ** 2))),
                "rmse": float(np.sqrt(np.mean((estimates[:, g] - truth[g]) ** 2))),
            })  # fmt: skip
    return pd.DataFrame(rows)
