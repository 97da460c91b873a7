"""The release plan of the general estimator (follows
:class:`dpcore.release.ReleasePlan`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpcore.analyses.gvdp.bounds import NEARLY_UNBIASED_ROWS, small_subsets_warning
from dpcore.analyses.gvdp.data import GvdpData, prepare_data
from dpcore.analyses.gvdp.found_box import PrivateBox
from dpcore.analyses.gvdp.groups import (
    ALL,
    STRATEGIES,
    RunSettings,
    Strategy,
    check_model_bounds,
    run_groups,
    run_population,
)
from dpcore.analyses.gvdp.model import GvdpBoundsSpec, GvdpModel
from dpcore.analyses.gvdp.withhold import (
    UNINFORMATIVE,
    Uninformative,
    subsets_needed,
    too_few_subsets,
    wider_than_range,
)
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.intervals import Interval
from dpcore.foundations.mechanisms import NoiseSource
from dpcore.foundations.validation import instance_of
from dpcore.release.plan import CoverageNote, PlanHeader, Progress, ReleaseRow
from dpcore.release.preview import simulated_preview
from dpcore.release.whole_budget import ChargesWholeBudget

__all__ = ["HEAVY_TAIL_NOTE", "GvdpPlan", "GvdpRow"]

HEAVY_TAIL_NOTE = {
    "where": "estimates from data with very heavy tails (a power law whose fourth moment is "
    "infinite)",
    "measured": "85–93%",
    "lowest": 0.85,
    "why": (
        "GVDP's variance is the mean of the subsets' bootstrap variances, released by "
        "CoinPress, which clips the few subsets whose variance is far above the others (paper "
        "Assumption 2.5 asks for tails no heavier than a known law); with tails this heavy "
        "that clipping lowers the variance and the interval is too narrow, the more so the "
        "less noise there is. Lognormal and zero-inflated earnings, and lighter tails, cover "
        "95%."
    ),
}
"""The corner where GVDP's intervals cover less than they claim (issue 42;
``benchmarks/bench_coverage.py``: on Pareto(2.5) earnings with 300 to 10,000 rows, 91–95% at
ρ = 0.5–4.5 and 85–92% at ρ = 50, for nominal 95%; 93–99% on lognormal and zero-inflated
earnings). No release can tell such tails from its noisy outputs, so every GVDP release says it."""


@dataclass(frozen=True)
class GvdpRow(ReleaseRow):
    """A released coefficient: its estimate, interval and standard error; group rows carry the
    public share they are recombined with. A withheld row has no numbers and says why in
    ``flag`` ("" when published)."""

    coefficient: str = ""
    std_error: float | None = None
    public_share: float | None = None
    flag: str = ""

    def to_dict(self) -> dict:
        base = super().to_dict()
        out = {"level": base["level"], "group": base["group"], "coefficient": self.coefficient}
        out |= {k: base[k] for k in ("estimate", "low", "high")}
        out["std_error"] = self.std_error
        if self.public_share is not None:
            out["public_share"] = self.public_share
        return out | {"flag": self.flag}


def _rows(
    level: str, group: str, names: tuple[str, ...], fit: Interval, public_range: tuple,
    share: float | None = None, reason: str = "",
) -> list[GvdpRow]:  # fmt: skip
    """One row per coefficient, clipped to ``public_range``; withheld (no numbers, the reason in
    ``flag``) for ``reason``, or for an interval wider than the range (before clipping)."""
    flags = [reason] * len(names) if reason else wider_than_range(fit.low, fit.high, *public_range)
    clipped = fit.within(*public_range)
    return [
        GvdpRow(
            level=level, group=group, estimate=None, coefficient=name, public_share=share, flag=flag
        )  # fmt: skip
        if flag
        else GvdpRow(
            level=level,
            group=group,
            estimate=clipped.estimate[j],
            low=clipped.low[j],
            high=clipped.high[j],
            coefficient=name,
            std_error=math.sqrt(clipped.variance[j]),
            public_share=share,
        )  # fmt: skip
        for j, (name, flag) in enumerate(zip(names, flags, strict=True))
    ]


@dataclass(frozen=True)
class GvdpPlan(ChargesWholeBudget):
    r"""A planned GVDP release: estimates and valid intervals per group and for the population.

    Follows :class:`dpcore.release.ReleasePlan`. ``strategy="stratified"`` runs GVDP (paper
    Alg. 1) in every group with the whole ρ — groups are disjoint, so they compose in parallel
    and the release costs ρ — and releases every group's estimate and interval plus their
    share-weighted recombination (post-processing of DP outputs: no extra cost).
    ``strategy="global_only"`` runs GVDP once on all rows (cost ρ). The privacy noise comes from
    the given :class:`~dpcore.foundations.mechanisms.NoiseSource` (OpenDP's SecureNoise in a real release);
    the BLB partition and resamples from the ``rng`` that :meth:`run` is given.

    Parameters
    ----------
    data
        The model's rows (:func:`prepare_data`), built from the frame that ``header.dataset``
        fingerprints with ``header.spec``. Not part of the plan's identity.
    header
        Data, groups, budget (ρ-zCDP: GVDP adds Gaussian noise, never pure ε-DP), label and
        interval level (:class:`~dpcore.release.PlanHeader`).
    model, bounds
        What is estimated (:class:`GvdpModel`) and the public bounds (:class:`GvdpBoundsSpec`).
    k
        BLB subsets of the population; groups use the same subset size b = ⌊N/k⌋. None: every
        run's subsets follow the rule of :func:`~dpcore.analyses.gvdp.recommended_subsets` on
        its own rows (k ≈ 3√n), each group's on its own.
    resamples, steps, beta, mean_fraction
        r, t, β and the estimate's share of ρ (:func:`~dpcore.analyses.gvdp.gvdp`).

    Build one from a frame with :meth:`build`.
    """

    data: GvdpData = field(compare=False, repr=False)
    header: PlanHeader
    model: GvdpModel
    bounds: GvdpBoundsSpec
    k: int | None
    strategy: Strategy = "stratified"
    resamples: int = 10
    steps: int = 5
    beta: float = 0.03
    mean_fraction: float = 0.5
    uninformative: Uninformative = "withhold"
    private_box: PrivateBox | None = None

    def __post_init__(self) -> None:
        instance_of("data", self.data, GvdpData)
        instance_of("header", self.header, PlanHeader)
        if not isinstance(self.model, GvdpModel) or self.data.model != self.model:
            raise ValueError("`data` must be prepared for `model` (prepare_data(frame, model, …))")
        if not isinstance(self.header.budget, ZCDP):
            budget = self.header.budget
            raise TypeError(
                f"`budget` must be a ZCDP budget (GVDP adds Gaussian noise, so it meets ρ-zCDP "
                f"but never pure ε-DP), got {type(budget).__name__} {budget!r}"
            )
        STRATEGIES.check("strategy", self.strategy)
        check_model_bounds(self.bounds, self.model)
        if self.private_box is not None:
            instance_of("private_box", self.private_box, PrivateBox)
            if self.bounds.mode != "box":
                raise ValueError(
                    "The box is found privately within a typed box (its search range): choose "
                    "explicit public ranges, not a guess."
                )
        settings = self.settings  # validates k, r, t, β, mean_fraction and level
        self.data.check_k(settings.k, settings.resamples)
        if self.strategy == "stratified":
            problem = self.data.group_problem(settings.k, settings.resamples)
            if problem is not None:
                raise ValueError(problem)
        UNINFORMATIVE.check("uninformative", self.uninformative)
        if self.uninformative == "refuse" and any(self.withheld_groups().values()):
            raise ValueError(self._refusal())
        by = f" by {self.header.by}" if self.strategy == "stratified" else ""
        object.__setattr__(self, "header", self.header.named(f"GVDP {self.model.statistic}{by}"))

    @classmethod
    def build(cls, frame: pd.DataFrame, *, header: PlanHeader, model: GvdpModel,
              **options) -> GvdpPlan:  # fmt: skip
        """The plan for ``frame``: groups from ``header.spec``, rows from ``model``'s columns;
        ``options`` are the other fields (bounds, k, strategy, resamples, steps, beta,
        mean_fraction)."""
        instance_of("header", header, PlanHeader)
        data = prepare_data(frame, model, header.spec.build(frame))
        return cls(data=data, header=header, model=model, **options)

    @property
    def settings(self) -> RunSettings:
        return RunSettings(
            k=self.k, rho=self.header.budget.rho, resamples=self.resamples, steps=self.steps,
            beta=self.beta, mean_fraction=self.mean_fraction, level=self.header.level,
        )  # fmt: skip

    @property
    def subsets_needed(self) -> int:
        """The fewest subsets a run at this budget needs to say something
        (:func:`~dpcore.analyses.gvdp.withhold.subsets_needed`; public inputs only)."""
        settings = self.settings
        rho = settings.rho if self.private_box is None else self.private_box.rest(settings.rho)
        return subsets_needed(
            rho=rho, mean_fraction=settings.mean_fraction, steps=settings.steps,
            beta=settings.beta, d=self.model.d,
        )  # fmt: skip

    def withheld_groups(self) -> dict[str, str]:
        """Every run's label (groups when stratified, else :data:`ALL`) and why it is withheld
        before any noise ("" when it is not): fewer subsets than :attr:`subsets_needed`. Reads
        the groups' row counts, which GVDP treats as public (paper §2.2)."""
        needed = self.subsets_needed
        if self.strategy != "stratified":
            return {ALL: too_few_subsets(self.data.subsets(self.k, self.resamples), needed)}
        subsets = self.data.group_subsets(self.k, self.resamples)
        return {
            label: too_few_subsets(int(k_g), needed)
            for label, k_g in zip(self.data.labels, subsets, strict=True)
        }

    def _short_groups(self) -> list[str]:
        return [label for label, reason in self.withheld_groups().items() if reason]

    def _refusal(self) -> str:
        short = self._short_groups()
        return (
            f"{len(short)} group(s) have fewer than the {self.subsets_needed} subsets this budget "
            f"needs for an informative estimate ({', '.join(short)}), and you chose to refuse "
            "such a release. Raise ρ on the Budget page, raise k on the Estimator page, merge "
            "small groups on the Strata page, or choose to withhold those groups."
        )

    @property
    def statistic(self) -> str:
        return self.model.statistic

    @property
    def interval_description(self) -> str:
        """What the intervals cover, for the release's metadata."""
        return (
            f"{self.header.level:.0%} GVDP confidence intervals (Covington et al., Thm. 2.12): "
            "they cover the population parameter, allowing for sampling error and the DP noise, "
            "when the bag of little bootstraps approximates the estimator's sampling distribution "
            "and the public bounds hold (with probability ≥ 1 − β = "
            f"{1 - self.beta:g} over the noise). The 'All' rows of a stratified release are the "
            "share-weighted sums of the DP group estimates. Row counts (each group's, when "
            "stratified) are treated as public: they set the subsets per group and the variance "
            "bounds (paper §2.2). Rows with a flag are withheld (the flag says why): a group "
            f"with fewer than {self.subsets_needed} subsets at this budget, or an interval "
            "wider than the public range"
        )

    @property
    def coverage_note(self) -> CoverageNote:
        """Where the intervals cover less than the level (:class:`CoverageNote`): data whose
        tails are too heavy for the bag of little bootstraps (:data:`HEAVY_TAIL_NOTE`)."""
        return CoverageNote(level=self.header.level, **HEAVY_TAIL_NOTE)

    def parameters(self) -> dict:
        """Everything that defines the release, JSON-ready (the plan's identity)."""
        return {
            **self.header.identity(kind="gvdp", statistic=self.statistic),
            "estimator": {
                "class": "GvdpPlan", "model": self.model.to_dict(),
                "bounds": self.bounds.to_dict(), "k": self.k, "resamples": self.resamples,
                "steps": self.steps, "beta": self.beta, "mean_fraction": self.mean_fraction,
                "uninformative": self.uninformative,
                # Only when chosen: plans with a typed box keep the keys they always had.
                **({} if self.private_box is None
                   else {"private_box": self.private_box.to_dict(self.header.budget.rho)}),
            },
            "strategy": self.strategy,
        }  # fmt: skip

    def estimate(self, noise: NoiseSource, rng: np.random.Generator) -> Interval:
        """The GVDP run of this plan: every group's and their recombination (stratified,
        :class:`~dpcore.analyses.gvdp.GVDPStratifiedResult`), or the population's."""
        box = {"private_box": self.private_box}
        if self.strategy == "stratified":
            return run_groups(self.data, self.bounds, self.settings, rng=rng, noise=noise, **box)
        return run_population(self.data, self.bounds, self.settings, rng=rng, noise=noise, **box)

    def run(
        self, noise: NoiseSource, rng: np.random.Generator, progress: Progress | None = None
    ) -> list[GvdpRow]:
        """Draw the release with ``noise`` (and the BLB's partition and resamples from ``rng``):
        per group and coefficient (stratified), then the population rows (group ``"All"``).
        Every number is a DP output or a public share. Estimates and intervals are clipped to
        the bounds' public range (:meth:`GvdpBoundsSpec.public_range`): a group with few subsets
        could otherwise publish −407.9 [−1263, 447] hours for a mean known to lie in [0, 100].
        Our choice: the estimate stays unbiased (paper Thm. 2.9) except in the event that the noise
        carries it past the range, where clipping trades that for an error no larger than before.

        Uninformative rows are withheld, their reason in ``flag`` (:mod:`.withhold`): a group
        with fewer subsets than :attr:`subsets_needed` (decided before the noise, from public
        row counts), and any coefficient whose DP interval is wider than its public range
        (post-processing). The recombined "All" rows still use every group's DP estimate.

        ``progress`` is not called: the bag of little bootstraps runs in seconds at most.
        """
        names = self.model.coefficients
        fit = self.estimate(noise, rng)
        public_range = self.bounds.public_range()
        withheld = self.withheld_groups()
        rows = []
        if self.strategy == "stratified":
            for label, share, group in zip(fit.labels, fit.shares, fit.groups, strict=True):
                rows += _rows("group", label, names, group, public_range, float(share),
                              withheld[label])  # fmt: skip
        return rows + _rows(
            "population", ALL, names, fit, public_range, reason=withheld.get(ALL, "")
        )

    @property
    def shares_read_from_data(self) -> str | None:
        """What the group rows publish as shares when they are read exactly from the data
        (:meth:`~dpcore.release.PlanHeader.exact_shares`); None without group rows."""
        return self.header.exact_shares() if self.strategy == "stratified" else None

    def declared_public(self) -> list[str]:
        """The groups, their shares and sizes (GVDP treats the number of rows as public, paper
        §2.2), and the coefficients' public bounds
        (:meth:`~dpcore.release.ReleasePlan.declared_public`)."""
        bounds = f"the bounds {'; '.join(self.bounds.describe())}"
        if self.strategy != "stratified":
            return ["the number of complete rows", bounds]
        return [
            *self.header.declared_groups(), *self.header.declared_shares(),
            "each group's exact number of complete rows", bounds,
        ]  # fmt: skip

    def review_lines(self) -> list[str]:
        """Markdown lines that describe the plan for a person about to commit it."""
        data, settings = self.data, self.settings
        b = data.subset_rows(self.k, self.resamples)
        dropped = f"; {data.n_missing:,} dropped for missing values" if data.n_missing else ""
        lines = [
            f"**Statistic:** {self.statistic}, {STRATEGIES[self.strategy]}",
            self.header.data_line(),
        ]
        if self.strategy == "stratified":
            subsets = data.group_subsets(self.k, self.resamples)
            per_group = ", ".join(
                f"{label} {k_g}" for label, k_g in zip(data.labels, subsets, strict=True)
            )
            lines.append(
                f"**Strata:** {self.header.by} — {len(data.labels)} groups; shares: "
                f"{data.share_description.lower()}"
            )
            how = (
                "each group's subsets chosen from its own rows (k ≈ 3√n, at least "
                f"{NEARLY_UNBIASED_ROWS[self.model.estimator]} rows per coefficient)"
                if self.k is None
                else f"subsets of b = {b:,} rows in every group"
            )
            lines.append(
                f"**Rows:** {data.rows:,} complete rows{dropped}; {how}, so k per group: "
                f"{per_group} (group sizes are treated as public)"
            )
        else:
            how = " (chosen from the rows: k ≈ 3√n)" if self.k is None else ""
            lines.append(
                f"**Rows:** {data.rows:,} complete rows{dropped}; k = {data.subsets(self.k, self.resamples):,} "
                f"subsets of b = {b:,} rows{how}"
            )
        warning = self.subset_warning
        if warning:
            lines.append(f"**Small subsets:** {warning}")
        mode = (
            "explicit public ranges"
            if self.bounds.mode == "box"
            else f"a public guess × factor {self.bounds.factor:g}"
        )
        lines += [
            f"**Estimator:** GVDP (Covington et al.): bag of little bootstraps with r = "
            f"{settings.resamples} resamples, CoinPress with t = {settings.steps} steps, "
            f"{settings.mean_fraction:.0%} of ρ for the estimate, β = {settings.beta:g}",
            f"**Public bounds** ({mode}): "
            + "; ".join(self.bounds.describe())
            + (
                ""
                if self.private_box is None
                else f". **Box:** {self.private_box.describe(self.cost.rho)}"
            ),
            f"**Accounting:** ρ = {self.cost.rho:g} zCDP"
            + (
                "; groups are disjoint, so all groups together cost one group's ρ, and the "
                "recombined estimate is post-processing"
                if self.strategy == "stratified"
                else ""
            ),
            f"**Intervals:** {self.header.level:.0%} GVDP intervals (sampling error + DP noise)",
            *(
                []
                if self.coverage_note is None
                else [f"**Coverage:** {self.coverage_note.sentence()}"]
            ),
            self._withheld_line(),
        ]
        if data.engine:
            lines.append(
                f"**Read by:** the {data.engine} engine, where the data lies: each subset and "
                "bootstrap weight comes from a salted hash of its row (the salt drawn afresh for "
                "the release), and only every subset's weighted sums come into memory (the "
                "release's script runs the same passes)"
            )
        return lines

    @property
    def subset_warning(self) -> str | None:
        """A chosen k that leaves subsets smaller than the rule's
        (:func:`~dpcore.analyses.gvdp.small_subsets_warning`): said before a commit; None for
        the rule's own k."""
        if self.k is None:
            return None
        model = self.model
        return small_subsets_warning(self.data.rows, self.k, model.estimator, model.d)

    def _withheld_line(self) -> str:
        short = self._short_groups()
        rule = (
            f"**Uninformative groups:** at this budget a run needs at least "
            f"{self.subsets_needed} subsets; "
        )
        listed = f"withheld: {', '.join(short)}" if short else "every group has enough"
        return f"{rule}{listed}. An interval wider than its public range is withheld too."

    def preview(self) -> pd.DataFrame:
        """Per released row, the error to expect and why it would be withheld, from a few
        seeded simulated releases (:func:`~dpcore.release.simulated_preview`; curator's view)."""
        return simulated_preview(self)

    def script_body(self) -> str:
        """The Python lines that rebuild this plan from a frame named ``frame`` (or, for rows
        an engine reads, from the data where it lies)."""
        box = "" if self.private_box is None else ", PrivateBox"
        if self.data.recipe:
            start = (
                f"{self.header.script(dataset='aggregated.dataset', prelude=self.data.recipe)}"
                f"from dpcore import GvdpBoundsSpec, GvdpModel, GvdpPlan{box}\n\n"
                "plan = GvdpPlan(\n"
                "    data=aggregated.stats,\n"
            )
        else:
            start = (
                f"{self.header.script()}"
                f"from dpcore import GvdpBoundsSpec, GvdpModel, GvdpPlan{box}\n\n"
                "plan = GvdpPlan.build(\n"
                "    frame,\n"
            )
        return (
            f"{start}"
            "    header=header,\n"
            f"    model={self.model!r},\n"
            f"    bounds={self.bounds!r},\n"
            f"    k={self.k!r},\n"
            f"    strategy={self.strategy!r},\n"
            f"    resamples={self.resamples!r},\n"
            f"    steps={self.steps!r},\n"
            f"    beta={self.beta!r},\n"
            f"    mean_fraction={self.mean_fraction!r},\n"
            f"    uninformative={self.uninformative!r},\n"
            + ("" if self.private_box is None else f"    private_box={self.private_box!r},\n")
            + ")\n"
        )
