r"""Accuracy → budget: the smallest budget at which every published estimate meets a target.

An analysis describes the error of each estimate it publishes as a *bias* plus *noise* whose size
falls with the budget in a known way. For the mechanisms the planner covers the noise at budget
:math:`b` is a fixed distribution :math:`X` divided by a *budget scale* :math:`s(b)`:

- Laplace noise under ε-DP: scale :math:`\Delta/\varepsilon`, so :math:`s = \varepsilon`
  (AAAI 2024, eq. 3);
- Gaussian noise under ρ-zCDP: :math:`\sigma = \Delta/\sqrt{2\rho}`, so :math:`s = \sqrt\rho`
  (AAAI 2024, eq. 1; Bun & Steinke 2016, Prop. 1.6).

An estimate meets a target of ±h at confidence ``level`` when
:math:`P(|\beta + X/s| \le h) \ge \text{level}`. With no bias (the target on the *noise interval's
half-width*, which is all a release's noise interval covers) the answer is closed-form:
:math:`s^\ast = q_{\text{level}}(|X|)/h`. With a bias β (the clipping bias, seen only on the
confidential data) the probability still rises with s whenever :math:`|\beta| < h` — the interval
:math:`[s(-h-\beta), s(h-\beta)]` contains 0 and grows with s, so the intervals are nested
whatever the noise's law — and a vectorised bisection finds :math:`s^\ast`; when :math:`|\beta| \ge h` no budget
helps. The budget that meets every target is the largest of the estimates' :math:`s^\ast`: the
estimate that needs it *binds*.

Pure numpy/SciPy; the analyses build their :class:`ErrorModel` (e.g.
:func:`dpcore.analyses.mean.accuracy.mean_error_model`) from the noise laws of
:mod:`dpcore.planner.error_shapes` (both exported by :mod:`dpcore.planner`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from dpcore.foundations.accounting import ZCDP, Budget, PureDP, as_pure_dp, as_zcdp
from dpcore.foundations.labels import plain_number
from dpcore.foundations.validation import finite_number, open_unit_interval
from dpcore.planner.error_shapes import BISECTION_STEPS, ErrorShape

__all__ = [
    "AccuracyTarget",
    "round_to_one_two_five",
    "BudgetAnswer",
    "ErrorModel",
    "Shortfall",
    "shortfall",
    "smallest_budget",
]

BudgetUnit = Literal["epsilon", "rho"]


def round_to_one_two_five(x: float) -> float:
    """The nearest of 1, 2 and 5 times a power of ten, on a log scale: a round number to start a
    target from (``round_to_one_two_five(2.4) == 2``, ``(0.04) == 0.05``)."""
    x = finite_number("x", x)
    if x <= 0:
        raise ValueError(f"`x` must be positive, got {x}")
    power = 10.0 ** math.floor(math.log10(x))
    steps = np.array([1.0, 2.0, 5.0, 10.0]) * power
    return float(steps[np.argmin(np.abs(np.log(steps / x)))])


@dataclass(frozen=True)
class AccuracyTarget:
    """What a user needs of every published estimate.

    ``amount`` is a half-width in the value's units (``relative=False``), or a fraction of each
    estimate's true value (``relative=True``: a curator's view, since the true values are
    confidential). ``level`` is the confidence. With ``include_bias=False`` the target is on the
    noise alone — the half-width of the release's noise interval; with ``include_bias=True`` it is
    on the estimate's error against the true value, clipping bias included (a curator's view).
    """

    amount: float
    relative: bool = False
    level: float = 0.95
    include_bias: bool = False

    def __post_init__(self) -> None:
        amount = finite_number("amount", self.amount)
        if amount <= 0:
            what = "fraction" if self.relative else "half-width"
            raise ValueError(
                f"The target {what} must be above 0, got {amount:g}: no budget gives an exact "
                "answer. Enter the error you can accept, e.g. 2 (hours) or 0.05 (5%)."
            )
        object.__setattr__(self, "amount", amount)
        try:
            object.__setattr__(self, "level", open_unit_interval("level", self.level))
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"The confidence level must be strictly between 0 and 1, got {self.level!r} (a "
                "level of 1 would need an infinite budget). Try 0.95 or 0.99."
            ) from exc

    def half_widths(self, truth: np.ndarray) -> np.ndarray:
        """The target half-width of each estimate, in the value's units."""
        if not self.relative:
            return np.full(np.shape(truth), self.amount)
        return self.amount * np.abs(np.asarray(truth, dtype=float))

    def describe(self, what: str | None = None) -> str:
        """The target in a sentence; ``what`` names what is within it (default: the noise, or
        the error with the clipping bias)."""
        within = (
            f"{plain_number(self.amount, 3)} × its true value"
            if self.relative
            else f"{plain_number(self.amount, 6)}"
        )
        if what is None:
            what = "error (clipping bias included)" if self.include_bias else "noise"
        return f"every estimate's {what} within ±{within} with probability {self.level:.3g}"


