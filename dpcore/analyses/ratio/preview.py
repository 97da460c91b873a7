"""One release of every group's ratio (the preview) and simulated releases (the study).

Each group releases its own noisy sums (Miao & Li 2022, §2.3.1) and gets its own interval (§2.4);
the global ratio is recombined from the noisy group sums (post-processing, §4).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
import pandas as pd

from dpcore.analyses.ratio.groups import GroupRatioSums
from dpcore.analyses.ratio.intervals import (
    NO_VARIANCE,
    RatioCI,
    RatioComparison,
    compare_ratios,
    ratio_interval,
)
from dpcore.analyses.ratio.noise import RatioRelease, release_ratio_sums
from dpcore.analyses.ratio.sums import (
    Composition,
    Mechanism,
    Method,
    RatioSums,
    Scale,
)
from dpcore.foundations.mechanisms import NoiseSource, SimulationNoise
from dpcore.foundations.metrics import interval_score
from dpcore.foundations.validation import as_rng, instance_of, positive_int, shown
from dpcore.release.plan import ReleaseRow

__all__ = [
    "ALL_GROUPS",
    "RatioResult",
    "estimate_ratios",
    "recombine",
    "select_group",
    "simulate_ratio_intervals",
]


ALL_GROUPS = "All groups"
"""Label of the global ratio, recombined from the noisy group sums."""


def recombine(release: RatioRelease) -> RatioRelease:
    r"""The global release: every noisy sum added up over the groups (the last axis).

    Post-processing of the group releases, so it costs no extra budget (the paper, §4: "the sums
    can be trivially added up"). The noise on a total is the sum of k independent group noises, of
    variance :math:`k\sigma^2` (Gaussian: exactly :math:`N(0, k\sigma^2)`) or :math:`2kb^2`
    (Laplace), so the returned noise scale is :math:`\sqrt k` times the group's. For Laplace that
    matches the variance — all the analytical correction (§2.4.3) uses — while the Monte Carlo
    correction (§2.4.2) then re-noises with one Laplace of that variance rather than a sum of k
    (a close approximation for k ≥ 2, and exact in the variance).
    """
    instance_of("release", release, RatioRelease)
    shape = release.sums.shape
    if not shape:
        raise ValueError("`release` must hold one entry per group (last axis), got a scalar")
    k = shape[-1]
    totals = {
        f.name: np.sum(np.broadcast_to(getattr(release.sums, f.name), shape), axis=-1)
        for f in fields(release.sums)
        if getattr(release.sums, f.name) is not None
    }
    scales = {name: math.sqrt(k) * scale for name, scale in release.noise_scale.items()}
    return dataclasses.replace(
        release, sums=RatioSums(**totals), noise_scale=scales,
        noise_terms=release.noise_terms * k,
    )  # fmt: skip


def select_group(ci: RatioCI, index: int | np.ndarray | tuple) -> RatioCI:
    """The part of a vectorized :class:`RatioCI` at ``index`` (e.g. one group), for
    :func:`~dpcore.analyses.ratio.compare_ratios`."""
    instance_of("ci", ci, RatioCI)

    def part(value):
        return value if value is None or np.ndim(value) == 0 else np.asarray(value)[index]

    sums = RatioSums(
        **{f.name: part(getattr(ci.sums, f.name)) for f in fields(ci.sums)},
    )
    taken = {
        name: part(getattr(ci, name))
        for name in ("estimate", "low", "high", "variance", "flag", "effective_n")
    }
    for name, value in taken.items():
        if isinstance(value, np.ndarray) and value.ndim == 0:
            taken[name] = value.item()
        elif isinstance(value, np.generic):
            taken[name] = value.item()
    return dataclasses.replace(ci, sums=sums, **taken)


@dataclass(frozen=True)
class RatioRow(ReleaseRow):
    """A released ratio with its variance (on the analysis scale), the reason it has no interval
    (``flag``, '' when it has one) and the noisy sums it comes from — all DP outputs."""

    variance: float | None = None
    flag: str = ""
    noisy_sums: tuple[tuple[str, float], ...] = ()

    @classmethod
    def of(cls, level: str, group: str, ci: RatioCI) -> RatioRow:
        """The row of one (unvectorised) interval, post-processed into the ratio's public range
        [0, ∞): s and y are non-negative (§2), so a lower end below 0 is raised to 0. The ratio
        is withheld (None, its reason in ``flag``) when a noisy sum it needs is not positive,
        e.g. −27.66 / −8.97 would otherwise publish 3.08; with only the variance unusable, the
        ratio is released without an interval."""
        estimate = float(ci.estimate)
        usable = ci.flag is None
        defined = usable or ci.flag == NO_VARIANCE
        return cls(
            level=level,
            group=group,
            estimate=estimate if defined and estimate > 0 else None,
            low=max(float(ci.low), 0.0) if usable else None,
            high=float(ci.high) if usable else None,
            variance=float(ci.variance) if usable else None,
            flag="" if usable else str(ci.flag),
            noisy_sums=tuple((name, float(ci.sums.value(name))) for name in ci.sums.released),
        )

    def extra(self) -> dict:
        variance = self.variance
        return {
            "variance": variance if variance is not None and math.isfinite(variance) else None,
            "flag": self.flag,
            **{f"noisy_sum_{name}": value for name, value in self.noisy_sums},
        }


@dataclass(frozen=True, eq=False)
class RatioResult:
    """One release of every group's sums and the intervals formed from it.

    ``groups`` is vectorized over the groups (shape ``(k,)``), ``overall`` is the global ratio
    from :func:`recombine`. Every number here is a DP output (post-processing of the release).
    """

    labels: tuple[str, ...]
    groups: RatioCI
    overall: RatioCI
    release: RatioRelease

    def rows(self) -> list[RatioRow]:
        """One row per group, then the global ratio (see :class:`RatioRow`)."""
        rows = [RatioRow.of("group", label, select_group(self.groups, g))
                for g, label in enumerate(self.labels)]  # fmt: skip
        rows.append(RatioRow.of("population", ALL_GROUPS, self.overall))
        return rows

    def frame(self) -> pd.DataFrame:
        """:meth:`rows` as a frame: level, group, estimate, low, high, variance, flag ('' when
        the interval could be formed) and the noisy sums."""
        return pd.DataFrame([row.to_dict() for row in self.rows()])

    def compare(self, a: int, b: int, level: float | None = None) -> RatioComparison:
        """Two groups' difference with its interval and z-test (§2.4, :func:`compare_ratios`)."""
        for name, value in (("a", a), ("b", b)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer):
                raise TypeError(f"`{name}` must be a group index, got {shown(value)}")
            if not 0 <= value < len(self.labels):
                raise ValueError(
                    f"`{name}` must be a group index in [0, {len(self.labels) - 1}], got {shown(value)}"
                )
        if a == b:
            raise ValueError(f"`a` and `b` must be different groups, got {a!r} for both")
        level = self.groups.level if level is None else level
        return compare_ratios(select_group(self.groups, a), select_group(self.groups, b), level)


def estimate_ratios(
    sums: GroupRatioSums,
    *,
    epsilon: float,
    delta: float | None,
    mechanism: Mechanism,
    composition: Composition = "basic",
    method: Method = "analytical",
    scale: Scale = "ratio",
    level: float = 0.95,
    B: int = 200,
    noise: NoiseSource | None = None,
    rng: np.random.Generator | int | None = None,
) -> RatioResult:
    """Release every group's sums once and form the group and global intervals (§2.3–2.4).

    The release is :func:`~dpcore.analyses.ratio.release_ratio_sums` on the ``(k,)`` sums (each
    group its own noise; parallel composition). ``noise`` defaults to numpy simulation noise from
    ``rng`` (a preview); a release passes OpenDP's :class:`~dpcore.foundations.mechanisms.SecureNoise`.
    ``rng`` also seeds the Monte Carlo correction (post-processing).
    """
    instance_of("sums", sums, GroupRatioSums)
    generator = as_rng(rng)
    release = release_ratio_sums(
        sums.sums,
        epsilon=epsilon,
        delta=delta,
        mechanism=mechanism,
        bounds=sums.bounds,
        composition=composition,
        noise=SimulationNoise(rng=generator) if noise is None else noise,
    )
    options = {"method": method, "scale": scale, "level": level, "B": B}
    groups = ratio_interval(release, **options, rng=generator)
    overall = ratio_interval(recombine(release), **options, rng=generator)
    return RatioResult(sums.labels, groups, overall, release)


def _summary(ci: RatioCI, truth: np.ndarray) -> dict[str, np.ndarray]:
    """Per-column coverage, mean width, mean interval score and flagged share over replicates.

    On the ratio scale. As in the paper's tables (and :func:`ratio_study`), flagged replicates
    count as not covering and are left out of the mean width and score.
    """
    low, high = np.asarray(ci.low, dtype=float), np.asarray(ci.high, dtype=float)
    truth = np.broadcast_to(np.asarray(truth, dtype=float), low.shape)
    known = np.isfinite(truth[0])  # the truth is undefined where the exact Σwy is 0
    ok = ~np.asarray(ci.flagged, dtype=bool)
    covered = (low <= truth) & (truth <= high)
    with np.errstate(invalid="ignore"):
        score = np.where(ok, interval_score(low, high, truth, 1 - ci.level), np.nan)
    width = np.where(ok, high - low, np.nan)
    usable = ok.sum(axis=0)
    with warnings.catch_warnings():  # a group whose every release is degenerate has no median
        warnings.simplefilter("ignore", RuntimeWarning)
        median_width = np.nanmedian(width, axis=0)
        median_score = np.nanmedian(score, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            "coverage": np.where(known, covered.mean(axis=0), np.nan),
            "width": np.where(usable > 0, np.nansum(width, axis=0) / usable, np.nan),
            "median_width": median_width,
            "score": np.where((usable > 0) & known, np.nansum(score, axis=0) / usable, np.nan),
            "median_score": np.where(known, median_score, np.nan),
            "flagged": 1.0 - usable / low.shape[0],
        }


def simulate_ratio_intervals(
    sums: GroupRatioSums,
    *,
    epsilon: float,
    delta: float | None,
    mechanism: Mechanism,
    composition: Composition = "basic",
    methods: Sequence[Method] = ("none", "monte_carlo", "analytical"),
    scale: Scale = "ratio",
    level: float = 0.95,
    B: int = 200,
    replicates: int = 1000,
    resampled: RatioSums | None = None,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Coverage, width and interval score of every method over simulated releases (§3).

    ``replicates`` releases of the groups' exact sums are drawn at once (one array, no loop per
    replicate); each method's intervals come from the *same* noisy sums (common random numbers).
    The truth is the exact ratio of the clipped rows of each group (and of all groups for the
    global ratio). With ``resampled`` (bootstrap sums from :func:`bootstrap_group_sums`, shape
    ``(replicates, k)``) every replicate also redraws the rows, so the interval's sampling part is
    tested too; without it only the DP noise varies, and intervals that include the sampling
    variance are conservative.

    Returns one row per group (then :data:`ALL_GROUPS`) and method: group, rows, method,
    coverage, width (mean, as in the paper's tables) and median_width, score (mean interval score,
    Gneiting & Raftery 2007 eq. 43) and median_score, all on the ratio scale, flagged (share of
    degenerate replicates: counted as not covering, left out of width and score) and reps. The
    medians are robust to the few releases whose noisy denominator is near 0, which can dominate
    the means for small groups.
    """
    instance_of("sums", sums, GroupRatioSums)
    replicates = positive_int("replicates", replicates)
    generator = as_rng(rng)
    if resampled is None:
        exact, count = sums.sums, replicates
    else:
        if not isinstance(resampled, RatioSums) or resampled.shape != (replicates, sums.k):
            raise ValueError(
                f"`resampled` must be RatioSums of shape ({replicates}, {sums.k}), got "
                f"{getattr(resampled, 'shape', type(resampled).__name__)}"
            )
        exact, count = resampled, None
    release = release_ratio_sums(
        exact,
        epsilon=epsilon,
        delta=delta,
        mechanism=mechanism,
        bounds=sums.bounds,
        composition=composition,
        noise=SimulationNoise(rng=generator),
        replicates=count,
    )
    overall = recombine(release)
    labels = [*sums.labels, ALL_GROUPS]
    rows = [*np.asarray(sums.rows).tolist(), int(np.sum(sums.rows))]
    truth = np.append(sums.truth, sums.global_truth)
    frames = []
    for method in methods:
        options = {"method": method, "scale": scale, "level": level, "B": B, "rng": generator}
        group = _summary(ratio_interval(release, **options), sums.truth)
        whole = _summary(ratio_interval(overall, **options), truth[-1])
        frames.append(
            pd.DataFrame(
                {
                    "group": labels,
                    "rows": rows,
                    "method": method,
                    **{key: np.append(group[key], whole[key]) for key in group},
                    "reps": replicates,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
