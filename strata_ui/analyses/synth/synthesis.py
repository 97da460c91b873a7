"""The session's synthesis, checked: the prepared rows (the analysis' cached statistics), the ε it
runs at, and the key that stands for the rows in the preview's and the Compare page's caches."""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpcore.analyses.synth import SYNTH, PreparedRows, SynthConfig, SynthSettings
from dpcore.analyses.synth.config import Strategy
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.shares import PublicShares
from strata_ui import constants, pipeline
from strata_ui.state import AppState, get_settings, get_state


@dataclass(frozen=True, eq=False)
class Resolved:
    """Everything a preview, a simulation or a plan needs, validated."""

    stats: PreparedRows
    epsilon: float
    key: tuple
    """Stands for :attr:`stats` in caches: the groups and the settings the rows depend on."""

    @property
    def config(self) -> SynthConfig:
        return self.stats.config

    @property
    def spec(self) -> GroupingSpec:
        return self.stats.grouping.spec

    @property
    def shares(self) -> PublicShares:
        return self.stats.grouping.shares


def synth_epsilon(state: AppState, settings: SynthSettings) -> tuple[float, str]:
    """ε of the synthesis for the Budget page's budget, and a sentence saying where it comes
    from (:meth:`~dpcore.analyses.synth.SynthAnalysis.run_epsilon`: ε = √(2ρ) for a ρ-zCDP
    budget, at which MST and AIM run at ρ); ``ValueError`` if that ε is outside the app's
    range, or MST or AIM meet an ε budget."""
    budget = pipeline.page_budget(state)
    epsilon = SYNTH.run_epsilon(settings, budget)
    if not (math.isfinite(epsilon) and constants.EPSILON_MIN <= epsilon <= constants.EPSILON_MAX):
        raise ValueError(
            f"ε = {epsilon:g} is outside the range this app allows "
            f"({constants.EPSILON_MIN:g} to {constants.EPSILON_MAX:g}). Set the budget on the "
            "Budget page."
        )
    return epsilon, SYNTH.describe_budget(settings, budget)


def resolve(strategies: tuple[Strategy, ...]) -> Resolved:
    """The session's validated synthesis for ``strategies``; ``ValueError`` says what to fix."""
    state, settings = get_state(), get_settings(SynthSettings)
    epsilon, _ = synth_epsilon(state, settings)
    stats = pipeline.current_statistics(SYNTH, settings)
    SYNTH.check_rows(stats, settings, strategies)
    key = (pipeline.grouping_key(state), SYNTH.statistics_key(settings))
    return Resolved(stats, epsilon, key)
