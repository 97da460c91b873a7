"""The first page of a freshly started server: words on screen while the numerics load.

A server's first run imports the numerical libraries (SciPy, pandas, Plotly, OpenDP, dpcore)
before any page can draw: 7 to 8 s on two busy cores, during which the browser showed a blank
page. This module imports nothing but Streamlit, so that ``app.py`` can say what is happening
before it imports the rest. Later runs find the libraries loaded and show nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

STARTING_MESSAGE = (
    "Starting Strata Lab: loading its numerical libraries. This takes a few seconds, the first "
    "time only."
)


@contextmanager
def loading_message() -> Iterator[None]:
    """Show :data:`STARTING_MESSAGE` with a spinner while the block loads the app's modules, if
    they are not loaded yet; clear it after."""
    if "dpcore" in sys.modules:
        yield
        return
    slot = st.empty()
    with slot, st.spinner(STARTING_MESSAGE, show_time=True):
        yield
    slot.empty()
