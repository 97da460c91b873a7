"""Data read where it lies, behind one small idea: an *engine source*.

A source says what to open (:class:`~strata_ui.files.FilesSource`: files on the machine that
runs the app; :class:`~strata_ui.spark.SparkSource`: a table in Spark), its fingerprint, the
engine that reads it (:mod:`dpcore.engines`), and its form in the address bar. Only per-group
numbers come into memory, never the rows.

The session keeps the source (:attr:`AppState.source <strata_ui.state.AppState>`) and, as the
dataset's cache key, its fingerprint (computed when the source is opened, so data changed later
is picked up by opening it again). The engine, the row count and every pass over the rows are
shared resources keyed by source and fingerprint: each is computed once per server process, and
a slider moved afterwards reads them as fast as it reads the demo data.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass
from typing import ClassVar, Literal, TypeVar

import streamlit as st
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

from dpcore.analyses.base import Analysis, EngineStatistics, unit_keyword
from dpcore.analyses.mean.sums import GroupSums
from dpcore.engines import DuckDBEngine, SparkEngine
from dpcore.engines.base import NOT_WHOLE_LABEL, group_cells
from dpcore.foundations.grouping import MAX_CODE_VALUES, Grouping, GroupingSpec, codebook_order
from dpcore.foundations.privacy_unit import ROW, BoundPreview, PrivacyUnit

__all__ = [
    "ColumnRule",
    "EngineSource",
    "OpenedData",
    "aggregated",
    "bound_preview",
    "categories_found",
    "column_rule",
    "grouping",
    "in_background",
    "opened",
    "with_progress",
]

T = TypeVar("T")
ColumnRule = Literal["values", "codes", "edges"]
"""How a grouping column groups: by its values (text, yes/no), as category codes (whole
numbers with few values), or in public buckets (other numbers)."""
ReadingEngine = DuckDBEngine | SparkEngine
"""The engines a source opens: besides the passes of :class:`~dpcore.engines.Engine`, each
counts rows and cells, lists a column's distinct labels and reports a pass' progress."""


class EngineSource(abc.ABC):
    """Where data read by an engine lies, as the user gave it (a frozen dataclass of text, so
    that it keys the shared caches)."""

    kind: ClassVar[str]
    """The address bar's ``data=`` value for this kind of source."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The dataset's name on every page."""

    @property
    @abc.abstractmethod
    def place(self) -> str:
        """Where the rows stay, to follow "the rows stay": "in the files at /data/survey"."""

    @abc.abstractmethod
    def fingerprint(self) -> str:
        """The cache key of the data as it is now (it stays on the server); raises
        :class:`~dpcore.engines.EngineError` with a message for the user when the source cannot
        be opened."""

    @abc.abstractmethod
    def open_engine(self) -> ReadingEngine:
        """A new engine over the source (the callers share one per fingerprint)."""

    @abc.abstractmethod
    def address(self) -> dict[str, str]:
        """The address bar's parameters that open this source again (``data`` among them)."""


@dataclass(frozen=True, eq=False)
class OpenedData:
    """The engine over a source, and what the Data page shows of it: each column's kind and
    the row count (a curator's view: exact, shown on screen, never exported), and the data's
    identity (:meth:`~dpcore.engines.Engine.identity`: curator-side; empty for a Spark table
    without a snapshot or a declared identity)."""

    engine: ReadingEngine
    kinds: dict[str, str]
    rows: int
    identity: str


@st.cache_resource(
    max_entries=4, show_spinner="Opening the data, counting its rows and identifying it…"
)
def opened(source: EngineSource, fingerprint: str) -> OpenedData:
    """``source`` opened once per server (``fingerprint`` keys the cache: the same source with
    changed data opens again); :class:`~dpcore.engines.EngineError` names what cannot be read.
    Its identity costs one read of its files' bytes, here rather than at the first release."""
    engine = source.open_engine()
    return OpenedData(engine, engine.column_kinds(), engine.row_count(), engine.identity())


@st.cache_data(max_entries=64, show_spinner="Counting the distinct values of a column…")
def column_rule(source: EngineSource, fingerprint: str, column: str) -> ColumnRule:
    """How ``column`` groups, by the engines' rule (:func:`dpcore.engines.base.check_codes`):
    numbers are codes when they are whole and hold at most
    :data:`~dpcore.foundations.grouping.MAX_CODE_VALUES` distinct values, and need edges otherwise."""
    data = opened(source, fingerprint)
    if data.kinds[column] not in ("whole number", "decimal number"):
        return "values"
    labels = data.engine.distinct_labels(column, MAX_CODE_VALUES)
    codes = NOT_WHOLE_LABEL not in labels and len(labels) <= MAX_CODE_VALUES
    return "codes" if codes else "edges"


