"""Privacy budgets, conversions between them, and composition.

Three budget types, frozen and validated on construction:

- :class:`PureDP` — ε-differential privacy;
- :class:`ApproxDP` — (ε, δ)-differential privacy with 0 < δ < 1;
- :class:`ZCDP` — ρ-zero-concentrated differential privacy (Bun & Steinke 2016).

Arithmetic on budgets is exact in decimal: every amount is taken at its shortest decimal
representation (``repr``) and added as a :class:`~decimal.Decimal`, so ten spends of 0.1 use up a
total of 1.0 exactly — no spurious overspend from binary rounding, and no real overspend either.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, localcontext
from typing import ClassVar, Literal

from dpcore.foundations.errors import BudgetKindError
from dpcore.foundations.validation import open_unit_interval, positive_number, shown

Kind = Literal["pure", "approx", "zcdp"]

SYMBOLS = {"epsilon": "ε", "delta": "δ", "rho": "ρ"}
_SMALLEST_EPSILON = 1e-12


class BudgetExceededError(ValueError):
    """A spend asked for more privacy budget than remains.

    Attributes ``requested``, ``remaining`` and ``difference`` map each budget component
    (``epsilon``, ``delta`` or ``rho``) to a float.
    """

    def __init__(
        self,
        requested: dict[str, float],
        remaining: dict[str, float],
    ) -> None:
        self.requested = requested
        self.remaining = remaining
        self.difference = {k: requested[k] - remaining[k] for k in requested}
        super().__init__(
            "Privacy budget exceeded. "
            f"Requested {format_components(requested)}; "
            f"Remaining {format_components(remaining)}; "
            f"Difference {format_components(self.difference)}. "
            "Lower the cost of this release or start a new ledger."
        )


def format_components(components: dict[str, float | Decimal]) -> str:
    """Render ``{"epsilon": 0.5, "delta": 1e-6}`` as ``ε = 0.5, δ = 1e-06``."""
    return ", ".join(f"{SYMBOLS[k]} = {float(v):.6g}" for k, v in components.items())


class _Components:
    """What every kind of budget does alike: check each component on construction (``checks``
    maps a component to its validator, in order), list the components, and read them out
    followed by the kind's ``title``."""

    kind: ClassVar[Kind]
    title: ClassVar[str]
    checks: ClassVar[dict[str, Callable[[str, object], float]]]

    def __post_init__(self) -> None:
        for name, check in self.checks.items():
            object.__setattr__(self, name, check(name, getattr(self, name)))

    def components(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in self.checks}

    def __str__(self) -> str:
        return f"{format_components(self.components())} ({self.title})"


@dataclass(frozen=True)
class PureDP(_Components):
    """ε-differential privacy (Dwork et al. 2006)."""

    epsilon: float
    kind: ClassVar[Kind] = "pure"
    title: ClassVar[str] = "pure DP"
    checks: ClassVar[dict] = {"epsilon": positive_number}

    def to_zcdp(self) -> ZCDP:
        r"""ε-DP implies ρ-zCDP with :math:`\rho = \varepsilon^2 / 2` (Bun & Steinke 2016, Prop. 1.4)."""
        return ZCDP(self.epsilon**2 / 2)


@dataclass(frozen=True)
class ApproxDP(_Components):
    """(ε, δ)-differential privacy with 0 < δ < 1. Use :class:`PureDP` when δ = 0."""

    epsilon: float
    delta: float
    kind: ClassVar[Kind] = "approx"
    title: ClassVar[str] = "approximate DP"
    checks: ClassVar[dict] = {"epsilon": positive_number, "delta": open_unit_interval}


