r"""How many synthetic rows each group gets when no public table says: from the release's own
noisy group counts, paid for with a part of its budget.

A stratified synthesis draws :math:`n_g \approx N w_g` rows for group g (AAAI 2024,
"Stratified Data Synthesis"), where the paper takes the shares :math:`w_g` as public. Read
exactly from the data they would publish every group's size (N × 42, 45, 98, … rows). With the
Strata page's default source, the release's own noisy counts, :class:`CountSplit` spends
:data:`COUNT_FRACTION` of the budget on one noisy count per declared group — a histogram, whose
sensitivity is 1 under add/remove-one — with the Laplace mechanism at ε_c (ε-DP; Dwork & Roth
2014, Thm. 3.6) or, for the zCDP synthesizers (MST, AIM), the Gaussian mechanism with
:math:`\sigma = 1/\sqrt{2\rho_c}` (ρ_c-zCDP; Bun & Steinke 2016, Prop. 1.6). The group models
run with the rest; the two compose sequentially back to the release's budget (Dwork & Roth
2014, Thm. 3.16; Bun & Steinke 2016, Lemma 2.3). The shares are then
:func:`~dpcore.foundations.shares.noisy_count_shares` of the noisy counts: post-processing.

Our choices, where the paper says nothing: a tenth of the budget (a count per group is one
number; each group's model measures many), and the small-group rule of the Strata page applies
to estimates, not to synthetic rows: a group whose noisy count is small simply gets few rows
(none at 0 or below).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpcore.foundations.accounting import (
    ZCDP,
    Budget,
    PureDP,
    exact_components,
    pure_epsilon_within,
)
from dpcore.foundations.mechanisms import NoiseSource
from dpcore.foundations.shares import noisy_count_shares

__all__ = ["COUNT_FRACTION", "CountSplit"]

COUNT_FRACTION = 0.1
"""Share of a stratified synthetic release's budget that buys its noisy group counts."""


@dataclass(frozen=True)
class CountSplit:
    """A stratified synthetic release's budget, split between its noisy group counts
    (``counts``) and its group models (``models``); both pure ε-DP or both ρ-zCDP."""

    counts: Budget
    models: Budget

    @classmethod
    def of(cls, budget: Budget) -> CountSplit:
        """:data:`COUNT_FRACTION` of ``budget`` for the counts, exactly the rest (in the
        ledger's decimal arithmetic) for the models."""
        if isinstance(budget, PureDP):
            counts = PureDP(budget.epsilon * COUNT_FRACTION)
            models = PureDP(_rest(budget.epsilon, counts.epsilon, "epsilon", budget))
            return cls(counts, models)
        counts = ZCDP(budget.rho * COUNT_FRACTION)
        return cls(counts, ZCDP(_rest(budget.rho, counts.rho, "rho", budget)))

    @classmethod
    def at_epsilon(cls, epsilon: float, zcdp: bool) -> CountSplit:
        """The split of a synthesis run at ``epsilon`` (a simulation's budget): pure ε, or for
        the zCDP synthesizers ρ = ε²/2, which is what they run at."""
        return cls.of(ZCDP(epsilon**2 / 2) if zcdp else PureDP(epsilon))

    @property
    def models_epsilon(self) -> float:
        """The ε the group models are called with (MST and AIM run at ρ = ε²/2 of it)."""
        if isinstance(self.models, PureDP):
            return self.models.epsilon
        return pure_epsilon_within(self.models.rho)

    def noisy_shares(self, sizes: np.ndarray, noise: NoiseSource) -> np.ndarray:
        """Each group's share from its noisy count (module notes); ``sizes`` are the exact
        counts, which only the noise ever touches."""
        sizes = np.asarray(sizes, dtype=float)
        if isinstance(self.counts, PureDP):
            noisy = noise.add_laplace(sizes, 1.0 / self.counts.epsilon)
        else:
            noisy = noise.add_gaussian(sizes, 1.0 / np.sqrt(2.0 * self.counts.rho))
        return noisy_count_shares(noisy)

    def describe(self) -> str:
        """Where the rows per group come from, for the review and the exports."""
        mechanism = "Laplace" if isinstance(self.counts, PureDP) else "Gaussian"
        return (
            f"rows per group in proportion to the release's own noisy group counts ({mechanism} "
            f"noise, {COUNT_FRACTION:.0%} of the budget: {self.counts}); the group models run "
            f"at {self.models}. No exact group size is used or published"
        )


def _rest(total: float, part: float, name: str, budget: Budget) -> float:
    """``total − part``, nudged down until part + rest ≤ total holds exactly."""
    rest = total - part
    limit = exact_components(budget, budget.kind)[name]
    kind = type(budget)
    while (
        exact_components(kind(part), budget.kind)[name]
        + exact_components(kind(rest), budget.kind)[name]
        > limit
    ):
        rest = np.nextafter(rest, 0.0)
    return float(rest)
