r"""Small groups decided by a release's own noisy counts, never by the exact ones.

A release that keeps group sizes private draws a noisy count of every group anyway (the mean's
noisy count, :class:`~dpcore.analyses.mean.ClippedMean` with ``n_public=False``). Over a
*declared* list of groups (every combination of the declared categories, one with no rows
included) those counts are the Laplace mechanism on a histogram, ε-DP under add/remove-one
(Dwork & Roth 2014, Thm. 3.6), or the Gaussian mechanism, ρ-zCDP (Bun & Steinke 2016,
Prop. 1.6). Everything here reads only those noisy counts, so it is post-processing: it costs
nothing more and needs no δ — unlike :class:`~dpcore.foundations.selection.KeySelection`, which must find
groups absent from a declared list, where a group of one person either appears or does not.

The rule mirrors :meth:`~dpcore.foundations.grouping.Grouping.from_frame`'s, with noisy counts
:math:`\tilde c_g` for the exact :math:`n_g` and the minimum size N as the threshold:

- a group with :math:`\tilde c_g \ge N` is released as it is;
- ``"merge"``: the groups below N are pooled into :data:`~dpcore.foundations.grouping.OTHER_LABEL`, whose
  noisy count is :math:`\sum_{small} \tilde c_g` and noisy sum :math:`\sum_{small} \tilde s_g`
  (sums of DP outputs: post-processing). If that pooled count is itself below N, the small
  groups are dropped instead, as the exact rule drops a merged group that is too small;
- ``"drop"``: the groups below N are not released ("release only the groups whose noisy count
  clears the threshold").

Our choices, where neither the paper (AAAI 2024 keeps sizes public) nor the exact rule says: the
pooled group's mean is its pooled noisy sum over its pooled noisy count (with the floor at 1 of
:meth:`~dpcore.analyses.mean.estimators.NoisySums.means`), rather than a fresh draw, which would
cost budget; and the comparison is ``≥ N`` as the exact rule keeps a group of exactly N rows.

Pure numpy/scipy; never imports streamlit or plotly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpcore.foundations.labels import OTHER_LABEL, plural
from dpcore.foundations.validation import positive_int, positive_number

__all__ = ["CountNoise", "NoisyCountRule", "NoisyDecision", "NoisyRecombination"]

NoisyPolicy = Literal["merge", "drop"]


@dataclass(frozen=True)
class CountNoise:
    """The noise a release adds to each group's count: Laplace of scale ``scale`` (b) or
    Gaussian of standard deviation ``scale`` (σ)."""

    kind: Literal["laplace", "gaussian"]
    scale: float

    def __post_init__(self) -> None:
        if self.kind not in ("laplace", "gaussian"):
            raise ValueError(f"`kind` must be 'laplace' or 'gaussian', got {self.kind!r}")
        object.__setattr__(self, "scale", positive_number("scale", self.scale))

    def clear_probability(self, counts: np.ndarray, threshold: float) -> np.ndarray:
        r""":math:`P[c + Z \ge N]` for each exact count c: the chance that a group's noisy count
        reaches the threshold. Reads exact counts, so it is a curator's preview."""
        from scipy import stats  # deferred: scipy.stats takes a third of a command's start-up

        gap = (np.asarray(counts, dtype=float) - threshold) / self.scale
        if self.kind == "gaussian":
            return stats.norm.cdf(gap)
        return stats.laplace.cdf(gap)

    def describe(self) -> str:
        if self.kind == "laplace":
            return f"Laplace noise of scale {self.scale:.3g} (typical size ±{self.scale:.3g})"
        return f"Gaussian noise of standard deviation {self.scale:.3g}"


@dataclass(frozen=True)
class NoisyDecision:
    """Which groups a release publishes, decided from its noisy counts; masks of shape ``(k,)``
    or ``(replicates, k)``: ``kept`` (released as they are) and ``merged`` (pooled into
    :data:`~dpcore.foundations.grouping.OTHER_LABEL`); the others are dropped."""

    kept: np.ndarray
    merged: np.ndarray

    @property
    def dropped(self) -> np.ndarray:
        return ~self.kept & ~self.merged

    @property
    def has_other(self) -> np.ndarray:
        """Whether the pooled group is released (shape ``()`` or ``(replicates,)``)."""
        return self.merged.any(axis=-1)

    def pooled(self, values: np.ndarray) -> np.ndarray:
        """The sum of ``values`` over the merged groups: the pooled group's noisy sum or count."""
        return np.where(self.merged, values, 0.0).sum(axis=-1)


