"""From the session's choices to dpcore objects, cached so a rerun never redoes a pass over rows.

Shared by every analysis: the groups of the Strata page, the budget of the Budget page, the
header of a release, and each analysis' sufficient statistics. Pages show any
``ValueError``/``TypeError`` with ``st.error``: every message is written for the user. Caches are
keyed on primitives (dataset fingerprint, frozen settings and specs); a large frame is passed
under an ``_``-prefixed argument, which the cache does not hash.

The groups, and the statistics of an analysis that keeps them read-only, are shared resources
(``st.cache_resource``): every rerun and session reads the one object. ``st.cache_data`` would
unpickle a fresh copy on each of a page's calls — at 10 million rows, 18 copies of the grouped
data per move of the Compare page's slider, 3.5 s of it.

Data read where it lies (:attr:`AppState.source`: files on this machine, a table in Spark) never
comes into memory: its groups, categories and statistics come from an engine's passes
(:mod:`strata_ui.engine_sources`), through the same functions, so that pages need not know
where the rows are.
"""

from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

from dpcore import column_kind
from dpcore.analyses import get
from dpcore.analyses.base import Analysis, PersonColumnUnsupported, unit_keyword
from dpcore.engines import EngineError
from dpcore.engines.base import NUMBER_KINDS
from dpcore.foundations import theory
from dpcore.foundations.accounting import ZCDP, Budget, PureDP
from dpcore.foundations.datasets import demo_identity
from dpcore.foundations.errors import NotChosenYet
from dpcore.foundations.grouping import (
    MISSING_LABEL,
    Grouping,
    GroupingSpec,
    bucket_labels,
    cell_labels,
    codebook_order,
    is_category_codes,
    needs_edges,
)
from dpcore.foundations.ledger import LedgerDataset
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from dpcore.foundations.validation import is_row_numbers
from dpcore.release import DatasetRef, PlanHeader
from strata_ui import engine_sources
from strata_ui.state import AppState, get_dataset, get_settings, get_state
from strata_ui.widgets import show_error

SHARE_SOURCE_LABELS = {
    "noisy_counts": "The release's own noisy group counts (private, paid with the release)",
    "table": "A table of public shares (e.g. census figures)",
    "holdout": "A public holdout split of the data",
    "data": "The data's own group counts, declared public (publishes every group's exact size)",
}
"""Where the groups' shares come from, in the order offered: the private default first."""


def grouping_spec(state: AppState) -> GroupingSpec:
    """The session's grouping choices as a :class:`~dpcore.foundations.grouping.GroupingSpec`,
    grouping the rows the session's analysis uses (:meth:`~dpcore.analyses.base.Analysis.value_columns`)."""
    if not state.strata_columns:
        raise NotChosenYet("Choose at least one column to group by on the Strata page.")
    analysis = get(state.analysis)
    return analysis.grouping_for(_chosen_spec(state), get_settings(analysis.settings_type))


def _chosen_spec(state: AppState) -> GroupingSpec:
    return GroupingSpec(
        by=tuple(state.strata_columns),
        edges=tuple(
            (column, tuple(state.bucket_edges[column]))
            for column in state.strata_columns
            if column in state.bucket_edges
        ),
        min_group_size=state.min_group_size,
        small_groups=state.small_groups,
        share_source=state.share_source,
        share_table=tuple(state.share_table.items()) if state.share_source == "table" else (),
        holdout_fraction=state.holdout_fraction if state.share_source == "holdout" else None,
        categories=tuple(
            (column, tuple(declared_categories(state, column))) for column in state.strata_columns
        )
        if state.group_list == "declared"
        else (),
        categories_source=(
            "declared" if set(state.strata_columns) <= set(state.codebook_columns) else "data"
        ),
    )


_PRIVATE_SIZES_NEEDS = {
    "shares": "take the shares from a public table, a holdout split or the release's own noisy "
    "group counts",
    "list": "declare the list of categories of each grouping column",
    "keep": "keep every group whatever its size, or take the shares from the release's own "
    "noisy group counts, which then decide which groups are small",
}


def private_sizes_needs(state: AppState) -> list[str]:
    """What the Strata page must still declare before a release may keep group sizes private
    (:meth:`dpcore.foundations.grouping.GroupingSpec.private_sizes_gaps`, which the mean's plan enforces);
    empty when nothing is missing or no grouping column is chosen yet."""
    if not state.strata_columns:
        return []
    return [_PRIVATE_SIZES_NEEDS[gap] for gap in grouping_spec(state).private_sizes_gaps()]