@dataclass(frozen=True, eq=False)
class ErrorModel:
    """The errors of the estimates a release would publish, as functions of its budget.

    Attributes
    ----------
    labels, sizes
        The published estimates (groups, then the whole population) and their row counts.
    groups
        How many of the estimates, from the first, are groups (the rest, e.g. the whole
        population, cannot grow by merging).
    truth, bias
        Each estimate's true value and its bias (e.g. clipping), ``None`` when the model was
        built from public information only (then relative and bias-inclusive targets need the
        curator's view).
    shapes
        ``(ErrorShape, count)`` blocks covering the estimates in order: the noise of each at
        budget scale 1.
    unit
        ``"epsilon"`` (budget scale s = ε, pure DP) or ``"rho"`` (s = √ρ, zCDP).
    sizes_public
        Whether the release treats the group sizes as public; when not, the sizes the model
        divides by are confidential and its answers are a curator's preview.
    assumptions
        Sentences saying what the model assumes and which confidential numbers it used.
    reads
        The confidential numbers the noise model itself reads, in plain words (empty when the
        noise comes from public information only); any makes every answer a curator's preview.
    scale_limit, limit_reason
        The largest budget scale at which the mechanism can run (e.g. the classic Gaussian
        calibration needs ε < 1 per released sum), and a sentence saying why and what to choose
        instead; a target that needs more has no answer.
    measured_in, typical_half_width
        What the estimates are measured in, for a target's label ("units of the ratio"; empty:
        the value column's units), and an absolute target (±) in those units for a user to start
        from, from public information only (e.g. 2% of the public range of a mean).
    widest_error
        The largest error a published estimate can have: the width of the public range for an
        estimate released inside it (a mean's, clamped into [L, U]); ``inf`` when unbounded.
    check_note
        What the check by simulation (:meth:`~dpcore.analyses.base.Analysis.check_accuracy`)
        scores, in a sentence shown above it.
    """

    labels: tuple[str, ...]
    sizes: np.ndarray
    shapes: tuple[tuple[ErrorShape, int], ...]
    unit: BudgetUnit
    groups: int = 0
    truth: np.ndarray | None = None
    bias: np.ndarray | None = None
    sizes_public: bool = True
    assumptions: tuple[str, ...] = field(default=())
    reads: tuple[str, ...] = field(default=())
    scale_limit: float = math.inf
    limit_reason: str = ""
    measured_in: str = ""
    typical_half_width: float = 1.0
    widest_error: float = math.inf
    check_note: str = (
        "Curator preview, not differentially private: simulated releases of the real estimator "
        "on the confidential data, scored against the exact values of the clipped rows (of the "
        "rows as they are when the clipping bias counts)."
    )

    @property
    def curator_preview(self) -> bool:
        """Whether every answer of the model reads confidential numbers (whatever the target)."""
        return bool(self.reads) or not self.sizes_public

    def budget_at(self, scale: float) -> Budget:
        """The budget whose scale is ``scale``."""
        return PureDP(scale) if self.unit == "epsilon" else ZCDP(scale**2)

    def scale_within(self, available: Budget) -> float:
        """The largest budget scale whose budget fits in ``available`` (ε or ρ)."""
        if self.unit == "epsilon":
            return as_pure_dp(available, "The planner").epsilon
        return math.sqrt(as_zcdp(available, "The planner").rho)

    def _cdf(self, x: np.ndarray) -> np.ndarray:
        parts, start = [], 0
        for shape, count in self.shapes:
            parts.append(shape.cdf(x[start : start + count]))
            start += count
        return np.concatenate(parts)

    def _abs_quantile(self, level: float) -> np.ndarray:
        return np.concatenate([shape.abs_quantile(level) for shape, _ in self.shapes])

    def _bias(self, target: AccuracyTarget) -> np.ndarray:
        if not target.include_bias:
            return np.zeros(len(self.labels))
        if self.bias is None:
            raise ValueError(
                "This model has no clipping bias to count (it was built from public information "
                "only, or from sums of values already clipped): set the target on the noise."
            )
        return self.bias

    def target_half_widths(self, target: AccuracyTarget) -> np.ndarray:
        if target.relative and self.truth is None:
            raise ValueError(
                "A relative target needs each group's true value, which is confidential; this "
                "model was built from public information only. Give the target in the value's "
                "units instead."
            )
        return target.half_widths(self.truth if target.relative else np.zeros(len(self.labels)))

    def _probability_within(self, scale: np.ndarray, half: np.ndarray, bias: np.ndarray):
        """P(|β + X/s| ≤ h) for each estimate (vectorised over estimates)."""
        return self._cdf(scale * (half - bias)) - self._cdf(scale * (-half - bias))

    def needed_scales(self, target: AccuracyTarget) -> np.ndarray:
        """Each estimate's smallest budget scale that meets ``target`` (inf where none does)."""
        half, bias = self.target_half_widths(target), np.abs(self._bias(target))
        quantile = self._abs_quantile(target.level)
        if not target.include_bias:
            return quantile / half
        reachable = bias < half
        margin = np.where(reachable, half - bias, np.nan)
        low, high = quantile / (half + bias), quantile / margin  # see the module docstring
        low, high = np.where(reachable, low, 1.0), np.where(reachable, high, 1.0)
        for _ in range(BISECTION_STEPS):
            mid = np.sqrt(low * high)
            enough = self._probability_within(mid, half, bias) >= target.level
            low, high = np.where(enough, low, mid), np.where(enough, mid, high)
        return np.where(reachable, high, np.inf)

    def notes(self, target: AccuracyTarget) -> tuple[str, ...]:
        """Sentences qualifying an answer for ``target`` (none for a closed-form model)."""
        return ()

    def parts(self, target: AccuracyTarget) -> tuple[tuple[str, float], ...]:
        """How the answer's budget splits between the release's mechanisms, as (what, share)
        pairs, when the planner chose the split (:mod:`dpcore.planner.split`); empty when the
        release spends its budget as it was set."""
        return ()

    def settings_changes(self, target: AccuracyTarget) -> dict:
        """The changes to the analysis' settings that make a release run the answer's split
        (empty when there is none to make)."""
        return {}

    def describe(self, target: AccuracyTarget) -> str:
        """``target`` in a sentence, for what this model's errors measure."""
        return target.describe()

    def unreachable_reasons(self, target: AccuracyTarget, needed: np.ndarray) -> tuple[str, ...]:
        """Why each estimate whose ``needed`` scale is infinite meets ``target`` at no budget:
        in closed form only a clipping bias at least the target stands in the way."""
        half, bias = self.target_half_widths(target), self._bias(target)
        return tuple(
            f"{label}: its clipping bias alone is {plain_number(abs(b), 3)}, at least the target {plain_number(h, 3)}"
            for label, b, h, need in zip(self.labels, bias, half, needed, strict=True)
            if not np.isfinite(need)
        )

    rows_reason = ""
    """Why the model cannot say how many rows a group needs (empty: it can, :meth:`rows_needed`)."""

    unreachable_advice = "Widen the public bounds on the Estimator page, or loosen the target."
    """What to change when no budget meets a target (after :meth:`unreachable_reasons`)."""

    def rows_needed(self, target: AccuracyTarget, scale: float) -> np.ndarray:
        """The rows each group would need to meet ``target`` at budget scale ``scale``: noise
        falls as 1/size for every closed form here, so n·s*/s (inf when its clipping bias alone
        misses the target: no size removes a bias; NaN for the whole population)."""
        with np.errstate(invalid="ignore"):
            rows = self.sizes * self.needed_scales(target) / scale
        # Rounded before the ceiling so that 120.000000001 (binary rounding) needs 120 rows, not 121.
        rows_needed = np.ceil(np.round(rows, 6))
        rows_needed[self.groups :] = np.nan
        return rows_needed

    def half_widths_at(self, scale: float, target: AccuracyTarget) -> np.ndarray:
        """Each estimate's error at budget scale ``scale``: the smallest h with
        P(|β + X/s| ≤ h) ≥ ``target.level`` (β = 0 unless the target includes bias)."""
        bias = np.abs(self._bias(target))
        noise_only = self._abs_quantile(target.level) / scale
        if not target.include_bias:
            return noise_only
        low, high = np.zeros_like(bias), bias + noise_only  # P(|β + X/s| ≤ |β| + q/s) ≥ level
        scales = np.full(len(self.labels), scale)
        for _ in range(BISECTION_STEPS):
            mid = (low + high) / 2
            enough = self._probability_within(scales, mid, bias) >= target.level
            low, high = np.where(enough, low, mid), np.where(enough, mid, high)
        return high


