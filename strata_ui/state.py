"""Typed access to per-session state, the active dataset and the budget ledger.

Pages never touch ``st.session_state`` keys directly: they call :func:`get_state` and read or
assign attributes of the returned :class:`AppState`. To add a setting, add a field with a default.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields

import pandas as pd
import streamlit as st

from dpcore.accounting import Budget
from dpcore.datasets import DEMO_DATASET_NAME
from dpcore.ledger import LEDGER_PATH_ENV, Ledger, default_ledger_path
from strata_ui import constants
from strata_ui.data import load_demo

_STATE_KEY = "_strata_lab_app_state"


@dataclass
class AppState:
    """Choices a user has made in this browser session."""

    dataset_name: str = DEMO_DATASET_NAME
    value_column: str | None = None
    strata_columns: list[str] = field(default_factory=list)
    estimator: str | None = None
    budget: Budget | None = None
    ledger_name: str = constants.DEFAULT_LEDGER_NAME


def get_state() -> AppState:
    """This session's :class:`AppState`, created with defaults on first use."""
    state = st.session_state.get(_STATE_KEY)
    if not isinstance(state, AppState):
        # Also reached when Streamlit reloads this module after an edit: the stored object is an
        # instance of the old class, so carry its values over and let new fields take defaults.
        carried = {
            f.name: getattr(state, f.name) for f in fields(AppState) if hasattr(state, f.name)
        }
        state = AppState(**carried)
        st.session_state[_STATE_KEY] = state
    return state


def get_dataset() -> pd.DataFrame:
    """The dataset in use: the demo data (the only source so far)."""
    return load_demo()


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
        return Ledger(None, name, constants.DEFAULT_LEDGER_TOTAL)
    except Exception as exc:
        raise LedgerUnavailableError(
            f"Could not open the privacy budget ledger at `{ledger_path_for_display()}` "
            f"({type(exc).__name__}: {exc}). Set the environment variable "
            f"`{LEDGER_PATH_ENV}` to a writable file path, for example "
            "`~/strata-lab-ledger.sqlite`, and restart the app."
        ) from exc
