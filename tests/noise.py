"""Noise sources for tests that need to see what an estimator asked for."""

from __future__ import annotations

import numpy as np

from dpcore.foundations.mechanisms import SimulationNoise


class RecordingNoise(SimulationNoise):
    """numpy noise that records the Laplace scale of every call (``zero``: adds none)."""

    def __init__(self, *, rng=None, zero: bool = False) -> None:
        super().__init__(rng=rng)
        self.calls: list[tuple[tuple[int, ...], float]] = []
        self.zero = zero

    def add_laplace(self, values, scale):
        values = np.asarray(values, dtype=float)
        self.calls.append((values.shape, float(scale)))
        return values.copy() if self.zero else super().add_laplace(values, scale)
