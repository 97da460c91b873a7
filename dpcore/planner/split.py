"""The planner choosing how a release splits its budget between its mechanisms (e.g. finding its
bounds privately, then estimating with the rest): among a few candidate splits, each with its own
error model, the one that meets a target at the least total budget.

:class:`BestSplitModel` is an :class:`~dpcore.planner.accuracy.ErrorModel` like any other (the
Plan page and ``strata-lab plan`` call :func:`~dpcore.planner.accuracy.smallest_budget` on it);
for each target it answers with the split whose own model needs the smallest budget scale for
its binding estimate, says which in a note, and names the settings that make a release run that
split (:meth:`ErrorModel.settings_changes`).

Pure numpy; never imports an analysis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpcore.foundations.accounting import SYMBOLS
from dpcore.planner.accuracy import AccuracyTarget, ErrorModel

__all__ = ["BestSplitModel", "SplitChoice"]


@dataclass(frozen=True, eq=False)
class SplitChoice:
    """One way of splitting the budget: its ``parts`` as (what, share) pairs adding up to 1,
    the analysis' settings that run it (``changes``), and the error model of a release that
    splits its budget so."""

    parts: tuple[tuple[str, float], ...]
    changes: dict
    model: ErrorModel

    def __post_init__(self) -> None:
        total = sum(share for _, share in self.parts)
        if not self.parts or not math.isclose(total, 1.0, abs_tol=1e-9):
            raise ValueError(f"`parts` must be shares adding up to 1, got {self.parts!r}")


@dataclass(frozen=True, eq=False)
class BestSplitModel(ErrorModel):
    """The best of ``choices`` for each target (module doc); its own labels, sizes, truth and
    unit are the choices' (they model the same estimates)."""

    choices: tuple[SplitChoice, ...] = ()
    _chosen: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.choices:
            raise ValueError("`choices` must hold at least one way of splitting the budget")
        for choice in self.choices:
            model = choice.model
            if model.labels != self.labels or model.unit != self.unit:
                raise ValueError("every choice must model the same estimates in the same unit")

    def choice(self, target: AccuracyTarget) -> SplitChoice:
        """The split that meets ``target`` at the least budget (the first of equals; the first
        choice when none meets it)."""
        if target not in self._chosen:
            needed = [float(np.max(c.model.needed_scales(target))) for c in self.choices]
            best = int(np.argmin(needed)) if np.isfinite(min(needed)) else 0
            self._chosen[target] = (self.choices[best], needed)
        return self._chosen[target][0]

    def needed_scales(self, target: AccuracyTarget) -> np.ndarray:
        return self.choice(target).model.needed_scales(target)

    def half_widths_at(self, scale: float, target: AccuracyTarget) -> np.ndarray:
        return self.choice(target).model.half_widths_at(scale, target)

    def unreachable_reasons(self, target: AccuracyTarget, needed: np.ndarray) -> tuple[str, ...]:
        return self.choice(target).model.unreachable_reasons(target, needed)

    def rows_needed(self, target: AccuracyTarget, scale: float) -> np.ndarray:
        return self.choice(target).model.rows_needed(target, scale)

    def describe(self, target: AccuracyTarget) -> str:
        return self.choice(target).model.describe(target)

    def target_half_widths(self, target: AccuracyTarget) -> np.ndarray:
        return self.choice(target).model.target_half_widths(target)

    def parts(self, target: AccuracyTarget) -> tuple[tuple[str, float], ...]:
        return self.choice(target).parts

    def settings_changes(self, target: AccuracyTarget) -> dict:
        return dict(self.choice(target).changes)

    def notes(self, target: AccuracyTarget) -> tuple[str, ...]:
        chosen = self.choice(target)
        _, needed = self._chosen[target]
        split = ", ".join(f"{share:.0%} {what}" for what, share in chosen.parts)
        tried = "; ".join(
            f"{_first_share(c)}: {self.budget_text(n)}"
            for c, n in zip(self.choices, needed, strict=True)
        )
        return (
            *chosen.model.notes(target),
            f"The planner split the budget: {split} — the split, of those it tried, that meets "
            f"the target at the least budget ({tried}).",
        )

    def budget_text(self, scale: float) -> str:
        if not math.isfinite(scale):
            return "none meets it"
        budget = self.budget_at(scale)
        return ", ".join(f"{SYMBOLS[k]} = {v:.3g}" for k, v in budget.components().items())


def _first_share(choice: SplitChoice) -> str:
    what, share = choice.parts[0]
    return f"{share:.0%} {what}"
