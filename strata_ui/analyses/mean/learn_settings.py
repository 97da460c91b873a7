"""What the mean's Learn items remember between reruns (:class:`MeanLearn`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class MeanLearn:
    """The mean's Learn items' choices; they never change the plan the Release page commits."""

    # Why small groups pay more
    group_epsilon: float = 1.0
    group_size: int = 1000
    # Stratify or not
    alpha: float | None = None  # None: start at the data's fitted α
    # CoinPress step by step
    coinpress_group: str | None = None  # None: the smallest group
    coinpress_steps: int = 3
    coinpress_rho: float = 0.5
    # Too narrow or too wide: the clipping trade-off
    clipping_group: str | None = None  # None: a middle-sized group
    clipping_epsilon: float = 0.5
    clipping_fraction: float = 0.2
    # Presets
    figure1_groups: str = "race"
    figure1_alpha: float = 0.13
    figure3_rho: float = 0.5