@dataclass(frozen=True)
class ZCDP(_Components):
    """ρ-zero-concentrated differential privacy (Bun & Steinke 2016)."""

    rho: float
    kind: ClassVar[Kind] = "zcdp"
    title: ClassVar[str] = "zCDP"
    checks: ClassVar[dict] = {"rho": positive_number}

    def to_approx_dp(self, delta: float) -> ApproxDP:
        r"""The smallest ε such that ρ-zCDP implies (ε, δ)-DP, by Canonne, Kamath & Steinke (2020).

        CKS 2020 (*The Discrete Gaussian for Differential Privacy*, Prop. 12 / Cor. 13) show that
        ρ-zCDP implies (ε, δ)-DP for every Rényi order α > 1 with

        .. math:: \varepsilon(\alpha) = \alpha\rho
                  + \frac{\log(1/\delta) + (\alpha - 1)\log(1 - 1/\alpha) - \log\alpha}{\alpha - 1}.

        Every α gives a valid ε, so a numerical minimum over α is sound even if it is not exact.
        The result is never looser than the classic :math:`\rho + 2\sqrt{\rho\log(1/\delta)}`,
        which is returned instead whenever the search does not beat it.
        """
        delta = open_unit_interval("delta", delta)
        log_inv_delta = -math.log(delta)
        classic = self.rho + 2 * math.sqrt(self.rho * log_inv_delta)

        def epsilon_at(log_alpha_minus_1: float) -> float:
            alpha = 1 + math.exp(log_alpha_minus_1)
            return alpha * self.rho + (
                log_inv_delta + (alpha - 1) * math.log1p(-1 / alpha) - math.log(alpha)
            ) / (alpha - 1)

        from scipy.optimize import minimize_scalar  # deferred: slow to import, rarely needed

        # The classic bound's optimum sits at alpha - 1 = sqrt(log(1/delta) / rho); search around it.
        centre = 0.5 * math.log(log_inv_delta / self.rho)
        best = minimize_scalar(
            epsilon_at,
            bounds=(centre - 12, centre + 12),
            method="bounded",
            options={"xatol": 1e-10},
        )
        tight = float(best.fun) if best.success and math.isfinite(best.fun) else classic
        # For tiny ρ and large δ the optimum is ≤ 0: then every ε > 0 is valid, so take the
        # a negligible positive ε rather than an invalid one.
        return ApproxDP(max(min(tight, classic), _SMALLEST_EPSILON), delta)


Budget = PureDP | ApproxDP | ZCDP


def check_budget(name: str, value: object) -> Budget:
    if not isinstance(value, PureDP | ApproxDP | ZCDP):
        raise TypeError(
            f"`{name}` must be a PureDP, ApproxDP or ZCDP budget, got {type(value).__name__} "
            f"{shown(value)}"
        )
    return value


def common_kind(budgets: tuple[Budget, ...]) -> Kind:
    """The kind in which budgets of mixed kinds can be combined soundly.

    Pure DP converts losslessly into zCDP (ρ = ε²/2) and into approximate DP (δ = 0). zCDP and
    approximate DP do not mix: converting zCDP requires a choice of δ that only the caller can make.
    """
    kinds = {b.kind for b in budgets}
    if len(kinds) == 1:
        return kinds.pop()
    if kinds == {"pure", "zcdp"}:
        return "zcdp"
    if kinds == {"pure", "approx"}:
        return "approx"
    raise ValueError(
        "cannot combine zCDP and (ε, δ)-DP budgets without choosing δ: convert the ZCDP budget "
        "first with `.to_approx_dp(delta)`, or express every budget in zCDP"
    )


def exact_components(budget: Budget, kind: Kind) -> dict[str, Decimal]:
    """Budget components in ``kind`` as exact decimals (zero allowed, e.g. δ of a pure budget)."""
    if budget.kind == kind:
        return {k: Decimal(repr(v)) for k, v in budget.components().items()}
    if budget.kind == "pure" and kind == "zcdp":
        # ρ = ε²/2 in exact decimal: a 17-digit ε squares to at most 34 digits.
        with localcontext(prec=80):
            return {"rho": Decimal(repr(budget.epsilon)) ** 2 / 2}
    if budget.kind == "pure" and kind == "approx":
        return {"epsilon": Decimal(repr(budget.epsilon)), "delta": Decimal(0)}
    raise ValueError(
        f"a {type(budget).__name__} budget cannot be expressed as {kind!r} without choosing δ; "
        "convert it explicitly first"
    )


def budget_from_components(kind: Kind, components: dict[str, Decimal]) -> Budget:
    values = {k: float(v) for k, v in components.items()}
    if values.get("delta", 0.0) >= 1:
        raise ValueError(
            f"the combined budget has δ = {values['delta']:.6g} ≥ 1, which protects nobody; "
            "lower the δ of the budgets being combined"
        )
    return {"pure": PureDP, "approx": ApproxDP, "zcdp": ZCDP}[kind](**values)


