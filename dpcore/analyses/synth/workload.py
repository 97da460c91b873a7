"""Scoring synthetic tables per group: the 3-way marginal workload error (AAAI 2024 arXiv,
Def. 14), counted once for the real rows, and the sweep across ε for the Compare page.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from dpcore._validate import as_rng, positive_int, positive_number
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
    assign_groups,
    check_edges,
    check_shares,
    encode_rows,
)
from dpcore.analyses.synth.synthesizers import assemble_rows, fit_groups
from dpcore.grouping import LABEL_SEPARATOR, GroupingSpec, bucket_labels
from dpcore.mechanisms import as_noise_source
from dpcore.metrics import GroupErrors, synthetic_parity_error
from dpcore.shares import PublicShares

__all__ = [
    "SWEEP_EPSILONS",
    "GroupWorkload",
    "build_workload",
    "sweep_errors",
    "sweep_metrics",
    "synth_domain",
]


SWEEP_EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
"""The ε values of a sweep (the current ε is added). The paper ran ε ∈ {0.01, 0.05, 0.1, 0.5, 1, 5}
(AAAI 2024 arXiv, "Synthesizers and Privacy Settings"); below 0.1 our small groups are pure noise."""


def _codes(frame: pd.DataFrame, column: str, categories: Sequence[str]) -> np.ndarray:
    """Codes of a column's values (as text) in ``categories``; -1 for values outside them."""
    series = frame[column]
    if isinstance(series.dtype, pd.CategoricalDtype) and list(series.cat.categories) == list(
        categories
    ):
        return series.cat.codes.to_numpy(dtype=np.int64)
    values = series.astype(str).to_numpy()
    return pd.Index(list(categories)).get_indexer(values).astype(np.int64)


@dataclass(frozen=True, eq=False)
class GroupWorkload:
    r"""The real rows' ``way``-way marginals per group, for scoring synthetic tables quickly.

    :meth:`score` returns what :func:`dpcore.metrics.workload_error_by_group` returns (AAAI 2024
    arXiv, Def. 14 per group, Fig. 9) — the average over the marginals S of
    :math:`\lVert M_S(G)/|G| - M_S(\hat G)/|\hat G|\rVert_1`, in [0, 2] — but the real tables are
    counted once here, and a synthetic table costs one ``np.bincount`` per marginal over (group,
    cell) indices. Build it with :meth:`from_rows`.
    """

    strata: tuple[str, ...]
    columns: tuple[str, ...]
    domain: Mapping[str, tuple[str, ...]]
    labels: tuple[str, ...]
    sizes: np.ndarray
    way: int
    _lookup: np.ndarray = field(repr=False)
    _strata_shape: tuple[int, ...] = field(repr=False)
    _marginals: tuple = field(repr=False)

    @classmethod
    def from_rows(
        cls,
        real: pd.DataFrame,
        strata: Sequence[str],
        columns: Sequence[str],
        domain: Mapping[str, Sequence[str]],
        *,
        way: int = 3,
    ) -> GroupWorkload:
        """Count the real marginals. ``real`` holds categories (bucket numeric columns first,
        e.g. with :func:`dpcore.analyses.synth.bucketize`) within ``domain`` (e.g. a synthesis'
        :attr:`~dpcore.analyses.synth.SyntheticData.domain`)."""
        strata, columns = tuple(strata), tuple(columns)
        way = positive_int("way", way)
        if way > len(columns):
            raise ValueError(f"`way` must be at most the {len(columns)} columns, got {way}")
        domain = {c: tuple(str(v) for v in domain[c]) for c in (*strata, *columns)}
        codes = {c: _codes(real, c, domain[c]) for c in (*strata, *columns)}
        outside = [c for c, v in codes.items() if np.any(v < 0)]
        if outside:
            raise ValueError(f"`real` has values outside `domain` in {outside}")
        shape = tuple(len(domain[c]) for c in strata)
        key = np.ravel_multi_index([codes[c] for c in strata], shape)
        keys, group, sizes = np.unique(key, return_inverse=True, return_counts=True)
        lookup = np.full(math.prod(shape), -1, dtype=np.int64)
        lookup[keys] = np.arange(len(keys))
        labels = tuple(
            LABEL_SEPARATOR.join(domain[c][k] for c, k in zip(strata, combo, strict=True))
            for combo in zip(*np.unravel_index(keys, shape), strict=True)
        )
        marginals = []
        for axes in combinations(columns, way):
            cells_shape = tuple(len(domain[c]) for c in axes)
            cell = np.ravel_multi_index([codes[c] for c in axes], cells_shape)
            n_cells = math.prod(cells_shape)
            per_group = _tables(group, cell, len(keys), n_cells)
            overall = np.bincount(cell, minlength=n_cells) / len(cell)
            marginals.append((axes, cells_shape, per_group, overall))
        return cls(
            strata=strata, columns=columns, domain=domain, labels=labels, sizes=sizes, way=way,
            _lookup=lookup, _strata_shape=shape, _marginals=tuple(marginals),
        )  # fmt: skip

    def score(self, synthetic: pd.DataFrame) -> GroupErrors:
        """Per-group and overall workload error of one synthetic table (same domain)."""
        codes = {c: _codes(synthetic, c, self.domain[c]) for c in (*self.strata, *self.columns)}
        outside = [c for c, v in codes.items() if np.any(v < 0)]
        if outside:
            raise ValueError(f"`synthetic` has values outside the real domain in {outside}")
        key = np.ravel_multi_index([codes[c] for c in self.strata], self._strata_shape)
        group = self._lookup[key]
        keep = group >= 0
        total_groups = np.zeros(len(self.labels))
        total = 0.0
        for axes, shape, real_groups, real_overall in self._marginals:
            cell = np.ravel_multi_index([codes[c] for c in axes], shape)
            synth_groups = _tables(group[keep], cell[keep], len(self.labels), real_overall.size)
            total_groups += np.abs(real_groups - synth_groups).sum(axis=1)
            overall = np.bincount(cell, minlength=real_overall.size) / max(len(cell), 1)
            total += float(np.abs(real_overall - overall).sum())
        k = len(self._marginals)
        return GroupErrors(
            groups=pd.Series(total_groups / k, index=list(self.labels), name="workload error"),
            overall=total / k,
        )


