"""The release plan of private means per group and for the whole population (follows
:class:`dpcore.release.ReleasePlan`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from dpcore._validate import open_unit_interval
from dpcore.accounting import Budget, _check_budget
from dpcore.analyses.mean.coinpress import CoinPressMean
from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import STRATEGIES, Strategy, run_strategy
from dpcore.grouping import GroupingSpec
from dpcore.mechanisms import NoiseSource, noise_source
from dpcore.release.plan import DatasetRef, _data_line, _init_fields, _strata_line
from dpcore.shares import PublicShares

__all__ = [
    "MeanPlan",
]


MeanEstimator = LaplaceMean | GaussianMean | CoinPressMean


# Draws of the public noise distribution behind each noise interval (post-processing only).
INTERVAL_DRAWS = 20_000


STRATEGY_LABELS = {
    "stratified": "stratified: one estimate per group, recombined with public shares",
    "global_only": "whole population only",
    "global_and_groups": "whole population and every group, budget split between them",
}


@dataclass(frozen=True)
class MeanPlan:
    r"""A planned release of private means per group and for the whole population.

    Parameters
    ----------
    values
        Each group's values of the value column and the groups' public recombination shares
        (:class:`~dpcore.analyses.mean.statistics.GroupValues`), built from the grouping of
        ``spec`` on the data that ``dataset`` fingerprints. Not part of the plan's identity (the
        spec, the value column and the fingerprint are).
    dataset, spec
        Where the groups come from; written into the metadata and the reproduction script.
    estimator
        :class:`~dpcore.analyses.mean.LaplaceMean`, :class:`~dpcore.analyses.mean.GaussianMean` or
        :class:`~dpcore.analyses.mean.CoinPressMean`.
    budget
        The budget of the release; every strategy composes to exactly this cost (disjoint groups
        in parallel, AAAI 2024 eq. 4; a global and group release split it sequentially).
    strategy
        ``"stratified"`` releases each group's estimate and their share-weighted sum;
        ``"global_only"`` only the population estimate; ``"global_and_groups"`` both, with
        ``global_fraction`` of the budget on the population estimate.
    level
        Coverage of the noise intervals.
    label
        A name for the release; part of its identity, so renaming plans a new release.
    """

    values: GroupValues = field(compare=False, repr=False)
    dataset: DatasetRef
    spec: GroupingSpec
    estimator: MeanEstimator
    budget: Budget
    strategy: Strategy = "stratified"
    global_fraction: float = 0.5
    level: float = 0.95
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.values, GroupValues) or self.values.shares is None:
            raise TypeError(
                "`values` must be GroupValues built from a grouping (they carry its shares), got "
                f"{type(self.values).__name__}"
            )
        if not isinstance(self.estimator, LaplaceMean | GaussianMean | CoinPressMean):
            raise TypeError(
                "`estimator` must be a LaplaceMean, GaussianMean or CoinPressMean, got "
                f"{type(self.estimator).__name__}"
            )
        _check_budget("budget", self.budget)
        if self.strategy not in STRATEGIES:
            raise ValueError(
                f"`strategy` must be one of {sorted(STRATEGIES)}, got {self.strategy!r}"
            )
        open_unit_interval("global_fraction", self.global_fraction)
        open_unit_interval("level", self.level)
        if not self.label.strip():
            default = f"Mean of {self.value} by {' × '.join(self.spec.by)}"
            object.__setattr__(self, "label", default)

    @property
    def cost(self) -> Budget:
        return self.budget

    @property
    def value(self) -> str:
        """The value column."""
        return self.values.value

    @property
    def shares(self) -> PublicShares:
        """The public recombination shares of the estimated groups."""
        return self.values.shares

    def parameters(self) -> dict:
        """Everything that defines the release, JSON-ready (the plan's identity)."""
        return {
            "kind": "mean",
            "statistic": f"mean of {self.value}",
            "label": self.label,
            "dataset": {"name": self.dataset.name, "fingerprint": self.dataset.fingerprint,
                        "rows": self.dataset.rows},
            "strata": self.spec.to_dict(),
            "value": self.value,
            "estimator": {"class": type(self.estimator).__name__,
                          **_init_fields(self.estimator)},
            "budget": {"kind": self.budget.kind, **self.budget.components()},
            "strategy": self.strategy,
            # The split matters only when both a global and group estimates are released.
            "global_fraction": (
                self.global_fraction if self.strategy == "global_and_groups" else None
            ),
            "level": self.level,
        }  # fmt: skip

    def run(self, noise: NoiseSource) -> list[dict]:
        """Draw the release: one row per released estimate with its noise interval."""
        result = run_strategy(
            self.strategy, self.values, self.estimator, self.budget, self.shares,
            global_fraction=self.global_fraction, noise=noise,
        )  # fmt: skip
        if self.sizes_public:
            group_half, global_half = self._noise_quantiles(result.group_estimates)
        else:  # intervals built from the exact sizes would give those sizes away
            group_half, global_half = [None] * self.values.k, None
        rows = []
        if self.strategy != "global_only":
            for g, label in enumerate(self.values.labels):
                rows.append(self._row("group", label, result.group_estimates[g], group_half[g]))
                rows[-1]["public_share"] = float(self.shares.values[g])
        rows.append(self._row("population", "All", result.global_estimate, global_half))
        return rows

    def _row(self, level: str, group: str, estimate: float, half: np.ndarray | None) -> dict:
        # Basic (pivot) interval: estimate − upper error quantile, estimate − lower one
        # (Davison & Hinkley 1997, §5.2); None where no interval is released.
        estimate = float(estimate)
        return {
            "level": level,
            "group": group,
            "estimate": estimate,
            "low": None if half is None else estimate - float(half[1]),
            "high": None if half is None else estimate - float(half[0]),
        }

    @property
    def sizes_public(self) -> bool:
        """CoinPress and the clipped means with ``n_public=True`` treat group sizes as public."""
        return getattr(self.estimator, "n_public", True)

    def _noise_quantiles(self, group_estimates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r"""Quantiles of the estimation error due to the DP noise, by parametric bootstrap.

        Reruns the same strategy on stand-in data in which every member of group g has the value
        :math:`\tilde\mu_g` (the DP estimate clipped to the public range), with the public group
        sizes, and records the error of each draw. Only DP outputs and public parameters enter,
        so this is post-processing. With public sizes, Laplace and Gaussian errors do not depend
        on the values at all and the intervals are exact up to Monte Carlo error; with private
        sizes and for CoinPress they are plug-in approximations. The intervals describe the noise
        only: they cover the clipped sample mean, not sampling error.
        """
        low, high = _public_range(self.estimator)
        centres = np.clip(np.asarray(group_estimates, dtype=float), low, high)
        stand_in = _constant_values(self.values.labels, self.values.sizes, centres)
        draws = run_strategy(
            self.strategy, stand_in, self.estimator, self.budget, self.shares,
            global_fraction=self.global_fraction, replicates=INTERVAL_DRAWS,
            noise=noise_source("simulation", rng=0),
        )  # fmt: skip
        global_truth = (
            float(centres @ self.shares.values)
            if self.strategy == "stratified"
            else float(stand_in.global_mean)
        )
        tails = [(1 - self.level) / 2, (1 + self.level) / 2]
        group_q = np.quantile(draws.group_estimates - centres, tails, axis=0).T
        global_q = np.quantile(draws.global_estimate - global_truth, tails)
        return group_q, global_q

    @property
    def interval_description(self) -> str:
        """What the intervals cover, for the release's metadata."""
        if not self.sizes_public:
            return (
                "no intervals: group sizes are private in this release, and an interval computed "
                "from the exact sizes would reveal them"
            )
        return (
            f"{self.level:.0%} noise intervals by parametric bootstrap of the DP noise "
            f"({INTERVAL_DRAWS:,} draws); they cover the clipped sample mean, not sampling error"
        )

    def review_lines(self) -> list[str]:
        """Markdown lines that describe the plan for a person about to commit it."""
        return [
            f"**Statistic:** mean of `{self.value}`, {STRATEGY_LABELS[self.strategy]}",
            _data_line(self.dataset),
            _strata_line(self.spec, self.values.k, self.shares),
            f"**Estimator:** {self.estimator.name} — `{self.estimator!r}`",
        ]

    def script_body(self) -> str:
        """The Python lines that rebuild this plan from a frame named ``frame``."""
        estimator = type(self.estimator).__name__
        arguments = ", ".join(f"{k}={v!r}" for k, v in _init_fields(self.estimator).items())
        spec_arguments = ", ".join(
            f"{f.name}={getattr(self.spec, f.name)!r}" for f in fields(self.spec)
        )
        return (
            f"from dpcore.analyses.mean import {estimator}, GroupValues, MeanPlan\n"
            "from dpcore.grouping import GroupingSpec\n"
            "from dpcore.release import DatasetRef\n\n"
            f"spec = GroupingSpec({spec_arguments})\n"
            f"values = GroupValues.from_grouping(spec.build(frame), frame, {self.value!r})\n"
            "plan = MeanPlan(\n"
            "    values=values,\n"
            f"    dataset=DatasetRef.of(frame, {self.dataset.name!r}),\n"
            "    spec=spec,\n"
            f"    estimator={estimator}({arguments}),\n"
            f"    budget={self.budget!r},\n"
            f"    strategy={self.strategy!r},\n"
            f"    global_fraction={self.global_fraction!r},\n"
            f"    level={self.level!r},\n"
            f"    label={self.label!r},\n"
            ")\n"
        )


def _public_range(estimator: MeanEstimator) -> tuple[float, float]:
    if isinstance(estimator, CoinPressMean):
        return estimator.prior
    if estimator.bounds is None:
        return -np.inf, np.inf
    return estimator.bounds


def _constant_values(
    labels: tuple[str, ...], sizes: np.ndarray, centres: np.ndarray
) -> GroupValues:
    """Groups of the given sizes in which every value equals the group's centre."""
    values = np.repeat(centres, sizes)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    return GroupValues(
        value="value", labels=labels, sizes=sizes, sums=centres * sizes,
        sumsq=centres**2 * sizes, sorted_values=values, offsets=offsets,
        prefix=np.concatenate([[0.0], np.cumsum(values)]),
    )  # fmt: skip