@dataclass(frozen=True, eq=False)
class BudgetAnswer:
    """The planner's answer to a target.

    ``budget`` is the smallest budget that meets the target for every estimate (None when no
    budget does), ``binding`` the estimate that needs it, ``table`` one row per estimate: label,
    size, target half-width, the budget it alone needs, and its error at ``budget``.
    ``unreachable`` lists the estimates no budget helps, with the reason (or the one reason the
    mechanism cannot run at the budget the target needs: :attr:`ErrorModel.limit_reason`).
    ``notes`` qualify the answer (:meth:`ErrorModel.notes`, e.g. where a simulated error was
    not monotone in the budget). ``parts`` and ``changes``: how the budget splits between the
    release's mechanisms when the planner chose the split, and the settings that make a release
    run it (:meth:`ErrorModel.parts`, :meth:`ErrorModel.settings_changes`).
    """

    target: AccuracyTarget
    budget: Budget | None
    binding: str | None
    table: pd.DataFrame
    unreachable: tuple[str, ...]
    notes: tuple[str, ...] = ()
    parts: tuple[tuple[str, float], ...] = ()
    changes: dict = field(default_factory=dict)


def smallest_budget(model: ErrorModel, target: AccuracyTarget) -> BudgetAnswer:
    """The smallest budget meeting ``target`` for every estimate of ``model`` (module docstring).

    Raises ``ValueError`` when the target needs a confidential number the model lacks, or a
    relative target meets a true value of 0.
    """
    half = model.target_half_widths(target)
    if np.any(half <= 0):
        zero = [label for label, h in zip(model.labels, half, strict=True) if h <= 0]
        raise ValueError(
            f"A relative target is 0 where the true value is 0 ({', '.join(zero[:3])}). Give "
            "the target in the value's units instead."
        )
    needed = model.needed_scales(target)
    name = "needed ε" if model.unit == "epsilon" else "needed ρ"
    needed_budget = needed if model.unit == "epsilon" else needed**2
    table = pd.DataFrame(
        {"estimate": model.labels, "size": model.sizes, "target": half, name: needed_budget}
    )
    notes = model.notes(target)
    unreachable = model.unreachable_reasons(target, needed)
    if unreachable:
        table["error at budget"] = np.nan
        return BudgetAnswer(target, None, None, table, unreachable, notes)
    binding = int(np.argmax(needed))
    scale = float(needed[binding])
    if scale >= model.scale_limit:
        table["error at budget"] = np.nan
        return BudgetAnswer(target, None, None, table, (model.limit_reason,), notes)
    table["error at budget"] = model.half_widths_at(scale, target)
    return BudgetAnswer(
        target, model.budget_at(scale), model.labels[binding], table, (), notes,
        model.parts(target), model.settings_changes(target),
    )  # fmt: skip


