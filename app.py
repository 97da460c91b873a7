"""Strata Lab entry point: page navigation and the shared sidebar."""

import streamlit as st

from strata_ui.starting import loading_message

with loading_message():  # a fresh server's first run: words on screen, not a blank page
    from strata_ui import heap, roles, serving, sign_in, url_state
    from strata_ui.constants import (
        PAGES,
        WORKSHOP_HIDDEN_PAGES,
        WORKSHOP_QUERY_KEY,
        WORKSHOP_START_PAGE,
    )
    from strata_ui.ledger_ui import use_a_usable_ledger
    from strata_ui.navigation import keep_link_clicks, render_next_steps
    from strata_ui.page_end import PageStopped, stop_page
    from strata_ui.sidebar import lands_on_workshop_page, render_sidebar
    from strata_ui.workshop import render_badge

# A link in workshop mode (?workshop=true) opens for a projector: the sidebar folded.
workshop_link = st.query_params.get(WORKSHOP_QUERY_KEY) == "true"
st.set_page_config(
    page_title="Strata Lab",
    layout="wide",
    initial_sidebar_state="collapsed" if workshop_link else "auto",
)

user = sign_in.gate()  # who uses this session; a refusal or a sign-in screen ends the run here
# An expired sign-in sees nothing until it signs in again, below, once the page is known.
expired = sign_in.has_expired(user, serving.mode().config)
if not expired:
    url_state.restore_once()  # a refresh or a shared link: the choices in the address
    use_a_usable_ledger()
workshop = False if expired else render_sidebar(user)
if not expired:
    keep_link_clicks()  # a link clicked while a box holds typed text is followed, not lost
# Pages outside the user's role, and the Release page in workshop mode, are left out of the menu.
# They stay routable (hidden) so that a deep link gets a notice instead of "page not found", and
# never runs the page's script.
reached = [page for page in PAGES if roles.may_open_page(page.url_path, user)]
hidden = {page.url_path for page in PAGES if page not in reached}
hidden |= set(WORKSHOP_HIDDEN_PAGES) if workshop else set()
navigation = st.navigation(
    [
        st.Page(
            page.path,
            title=page.title,
            icon=page.icon,
            url_path=page.url_path,
            default=page is reached[0],
            visibility="hidden" if page.url_path in hidden else "visible",
        )
        for page in PAGES
    ]
)
url_path = navigation.url_path or reached[0].url_path  # the default page's own path is ""
if expired:
    sign_in.ask_again(user, url_path, serving.mode().config)
if (interrupted := sign_in.page_to_resume()) is not None and interrupted.url_path != url_path:
    st.switch_page(interrupted.path, query_params=st.query_params.to_dict())
if workshop and lands_on_workshop_page(opened_at_root=not navigation.url_path):
    st.switch_page(
        next(p.path for p in PAGES if p.url_path == WORKSHOP_START_PAGE),
        query_params=st.query_params.to_dict(),  # the choices stay in the address
    )
url_state.render_notices()
if workshop:
    render_badge()
try:
    if url_path not in {page.url_path for page in reached}:
        roles.render_page_refused(navigation.title, user)
        stop_page()
    if workshop and navigation.url_path in WORKSHOP_HIDDEN_PAGES:
        st.title(navigation.title)
        st.info(
            f"{navigation.title} is hidden in workshop mode: nothing can be released or spent "
            "here. Switch workshop mode off in the sidebar to use it.",
            icon=":material/school:",
        )
        stop_page()
    navigation.run()
    render_next_steps(url_path)
except PageStopped:  # a page with nothing more to show; the run goes on
    pass
finally:  # also after an error: the address follows every run's choices
    url_state.write()
    heap.freeze_objects_loaded_so_far()