# ---- the data in use: a frame in memory, or data read where it lies --------------------------


def _opened(state: AppState) -> engine_sources.OpenedData:
    return engine_sources.opened(state.source, state.dataset_fingerprint)


def column_kinds(state: AppState) -> dict[str, str]:
    """Every column of the data in use and its kind in plain words ("whole number", "text"…)."""
    if state.source is not None:
        return _opened(state).kinds
    frame = get_dataset()
    return {str(column): column_kind(frame[column]) for column in frame.columns}


def value_columns(state: AppState) -> list[str]:
    """The columns an analysis may offer as a value (to average, sum, model or synthesize):
    the numeric columns, but not one that only numbers the rows
    (:func:`~dpcore.foundations.validation.is_row_numbers`)."""
    numbers = row_number_columns(state)
    return [
        column for column, kind in column_kinds(state).items()
        if kind in NUMBER_KINDS and column not in numbers
    ]  # fmt: skip


def row_number_columns(state: AppState) -> tuple[str, ...]:
    """The columns of the data in use that only number its rows: by their header for data
    read where it lies, by their header or their values for rows in memory."""
    if state.source is not None:
        return tuple(column for column in column_kinds(state) if is_row_numbers(column))
    return _row_number_columns(get_dataset(), state.dataset_fingerprint)


@st.cache_data(max_entries=16, show_spinner=False)
def _row_number_columns(_frame: pd.DataFrame, fingerprint: str) -> tuple[str, ...]:
    return tuple(str(c) for c in _frame.columns if is_row_numbers(c, _frame[c]))


def row_count(state: AppState) -> int:
    """The rows of the data in use (exact: a curator's view, on screen only)."""
    return _opened(state).rows if state.source is not None else len(get_dataset())


def column_rule(state: AppState, column: str) -> engine_sources.ColumnRule:
    """How a grouping column groups: by its ``"values"``, as category ``"codes"``, or in public
    buckets (``"edges"``)."""
    if state.source is not None:
        return engine_sources.column_rule(state.source, state.dataset_fingerprint, column)
    series = get_dataset()[column]
    return "codes" if is_category_codes(series) else "edges" if needs_edges(series) else "values"


def declared_categories(state: AppState, column: str) -> list[str]:
    """The categories declared for ``column``: the list the Strata page holds, or until one is
    edited, the list it prefills (:func:`prefilled_categories`)."""
    declared = state.declared_categories.get(column)
    return list(declared) if declared is not None else prefilled_categories(state, column)


def prefilled_categories(state: AppState, column: str) -> list[str]:
    """What a declared list of ``column`` starts from: its buckets (public, from the typed
    edges) or the categories found in the data, the missing-value label only when the data has
    it. The Strata page labels such a list as treated as public."""
    edges = state.bucket_edges.get(column)
    found = categories_found(state, column, tuple(edges) if edges else None)
    offered = [*bucket_labels(tuple(edges)), MISSING_LABEL] if edges else found
    return [label for label in offered if label != MISSING_LABEL or label in found]


def categories_found(state: AppState, column: str, edges: tuple[float, ...] | None) -> list[str]:
    """The categories of ``column`` found in the data (its buckets' labels with ``edges``), in
    the order a codebook would list them: a curator's view, offered to prefill a declaration."""
    if state.source is not None:
        fingerprint = state.dataset_fingerprint
        return engine_sources.categories_found(state.source, fingerprint, column, edges)
    return _data_categories(get_dataset(), state.dataset_fingerprint, column, edges)


@st.cache_data(max_entries=64, show_spinner=False)
def _data_categories(
    _frame: pd.DataFrame, fingerprint: str, column: str, edges: tuple[float, ...] | None
) -> list[str]:
    labels = cell_labels(_frame[[column]], column, {column: edges} if edges else None)[column]
    return sorted(labels.unique(), key=codebook_order)


@st.cache_resource(max_entries=16, show_spinner="Grouping rows…")
def _build_grouping(_frame: pd.DataFrame, fingerprint: str, spec: GroupingSpec) -> Grouping:
    """One pass over the grouping columns per distinct spec (``fingerprint`` stands for
    ``_frame``), shared: a :class:`Grouping` is frozen with read-only arrays."""
    return spec.build(_frame)


