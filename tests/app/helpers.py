"""What every AppTest flow needs: start the app, move between pages, read and change the
session's state, and read what a page shows."""

from __future__ import annotations

import base64
import dataclasses
import functools
import json
import re
from pathlib import Path

import numpy as np
from streamlit.components.v2.component_manager import BidiComponentManager
from streamlit.testing.v1 import AppTest

from dpcore.ledger import Ledger, LedgerRecord
from strata_ui.state import AppState, settings_key

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 60  # AppTest's default of 3 s is too short for a cold cache on two cores

# A backslash before ASCII punctuation, as strata_ui.style.as_written writes it.
MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


@functools.cache
def installed_components() -> BidiComponentManager:
    """Streamlit's registry of the components installed packages provide, found once a process.

    Each AppTest otherwise scans every installed package's metadata on its first run (about
    0.1 s of CPU, a tenth of the app tests' time), and the installed packages cannot change
    while the tests run."""
    components = BidiComponentManager()
    components.discover_and_register_components(start_file_watching=False)
    return components


def start(page: str | None = None, **query: str) -> AppTest:
    """The app on the demo data, run once (optionally with a query string), then ``page``."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT_S)
    at._bidi_component_manager = installed_components()
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at if page is None else go(at, page)


def go(at: AppTest, page: str) -> AppTest:
    """Open ``page`` (``"compare"`` or ``"app_pages/compare.py"``) and check it drew cleanly."""
    at.switch_page(page if page.endswith(".py") else f"app_pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def state_of(at: AppTest) -> AppState:
    return at.session_state[settings_key(AppState)]


def settings_of(at: AppTest, cls: type):
    """The session's ``cls`` settings (its defaults when no page has read them yet)."""
    key = settings_key(cls)
    return at.session_state[key] if key in at.session_state else cls()


def change_settings(at: AppTest, cls: type, **changes) -> None:
    """Replace fields of the session's frozen ``cls`` settings, as the widgets would."""
    at.session_state[settings_key(cls)] = dataclasses.replace(settings_of(at, cls), **changes)


def upload(at: AppTest, data: bytes, name: str = "mine.csv") -> AppTest:
    at.file_uploader[0].set_value((name, data, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def submit(at: AppTest, label: str) -> AppTest:
    """Click a form's submit button (AppTest keys them by form and label)."""
    [button] = [b for b in at.button if b.label == label]
    button.click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def edit_table(at: AppTest, key: str, edited_rows: dict[str, dict]) -> AppTest:
    """Edit cells of the ``st.data_editor`` keyed ``key`` as the browser reports it, e.g.
    ``{"1": {"share": 20.0}}`` (AppTest has no data editor interaction of its own)."""
    editor = next(d for d in at.main.dataframe if d.proto.id.endswith(f"-{key}"))
    states = at._tree.get_widget_states()
    edit = states.widgets.add()
    edit.id = editor.proto.id
    edit.string_value = json.dumps(
        {"edited_rows": edited_rows, "added_rows": [], "deleted_rows": []}
    )
    at._run(states)
    assert not at.exception, [e.value for e in at.exception]
    return at


def commit(at: AppTest) -> AppTest:
    """Confirm and commit the planned release on the Release page."""
    at.checkbox(key="release.confirm").check().run()
    at.button(key="release.commit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def commit_once(at: AppTest) -> tuple[Ledger, LedgerRecord]:
    """Commit the planned release; check it was recorded as the default ledger's one release.
    Returns the ledger and that release's record."""
    commit(at)
    assert "Released and recorded" in text(at.success)
    ledger = Ledger.open(None, "default")
    [record] = ledger.history()
    return ledger, record


def text(elements) -> str:
    """The elements' texts as the user reads them (markdown's backslash escapes undone)."""
    return MARKDOWN_ESCAPE.sub(r"\1", " ".join(str(e.value) for e in elements))


def errors(at: AppTest) -> str:
    return text(at.main.error)


def release_review(at: AppTest) -> str:
    """Open the Release page, check it shows no error, and return its review's text."""
    go(at, "release")
    assert not at.main.error, errors(at)
    return text(at.main.markdown)


def charts(at: AppTest) -> list[dict]:
    """The Plotly figures on the page, as dictionaries."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def titles(at: AppTest) -> list[str]:
    return [figure["layout"]["title"]["text"] for figure in charts(at)]


def values(array) -> np.ndarray:
    """A Plotly trace's numbers, whether a list or a base64 typed array."""
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"])
    return np.asarray(array)


def mean_end_to_end(at: AppTest) -> tuple[str, object, object]:
    """The mean on data read where it lies, as a user goes on: Estimator, Compare (ε moved twice
    in a row: the charts follow), Plan (the frontier of groupings says it needs the rows) and
    Release, committed once; returns the release review's text, the ledger and its record."""
    assert not go(at, "estimator").main.error, errors(at)
    go(at, "compare")
    assert not at.main.error, errors(at)
    assert len(charts(at)) == 4
    first = charts(at)[0]
    at.select_slider(key="compare.budget.pure").set_value(0.1).run()
    at.select_slider(key="compare.budget.pure").set_value(1.5).run()
    assert not at.main.error and charts(at)[0] != first
    go(at, "plan")
    assert not at.main.error, errors(at)
    assert "needs the rows in memory" in text(at.main.info)  # the frontier of groupings
    review = text(go(at, "release").main.markdown)
    ledger, record = commit_once(at)
    return review, ledger, record
