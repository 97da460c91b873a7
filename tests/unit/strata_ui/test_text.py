"""Strings from data are shown as text (issue 38, item 3): the helpers escape what markdown and
Plotly would render, and no page or UI module joins a string into a markdown-rendering call
without them (a scan of every module's syntax tree)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from strata_ui.style import wrap_label, wrap_label_wide
from strata_ui.text import as_text, as_written, chart_text, in_label

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = "![x](http://host/beacon.png) [Verify your account](http://evil/) <b>x</b> :red[y] $z$"


def test_as_text_leaves_no_markdown_syntax_unescaped():
    shown = as_text(HOSTILE + "\n# heading\n- item `code`")
    assert "\n" not in shown
    unescaped = re.sub(r"\\.", "", shown)  # what is left once every escaped character goes
    assert not re.search(r"[!-/:-@\[-`{-~]", unescaped), unescaped
    as_read = re.sub(r"\\(.)", r"\1", shown).replace("\u2060", "")  # the word joiners are unseen
    assert as_read == HOSTILE + " # heading - item `code`"


def test_bare_addresses_do_not_become_links():
    """Markdown links a bare address even with its punctuation escaped (a browser test saw it)."""
    for shown in (as_text("http://evil.example/ www.evil.example a@evil.example"),
                  as_written("see http://evil.example/ and `code`")):  # fmt: skip
        unescaped = shown.replace("\\", "")
        # A word joiner (U+2060) right after "://", "www" and "@" stops the autolink.
        assert not re.search(r"://(?!\u2060)|www(?!\u2060)|@(?!\u2060)", unescaped), shown
    assert "`http://kept.example`" in as_written("`http://kept.example`")  # code is no link


def test_as_written_escapes_outside_code_spans_and_keeps_them():
    assert as_written("`x` is [a](b)") == "`x` is \\[a\\]\\(b\\)"
    assert as_written("an odd ` backtick *here*") == "an odd ` backtick \\*here\\*"


def test_a_column_name_in_a_label_is_read_as_words_and_escaped_only_when_markdown_would_bite():
    """Streamlit gives a label's source to screen readers: "Bucket edges for `age`" read out
    backticks, and "hours\\_per\\_week" a backslash."""
    for plain in ("age", "income_over_50k", "hours per week", "score (0-1)", "région", "Q3 2024"):
        assert in_label(plain) == plain
    assert in_label("*total*") == r"\*total\*"
    assert in_label("$1") == r"\$1"
    assert in_label("_private") == r"\_private"
    for hostile in (HOSTILE, "1. item", "www.evil.example", "a__b", "x_", "`age`", "a\nb"):
        assert in_label(hostile) == as_text(hostile)


def test_chart_text_and_axis_labels_show_html_as_text():
    assert (
        chart_text('<a href="http://evil/">x</a> & y')
        == '&lt;a href="http://evil/"&gt;x&lt;/a&gt; &amp; y'
    )
    assert "<a" not in wrap_label("<a href='http://e/'>click</a> × Male")
    assert wrap_label_wide("<b>bold</b> × x").startswith("&lt;b&gt;bold&lt;/b&gt;")
    assert wrap_label("White × Male") == "White<br>× Male"  # breaks stay breaks


# ---- the scan ----------------------------------------------------------------------------------

MARKDOWN_CALLS = {
    "markdown",
    "info",
    "warning",
    "error",
    "success",
    "caption",
    "write",
    "toast",
    "title",
    "header",
    "subheader",
    "expander",
    "button",
    "checkbox",
    "radio",
    "toggle",
    "tabs",
    "popover",
    "metric",
    "download_button",
    "page_link",
    "form_submit_button",
    "selectbox",
    "multiselect",
    "slider",
    "select_slider",
    "number_input",
    "text_input",
    "text_area",
    "file_uploader",
    "segmented_control",
    "pills",
    "status",
    "spinner",
}
"""Streamlit calls whose text (first argument, or label, body, help, caption) is markdown."""
TEXT_KEYWORDS = {"label", "body", "help", "caption", "captions"}
ESCAPING = {"as_text", "as_written", "as_code", "chart_text", "in_label"}
NUMBER_WRITERS = {"plain_number", "budget_text"}
"""Calls that write numbers (a budget's too, ``ε = 1``) as people read them, as a format spec
does (issue 37): they hold no text from data."""
SOURCES = sorted([*ROOT.glob("app_pages/*.py"), ROOT / "app.py", *ROOT.glob("strata_ui/**/*.py")])

# Placeholders that hold no data, reviewed one by one (issue 38): numbers without a format spec
# (counts, seeds, replicates, ids), constants, and sentences the code writes (method names,
# budget and noise descriptions, durations, policies). A new placeholder in a markdown call
# fails the scan until it is escaped with strata_ui.text or reviewed and listed here.
TRUSTED = {
    "analyses/gvdp/compare.py": [
        "BOUNDS_MODES[inputs.bounds.mode].lower()",
        "MODELS[model.kind]",
        "budget_sentence()",
        "synthetic_description(kind, d)",
    ],
    "analyses/gvdp/estimator.py": ["seed"],
    "analyses/gvdp/learn.py": [
        "gvdp_teaching.LOOSE_K",
        "gvdp_teaching.LOOSE_N // gvdp_teaching.LOOSE_K",
        "gvdp_teaching.LOOSE_REPLICATIONS",
        "gvdp_teaching.LOOSE_RESAMPLES",
        "runs",
        "seed",
    ],
    "analyses/gvdp/settings.py": ["NEARLY_UNBIASED_ROWS[model.estimator]", "model.min_rows"],
    "analyses/mean/__init__.py": ["PREVIEW_BANNER", "chosen.strategy"],
    "analyses/mean/compare.py": ["ESTIMATOR_LABELS[settings.estimator]", "bounds", "symbol"],
    "analyses/mean/explainers.py": ["state.seed"],
    # Bounds found privately: the grid's density, budgets and their split, counts of groups.
    "analyses/mean/found_bounds.py": [
        "GRID_PER_DECADE",
        "_target_words(bounds, budget)",
        "bounds.cost(budget)",
        "bounds.rest(budget)",
        "budget",
        "len(small)",
        "values.k",
    ],
    "analyses/mean/presets.py": ["FIGURE3_DATA_SEEDS", "FIGURE3_REPLICATES"],
    # row_numbers_note: the row-number columns' names, escaped where it is built.
    "analyses/mean/settings.py": [
        "ESTIMATOR_LABELS[settings.estimator]",
        "budget",
        "row_numbers_note(state)",
        "split",
    ],
    "analyses/ratio/compare.py": ["symbol"],
    "analyses/ratio/learn.py": [
        "charts.METHOD_NAMES[worst['method']].lower()",
        "ratio_teaching.RATIO_CI_REPS",
        "seed",
    ],
    "analyses/ratio/preview.py": ["PREVIEW_BANNER", "get_settings(RatioView).preview_seed"],
    "analyses/ratio/table1.py": ["TABLE1_B", "seed"],
    "analyses/sample/compare.py": ["symbol", "view.seed"],
    "analyses/sample/estimator.py": [
        "SAMPLE.describe_budget(settings, pipeline.page_budget(state))",
        "settings.records",
    ],
    "analyses/sample/release.py": ["budget", "len(record.outputs)", "record.metadata['noise']"],
    "analyses/sample/settings.py": ["len(chosen or observed)", "source"],
    "analyses/synth/compare.py": [
        "METHOD_NAMES.get(settings.method, settings.method)",
        "budget",
        "name",
        "runs",
        "view.runs",
    ],
    "analyses/synth/estimator.py": ["len(preview['head'])"],
    "analyses/synth/release.py": [
        "budget",
        "plan['statistic']",
        "plan['strategy']",
        "record.metadata['noise']",
    ],
    "analyses/synth/settings.py": ["MIN_MODEL_COLUMNS"],
    "analyses/synth/slow_fits.py": ["duration_text(seconds)", "label"],
    "app.py": ["navigation.title"],
    "audit_ui.py": ["trail.head[:16]"],  # hex digits of a digest
    "budget.py": ["format_delta(constants.DISPLAY_DELTA)", "ledger.total", "releases"],
    "budget_control.py": ["_symbol(pure)", "symbol"],  # ε or ρ
    "compare.py": ["CURATOR_VIEW"],
    # The team file's Spark masters, each already a code span (as_code).
    "data.py": [
        "MAX_UPLOAD_MB",
        "PREVIEW_ROWS",
        "spark.DEFAULT_MASTER",
        "spark.masters_sentence(listed)",
    ],
    "group_list.py": ["note"],
    "learn.py": ["source"],
    "ledger_admin.py": ["refusal"],  # sentences written here, their ledger names escaped
    # data_of and names: ledger and data names joined after as_text, where they are built;
    # mine.set_by: an identity (see sign_in.py).
    "ledger_ui.py": ["data_of(covered)", "mine.set_by", "names", "others.loss", "symbol", "where"],
    "navigation.py": ["label", "page.title", "title"],
    "noisy_small_groups.py": ["OUTCOME[rule.policy]", "noise.describe()"],
    "person.py": ["state.max_rows_per_person * state.max_groups_per_person"],
    "frontier_ui.py": [
        "2 ** MAX_FRONTIER_COLUMNS - 1",
        "FRONTIER_REPLICATES",
        "MAX_FRONTIER_COLUMNS",
    ],
    "planner.py": [
        "_parts_text(answer.parts, budget)",  # the mechanisms' names and their budgets
        "cost.simulation",
        "duration_text(cost.model_seconds)",
        "format_components(ledger.remaining())",
        "in_words(unit)",  # the value column's name, escaped by in_label
        "len(model.labels)",
        "len(short)",
        "len(short.short)",
        "len(table)",
        "replicates",
        "symbol",
        "where",
    ],
    "planner_fits.py": [
        "held_back",  # its ledger name escaped where it is built, as in where
        "left",  # the ledger's remaining budget, numbers
        "len(model.labels)",
        "len(short.short)",
        "where",
    ],
    "portfolio.py": [
        "_expected_error(share.error, share.target)",
        "_three_digits(share.budget)",
        "charge",
        "len(split.shares)",
        "len(split.short)",
        "number",
        "symbol",
        "total",
    ],
    "private_edges.py": ["budget", "symbol"],
    "release.py": [
        "existing.created_at[:19].replace('T', ' ')",
        "existing.id",
        "plan.cost",
        "release_ui.charge_text(plan.cost)",
        "type(exc).__name__",
        "where",
    ],
    "release_preview.py": ["withheld"],
    "release_ui.py": ["record.metadata['intervals']", "rows"],
    "roles.py": ["_article(user.role)", "title", "user.role"],  # a page's title and role names
    "sidebar.py": ["SYMBOLS[key]", "format_delta(delta)", "ledger.granted()", "shape", "where"],
    # Identities come from the team file and the identity provider, not from data; escaping
    # them would put word joiners into e-mail addresses people copy (strata_ui.text).
    "sign_in.py": ["user.identity", "user.name", "user.role", "when", "who"],
    # group_size_summary: the largest and smallest groups' labels, escaped where it is built.
    "strata.py": ["MAX_CODE_VALUES", "charts_strata.group_size_summary(sizes)", "policy_text"],
    "url_state.py": ["what"],
    # label: a widget's own; suffix: a sentence of the page that calls show_error
    "widgets.py": ["FOUND", "SMALLEST", "WORST", "label", "prefix", "suffix"],
}


def _placeholders(node: ast.AST):
    """Each piece of a string built in ``node`` that is not a constant: f-string fields (those
    with a format spec are numbers), items joined with ``str.join``, and operands of ``+``."""
    if isinstance(node, ast.JoinedStr):
        for value in node.values:
            if isinstance(value, ast.FormattedValue) and value.format_spec is None:
                yield from _placeholders_of_value(value.value)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        for side in (node.left, node.right):
            if isinstance(side, ast.JoinedStr | ast.BinOp):
                yield from _placeholders(side)
            elif not isinstance(side, ast.Constant):
                yield from _placeholders_of_value(side)
    elif isinstance(node, ast.IfExp):
        yield from _placeholders(node.body)
        yield from _placeholders(node.orelse)


def _placeholders_of_value(value: ast.expr):
    if isinstance(value, ast.Call) and _name(value.func) in ESCAPING | NUMBER_WRITERS:
        return
    if isinstance(value, ast.Constant | ast.JoinedStr):
        yield from _placeholders(value)
        return
    if _is_join(value):  # ", ".join(items): each item must be escaped
        (items,) = value.args
        if (
            isinstance(items, ast.Call)
            and _name(items.func) == "map"
            and _name(items.args[0]) in ESCAPING
        ):
            return
        if isinstance(items, ast.GeneratorExp | ast.ListComp):
            yield from _placeholders_of_value(items.elt)
            return
    if isinstance(value, ast.IfExp):
        yield from _placeholders_of_value(value.body)
        yield from _placeholders_of_value(value.orelse)
        return
    yield value


def _is_join(value: ast.expr) -> bool:
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr == "join" and len(value.args) == 1)  # fmt: skip


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def unescaped_joins(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = str(path.relative_to(ROOT)).removeprefix("strata_ui/").removeprefix("app_pages/")
    trusted = TRUSTED.get(module, set())
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in MARKDOWN_CALLS):  # fmt: skip
            continue
        texts = node.args[:1] + [k.value for k in node.keywords if k.arg in TEXT_KEYWORDS]
        for text in texts:
            for value in _placeholders(text):
                if isinstance(value, ast.Constant):
                    continue
                source = ast.unparse(value)
                if source not in trusted:
                    found.append(f"{module}:{value.lineno}: {source}")
    return found


def test_the_scan_finds_an_unescaped_join():
    tree_source = (
        'st.info(f"Small groups: {\', \'.join(named)}")\nst.caption("a " + ", ".join(public))\n'
    )
    path = ROOT / "tests" / "artifacts" / "scan_probe.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tree_source, encoding="utf-8")
    try:
        assert len(unescaped_joins(path)) == 2
        path.write_text("st.info(f\"{', '.join(map(as_text, named))} {n:,}\")\n", encoding="utf-8")
        assert unescaped_joins(path) == []
    finally:
        path.unlink()


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_no_string_is_joined_into_markdown_without_escaping(path):
    assert unescaped_joins(path) == []