def current_grouping(state: AppState) -> Grouping:
    """The session's groups and recombination shares; ``ValueError`` explains what to fix."""
    spec = grouping_spec(state)
    if state.source is not None:
        return engine_sources.grouping(state.source, state.dataset_fingerprint, spec)
    return _build_grouping(get_dataset(), state.dataset_fingerprint, spec)


def current_grouping_or_error(state: AppState) -> Grouping | None:
    """:func:`current_grouping`, or None once what to fix is shown on the page (the caller
    then skips what needs the groups)."""
    try:
        return current_grouping(state)
    except (ValueError, TypeError) as exc:
        show_error(exc)
        return None


def grouping_key(state: AppState) -> tuple:
    """Everything that determines the groups and the rows in them (who is one person), as a
    hashable cache key."""
    return (state.dataset_fingerprint, grouping_spec(state), privacy_unit(state))


PERSON_BOUND_LABELS = {
    "max_rows_per_person": "At most M rows per person in a group",
    "max_groups_per_person": "A person's rows in at most G groups",
}
"""The Data page's labels of the contribution bounds, by :class:`AppState` field."""


def privacy_unit(state: AppState) -> PrivacyUnit:
    """Who is one person, as the Data page says: :data:`~dpcore.foundations.privacy_unit.ROW`, or a person
    column with its bounds. ``ValueError`` names a bound below 1, a column not in the data, or
    one that also groups the rows, and how to fix it."""
    column = state.person_column
    if column is None:
        return ROW
    for name, label in PERSON_BOUND_LABELS.items():
        bound = getattr(state, name)
        if isinstance(bound, bool) or not isinstance(bound, int) or bound < 1:
            raise ValueError(
                f"“{label}” must be a whole number of 1 or more, got {bound}. Type 1 or more "
                "under “Who is one person?” on the Data page."
            )
    if column not in column_kinds(state):
        raise ValueError(
            f"The person column `{column}` is not in the data in use. Choose another column "
            "under “Who is one person?” on the Data page, or “Each row is one person”."
        )
    if column in state.strata_columns:
        raise ValueError(
            f"The person column `{column}` is also a grouping column. It names who owns each "
            "row, so it cannot split them into groups too: remove it from the grouping columns "
            "on the Strata page, or choose another person column on the Data page."
        )
    return PrivacyUnit(
        column, max_groups=state.max_groups_per_person, max_rows=state.max_rows_per_person
    )


def checked_unit(analysis: Analysis, state: AppState) -> PrivacyUnit:
    """:func:`privacy_unit`, refused with :class:`PersonColumnUnsupported` (the analysis' own
    words) when ``analysis`` counts each row as a person: its release would protect one row."""
    unit = privacy_unit(state)
    if unit != ROW and not analysis.honours_person_column:
        raise PersonColumnUnsupported(analysis.needs_row_unit())
    return unit


def _compute_statistics(
    name: str, _frame: pd.DataFrame, _grouping: Grouping, grouping_key: tuple, statistics_key,
    _settings, unit: PrivacyUnit,
):  # fmt: skip
    """An analysis' statistics per grouping, the settings they depend on and the privacy unit
    (the keys stand for the frame, the grouping and the settings)."""
    analysis = get(name)
    return analysis.statistics(_frame, _grouping, _settings, **unit_keyword(analysis, unit))


_STATISTICS_SPINNER = "Computing each group's statistics…"
_shared_statistics = st.cache_resource(max_entries=16, show_spinner=_STATISTICS_SPINNER)(
    _compute_statistics
)
_copied_statistics = st.cache_data(max_entries=16, show_spinner=_STATISTICS_SPINNER)(
    _compute_statistics
)


def current_statistics(analysis: Analysis, settings: object):
    """``analysis``' sufficient statistics of the session's data and groups, cached on
    :meth:`~dpcore.analyses.base.Analysis.statistics_key`: settings that do not change them
    reuse them. Read-only statistics are one shared object; others are copied for each
    caller, who may then change them."""
    return statistics_for(analysis, settings, grouping_spec(get_state()))


def statistics_for(analysis: Analysis, settings: object, spec: GroupingSpec):
    """As :func:`current_statistics`, in the groups of ``spec`` (e.g. a planned release's,
    which may differ from the Strata page's now). On data read where it lies, the statistics an engine
    computed (:meth:`~dpcore.analyses.base.Analysis.engine_statistics`); an analysis that needs
    the rows raises :class:`~dpcore.analyses.base.NeedsRowsInMemory`."""
    state = get_state()
    unit = checked_unit(analysis, state)
    if state.source is not None:
        return _engine_aggregated(state, analysis, settings, spec, unit).stats
    frame = get_dataset()
    grouping = _build_grouping(frame, state.dataset_fingerprint, spec)
    cached = _shared_statistics if analysis.read_only_statistics else _copied_statistics
    return cached(
        analysis.name, frame, grouping, (state.dataset_fingerprint, spec),
        analysis.statistics_key(settings), settings, unit,
    )  # fmt: skip


