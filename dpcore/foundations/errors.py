"""Errors with fields, for callers (the app) that explain them instead of matching their text.

Every class here is a ``ValueError``, so code that catches ``ValueError`` keeps working; the
fields say what went wrong in terms a message can be built from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "BudgetKindError",
    "ClassicGaussianRangeError",
    "NeedsFixedShares",
    "NotChosenYet",
    "Problem",
    "SettingsError",
]


class BudgetKindError(ValueError):
    """A mechanism cannot meet a budget of this kind (e.g. Gaussian noise and pure ε-DP).

    Attributes
    ----------
    mechanism
        The mechanism or estimator that was asked (``"Gaussian mean"``, ``"gaussian_analytic"``).
    kind
        The kind of the budget it was given (``"pure"``, ``"approx"``, ``"zcdp"``).
    needs
        The kinds it can meet.
    """

    def __init__(self, message: str, *, mechanism: str, kind: str, needs: Sequence[str]) -> None:
        super().__init__(message)
        self.mechanism = mechanism
        self.kind = kind
        self.needs = tuple(needs)


class ClassicGaussianRangeError(ValueError):
    """The classic Gaussian mechanism was asked for ε ≥ 1, where its proof does not hold
    (Dwork & Roth 2014, Thm. A.1). ``epsilon`` is the ε the mechanism itself was given (per
    released statistic, after any split of the budget)."""

    def __init__(self, message: str, *, epsilon: float) -> None:
        super().__init__(message)
        self.epsilon = epsilon


class NeedsFixedShares(ValueError):
    """An analysis that treats every group's size as public (its paper's privacy model: CoinPress,
    GVDP) was asked to recombine with the release's own noisy counts, the private default. It
    needs fixed shares: a public table, a holdout split, or the data's own counts declared
    public — a choice the user makes, with its consequence, never one made for them."""


class NotChosenYet(ValueError):
    """Something the user has not entered yet, such as the shares of a table just chosen: a normal
    starting state, which the app shows as a hint saying what to enter, not as an error."""


@dataclass(frozen=True)
class Problem:
    """Something about an analysis' settings: an ``"error"`` that stops it, or an ``"info"``
    saying what is still to be chosen. ``field`` names the setting concerned, if one is."""

    severity: Literal["error", "info"]
    message: str
    field: str | None = None


class SettingsError(ValueError):
    """Settings an analysis cannot run with; ``problems`` lists every one, in order."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__(" ".join(problem.message for problem in self.problems))
