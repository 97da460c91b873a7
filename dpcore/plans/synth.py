r"""Synthetic data per group: prepared rows, previews, fast per-group scoring, sweeps and the plan.

Builds on :func:`dpcore.synth.synthesize` and the stratified synthesis of Rosenblatt, Stoyanovich &
Musco (AAAI 2024 arXiv, "Stratified Data Synthesis" and appendix C): one private model per group
of the Strata page, each with the full ε (disjoint groups compose in parallel), rows drawn from
each group's model in proportion to its public share. "Vanilla" fits one model to every row, with
the strata columns modelled like any other column. The pieces:

- :class:`SynthConfig` — what to synthesize (columns, public bucket edges, synthesizer, rows);
- :func:`prepare_rows` — the rows a synthesis uses: the Strata page's groups (holdout removed,
  dropped groups left out), numeric columns chosen as categories turned into text;
- :func:`check_config` — refuses what cannot work, with a message saying how to fix it (numeric
  column without edges, too few columns, a joint domain too large for the synthesizer, groups
  that would get no synthetic rows);
- :func:`run_synthesis` — one vanilla or stratified synthesis (a preview with ``"simulation"``
  noise, or a release with ``"secure"`` noise);
- :class:`GroupWorkload` — the real rows' marginals per group, computed once, so many synthetic
  tables are scored quickly with Def. 14's 3-way workload error (same numbers as
  :func:`dpcore.metrics.workload_error_by_group`);
- :func:`sweep_errors` and :func:`sweep_metrics` — per-group errors of vanilla and stratified
  synthesis over several ε and seeds, and their overall, worst-group and parity errors
  (Def. 11, Fig. 9);
- :class:`SynthPlan` — the release plan committed on the Release page (follows
  :class:`dpcore.release.ReleasePlan`); its outputs are the synthetic rows.

Privacy accounting: every synthesizer here is ε-DP under add/remove-one neighbours. Stratified,
each group's model is fitted on that group's rows alone with ε, so the release costs ε by
parallel composition (McSherry 2009, Thm. 4); the group list and shares are public inputs.
Drawing rows from the fitted models is post-processing. A zCDP ledger is charged ρ = ε²/2
(Bun & Steinke 2016, Prop. 1.4).

What is *not* protected, and must be said on screen: the category lists of columns whose
categories are read from the data (:attr:`dpcore.synth.SyntheticData.domain_from_data`), and the
group shares when they are the data's own group counts treated as public.

Never imports streamlit or plotly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Literal

import numpy as np
import pandas as pd

from dpcore._validate import as_rng, positive_int, positive_number
from dpcore.accounting import Budget, PureDP
from dpcore.mechanisms import NoiseKind, NoiseSource
from dpcore.metrics import GroupErrors, synthetic_parity_error
from dpcore.release import DatasetRef, _data_line
from dpcore.strata import (
    HOLDOUT_SEED,
    LABEL_SEPARATOR,
    OTHER_LABEL,
    PublicShares,
    Strata,
    StrataSpec,
    _bucket_labels,
    _is_numeric_group_dtype,
    split_holdout,
)
from dpcore.synth import (
    MAX_HISTOGRAM_CELLS,
    MAX_MWEM_CELLS,
    METHODS,
    Method,
    SyntheticData,
    _allocate,
    _assemble,
    _assign_groups,
    _check_edges,
    _check_shares,
    _encode,
    _fit_groups,
    _source,
    synthesize,
)

__all__ = [
    "ALL_ROWS",
    "INTERVALS_NOTE",
    "MAX_ROWS",
    "METHOD_NAMES",
    "MIN_MODEL_COLUMNS",
    "MIN_ROWS",
    "STRATEGIES",
    "SWEEP_EPSILONS",
    "GroupWorkload",
    "PreparedRows",
    "SynthConfig",
    "SynthPlan",
    "build_workload",
    "check_config",
    "domain_sizes",
    "prepare_rows",
    "run_synthesis",
    "sweep_errors",
    "sweep_metrics",
    "synth_domain",
]

Strategy = Literal["stratified", "vanilla"]
STRATEGIES: dict[str, str] = {
    "stratified": "Stratified: one model per group, rows drawn in proportion to public shares",
    "vanilla": "Vanilla: one model for all rows, the strata columns modelled like the others",
}
METHOD_NAMES: dict[str, str] = {
    "independent": "independent marginals",
    "mwem": "MWEM",
    "histogram": "full histogram",
}
MIN_MODEL_COLUMNS = 3
"""Fewest synthesized columns besides the strata columns: the workload error uses 3-way marginals."""
MIN_ROWS = 10
MAX_ROWS = 100_000
"""Most synthetic rows per release: every row is stored in the ledger and the downloads."""
SWEEP_EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
"""The ε values of a sweep (the current ε is added). The paper ran ε ∈ {0.01, 0.05, 0.1, 0.5, 1, 5}
(AAAI 2024 arXiv, "Synthesizers and Privacy Settings"); below 0.1 our small groups are pure noise."""
ALL_ROWS = "All"
"""Group label of the error on all rows in :func:`sweep_errors`."""
INTERVALS_NOTE = (
    "none: synthetic rows carry no intervals; their error against the data is simulated on the "
    "Compare page"
)


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SynthConfig:
    """What to synthesize; plain values only, so it keys caches and prints into scripts.

    Attributes
    ----------
    columns
        Columns to synthesize besides the strata columns (which are always added).
    method
        ``"independent"``, ``"mwem"`` or ``"histogram"`` (see :func:`dpcore.synth.synthesize`).
    n_rows
        Synthetic rows to draw (public), between :data:`MIN_ROWS` and :data:`MAX_ROWS`.
    edges
        Public bucket edges of numeric columns, ``((column, (e0, e1, ...)), ...)``; never derived
        from the data.
    categorical
        Numeric columns whose values are categories (e.g. a 0/1 outcome): turned into text and
        modelled as categories read from the data.
    rounds, way
        MWEM's rounds and largest marginal order (ignored by the other methods).
    """

    columns: tuple[str, ...]
    method: Method = "mwem"
    n_rows: int = 10_000
    edges: tuple[tuple[str, tuple[float, ...]], ...] = ()
    categorical: tuple[str, ...] = ()
    rounds: int = 6
    way: int = 3

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        columns = (self.columns,) if isinstance(self.columns, str) else tuple(self.columns)
        if not all(isinstance(c, str) for c in columns):
            raise TypeError(f"`columns` must be column names, got {self.columns!r}")
        if len(set(columns)) != len(columns):
            raise ValueError(f"`columns` must not repeat a column, got {list(columns)}")
        set_(self, "columns", columns)
        if self.method not in METHODS:
            raise ValueError(f"`method` must be one of {sorted(METHODS)}, got {self.method!r}")
        n_rows = positive_int("n_rows", self.n_rows)
        if not MIN_ROWS <= n_rows <= MAX_ROWS:
            raise ValueError(
                f"`n_rows` must be between {MIN_ROWS:,} and {MAX_ROWS:,}, got {n_rows:,}"
            )
        set_(self, "n_rows", n_rows)
        edges = []
        for column, values in self.edges:
            values = tuple(float(v) for v in values)
            if not values or not all(math.isfinite(v) for v in values):
                raise ValueError(
                    f"`edges[{column!r}]` must be a non-empty list of finite numbers, got "
                    f"{list(values)}"
                )
            if any(b <= a for a, b in zip(values, values[1:], strict=False)):
                raise ValueError(
                    f"`edges[{column!r}]` must be strictly increasing, got {list(values)}"
                )
            edges.append((str(column), values))
        if len({c for c, _ in edges}) != len(edges):
            raise ValueError(f"`edges` lists a column twice: {[c for c, _ in edges]}")
        set_(self, "edges", tuple(edges))
        set_(self, "categorical", tuple(self.categorical))
        both = sorted(set(self.categorical) & {c for c, _ in edges})
        if both:
            raise ValueError(
                f"{both} have both bucket `edges` and are listed as `categorical`; choose one"
            )
        set_(self, "rounds", positive_int("rounds", self.rounds))
        set_(self, "way", positive_int("way", self.way))

    def to_dict(self) -> dict:
        """JSON-ready form; MWEM's settings only when they are used (they key the plan)."""
        out = {
            "columns": list(self.columns),
            "method": self.method,
            "n_rows": self.n_rows,
            "edges": {c: list(e) for c, e in self.edges},
            "categorical": list(self.categorical),
        }
        if self.method == "mwem":
            out |= {"rounds": self.rounds, "way": self.way}
        return out


