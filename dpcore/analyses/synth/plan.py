"""The release plan of synthetic rows (follows :class:`dpcore.release.ReleasePlan`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpcore.analyses.synth.config import (
    METHOD_NAMES,
    STRATEGIES,
    PreparedRows,
    Strategy,
    SynthConfig,
    all_edges,
    check_config,
    model_columns,
    output_columns,
    prepare_rows,
    run_synthesis,
)
from dpcore.analyses.synth.encoding import METHODS
from dpcore.analyses.synth.group_rows import CountSplit
from dpcore.analyses.synth.mbi_models import MBI_METHODS
from dpcore.analyses.synth.synthesizers import Progress, SyntheticData
from dpcore.foundations.accounting import ZCDP, PureDP, pure_epsilon_within
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.labels import plain_number
from dpcore.foundations.mechanisms import NoiseSource
from dpcore.foundations.shares import PublicShares
from dpcore.foundations.validation import instance_of
from dpcore.release.plan import PlanHeader, SyntheticRow
from dpcore.release.preview import preview_frame
from dpcore.release.whole_budget import ChargesWholeBudget

__all__ = [
    "INTERVALS_NOTE",
    "SynthPlan",
]


INTERVALS_NOTE = (
    "none: synthetic rows carry no intervals; their error against the data is simulated on the "
    "Compare page"
)


@dataclass(frozen=True)
class SynthPlan(ChargesWholeBudget):
    r"""A planned release of ε-DP synthetic rows, vanilla or stratified (AAAI 2024, app. C).

    Follows :class:`dpcore.release.ReleasePlan`. :meth:`run` returns the synthetic rows
    (:class:`~dpcore.release.SyntheticRow`, text values of the output columns); they are DP
    outputs, so the record may be published and downloaded. The cost is the header's
    ``PureDP(ε)`` for both strategies (stratified: parallel composition over the disjoint
    groups), or ``ZCDP(ρ)`` for MST and AIM, which OpenDP accounts in zCDP.

    Parameters
    ----------
    prepared
        The rows to synthesize, in the Strata page's groups (:func:`prepare_rows` of the frame
        the header fingerprints). Not part of the plan's identity.
    header
        Data, groups, budget (pure ε-DP; ρ-zCDP for MST and AIM), label (:class:`~dpcore.release.PlanHeader`); its level
        is unused (synthetic rows have no intervals).
    config
        What to synthesize (:class:`SynthConfig`).
    strategy
        ``"stratified"`` or ``"vanilla"``.

    Build one from a frame with :meth:`build`.
    """

    prepared: PreparedRows = field(compare=False, repr=False)
    header: PlanHeader
    config: SynthConfig
    strategy: Strategy = "stratified"

    def __post_init__(self) -> None:
        if not isinstance(self.prepared, PreparedRows):
            raise TypeError(
                f"`prepared` must be a PreparedRows, got {type(self.prepared).__name__}"
            )
        instance_of("header", self.header, PlanHeader)
        instance_of("config", self.config, SynthConfig)
        if self.config.method in MBI_METHODS and not isinstance(self.header.budget, ZCDP):
            raise TypeError(
                "`budget` must be ZCDP(ρ) for MST and AIM: OpenDP accounts them in zCDP, got "
                f"{self.header.budget!r}"
            )
        if self.config.method not in MBI_METHODS and not isinstance(self.header.budget, PureDP):
            raise TypeError(
                "`budget` must be PureDP(ε): the Laplace synthesizers are pure ε-DP (a ρ budget "
                f"runs them at ε = √(2ρ)), got {self.header.budget!r}"
            )
        STRATEGIES.check("strategy", self.strategy)
        if tuple(self.prepared.rows.columns) != self.columns:
            raise ValueError(
                f"`prepared` holds the columns {list(self.prepared.rows.columns)}, but the plan "
                f"synthesizes {list(self.columns)}; pass prepare_rows(frame, spec, grouping, "
                "config)"
            )
        label = (
            f"Synthetic data ({METHOD_NAMES[self.config.method]}), {self.strategy} by "
            f"{self.header.by}"
        )
        object.__setattr__(self, "header", self.header.named(label))
        check_config(self.prepared, self.config, self.spec, self.shares, (self.strategy,))

    @classmethod
    def build(
        cls,
        frame: pd.DataFrame,
        *,
        header: PlanHeader,
        config: SynthConfig,
        strategy: Strategy = "stratified",
    ) -> SynthPlan:
        """The plan for ``frame``: rows prepared in the groups of ``header.spec``."""
        instance_of("header", header, PlanHeader)
        prepared = prepare_rows(frame, header.spec, header.spec.build(frame), config)
        return cls(prepared=prepared, header=header, config=config, strategy=strategy)

    @property
    def spec(self) -> GroupingSpec:
        return self.header.spec

    @property
    def count_split(self) -> CountSplit | None:
        """How the budget is split when a stratified release takes its rows per group from its
        own noisy counts (:mod:`~dpcore.analyses.synth.group_rows`); None with fixed shares or
        one model for everyone."""
        if self.strategy != "stratified" or not self.shares.drawn_with_release:
            return None
        return CountSplit.of(self.header.budget)

    @property
    def epsilon(self) -> float:
        """ε the synthesizers run at: the budget's ε (less the noisy counts' part, when they
        decide the rows per group), or for MST and AIM the ε with ε²/2 ≤ ρ (they run at
        ρ = ε²/2, :func:`~dpcore.foundations.accounting.pure_epsilon_within`)."""
        if self.count_split is not None:
            return self.count_split.models_epsilon
        budget = self.header.budget
        return budget.epsilon if isinstance(budget, PureDP) else pure_epsilon_within(budget.rho)

    @property
    def rows_per_group(self) -> str:
        """Where a stratified release's rows per group come from, in words (every export says
        it); empty for one model for everyone."""
        if self.strategy != "stratified":
            return ""
        if self.count_split is not None:
            return self.count_split.describe()
        return f"rows per group in proportion to {self.shares.description.lower()}"

    @property
    def shares(self) -> PublicShares:
        """The public shares rows are drawn in (stratified)."""
        return self.prepared.grouping.shares

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns of the released rows, in order."""
        return output_columns(self.config, self.spec.by)

    @property
    def from_data(self) -> tuple[str, ...]:
        """The modelled columns (not the grouping's) whose categories are read from the data and
        treated as public: every one without bucket edges (no list can be declared for them)."""
        edges = dict(self.config.edges)
        return tuple(c for c in model_columns(self.config, self.spec.by) if c not in edges)

    @property
    def interval_description(self) -> str:
        """What the release's metadata should say about intervals: there are none."""
        return INTERVALS_NOTE

    def parameters(self) -> dict:
        """Everything that defines the release, JSON-ready (the plan's identity)."""
        statistic = f"synthetic data ({METHOD_NAMES[self.config.method]})"
        identity = self.header.identity(kind="synth", statistic=statistic)
        del identity["level"]  # synthetic rows have no intervals: the level is no choice
        return {
            **identity,
            "estimator": {
                "class": "synthesize",
                **self.config.to_dict(),
                "categories": {c: list(self.prepared.categories(c)) for c in self.from_data},
                "categories_treated_as_public": list(self.from_data),
            },
            "strategy": self.strategy,
            "columns": list(self.columns),
            **({"rows_per_group": self.rows_per_group} if self.rows_per_group else {}),
        }

    def estimate(
        self, noise: NoiseSource, rng: np.random.Generator, progress: Progress | None = None
    ) -> SyntheticData:
        """Fit the models with ``noise`` and draw the synthetic table with ``rng`` (drawing rows
        from fitted models is post-processing); ``progress(done, total)`` follows the fits.
        With rows per group from noisy counts, those counts are drawn first, from ``noise``."""
        shares: PublicShares | dict[str, float] = self.shares
        if self.count_split is not None:
            noisy = self.count_split.noisy_shares(self.prepared.grouping.sizes, noise)
            shares = dict(zip(self.shares.labels, noisy.tolist(), strict=True))
        return run_synthesis(
            self.prepared, self.config, self.spec, shares, epsilon=self.epsilon,
            strategy=self.strategy, noise=noise, rng=rng, progress=progress,
        )  # fmt: skip

    def run(
        self, noise: NoiseSource, rng: np.random.Generator, progress: Progress | None = None
    ) -> list[SyntheticRow]:
        """Fit the models with ``noise`` and draw the rows; one record per synthetic row,
        shuffled with ``rng`` (they come grouped by stratum). ``progress(done, total)`` is
        called before each group's fit and once at the end."""
        data = self.estimate(noise, rng, progress)
        order = rng.permutation(len(data.frame))
        records = data.frame.iloc[order].astype(str).to_dict("records")
        return [SyntheticRow.of(record) for record in records]

    def declared_public(self) -> list[str]:
        """The groups, the shares that set the rows per group unless they are noisy counts,
        the category lists read from the data and the bucket edges
        (:meth:`~dpcore.release.ReleasePlan.declared_public`)."""
        facts = list(self.header.declared_groups())
        if self.strategy == "stratified":
            facts += self.header.declared_shares()
        if self.from_data:
            facts.append(
                "the categories of "
                + ", ".join(f"`{c}`" for c in self.from_data)
                + " (read from the data)"
            )
        edges = all_edges(self.config, self.spec)
        if edges:
            facts.append("the bucket edges of " + ", ".join(f"`{c}`" for c in edges))
        return facts

    def review_lines(self) -> list[str]:
        """Markdown lines that describe the plan for a person about to commit it."""
        by = self.header.by
        if self.strategy == "stratified":
            budget = "the full budget" if self.count_split is None else "the rest of the budget"
            groups = (
                f"**Strata:** {by} — {len(self.shares.labels)} groups, one model each with "
                f"{budget} (parallel composition); {self.rows_per_group}"
            )
        else:
            groups = f"**Strata:** none — one model for all rows; {by} modelled as columns"
        edges = all_edges(self.config, self.spec)
        lines = [
            f"**Statistic:** synthetic data, {self.config.n_rows:,} rows of "
            f"{', '.join(f'`{c}`' for c in self.columns)}",
            self.header.data_line(),
            groups,
            f"**Synthesizer:** {METHODS[self.config.method]}"
            + (
                f" ({self.config.rounds} rounds, marginals up to {self.config.way}-way)"
                if self.config.method == "mwem"
                else ""
            ),
        ]
        if self.prepared.engine:
            lines.append(
                f"**Read by:** the {self.prepared.engine} engine, where the data lies: only the "
                "rows of each combination of values in each group came into memory (the "
                "release's script runs the same pass)"
            )
        if edges:
            described = "; ".join(
                f"{c}: {', '.join(f'{plain_number(v, 6)}' for v in e)}" for c, e in edges.items()
            )
            lines.append(f"**Public bucket edges:** {described}")
        return lines + self._category_lines(edges)

    def _category_lines(self, edges: dict[str, tuple[float, ...]]) -> list[str]:
        """Which category lists are read from the data and published as they are: the modelled
        columns', and the grouping columns' unless their groups were declared (a codebook or a
        typed list) — a list prefilled from the data and accepted on screen is said to be so."""
        grouping = [c for c in self.spec.by if c not in edges]
        read = [*self.from_data, *([] if self.spec.declared else grouping)]
        lines = []
        if read:
            lines.append(
                "**Not protected:** the category lists of "
                + ", ".join(f"`{c}`" for c in read)
                + " are read from the data and published as they are (treated as public)"
            )
        if grouping and self.spec.declared and self.spec.categories_source == "data":
            lines.append(
                "**Treated as public:** the categories of "
                + ", ".join(f"`{c}`" for c in grouping)
                + " are a list prefilled from the data and accepted as public on screen"
            )
        return lines

    def preview(self) -> pd.DataFrame:
        r"""Per group, the error to expect in a synthetic cell's share of the group (curator's
        view: it reads each group's size n_g).

        For the two synthesizers with one noise scale — independent marginals (Laplace scale
        d/ε on each 1-way count, d columns) and the histogram (scale 1/ε on each joint cell) —
        the noise of one released count has standard deviation :math:`\sqrt2\,b`, so a cell's
        share of the group is off by about :math:`\sqrt2\,b/n_g`. MWEM, MST and AIM pick what
        to measure from the data, so their error has no closed form here: simulating them takes
        minutes, and the Compare page does it. Synthetic rows have no intervals; no group is
        withheld. The vanilla strategy fits all rows at once (the "All" row).
        """
        scale = {"independent": len(self.config.columns), "histogram": 1}.get(self.config.method)
        grouping = self.prepared.grouping
        groups = (
            zip(grouping.labels, grouping.sizes, strict=True)
            if self.strategy == "stratified"
            else [("All", int(np.sum(grouping.sizes)))]
        )
        quantity = (
            "share of the group's rows in one cell"
            if scale is not None
            else f"not previewed for {METHOD_NAMES[self.config.method]}: see the Compare page"
        )
        return preview_frame(
            {
                "group": label,
                "quantity": quantity,
                "expected_error": np.nan
                if scale is None
                else math.sqrt(2) * scale / self.epsilon / max(int(n), 1),
                "half_width": np.nan,
                "withheld": "",
            }  # fmt: skip
            for label, n in groups
        )

    def script_body(self) -> str:
        """The Python lines that rebuild this plan from a frame named ``frame`` (or, for counts
        an engine computed, from the data the engine reads)."""
        recipe = self.prepared.recipe
        if recipe:
            return (
                f"{self.header.script(dataset='aggregated.dataset', prelude=recipe)}"
                "from dpcore import SynthPlan\n\n"
                "plan = SynthPlan(\n"
                "    prepared=aggregated.stats,\n"
                "    header=header,\n"
                "    config=aggregated.stats.config,\n"
                f"    strategy={self.strategy!r},\n"
                ")\n"
            )
        return (
            f"{self.header.script()}"
            "from dpcore import SynthConfig, SynthPlan\n\n"
            "plan = SynthPlan.build(\n"
            "    frame,\n"
            "    header=header,\n"
            f"    config={self.config!r},\n"
            f"    strategy={self.strategy!r},\n"
            ")\n"
        )