_ASIDE = futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="strata-engines")
"""Where a pass over the data (or Spark's start) runs while the page's thread draws its
progress. Cached answers come through it too, so it has room for them beside long passes of
other sessions."""
FIRST_LOOK_S = 0.05
"""How long a pass may take before a progress bar is drawn: a cached answer comes back first."""


def in_background(compute: Callable[[], T]) -> futures.Future[T]:
    """``compute()`` started in another thread that shares this page's caches."""
    context = get_script_run_ctx()

    def run() -> T:
        add_script_run_ctx(threading.current_thread(), context)  # the caches' session, if any
        return compute()

    return _ASIDE.submit(run)


def with_progress(engine: ReadingEngine, what: str, compute: Callable[[], T]) -> T:
    """``compute()`` — a cached pass of ``engine`` over the data — with a progress bar while
    it runs (the engine's share of the pass done); a cached answer comes back at once, with no
    bar. Errors are raised here, in the page's thread."""
    future = in_background(compute)
    done, _ = futures.wait([future], timeout=FIRST_LOOK_S)
    if not done:
        bar = st.progress(0.0, text=what)
        while not futures.wait([future], timeout=0.1).done:
            share = engine.progress()
            if share is not None:
                bar.progress(share, text=f"{what} ({share:.0%} of this pass)")
        bar.empty()
    return future.result()


@st.cache_resource(max_entries=16, show_spinner=False)
def _grouping(source: EngineSource, fingerprint: str, spec: GroupingSpec) -> Grouping:
    return group_cells(opened(source, fingerprint).engine, spec)


def grouping(source: EngineSource, fingerprint: str, spec: GroupingSpec) -> Grouping:
    """The groups of ``spec``, from one pass that counts the rows of each cell (the same groups
    the rows would make in memory, :meth:`~dpcore.foundations.grouping.GroupingSpec.build` with weights),
    computed once and shared."""
    return with_progress(
        opened(source, fingerprint).engine, "Counting the rows of each group",
        lambda: _grouping(source, fingerprint, spec),
    )  # fmt: skip


@st.cache_data(max_entries=64, show_spinner=False)
def categories_found(
    source: EngineSource, fingerprint: str, column: str, edges: tuple[float, ...] | None
) -> list[str]:
    """The categories of ``column`` in the data (its buckets' labels with ``edges``), in a
    codebook's order: a curator's view, offered to prefill a declaration."""
    engine = opened(source, fingerprint).engine
    cells = engine.cell_counts((column,), {column: edges} if edges else {})
    return sorted(cells[column].unique(), key=codebook_order)


@st.cache_resource(max_entries=16, show_spinner=False)
def _aggregated(
    name: str, source: EngineSource, fingerprint: str, spec: GroupingSpec, key: object,
    unit: PrivacyUnit, _analysis, _settings,
):  # fmt: skip
    """One analysis' statistics per (data, groups, the settings they depend on, privacy unit):
    ``key`` stands for ``_settings`` and ``name`` for ``_analysis``."""
    engine = opened(source, fingerprint).engine
    return _analysis.engine_statistics(engine, spec, _settings, **unit_keyword(_analysis, unit))


def aggregated(
    analysis: Analysis, source: EngineSource, fingerprint: str, spec: GroupingSpec,
    settings: object, unit: PrivacyUnit = ROW,
) -> EngineStatistics[GroupSums]:  # fmt: skip
    """``analysis``' statistics of the data in the groups of ``spec``, each person's rows
    bounded as ``unit`` says, with the data reference a release records
    (:meth:`~dpcore.analyses.base.Analysis.engine_statistics`), computed once and shared;
    :class:`~dpcore.analyses.base.NeedsRowsInMemory` for an analysis that needs the rows."""
    key = analysis.engine_statistics_key(settings)
    return with_progress(
        opened(source, fingerprint).engine,
        "Reading every row: each group's count and sums",
        lambda: _aggregated(
            analysis.name, source, fingerprint, spec, key, unit, analysis, settings
        ),
    )  # fmt: skip


@st.cache_data(max_entries=16, show_spinner=False)
def _bound_preview(
    source: EngineSource, fingerprint: str, by: tuple[str, ...], edges: dict, unit: PrivacyUnit
) -> BoundPreview:
    return opened(source, fingerprint).engine.bound_preview(by, edges, unit)


def bound_preview(
    source: EngineSource, fingerprint: str, by: tuple[str, ...], edges: dict, unit: PrivacyUnit
) -> BoundPreview:
    """What ``unit``'s bound leaves out of the rows in the cells of ``by``, from one pass of
    the engine (:meth:`~dpcore.engines.Engine.bound_preview`; a curator's view), computed once
    per data, cells and bounds."""
    return with_progress(
        opened(source, fingerprint).engine, "Counting the rows the bounds leave out",
        lambda: _bound_preview(source, fingerprint, by, edges, unit),
    )  # fmt: skip