def pure_epsilon_within(rho: float) -> float:
    r"""The largest float ε whose pure-DP cost fits a ρ-zCDP budget exactly.

    ε-DP implies :math:`\varepsilon^2/2`-zCDP (Bun & Steinke 2016, Prop. 1.4), so an ε-DP
    mechanism run at :math:`\varepsilon = \sqrt{2\rho}` meets ρ-zCDP. Rounded to a float, the
    square root can overshoot by an ulp, and the ledger's exact arithmetic would then refuse a
    release that spends the last of a budget; so ε steps down until :math:`\varepsilon^2/2 \le \rho`
    holds exactly.
    """
    rho = ZCDP(rho).rho
    limit = exact_components(ZCDP(rho), "zcdp")["rho"]
    epsilon = math.sqrt(2 * rho)
    while exact_components(PureDP(epsilon), "zcdp")["rho"] > limit:
        epsilon = math.nextafter(epsilon, 0.0)
    return epsilon


def charge_of(cost: Budget) -> float:
    r"""The ρ a release of exact cost ``cost`` is charged in a zCDP ledger: ρ itself, or
    :math:`\rho = \varepsilon^2/2` for a pure ε-DP cost (Bun & Steinke 2016, Prop. 1.4).

    This is the budget language's one rule: a user's control (ε or ρ) is the most any release
    may be charged — ρ, or ε²/2 — and every analysis is calibrated to spend exactly that, but
    for a Gaussian calibrated to (ε, δ) (the ratio's, Miao & Li 2022 eq. 5), which adds more
    noise and is charged its exact, smaller ρ. An (ε, δ) cost has no ρ: refused."""
    if isinstance(cost, ApproxDP):
        raise ValueError(
            f"an (ε, δ) cost has no exact ρ to charge a zCDP ledger, got {cost}; price the "
            "mechanism's noise in ρ instead"
        )
    return float(exact_components(check_budget("cost", cost), "zcdp")["rho"])


def as_zcdp(budget: Budget, mechanism: str) -> ZCDP:
    """The ρ-zCDP budget a zCDP mechanism runs at: ρ itself, or ρ = ε²/2 for an ε budget, since
    ε-DP implies ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4) and so costs what an ε-DP release
    would. An (ε, δ) budget is refused with :class:`~dpcore.foundations.errors.BudgetKindError`."""
    if isinstance(budget, ZCDP):
        return budget
    if isinstance(budget, PureDP):
        return budget.to_zcdp()
    raise _pure_or_zcdp_only(budget, mechanism)


def as_pure_dp(budget: Budget, mechanism: str) -> PureDP:
    """The ε-DP budget a pure-DP mechanism runs at: ε itself, or ε = √(2ρ) for a ρ-zCDP budget
    (:func:`pure_epsilon_within`), which then costs exactly ρ. An (ε, δ) budget is refused with
    :class:`~dpcore.foundations.errors.BudgetKindError`."""
    if isinstance(budget, PureDP):
        return budget
    if isinstance(budget, ZCDP):
        return PureDP(pure_epsilon_within(budget.rho))
    raise _pure_or_zcdp_only(budget, mechanism)


def _pure_or_zcdp_only(budget: Budget, mechanism: str) -> BudgetKindError:
    return BudgetKindError(
        f"{mechanism} runs under an ε or a ρ budget only, got {budget}.", mechanism=mechanism,
        kind=budget.kind, needs=("pure", "zcdp"),
    )  # fmt: skip


def sequential(*budgets: Budget) -> Budget:
    r"""Basic sequential composition: the costs of mechanisms run on the same data add up.

    ε and δ add for (approximate) DP (Dwork & Roth 2014, Thm. 3.16); ρ adds for zCDP
    (Bun & Steinke 2016, Lemma 2.3). Pure-DP budgets mixed with zCDP are converted with
    :math:`\rho = \varepsilon^2/2`; mixed with (ε, δ)-DP they count δ = 0.
    """
    if not budgets:
        raise ValueError("`budgets` must contain at least one budget, got none")
    checked = tuple(check_budget(f"budgets[{i}]", b) for i, b in enumerate(budgets))
    kind = common_kind(checked)
    parts = [exact_components(b, kind) for b in checked]
    return budget_from_components(kind, {k: sum(p[k] for p in parts) for k in parts[0]})


CUMULATIVE_DELTA = 1e-6
"""The δ at which ρ-zCDP is converted when it must be added to (ε, δ)-DP (:func:`cumulative`)."""


