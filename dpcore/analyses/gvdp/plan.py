"""The release plan of the general estimator (follows
:class:`dpcore.release.ReleasePlan`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import pandas as pd

from dpcore.accounting import ZCDP
from dpcore.analyses.gvdp.data import GvdpData, prepare_data
from dpcore.analyses.gvdp.groups import (
    ALL,
    STRATEGIES,
    RunSettings,
    Strategy,
    _check_model_bounds,
    run_groups,
    run_population,
)
from dpcore.analyses.gvdp.model import GvdpBoundsSpec, GvdpModel
from dpcore.grouping import GroupingSpec
from dpcore.mechanisms import NoiseSource
from dpcore.release import DatasetRef
from dpcore.release.plan import _data_line

__all__ = [
    "GvdpPlan",
]


"""Each BLB subset must hold at least this many rows per estimated coordinate (our choice)."""


"""Fixed Newton (IRLS) iterations of the logistic fit, started from 0 (our choice; see
:func:`_fit_logistic`)."""


r"""Logistic ridge :math:`\lambda = 10^{-6} n`: negligible against the Hessian (of order n) but
keeps a separated resample's Newton system solvable."""


"""Name of the intercept coefficient of a regression."""


"""Group label of the population rows of a release (as in :class:`~dpcore.release.MeanPlan`)."""


"""Refuse a run whose BLB fit would fail with a larger (approximate) probability (our choice;
see :func:`fit_risk`)."""


"""Every covariate's coefficient in the synthetic models; the intercept is 1 (OLS) or −1
(logistic), the mean 1 (the paper's §3 example N(μ = 1, σ² = 1))."""


