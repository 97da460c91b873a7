"""A release's HTML report: one file that stands alone, offline, for every analysis.

What the release declared (its public metadata) is laid out as readable tables, nested settings
included, never as Python reprs; the DP outputs follow as a table, then the chart, interactive
with plotly.js inlined (so it draws without a network) and as a static PNG when kaleido can draw
one. An analysis without a chart (synthetic data, a private sample) gets the tables alone.
No streamlit here, so the report is unit-tested directly.
"""

from __future__ import annotations

import base64
import html

import pandas as pd
import plotly.graph_objects as go

from dpcore.release import (
    ReleaseRecord,
    declared_public_statement,
    groups_statement,
    public_metadata,
    publishes_shares,
    shares_statement,
    small_groups_statement,
)
from strata_ui import static_image
from strata_ui.style import plain_number

MAX_REPORT_ROWS = 200
"""Rows of outputs a report shows (a synthetic dataset may have many more; the CSV has all)."""

STYLE = (
    "body{font-family:sans-serif;max-width:1040px;margin:auto;padding:0 12px}"
    "table{border-collapse:collapse;margin:6px 0}"
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}"
    "th{background:#f4f4f4;font-weight:600}"
    "td table{margin:0}"
)

# The facts shown first, in this order, with the words a reader sees. Everything else the plan
# declares follows under its own (humanised) name.
_FIRST_FACTS = ("statistic", "dataset", "strata", "strategy", "estimator")
_FACT_NAMES = {
    "statistic": "Statistic",
    "dataset": "Dataset",
    "strata": "Groups",
    "strategy": "Strategy",
    "estimator": "Method and its settings",
    "budget": "Budget planned",
    "level": "Interval level",
}
_SKIPPED = {"kind", "label"}  # the title says both
# Recorded setting names a reader would not guess, in words; others are humanised as they are.
_SETTING_NAMES = {
    "n_public": "Group sizes public",
    "s_column": "Score column",
    "y_column": "Label column",
    "w_column": "Weight column",
    "binary_y": "Label is 0/1",
    "B": "Monte Carlo draws (B)",
    "k": "Subsets (k)",
}


def html_report(record: ReleaseRecord, figure: go.Figure | None = None) -> str:
    """The report of ``record``: facts, outputs, and ``figure`` (none for an analysis without
    a chart). Its first sentence says exactly what the release declared public
    (:func:`~dpcore.release.declared_public_statement`); every other number is a DP output."""
    title = html.escape(record.metadata["title"])
    metadata = public_metadata(record.metadata)
    parts = [
        f"<h1>{title}</h1>",
        f"<p>{html.escape(declared_public_statement(record.metadata))}</p>",
        "<h2>Release</h2>",
        _table(_release_facts(metadata, record)),
        "<h2>Plan</h2>",
        _table(_plan_facts(metadata["plan"], metadata.get("method"))),
        "<h2>Outputs</h2>",
        _outputs_table(record),
    ]
    if figure is not None:
        parts += [
            "<h2>Chart</h2>",
            _interactive(figure),
            "<h2>Static image</h2>",
            _image(figure, title),
        ]
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
        f"<style>{STYLE}</style></head><body>{''.join(parts)}</body></html>"
    )


def _release_facts(metadata: dict, record: ReleaseRecord) -> list[tuple[str, object]]:
    facts = [
        ("Released at (UTC)", metadata["released_at"]),
        ("Noise", metadata["noise"]),
        ("Privacy cost", _cost(metadata["budget"])),
        ("Ledger", f"{metadata['ledger']['name']} (total {metadata['ledger']['total']})"),
    ]
    if "cumulative_loss" in metadata:
        facts.append(("Lost in all by these people", metadata["cumulative_loss"]["statement"]))
    if "intervals" in metadata:
        facts.append(("Intervals", metadata["intervals"]))
    if "coverage" in metadata:
        facts.append(("Coverage", metadata["coverage"]["note"]))
    if publishes_shares(record):
        facts.append(("Group shares", shares_statement(metadata["plan"]["strata"])))
    if (small_groups := small_groups_statement(metadata["plan"]["strata"])) is not None:
        facts.append(("Small groups", small_groups))
    software = ", ".join(f"{name} {version}" for name, version in metadata["software"].items())
    facts.append(("Software", software))
    return facts


