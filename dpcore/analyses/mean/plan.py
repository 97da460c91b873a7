"""The release plan of private means per group and for the whole population (follows
:class:`dpcore.release.ReleasePlan`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpcore.analyses.mean import found_bounds as found
from dpcore.analyses.mean.coinpress import CoinPressMean
from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.analyses.mean.plan_checks import (
    check_sampling_error_possible,
    check_selection_possible,
    check_sizes_stay_private,
)
from dpcore.analyses.mean.plan_intervals import MeanEstimator, MeanIntervals
from dpcore.analyses.mean.plan_script import mean_script
from dpcore.analyses.mean.sampling_error import release_squares
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import (
    STRATEGIES,
    Strategy,
    StrategyResult,
    check_public_sizes_defined,
    drawn_with_release,
    run_strategy,
)
from dpcore.analyses.mean.sums import GroupSums
from dpcore.foundations.accounting import ApproxDP, Budget, PureDP, scale, sequential
from dpcore.foundations.intervals import Interval
from dpcore.foundations.labels import OTHER_LABEL, plain_number
from dpcore.foundations.mechanisms import NoiseSource
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from dpcore.foundations.private_bounds import PrivateBounds
from dpcore.foundations.selection import KeySelection
from dpcore.foundations.shares import PublicShares
from dpcore.foundations.validation import instance_of, open_unit_interval
from dpcore.release.plan import PlanHeader, Progress, ReleaseRow, init_arguments
from dpcore.release.preview import simulated_preview

__all__ = ["STRATEGY_LABELS", "MeanPlan", "MeanRow"]

DEFAULT_VARIANCE_FRACTION = 0.2
"""Share of the budget spent on the group variances when intervals include sampling error: the
variances need less precision than the means (a 20% error in a variance is 10% in a width)."""

STRATEGY_LABELS = {
    "stratified": "stratified: one estimate per group, recombined with the groups' shares",
    "global_only": "whole population only",
    "global_and_groups": "whole population and every group, budget split between them",
}


@dataclass(frozen=True)
class MeanRow(ReleaseRow):
    """A released mean; group rows carry the share they are recombined with: the public share,
    or the noisy share drawn from the release's own noisy count (a DP output). When those
    noisy counts merge or drop small groups, every row has a ``flag``: why the group is not
    released as itself ("" when it is)."""

    public_share: float | None = None
    noisy_share: float | None = None
    flag: str | None = None
    clip_low: float | None = None
    clip_high: float | None = None

    def extra(self) -> dict:
        # Bounds a release found privately: DP outputs, on every row they clipped.
        clip = (
            {}
            if self.clip_low is None
            else {"clip_low": self.clip_low, "clip_high": self.clip_high}
        )
        if self.flag is not None:
            return {"noisy_share": self.noisy_share, "flag": self.flag, **clip}
        if self.noisy_share is not None:
            return {"noisy_share": self.noisy_share, **clip}
        return clip if self.public_share is None else {"public_share": self.public_share, **clip}


@dataclass(frozen=True)
class MeanPlan(MeanIntervals):
    r"""A planned release of private means per group and for the whole population.

    Parameters
    ----------
    values
        Each group's values of the value column and the groups' public recombination shares
        (:class:`~dpcore.analyses.mean.statistics.GroupValues`, or the
        :class:`~dpcore.analyses.mean.sums.GroupSums` an engine computed), built from the
        grouping of ``header.spec`` on the data that ``header.dataset`` fingerprints. Not part of
        the plan's identity (the spec, the value column and the fingerprint are).
    header
        Data, groups, budget, label and interval level (:class:`~dpcore.release.PlanHeader`).
        Every strategy composes to exactly ``header.budget`` (disjoint groups in parallel, AAAI
        2024 eq. 4; a global and group release split it sequentially).
    estimator
        :class:`~dpcore.analyses.mean.LaplaceMean`, :class:`~dpcore.analyses.mean.GaussianMean`
        or :class:`~dpcore.analyses.mean.CoinPressMean`.
    strategy
        ``"stratified"`` releases each group's estimate and their share-weighted sum;
        ``"global_only"`` only the population estimate; ``"global_and_groups"`` both, with
        ``global_fraction`` of the budget on the population estimate.
    sampling_error
        False: the intervals cover the DP noise only (the clipped mean of these rows). True:
        they also cover sampling error, so they are intervals for the population's clipped
        mean; ``variance_fraction`` of the budget then pays for DP estimates of the variances
        (:mod:`~dpcore.analyses.mean.sampling_error`) and the means get the rest (sequential
        composition). Needs public group sizes, the Laplace or Gaussian mean, and the rows in
        memory (:class:`GroupValues`).
    bounds
        None: the typed bounds clip. Else the release finds its bounds privately within them
        first, paying ``bounds.fraction`` of the budget (:mod:`~.found_bounds`).

    The privacy unit is the one ``values`` were computed for (:attr:`unit`).
    """

    values: GroupValues | GroupSums = field(compare=False, repr=False)
    header: PlanHeader
    estimator: MeanEstimator
    strategy: Strategy = "stratified"
    global_fraction: float = 0.5
    sampling_error: bool = False
    variance_fraction: float = DEFAULT_VARIANCE_FRACTION
    bounds: PrivateBounds | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.values, GroupValues | GroupSums) or self.values.shares is None:
            raise TypeError(
                "`values` must be GroupValues or GroupSums built from a grouping (they carry its "
                f"shares), got {type(self.values).__name__}"
            )
        instance_of("header", self.header, PlanHeader)
        if not isinstance(self.estimator, LaplaceMean | GaussianMean | CoinPressMean):
            raise TypeError(
                "`estimator` must be a LaplaceMean, GaussianMean or CoinPressMean, got "
                f"{type(self.estimator).__name__}"
            )
        STRATEGIES.check("strategy", self.strategy)
        open_unit_interval("global_fraction", self.global_fraction)
        check_sizes_stay_private(self)
        if self.header.spec.selects:
            check_selection_possible(self)
        if self.sampling_error:
            check_sampling_error_possible(self)
        if self.bounds is not None:
            found.check_bounded_mean(self)
        if self.strategy != "global_only":
            check_public_sizes_defined(self.values, self.estimator)
            drawn_with_release(self.shares, self.estimator)
        header = self.header.named(f"Mean of {self.value} by {self.header.by}")
        object.__setattr__(self, "header", header)

    @property
    def cost(self) -> Budget:
        """``header.budget``; with groups found privately, the exact sequential composition of
        the selection's (ε, δ) and the means' budget (the ledger adds them up in its unit)."""
        if self.selection is None:
            return self.header.budget
        return sequential(self.selection.budget, self.mean_budget)

    @property
    def selection(self) -> KeySelection | None:
        r"""How the groups are found privately, or None (declared, or taken from the data).

        With an (ε, δ) budget and ``spec.selection_fraction`` f, the selection runs at
        (f·ε, δ) for the Laplace mean, whose means then run at (1 − f)·ε (pure); for the
        Gaussian mean δ is halved between the selection and the means (its analytic σ needs a
        δ of its own)."""
        if not self.header.spec.selects:
            return None
        budget, fraction = self.header.budget, self.header.spec.selection_fraction
        delta = budget.delta if isinstance(self.estimator, LaplaceMean) else budget.delta / 2
        return KeySelection(ApproxDP(budget.epsilon * fraction, delta))

    @property
    def unit(self) -> PrivacyUnit:
        """One row, or one person whose rows an engine bounded (:class:`GroupSums` ``unit``);
        the mechanisms then run at :attr:`row_budget` so that the release protects one person
        at ``header.budget``."""
        return getattr(self.values, "unit", ROW)

    @property
    def row_budget(self) -> Budget:
        """The budget each mechanism runs at: :attr:`cost` for one row per person, else divided
        by the rows a person may contribute (:meth:`PrivacyUnit.row_budget`)."""
        return self.unit.row_budget(self.header.budget)

    @property
    def mean_budget(self) -> Budget:
        """The budget the means run at: :attr:`row_budget`, less :attr:`variance_budget` when
        the intervals include sampling error, or less the selection's (:attr:`selection`)."""
        if self.selection is not None:
            budget, selection = self.header.budget, self.selection.budget
            epsilon = budget.epsilon - selection.epsilon
            if isinstance(self.estimator, LaplaceMean):
                return PureDP(epsilon)
            return ApproxDP(epsilon, budget.delta - selection.delta)
        if self.bounds is not None:
            return self.bounds.rest(self.row_budget)
        if not self.sampling_error:
            return self.row_budget
        return scale(self.row_budget, 1 - self.variance_fraction)

    @property
    def variance_budget(self) -> Budget:
        """The budget the variance estimates run at (only with ``sampling_error``)."""
        return scale(self.row_budget, self.variance_fraction)

    @property
    def value(self) -> str:
        """The value column."""
        return self.values.value

    @property
    def shares(self) -> PublicShares:
        """The recombination shares of the estimated groups: fixed public ones, or the mark of
        shares drawn with the release from its noisy counts (``drawn_with_release``)."""
        return self.values.shares

    @property
    def sizes_public(self) -> bool:
        """CoinPress and the clipped means with ``n_public=True`` treat group sizes as public."""
        return getattr(self.estimator, "n_public", True)

    def parameters(self) -> dict:
        """Everything that defines the release, JSON-ready (the plan's identity)."""
        identity = self.header.identity(kind="mean", statistic=f"mean of {self.value}")
        # The value column stays inside "strata", where releases recorded it before groupings
        # stopped depending on it: the same plan keeps the same key, so it is never spent twice.
        identity["strata"]["value"] = self.value
        return {
            **identity,
            "estimator": {
                "class": type(self.estimator).__name__,
                **init_arguments(self.estimator),
            },
            "strategy": self.strategy,
            # The split matters only when both a global and group estimates are released.
            "global_fraction": (
                self.global_fraction if self.strategy == "global_and_groups" else None
            ),
            # Only when a person column is set, so that plans from before it keep their keys.
            **({} if self.unit == ROW else {"privacy_unit": self.unit.to_dict()}),
            # Likewise only when chosen: noise-only plans keep the keys they always had.
            **(
                {"sampling_error": {"variance_fraction": self.variance_fraction}}
                if self.sampling_error
                else {}
            ),
            **({} if self.selection is None else {"group_selection": self._selection_facts()}),
            **({} if self.bounds is None else {"bounds": self.bounds.to_dict(self.row_budget)}),
        }

    def _selection_facts(self) -> dict:
        """What the private selection of groups costs and does, for the exports."""
        return {
            **self.selection.budget.components(),
            "threshold": self.selection.threshold,
            "method": self.selection.describe(),
            "means_budget": self.mean_budget.components(),
        }

    def estimate(
        self, noise: NoiseSource, rng: np.random.Generator | None = None
    ) -> StrategyResult:
        """The strategy's group and global estimates drawn with ``noise`` (``rng`` unused: the
        mean has no random post-processing), on the groups found privately if the plan
        finds them (a ``ValueError`` when none is found)."""
        values = self._released_values(noise)
        if values is None:
            raise ValueError("no group's noisy count reached the selection threshold")
        return self._estimate(values, noise)

    def _estimate(self, values: GroupValues | GroupSums, noise: NoiseSource) -> StrategyResult:
        """The strategy's estimates; bounds found privately are found first, with their share
        of the row budget (:class:`~.found_bounds.PrivatelyBounded`)."""
        estimator, budget = self.estimator, self.mean_budget
        if self.bounds is not None:
            estimator, budget = found.PrivatelyBounded(self.estimator, self.bounds), self.row_budget
        return run_strategy(
            self.strategy, values, estimator, budget, values.shares,
            global_fraction=self.global_fraction, noise=noise,
        )  # fmt: skip

    def _released_values(self, noise: NoiseSource) -> GroupValues | GroupSums | None:
        """The groups the release publishes: all, or those the private selection finds (None
        when it finds none). The selection's noise is drawn first, from the same source."""
        if self.selection is None:
            return self.values
        found = self.selection.select(self.values.sizes, noise).mask
        return self.values.subset(found) if found.any() else None

    def run(
        self, noise: NoiseSource, rng: np.random.Generator, progress: Progress | None = None
    ) -> list[MeanRow]:
        """Draw the release: one row per released estimate with its noise interval, both clipped
        to the public range [L, U] that holds every clipped mean (:meth:`Interval.within`): at
        ε = 0.01 an unclipped interval of −197 to 306 hours says nothing a reader can use.

        ``rng`` is not used: the noise intervals' draws are post-processing with a fixed seed,
        so the same estimates always give the same intervals. Nor is ``progress``: the draw
        takes a moment.
        """
        values = self._released_values(noise)
        if values is None:  # nothing found: no group to publish, nothing to recombine
            return [MeanRow("population", "All", None)]
        result = self._estimate(values, noise)
        squares = (
            release_squares(
                self.values,
                self.estimator,
                self.variance_budget,
                self.strategy,
                self.global_fraction,
                noise,
            )  # fmt: skip
            if self.sampling_error
            else None
        )
        _, (low, high), (whole_low, whole_high) = found.clipping(self.estimator, result, values.k)
        groups, population = self.intervals(result, squares, values)
        groups, population = groups.within(low, high), population.within(whole_low, whole_high)
        rows = []
        if self.strategy != "global_only":
            # Groups found privately are listed by label: their order in the data is by exact
            # size, which the release must not show.
            order = range(values.k) if self.selection is None else np.argsort(values.labels)
            for g in order:
                rows.append(self._group_row(result, values, groups, g, (low, high)))
            rows.extend(self._pooled_row(result, whole_low, whole_high))
        flag = None if result.released is None else ""
        rows.append(MeanRow("population", "All", population.estimate, population.low,
                            population.high, flag=flag,
                            **found.row_bounds(result, (whole_low, whole_high))))  # fmt: skip
        return rows

    def _group_row(
        self, result: StrategyResult, values: GroupValues | GroupSums, groups: Interval, g: int,
        ranges: tuple[np.ndarray, np.ndarray],
    ) -> MeanRow:  # fmt: skip
        """Group ``g``'s row: its estimate and share (and the bounds it was clipped at, when the
        release found them), or, when the noisy counts merged or dropped it, no numbers and the
        reason."""
        label = values.labels[g]
        clip = found.row_bounds(result, ranges, g, values.k)
        if result.released is not None:
            decision = result.released.decision
            if not decision.kept[g]:
                flag = values.shares.rule.flag(bool(decision.merged[g]))
                return MeanRow("group", label, None, flag=flag, **clip)
        share = self._share_of(result, values.shares, g)
        if result.released is not None:
            share["flag"] = ""
        return MeanRow("group", label, groups.estimate[g], groups.low[g], groups.high[g], **share,
                       **clip)  # fmt: skip

    @staticmethod
    def _pooled_row(result: StrategyResult, low: float, high: float) -> list[MeanRow]:
        """The pooled small groups' row when the noisy counts merged some (post-processing:
        their pooled noisy sum over their pooled noisy count, clamped into the public range by
        :meth:`~dpcore.foundations.small_groups.NoisyCountRule.recombine`, and into the range
        [``low``, ``high``] the release found, when it found its bounds)."""
        released = result.released
        if released is None or not released.decision.has_other:
            return []
        estimate = float(np.clip(released.other_mean, low, high))
        share = float(released.other_share)
        clip = found.row_bounds(result, (low, high))
        return [MeanRow("group", OTHER_LABEL, estimate, noisy_share=share, flag="", **clip)]

    @staticmethod
    def _share_of(result: StrategyResult, shares: PublicShares, group: int) -> dict[str, float]:
        """The share a group row publishes: drawn with the release from its noisy counts (DP),
        or the fixed public one."""
        if result.shares is not None:
            return {"noisy_share": float(result.shares[group])}
        return {"public_share": float(shares.values[group])}

    @property
    def shares_read_from_data(self) -> str | None:
        """What the group rows publish as shares when they are read exactly from the data
        (:meth:`~dpcore.release.PlanHeader.exact_shares`); None without group rows."""
        return None if self.strategy == "global_only" else self.header.exact_shares()

    def declared_public(self) -> list[str]:
        """The groups, their shares and sizes when the release treats them as public, and the
        public range of the value (:meth:`~dpcore.release.ReleasePlan.declared_public`)."""
        low, high = self.estimator.public_range
        if isinstance(self.estimator, CoinPressMean):
            bounds = f"the range [{plain_number(low)}, {plain_number(high)}] and spread σ ≤ {plain_number(self.estimator.sigma)} of `{self.value}`"
        elif self.estimator.bounds is None:
            bounds = (
                f"the clipping radius R = {plain_number(self.estimator.radius)} of `{self.value}`"
            )
        elif self.bounds is not None:  # the bounds found in it are DP outputs
            bounds = (
                f"the search range [{plain_number(low)}, {plain_number(high)}] of `{self.value}`"
            )
        else:
            bounds = f"the range [{plain_number(low)}, {plain_number(high)}] of `{self.value}`"
        if self.strategy == "global_only":
            sizes = ["the number of rows"] if self.sizes_public else []
            return [bounds, *sizes]
        sizes = ["each group's exact number of rows"] if self.sizes_public else []
        return [*self.header.declared_groups(), *self.header.declared_shares(), *sizes, bounds]

    def method_sentence(self) -> str:
        """The estimator and its public settings in one sentence (the report's "Method")."""
        return f"{self.estimator.name}: {self.estimator.describe()}"

    def review_lines(self) -> list[str]:
        """Markdown lines that describe the plan for a person about to commit it."""
        return [
            f"**Statistic:** mean of `{self.value}`, {STRATEGY_LABELS[self.strategy]}",
            self.header.data_line(),
            *self._engine_line(),
            self.header.strata_line(self.values.k, self.shares),
            f"**Estimator:** {self.method_sentence()}",
            *([] if self.unit == ROW else [f"**Privacy unit:** {self.unit.describe()}"]),
            *(
                []
                if self.selection is None
                else [
                    f"**Groups found privately:** {self.selection.describe()}; it costs "
                    f"{self.selection.budget}, and the means run at {self.mean_budget}"
                ]
            ),
            *self._small_groups_lines(),
            *found.review_lines(self),
            f"**Intervals:** {self.interval_description}",
            *(
                []
                if self.coverage_note is None
                else [f"**Coverage:** {self.coverage_note.sentence()}"]
            ),
        ]

    def _engine_line(self) -> list[str]:
        engine = getattr(self.values, "engine", "")
        if not engine:
            return []
        return [
            f"**Read by:** the {engine} engine, where the data lies: only each group's count "
            "and sums came into memory (the release's script runs the same pass)"
        ]

    def _small_groups_lines(self) -> list[str]:
        rule = self.shares.rule
        if rule is None or self.strategy == "global_only":
            return []
        return [
            f"**Small groups:** {rule.describe()}. Which groups that is will be known only "
            "when the noise is drawn; the release lists them."
        ]

    def preview(self) -> pd.DataFrame:
        """Per released row, the error to expect and why it would be withheld, from a few
        seeded simulated releases (:func:`~dpcore.release.simulated_preview`; curator's view)."""
        return simulated_preview(self)

    def script_body(self) -> str:
        """The Python lines that rebuild this plan from a frame named ``frame`` (or, for sums an
        engine computed, from the data the engine reads): :func:`plan_script.mean_script`."""
        return mean_script(self)