def _model_columns(config: SynthConfig, strata: Sequence[str]) -> tuple[str, ...]:
    return tuple(c for c in config.columns if c not in strata)


def _output_columns(config: SynthConfig, strata: Sequence[str]) -> tuple[str, ...]:
    return _model_columns(config, strata) + tuple(strata)


def _all_edges(config: SynthConfig, spec: StrataSpec) -> dict[str, tuple[float, ...]]:
    """Bucket edges of every output column: the Strata page's for strata columns."""
    return {**dict(config.edges), **{c: e for c, e in spec.edges if c in spec.by}}


# --------------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class PreparedRows:
    """The confidential rows a synthesis models, and what was left out on the way.

    ``rows`` holds the output columns only (numeric columns chosen as categories as text).
    ``n_holdout`` rows form the public holdout of the Strata page and ``n_dropped`` rows belong to
    groups dropped there as too small; neither is modelled.
    """

    rows: pd.DataFrame
    n_input: int
    n_holdout: int = 0
    n_dropped: int = 0
    _distinct: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def n_distinct(self, column: str) -> int:
        """Distinct values of ``column`` (as text), counted once per column and kept: the rows
        never change, and they are kept with the rows when these are pickled (e.g. cached)."""
        if column not in self._distinct:
            self._distinct[column] = int(self.rows[column].astype(str).nunique())
        return self._distinct[column]

    def domain_sizes(self, config: SynthConfig, spec: StrataSpec) -> dict[str, int]:
        """:func:`domain_sizes` of :attr:`rows`, with the distinct counts of :meth:`n_distinct`."""
        edges = _all_edges(config, spec)
        return {
            c: len(edges[c]) + 1 if c in edges else self.n_distinct(c)
            for c in _output_columns(config, spec.by)
        }

    def messages(self) -> list[str]:
        out = []
        if self.n_holdout:
            out.append(
                f"{self.n_holdout:,} rows form the public holdout that gives the group shares; "
                "they are not synthesized."
            )
        if self.n_dropped:
            out.append(
                f"{self.n_dropped:,} rows belong to groups dropped on the Strata page as too small; "
                "they are not synthesized."
            )
        return out


