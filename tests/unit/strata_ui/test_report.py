"""The HTML report: one file for every analysis that opens offline, its facts as readable tables
(never Python reprs), its outputs, and a chart with a static image or the reason for none."""

from __future__ import annotations

import base64
import dataclasses
import html as html_module
import re
import struct

import pytest

from dpcore.analyses import ANALYSES
from dpcore.foundations.datasets import load_demo
from dpcore.release import release
from strata_ui import report, static_image
from strata_ui.charts_release import release_figure
from tests.unit.dpcore.release_helpers import assert_no_data_hash, make_plan
from tests.unit.dpcore.test_neighbours import SPECS, released

# A Python repr of a dict, list or dataclass in the report's text: "{'", "['", "Mean(".
PYTHON_REPR = re.compile(r"\{'|\['|\w+\(\w+=")


@pytest.fixture(scope="module")
def demo():
    return load_demo()


@pytest.fixture
def no_image(monkeypatch):
    """kaleido takes seconds per image; these tests are about the rest of the report."""
    monkeypatch.setattr(static_image, "render_png", lambda *args, **kwargs: None)


def tables_of(html: str) -> str:
    """The report without its inlined plotly.js (which has braces and brackets of its own)."""
    return html.split("<h2>Chart</h2>")[0]


@pytest.mark.parametrize("analysis", ANALYSES, ids=lambda a: a.name)
def test_every_analysis_has_a_report_of_readable_tables(analysis, demo, tmp_path, no_image):
    record = released(demo, analysis, SPECS["share table"], tmp_path, "r")
    html = report.html_report(record)
    text = tables_of(html)
    assert f"<h1>{record.metadata['title']}</h1>" in html
    assert "<th>Method" in text
    assert "<th>Class</th>" not in text and "—</td>" not in text.split("<h2>Outputs")[0]
    assert not PYTHON_REPR.search(text), PYTHON_REPR.search(text)
    assert "race × sex: " in text  # the groups, stated as the CSV's # groups line states them
    assert re.search(r"Privacy cost</th><td>(ε|ρ) = ", text)
    for row in record.outputs[:20]:
        for value in row.values():
            if isinstance(value, str):  # e.g. a bucket "< 25", escaped as text
                assert f"<td>{html_module.escape(value, quote=False)}</td>" in text
    assert_no_data_hash(text, record)


def test_the_mean_s_method_is_said_in_words_with_no_setting_it_does_not_use(
    demo, tmp_path, no_image
):
    """Not "Gamma 0.1 · Radius — · N public yes · Class LaplaceMean": the method in the words
    of the Release page, the settings it recorded folded beneath (γ belongs to the paper's
    clipping rule, unused beside public bounds)."""
    record = released(demo, ANALYSES[0], SPECS["share table"], tmp_path, "r")
    text = tables_of(report.html_report(record))
    assert (
        "<th>Method</th><td>Laplace mean: each value clipped to the public range "
        "[0, 100]; group sizes treated as public</td>"
    ) in text
    shown, folded = text.split("<details>")
    assert "Gamma" not in shown and "LaplaceMean" not in text and "Radius" not in text
    assert "<th>Group sizes public</th><td>yes</td>" in folded


def test_a_report_without_a_chart_has_the_tables_only(demo, tmp_path, no_image):
    record = released(demo, ANALYSES[-1], SPECS["share table"], tmp_path, "r")
    html = report.html_report(record, figure=None)
    assert "<h2>Chart</h2>" not in html
    assert "plotly" not in html.lower()


def test_long_outputs_are_cut_with_a_note(demo, tmp_path, no_image, monkeypatch):
    monkeypatch.setattr(report, "MAX_REPORT_ROWS", 100)
    [synth] = [a for a in ANALYSES if a.name == "synth"]
    record = released(demo, synth, SPECS["share table"], tmp_path, "r")
    html = report.html_report(record)
    assert "The first 100 of 500 rows; the CSV and JSON downloads hold them all." in html
    outputs = html.split("<h2>Outputs</h2>")[1]
    assert outputs.count("<tr>") == 100  # body rows; the header row has its own style


def test_the_chart_works_offline(demo, ledger, no_image):
    record = release(make_plan(demo, by=("sex",)), ledger, noise="simulation", rng=4)
    html = report.html_report(record, release_figure(record))
    assert "<script src=" not in html  # nothing fetched, from a CDN or elsewhere
    assert "Plotly.newPlot" in html  # plotly.js and the chart's data are in the file
    assert "works offline" in html  # the note where the static image would be


def test_the_title_is_text_not_markup(demo, ledger, no_image):
    record = release(make_plan(demo, label="Hours <b>by</b> group"), ledger, noise="simulation",
                     rng=11)  # fmt: skip
    html = report.html_report(record, release_figure(record))
    assert "<h1>Hours &lt;b&gt;by&lt;/b&gt; group</h1>" in html
    assert "<b>by</b>" not in tables_of(html)


@pytest.mark.slow
def test_a_report_has_a_static_png_when_chromium_is_there(demo, ledger):
    if not static_image.static_image_available():
        pytest.skip("Chromium is not installed, so kaleido cannot draw a static image")
    record = release(make_plan(demo), ledger, noise="simulation", rng=11)
    html = report.html_report(record, release_figure(record))
    encoded = re.search(r'<img alt="[^"]*" src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert encoded, "no embedded PNG"
    png = base64.b64decode(encoded.group(1))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (1000, 560)  # IHDR width and height
    assert "No static image" not in html


@pytest.mark.parametrize(
    ("chromium", "message"),
    [
        (False, "No static image: Chromium was not found"),
        (True, "No static image: Chromium did not draw the chart within 2 × 45 s."),
    ],
)
def test_a_report_says_why_it_has_no_static_image(demo, ledger, monkeypatch, chromium, message):
    monkeypatch.setattr(static_image, "static_image_available", lambda: chromium)
    monkeypatch.setattr(static_image, "render_png", lambda *args, **kwargs: None)
    record = release(make_plan(demo), ledger, noise="simulation", rng=11)
    html = report.html_report(record, release_figure(record))
    assert message in html
    assert "<img" not in html


def first_paragraph(html: str) -> str:
    return html_module.unescape(html.split("<p>", 1)[1].split("</p>", 1)[0])


def test_the_first_sentence_states_exactly_what_was_declared_public(demo, tmp_path, no_image):
    """Exact shares and sizes declared public are named first; with private sizes and noisy
    shares only the list of groups and the value's range are."""
    from dpcore.analyses.mean import MEAN, MeanSettings
    from tests.unit.dpcore.test_neighbours import DECLARED

    public = released(demo, MEAN, SPECS["data sizes public"], tmp_path, "public",
                      MeanSettings(value="hours_per_week", n_public=True))  # fmt: skip
    sentence = first_paragraph(report.html_report(public))
    assert sentence.startswith("Declared public for this release, not protected by")
    for fact in ("the list of groups of race × sex (every combination present in the data)",
                 "each group's exact share of the rows (the data's own counts)",
                 "each group's exact number of rows", "the range [0, 100] of `hours_per_week`"):  # fmt: skip
        assert fact in sentence
    noisy = dataclasses.replace(DECLARED, share_source="noisy_counts", share_table=())
    private = released(demo, MEAN, noisy, tmp_path, "private",
                       MeanSettings(value="hours_per_week"))  # fmt: skip
    sentence = first_paragraph(report.html_report(private))
    assert "share" not in sentence and "number of rows" not in sentence
    assert "the range [0, 100] of `hours_per_week`" in sentence
