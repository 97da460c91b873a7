"""Strata Lab's analyses: one package each (mean, ratio, gvdp, synth, and the private sample), every
one behind the :class:`~dpcore.analyses.base.Analysis` interface, found through one registry.

To add an analysis: a package ``dpcore/analyses/<name>/`` whose ``analysis`` module defines its
frozen settings and an :class:`~dpcore.analyses.base.Analysis` instance, a package
``strata_ui/analyses/<name>/`` with its widgets (an ``AnalysisUI`` named ``UI``), and one line in
:data:`ANALYSES` below.
"""

from dpcore.analyses.base import Analysis, PlannerUnavailable
from dpcore.analyses.gvdp.analysis import GVDP
from dpcore.analyses.mean.analysis import MEAN
from dpcore.analyses.ratio.analysis import RATIO
from dpcore.analyses.sample.analysis import SAMPLE
from dpcore.analyses.synth.analysis import SYNTH

ANALYSES: tuple[Analysis, ...] = (MEAN, RATIO, GVDP, SYNTH, SAMPLE)
"""Every analysis, in the order a user is offered them."""

REGISTRY: dict[str, Analysis] = {analysis.name: analysis for analysis in ANALYSES}


def get(name: str) -> Analysis:
    """The analysis registered as ``name``; ``ValueError`` listing the names otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"`name` must be one of {', '.join(map(repr, REGISTRY))}, got {name!r}"
        ) from None


__all__ = ["ANALYSES", "REGISTRY", "Analysis", "PlannerUnavailable", "get"]
