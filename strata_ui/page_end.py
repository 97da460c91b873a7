"""Ending a page early while the run goes on: ``app.py`` still writes the address afterwards.

A page that has nothing more to show (no grouping chosen yet, a hint instead of a chart) ends
with :func:`stop_page`, not ``st.stop()``. After ``st.stop()`` Streamlit sends nothing more in
that run, and a page change clears the address in the browser before the new page runs: the
address then stayed empty, so a refresh on such a page lost every choice.
"""

from typing import NoReturn

__all__ = ["PageStopped", "stop_page"]


class PageStopped(Exception):
    """Raised by :func:`stop_page`; ``app.py`` catches it where the page's run returns."""


def stop_page() -> NoReturn:
    """End the page here, as ``st.stop()`` would, and let the run finish its other work."""
    raise PageStopped
