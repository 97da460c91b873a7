"""Scoring synthetic tables per group: the 3-way marginal workload error (AAAI 2024 arXiv,
Def. 14), counted once for the real rows, and the sweep across ε for the Compare page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpcore.analyses.synth.config import (
    ALL_ROWS,
    PreparedRows,
    Strategy,
    SynthConfig,
    all_edges,
    model_columns,
    output_columns,
)
from dpcore.analyses.synth.encoding import (
    allocate_rows,
    check_edges,
    encode_rows,
    strata_groups,
)
from dpcore.analyses.synth.group_rows import CountSplit
from dpcore.analyses.synth.mbi_models import MBI_METHODS
from dpcore.analyses.synth.synthesizers import Progress, assemble_rows, fit_groups
from dpcore.foundations.grouping import GroupingSpec, bucket_labels
from dpcore.foundations.mechanisms import SimulationNoise, as_noise_source
from dpcore.foundations.metrics import GroupErrors, GroupWorkload, synthetic_parity_error
from dpcore.foundations.shares import PublicShares
from dpcore.foundations.validation import as_rng, positive_int, positive_number

__all__ = [
    "SWEEP_EPSILONS",
    "build_workload",
    "sweep_errors",
    "sweep_metrics",
    "synth_domain",
]


SWEEP_EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
"""The ε values of a sweep (the current ε is added). The paper ran ε ∈ {0.01, 0.05, 0.1, 0.5, 1, 5}
(AAAI 2024 arXiv, "Synthesizers and Privacy Settings"); below 0.1 our small groups are pure noise."""


def synth_domain(
    prepared: PreparedRows, config: SynthConfig, spec: GroupingSpec
) -> dict[str, tuple[str, ...]]:
    """Each output column's categories in the order :func:`~dpcore.analyses.synth.synthesize` codes them:
    bucket labels for columns with edges, else the sorted distinct values (as text)."""
    edges = all_edges(config, spec)
    return {
        c: tuple(bucket_labels(tuple(edges[c]))) if c in edges else prepared.categories(c)
        for c in output_columns(config, spec.by)
    }


def build_workload(
    prepared: PreparedRows, config: SynthConfig, spec: GroupingSpec
) -> GroupWorkload:
    """The :class:`GroupWorkload` of the prepared rows: 3-way marginals (fewer with fewer
    columns) of the columns besides the strata, per group of the strata columns."""
    model = model_columns(config, spec.by)
    return GroupWorkload.from_rows(
        real_table(prepared, config, spec), spec.by, model, synth_domain(prepared, config, spec),
        way=min(3, len(model)), weights=prepared.weights,
    )  # fmt: skip


def real_table(prepared: PreparedRows, config: SynthConfig, spec: GroupingSpec) -> pd.DataFrame:
    """The prepared rows with numeric columns bucketed by the public edges (all text)."""
    rows = prepared.rows.copy()
    edges_to_apply, _ = prepared.encoding(config, spec)
    for column, edges in edges_to_apply.items():
        values = rows[column].to_numpy(dtype=float, na_value=np.nan)
        labels = np.asarray(bucket_labels(tuple(edges)), dtype=object)
        rows[column] = labels[np.searchsorted(np.asarray(edges), values, side="right")]
    return rows.astype(str)


@dataclass(frozen=True, eq=False)
class EncodedRows:
    """The rows encoded once for many simulated syntheses of one strategy.

    :func:`~dpcore.analyses.synth.synthesize` validates and encodes its input on every call (about half
    the time of a run on the demo data); a sweep runs it dozens of times on the same rows.
    :meth:`draw` does what ``synthesize(..., noise="simulation", rng=rng)`` does after its
    encoding, in the same order of random draws, so for the same seed it returns the same table
    (a unit test checks this).
    """

    codes: np.ndarray
    labels: Mapping[str, tuple[str, ...]]
    model: tuple[str, ...]
    strata: tuple[str, ...]
    output: tuple[str, ...]
    groups: np.ndarray
    weights: np.ndarray
    index: np.ndarray
    row_weights: np.ndarray | None = None
    """Rows each coded row stands for (:attr:`PreparedRows.weights`); None: one each."""
    noisy_sizes: np.ndarray | None = None
    """With rows per group from the release's noisy counts: each group's exact size, which
    every simulated release noises anew (:class:`CountSplit`); None with fixed shares."""

    @classmethod
    def of(
        cls,
        prepared: PreparedRows,
        config: SynthConfig,
        spec: GroupingSpec,
        shares: PublicShares,
        strategy: Strategy,
    ) -> EncodedRows:
        output = output_columns(config, spec.by)
        strata = tuple(spec.by) if strategy == "stratified" else ()
        model = tuple(c for c in output if c not in strata)
        to_apply, bucketed = prepared.encoding(config, spec)
        edges = check_edges({c: list(e) for c, e in to_apply.items()})
        codes, labels = encode_rows(prepared.rows, model + strata, edges, bucketed)
        groups, weights, index = strata_groups(codes, labels, strata, model, shares)
        noisy = strata and shares.drawn_with_release
        sizes = np.asarray(prepared.grouping.sizes) if noisy else None
        return cls(codes, labels, model, strata, output, groups, weights, index, prepared.weights,
                   sizes)  # fmt: skip

    def draw(
        self,
        config: SynthConfig,
        epsilon: float,
        rng: np.random.Generator,
        progress: Progress | None = None,
    ) -> pd.DataFrame:
        generator = as_rng(rng)
        weights = self.weights
        if self.noisy_sizes is not None:  # as a release: its noisy counts first, then the models
            split = CountSplit.at_epsilon(epsilon, zcdp=config.method in MBI_METHODS)
            weights = split.noisy_shares(self.noisy_sizes, SimulationNoise(rng=generator))
            epsilon = split.models_epsilon
        fitted = fit_groups(
            self.codes[:, : len(self.model)], self.index,
            tuple(len(self.labels[c]) for c in self.model),
            allocate_rows(config.n_rows, weights), method=config.method, epsilon=epsilon,
            noise=as_noise_source("simulation", rng=generator), rng=generator, rounds=config.rounds,
            way=config.way, progress=progress, weights=self.row_weights,
        )  # fmt: skip
        return assemble_rows(fitted, self.groups, self.model, self.strata, self.output, self.labels)


def sweep_errors(
    prepared: PreparedRows,
    config: SynthConfig,
    spec: GroupingSpec,
    shares: PublicShares,
    *,
    epsilons: Sequence[float],
    strategies: Sequence[Strategy] = ("stratified", "vanilla"),
    runs: int = 3,
    rng: int = 0,
    workload: GroupWorkload | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """Per-group and overall 3-way workload error of ``runs`` simulated syntheses per ε and
    strategy (AAAI 2024 arXiv, Fig. 9 with our synthesizers). Simulation noise; spends nothing.

    Run r of every ε and strategy uses the seed ``(rng, r)`` (common random numbers, so curves
    over ε are smooth). Returns a tidy frame: ``epsilon``, ``strategy``, ``run``, ``level``
    (``"group"`` or ``"population"``), ``group`` (:data:`ALL_ROWS` for the population), ``size``
    (real rows) and ``error``. The errors compare with the confidential rows: they are not DP.
    ``progress(done, total)`` counts group fits over the whole sweep (for MST and AIM, whose
    fits take seconds each).
    """
    runs = positive_int("runs", runs)
    epsilons = tuple(positive_number("epsilons", e) for e in epsilons)
    encoded = {s: EncodedRows.of(prepared, config, spec, shares, s) for s in strategies}
    if workload is None:
        workload = build_workload(prepared, config, spec)
    records = []
    total = sum(len(encoded[s].weights) for s in strategies) * runs * len(epsilons)
    done = 0

    def report(group: int, _groups: int) -> None:
        if progress is not None:
            progress(done + group, total)

    for epsilon in epsilons:
        for strategy in strategies:
            for run in range(runs):
                generator = np.random.default_rng([rng, run])
                frame = encoded[strategy].draw(config, epsilon, generator, report)
                done += len(encoded[strategy].weights)
                errors = workload.score(frame)
                for label, size, error in zip(
                    workload.labels, workload.sizes, errors.groups, strict=True
                ):
                    records.append((epsilon, strategy, run, "group", label, int(size), error))
                records.append(
                    (epsilon, strategy, run, "population", ALL_ROWS, int(workload.sizes.sum()),
                     errors.overall)
                )  # fmt: skip
    return pd.DataFrame(
        records, columns=["epsilon", "strategy", "run", "level", "group", "size", "error"]
    )


def sweep_metrics(errors: pd.DataFrame) -> pd.DataFrame:
    """Per ε, strategy and run: the overall, worst-group and parity error (Def. 11, ω = 1/k),
    and the max disparity (largest minus smallest group error), from :func:`sweep_errors`."""
    rows = []
    for (epsilon, strategy, run), part in errors.groupby(
        ["epsilon", "strategy", "run"], sort=False
    ):
        groups = part[part["level"] == "group"]
        result = GroupErrors(
            groups=pd.Series(groups["error"].to_numpy(), index=groups["group"].to_numpy()),
            overall=float(part.loc[part["level"] == "population", "error"].iloc[0]),
        )
        rows.append(
            (epsilon, strategy, run, result.overall, result.worst,
             synthetic_parity_error(result), result.disparity)
        )  # fmt: skip
    return pd.DataFrame(
        rows,
        columns=["epsilon", "strategy", "run", "overall", "worst group", "parity", "disparity"],
    )