def _cost(budget: dict) -> str:
    """A release's cost in words: its own accounting, then its (ε, δ) equivalents."""
    own = ", ".join(
        f"{_symbol(k)} = {plain_number(v, 4)}"
        for k, v in budget.items()
        if k in ("epsilon", "delta", "rho")
    )
    equivalents = "; ".join(
        f"ε = {plain_number(pair['epsilon'], 4)} with δ = {pair['delta']:.0e}"
        for pair in budget.get("approx_dp", [])
        if pair["delta"] > 0
    )
    return own + (f" (equivalent to {equivalents})" if equivalents else "")


def _symbol(name: str) -> str:
    return {"epsilon": "ε", "delta": "δ", "rho": "ρ"}[name]


def _plan_facts(plan: dict, method: str | None) -> list[tuple[str, object]]:
    """The plan's facts; its estimator's recorded settings as a table, or, when the plan says
    its method in words (``method``), that sentence with the settings folded away beneath."""
    first = [key for key in _FIRST_FACTS if key in plan]
    rest = [key for key in plan if key not in _FIRST_FACTS and key not in _SKIPPED]
    facts = []
    for key in first + rest:
        value = plan[key]
        if value is None:  # a setting that does not apply to this plan
            continue
        if key == "estimator":
            facts += _estimator_facts(value, method)
            continue
        if key == "dataset":
            value = value["name"]
        elif key == "strata":
            value = {"summary": f"{' × '.join(value['by'])}: {groups_statement(value)}", **value}
        elif key == "budget":
            value = _cost(value)
        elif key == "level":
            value = f"{value:.0%}"
        facts.append((_FACT_NAMES.get(key, _humane(key)), value))
    return facts


def _estimator_facts(estimator: dict, method: str | None) -> list[tuple[str, object]]:
    # The class name is the code's word, and a None is a setting the method does not use.
    settings = {
        _SETTING_NAMES.get(key, _humane(key)): value
        for key, value in estimator.items() if key != "class" and value is not None
    }  # fmt: skip
    if method is None:
        return [(_FACT_NAMES["estimator"], settings)]
    return [("Method", method), ("Settings as recorded", _Folded(settings))]


class _Folded(dict):
    """Settings a reader may open: the words above them say what applies."""


def _humane(key: str) -> str:
    words = key.replace("_", " ")
    return words[:1].upper() + words[1:]


def _table(facts: list[tuple[str, object]]) -> str:
    rows = "".join(
        f"<tr><th>{html.escape(name)}</th><td>{_cell(value)}</td></tr>" for name, value in facts
    )
    return f"<table>{rows}</table>"


def _cell(value: object) -> str:
    """A value as a reader reads it: a nested table for a mapping, a list joined by commas."""
    if isinstance(value, _Folded):
        return (
            "<details><summary>The settings the release recorded, for its script</summary>"
            f"{_table(list(value.items()))}</details>"
        )
    if isinstance(value, dict):  # a None is a setting that does not apply: left out
        shown = [(_humane(str(k)), v) for k, v in value.items() if v is not None]
        return _table(shown) if shown else "none"
    if isinstance(value, list | tuple):
        return ", ".join(_cell(v) for v in value) if value else "none"
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return html.escape(f"{plain_number(value, 6)}")
    return html.escape(str(value))


def _outputs_table(record: ReleaseRecord) -> str:
    frame = pd.DataFrame(record.outputs)
    shown = frame.head(MAX_REPORT_ROWS).to_html(
        index=False, float_format=plain_number, escape=True, na_rep="—"
    )
    if len(frame) <= MAX_REPORT_ROWS:
        return shown
    return (
        f"<p>The first {MAX_REPORT_ROWS:,} of {len(frame):,} rows; the CSV and JSON downloads "
        f"hold them all.</p>{shown}"
    )


def _interactive(figure: go.Figure) -> str:
    # plotly.js inlined: the report draws its chart with no network (a CDN link left it blank).
    return figure.to_html(full_html=False, include_plotlyjs=True)


def _image(figure: go.Figure, title: str) -> str:
    png = static_image.render_png(figure, width=1000, height=560)
    if png is not None:
        encoded = base64.b64encode(png).decode()
        return f'<img alt="{title}" src="data:image/png;base64,{encoded}" width="1000">'
    if not static_image.static_image_available():
        return (
            "<p><em>No static image: Chromium was not found, so kaleido could not draw one. "
            "The interactive chart above works offline.</em></p>"
        )
    return (
        "<p><em>No static image: Chromium did not draw the chart within "
        f"{static_image.ATTEMPTS} × {static_image.TIME_LIMIT_S:g} s. The interactive chart above "
        "works offline; download the report again for the image.</em></p>"
    )