def cumulative(*budgets: Budget) -> Budget:
    r"""The loss of every release ever made on the same people, whatever its ledger and kind.

    Releases on the same people compose sequentially, across ledgers as within one. Each
    release is taken in its own kind (not in the kind of the ledger that charged it), and:

    - all pure ε-DP: ε adds (Dwork & Roth 2014, Thm. 3.16), the tightest statement when there
      are few releases (:func:`sequential`);
    - pure ε-DP and ρ-zCDP: every ε counts as ρ = ε²/2 (Bun & Steinke 2016, Prop. 1.4) and ρ
      adds (Lemma 2.3), as a zCDP ledger charges them;
    - pure ε-DP and (ε, δ)-DP: ε and δ add, pure releases with δ = 0;
    - ρ-zCDP and (ε, δ)-DP (ledgers of both kinds on one population): the ρ part is summed
      first, converted once at :data:`CUMULATIVE_DELTA` (Canonne, Kamath & Steinke 2020, via
      :meth:`ZCDP.to_approx_dp`), and added to the (ε, δ) part: ε and δ add.

    Every statement is an upper bound on the loss; the pure and zCDP sums are exact in decimal.
    """
    if not budgets:
        raise ValueError("`budgets` must contain at least one budget, got none")
    checked = tuple(check_budget(f"budgets[{i}]", b) for i, b in enumerate(budgets))
    kinds = {b.kind for b in checked}
    if not {"zcdp", "approx"} <= kinds:
        return sequential(*checked)
    # Pure budgets go with the zCDP part (ρ = ε²/2), so the mix converts to (ε, δ) only once.
    rho = sum(exact_components(b, "zcdp")["rho"] for b in checked if b.kind != "approx")
    converted = ZCDP(float(rho)).to_approx_dp(CUMULATIVE_DELTA)
    return sequential(converted, *(b for b in checked if b.kind == "approx"))


def parallel(*budgets: Budget) -> Budget:
    """Parallel composition over disjoint strata: the cost is the largest single cost.

    Each person is in exactly one stratum, so they are exposed only to that stratum's mechanism
    (McSherry 2009, Thm. 4). For (ε, δ) budgets ε and δ are each maximised, which is an upper bound.
    """
    if not budgets:
        raise ValueError("`budgets` must contain at least one budget, got none")
    checked = tuple(check_budget(f"budgets[{i}]", b) for i, b in enumerate(budgets))
    kind = common_kind(checked)
    parts = [exact_components(b, kind) for b in checked]
    return budget_from_components(kind, {k: max(p[k] for p in parts) for k in parts[0]})


def scale(budget: Budget, fraction: float) -> Budget:
    """The budget times ``fraction`` (0 < fraction ≤ 1): every component (ε, δ or ρ) is scaled.

    Used to split a budget between mechanisms under sequential composition: ``scale(b, f)`` and
    ``scale(b, 1 - f)`` compose back to ``b``.
    """
    check_budget("budget", budget)
    fraction = positive_number("fraction", fraction)
    if fraction > 1:
        raise ValueError(f"`fraction` must be a number with 0 < fraction <= 1, got {fraction!r}")
    return type(budget)(**{k: v * fraction for k, v in budget.components().items()})


def remaining_after(total: Budget, spent: list[Budget] | tuple[Budget, ...]) -> dict[str, Decimal]:
    """Exact remaining budget, component by component, in the total's kind (may be zero)."""
    left = exact_components(total, total.kind)
    for cost in spent:
        for k, v in exact_components(cost, total.kind).items():
            left[k] -= v
    return left


def check_affordable(total: Budget, spent: list[Budget] | tuple[Budget, ...], cost: Budget) -> None:
    """Raise :class:`BudgetExceededError` if ``cost`` does not fit in what ``spent`` leaves."""
    check_budget("cost", cost)
    requested = exact_components(cost, total.kind)
    left = remaining_after(total, spent)
    if any(requested[k] > left[k] for k in requested):
        raise BudgetExceededError(
            {k: float(v) for k, v in requested.items()}, {k: float(v) for k, v in left.items()}
        )


class BudgetAccountant:
    """An in-memory odometer: spends against a fixed total, refusing any overspend.

    The persistent, multi-process version is :class:`dpcore.foundations.ledger.Ledger`.
    """

    def __init__(self, total: Budget) -> None:
        self.total = check_budget("total", total)
        self._spent: list[Budget] = []

    def spend(self, cost: Budget) -> None:
        check_affordable(self.total, self._spent, cost)
        self._spent.append(cost)

    def remaining(self) -> dict[str, float]:
        return {k: float(v) for k, v in remaining_after(self.total, self._spent).items()}

    @property
    def spent(self) -> tuple[Budget, ...]:
        return tuple(self._spent)