def prepare_rows(
    frame: pd.DataFrame, spec: StrataSpec, strata: Strata, config: SynthConfig
) -> PreparedRows:
    """The rows to synthesize: the Strata page's private rows in its groups, output columns only.

    With ``share_source="holdout"`` the public holdout (:func:`~dpcore.strata.split_holdout`,
    seed :data:`~dpcore.strata.HOLDOUT_SEED`, as in :meth:`StrataSpec.build`) is removed. Rows of
    groups dropped as too small are left out, as they are for the mean. A group merged into
    ``"Other (merged)"`` is refused: synthetic rows keep the strata columns, so every group must
    be one combination of their values.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}")
    if not isinstance(strata, Strata):
        raise TypeError(f"`strata` must be a Strata, got {type(strata).__name__}")
    if tuple(strata.by) != tuple(spec.by):
        raise ValueError(f"`strata` groups by {strata.by}, but `spec` by {spec.by}")
    if OTHER_LABEL in strata.labels:
        merged = strata.report.merged_groups
        raise ValueError(
            f"Synthetic rows keep {' and '.join(spec.by)} as columns, so every group must be one "
            f"combination of their values, but the Strata page merged {len(merged)} small groups "
            f"into “{OTHER_LABEL}” ({', '.join(merged[:5])}{' …' if len(merged) > 5 else ''}). "
            "On the Strata page, drop small groups instead of merging them, or lower the minimum "
            "group size."
        )
    output = _output_columns(config, spec.by)
    unknown = [c for c in (*output, *config.categorical) if c not in frame.columns]
    if unknown:
        raise ValueError(
            f"The data has no column(s) {unknown}; available columns: "
            + ", ".join(str(c) for c in frame.columns)
        )
    private, n_holdout = frame, 0
    if spec.share_source == "holdout":
        private, public = split_holdout(frame, spec.holdout_fraction, rng=HOLDOUT_SEED)
        n_holdout = len(public)
    keep = strata.assign(private) >= 0
    rows = private.loc[keep, list(output)].reset_index(drop=True)
    for column in config.categorical:
        if column in rows.columns:
            values = rows[column]
            text = values.astype(str)
            rows[column] = text.where(values.notna(), None)
    return PreparedRows(
        rows=rows,
        n_input=len(frame),
        n_holdout=n_holdout,
        n_dropped=int((~keep).sum()),
    )


def domain_sizes(rows: pd.DataFrame, config: SynthConfig, spec: StrataSpec) -> dict[str, int]:
    """Categories per output column: buckets for columns with edges, else distinct values."""
    edges = _all_edges(config, spec)
    return {
        c: len(edges[c]) + 1 if c in edges else int(rows[c].astype(str).nunique())
        for c in _output_columns(config, spec.by)
    }


def _cells_text(sizes: Mapping[str, int]) -> str:
    return " × ".join(f"{c} ({k})" for c, k in sizes.items())


def check_config(
    prepared: PreparedRows,
    config: SynthConfig,
    spec: StrataSpec,
    shares: PublicShares,
    strategies: Sequence[Strategy] = ("stratified",),
) -> dict[str, int]:
    """Refuse a configuration that cannot run, with a message saying what to change.

    Checks, in order: enough columns besides the strata (:data:`MIN_MODEL_COLUMNS`); every
    numeric column has public edges or is chosen as categories; the joint domain of each
    strategy's model fits the synthesizer (:data:`~dpcore.synth.MAX_HISTOGRAM_CELLS`,
    :data:`~dpcore.synth.MAX_MWEM_CELLS`); stratified, every group with a positive share gets at
    least one synthetic row. Returns the domain sizes (:func:`domain_sizes`).
    """
    clash = sorted(({c for c, _ in config.edges} | set(config.categorical)) & set(spec.by))
    if clash:
        raise ValueError(
            f"{clash} group the rows on the Strata page, which sets their buckets; remove them "
            "from the synthesizer's bucket edges and categorical columns."
        )
    model = _model_columns(config, spec.by)
    if len(model) < MIN_MODEL_COLUMNS:
        raise ValueError(
            f"Choose at least {MIN_MODEL_COLUMNS} columns to synthesize besides the strata "
            f"columns ({', '.join(spec.by)}): the error charts compare 3-way marginals. Got "
            f"{len(model)}: {', '.join(model) or 'none'}."
        )
    rows = prepared.rows
    edges = _all_edges(config, spec)
    for column in model:
        if column not in edges and column not in config.categorical:
            if _is_numeric_group_dtype(rows[column]):
                raise ValueError(
                    f"Column `{column}` is numeric: type public bucket edges for it (e.g. "
                    f"“25, 45, 65”), or treat its values as categories. Strata Lab never derives "
                    "edges from the data."
                )
    unused = [c for c in edges if c not in _output_columns(config, spec.by)]
    if unused:
        raise ValueError(f"Bucket edges were given for {unused}, which are not synthesized.")
    if len(rows) == 0:
        raise ValueError("No rows are left to synthesize after the Strata page's choices.")
    sizes = prepared.domain_sizes(config, spec)
    limits = {"histogram": MAX_HISTOGRAM_CELLS, "mwem": MAX_MWEM_CELLS}
    if config.method in limits:
        model_sizes = {c: sizes[c] for c in model}
        for strategy in strategies:
            shown = model_sizes if strategy == "stratified" else sizes
            cells = math.prod(shown.values())
            if cells > limits[config.method]:
                where = (
                    "each group's model"
                    if strategy == "stratified"
                    else "the vanilla model (strata columns included)"
                )
                advice = (
                    "Use MWEM (up to "
                    f"{MAX_MWEM_CELLS:,} cells) or independent marginals, or synthesize fewer "
                    "columns or use coarser bucket edges."
                    if config.method == "histogram"
                    else "Use independent marginals, or synthesize fewer columns or use coarser "
                    "bucket edges."
                )
                raise ValueError(
                    f"The {METHOD_NAMES[config.method]} of {where} has {cells:,} cells "
                    f"({_cells_text(shown)}), above its limit of {limits[config.method]:,}. "
                    + advice
                )
    if "stratified" in strategies:
        counts = _allocate(config.n_rows, np.asarray(shares.values))
        empty = [lab for lab, c, s in zip(shares.labels, counts, shares.values, strict=True)
                 if c == 0 and s > 0]  # fmt: skip
        if empty:
            smallest = float(np.min(shares.values[shares.values > 0]))
            raise ValueError(
                f"With {config.n_rows:,} synthetic rows, {len(empty)} group(s) would get no rows "
                f"({', '.join(empty[:5])}): raise the number of rows to at least "
                f"{math.ceil(1 / smallest):,}."
            )
    return sizes


# --------------------------------------------------------------------------------------------
# One synthesis
# --------------------------------------------------------------------------------------------


def run_synthesis(
    prepared: PreparedRows,
    config: SynthConfig,
    spec: StrataSpec,
    shares: PublicShares,
    *,
    epsilon: float,
    strategy: Strategy,
    noise: NoiseKind | NoiseSource = "simulation",
    rng: np.random.Generator | int | None = None,
) -> SyntheticData:
    r"""One ε-DP synthetic table of :func:`_output_columns`, vanilla or stratified.

    Stratified: :func:`~dpcore.synth.synthesize` with ``strata=spec.by`` and the public
    ``shares`` (AAAI 2024, "Stratified Data Synthesis"); vanilla: one model of every column.
    Both cost ε (pure DP). ``noise="simulation"`` makes a preview that spends nothing and must
    not be published; ``"secure"`` draws OpenDP noise for a release.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"`strategy` must be one of {sorted(STRATEGIES)}, got {strategy!r}")
    stratified = strategy == "stratified"
    return synthesize(
        prepared.rows,
        list(_output_columns(config, spec.by)),
        method=config.method,
        epsilon=epsilon,
        n_rows=config.n_rows,
        strata=list(spec.by) if stratified else None,
        shares=shares if stratified else None,
        rng=rng,
        edges={c: list(e) for c, e in _all_edges(config, spec).items()} or None,
        rounds=config.rounds,
        way=config.way,
        noise=noise,
    )


