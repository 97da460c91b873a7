"""What to synthesize from a table, the rows it is synthesized from, and the checks that
refuse a configuration before any noise is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from dpcore.analyses.synth.encoding import (
    METHODS,
    allocate_rows,
)
from dpcore.analyses.synth.mbi_models import (
    MAX_MBI_CATEGORIES,
    MAX_MBI_CELLS,
    MBI_METHODS,
    MBI_NEEDS_ROWS,
    mbi_cells,
)
from dpcore.analyses.synth.synthesizers import (
    MAX_HISTOGRAM_CELLS,
    MAX_MWEM_CELLS,
    Method,
    Progress,
    SyntheticData,
    synthesize,
)
from dpcore.foundations.choices import Choices
from dpcore.foundations.grouping import (
    DROPPED_CODE,
    HOLDOUT_CODE,
    MISSING_LABEL,
    OTHER_LABEL,
    Grouping,
    GroupingSpec,
    bucket_labels,
    is_numeric_group_dtype,
)
from dpcore.foundations.mechanisms import NoiseKind, NoiseSource
from dpcore.foundations.shares import PublicShares
from dpcore.foundations.validation import instance_of, positive_int

__all__ = [
    "ALL_ROWS",
    "MAX_ROWS",
    "METHOD_NAMES",
    "MIN_MODEL_COLUMNS",
    "MIN_MBI_GROUP_ROWS",
    "MIN_ROWS",
    "STRATEGIES",
    "PreparedRows",
    "SynthConfig",
    "check_config",
    "domain_sizes",
    "prepare_rows",
    "run_synthesis",
]


Strategy = Literal["stratified", "vanilla"]


STRATEGIES = Choices(
    Strategy,
    {
        "stratified": "Stratified: one model per group, rows drawn in proportion to public shares",
        "vanilla": "Vanilla: one model for all rows, the strata columns modelled like the others",
    },
)


METHOD_NAMES = Choices(
    Method,
    {
        "independent": "independent marginals",
        "mwem": "MWEM",
        "histogram": "full histogram",
        "mst": "MST",
        "aim": "AIM",
    },
)


MIN_MODEL_COLUMNS = 3
"""Fewest synthesized columns besides the strata columns: the workload error uses 3-way marginals."""


MIN_ROWS = 10


MIN_MBI_GROUP_ROWS = 50
"""Fewest real rows of a group that gets its own MST or AIM model when the group sizes are public
(shares from the data's counts): below it, every 2-way table is mostly noise."""


MAX_ROWS = 100_000
"""Most synthetic rows per release: every row is stored in the ledger and the downloads."""


ALL_ROWS = "All"
"""Group label of the error on all rows in :func:`sweep_errors`."""


@dataclass(frozen=True)
class SynthConfig:
    """What to synthesize; plain values only, so it keys caches and prints into scripts.

    Attributes
    ----------
    columns
        Columns to synthesize besides the strata columns (which are always added).
    method
        ``"independent"``, ``"mwem"`` or ``"histogram"`` (see :func:`dpcore.analyses.synth.synthesize`).
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
        METHODS.check("method", self.method)
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


def model_columns(config: SynthConfig, strata: Sequence[str]) -> tuple[str, ...]:
    return tuple(c for c in config.columns if c not in strata)


def output_columns(config: SynthConfig, strata: Sequence[str]) -> tuple[str, ...]:
    return model_columns(config, strata) + tuple(strata)


def all_edges(config: SynthConfig, spec: GroupingSpec) -> dict[str, tuple[float, ...]]:
    """Bucket edges of every output column: the Strata page's for strata columns."""
    return {**dict(config.edges), **{c: e for c, e in spec.edges if c in spec.by}}


@dataclass(frozen=True, eq=False)
class PreparedRows:
    """The confidential rows a synthesis models, and what was left out on the way.

    ``rows`` holds the output columns of ``config`` only (numeric columns chosen as categories as
    text), in the groups of ``grouping`` (whose public shares a stratified synthesis draws rows
    by).
    ``n_holdout`` rows form the public holdout of the Strata page and ``n_dropped`` rows belong to
    groups dropped there as too small; neither is modelled.

    From an engine (:func:`~dpcore.analyses.synth.aggregate.aggregate_synth`) ``rows`` holds each combination
    of values once, as text labels (a bucketed column's bucket labels: ``bucketed``), and
    ``weights`` the number of rows of each: the marginal counts every synthesizer but MST and
    AIM is fitted on. ``engine`` names the engine that counted them and ``recipe`` is the
    Python that runs that pass again, for a release's script.
    """

    rows: pd.DataFrame
    grouping: Grouping
    config: SynthConfig
    n_input: int
    n_holdout: int = 0
    n_dropped: int = 0
    weights: np.ndarray | None = None
    bucketed: bool = False
    engine: str = ""
    recipe: str = ""
    _categories: dict[str, tuple[str, ...]] = field(default_factory=dict, init=False, repr=False)

    def categories(self, column: str) -> tuple[str, ...]:
        """The distinct values of ``column`` as text, sorted: the categories a synthesizer reads
        off the data for a column without edges or a declared list. Read once per column and
        kept: the rows never change, and they are kept with the rows when these are pickled
        (e.g. cached)."""
        if column not in self._categories:
            values = pd.unique(self.rows[column].astype(str))
            self._categories[column] = tuple(sorted(values))
        return self._categories[column]

    @property
    def n_rows(self) -> int:
        """The confidential rows modelled (each cell's rows, from an engine)."""
        return len(self.rows) if self.weights is None else int(self.weights.sum())

    def encoding(
        self, config: SynthConfig, spec: GroupingSpec
    ) -> tuple[dict[str, tuple[float, ...]], dict[str, tuple[str, ...]]]:
        """The public bucket edges a synthesis applies to :attr:`rows`, and the categories of
        columns bucketed already (their bucket labels, from an engine's pass): either way each
        bucketed column is coded by its bucket, in the edges' order."""
        edges = all_edges(config, spec)
        if not self.bucketed:
            return edges, {}
        return {}, {column: tuple(bucket_labels(e)) for column, e in edges.items()}

    def n_distinct(self, column: str) -> int:
        """Distinct values of ``column`` (as text)."""
        return len(self.categories(column))

    def domain_sizes(self, config: SynthConfig, spec: GroupingSpec) -> dict[str, int]:
        """:func:`domain_sizes` of :attr:`rows`, with the distinct counts of :meth:`n_distinct`."""
        edges = all_edges(config, spec)
        return {
            c: len(edges[c]) + 1 if c in edges else self.n_distinct(c)
            for c in output_columns(config, spec.by)
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
    frame: pd.DataFrame, spec: GroupingSpec, grouping: Grouping, config: SynthConfig
) -> PreparedRows:
    """The rows to synthesize: the Strata page's private rows in its groups, output columns only.

    ``grouping`` is ``spec.build(frame)``. The public holdout (if the shares come from one) is
    not synthesized, nor are rows of groups dropped as too small, as for the mean. A group merged
    into ``"Other (merged)"`` is refused: synthetic rows keep the strata columns, so every group
    must be one combination of their values.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}")
    check_groups_kept(grouping, spec)
    output = output_columns(config, spec.by)
    unknown = [c for c in (*output, *config.categorical) if c not in frame.columns]
    if unknown:
        raise ValueError(
            f"The data has no column(s) {unknown}; available columns: "
            + ", ".join(str(c) for c in frame.columns)
        )
    codes = grouping.codes_for(frame)
    keep = codes >= 0
    rows = frame.loc[keep, list(output)].reset_index(drop=True)
    edges = dict(spec.edges)
    # Grouping columns of category codes (0/1) are grouped without edges: model them as text.
    codes_as_text = [c for c in spec.by if c not in edges and is_numeric_group_dtype(rows[c])]
    bucketed = all_edges(config, spec)
    as_categories = {*config.categorical, *codes_as_text} & set(rows.columns)
    text_columns = {c for c in output if c not in bucketed and not is_numeric_group_dtype(rows[c])}
    for column in as_categories | text_columns:
        # A blank is a category of its own, as for the Strata page's groups and the private
        # sample: it is modelled and synthesized like any other value.
        values = rows[column]
        rows[column] = values.astype(str).where(values.notna(), MISSING_LABEL)
    return PreparedRows(
        rows=rows,
        grouping=grouping,
        config=config,
        n_input=len(frame),
        n_holdout=int(np.count_nonzero(codes == HOLDOUT_CODE)),
        n_dropped=int(np.count_nonzero(codes == DROPPED_CODE)),
    )


def check_groups_kept(grouping: Grouping, spec: GroupingSpec) -> None:
    """Refuse a grouping not built by ``spec``, or one that merged groups: synthetic rows keep
    the strata columns, so every group must be one combination of their values."""
    instance_of("grouping", grouping, Grouping)
    if tuple(grouping.by) != tuple(spec.by):
        raise ValueError(f"`grouping` groups by {grouping.by}, but `spec` by {spec.by}")
    if OTHER_LABEL in grouping.labels:
        merged = grouping.report.merged_groups
        raise ValueError(
            f"Synthetic rows keep {' and '.join(spec.by)} as columns, so every group must be one "
            f"combination of their values, but the Strata page merged {len(merged)} small groups "
            f"into “{OTHER_LABEL}” ({', '.join(merged[:5])}{' …' if len(merged) > 5 else ''}). "
            "On the Strata page, drop small groups instead of merging them, or lower the minimum "
            "group size."
        )


def domain_sizes(rows: pd.DataFrame, config: SynthConfig, spec: GroupingSpec) -> dict[str, int]:
    """Categories per output column: buckets for columns with edges, else distinct values."""
    edges = all_edges(config, spec)
    return {
        c: len(edges[c]) + 1 if c in edges else int(rows[c].astype(str).nunique())
        for c in output_columns(config, spec.by)
    }


def _cells_text(sizes: Mapping[str, int]) -> str:
    return " × ".join(f"{c} ({k})" for c, k in sizes.items())


def numeric_needs_edges(column: str) -> str:
    """Why the numeric column ``column`` cannot be synthesized as it is, and the two fixes."""
    return (
        f"Column `{column}` is numeric: type public bucket edges for it (e.g. “25, 45, 65”; on "
        f"the command line --synth-edges {column}=25;45;65), or treat its values as "
        "categories. Strata Lab never derives edges from the data."
    )


def check_columns_chosen(config: SynthConfig, spec: GroupingSpec) -> None:
    """Refuse columns that cannot be synthesized, whatever the rows: strata columns given their
    own edges or categories, too few columns besides the strata (:data:`MIN_MODEL_COLUMNS`),
    edges for a column not synthesized."""
    clash = sorted(({c for c, _ in config.edges} | set(config.categorical)) & set(spec.by))
    if clash:
        raise ValueError(
            f"{clash} group the rows on the Strata page, which sets their buckets; remove them "
            "from the synthesizer's bucket edges and categorical columns."
        )
    model = model_columns(config, spec.by)
    if len(model) < MIN_MODEL_COLUMNS:
        raise ValueError(
            f"Choose at least {MIN_MODEL_COLUMNS} columns to synthesize besides the strata "
            f"columns ({', '.join(spec.by)}): the error charts compare 3-way marginals. Got "
            f"{len(model)}: {', '.join(model) or 'none'}."
        )
    unused = [c for c in all_edges(config, spec) if c not in output_columns(config, spec.by)]
    if unused:
        raise ValueError(f"Bucket edges were given for {unused}, which are not synthesized.")


def check_config(
    prepared: PreparedRows,
    config: SynthConfig,
    spec: GroupingSpec,
    shares: PublicShares,
    strategies: Sequence[Strategy] = ("stratified",),
) -> dict[str, int]:
    """Refuse a configuration that cannot run, with a message saying what to change.

    Checks, in order: the columns chosen (:func:`check_columns_chosen`); every numeric column
    has public edges or is chosen as categories; the joint domain of each
    strategy's model fits the synthesizer (:data:`~dpcore.analyses.synth.MAX_HISTOGRAM_CELLS`,
    :data:`~dpcore.analyses.synth.MAX_MWEM_CELLS`); stratified, every group with a positive share gets at
    least one synthetic row. Returns the domain sizes (:func:`domain_sizes`).
    """
    check_columns_chosen(config, spec)
    model = model_columns(config, spec.by)
    rows = prepared.rows
    edges = all_edges(config, spec)
    for column in model:
        if column not in edges and column not in config.categorical:
            if is_numeric_group_dtype(rows[column]):
                raise ValueError(numeric_needs_edges(column))
    if prepared.n_rows == 0:
        raise ValueError("No rows are left to synthesize after the Strata page's choices.")
    sizes = prepared.domain_sizes(config, spec)
    if config.method in MBI_METHODS and prepared.weights is not None:
        raise ValueError(MBI_NEEDS_ROWS)
    if config.method in MBI_METHODS:
        _check_mbi(prepared, config, spec, shares, strategies, sizes)
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
    if "stratified" in strategies and not shares.drawn_with_release:  # noisy: decided at release
        counts = allocate_rows(config.n_rows, np.asarray(shares.values))
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


def _check_mbi(
    prepared: PreparedRows,
    config: SynthConfig,
    spec: GroupingSpec,
    shares: PublicShares,
    strategies: Sequence[Strategy],
    sizes: Mapping[str, int],
) -> None:
    """MST and AIM: no column above :data:`MAX_MBI_CATEGORIES`, each model's dense domain within
    :data:`MAX_MBI_CELLS`, and (stratified, group sizes public) no group below
    :data:`MIN_MBI_GROUP_ROWS` rows."""
    name = METHOD_NAMES[config.method]
    wide = {c: k for c, k in sizes.items() if k > MAX_MBI_CATEGORIES}
    if wide:
        raise ValueError(
            f"{name} needs every column to have at most {MAX_MBI_CATEGORIES} categories, but "
            f"{_cells_text(wide)} {'has' if len(wide) == 1 else 'have'} more. Coarsen "
            f"{'it' if len(wide) == 1 else 'them'}: type public bucket edges for a numeric "
            "column, merge rare categories into one before uploading, or leave the column out."
        )
    model = {c: sizes[c] for c in model_columns(config, spec.by)}
    for strategy in strategies:
        shown = model if strategy == "stratified" else sizes
        cells = mbi_cells(tuple(shown.values()))
        if cells > MAX_MBI_CELLS:
            largest = sorted(shown, key=shown.get, reverse=True)[:2]
            raise ValueError(
                f"{name}'s {strategy} model spans {cells:,} combinations (each column counts one "
                f"more for OpenDP's “missing” category: {_cells_text(shown)}), above its limit of "
                f"{MAX_MBI_CELLS:,}. Coarsen the columns with the most categories "
                f"({', '.join(largest)}) with fewer bucket edges, or synthesize fewer columns."
            )
    if "stratified" in strategies and shares.source == "data":
        small = _small_groups(prepared, shares)
        if small:
            raise ValueError(
                f"{len(small)} group(s) have fewer than {MIN_MBI_GROUP_ROWS} rows to fit their "
                f"own {name} model ({', '.join(small[:5])}{' …' if len(small) > 5 else ''}): "
                "each of their tables would be mostly noise. Choose the vanilla model (one "
                "model for everyone), or drop small groups on the Strata page."
            )


def _small_groups(prepared: PreparedRows, shares: PublicShares) -> list[str]:
    """Labels of groups whose public size (the data's counts, declared public on the Strata
    page) is below :data:`MIN_MBI_GROUP_ROWS`."""
    sizes = np.rint(np.asarray(shares.values) * prepared.n_rows).astype(int)
    return [label for label, n in zip(shares.labels, sizes, strict=True) if n < MIN_MBI_GROUP_ROWS]


def declared_domain(spec: GroupingSpec) -> dict[str, tuple[str, ...]] | None:
    """The declared categories of the grouping's text columns (a bucketed column's categories
    are its buckets already), so that the synthetic rows' groups are the declared list."""
    edges = dict(spec.edges)
    declared = {column: values for column, values in spec.categories if column not in edges}
    return declared or None


