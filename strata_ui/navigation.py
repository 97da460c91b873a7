"""Ways through the app: the first screen's three journeys and each page's next steps, as links
that respect workshop mode (which hides the Release page) and the user's role."""

from __future__ import annotations

import streamlit as st

from strata_ui.constants import JOURNEYS, NEXT_STEPS, PAGES, WORKSHOP_HIDDEN_PAGES
from strata_ui.roles import may_open_page
from strata_ui.state import get_state

__all__ = ["keep_link_clicks", "render_journeys", "render_next_steps"]

_BY_URL = {page.url_path: page for page in PAGES}


def _shown(url_path: str) -> bool:
    hidden_in_workshop = get_state().workshop_mode and url_path in WORKSHOP_HIDDEN_PAGES
    return may_open_page(url_path) and not hidden_in_workshop


def render_journeys() -> None:
    """Three bordered cards, one click each: compare groupings, teach, preview and release."""
    journeys = [journey for journey in JOURNEYS if _shown(journey[0])]
    for column, (url_path, title, what) in zip(st.columns(len(journeys)), journeys, strict=True):
        with column.container(border=True):
            page = _BY_URL[url_path]
            st.page_link(page.path, label=f"**{title}**", icon=page.icon)
            st.caption(what)


def render_next_steps(url_path: str) -> None:
    """The end of a page: where to go from here."""
    steps = [(target, label) for target, label in NEXT_STEPS.get(url_path, ()) if _shown(target)]
    if not steps:
        return
    st.divider()
    st.markdown("**What next**")
    for column, (target, label) in zip(st.columns(len(steps)), steps, strict=True):
        page = _BY_URL[target]
        column.page_link(page.path, label=f"{label} ({page.title} page)", icon=page.icon)


# A link clicked while a number or text box still holds typed text was lost: pressing the link
# moves the focus, the box commits its text, and that commit's rerun (sent after the link's, with
# the old page) won, so the old page ran again. The script lets the box's run end first, then
# follows the link: both the typed value and the click count. Streamlit's own links only; the
# script runs once per browser tab.
_KEEP_LINK_CLICKS = """
<script>
(() => {
  if (window.strataLabKeepsLinkClicks) return;
  window.strataLabKeepsLinkClicks = true;
  const LINKS = '[data-testid="stSidebarNav"] a, [data-testid^="stPageLink"] a, a[data-testid^="stPageLink"]';
  const typing = (element) => element && element.matches(
    'input[type="number"], input[type="text"]:not([role="combobox"]), textarea');
  let pending = null;
  document.addEventListener("pointerdown", (event) => {
    const link = event.target.closest(LINKS);
    pending = link && typing(document.activeElement) ? link : null;
  }, true);
  document.addEventListener("click", (event) => {
    const link = event.target.closest(LINKS);
    if (!link || link !== pending) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    pending = null;
    const app = document.querySelector('[data-testid="stApp"]');
    const started = Date.now();
    let ran = false;
    const follow = () => {
      const running = app.getAttribute("data-test-script-state") === "running";
      ran = ran || running;
      const waited = Date.now() - started;
      if ((ran && !running) || (!ran && waited > 400) || waited > 10000) link.click();
      else setTimeout(follow, 50);
    };
    follow();
  }, true);
})();
</script>
"""


def keep_link_clicks() -> None:
    """Make a link clicked while a box holds typed text follow through (``_KEEP_LINK_CLICKS``):
    drawn once per run, at the foot of the sidebar, where it takes no room."""
    with st.sidebar:
        st.html(_KEEP_LINK_CLICKS, unsafe_allow_javascript=True)
