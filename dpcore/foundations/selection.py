r"""Finding the groups privately: noisy counts of every group present, released above a threshold.

When the categories of the grouping columns are not declared, the groups a release may publish
come from the data, and a group's mere presence tells that someone of its kind is in the data.
Key selection publishes a group only when its count plus Laplace noise clears a threshold set so
that a group of one person is published with probability at most δ (Korolova, Kenthapadi,
Mishra & Ntoulas 2009, *Releasing Search Queries and Clicks Privately*, §4; the "stability
histogram" of Bun, Nissim & Stemmer 2016; OpenDP's ``make_laplace_threshold``, Rogers 2023).

Derivation, one person per group (add/remove-one neighbours). Each observed group g gets
:math:`\tilde c_g = c_g + \mathrm{Lap}(1/\varepsilon)`, and is published when
:math:`\tilde c_g \ge \tau`. Adding a person either raises one existing count by 1 — the
Laplace mechanism on a histogram, ε-DP (Dwork & Roth 2014, Thm. 3.6) — or creates a group of
count 1, published with probability
:math:`P[1 + \mathrm{Lap}(1/\varepsilon) \ge \tau] = \tfrac12 e^{-\varepsilon(\tau - 1)}`.
Setting that to δ gives

.. math:: \tau = 1 + \frac{\ln\!\big(1/(2\delta)\big)}{\varepsilon},

and the selection is (ε, δ)-DP. OpenDP's privacy map of ``make_laplace_threshold`` agrees (a
test checks it). We draw the noise through the release's noise source (OpenDP's vetted Laplace
sampler for a release, numpy for previews), so that previews and releases share one code path;
the comparison with τ is post-processing.

Pure numpy; never imports streamlit or plotly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpcore.foundations.accounting import ApproxDP
from dpcore.foundations.mechanisms import NoiseSource
from dpcore.foundations.validation import instance_of

__all__ = ["KeySelection", "SelectedGroups", "selection_threshold"]


def selection_threshold(budget: ApproxDP) -> float:
    r""":math:`\tau = 1 + \ln(1/(2\delta))/\varepsilon`: the noisy count a group needs to be
    published, so that a group of one person is published with probability δ (module notes)."""
    instance_of("budget", budget, ApproxDP)
    return 1.0 + math.log(1.0 / (2.0 * budget.delta)) / budget.epsilon


@dataclass(frozen=True)
class SelectedGroups:
    """The outcome of one selection: which groups are published (``mask``, shape (k,)) and the
    noisy counts drawn for every observed group (curator's side: only the published groups'
    labels leave it)."""

    mask: np.ndarray
    noisy_counts: np.ndarray


@dataclass(frozen=True)
class KeySelection:
    """Laplace noise of scale 1/ε on each observed group's count; groups at or above
    :func:`selection_threshold` are published. Costs ``budget`` (ε, δ)."""

    budget: ApproxDP

    def __post_init__(self) -> None:
        instance_of("budget", self.budget, ApproxDP)

    @property
    def threshold(self) -> float:
        return selection_threshold(self.budget)

    def select(self, counts: np.ndarray, noise: NoiseSource) -> SelectedGroups:
        """Draw the noisy counts of ``counts`` (each ≥ 1: groups present in the data) and keep
        those at or above the threshold."""
        counts = np.asarray(counts, dtype=float)
        noisy = noise.add_laplace(counts, 1.0 / self.budget.epsilon)
        return SelectedGroups(mask=noisy >= self.threshold, noisy_counts=noisy)

    def describe(self) -> str:
        return (
            f"groups found privately: Laplace noise of scale 1/ε on each group's count "
            f"(ε = {self.budget.epsilon:.4g}), a group published when its noisy count reaches "
            f"{self.threshold:.1f}, so a group of one person is published with probability at "
            f"most δ = {self.budget.delta:.2g}"
        )
