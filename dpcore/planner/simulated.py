r"""Error models known only by simulation: an estimator whose error is not a fixed law divided by
a budget scale (e.g. CoinPress, whose clipping interval moves with the budget at every step).

The model is an :class:`~dpcore.planner.accuracy.ErrorModel`, so :func:`smallest_budget`,
:func:`shortfall` and :func:`~dpcore.planner.portfolio.split_budget` take it as they take a
closed form. Its *simulator* returns the absolute errors of simulated releases at a budget
scale s (ε, or √ρ), as a (replicates, estimates) array, vectorised over both.

**Common random numbers.** Every simulation at every budget starts from the same seed, so each
replicate's error is a deterministic function of s and the simulated quantile
:math:`\hat q_e(s)` of estimate e moves smoothly with s rather than by Monte Carlo noise; a
budget found to meet a target is met again when simulated there.

**The grid.** :math:`\hat q_e` is simulated on a log grid of budget scales (``grid``) at the
target's level.

**Monotonicity.** The planner assumes that more budget never makes an estimate worse:
:math:`q_e(s)` non-increasing in s, equivalently the probability of meeting a target
non-decreasing. Where the simulated quantile is not monotone on the grid (Monte Carlo noise, or
a clipping interval that tightens with the budget and adds bias), the probability of meeting a
target is replaced by its running minimum from above — scanned from the largest budget down —
which is the error's running maximum from above, :math:`\tilde q_e(s_g) = \max_{g' \ge g}
\hat q_e(s_{g'})`; so a budget said to meet a target meets it at every larger grid budget, which
the plan of several releases relies on (a share at least what a release needs meets its target).
:meth:`SimulatedErrorModel.notes` says where this happened.

**An estimate's needed budget** is the smallest grid scale :math:`s_g` with
:math:`\tilde q_e(s_g) \le h_e`, interpolated linearly in (log s, log q) from the grid point
below (our choice: errors of these estimators fall as a power of the budget, a line in log–log).
**The smallest budget for all estimates** is then refined by bisection in log s between the
binding estimate's two grid points, each step a fresh seeded simulation of every estimate at
the midpoint; the answer is the upper end, at which the simulation met every target. A model
whose releases are too slow to simulate on every change of the target sets ``refine_steps`` to
0: its answer is then the interpolated crossing itself, read off the grid with no simulation
(synthetic data's, :mod:`dpcore.analyses.synth.accuracy`).
The grid's smallest scale is the smallest answer: a target met there is reported as met there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from dpcore.foundations.accounting import SYMBOLS
from dpcore.foundations.labels import plain_number
from dpcore.planner.accuracy import AccuracyTarget, ErrorModel

__all__ = ["ErrorSimulator", "PlannerCost", "SimulatedErrorModel", "duration_text", "log_grid"]

REFINE_STEPS = 12
"""Bisection halvings of log s between two grid points (the default of
:attr:`SimulatedErrorModel.refine_steps`): a bracket of a quarter decade in ρ narrows to 0.03% of
the budget."""
RISE_TOLERANCE = 1e-3
"""A simulated error rising with the budget by less than this fraction is rounding, not a rise."""


@dataclass(frozen=True)
class PlannerCost:
    """Expected seconds of the planner's simulations for one analysis' settings, so that a
    page runs a slow one only when the user asks (0: instant, e.g. a closed form).

    ``model_seconds`` builds the error model (its grid of simulated releases) and
    ``simulation`` says what that is in words ("54 syntheses with MWEM, …");
    ``check_seconds`` checks one answer with fresh simulated releases; ``check_releases`` is
    how many that check runs."""

    model_seconds: float = 0.0
    check_seconds: float = 0.0
    check_releases: int = 0
    simulation: str = ""


def duration_text(seconds: float) -> str:
    """``"about 40 s"``, ``"about 3 min"``, ``"about 2 h"``: rounded, as a guide."""
    if seconds < 10:
        return f"about {max(1, round(seconds))} s"
    if seconds < 90:
        return f"about {round(seconds / 5) * 5} s"
    if seconds < 5400:
        return f"about {round(seconds / 60):.0f} min"
    return f"about {round(seconds / 3600):.0f} h"


class ErrorSimulator(Protocol):
    """Absolute errors of simulated releases at budget scale ``scale``: an array of shape
    (replicates, estimates), drawn with ``rng``. Must pickle (the app caches models)."""

    def __call__(self, scale: float, replicates: int, rng: np.random.Generator) -> np.ndarray: ...


def log_grid(smallest: float, largest: float, per_decade: int) -> np.ndarray:
    """Budget scales from ``smallest`` to ``largest``, ``per_decade`` points per decade."""
    decades = math.log10(largest / smallest)
    return np.logspace(math.log10(smallest), math.log10(largest), round(decades * per_decade) + 1)


@dataclass(frozen=True, eq=False)
class SimulatedErrorModel(ErrorModel):
    """An :class:`ErrorModel` whose errors come from ``simulator`` (module docstring).

    ``grid`` holds increasing budget scales, ``replicates`` the simulated releases at each,
    ``seed`` the seed of every simulation (common random numbers), ``levels`` the confidence
    levels whose grid quantiles are simulated when the model is built (others on first use),
    ``refine_steps`` the bisection's halvings per answer (each a simulation: fewer for a
    simulator whose releases are slow, e.g. synthetic data's).
    ``shapes`` is empty and ``bias`` None: each simulated error is measured against the true
    value, whatever clipping the estimator does included.
    """

    simulator: ErrorSimulator | None = None
    grid: np.ndarray = field(default_factory=lambda: log_grid(1e-3, 1e3, 8))
    replicates: int = 1000
    seed: int = 0
    levels: tuple[float, ...] = (0.8, 0.9, 0.95, 0.99)
    refine_steps: int = REFINE_STEPS
    _quantiles: dict = field(default_factory=dict, init=False, repr=False)

    rows_reason = (
        "this estimator's error does not fall in proportion to a group's size (it adapts to "
        "the rows), so the planner cannot say how many rows a group would need: merge the "
        "smaller groups or choose a coarser grouping, then plan again"
    )

    def rows_needed(self, target: AccuracyTarget, scale: float) -> np.ndarray:
        """Unknown (NaN) for every estimate: :attr:`rows_reason` says why."""
        return np.full(len(self.labels), np.nan)

    def __post_init__(self) -> None:
        if self.simulator is None:
            raise TypeError("`simulator` must be given: the model's errors come from it")
        grid = np.asarray(self.grid, dtype=float)
        if grid.ndim != 1 or len(grid) < 2 or not np.all(grid > 0) or np.any(np.diff(grid) <= 0):
            raise ValueError(f"`grid` must be increasing budget scales above 0, got {self.grid!r}")
        object.__setattr__(self, "grid", grid)
        self._grid_quantiles(self.levels)

    def _simulate(self, scale: float) -> np.ndarray:
        """(replicates, estimates) absolute errors at ``scale``, from the model's seed."""
        return self.simulator(float(scale), self.replicates, np.random.default_rng(self.seed))

    def quantiles_at(self, scale: float, levels: tuple[float, ...]) -> np.ndarray:
        """(levels, estimates): each estimate's error at ``scale`` for each confidence level, the
        level's quantile of its simulated absolute errors. A model whose error at a level is
        another summary of the simulation (e.g. an interval's half-width) overrides this; the
        grid, the envelope and the bisection all go through it."""
        return np.quantile(self._simulate(scale), levels, axis=0)

    def _grid_quantiles(self, levels: tuple[float, ...]) -> None:
        """Simulate the grid once for every level not yet known (one simulation per scale)."""
        missing = tuple(level for level in levels if level not in self._quantiles)
        if not missing:
            return
        per_scale = [self.quantiles_at(s, missing) for s in self.grid]
        stacked = np.stack(per_scale, axis=1)  # (levels, grid, estimates)
        self._quantiles.update(zip(missing, stacked, strict=True))

    def _raw_and_envelope(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        """The simulated quantiles on the grid and their running maximum from above."""
        self._grid_quantiles((level,))
        raw = self._quantiles[level]
        return raw, np.maximum.accumulate(raw[::-1], axis=0)[::-1]

    def _check_target(self, target: AccuracyTarget) -> np.ndarray:
        if target.include_bias:
            raise ValueError(
                "This estimator's simulated errors are measured against each true value, so "
                "they already include its clipping: set the target without the clipping bias."
            )
        return self.target_half_widths(target)

    def needed_scales(self, target: AccuracyTarget) -> np.ndarray:
        """Each estimate's needed scale (inf where the grid's largest misses); the largest of
        them refined by bisection unless ``refine_steps`` is 0 (module docstring)."""
        half = self._check_target(target)
        _, envelope = self._raw_and_envelope(target.level)
        meets = envelope <= half
        first = np.where(meets.any(axis=0), meets.argmax(axis=0), len(self.grid))
        needed = np.array(
            [self._interpolated(e, g, envelope, half[e]) for e, g in enumerate(first)]
        )
        if self.refine_steps and np.all(np.isfinite(needed)) and first.max() > 0:
            binding, scale = self._refine(int(first.max()), half, target.level)
            needed = np.minimum(needed, scale)
            needed[binding] = scale
        return needed

    def _interpolated(self, estimate: int, g: int, envelope: np.ndarray, half: float) -> float:
        if g == len(self.grid):
            return math.inf
        if g == 0:
            return float(self.grid[0])
        (q_low, q_high), (s_low, s_high) = (
            envelope[g - 1 : g + 1, estimate],
            self.grid[g - 1 : g + 1],
        )
        if not 0 < q_high < q_low < math.inf:  # flat, or no error below (e.g. unpublished)
            return float(s_high)
        fraction = math.log(q_low / half) / math.log(q_low / q_high)
        return float(math.exp(math.log(s_low) + fraction * math.log(s_high / s_low)))

    def _refine(self, g: int, half: np.ndarray, level: float) -> tuple[int, float]:
        """The smallest scale in (grid[g − 1], grid[g]] at which a simulation meets every
        target, and the estimate that misses just below it."""
        low, high = float(self.grid[g - 1]), float(self.grid[g])
        below = self._quantiles[level][g - 1]
        for _ in range(self.refine_steps):
            mid = math.sqrt(low * high)
            errors = self.quantiles_at(mid, (level,))[0]
            if np.all(errors <= half):
                high = mid
            else:
                low, below = mid, errors
        return int(np.argmax(below / half)), high

    def half_widths_at(self, scale: float, target: AccuracyTarget) -> np.ndarray:
        """Each estimate's error at ``scale``: the ``target.level`` quantile of its absolute
        error in a seeded simulation there."""
        self._check_target(target)
        return self.quantiles_at(scale, (target.level,))[0]

    def unreachable_reasons(self, target: AccuracyTarget, needed: np.ndarray) -> tuple[str, ...]:
        """The estimates whose error at the grid's largest budget still misses the target."""
        half = self.target_half_widths(target)
        _, envelope = self._raw_and_envelope(target.level)
        largest = self.budget_at(float(self.grid[-1]))
        return tuple(
            f"{label}: even at {largest} its simulated error is ±{plain_number(error, 3)}, above the "
            f"target ±{plain_number(h, 3)}"
            for label, error, h, need in zip(self.labels, envelope[-1], half, needed, strict=True)
            if not np.isfinite(need)
        )

    def notes(self, target: AccuracyTarget) -> tuple[str, ...]:
        """Where the simulated error rose with the budget, and a target met at the grid's
        smallest budget."""
        raw, envelope = self._raw_and_envelope(target.level)
        risen = envelope > raw * (1 + RISE_TOLERANCE)  # (grid, estimates)
        out = []
        if risen.any():
            labels = [label for label, r in zip(self.labels, risen.any(axis=0), strict=True) if r]
            where = np.flatnonzero(risen.any(axis=1))
            out.append(
                f"The simulated error of {_few(labels)} rose with the budget between "
                f"{self.budget_text(self.grid[where[0]])} and "
                f"{self.budget_text(self.grid[min(where[-1] + 1, len(self.grid) - 1)])}: "
                "there the planner takes the error at a budget to be the largest at any larger "
                "budget, so that an answer stays met at every larger budget."
            )
        half = self.target_half_widths(target) if not target.include_bias else None
        if half is not None and np.all(envelope[0] <= half):
            out.append(
                f"Every estimate meets the target at {self.budget_text(self.grid[0])}, the "
                "smallest budget the planner simulates; a smaller one may too."
            )
        return tuple(out)

    def budget_text(self, scale: float) -> str:
        """``ε = 0.316`` for a grid scale: three significant digits, as messages name budgets."""
        budget = self.budget_at(float(scale))
        return ", ".join(f"{SYMBOLS[k]} = {v:.3g}" for k, v in budget.components().items())


def _few(labels: list[str]) -> str:
    shown = ", ".join(labels[:3])
    return shown if len(labels) <= 3 else f"{shown} and {len(labels) - 3} more"
