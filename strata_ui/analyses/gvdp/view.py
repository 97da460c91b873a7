"""What GVDP's pages show, apart from what a release depends on (:class:`GvdpView`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from dpcore.analyses.gvdp.model import ModelKind

DEFAULT_REPLICATIONS: dict[str, int] = {"mean": 50, "ols": 40, "logistic": 10}
"""Coverage replications R per model kind by default (a logistic fit is the slowest)."""


@dataclass(frozen=True)
class GvdpView:
    """How GVDP's Estimator and Compare pages show the runs (simulation only; never spends).

    ``group_coefficient`` and ``diagnostic_coefficient`` are the coefficients drawn per group and
    in the k diagnostic (None: the model's last); ``replications`` holds R per model kind, so
    switching the model and back keeps it.
    """

    group_coefficient: str | None = None
    diagnostic_coefficient: str | None = None
    coverage_source: Literal["data", "synthetic"] = "data"
    replications: tuple[tuple[str, int], ...] = tuple(DEFAULT_REPLICATIONS.items())
    synthetic_factor: float = 100.0

    def replications_for(self, kind: ModelKind) -> int:
        """The coverage replications R of model ``kind``."""
        return int(dict(self.replications).get(kind, DEFAULT_REPLICATIONS[kind]))

    def with_replications(self, kind: ModelKind, replications: int) -> GvdpView:
        """This view with R = ``replications`` for model ``kind``."""
        chosen = {**dict(self.replications), kind: int(replications)}
        return dataclasses.replace(self, replications=tuple(chosen.items()))