def run_synthesis(
    prepared: PreparedRows,
    config: SynthConfig,
    spec: GroupingSpec,
    shares: PublicShares | Mapping[str, float],
    *,
    epsilon: float,
    strategy: Strategy,
    noise: NoiseKind | NoiseSource = "simulation",
    rng: np.random.Generator | int | None = None,
    progress: Progress | None = None,
) -> SyntheticData:
    r"""One DP synthetic table of :func:`output_columns`, vanilla or stratified.

    Stratified: :func:`~dpcore.analyses.synth.synthesize` with ``strata=spec.by`` and the public
    ``shares`` (AAAI 2024, "Stratified Data Synthesis"), public ones or the release's noisy
    ones by label (:class:`~dpcore.analyses.synth.group_rows.CountSplit`); vanilla: one model of
    every column.
    Both cost ε (pure DP), or ρ = ε²/2 (zCDP) for MST and AIM. ``noise="simulation"`` makes a
    preview that spends nothing and must not be published; ``"secure"`` draws OpenDP noise for a
    release. ``progress(done, total)`` follows the groups' fits.
    """
    STRATEGIES.check("strategy", strategy)
    stratified = strategy == "stratified"
    edges, bucketed = prepared.encoding(config, spec)
    return synthesize(
        prepared.rows,
        list(output_columns(config, spec.by)),
        method=config.method,
        epsilon=epsilon,
        n_rows=config.n_rows,
        strata=list(spec.by) if stratified else None,
        shares=shares if stratified else None,
        rng=rng,
        edges={c: list(e) for c, e in edges.items()} or None,
        domain={**(declared_domain(spec) or {}), **bucketed} or None,
        rounds=config.rounds,
        way=config.way,
        noise=noise,
        progress=progress,
        weights=prepared.weights,
    )
