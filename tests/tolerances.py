"""Tolerances of statistical tests, so that each assertion keeps its power and says why."""

from __future__ import annotations

import math


def binomial_tolerance(reps: int, level: float = 0.95, sds: float = 3.0) -> float:
    """``sds`` binomial standard deviations of a coverage measured over ``reps`` replicates."""
    return sds * math.sqrt(level * (1 - level) / reps)
