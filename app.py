"""Strata Lab entry point: page navigation and the shared sidebar."""

import streamlit as st

from strata_ui.constants import PAGES
from strata_ui.sidebar import render_sidebar

st.set_page_config(page_title="Strata Lab", layout="wide")

navigation = st.navigation(
    [
        st.Page(page.path, title=page.title, icon=page.icon, url_path=page.url_path, default=i == 0)
        for i, page in enumerate(PAGES)
    ]
)
render_sidebar()
navigation.run()