@dataclass(frozen=True)
class NoisyRecombination:
    r"""The groups a release publishes after the rule, and their recombination.

    ``shares`` (like the counts) are the kept groups' shares, 0 for the others; ``other_share``
    and ``other_mean`` the pooled group's (0 and NaN where there is none); ``whole`` is
    :math:`\sum_g \hat s_g \hat\mu_g` over the released groups, with
    :math:`\hat s_g = \max(\tilde c_g, 0) / \sum_{released} \max(\tilde c_h, 0)` (as
    :func:`~dpcore.foundations.shares.noisy_count_shares`), NaN when nothing is released."""

    decision: NoisyDecision
    shares: np.ndarray
    other_share: np.ndarray
    other_mean: np.ndarray
    whole: np.ndarray


@dataclass(frozen=True)
class NoisyCountRule:
    """Merge or drop the groups whose noisy count is below ``min_size`` (module notes)."""

    min_size: int
    policy: NoisyPolicy

    def __post_init__(self) -> None:
        object.__setattr__(self, "min_size", positive_int("min_size", self.min_size))
        if self.policy not in ("merge", "drop"):
            raise ValueError(f"`policy` must be 'merge' or 'drop', got {self.policy!r}")

    def decide(self, counts: np.ndarray) -> NoisyDecision:
        """The decision from noisy counts of shape ``(k,)`` or ``(replicates, k)``."""
        counts = np.asarray(counts, dtype=float)
        small = counts < self.min_size
        if self.policy == "drop":
            return NoisyDecision(kept=~small, merged=np.zeros_like(small))
        pooled = np.where(small, counts, 0.0).sum(axis=-1, keepdims=True)
        return NoisyDecision(kept=~small, merged=small & (pooled >= self.min_size))

    def recombine(
        self, sums: np.ndarray, counts: np.ndarray, public_range: tuple[float, float]
    ) -> NoisyRecombination:
        """Apply the rule to noisy sums and counts and recombine the released groups, each
        group's and the pooled group's mean first clamped into ``public_range`` (where every
        true mean lies: post-processing), so that the whole is the share-weighted sum of the
        means a release publishes (AAAI 2024, eq. 4)."""
        sums, counts = np.asarray(sums, dtype=float), np.asarray(counts, dtype=float)
        low, high = public_range
        decision = self.decide(counts)
        kept_weight = np.where(decision.kept, np.maximum(counts, 0.0), 0.0)
        other_count = decision.pooled(counts)  # ≥ N ≥ 1 wherever the pooled group exists
        total = kept_weight.sum(axis=-1) + other_count
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where(total > 0, 1.0 / np.where(total > 0, total, 1.0), np.nan)
            other_mean = np.where(
                decision.has_other,
                np.clip(decision.pooled(sums) / np.maximum(other_count, 1.0), low, high),
                np.nan,
            )
        means = np.clip(sums / np.maximum(counts, 1.0), low, high)
        shares = kept_weight * scale[..., None]
        other_share = other_count * scale
        whole = (shares * means).sum(axis=-1) + np.where(
            decision.has_other, other_share * np.nan_to_num(other_mean), 0.0
        )
        return NoisyRecombination(
            decision=decision,
            shares=np.nan_to_num(shares),
            other_share=np.nan_to_num(other_share),
            other_mean=other_mean,
            whole=np.where(total > 0, whole, np.nan),
        )

    def flag(self, merged: bool) -> str:
        """Why a group is not released as itself, for its row in the release."""
        below = f"its noisy count was below {self.min_size:,}"
        if merged:
            return f"merged into “{OTHER_LABEL}”: {below}"
        if self.policy == "merge":
            return f"not released: {below}, and so was the count of the small groups merged"
        return f"not released: {below}"

    def describe(self) -> str:
        """The rule in words, for the release's review and exports."""
        what = f"merged into “{OTHER_LABEL}”" if self.policy == "merge" else "not released"
        return (
            f"groups whose noisy count is below {plural(self.min_size, 'row')} are "
            f"{what}, decided from the release's own noisy counts (differentially private, "
            "already paid for with the release), never from the exact counts"
        )
