"""Data in files on the machine that runs the app — a CSV or Parquet file, a folder of Parquet
parts, or a glob — read where it lies by DuckDB (:class:`~dpcore.engines.DuckDBEngine`): only
per-group numbers come into memory, never the rows.

Any path on the machine may be opened unless the environment variable
:data:`DATA_ROOT_ENV` names a folder: then only files under it (an installation that serves the
app to others should set it, so that no one reads the server's other files through the app).

The session keeps the path (:attr:`AppState.data_path <strata_ui.state.AppState>`) and, as the
dataset's cache key, a fingerprint of the files' names, sizes and modification times
(:func:`files_fingerprint`; computed when the path is opened, so a file changed later is
picked up by opening the path again). The engine, the row count and every pass over the rows
are shared resources keyed by that fingerprint: each is computed once per server process, and a
slider moved afterwards reads them as fast as it reads the demo data.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import threading
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

import numpy as np
import streamlit as st
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

from dpcore.analyses.base import Analysis, unit_keyword
from dpcore.engines import AggregatedMean, DuckDBEngine, EngineError, data_files
from dpcore.engines.base import NOT_WHOLE_LABEL
from dpcore.grouping import MAX_CODE_VALUES, Grouping, GroupingSpec, codebook_order
from dpcore.privacy_unit import ROW, PrivacyUnit

__all__ = [
    "DATA_ROOT_ENV",
    "OpenedFiles",
    "aggregated",
    "categories_found",
    "column_rule",
    "data_root",
    "files_fingerprint",
    "grouping",
    "open_files",
    "with_progress",
]

T = TypeVar("T")
ColumnRule = Literal["values", "codes", "edges"]
"""How a grouping column groups: by its values (text, yes/no), as category codes (whole
numbers with few values), or in public buckets (other numbers)."""


DATA_ROOT_ENV = "STRATA_LAB_DATA_ROOT"
"""The folder under which files may be opened; unset: anywhere on the machine."""


def data_root() -> Path | None:
    """The folder files must lie under (:data:`DATA_ROOT_ENV`), or None when any may be opened."""
    root = os.environ.get(DATA_ROOT_ENV, "").strip()
    return Path(root).expanduser().resolve() if root else None


def files_fingerprint(location: str) -> str:
    """A fingerprint of the files at ``location``: their resolved paths, sizes and modification
    times (not their contents, which a large folder would take minutes to read). It stays on the
    server, as every dataset's fingerprint does.

    Raises
    ------
    EngineError
        Nothing at ``location``, files of no known format (:func:`~dpcore.engines.data_files`),
        or a file outside :func:`data_root`.
    """
    root = data_root()
    # The folder a glob starts from is checked before anything is listed: a listing's messages
    # ("… is neither Parquet nor CSV", "no data at …") would name files outside the root.
    if root is not None and not _glob_base(location).is_relative_to(root):
        raise _outside_root(location, root)
    found = [path.resolve() for path in data_files(location)[0]]
    if root is not None and any(not path.is_relative_to(root) for path in found):  # symlinks
        raise _outside_root(location, root)
    listing = [[str(path), path.stat().st_size, path.stat().st_mtime_ns] for path in found]
    return "files:" + hashlib.sha256(json.dumps(listing).encode()).hexdigest()[:16]


def _glob_base(location: str) -> Path:
    """The resolved folder ``location`` starts from: its parts before the first with a glob
    character (``/data/*/x.parquet`` → ``/data``)."""
    parts = Path(location).expanduser().parts
    fixed = itertools.takewhile(lambda part: not any(c in part for c in "*?["), parts)
    return Path(*fixed).resolve() if parts else Path.cwd()


def _outside_root(location: str, root: Path) -> EngineError:
    return EngineError(
        f"{location} is not under {root}, the only folder this installation opens files "
        f"from (set by {DATA_ROOT_ENV} on the machine that runs the app). Give a path "
        f"under {root}, or ask whoever runs the app to place the data there."
    )


@dataclass(frozen=True, eq=False)
class OpenedFiles:
    """The engine over the files, and what the Data page shows of them: each column's kind and
    the row count (a curator's view: exact, shown on screen, never exported)."""

    engine: DuckDBEngine
    kinds: dict[str, str]
    rows: int


@st.cache_resource(max_entries=4, show_spinner="Opening the files and counting their rows…")
def open_files(location: str, fingerprint: str) -> OpenedFiles:
    """The files at ``location`` opened once per server (``fingerprint`` keys the cache: the
    same path with changed files opens again); :class:`~dpcore.engines.EngineError` names an
    unreadable part or one whose columns differ."""
    engine = DuckDBEngine(location)
    return OpenedFiles(engine, engine.column_kinds(), engine.row_count())


@st.cache_data(max_entries=64, show_spinner="Counting the distinct values of a column…")
def column_rule(location: str, fingerprint: str, column: str) -> ColumnRule:
    """How ``column`` groups, by the engines' rule (:func:`dpcore.engines.base.check_codes`):
    numbers are codes when they are whole and hold at most
    :data:`~dpcore.grouping.MAX_CODE_VALUES` distinct values, and need edges otherwise."""
    opened = open_files(location, fingerprint)
    if opened.kinds[column] not in ("whole number", "decimal number"):
        return "values"
    labels = opened.engine.distinct_labels(column, MAX_CODE_VALUES)
    codes = NOT_WHOLE_LABEL not in labels and len(labels) <= MAX_CODE_VALUES
    return "codes" if codes else "edges"


_PASSES = futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="strata-files")
"""Where a pass over the files runs while the page's thread draws its progress. Cached answers
come through it too, so it has room for them beside long passes of other sessions (each engine
runs one pass at a time anyway)."""
FIRST_LOOK_S = 0.05
"""How long a pass may take before a progress bar is drawn: a cached answer comes back first."""


def with_progress(engine: DuckDBEngine, what: str, compute: Callable[[], T]) -> T:
    """``compute()`` — a cached pass of ``engine`` over the files — with a progress bar while
    it runs (DuckDB's share of the pass done); a cached answer comes back at once, with no bar.
    Errors are raised here, in the page's thread."""
    context = get_script_run_ctx()

    def run() -> T:
        add_script_run_ctx(threading.current_thread(), context)  # the caches' session, if any
        return compute()

    future = _PASSES.submit(run)
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
def _grouping(location: str, fingerprint: str, spec: GroupingSpec) -> Grouping:
    cells = open_files(location, fingerprint).engine.cell_counts(spec.by, dict(spec.edges))
    return spec.build(cells[list(spec.by)], weights=cells["rows"].to_numpy(np.int64))


def grouping(location: str, fingerprint: str, spec: GroupingSpec) -> Grouping:
    """The groups of ``spec``, from one pass that counts the rows of each cell (the same groups
    the rows would make in memory, :meth:`~dpcore.grouping.GroupingSpec.build` with weights),
    computed once and shared."""
    return with_progress(
        open_files(location, fingerprint).engine, "Counting the rows of each group in the files",
        lambda: _grouping(location, fingerprint, spec),
    )  # fmt: skip


@st.cache_data(max_entries=64, show_spinner=False)
def categories_found(
    location: str, fingerprint: str, column: str, edges: tuple[float, ...] | None
) -> list[str]:
    """The categories of ``column`` in the files (its buckets' labels with ``edges``), in a
    codebook's order: a curator's view, offered to prefill a declaration."""
    engine = open_files(location, fingerprint).engine
    cells = engine.cell_counts((column,), {column: edges} if edges else {})
    return sorted(cells[column].unique(), key=codebook_order)


@st.cache_resource(max_entries=16, show_spinner=False)
def _aggregated(
    name: str, location: str, fingerprint: str, spec: GroupingSpec, key: object,
    unit: PrivacyUnit, _analysis, _settings,
):  # fmt: skip
    """One analysis' statistics per (files, groups, the settings they depend on, privacy
    unit): ``key`` stands for ``_settings`` and ``name`` for ``_analysis``."""
    engine = open_files(location, fingerprint).engine
    return _analysis.engine_statistics(engine, spec, _settings, **unit_keyword(_analysis, unit))


def aggregated(
    analysis: Analysis, location: str, fingerprint: str, spec: GroupingSpec, settings: object,
    unit: PrivacyUnit = ROW,
) -> AggregatedMean:  # fmt: skip
    """``analysis``' statistics of the files in the groups of ``spec``, each person's rows
    bounded as ``unit`` says, with the data reference a release records
    (:meth:`~dpcore.analyses.base.Analysis.engine_statistics`), computed once and shared;
    :class:`~dpcore.analyses.base.NeedsRowsInMemory` for an analysis that needs the rows."""
    key = analysis.engine_statistics_key(settings)
    return with_progress(
        open_files(location, fingerprint).engine,
        "Reading every row of the files: each group's count and sums",
        lambda: _aggregated(
            analysis.name, location, fingerprint, spec, key, unit, analysis, settings
        ),
    )  # fmt: skip
