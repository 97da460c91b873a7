"""Typed access to per-session state, the active dataset and the budget ledger.

Pages never touch ``st.session_state`` keys directly. Choices every page shares (the dataset,
the groups, the budget, the release's name and level) are attributes of the :class:`AppState`
that :func:`get_state` returns. Each analysis keeps its own choices in frozen settings
dataclasses: :func:`get_settings` returns the session's instance, :func:`set_settings` replaces
it, :func:`reset_settings` changes it from code (forgetting what the widgets hold), and
:func:`widget_key` derives a stable widget key from a settings field (see
:mod:`strata_ui.widgets`).
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field, fields
from typing import Literal, TypeVar

import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitAPIException

from dpcore.analyses.base import NeedsRowsInMemory
from dpcore.foundations.datasets import DEMO_DATASET_NAME
from dpcore.foundations.ledger import (
    LEDGER_PATH_ENV,
    Ledger,
    LedgerUnavailableError,
    default_ledger_path,
    list_ledgers,
)
from strata_ui import constants
from strata_ui.data import load_demo
from strata_ui.engine_sources import EngineSource
from strata_ui.page_end import stop_page

SettingsT = TypeVar("SettingsT")


GROUPING_FIELDS = (
    "strata_columns", "bucket_edges", "group_list", "declared_categories", "codebook_columns",
    "min_group_size", "small_groups", "share_source", "share_table", "holdout_fraction",
)  # fmt: skip
"""The :class:`AppState` fields the Strata page sets: the groups and their shares."""


@dataclass
class AppState:
    """Choices a user has made in this browser session that every page shares.

    Defaults give sensible results on the demo data: groups by race × sex at ε = 1 (each
    analysis' own defaults are in its settings dataclass), and nothing about the groups'
    sizes published without noise: the groups are a declared list, and their shares the
    release's own noisy counts.
    """

    # What to estimate: the name of an analysis in dpcore.analyses.REGISTRY
    analysis: str = "mean"
    # Data
    dataset_name: str = DEMO_DATASET_NAME
    uploaded: pd.DataFrame | None = None  # a validated upload replaces the demo data
    source: EngineSource | None = None  # data read where it lies (strata_ui.engine_sources)
    dataset_fingerprint: str = "demo"  # cache key of the dataset in use
    # The upload's identity (its bytes, dpcore.foundations.dataset): curator-side, never shown
    # whole nor exported; None for data identified otherwise (demo, preset, read where it lies).
    dataset_identity: str | None = None
    upload_notes: tuple[str, ...] = ()  # what reading the upload changed or could not read
    decimal_comma: bool = False  # the upload's numbers use decimal commas (3,25), as chosen
    upload_generation: int = 0  # bumped to empty the file uploader (back to the demo data)
    # Who is one person (Data page): a person column and its contribution bounds, if any
    person_column: str | None = None
    max_rows_per_person: int = 1  # M: rows of one person kept in each group
    max_groups_per_person: int = 1  # G: groups one person's rows are kept in
    # Strata
    strata_columns: list[str] = field(default_factory=lambda: ["race", "sex"])
    bucket_edges: dict[str, list[float]] = field(default_factory=dict)
    # Where the list of groups comes from: declared (prefilled from the data, said to be treated
    # as public) by default, so that a release that keeps sizes private has a fixed list.
    group_list: Literal["data", "declared"] = "declared"
    declared_categories: dict[str, list[str]] = field(default_factory=dict)  # per column
    codebook_columns: list[str] = field(default_factory=list)  # lists loaded from a codebook
    min_group_size: int = 2
    small_groups: Literal["merge", "drop", "keep"] = "merge"
    # Private by default: the release's own noisy counts (paid with it, DP); the data's exact
    # counts are published only when the Strata page declares them public.
    share_source: Literal["data", "table", "holdout", "noisy_counts"] = "noisy_counts"
    share_table: dict[str, float] = field(default_factory=dict)
    holdout_fraction: float = 0.1
    # Budget
    budget_kind: Literal["pure", "zcdp"] = "pure"
    epsilon: float = constants.EPSILON_DEFAULT
    rho: float = 0.5
    # Compare (simulation only; never spends budget): its own ε and ρ once moved there (None:
    # the Budget page's), carried over to the Budget page only when the user asks
    compare_epsilon: float | None = None
    compare_rho: float | None = None
    replicates: int = constants.MC_REPLICATES_DEFAULT
    seed: int = 0
    # Release
    ledger_name: str = constants.DEFAULT_LEDGER_NAME
    release_level: float = 0.95
    release_label: str = ""  # empty: a label is made from the value and grouping columns
    release_flash: str | None = None  # shown once after the rerun that follows a commit
    ledger_flash: str | None = None  # shown once after a ledger is started or raised
    # Workshop mode (sidebar switch): demo data only, no Release page, projector-sized charts
    workshop_mode: bool = False

    def forget_person_column(self) -> None:
        """Back to one row per person: another dataset's person column names none of its rows."""
        self.person_column = None
        self.max_rows_per_person = self.max_groups_per_person = 1


PERSON_FIELDS = ("person_column", "max_rows_per_person", "max_groups_per_person")
"""The :class:`AppState` fields the Data page's "Who is one person?" sets."""


def settings_key(cls: type) -> str:
    """The ``st.session_state`` key under which :func:`get_settings` keeps ``cls``'s instance."""
    return f"_strata_lab_settings.{cls.__module__}.{cls.__qualname__}"


def get_settings(cls: type[SettingsT]) -> SettingsT:
    """This session's instance of the settings dataclass ``cls``, created with defaults.

    Each analysis keeps its choices in its own dataclass (in dpcore, and its view options next
    to its widgets), so adding one never touches :class:`AppState`.
    """
    key = settings_key(cls)
    settings = st.session_state.get(key)
    if not isinstance(settings, cls):
        # Also reached when Streamlit reloads a module after an edit: the stored object is an
        # instance of the old class, so carry its values over and let new fields take defaults.
        carried = {
            f.name: getattr(settings, f.name) for f in fields(cls) if hasattr(settings, f.name)
        }
        settings = cls(**carried)
        st.session_state[key] = settings
    return settings


def set_settings(settings: object) -> None:
    """Store ``settings`` (a frozen dataclass) as this session's instance of its class."""
    st.session_state[settings_key(type(settings))] = settings


def update_settings(cls: type[SettingsT], **changes: object) -> SettingsT:
    """Replace fields of this session's frozen ``cls`` settings; return the new instance."""
    settings = dataclasses.replace(get_settings(cls), **changes)
    set_settings(settings)
    return settings


def reset_settings(cls: type[SettingsT], **changes: object) -> SettingsT:
    """Change fields of the session's ``cls`` settings from code (a new dataset, a preset, a
    choice that no longer exists) and forget what their widgets hold.

    A keyed widget keeps its own value across reruns and ignores a new default, so without this
    it would write its old value back on the next run and undo the change. The browser keeps the
    value it shows too: a widget's own key is therefore set to the new value, which Streamlit
    sends to the browser (forgetting the key left a select box showing a column of the previous
    dataset). Keys of a widget's variants, and a widget already drawn in this run (whose key
    cannot be set any more), are forgotten instead.
    """
    settings = update_settings(cls, **changes)
    for name in changes:
        prefix = widget_key(cls, name)
        for key in [k for k in st.session_state if k == prefix or str(k).startswith(prefix + ".")]:
            if key != prefix or not _show_in_widget(key, getattr(settings, name)):
                del st.session_state[key]
    return settings


def _show_in_widget(key: str, value: object) -> bool:
    """Give the widget keyed ``key`` a new value, in the browser too; False when the widget is
    already drawn in this run (Streamlit then refuses the change)."""
    try:
        st.session_state[key] = value
    except StreamlitAPIException:
        return False
    return True


def widget_key(cls: type, field_name: str, *parts: object) -> str:
    """The stable key of the widget that edits ``field_name`` of the settings ``cls``.

    ``"<owner>.<field>"`` (``MeanSettings.clip_low`` → ``"mean.clip_low"``, ``MeanView.seed`` →
    ``"mean_view.seed"``), plus ``parts`` for a widget drawn in several variants (e.g. one per
    budget kind). A stable key keeps a widget's value across reruns whatever its default is.
    """
    if field_name not in {f.name for f in fields(cls)}:
        raise ValueError(f"{cls.__name__} has no field {field_name!r}")
    owner = re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower().removesuffix("_settings")
    return ".".join([owner, field_name, *map(str, parts)])


def get_state() -> AppState:
    """This session's :class:`AppState`, created with defaults on first use."""
    return get_settings(AppState)


def get_dataset() -> pd.DataFrame:
    """The dataset in use: the user's validated upload if any, else the demo data.

    Raises :class:`~dpcore.analyses.base.NeedsRowsInMemory` when the data in use is read
    where it lies (:attr:`AppState.source`): its rows are never loaded into memory."""
    state = get_state()
    if state.source is not None:
        raise NeedsRowsInMemory(
            f"This step needs the rows in memory, and the data in use stays {state.source.place}. "
            "Upload the data (or a sample of it) on the Data page to use it."
        )
    return load_demo() if state.uploaded is None else state.uploaded


def ledger_path_for_display() -> str:
    """Where the ledger lives, for messages; never raises."""
    try:
        return str(default_ledger_path())
    except Exception:
        return os.environ.get(LEDGER_PATH_ENV, "(default location)")


def open_ledger() -> Ledger:
    """Open this session's ledger, or raise :class:`LedgerUnavailableError` with a clear message."""
    name = get_state().ledger_name
    try:
        totals = {summary.name: summary.total for summary in list_ledgers()}
        return Ledger(None, name, totals.get(name, constants.DEFAULT_LEDGER_TOTAL))
    except LedgerUnavailableError:  # busy, read-only or full: its message says what to do
        raise
    except Exception as exc:
        path = ledger_path_for_display()
        raise LedgerUnavailableError(
            f"Could not open the privacy budget ledger at `{path}` ({type(exc).__name__}: "
            f"{exc}). Set the environment variable `{LEDGER_PATH_ENV}` to a writable file "
            "path, for example `~/strata-lab-ledger.sqlite`, and restart the app.",
            path=path, reason="unavailable",
        ) from exc  # fmt: skip


def open_ledger_or_stop() -> Ledger:
    """Open the ledger for a page; if it cannot be opened, show why and stop the page there."""
    try:
        return open_ledger()
    except LedgerUnavailableError as exc:
        st.error(str(exc), icon=":material/error:")
        stop_page()
