"""The one result type for an estimate with its confidence interval, shared by every estimator.

Every analysis reports its intervals through :class:`Interval` (or a subclass that adds the
analysis' own fields: the ratio's variance and flag, GVDP's diagnostics), so charts, coverage
studies and release rows read ``estimate``, ``low``, ``high``, ``level`` and ``method`` the same
way whatever produced them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Interval"]


@dataclass(frozen=True, eq=False, kw_only=True)
class Interval:
    """An estimate with its interval [low, high] at confidence ``level``, made by ``method``.

    Floats for one estimate; arrays when vectorised (over groups, replicates or coordinates).
    A NaN bound means no interval could be formed there.
    """

    estimate: float | np.ndarray
    low: float | np.ndarray
    high: float | np.ndarray
    level: float
    method: str

    @property
    def width(self) -> float | np.ndarray:
        """``high − low`` (NaN where there is no interval)."""
        return np.subtract(self.high, self.low)

    def covers(self, truth: float | np.ndarray) -> bool | np.ndarray:
        """Whether each interval contains ``truth``; an interval with a NaN bound does not."""
        covered = (np.asarray(self.low) <= truth) & (truth <= np.asarray(self.high))
        return bool(covered) if np.ndim(covered) == 0 else covered
