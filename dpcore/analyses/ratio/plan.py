"""The release plan of the calibration ratio per group (follows
:class:`dpcore.release.ReleasePlan`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from dpcore.analyses.ratio.budget import release_arguments, release_cost
from dpcore.analyses.ratio.groups import GroupRatioSums, group_ratio_sums
from dpcore.analyses.ratio.preview import RatioResult, RatioRow, estimate_ratios
from dpcore.analyses.ratio.sums import (
    MECHANISMS,
    METHODS,
    SCALES,
    SUM_LABELS,
    Composition,
    Mechanism,
    Method,
    RatioBounds,
    Scale,
)
from dpcore.foundations.accounting import (
    Budget,
)
from dpcore.foundations.labels import plain_number
from dpcore.foundations.mechanisms import NoiseSource
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from dpcore.foundations.validation import instance_of, positive_int
from dpcore.release.plan import CoverageNote, PlanHeader, Progress
from dpcore.release.preview import simulated_preview

__all__ = [
    "MC_SEED",
    "RatioPlan",
]


MC_SEED = 0

SMALL_SKEWED_NOTE = {
    "where": "ratios over fewer than 1,000 rows of skewed or heavy-tailed values",
    "measured": "89–93%",
    "lowest": 0.89,
    "why": (
        "The delta method (eq. 1) takes the ratio's sampling error to be nearly normal; over a "
        "few hundred rows of skewed values it is not, and the interval misses on one side more "
        "often. This is sampling error, not the noise: the sums say nothing about the skew. "
        "Larger groups cover 95%; rows whose noisy sums leave the ratio undefined have no "
        "interval (their flag says why)."
    ),
}
"""The corner where the corrected ratio intervals cover less than they claim (issue 42;
``benchmarks/bench_coverage.py``: 89.2–93% for nominal 95% at 30–300 rows of earnings over hours
at ε = 10, among the intervals published, the lowest with Laplace noise on 30 lognormal rows;
94–96% from 1,000 rows on)."""
"""Seed of the Monte Carlo correction's re-noising in a release (§2.4.2). Post-processing of
public noisy sums, so a fixed seed costs no privacy and makes the same noisy sums always give the
same interval."""


def _delta(delta: float) -> str:
    """δ in short scientific notation: ``1e-6`` rather than ``1e-06``."""
    mantissa, exponent = f"{delta:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}" if float(f"{delta:.0e}") == delta else f"{delta:g}"


def _describe_scale(name: str, value: float, mechanism: str) -> str:
    symbol = "b" if mechanism == "laplace" else "σ"
    return f"{SUM_LABELS[name]}: {symbol} = {plain_number(value)}"


@dataclass(frozen=True)
class RatioPlan:
    r"""A planned release of the calibration ratio Σws/Σwy per group and for all groups together.

    Each group releases its noisy sums (§2.3.1) through the given noise source — OpenDP's
    :class:`~dpcore.foundations.mechanisms.SecureNoise` in a real release — and gets a confidence interval
    (§2.4: no correction, Monte Carlo or analytical correction; ratio or log scale). The global
    ratio is :func:`recombine`\ d from the noisy group sums: post-processing, no extra budget.

    **Cost** (:attr:`cost`): groups in parallel, so one group's release. Gaussian mechanisms are
    charged their exact zCDP cost :math:`\rho = \sum_i \Delta_i^2/(2\sigma_i^2)` (Bun & Steinke
    2016, Prop. 1.6), whatever rule chose σ — the ledger totals ρ-zCDP and cannot be charged
    (ε, δ)-DP costs; the (ε, δ) guarantee also holds. Laplace costs pure ε-DP.

    Parameters
    ----------
    sums
        The groups' exact clipped sums (:func:`group_ratio_sums`), over the grouping that
        ``header.spec`` builds from the data ``header.dataset`` fingerprints. Not part of the
        plan's identity.
    header
        Data, groups, budget, label and interval level (:class:`~dpcore.release.PlanHeader`).
    mechanism, composition, delta
        With ``header.budget``, they give the estimator's (ε, δ) through
        :func:`release_arguments`; ``delta`` is the δ of a Gaussian release under a pure ε
        budget (unused otherwise).
    method, scale, B
        The interval (§2.4.1–2.4.3), its scale (§2.3) and the Monte Carlo draws (§2.4.2).

    Build one from a frame with :meth:`build`.
    """

    sums: GroupRatioSums = field(compare=False, repr=False)
    header: PlanHeader
    mechanism: Mechanism = "gaussian"
    composition: Composition = "basic"
    delta: float = 1e-6
    method: Method = "analytical"
    scale: Scale = "ratio"
    B: int = 200

    def __post_init__(self) -> None:
        instance_of("sums", self.sums, GroupRatioSums)
        instance_of("header", self.header, PlanHeader)
        METHODS.check("method", self.method)
        SCALES.check("scale", self.scale)
        object.__setattr__(self, "B", positive_int("B", self.B))
        self.cost  # noqa: B018 - validates mechanism, composition and (ε, δ) before anything runs
        default = (
            f"Calibration ratio Σ{self.sums.s_column}/Σ{self.sums.y_column} by {self.header.by}"
        )
        object.__setattr__(self, "header", self.header.named(default))

    @classmethod
    def build(
        cls,
        frame: pd.DataFrame,
        *,
        header: PlanHeader,
        s_column: str,
        y_column: str,
        w_column: str | None = None,
        bounds: RatioBounds,
        binary_y: bool,
        unit: PrivacyUnit = ROW,
        **options,
    ) -> RatioPlan:
        """The plan for ``frame``: groups from ``header.spec``, sums from the named columns,
        each person's rows bounded as ``unit`` says (``bounds`` are one row's: the sums carry
        the unit's rows per person, :func:`group_ratio_sums`); ``options`` are the other fields
        (mechanism, composition, delta, method, scale, B)."""
        instance_of("header", header, PlanHeader)
        instance_of("unit", unit, PrivacyUnit)
        sums = group_ratio_sums(
            frame, header.spec.build(frame), s_column=s_column, y_column=y_column,
            w_column=w_column, bounds=replace(bounds, rows_per_person=unit.rows_per_person),
            binary_y=binary_y, unit=unit,
        )  # fmt: skip
        return cls(sums=sums, header=header, **options)

    @property
    def arguments(self) -> dict:
        """The estimator's ``epsilon``, ``delta``, ``mechanism`` and ``composition`` at this
        plan's budget (:func:`release_arguments`)."""
        return release_arguments(
            self.header.budget, mechanism=self.mechanism, composition=self.composition,
            delta=self.delta, bounds=self.sums.bounds, weighted=self.sums.w_column is not None,
            binary_y=self.sums.binary_y,
        )  # fmt: skip

    def _cost_parts(self):
        return release_cost(
            bounds=self.sums.bounds,
            weighted=self.sums.w_column is not None,
            binary_y=self.sums.binary_y,
            **self.arguments,
        )

    @property
    def cost(self) -> Budget:
        """Exact ledger cost: ZCDP(Σ Δ_i²/(2σ_i²)) for Gaussian noise, PureDP(ε) for Laplace."""
        return self._cost_parts()[0]

    @property
    def sensitivity(self) -> dict[str, float]:
        return self._cost_parts()[1]

    @property
    def noise_scale(self) -> dict[str, float]:
        return self._cost_parts()[2]

    @property
    def statistic(self) -> str:
        weight = f" weighted by {self.sums.w_column}" if self.sums.w_column else ""
        return f"calibration ratio Σ{self.sums.s_column}/Σ{self.sums.y_column}{weight}"

    @property
    def interval_description(self) -> str:
        """What the intervals cover, for the release's metadata."""
        return (
            f"{self.header.level:.0%} Wald confidence intervals for the calibration ratio "
            f"({METHODS[self.method]}, {SCALES[self.scale].lower()}; Miao & Li 2022), from the "
            "noisy sums only; they include sampling and DP-noise variance. Rows with a flag have "
            "no interval (the flag says why)"
        )

    @property
    def coverage_note(self) -> CoverageNote | None:
        """Where the corrected intervals cover less than the level (:class:`CoverageNote`):
        ratios over few skewed or heavy-tailed values (:data:`SMALL_SKEWED_NOTE`). The
        uncorrected interval, which ignores the noise, is described as too narrow instead."""
        if self.method == "none":
            return None
        return CoverageNote(level=self.header.level, **SMALL_SKEWED_NOTE)

    def parameters(self) -> dict:
        """Everything that defines the release, JSON-ready (the plan's identity)."""
        b, arguments = self.sums.bounds, self.arguments
        return {
            **self.header.identity(kind="ratio", statistic=self.statistic),
            "estimator": {
                "class": "RatioPlan",
                "s_column": self.sums.s_column, "y_column": self.sums.y_column,
                "w_column": self.sums.w_column,
                "bounds": {"s": b.s, "y": b.y, "w": b.w}, "binary_y": self.sums.binary_y,
                **arguments, "method": self.method, "scale": self.scale, "B": self.B,
                "monte_carlo_seed": MC_SEED,
            },
            "strategy": "stratified",
            **({} if self.sums.unit == ROW else {"privacy_unit": self.sums.unit.to_dict()}),
        }  # fmt: skip

    def declared_public(self) -> list[str]:
        """The groups and the columns' public upper bounds (the lower bounds are 0); the ratio
        publishes no share or size (:meth:`~dpcore.release.ReleasePlan.declared_public`)."""
        b, sums = self.sums.bounds, self.sums
        bounds = [f"`{sums.s_column}` ≤ {plain_number(b.s)}"]
        bounds.append(
            f"`{sums.y_column}` in {{0, 1}}"
            if sums.binary_y
            else f"`{sums.y_column}` ≤ {plain_number(b.y)}"
        )
        if sums.w_column is not None:
            bounds.append(f"`{sums.w_column}` ≤ {plain_number(b.w)}")
        return [*self.header.declared_groups(), f"the bounds {', '.join(bounds)}"]

    def estimate(self, noise: NoiseSource, rng: np.random.Generator | None = None) -> RatioResult:
        """Every group's noisy sums drawn with ``noise``, and the intervals formed from them
        (``rng`` unused: the Monte Carlo correction re-noises with :data:`MC_SEED`)."""
        return estimate_ratios(
            self.sums, **self.arguments, method=self.method, scale=self.scale,
            level=self.header.level, B=self.B, noise=noise, rng=MC_SEED,
        )  # fmt: skip

    def run(
        self, noise: NoiseSource, rng: np.random.Generator, progress: Progress | None = None
    ) -> list[RatioRow]:
        """Draw the release with ``noise``: one row per group, then the global ratio.

        Rows carry level, group, estimate, low, high, variance (on the analysis scale), flag (why
        a group has no interval, else '') and the noisy sums — all DP outputs. Undefined values
        are None. ``rng`` is not used: the Monte Carlo correction re-noises with the fixed
        :data:`MC_SEED`, so the same noisy sums always give the same interval. ``progress`` is
        not called: the draw takes a moment.
        """
        return self.estimate(noise, rng).rows()

    def review_lines(self) -> list[str]:
        """Markdown lines that describe the plan for a person about to commit it."""
        sums, b = self.sums, self.sums.bounds
        arguments = self.arguments
        epsilon, mechanism, composition = (
            arguments["epsilon"],
            arguments["mechanism"],
            arguments["composition"],
        )
        m = len(self.sensitivity)
        y_range = "0 or 1 (binary)" if sums.binary_y else f"[0, {plain_number(b.y, 6)}]"
        weight = (
            f"`{sums.w_column}` in [0, {plain_number(b.w, 6)}]" if sums.w_column else "none (w = 1)"
        )
        rows = int(np.sum(sums.rows))
        dropped = f"; {sums.n_missing:,} dropped for missing values" if sums.n_missing else ""
        if mechanism == "laplace":
            noise = f"Laplace, ε = {epsilon:g} split evenly over the {m} released sums"
        elif composition == "zcdp":
            noise = (
                f"Gaussian with zCDP accounting, ρ = {self.cost.rho:.6g} split evenly over the "
                f"{m} released sums (σ = Δ/√(2ρ/{m}))"
            )
        else:
            noise = (
                f"{MECHANISMS[mechanism]}, (ε = {epsilon:g}, δ = {_delta(arguments['delta'])}) "
                f"split evenly over the {m} released sums (basic composition, as in the paper)"
            )
        symbol = "b" if mechanism == "laplace" else "σ"
        distinct = set(self.noise_scale.values())
        if len(distinct) == 1:
            scales = f"{symbol} = {plain_number(distinct.pop())} on each"
        else:
            scales = "; ".join(
                _describe_scale(n, s, mechanism) for n, s in self.noise_scale.items()
            )
        if mechanism == "laplace":
            accounting = "pure ε-DP, charged to a ρ ledger as ρ = ε²/2"
        else:
            accounting = (
                "exact zCDP cost ρ = Σ Δ²/(2σ²) over the released sums (Bun & Steinke 2016, "
                "Prop. 1.6); the groups are disjoint, so all groups cost one group's ρ"
            )
        return [
            f"**Statistic:** {self.statistic} per group, and for all groups together "
            "(recombined from the noisy group sums: no extra budget)",
            self.header.data_line(),
            self.header.strata_line(self.sums.k),
            f"**Columns:** score `{sums.s_column}` in [0, {plain_number(b.s, 6)}], label `{sums.y_column}` "
            f"{y_range}, weight {weight} — public bounds; {rows:,} rows used{dropped}",
            *self._engine_lines(),
            f"**Mechanism:** {noise}: {scales}",
            f"**Intervals:** {self.header.level:.0%}, {METHODS[self.method][:1].lower()}"
            f"{METHODS[self.method][1:]}, {SCALES[self.scale].lower()}"
            + (f", B = {self.B}" if self.method == "monte_carlo" else ""),  # fmt: skip
            *(
                []
                if self.coverage_note is None
                else [f"**Coverage:** {self.coverage_note.sentence()}"]
            ),
            f"**Accounting:** {accounting}",
        ]

    def _engine_lines(self) -> list[str]:
        """Which engine read the data, and the privacy unit it bounded (none in memory)."""
        sums = self.sums
        lines = []
        if sums.engine:
            lines.append(
                f"**Read by:** the {sums.engine} engine, where the data lies: only each group's "
                "sums came into memory (the release's script runs the same pass)"
            )
        if sums.unit != ROW:
            lines.append(
                f"**Privacy unit:** {sums.unit.describe().split(', and each mechanism')[0]}; "
                f"each sum's sensitivity is {sums.unit.rows_per_person} times one row's"
            )
        return lines

    def preview(self) -> pd.DataFrame:
        """Per released row, the error to expect and why it would be withheld, from a few
        seeded simulated releases (:func:`~dpcore.release.simulated_preview`; curator's view)."""
        return simulated_preview(self)

    def script_body(self) -> str:
        """The Python lines that rebuild this plan from a frame named ``frame`` (or, for sums an
        engine computed, from the data the engine reads)."""
        sums = self.sums
        if sums.recipe:
            start = (
                f"{self.header.script(dataset='aggregated.dataset', prelude=sums.recipe)}"
                "from dpcore import RatioPlan\n\n"
                "plan = RatioPlan(\n"
                "    sums=aggregated.stats,\n"
                "    header=header,\n"
            )
        else:
            unit = sums.unit
            start = (
                f"{self.header.script()}"
                "from dpcore import RatioBounds, RatioPlan\n"
                f"{'' if unit == ROW else 'from dpcore.foundations.privacy_unit import PrivacyUnit'}\n"
                "plan = RatioPlan.build(\n"
                "    frame,\n"
                "    header=header,\n"
                f"    s_column={sums.s_column!r},\n"
                f"    y_column={sums.y_column!r},\n"
                f"    w_column={sums.w_column!r},\n"
                f"    bounds={replace(sums.bounds, rows_per_person=1)!r},\n"
                f"    binary_y={sums.binary_y!r},\n"
                + ("" if unit == ROW else (
                    f"    unit=PrivacyUnit({unit.column!r}, max_groups={unit.max_groups}, "
                    f"max_rows={unit.max_rows}),\n"
                ))
            )  # fmt: skip
        return (
            f"{start}"
            f"    mechanism={self.mechanism!r},\n"
            f"    composition={self.composition!r},\n"
            f"    delta={self.delta!r},\n"
            f"    method={self.method!r},\n"
            f"    scale={self.scale!r},\n"
            f"    B={self.B!r},\n"
            ")\n"
        )
