"""Strata Lab entry point: page navigation and the shared sidebar."""

import streamlit as st

from strata_ui import url_state
from strata_ui.constants import PAGES, WORKSHOP_HIDDEN_PAGES
from strata_ui.sidebar import render_sidebar

st.set_page_config(page_title="Strata Lab", layout="wide")

url_state.restore_once()  # a refresh or a shared link: the choices in the address
workshop = render_sidebar()
# Workshop mode leaves the Release page out of the menu. It stays routable (hidden) so that a deep
# link gets a notice instead of "page not found", and never reaches the page's commit button.
navigation = st.navigation(
    [
        st.Page(
            page.path,
            title=page.title,
            icon=page.icon,
            url_path=page.url_path,
            default=i == 0,
            visibility="hidden"
            if workshop and page.url_path in WORKSHOP_HIDDEN_PAGES
            else "visible",
        )
        for i, page in enumerate(PAGES)
    ]
)
url_state.render_notices()
try:
    if workshop and navigation.url_path in WORKSHOP_HIDDEN_PAGES:
        st.title(navigation.title)
        st.info(
            f"{navigation.title} is hidden in workshop mode: nothing can be released or spent "
            "here. Switch workshop mode off in the sidebar to use it.",
            icon=":material/school:",
        )
        st.stop()
    navigation.run()
finally:  # also after st.stop(): the address follows every run's choices
    url_state.write()
