"""What every AppTest flow needs: start the app, move between pages, read and change the
session's state, and read what a page shows."""

from __future__ import annotations

import base64
import dataclasses
import functools
import json
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.components.v2.component_manager import BidiComponentManager
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest, app_test

from dpcore.analyses import get
from dpcore.foundations.datasets import load_demo
from dpcore.foundations.grouping import GroupingSpec, codebook_order
from dpcore.foundations.ledger import Ledger, LedgerRecord, LedgerSummary, list_ledgers
from dpcore.planner import AccuracyTarget, smallest_budget
from strata_ui.state import AppState, settings_key

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 60  # AppTest's default of 3 s is too short for a cold cache on two cores

# A backslash before ASCII punctuation, as strata_ui.text.as_written writes it.
MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
# The invisible word joiner strata_ui.text puts after "@", "://" and "www" to stop autolinks.
WORD_JOINER = "\u2060"


@functools.cache
def installed_components() -> BidiComponentManager:
    """Streamlit's registry of the components installed packages provide, found once a process.

    Each AppTest otherwise scans every installed package's metadata on its first run (about
    0.1 s of CPU, a tenth of the app tests' time), and the installed packages cannot change
    while the tests run."""
    components = BidiComponentManager()
    components.discover_and_register_components(start_file_watching=False)
    return components


@functools.cache
def compiled_scripts() -> ScriptCache:
    """Streamlit's cache of compiled scripts, one for every AppTest run in a process.

    AppTest builds a new one on each run, so each run read app.py and the page again, rewrote
    them for Streamlit's "magic" (an AST pass over the whole page) and compiled them: about a
    tenth of the app tests' CPU. The scripts cannot change while the tests run."""
    return ScriptCache()


def share_compiled_scripts() -> None:
    """Make every AppTest run in this process take :func:`compiled_scripts` (AppTest reads the
    name ``ScriptCache`` from its module on each run)."""
    app_test.ScriptCache = compiled_scripts


def start(page: str | None = None, **query: str) -> AppTest:
    """The app on the demo data, run once (optionally with a query string), then ``page``."""
    share_compiled_scripts()
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


def choose_analysis(at: AppTest, analysis: str) -> AppTest:
    """Choose ``analysis`` (``"ratio"``, ``"synth"``, ...) on the Estimator page ``at`` shows."""
    at.radio(key="estimator.analysis").set_value(analysis).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def start_with(analysis: str, *, timeout_s: float = TIMEOUT_S) -> AppTest:
    """The Estimator page with ``analysis`` chosen, each later run allowed ``timeout_s``."""
    at = start("estimator")
    at.default_timeout = timeout_s
    return choose_analysis(at, analysis)


def metric(at: AppTest, label: str) -> str:
    """The value the main area's metric ``label`` shows."""
    return next(m.value for m in at.main.metric if m.label == label)


def sidebar_left(at: AppTest) -> str:
    """The budget left, as the sidebar's metric shows it."""
    return at.sidebar.metric[0].value


def address(at: AppTest) -> dict[str, str]:
    """The query parameters of the session's address."""
    return {name: value for name, value in at.query_params.items()}


def ledgers() -> dict[str, LedgerSummary]:
    """Every ledger in the file STRATA_LAB_LEDGER points at (set by the autouse fixture)."""
    return {summary.name: summary for summary in list_ledgers()}


@functools.cache
def demo_error_model(analysis: str, settings, spec: GroupingSpec, budget_kind: str | None):
    """The library's error model of ``analysis`` on the demo grouped by ``spec`` (built once a
    process: the statistics of some analyses take seconds)."""
    frame, chosen = load_demo(), get(analysis)
    stats = chosen.statistics(frame, spec.build(frame), settings)
    kind = {} if budget_kind is None else {"budget_kind": budget_kind}
    return chosen.error_model(stats, settings, **kind)