@dataclass(frozen=True, eq=False)
class Shortfall:
    """What the ``available`` budget gives when it cannot meet a target, and what would.

    ``table`` has one row per estimate: label, size, target half-width, its error at
    ``available``, and, for groups that miss the target there, the rows each would need to meet
    it (:meth:`ErrorModel.rows_needed`; NaN for a group that already meets it, and all NaN when
    the model cannot tell, which ``rows_reason`` says).
    """

    available: Budget
    table: pd.DataFrame
    short: tuple[str, ...]
    rows_reason: str = ""


def shortfall(model: ErrorModel, target: AccuracyTarget, available: Budget) -> Shortfall:
    """The estimates that miss ``target`` at the ``available`` budget (e.g. what the ledger has
    left), their errors there, and the group sizes that would meet it."""
    scale = model.scale_within(available)
    half = model.target_half_widths(target)
    error = model.half_widths_at(scale, target)
    # A group that meets the target needs no rows: a size smaller than its own (46 rows for a
    # group of 300) read as if it fell short.
    rows_needed = np.where(error > half, model.rows_needed(target, scale), np.nan)
    table = pd.DataFrame(
        {
            "estimate": model.labels,
            "size": model.sizes,
            "target": half,
            "error at available budget": error,
            "rows needed": rows_needed,
        }
    )
    short = tuple(label for label, e, h in zip(model.labels, error, half, strict=True) if e > h)
    return Shortfall(available, table, short, model.rows_reason)
