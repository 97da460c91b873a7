"""Argument checks shared by every public entry point.

Messages follow one pattern so users can act on them: the parameter in backticks, what it must be,
and what was received, e.g. "`epsilon` must be a finite number > 0, got -1.0".
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np


def real_number(name: str, value: object) -> float:
    """Return ``value`` as a float, raising ``TypeError`` for non-numbers (bools included)."""
    if isinstance(value, bool) or not isinstance(value, Real | np.integer | np.floating):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__} {value!r}")
    return float(value)


def finite_number(name: str, value: object) -> float:
    x = real_number(name, value)
    if not math.isfinite(x):
        raise ValueError(f"`{name}` must be a finite number, got {x!r}")
    return x


def positive_number(name: str, value: object) -> float:
    """A finite number strictly greater than zero."""
    x = real_number(name, value)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"`{name}` must be a finite number > 0, got {x!r}")
    return x


def open_unit_interval(name: str, value: object) -> float:
    """A probability strictly between 0 and 1."""
    x = real_number(name, value)
    if not (0 < x < 1):
        raise ValueError(f"`{name}` must be a number with 0 < {name} < 1, got {x!r}")
    return x


def positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"`{name}` must be an integer, got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"`{name}` must be an integer >= 1, got {value!r}")
    return int(value)


def as_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    """Normalise the keyword-only ``rng`` argument once (SciPy's convention)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, int | np.integer) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise TypeError(f"`rng` must be a numpy Generator, an int seed or None, got {rng!r}")