def demo_budget(
    analysis: str,
    settings,
    half_width: float,
    *,
    level: float = 0.95,
    by: tuple[str, ...] = ("race", "sex"),
    budget_kind: str | None = None,
    spec: GroupingSpec | None = None,
):
    """The Plan page's answer on the demo, computed outside the app by the library: the
    smallest budget whose intervals of ``analysis`` reach ±``half_width`` at ``level``, with
    the groups ``by`` makes in the data or those of ``spec`` (:func:`demo_spec`: the app's
    default declared list, whose order simulated models follow)."""
    model = demo_error_model(analysis, settings, spec or GroupingSpec(by=by), budget_kind)
    return smallest_budget(model, AccuracyTarget(half_width, level=level)).budget


def state_of(at: AppTest) -> AppState:
    return at.session_state[settings_key(AppState)]


def demo_spec(**changes) -> GroupingSpec:
    """The app's default groups of the demo: race × sex as a declared list prefilled from the
    data (in the Strata page's order, which seeded simulations per group follow)."""
    frame = load_demo()
    categories = tuple(
        (c, tuple(sorted(frame[c].astype(str).unique(), key=codebook_order)))
        for c in ("race", "sex")
    )  # fmt: skip
    return GroupingSpec(by=("race", "sex"), categories=categories, categories_source="data",
                        **changes)  # fmt: skip


def exact_sizes_public(at: AppTest) -> AppTest:
    """Group sizes treated as public by the mean and the data's own counts declared public:
    the setting of tests written before sizes became private by default, kept where they
    check something else (the planner's mechanics, intervals with sampling error, the notice
    of exact shares)."""
    from dpcore.analyses.mean import MeanSettings

    change_settings(at, MeanSettings, n_public=True)
    return declare_exact_counts(at)


def declare_exact_counts(at: AppTest) -> AppTest:
    """Declare the data's own group counts public, the Strata page's explicit choice (before
    the page has drawn its radio): what estimators that treat group sizes as public (GVDP,
    CoinPress) need, and what tests written before sizes became private by default assumed."""
    state_of(at).share_source = "data"
    return at


def use_frame(at: AppTest, frame: pd.DataFrame, name: str, strata: list[str]) -> AppState:
    """Put ``frame`` in the session as the upload ``name`` (its fingerprint the name's stem),
    grouped by ``strata`` with no buckets, as the Data and Strata pages would; returns the
    session's state for further changes."""
    app = state_of(at)
    app.uploaded, app.dataset_name, app.dataset_fingerprint = frame, name, Path(name).stem
    app.strata_columns, app.bucket_edges = strata, {}
    return app


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


def edit_table(
    at: AppTest, key: str, edited_rows: dict[str, dict], *, then_open: str | None = None
) -> AppTest:
    """Edit cells of the ``st.data_editor`` keyed ``key`` as the browser reports it, e.g.
    ``{"1": {"share": 20.0}}`` (AppTest has no data editor interaction of its own); with
    ``then_open``, the edit arrives with a change to that page, as when a sidebar link is
    clicked right after typing."""
    editor = next(d for d in at.main.dataframe if d.proto.id.endswith(f"-{key}"))
    states = at._tree.get_widget_states()
    edit = states.widgets.add()
    edit.id = editor.proto.id
    edit.string_value = json.dumps(
        {"edited_rows": edited_rows, "added_rows": [], "deleted_rows": []}
    )
    if then_open is not None:
        at.switch_page(f"app_pages/{then_open}.py")
    at._run(states)
    assert not at.exception, [e.value for e in at.exception]
    return at


