"""App tests: every page renders through st.navigation without an exception (AppTest layer)."""

import re
import tomllib

import pytest
from streamlit.testing.v1 import AppTest

from dpcore.analyses import ANALYSES
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.ledger import LEDGER_PATH_ENV, Ledger
from strata_ui import constants
from tests.app.helpers import MARKDOWN_ESCAPE, REPO, go, start, text


def visit(at: AppTest, page: constants.PageSpec) -> AppTest:
    at.switch_page(page.path)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def sidebar_text(at: AppTest) -> str:
    """Every piece of text the sidebar shows, joined for substring checks (markdown's escapes
    undone, as the user reads it)."""
    return MARKDOWN_ESCAPE.sub(
        r"\1",
        " ".join(
            [m.value for m in at.sidebar.markdown]
            + [f"{m.label} {m.value}" for m in at.sidebar.metric]
            + [c.value for c in at.sidebar.caption]
            + [e.value for e in at.sidebar.error]
        ),
    )


def test_upload_limit_matches_server_config():
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == constants.MAX_UPLOAD_MB
    # Preview tables hold confidential numbers: Streamlit's own table export stays off.
    assert config["client"]["disableDataExport"] is True


def test_default_page_is_data():
    at = start()
    assert [t.value for t in at.title] == ["Data"]


# Not `page`: pytest-playwright parametrizes any test with an argument of that name by browser,
# which made these AppTests "[chromium]" tests and pulled the browser tests in among them.
@pytest.mark.parametrize("spec", constants.PAGES, ids=lambda p: p.title)
def test_every_page_renders_its_title(spec):
    at = visit(start(), spec)
    assert [t.value for t in at.title] == [spec.title]


def test_data_page_previews_the_demo_data():
    at = start()
    rows = f"{32_561:,}"
    assert [m.value for m in at.metric if m.label == "Rows"] == [rows]
    preview, columns = at.dataframe
    assert preview.value.shape == (constants.PREVIEW_ROWS, 10)
    assert list(columns.value["column"]) == list(preview.value.columns)
    assert any(rows in c.value for c in at.caption)


def test_compare_page_warns_its_views_are_not_private():
    compare = next(p for p in constants.PAGES if p.title == "Compare")
    at = visit(start(), compare)
    assert any("not themselves differentially private" in i.value for i in at.info)


def test_release_page_lists_ledger_history():
    Ledger(None, constants.DEFAULT_LEDGER_NAME, constants.DEFAULT_LEDGER_TOTAL).spend(
        "mean age by sex", ZCDP(0.25), {}
    )
    release = next(p for p in constants.PAGES if p.title == "Release")
    at = visit(start(), release)
    # The plan's preview comes first; the history is the table with a "release" column.
    (history,) = [table for table in at.dataframe if "release" in table.value]
    assert list(history.value["release"]) == ["mean age by sex"]


def test_sidebar_shows_dataset_and_remaining_budget_from_the_ledger():
    Ledger(None, "default", ZCDP(1.0)).spend("t", ZCDP(0.25), {})
    at = start()
    text = sidebar_text(at)
    assert "UCI Adult (demo)" in text
    assert "32,561 rows × 10 columns" in text
    assert "0.75" in text
    # In the Budget page's own unit, ε (charged as ρ = ε²/2): √(2 × 0.75) ≈ 1.22.
    assert "Room for one more release of up to ε = 1.22." in text
    assert at.sidebar.progress[0].value == 75
    assert not at.sidebar.error


@pytest.mark.parametrize("unusable", ["directory", "file under a file"])
def test_sidebar_explains_an_unusable_ledger_path(unusable, tmp_path, monkeypatch):
    if unusable == "directory":
        path = tmp_path
    else:
        (tmp_path / "not-a-folder").write_text("")
        path = tmp_path / "not-a-folder" / "ledger.sqlite"
    monkeypatch.setenv(LEDGER_PATH_ENV, str(path))
    at = start()
    (error,) = at.sidebar.error
    assert LEDGER_PATH_ENV in error.value
    assert str(path) in error.value
    for title in ("Budget", "Release"):
        page = next(p for p in constants.PAGES if p.title == title)
        assert any(LEDGER_PATH_ENV in e.value for e in visit(at, page).main.error)


PYTHON_CALL = re.compile(r"\b[A-Za-z_]\w*\((?:\w+=|\))")
"""A Python call as a repr prints it, ``LaplaceMean(bounds=…)``, or a bare ``call()``."""
SCREENS_WITH_SETTINGS = ("estimator", "budget", "plan", "release")


@pytest.mark.parametrize("analysis", [a.name for a in ANALYSES])
def test_no_page_shows_python_to_the_user(analysis):
    """Plain language (issue 14 item 3): no code block and no Python call in what a page says,
    on the pages that describe the chosen analysis' settings, for every analysis."""
    at = start(analysis=analysis)
    for page in SCREENS_WITH_SETTINGS:
        go(at, page)
        assert not at.code, (page, [c.value for c in at.code])
        shown = text([*at.markdown, *at.caption, *at.info, *at.warning, *at.error, *at.success])
        assert not PYTHON_CALL.search(shown), (page, PYTHON_CALL.findall(shown))
