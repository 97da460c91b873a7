r"""A plan of several releases: what the ledger has left, split among them.

Each planned release has an :class:`~dpcore.planner.accuracy.ErrorModel` and an
:class:`~dpcore.planner.accuracy.AccuracyTarget`, and may be *locked* at a budget (a release
with a fixed budget is a locked one). The releases compose sequentially on the same people, so
their charges add up in the ledger's unit: ε under basic composition (Dwork & Roth 2014,
Thm. 3.16), ρ under zCDP (Bun & Steinke 2016, Lemma 2.3); :func:`dpcore.foundations.accounting.sequential`.

**The rule.** Locked releases take their own charge :math:`\ell_j`. Every other release *i*
first gets the smallest budget that meets its target (:func:`~dpcore.planner.smallest_budget`),
charged :math:`n_i`; then all of them are scaled by one common factor

.. math:: c = \frac{R - \sum_j \ell_j}{\sum_i n_i},

so that together they use exactly what remains, R: release *i* is charged :math:`c\,n_i`. Every
unlocked release meets its target iff c ≥ 1; below 1 each misses it, by an amount the table
states. We chose a common factor on the *charges* (rather than e.g. equal errors) because it
keeps each release's needs in proportion, is the rule DP Creator's users know (lock some,
rebalance the rest), and makes "does the plan fit?" one number.

**From a charge to a budget.** Every mechanism the planner covers adds noise proportional to
1/s at budget scale s (:mod:`dpcore.planner.accuracy`), and its ledger charge grows as
:math:`s^p`: p = 1 for ε in an ε ledger, p = 2 in a ρ ledger (ρ = ε²/2 for Laplace,
Bun & Steinke 2016, Prop. 1.4; ρ = s² for the Gaussian; ρ ∝ ε² for the classic Gaussian
calibration of Miao & Li 2022, eq. 5, since its σ ∝ 1/ε). So a charge :math:`c\,n_i` is
budget scale :math:`s_i^\ast c^{1/p}`. Charges are then checked in exact decimal, as the ledger
counts them, and nudged down where binary rounding would overspend by an ulp.

**Expected accuracy.** At its budget each release reports the estimate that fares worst against
its target (the largest ratio of error to target half-width), its error there — the half-width
at the target's level, in the value's units (:meth:`ErrorModel.half_widths_at`) — and whether
every estimate meets the target.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

import numpy as np
import pandas as pd

from dpcore.foundations.accounting import ZCDP, Budget, PureDP, exact_components, format_components
from dpcore.foundations.labels import plain_number
from dpcore.foundations.validation import instance_of
from dpcore.planner.accuracy import AccuracyTarget, ErrorModel, smallest_budget

__all__ = ["PlannedRelease", "PortfolioSplit", "ReleaseShare", "split_budget"]

LedgerUnit = Literal["epsilon", "rho"]
_MET_TOLERANCE = 1e-9
"""Relative slack when comparing an error with its target: at c = 1 they agree to rounding."""
_NUDGES = 64
"""Most downward nudges of the factor before the charges fit in exact decimal (one or two do)."""


@dataclass(frozen=True, eq=False)
class PlannedRelease:
    """One release of a plan.

    ``label`` names it; ``model`` and ``target`` say what it publishes and the accuracy it
    needs; ``locked``, when given, fixes its budget (ε or ρ; converted to the model's unit).
    ``cost`` maps a budget in the model's unit to what a release at it takes from the ledger
    (an analysis' :meth:`~dpcore.analyses.base.Analysis.cost`); by default the budget itself.
    """

    label: str
    model: ErrorModel
    target: AccuracyTarget
    locked: Budget | None = None
    cost: Callable[[Budget], Budget] | None = None

    def __post_init__(self) -> None:
        instance_of("label", self.label, str)
        if not self.label.strip():
            raise ValueError("`label` must name the release, got an empty string")
        instance_of("model", self.model, ErrorModel)
        instance_of("target", self.target, AccuracyTarget)
        if self.locked is not None and not isinstance(self.locked, PureDP | ZCDP):
            raise TypeError(
                f"`locked` must be a PureDP or ZCDP budget, or None, got {self.locked!r}"
            )

    def charged_budget(self, scale: float) -> Budget:
        """What a release at budget scale ``scale`` takes from the ledger."""
        budget = self.model.budget_at(scale)
        return budget if self.cost is None else self.cost(budget)


@dataclass(frozen=True)
class ReleaseShare:
    """One release's part of a plan: the budget it runs at (in its model's unit), what that
    takes from the ledger (``charge``, in the ledger's unit), the charge its target alone needs
    (``needed``; None when no budget meets it), and its worst estimate's error against that
    estimate's target (both half-widths in the value's units, at the target's level)."""

    label: str
    locked: bool
    budget: Budget
    charge: float
    needed: float | None
    worst: str
    error: float
    target: float
    meets: bool


@dataclass(frozen=True, eq=False)
class PortfolioSplit:
    """A plan's releases with their budgets (:func:`split_budget`).

    ``available`` is what was split; ``factor`` the common factor on the unlocked releases'
    needs (None when every release is locked); ``total`` what the releases take together and
    ``left`` what remains after them, in ``unit``.
    """

    available: Budget
    unit: LedgerUnit
    shares: tuple[ReleaseShare, ...]
    factor: float | None
    total: float
    left: float

    @property
    def short(self) -> tuple[ReleaseShare, ...]:
        """The releases that miss their target at their budget."""
        return tuple(share for share in self.shares if not share.meets)

    def shortfall_lines(self) -> list[str]:
        """One sentence per release that misses its target: by how much, and where."""
        return [
            f"{share.label}: ±{plain_number(share.error, 3)} against a target of ±{plain_number(share.target, 3)} "
            f"({share.worst})"
            for share in self.short
        ]

    def table(self) -> pd.DataFrame:
        """One row per release: its budget, charge, what it needs, and its expected accuracy."""
        symbol = "ε" if self.unit == "epsilon" else "ρ"
        return pd.DataFrame(
            {
                "release": [s.label for s in self.shares],
                "locked": [s.locked for s in self.shares],
                f"charge ({symbol})": [s.charge for s in self.shares],
                f"needs ({symbol})": [
                    np.nan if s.needed is None else s.needed for s in self.shares
                ],
                "expected error (±)": [s.error for s in self.shares],
                "target (±)": [s.target for s in self.shares],
                "worst estimate": [s.worst for s in self.shares],
                "meets target": [s.meets for s in self.shares],
            }
        )


def split_budget(releases: Sequence[PlannedRelease], available: Budget) -> PortfolioSplit:
    """Split ``available`` (what the ledger has left: ε or ρ) among ``releases`` by the rule
    of the module docstring.

    ``ValueError`` with a message saying what to change for an empty plan, locked releases
    that take more than is available (or all of it while others wait), a target no budget
    meets, a release whose cost the ledger's unit cannot count, and a budget beyond what a
    release's mechanism can run at.
    """
    releases, unit = _validate(releases, available)
    remaining = exact_components(available, available.kind)[unit]
    locked = [r for r in releases if r.locked is not None]
    scales = {id(r): r.model.scale_within(r.locked) for r in locked}
    for release in locked:
        _check_limit(release, scales[id(release)])
    locked_total = sum((_charge(r, scales[id(r)], available) for r in locked), Decimal(0))
    if locked_total > remaining:
        raise ValueError(
            f"The locked releases take {_amount(unit, locked_total)}, more than the "
            f"{_amount(unit, remaining)} available. Unlock one of them or lower its budget."
        )
    needed = {id(r): _needed_scale(r, required=r.locked is None) for r in releases}
    free = [r for r in releases if r.locked is None]
    factor = None
    if free:
        factor = _fit_factor(free, needed, remaining - locked_total, available)
        power = 1 if unit == "epsilon" else 2
        scales.update({id(r): needed[id(r)] * factor ** (1 / power) for r in free})
    charges = [_charge(r, scales[id(r)], available) for r in releases]
    shares = tuple(
        _share(r, scales[id(r)], charge, needed[id(r)], available)
        for r, charge in zip(releases, charges, strict=True)
    )
    total = sum(charges, Decimal(0))
    return PortfolioSplit(available, unit, shares, factor, float(total), float(remaining - total))


def _validate(
    releases: Sequence[PlannedRelease], available: Budget
) -> tuple[tuple[PlannedRelease, ...], LedgerUnit]:
    if not isinstance(available, PureDP | ZCDP):
        raise TypeError(
            f"`available` must be a PureDP or ZCDP budget (what the ledger has left), got "
            f"{available!r}"
        )
    releases = tuple(releases)
    if not releases:
        raise ValueError(
            "The plan has no releases yet: add one with “Add this release to the plan”."
        )
    for i, release in enumerate(releases):
        instance_of(f"releases[{i}]", release, PlannedRelease)
    labels = [r.label for r in releases]
    if len(set(labels)) < len(labels):
        twice = sorted({label for label in labels if labels.count(label) > 1})
        raise ValueError(
            f"Two releases of the plan share the name {', '.join(twice)}: rename one, so that "
            "each can be told apart in the ledger."
        )
    return releases, "epsilon" if isinstance(available, PureDP) else "rho"


def _amount(unit: LedgerUnit, value: Decimal | float) -> str:
    return format_components({unit: value})


def _charge(release: PlannedRelease, scale: float, available: Budget) -> Decimal:
    """The release's charge at ``scale`` in ``available``'s unit, exactly as the ledger counts."""
    cost = release.charged_budget(scale)
    try:
        return next(iter(exact_components(cost, available.kind).values()))
    except ValueError:
        raise ValueError(
            f"“{release.label}” costs {cost}, which a ledger counting {available} cannot add "
            "up: Gaussian noise never meets pure ε-DP. Use a ρ-zCDP ledger (Budget page), or "
            "Laplace noise for this release."
        ) from None


def _needed_scale(release: PlannedRelease, *, required: bool) -> float | None:
    """The budget scale at which ``release`` just meets its target; None when no budget does
    and the release is locked (its budget is fixed anyway), an error when it is not."""
    try:
        answer = smallest_budget(release.model, release.target)
    except ValueError as exc:
        raise ValueError(f"“{release.label}”: {exc}") from None
    if answer.budget is not None:
        return release.model.scale_within(answer.budget)
    if not required:
        return None
    raise ValueError(
        f"No budget meets the target of “{release.label}”: {'; '.join(answer.unreachable)}. "
        "Loosen its target, or lock it at a budget."
    )


def _fit_factor(
    free: list[PlannedRelease], needed: dict[int, float], room: Decimal, available: Budget
) -> float:
    """The common factor c (module docstring), nudged down until the charges fit ``room``."""
    if room <= 0:
        raise ValueError(
            "The locked releases use all the budget available, and "
            f"{len(free)} other release{'s' if len(free) > 1 else ''} would get nothing. Unlock "
            "one of the locked releases, or lower its budget."
        )
    needs = [_charge(r, needed[id(r)], available) for r in free]
    factor = float(room / sum(needs, Decimal(0)))
    power = 1 if isinstance(available, PureDP) else 2
    for release in free:
        _check_limit(release, needed[id(release)] * factor ** (1 / power))
    for nudge in range(_NUDGES):
        charges = (_charge(r, needed[id(r)] * factor ** (1 / power), available) for r in free)
        if sum(charges, Decimal(0)) <= room:
            return factor
        factor *= 1 - 2.0 ** (nudge - 52)
    raise ValueError(  # not reached for the planner's mechanisms: their charges follow s^p
        "The plan's charges could not be fitted to the budget available; lock the releases "
        "at budgets you choose."
    )


def _check_limit(release: PlannedRelease, scale: float) -> None:
    if scale >= release.model.scale_limit:
        raise ValueError(
            f"“{release.label}” would get more budget than its noise can run at: "
            f"{release.model.limit_reason}. Lock it at a smaller budget."
        )


def _share(
    release: PlannedRelease, scale: float, charge: Decimal, needed: float | None,
    available: Budget,
) -> ReleaseShare:  # fmt: skip
    model, target = release.model, release.target
    half = model.target_half_widths(target)
    errors = model.half_widths_at(scale, target)
    worst = int(np.argmax(errors / half))
    return ReleaseShare(
        label=release.label,
        locked=release.locked is not None,
        budget=model.budget_at(scale),
        charge=float(charge),
        needed=None if needed is None else float(_charge(release, needed, available)),
        worst=model.labels[worst],
        error=float(errors[worst]),
        target=float(half[worst]),
        meets=bool(np.all(errors <= half * (1 + _MET_TOLERANCE))),
    )