def commit(at: AppTest) -> AppTest:
    """Confirm and commit the planned release on the Release page."""
    at.checkbox(key="release.confirm").check().run()
    at.button(key="release.commit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def commit_allowed(at: AppTest) -> bool:
    """Tick the Release page's confirmation; whether its Commit button is then on."""
    at.checkbox(key="release.confirm").check().run()
    return not at.button(key="release.commit").disabled


def commit_once(at: AppTest) -> tuple[Ledger, LedgerRecord]:
    """Commit the planned release; check it was recorded as the default ledger's one release.
    Returns the ledger and that release's record."""
    commit(at)
    assert "Released and recorded" in text(at.success)
    ledger = Ledger.open(None, "default")
    [record] = ledger.history()
    return ledger, record


def text(elements) -> str:
    """The elements' texts as the user reads them (markdown's backslash escapes undone, the
    unseen word joiners left out)."""
    shown = " ".join(str(e.value) for e in elements).replace(WORD_JOINER, "")
    return MARKDOWN_ESCAPE.sub(r"\1", shown)


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


def end_to_end(
    at: AppTest, *, budget_slider: str, charts_on_compare: int, on_plan: Callable[[AppTest], None]
) -> tuple[str, Ledger, LedgerRecord]:
    """An analysis run as a user goes on: Estimator, Compare (the ε slider ``budget_slider``
    moved twice in a row: the first of its ``charts_on_compare`` charts follows), Plan (checked
    by ``on_plan``) and Release, committed once; returns the release review's text, the ledger
    and its record."""
    assert not go(at, "estimator").main.error, errors(at)
    go(at, "compare")
    assert not at.main.error, errors(at)
    assert len(charts(at)) == charts_on_compare
    first = charts(at)[0]
    for budget in (0.2, 1.5):
        at.select_slider(key=budget_slider).set_value(budget).run()
        assert not at.main.error, errors(at)
    assert charts(at)[0] != first
    go(at, "plan")
    assert not at.main.error, errors(at)
    on_plan(at)
    review = text(go(at, "release").main.markdown)
    assert not at.main.error, errors(at)
    ledger, record = commit_once(at)
    return review, ledger, record


def mean_end_to_end(at: AppTest) -> tuple[str, Ledger, LedgerRecord]:
    """:func:`end_to_end` for the mean on data read where it lies: the Plan page's frontier of
    groupings says it needs the rows."""

    def frontier_needs_rows(at: AppTest) -> None:
        assert "needs the rows in memory" in text(at.main.info)

    return end_to_end(at, budget_slider="compare.budget.pure", charts_on_compare=3,
                      on_plan=frontier_needs_rows)  # fmt: skip


def answer_shown(at: AppTest) -> str:
    """The Plan page's smallest budget that meets the target."""
    [metric] = [m for m in at.metric if m.label == "Smallest budget that meets the target"]
    return metric.value


def answers_to_targets(at: AppTest, key: str, targets: tuple[float, ...]) -> list[str]:
    """The Plan page's answer after each of ``targets``, typed in a row in its target box
    ``key``; none shows an error."""
    answers = []
    for target in targets:
        at.number_input(key=key).set_value(target).run()
        assert not at.main.error, errors(at)
        answers.append(answer_shown(at))
    return answers


RATIO_HALF_WIDTH = "planner_view.half_widths.units of the ratio"
"""The Plan page's target box of the ratio."""
HOURS_HALF_WIDTH = "planner_view.half_widths.`hours_per_week`"
"""The Plan page's target box of an estimate of the demo's hours per week."""


def ratio_end_to_end(
    at: AppTest, half_widths: tuple[float, float] = (0.5, 0.3)
) -> tuple[str, Ledger, LedgerRecord]:
    """:func:`end_to_end` for the ratio: on the Plan page the smallest budget follows a target
    changed twice in a row (two ``half_widths`` the data can meet)."""

    def answer_follows_the_target(at: AppTest) -> None:
        answers = answers_to_targets(at, RATIO_HALF_WIDTH, half_widths)
        assert answers[0] != answers[1], answers

    return end_to_end(at, budget_slider="compare.ratio.budget.pure", charts_on_compare=3,
                      on_plan=answer_follows_the_target)  # fmt: skip