# --------------------------------------------------------------------------------------------
# Scoring many synthetic tables against the same real rows
# --------------------------------------------------------------------------------------------


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
        e.g. with :func:`dpcore.synth.bucketize`) within ``domain`` (e.g. a synthesis'
        :attr:`~dpcore.synth.SyntheticData.domain`)."""
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
    prepared: PreparedRows, config: SynthConfig, spec: StrataSpec
) -> dict[str, tuple[str, ...]]:
    """Each output column's categories in the order :func:`~dpcore.synth.synthesize` codes them:
    bucket labels for columns with edges, else the sorted distinct values (as text)."""
    edges = _all_edges(config, spec)
    return {
        c: tuple(_bucket_labels(tuple(edges[c])))
        if c in edges
        else tuple(sorted(pd.unique(prepared.rows[c].astype(str).to_numpy())))
        for c in _output_columns(config, spec.by)
    }


def build_workload(prepared: PreparedRows, config: SynthConfig, spec: StrataSpec) -> GroupWorkload:
    """The :class:`GroupWorkload` of the prepared rows: 3-way marginals (fewer with fewer
    columns) of the columns besides the strata, per group of the strata columns."""
    model = _model_columns(config, spec.by)
    return GroupWorkload.from_rows(
        real_table(prepared, config, spec), spec.by, model, synth_domain(prepared, config, spec),
        way=min(3, len(model)),
    )  # fmt: skip


def real_table(prepared: PreparedRows, config: SynthConfig, spec: StrataSpec) -> pd.DataFrame:
    """The prepared rows with numeric columns bucketed by the public edges (all text)."""
    rows = prepared.rows.copy()
    for column, edges in _all_edges(config, spec).items():
        values = rows[column].to_numpy(dtype=float, na_value=np.nan)
        labels = np.asarray(_bucket_labels(tuple(edges)), dtype=object)
        rows[column] = labels[np.searchsorted(np.asarray(edges), values, side="right")]
    return rows.astype(str)


# --------------------------------------------------------------------------------------------
# Sweeps over ε and seeds
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Encoded:
    """The rows encoded once for many simulated syntheses of one strategy.

    :func:`~dpcore.synth.synthesize` validates and encodes its input on every call (about half
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
        spec: StrataSpec,
        shares: PublicShares,
        strategy: Strategy,
    ) -> _Encoded:
        output = _output_columns(config, spec.by)
        strata = tuple(spec.by) if strategy == "stratified" else ()
        model = tuple(c for c in output if c not in strata)
        edges = _check_edges({c: list(e) for c, e in _all_edges(config, spec).items()})
        codes, labels = _encode(prepared.rows, model + strata, edges, {})
        if strata:
            groups, weights = _check_shares(shares, strata, labels)
            sizes = tuple(len(labels[c]) for c in strata)
            index = _assign_groups(codes[:, len(model) :], groups, sizes)
        else:
            groups, weights = np.zeros((1, 0), dtype=np.int64), np.ones(1)
            index = np.zeros(len(codes), dtype=np.int64)
        return cls(codes, labels, model, strata, output, groups, weights, index)

    def draw(self, config: SynthConfig, epsilon: float, rng: np.random.Generator) -> pd.DataFrame:
        generator = as_rng(rng)
        fitted = _fit_groups(
            self.codes[:, : len(self.model)], self.index,
            tuple(len(self.labels[c]) for c in self.model),
            _allocate(config.n_rows, self.weights), method=config.method, epsilon=epsilon,
            noise=_source("simulation", generator), rng=generator, rounds=config.rounds,
            way=config.way,
        )  # fmt: skip
        return _assemble(fitted, self.groups, self.model, self.strata, self.output, self.labels)


