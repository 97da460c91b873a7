"""Fixtures shared by every test layer."""

import pytest
import streamlit as st

from dpcore.ledger import LEDGER_PATH_ENV


@pytest.fixture(autouse=True)
def isolated_app_state(tmp_path, monkeypatch):
    """Point the ledger at a fresh file and empty Streamlit's data cache.

    Keeps tests away from a user's real ledger and stops cached frames leaking between tests.
    """
    monkeypatch.setenv(LEDGER_PATH_ENV, str(tmp_path / "ledger.sqlite"))
    st.cache_data.clear()
