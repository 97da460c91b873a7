"""The release plan of the calibration ratio per group (follows
:class:`dpcore.release.ReleasePlan`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from dpcore._validate import open_unit_interval, positive_int, positive_number
from dpcore.accounting import (
    Budget,
)
from dpcore.analyses.ratio.budget import release_cost
from dpcore.analyses.ratio.groups import GroupRatioSums, group_ratio_sums
from dpcore.analyses.ratio.preview import estimate_ratios
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
from dpcore.grouping import GroupingSpec
from dpcore.mechanisms import NoiseSource
from dpcore.release import DatasetRef
from dpcore.release.plan import _data_line, _strata_line

__all__ = [
    "MC_SEED",
    "RatioPlan",
]


"""Every sum the paper may release (§2.3.1), in release order: Σw, Σws, Σwy, Σw², Σws², Σwy²,
Σwys. ``ww`` is absent for unweighted data and ``wyy`` for binary y."""


"""Label of the global ratio, recombined from the noisy group sums."""


MC_SEED = 0


"""Seed of the Monte Carlo correction's re-noising in a release (§2.4.2). Post-processing of
public noisy sums, so a fixed seed costs no privacy and makes the same noisy sums always give the
same interval."""


def _delta(delta: float) -> str:
    """δ in short scientific notation: ``1e-6`` rather than ``1e-06``."""
    mantissa, exponent = f"{delta:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}" if float(f"{delta:.0e}") == delta else f"{delta:g}"


def _describe_scale(name: str, value: float, mechanism: str) -> str:
    symbol = "b" if mechanism == "laplace" else "σ"
    return f"{SUM_LABELS[name]}: {symbol} = {value:.4g}"


@dataclass(frozen=True)
class RatioPlan:
    r"""A planned release of the calibration ratio Σws/Σwy per group and for all groups together.

    Each group releases its noisy sums (§2.3.1) through the given noise source — OpenDP's
    :class:`~dpcore.mechanisms.SecureNoise` in a real release — and gets a confidence interval
    (§2.4: no correction, Monte Carlo or analytical correction; ratio or log scale). The global
    ratio is :func:`recombine`\ d from the noisy group sums: post-processing, no extra budget.

    **Cost** (:attr:`cost`): groups in parallel, so one group's release. Gaussian mechanisms are
    charged their exact zCDP cost :math:`\rho = \sum_i \Delta_i^2/(2\sigma_i^2)` (Bun & Steinke
    2016, Prop. 1.6), whatever rule chose σ — the ledger totals ρ-zCDP and cannot be charged
    (ε, δ)-DP costs; the (ε, δ) guarantee also holds. Laplace costs pure ε-DP.

    Parameters
    ----------
    sums
        The groups' exact clipped sums (:func:`group_ratio_sums`), over the grouping that ``spec``
        builds from the data ``dataset`` fingerprints. Not part of the plan's identity.
    dataset, spec
        Where the groups come from; written into the metadata and the reproduction script.
    epsilon, delta, mechanism, composition
        Passed to :func:`~dpcore.analyses.ratio.release_ratio_sums` (see
        :func:`release_arguments` for how a ledger budget maps to them). ``delta`` is None for
        Laplace.
    method, scale, B
        The interval (§2.4.1–2.4.3), its scale (§2.3) and the Monte Carlo draws (§2.4.2).
    level
        Confidence level of the intervals.
    label
        A name for the release; part of its identity.

    Build one from a frame with :meth:`build`.
    """

    sums: GroupRatioSums = field(compare=False, repr=False)
    dataset: DatasetRef
    spec: GroupingSpec
    epsilon: float
    delta: float | None
    mechanism: Mechanism
    composition: Composition = "basic"
    method: Method = "analytical"
    scale: Scale = "ratio"
    B: int = 200
    level: float = 0.95
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.sums, GroupRatioSums):
            raise TypeError(f"`sums` must be GroupRatioSums, got {type(self.sums).__name__}")
        if not isinstance(self.dataset, DatasetRef):
            raise TypeError(f"`dataset` must be a DatasetRef, got {type(self.dataset).__name__}")
        if not isinstance(self.spec, GroupingSpec):
            raise TypeError(f"`spec` must be a GroupingSpec, got {type(self.spec).__name__}")
        for name, options in (("method", METHODS), ("scale", SCALES)):
            value = getattr(self, name)
            if value not in options:
                raise ValueError(
                    f"`{name}` must be one of {', '.join(map(repr, options))}, got {value!r}"
                )
        object.__setattr__(self, "epsilon", positive_number("epsilon", self.epsilon))
        object.__setattr__(self, "B", positive_int("B", self.B))
        object.__setattr__(self, "level", open_unit_interval("level", self.level))
        if not isinstance(self.label, str):
            raise TypeError(f"`label` must be a str, got {type(self.label).__name__}")
        self.cost  # noqa: B018 - validates mechanism, composition and (ε, δ) before anything runs
        if not self.label.strip():
            by = " × ".join(self.spec.by)
            default = f"Calibration ratio Σ{self.sums.s_column}/Σ{self.sums.y_column} by {by}"
            object.__setattr__(self, "label", default)

    @classmethod
    def build(
        cls,
        frame: pd.DataFrame,
        *,
        spec: GroupingSpec,
        dataset_name: str,
        s_column: str,
        y_column: str,
        w_column: str | None = None,
        bounds: RatioBounds,
        binary_y: bool,
        epsilon: float,
        delta: float | None,
        mechanism: Mechanism,
        composition: Composition = "basic",
        method: Method = "analytical",
        scale: Scale = "ratio",
        B: int = 200,
        level: float = 0.95,
        label: str = "",
    ) -> RatioPlan:
        """The plan for ``frame``: groups from ``spec``, sums from the named columns."""
        if not isinstance(spec, GroupingSpec):
            raise TypeError(f"`spec` must be a GroupingSpec, got {type(spec).__name__}")
        sums = group_ratio_sums(
            frame, spec.build(frame), s_column=s_column, y_column=y_column, w_column=w_column,
            bounds=bounds, binary_y=binary_y,
        )  # fmt: skip
        return cls(
            sums=sums, dataset=DatasetRef.of(frame, dataset_name), spec=spec,
            epsilon=epsilon, delta=delta, mechanism=mechanism, composition=composition,
            method=method, scale=scale, B=B, level=level, label=label,
        )  # fmt: skip

    def _cost_parts(self):
        return release_cost(
            bounds=self.sums.bounds,
            weighted=self.sums.w_column is not None,
            binary_y=self.sums.binary_y,
            epsilon=self.epsilon,
            delta=self.delta,
            mechanism=self.mechanism,
            composition=self.composition,
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
            f"{self.level:.0%} Wald confidence intervals for the calibration ratio "
            f"({METHODS[self.method]}, {SCALES[self.scale].lower()}; Miao & Li 2022), from the "
            "noisy sums only; they include sampling and DP-noise variance. Rows with a flag have "
            "no interval (the flag says why)"
        )

    def parameters(self) -> dict:
        """Everything that defines the release, JSON-ready (the plan's identity)."""
        b = self.sums.bounds
        return {
            "kind": "ratio",
            "statistic": self.statistic,
            "label": self.label,
            "dataset": {"name": self.dataset.name, "fingerprint": self.dataset.fingerprint,
                        "rows": self.dataset.rows},
            "strata": self.spec.to_dict(),
            "estimator": {
                "class": "RatioPlan",
                "s_column": self.sums.s_column, "y_column": self.sums.y_column,
                "w_column": self.sums.w_column,
                "bounds": {"s": b.s, "y": b.y, "w": b.w}, "binary_y": self.sums.binary_y,
                "mechanism": self.mechanism, "composition": self.composition,
                "epsilon": self.epsilon, "delta": self.delta,
                "method": self.method, "scale": self.scale, "B": self.B,
                "monte_carlo_seed": MC_SEED,
            },
            "budget": {"kind": self.cost.kind, **self.cost.components()},
            "strategy": "stratified",
            "level": self.level,
        }  # fmt: skip

    def run(self, noise: NoiseSource) -> list[dict]:
        """Draw the release with ``noise``: one row per group, then the global ratio.

        Rows carry level, group, estimate, low, high, variance (on the analysis scale), flag (why
        a group has no interval, else '') and the noisy sums — all DP outputs. Undefined values
        are None.
        """
        result = estimate_ratios(
            self.sums, epsilon=self.epsilon, delta=self.delta, mechanism=self.mechanism,
            composition=self.composition, method=self.method, scale=self.scale,
            level=self.level, B=self.B, noise=noise, rng=MC_SEED,
        )  # fmt: skip
        frame = result.frame().astype(object)
        return [
            {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
             for k, v in row.items()}
            for row in frame.to_dict(orient="records")
        ]  # fmt: skip

    def review_lines(self) -> list[str]:
        """Markdown lines that describe the plan for a person about to commit it."""
        sums, b = self.sums, self.sums.bounds
        m = len(self.sensitivity)
        y_range = "0 or 1 (binary)" if sums.binary_y else f"[0, {b.y:g}]"
        weight = f"`{sums.w_column}` in [0, {b.w:g}]" if sums.w_column else "none (w = 1)"
        rows = int(np.sum(sums.rows))
        dropped = f"; {sums.n_missing:,} dropped for missing values" if sums.n_missing else ""
        if self.mechanism == "laplace":
            noise = f"Laplace, ε = {self.epsilon:g} split evenly over the {m} released sums"
        elif self.composition == "zcdp":
            noise = (
                f"Gaussian with zCDP accounting, ρ = {self.cost.rho:.6g} split evenly over the "
                f"{m} released sums (σ = Δ/√(2ρ/{m}))"
            )
        else:
            noise = (
                f"{MECHANISMS[self.mechanism]}, (ε = {self.epsilon:g}, δ = {_delta(self.delta)}) "
                f"split evenly over the {m} released sums (basic composition, as in the paper)"
            )
        symbol = "b" if self.mechanism == "laplace" else "σ"
        distinct = set(self.noise_scale.values())
        if len(distinct) == 1:
            scales = f"{symbol} = {distinct.pop():.4g} on each"
        else:
            scales = "; ".join(
                _describe_scale(n, s, self.mechanism) for n, s in self.noise_scale.items()
            )
        if self.mechanism == "laplace":
            accounting = "pure ε-DP, charged to a ρ ledger as ρ = ε²/2"
        else:
            accounting = (
                "exact zCDP cost ρ = Σ Δ²/(2σ²) over the released sums (Bun & Steinke 2016, "
                "Prop. 1.6); the groups are disjoint, so all groups cost one group's ρ"
            )
        return [
            f"**Statistic:** {self.statistic} per group, and for all groups together "
            "(recombined from the noisy group sums: no extra budget)",
            _data_line(self.dataset),
            _strata_line(self.spec, self.sums.k, None),
            f"**Columns:** score `{sums.s_column}` in [0, {b.s:g}], label `{sums.y_column}` "
            f"{y_range}, weight {weight} — public bounds; {rows:,} rows used{dropped}",
            f"**Mechanism:** {noise}: {scales}",
            f"**Intervals:** {self.level:.0%}, {METHODS[self.method][:1].lower()}"
            f"{METHODS[self.method][1:]}, {SCALES[self.scale].lower()}"
            + (f", B = {self.B}" if self.method == "monte_carlo" else ""),  # fmt: skip
            f"**Accounting:** {accounting}",
        ]

    def script_body(self) -> str:
        """The Python lines that rebuild this plan from a frame named ``frame``."""
        spec_arguments = ", ".join(
            f"{f.name}={getattr(self.spec, f.name)!r}" for f in fields(self.spec)
        )
        sums = self.sums
        return (
            "from dpcore.analyses.ratio import RatioBounds, RatioPlan\n"
            "from dpcore.grouping import GroupingSpec\n\n"
            f"spec = GroupingSpec({spec_arguments})\n"
            "plan = RatioPlan.build(\n"
            "    frame,\n"
            "    spec=spec,\n"
            f"    dataset_name={self.dataset.name!r},\n"
            f"    s_column={sums.s_column!r},\n"
            f"    y_column={sums.y_column!r},\n"
            f"    w_column={sums.w_column!r},\n"
            f"    bounds={sums.bounds!r},\n"
            f"    binary_y={sums.binary_y!r},\n"
            f"    epsilon={self.epsilon!r},\n"
            f"    delta={self.delta!r},\n"
            f"    mechanism={self.mechanism!r},\n"
            f"    composition={self.composition!r},\n"
            f"    method={self.method!r},\n"
            f"    scale={self.scale!r},\n"
            f"    B={self.B!r},\n"
            f"    level={self.level!r},\n"
            f"    label={self.label!r},\n"
            ")\n"
        )
