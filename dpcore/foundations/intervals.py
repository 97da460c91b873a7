"""The one result type for an estimate with its confidence interval, shared by every estimator.

Every analysis reports its intervals through :class:`Interval` (or a subclass that adds the
analysis' own fields: the ratio's variance and flag, GVDP's diagnostics), so charts, coverage
studies and release rows read ``estimate``, ``low``, ``high``, ``level`` and ``method`` the same
way whatever produced them.
"""

from __future__ import annotations

import dataclasses
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

    def within(self, lowest: float | np.ndarray, highest: float | np.ndarray) -> Interval:
        """This result post-processed into the public range [lowest, highest]: the estimate and
        both ends clipped to it (NaN ends stay NaN). Clipping DP outputs to a public range is
        post-processing, so it costs no privacy; when the target lies in the range (a clipped
        mean, a coefficient in its public box) the clipped interval covers it exactly when the
        original did, and the estimate's error can only shrink."""

        def clip(values: float | np.ndarray) -> float | np.ndarray:
            clipped = np.clip(values, lowest, highest)
            return float(clipped) if np.ndim(clipped) == 0 else clipped

        return dataclasses.replace(
            self, estimate=clip(self.estimate), low=clip(self.low), high=clip(self.high)
        )