def _tables(group: np.ndarray, cell: np.ndarray, n_groups: int, n_cells: int) -> np.ndarray:
    """Per group, the marginal as proportions (n_groups, n_cells); a group without rows is 0."""
    counts = np.bincount(group * n_cells + cell, minlength=n_groups * n_cells)
    counts = counts.reshape(n_groups, n_cells)
    return counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)


def synth_domain(
    prepared: PreparedRows, config: SynthConfig, spec: GroupingSpec
) -> dict[str, tuple[str, ...]]:
    """Each output column's categories in the order :func:`~dpcore.analyses.synth.synthesize` codes them:
    bucket labels for columns with edges, else the sorted distinct values (as text)."""
    edges = all_edges(config, spec)
    return {
        c: tuple(bucket_labels(tuple(edges[c])))
        if c in edges
        else tuple(sorted(pd.unique(prepared.rows[c].astype(str).to_numpy())))
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
        way=min(3, len(model)),
    )  # fmt: skip


def real_table(prepared: PreparedRows, config: SynthConfig, spec: GroupingSpec) -> pd.DataFrame:
    """The prepared rows with numeric columns bucketed by the public edges (all text)."""
    rows = prepared.rows.copy()
    for column, edges in all_edges(config, spec).items():
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
        edges = check_edges({c: list(e) for c, e in all_edges(config, spec).items()})
        codes, labels = encode_rows(prepared.rows, model + strata, edges, {})
        if strata:
            groups, weights = check_shares(shares, strata, labels)
            sizes = tuple(len(labels[c]) for c in strata)
            index = assign_groups(codes[:, len(model) :], groups, sizes)
        else:
            groups, weights = np.zeros((1, 0), dtype=np.int64), np.ones(1)
            index = np.zeros(len(codes), dtype=np.int64)
        return cls(codes, labels, model, strata, output, groups, weights, index)

    def draw(self, config: SynthConfig, epsilon: float, rng: np.random.Generator) -> pd.DataFrame:
        generator = as_rng(rng)
        fitted = fit_groups(
            self.codes[:, : len(self.model)], self.index,
            tuple(len(self.labels[c]) for c in self.model),
            allocate_rows(config.n_rows, self.weights), method=config.method, epsilon=epsilon,
            noise=as_noise_source("simulation", rng=generator), rng=generator, rounds=config.rounds,
            way=config.way,
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
) -> pd.DataFrame:
    """Per-group and overall 3-way workload error of ``runs`` simulated syntheses per ε and
    strategy (AAAI 2024 arXiv, Fig. 9 with our synthesizers). Simulation noise; spends nothing.

    Run r of every ε and strategy uses the seed ``(rng, r)`` (common random numbers, so curves
    over ε are smooth). Returns a tidy frame: ``epsilon``, ``strategy``, ``run``, ``level``
    (``"group"`` or ``"population"``), ``group`` (:data:`ALL_ROWS` for the population), ``size``
    (real rows) and ``error``. The errors compare with the confidential rows: they are not DP.
    """
    runs = positive_int("runs", runs)
    epsilons = tuple(positive_number("epsilons", e) for e in epsilons)
    encoded = {s: EncodedRows.of(prepared, config, spec, shares, s) for s in strategies}
    if workload is None:
        workload = build_workload(prepared, config, spec)
    records = []
    for epsilon in epsilons:
        for strategy in strategies:
            for run in range(runs):
                frame = encoded[strategy].draw(config, epsilon, np.random.default_rng([rng, run]))
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
