"""Typed access to per-session state, the active dataset and the budget ledger.

Pages never touch ``st.session_state`` keys directly: they call :func:`get_state` and read or
assign attributes of the returned :class:`AppState`. To add a setting, add a field with a default.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Literal, TypeVar

import pandas as pd
import streamlit as st

from dpcore.datasets import DEMO_DATASET_NAME
from dpcore.ledger import LEDGER_PATH_ENV, Ledger, default_ledger_path, list_ledgers
from strata_ui import constants
from strata_ui.data import load_demo

SettingsT = TypeVar("SettingsT")


@dataclass
class AppState:
    """Choices a user has made in this browser session.

    Defaults give sensible results on the demo data: mean hours worked per week, stratified by
    race × sex, clipped to the public range [0, 100] hours, at ε = 1.
    """

    # What to estimate: the stratified mean, or one of the analyses in strata_ui.analyses
    analysis: Literal["mean", "ratio", "gvdp", "synth"] = "mean"
    # Data
    dataset_name: str = DEMO_DATASET_NAME
    uploaded: pd.DataFrame | None = None  # a validated upload replaces the demo data
    dataset_fingerprint: str = "demo"  # cache key of the dataset in use
    upload_generation: int = 0  # bumped to empty the file uploader (back to the demo data)
    value_column: str | None = "hours_per_week"
    # Strata
    strata_columns: list[str] = field(default_factory=lambda: ["race", "sex"])
    bucket_edges: dict[str, list[float]] = field(default_factory=dict)
    min_group_size: int = 2
    small_groups: Literal["merge", "drop"] = "merge"
    share_source: Literal["data", "table", "holdout"] = "data"
    share_table: dict[str, float] = field(default_factory=dict)
    holdout_fraction: float = 0.1
    # Estimator (bounds are public: typed by the user, never read off the data)
    estimator: Literal["laplace", "gaussian", "coinpress"] = "laplace"
    clip_low: float | None = 0.0
    clip_high: float | None = 100.0
    n_public: bool = True
    coinpress_sigma: float = 15.0
    coinpress_steps: int = 3
    coinpress_beta: float = 0.01
    # Budget
    budget_kind: Literal["pure", "zcdp"] = "pure"
    epsilon: float = constants.EPSILON_DEFAULT
    rho: float = 0.5
    global_fraction: float = 0.5  # vanilla (ii): share of the budget for the global estimate
    # Compare (simulation only; never spends budget)
    replicates: int = constants.MC_REPLICATES_DEFAULT
    seed: int = 0
    vanilla_strategy: Literal["global_only", "global_and_groups"] = "global_only"
    group_error_log_axis: bool = False
    sweep_metric: Literal["global", "worst group", "parity"] = "parity"
    # Release
    ledger_name: str = constants.DEFAULT_LEDGER_NAME
    release_strategy: Literal["stratified", "global_only", "global_and_groups"] = "stratified"
    release_level: float = 0.95
    release_label: str = ""  # empty: a label is made from the value and grouping columns
    release_flash: str | None = None  # shown once after the rerun that follows a commit
    # Workshop mode (sidebar switch): demo data only, no Release page, projector-sized charts
    workshop_mode: bool = False


def settings_key(cls: type) -> str:
    """The ``st.session_state`` key under which :func:`get_settings` keeps ``cls``'s instance."""
    return f"_strata_lab_settings.{cls.__module__}.{cls.__qualname__}"


def get_settings(cls: type[SettingsT]) -> SettingsT:
    """This session's instance of the settings dataclass ``cls``, created with defaults.

    Each analysis (ratio, general estimator, synthetic data) keeps its choices in its own
    dataclass, defined next to its widgets, so adding one never touches :class:`AppState`.
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


def get_state() -> AppState:
    """This session's :class:`AppState`, created with defaults on first use."""
    return get_settings(AppState)


def get_dataset() -> pd.DataFrame:
    """The dataset in use: the user's validated upload if any, else the demo data."""
    uploaded = get_state().uploaded
    return load_demo() if uploaded is None else uploaded


class LedgerUnavailableError(RuntimeError):
    """The budget ledger could not be opened or read; the message says how to fix it."""


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
    except Exception as exc:
        raise LedgerUnavailableError(
            f"Could not open the privacy budget ledger at `{ledger_path_for_display()}` "
            f"({type(exc).__name__}: {exc}). Set the environment variable "
            f"`{LEDGER_PATH_ENV}` to a writable file path, for example "
            "`~/strata-lab-ledger.sqlite`, and restart the app."
        ) from exc


def open_ledger_or_stop() -> Ledger:
    """Open the ledger for a page; if it cannot be opened, show why and stop the page there."""
    try:
        return open_ledger()
    except LedgerUnavailableError as exc:
        st.error(str(exc), icon=":material/error:")
        st.stop()