def sweep_errors(
    prepared: PreparedRows,
    config: SynthConfig,
    spec: StrataSpec,
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
    encoded = {s: _Encoded.of(prepared, config, spec, shares, s) for s in strategies}
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


# --------------------------------------------------------------------------------------------
# The release plan
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SynthPlan:
    r"""A planned release of ε-DP synthetic rows, vanilla or stratified (AAAI 2024, app. C).

    Follows :class:`dpcore.release.ReleasePlan`. :meth:`run` returns the synthetic rows, one dict
    per row with the output columns (text values); they are DP outputs, so the record may be
    published and downloaded. The cost is ``PureDP(epsilon)`` for both strategies (stratified:
    parallel composition over the disjoint groups).

    Parameters
    ----------
    frame
        The confidential rows (not part of the plan's identity; ``dataset`` fingerprints them).
    strata, shares
        Built by ``spec`` from ``frame`` (the Strata page's groups and public shares).
    dataset, spec
        Where the data and the groups come from; written into the metadata and the script.
    config
        What to synthesize (:class:`SynthConfig`).
    epsilon
        ε of the release.
    strategy
        ``"stratified"`` or ``"vanilla"``.
    label
        A name for the release; part of its identity.
    level
        Unused (synthetic rows have no intervals); kept for the ReleasePlan protocol.
    prepared
        ``prepare_rows(frame, spec, strata, config)`` when the caller already has it (e.g.
        cached), so it is not computed again; computed here when left out. Not part of the
        plan's identity (``frame``, ``spec`` and ``config`` determine it).
    """

    frame: pd.DataFrame = field(compare=False, repr=False)
    strata: Strata = field(compare=False, repr=False)
    shares: PublicShares = field(compare=False, repr=False)
    dataset: DatasetRef
    spec: StrataSpec
    config: SynthConfig
    epsilon: float
    strategy: Strategy = "stratified"
    label: str = ""
    level: float = field(default=0.95, compare=False)
    prepared: PreparedRows | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.frame, pd.DataFrame):
            raise TypeError(f"`frame` must be a pandas DataFrame, got {type(self.frame).__name__}")
        if not isinstance(self.shares, PublicShares) or not self.shares.labels:
            raise TypeError("`shares` must be a PublicShares with group labels")
        if not isinstance(self.config, SynthConfig):
            raise TypeError(f"`config` must be a SynthConfig, got {type(self.config).__name__}")
        object.__setattr__(self, "epsilon", positive_number("epsilon", self.epsilon))
        if self.strategy not in STRATEGIES:
            raise ValueError(
                f"`strategy` must be one of {sorted(STRATEGIES)}, got {self.strategy!r}"
            )
        if not self.label.strip():
            label = (
                f"Synthetic data ({METHOD_NAMES[self.config.method]}), {self.strategy} by "
                f"{' × '.join(self.spec.by)}"
            )
            object.__setattr__(self, "label", label)
        # The rows run() models, computed once (unless the caller passed them).
        if self.prepared is None:
            prepared = prepare_rows(self.frame, self.spec, self.strata, self.config)
            object.__setattr__(self, "prepared", prepared)
        elif not isinstance(self.prepared, PreparedRows):
            raise TypeError(
                f"`prepared` must be a PreparedRows, got {type(self.prepared).__name__}"
            )
        elif tuple(self.prepared.rows.columns) != self.columns:
            raise ValueError(
                f"`prepared` holds the columns {list(self.prepared.rows.columns)}, but the plan "
                f"synthesizes {list(self.columns)}; pass prepare_rows(frame, spec, strata, config)"
            )
        check_config(self.prepared, self.config, self.spec, self.shares, (self.strategy,))

    @property
    def cost(self) -> Budget:
        return PureDP(self.epsilon)

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns of the released rows, in order."""
        return _output_columns(self.config, self.spec.by)

    @property
    def interval_description(self) -> str:
        """What the release's metadata should say about intervals: there are none."""
        return INTERVALS_NOTE

    def parameters(self) -> dict:
        """Everything that defines the release, JSON-ready (the plan's identity)."""
        return {
            "kind": "synth",
            "statistic": f"synthetic data ({METHOD_NAMES[self.config.method]})",
            "label": self.label,
            "dataset": {"name": self.dataset.name, "fingerprint": self.dataset.fingerprint,
                        "rows": self.dataset.rows},
            "strata": self.spec.to_dict(),
            "estimator": {"class": "synthesize", **self.config.to_dict()},
            "budget": {"kind": "pure", "epsilon": self.epsilon},
            "strategy": self.strategy,
            "columns": list(self.columns),
        }  # fmt: skip

    def run(self, noise: NoiseSource) -> list[dict]:
        """Fit the models with ``noise`` and draw the rows; one dict per synthetic row.

        Drawing rows from the fitted models, and shuffling them (they come grouped by stratum),
        is post-processing and uses fresh numpy randomness.
        """
        generator = as_rng(None)
        data = run_synthesis(
            self.prepared, self.config, self.spec, self.shares, epsilon=self.epsilon,
            strategy=self.strategy, noise=noise, rng=generator,
        )  # fmt: skip
        order = generator.permutation(len(data.frame))
        return data.frame.iloc[order].astype(str).to_dict("records")

    def review_lines(self) -> list[str]:
        """Markdown lines that describe the plan for a person about to commit it."""
        by = " × ".join(self.spec.by)
        if self.strategy == "stratified":
            groups = (
                f"**Strata:** {by} — {len(self.shares.labels)} groups, one model each with the "
                f"full ε (parallel composition); rows drawn by public share "
                f"({self.shares.description.lower()})"
            )
        else:
            groups = f"**Strata:** none — one model for all rows; {by} modelled as columns"
        edges = "; ".join(
            f"{c}: {', '.join(f'{v:g}' for v in e)}"
            for c, e in _all_edges(self.config, self.spec).items()
        )
        lines = [
            f"**Statistic:** synthetic data, {self.config.n_rows:,} rows of "
            f"{', '.join(f'`{c}`' for c in self.columns)}",
            _data_line(self.dataset),
            groups,
            f"**Synthesizer:** {METHODS[self.config.method]}"
            + (
                f" ({self.config.rounds} rounds, marginals up to {self.config.way}-way)"
                if self.config.method == "mwem"
                else ""
            ),
        ]
        if edges:
            lines.append(f"**Public bucket edges:** {edges}")
        from_data = [c for c in self.columns if c not in _all_edges(self.config, self.spec)]
        if from_data:
            lines.append(
                "**Not protected:** the category lists of "
                + ", ".join(f"`{c}`" for c in from_data)
                + " are read from the data and published as they are"
            )
        return lines

    def script_body(self) -> str:
        """The Python lines that rebuild this plan from a frame named ``frame``."""
        spec = ", ".join(f"{k}={getattr(self.spec, k)!r}" for k in self.spec.__dataclass_fields__)
        return (
            "from dpcore.plans.synth import SynthConfig, SynthPlan\n"
            "from dpcore.release import DatasetRef\n"
            "from dpcore.strata import StrataSpec\n\n"
            f"spec = StrataSpec({spec})\n"
            "strata, shares = spec.build(frame)\n"
            "plan = SynthPlan(\n"
            "    frame=frame,\n"
            "    strata=strata,\n"
            "    shares=shares,\n"
            f"    dataset=DatasetRef.of(frame, {self.dataset.name!r}),\n"
            "    spec=spec,\n"
            f"    config={self.config!r},\n"
            f"    epsilon={self.epsilon!r},\n"
            f"    strategy={self.strategy!r},\n"
            f"    label={self.label!r},\n"
            ")\n"
        )
