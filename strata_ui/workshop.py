"""Workshop mode on a projector (1024 × 768 or 1280 × 720): a badge on every page, since the
sidebar that holds the switch is folded on a projector, and pages that put their first chart in
the first screen: less space above the title, settings folded away, one Learn item at a time."""

from __future__ import annotations

import streamlit as st

from strata_ui.analyses.base import LearnItem

__all__ = ["render_badge", "render_one_item"]

BADGE_TEXT = "Workshop mode · demo data only · nothing is spent"

BADGE = (
    "<style>[data-testid='stMainBlockContainer'] {padding-top: 3.25rem;}"
    "#workshop-badge {position: fixed; top: 0.75rem; left: 50%; transform: translateX(-50%);"
    "z-index: 999991; padding: 0.2rem 0.8rem; border-radius: 1rem; font-size: 0.95rem;"
    "background: #EFE3F7; color: #5B2C83; border: 1px solid #CC79A7; white-space: nowrap;}"
    "</style>"
    f"<div id='workshop-badge' role='status'>{BADGE_TEXT}</div>"
)
"""A badge fixed at the top of the window, over Streamlit's header band: on every page, at any
scroll, and taking no room from the page (whose top padding shrinks from Streamlit's 6rem, a
sixth of a projector's height)."""


def render_badge() -> None:
    """Say on every page that workshop mode is on and what it means."""
    st.markdown(BADGE, unsafe_allow_html=True)


def render_one_item(title: str, items: tuple[LearnItem, ...], key: str) -> None:
    """The page's ``title`` beside a choice of one Learn item, drawn right under it (not in an
    expander further down), so that its chart is in the first screen."""
    titles = {item.title: item for item in items}
    heading, choice = st.columns([1, 2], vertical_alignment="bottom")
    heading.title(title)
    chosen = choice.selectbox(
        "Show", list(titles), key=key,
        help="One explainer or preset at a time, sized for a projector.",
    )  # fmt: skip
    titles[chosen].render()