def page_budget(state: AppState, value: float | None = None) -> Budget:
    """The Budget page's per-release budget: ε (pure DP) or ρ (zCDP); ``value`` overrides the
    slider's (for sweeps)."""
    if state.budget_kind == "pure":
        return PureDP(state.epsilon if value is None else value)
    return ZCDP(state.rho if value is None else value)


def release_budget(state: AppState, budget: Budget | None) -> Budget:
    """The budget a release runs at: ``budget`` when given (a planned release's), else the
    Budget page's."""
    return page_budget(state) if budget is None else budget


@st.cache_data(max_entries=4, show_spinner="Identifying the dataset…")
def _dataset_ref(
    _frame: pd.DataFrame, fingerprint: str, name: str, identity: str | None
) -> DatasetRef:
    """The frame in use named ``name``, identified by ``identity`` (its file's bytes) or, for a
    frame built in memory, by its cells; with the fingerprint an older version gave the same
    frame as an alias (``fingerprint`` stands for ``_frame``)."""
    ref = DatasetRef.of(_frame, name)
    return ref if identity is None else dataclasses.replace(ref, identity=identity)


def _frame_ref(state: AppState) -> DatasetRef:
    """The reference of the frame in use: an upload (its bytes), the demo data (its asset's
    bytes) or a preset built in memory (its cells)."""
    identity = state.dataset_identity
    if state.uploaded is None:
        identity = demo_identity()
    return _dataset_ref(get_dataset(), state.dataset_fingerprint, state.dataset_name, identity)


def ledger_dataset(state: AppState) -> LedgerDataset | None:
    """The data in use as the ledger knows it (identity, name, older aliases), without any
    pass over its rows: None when it has no identity yet (a Spark table without a snapshot,
    undeclared) or cannot be opened now. Curator-side."""
    try:
        if state.source is not None:
            identity = _opened(state).identity
            return LedgerDataset(identity, state.dataset_name) if identity else None
        ref = _frame_ref(state)
    except EngineError:
        return None
    return LedgerDataset(ref.identity, ref.name, aliases=ref.aliases)


def _engine_aggregated(
    state: AppState, analysis: Analysis, settings: object, spec: GroupingSpec, unit: PrivacyUnit
):  # fmt: skip
    fingerprint = state.dataset_fingerprint
    return engine_sources.aggregated(analysis, state.source, fingerprint, spec, settings, unit)


def plan_header(state: AppState, budget: Budget) -> PlanHeader:
    """The header of the release the session would commit at ``budget``: the data in use, the
    groups of the Strata page, and the name and level of the Release page.

    The data is known by its identity (:mod:`dpcore.foundations.dataset`): an upload's bytes,
    the files an engine reads, a Spark table's snapshot or declared identity. The command line
    and the release's script compute the same one, so that the same plan on the same data is
    one release whichever way it is committed."""
    spec = grouping_spec(state)
    return PlanHeader(
        dataset=dataset_ref(state, spec), spec=spec, budget=budget, label=state.release_label,
        level=state.release_level,
    )  # fmt: skip


def dataset_ref(state: AppState, spec: GroupingSpec) -> DatasetRef:
    """The data in use as a release records it, known by its identity (:func:`plan_header`);
    ``spec`` the groups an engine's pass reads it by. A release of a column's own edges passes
    that column alone: the Strata page's groups may still wait for those edges."""
    if state.source is not None:
        analysis = get(state.analysis)
        settings = get_settings(analysis.settings_type)
        unit = checked_unit(analysis, state)
        return _engine_aggregated(state, analysis, settings, spec, unit).dataset
    return _frame_ref(state)


@st.cache_data(max_entries=64, show_spinner="Fitting a Dirichlet prior to the group shares…")
def fitted_alpha(shares: tuple[float, ...]) -> float:
    """Dirichlet α of the group shares (:func:`dpcore.foundations.theory.dirichlet_alpha`), cached on the
    rounded shares."""
    return theory.dirichlet_alpha(list(shares))