@dataclass(frozen=True)
class GvdpPlan:
    r"""A planned GVDP release: estimates and valid intervals per group and for the population.

    Follows :class:`dpcore.release.ReleasePlan`. ``strategy="stratified"`` runs GVDP (paper
    Alg. 1) in every group with the whole ρ — groups are disjoint, so they compose in parallel
    and the release costs ρ — and releases every group's estimate and interval plus their
    share-weighted recombination (post-processing of DP outputs: no extra cost).
    ``strategy="global_only"`` runs GVDP once on all rows (cost ρ). The privacy noise comes from
    the given :class:`~dpcore.mechanisms.NoiseSource` (OpenDP's SecureNoise in a real release);
    the BLB partition and resamples from fresh OS entropy.

    Parameters
    ----------
    data
        The model's rows (:func:`prepare_data`), built from the frame that ``dataset``
        fingerprints with ``spec``. Not part of the plan's identity.
    dataset, spec
        Where the rows and groups come from; in the metadata and the reproduction script.
    model, bounds
        What is estimated (:class:`GvdpModel`) and the public bounds (:class:`GvdpBoundsSpec`).
    budget
        The release's ρ-zCDP budget (GVDP adds Gaussian noise: zCDP, never pure ε-DP).
    k
        BLB subsets of the population; groups use the same subset size b = ⌊N/k⌋.
    resamples, steps, beta, mean_fraction
        r, t, β and the estimate's share of ρ (:func:`~dpcore.analyses.gvdp.gvdp`).
    level
        Confidence level of the intervals.
    label
        A name for the release; part of its identity.

    Build one from a frame with :meth:`build`.
    """

    data: GvdpData = field(compare=False, repr=False)
    dataset: DatasetRef
    spec: GroupingSpec
    model: GvdpModel
    bounds: GvdpBoundsSpec
    budget: ZCDP
    k: int
    strategy: Strategy = "stratified"
    resamples: int = 10
    steps: int = 5
    beta: float = 0.03
    mean_fraction: float = 0.5
    level: float = 0.95
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.data, GvdpData):
            raise TypeError(f"`data` must be GvdpData, got {type(self.data).__name__}")
        if not isinstance(self.dataset, DatasetRef):
            raise TypeError(f"`dataset` must be a DatasetRef, got {type(self.dataset).__name__}")
        if not isinstance(self.spec, GroupingSpec):
            raise TypeError(f"`spec` must be a GroupingSpec, got {type(self.spec).__name__}")
        if not isinstance(self.model, GvdpModel) or self.data.model != self.model:
            raise ValueError("`data` must be prepared for `model` (prepare_data(frame, model, …))")
        if not isinstance(self.budget, ZCDP):
            raise TypeError(
                f"`budget` must be a ZCDP budget (GVDP adds Gaussian noise, so it meets ρ-zCDP "
                f"but never pure ε-DP), got {type(self.budget).__name__} {self.budget!r}"
            )
        if self.strategy not in STRATEGIES:
            raise ValueError(
                f"`strategy` must be one of {sorted(STRATEGIES)}, got {self.strategy!r}"
            )
        if not isinstance(self.label, str):
            raise TypeError(f"`label` must be a str, got {type(self.label).__name__}")
        _check_model_bounds(self.bounds, self.model)
        settings = self.settings  # validates k, r, t, β, mean_fraction and level
        self.data.check_k(settings.k, settings.resamples)
        if self.strategy == "stratified":
            problem = self.data.group_problem(settings.k, settings.resamples)
            if problem is not None:
                raise ValueError(problem)
        if not self.label.strip():
            by = f" by {' × '.join(self.spec.by)}" if self.strategy == "stratified" else ""
            object.__setattr__(self, "label", f"GVDP {self.model.statistic}{by}")

    @classmethod
    def build(
        cls,
        frame: pd.DataFrame,
        *,
        spec: GroupingSpec,
        dataset_name: str,
        model: GvdpModel,
        bounds: GvdpBoundsSpec,
        budget: ZCDP,
        k: int,
        strategy: Strategy = "stratified",
        resamples: int = 10,
        steps: int = 5,
        beta: float = 0.03,
        mean_fraction: float = 0.5,
        level: float = 0.95,
        label: str = "",
    ) -> GvdpPlan:
        """The plan for ``frame``: groups from ``spec``, rows from ``model``'s columns."""
        return cls(
            data=prepare_data(frame, model, spec.build(frame)), dataset=DatasetRef.of(frame, dataset_name),
            spec=spec, model=model, bounds=bounds, budget=budget, k=k, strategy=strategy,
            resamples=resamples, steps=steps, beta=beta, mean_fraction=mean_fraction,
            level=level, label=label,
        )  # fmt: skip

    @property
    def settings(self) -> RunSettings:
        return RunSettings(
            k=self.k, rho=self.budget.rho, resamples=self.resamples, steps=self.steps,
            beta=self.beta, mean_fraction=self.mean_fraction, level=self.level,
        )  # fmt: skip

    @property
    def cost(self) -> ZCDP:
        """ρ: one GVDP run, or disjoint groups' runs in parallel (McSherry 2009, Thm. 4)."""
        return self.budget

    @property
    def statistic(self) -> str:
        return self.model.statistic

    @property
    def interval_description(self) -> str:
        """What the intervals cover, for the release's metadata."""
        return (
            f"{self.level:.0%} GVDP confidence intervals (Covington et al., Thm. 2.12): they "
            "cover the population parameter, allowing for sampling error and the DP noise, when "
            "the bag of little bootstraps approximates the estimator's sampling distribution and "
            "the public bounds hold (with probability ≥ 1 − β = "
            f"{1 - self.beta:g} over the noise). The 'All' rows of a stratified release are the "
            "share-weighted sums of the DP group estimates. Row counts (each group's, when "
            "stratified) are treated as public: they set the subsets per group and the variance "
            "bounds (paper §2.2)"
        )

    def parameters(self) -> dict:
        """Everything that defines the release, JSON-ready (the plan's identity)."""
        return {
            "kind": "gvdp",
            "statistic": self.statistic,
            "label": self.label,
            "dataset": {"name": self.dataset.name, "fingerprint": self.dataset.fingerprint,
                        "rows": self.dataset.rows},
            "strata": self.spec.to_dict(),
            "estimator": {
                "class": "GvdpPlan", "model": self.model.to_dict(),
                "bounds": self.bounds.to_dict(), "k": self.k, "resamples": self.resamples,
                "steps": self.steps, "beta": self.beta, "mean_fraction": self.mean_fraction,
            },
            "budget": {"kind": self.budget.kind, **self.budget.components()},
            "strategy": self.strategy,
            "level": self.level,
        }  # fmt: skip

    def run(self, noise: NoiseSource) -> list[dict]:
        """Draw the release with ``noise``: per group and coefficient (stratified), then the
        population rows (group ``"All"``). Every number is a DP output or a public share."""
        names = self.model.coefficients
        rows = []
        if self.strategy == "stratified":
            grouped = run_groups(self.data, self.bounds, self.settings, noise=noise)
            for label, share, result in zip(
                grouped.labels, grouped.shares, grouped.results, strict=True
            ):
                for j, name in enumerate(names):
                    rows.append(
                        _row("group", label, name, result.estimate[j], result.low[j],
                             result.high[j], result.variance[j]) | {"public_share": float(share)}
                    )  # fmt: skip
            population = (grouped.estimate, grouped.low, grouped.high, grouped.variance)
        else:
            result = run_population(self.data, self.bounds, self.settings, noise=noise)
            population = (result.estimate, result.low, result.high, result.variance)
        for j, name in enumerate(names):
            rows.append(_row("population", ALL, name, *(part[j] for part in population)))
        return rows

    def review_lines(self) -> list[str]:
        """Markdown lines that describe the plan for a person about to commit it."""
        data, settings = self.data, self.settings
        b = data.subset_rows(self.k)
        dropped = f"; {data.n_missing:,} dropped for missing values" if data.n_missing else ""
        lines = [
            f"**Statistic:** {self.statistic}, {STRATEGIES[self.strategy]}",
            _data_line(self.dataset),
        ]
        if self.strategy == "stratified":
            subsets = data.group_subsets(self.k)
            per_group = ", ".join(
                f"{label} {k_g}" for label, k_g in zip(data.labels, subsets, strict=True)
            )
            lines.append(
                f"**Strata:** {' × '.join(self.spec.by)} — {len(data.labels)} groups; shares: "
                f"{data.share_description.lower()}"
            )
            lines.append(
                f"**Rows:** {data.rows:,} complete rows{dropped}; subsets of b = {b:,} rows in "
                f"every group, so k per group: {per_group} (group sizes are treated as public)"
            )
        else:
            lines.append(
                f"**Rows:** {data.rows:,} complete rows{dropped}; k = {self.k:,} subsets of "
                f"b = {b:,} rows"
            )
        mode = (
            "explicit public ranges"
            if self.bounds.mode == "box"
            else f"a public guess × factor {self.bounds.factor:g}"
        )
        lines += [
            f"**Estimator:** GVDP (Covington et al.): bag of little bootstraps with r = "
            f"{settings.resamples} resamples, CoinPress with t = {settings.steps} steps, "
            f"{settings.mean_fraction:.0%} of ρ for the estimate, β = {settings.beta:g}",
            f"**Public bounds** ({mode}): " + "; ".join(self.bounds.describe()),
            f"**Accounting:** ρ = {self.budget.rho:g} zCDP"
            + (
                "; groups are disjoint, so all groups together cost one group's ρ, and the "
                "recombined estimate is post-processing"
                if self.strategy == "stratified"
                else ""
            ),
            f"**Intervals:** {self.level:.0%} GVDP intervals (sampling error + DP noise)",
        ]
        return lines

    def script_body(self) -> str:
        """The Python lines that rebuild this plan from a frame named ``frame``."""
        spec_arguments = ", ".join(
            f"{f.name}={getattr(self.spec, f.name)!r}" for f in fields(self.spec)
        )
        return (
            "from dpcore.analyses.gvdp import GvdpBoundsSpec, GvdpModel, GvdpPlan\n"
            "from dpcore.grouping import GroupingSpec\n\n"
            f"spec = GroupingSpec({spec_arguments})\n"
            "plan = GvdpPlan.build(\n"
            "    frame,\n"
            "    spec=spec,\n"
            f"    dataset_name={self.dataset.name!r},\n"
            f"    model={self.model!r},\n"
            f"    bounds={self.bounds!r},\n"
            f"    budget={self.budget!r},\n"
            f"    k={self.k!r},\n"
            f"    strategy={self.strategy!r},\n"
            f"    resamples={self.resamples!r},\n"
            f"    steps={self.steps!r},\n"
            f"    beta={self.beta!r},\n"
            f"    mean_fraction={self.mean_fraction!r},\n"
            f"    level={self.level!r},\n"
            f"    label={self.label!r},\n"
            ")\n"
        )


def _row(level, group, coefficient, estimate, low, high, variance) -> dict:
    return {
        "level": level, "group": group, "coefficient": coefficient,
        "estimate": float(estimate), "low": float(low), "high": float(high),
        "std_error": float(math.sqrt(variance)),
    }  # fmt: skip
