"""Widgets of the Release page: a release's outputs and downloads, the history, ledger admin."""

from __future__ import annotations

import functools
import math
import re

import streamlit as st

from dpcore.accounting import SYMBOLS, ZCDP, Budget, exact_components, format_components
from dpcore.analyses import REGISTRY
from dpcore.ledger import Ledger, list_ledgers
from dpcore.release import ReleaseRecord, to_csv, to_json, to_script
from strata_ui import constants
from strata_ui.analyses import AnalysisUI, for_kind
from strata_ui.charts_release import (
    budget_gauge,
    html_report,
    release_figure,
    release_summary,
)
from strata_ui.data import history_table
from strata_ui.state import get_state
from strata_ui.static_image import static_image_available

LARGE_EPSILON = 2.0
"""Above this ε per release (or ρ = ε²/2) the Release page warns before the commit."""

OUTPUT_COLUMNS = {
    "level": "level",
    "group": "group",
    "estimate": "DP estimate",
    "low": "interval low",
    "high": "interval high",
    "public_share": "public share",
    "coefficient": "coefficient",
    "std_error": "standard error",
}


def render_gauge(ledger: Ledger) -> None:
    remaining, total = ledger.remaining(), ledger.total.components()
    key = next(iter(remaining))
    st.plotly_chart(
        budget_gauge(remaining[key], total[key], SYMBOLS[key], ledger.name),
        key=f"release.gauge.{ledger.name}",
    )


def _ui_of(record: ReleaseRecord) -> AnalysisUI | None:
    """The widgets of the analysis that made ``record``; None for a kind no longer registered
    (the record is then drawn the generic way)."""
    kind = record.metadata.get("plan", {}).get("kind", "mean")
    return for_kind(kind) if kind in REGISTRY else None


def figure_for(record: ReleaseRecord):
    """The release's chart: its analysis's own if it draws one, else the generic
    estimates-with-intervals chart."""
    ui = _ui_of(record)
    figure = None if ui is None else ui.release_figure(record)
    return release_figure(record) if figure is None else figure


def render_record(record: ReleaseRecord, key: str) -> None:
    """A release's DP outputs as a table and a chart, then its four downloads."""
    ui = _ui_of(record)
    if ui is not None and ui.render_record(record, key):
        return
    st.dataframe(
        record.frame.rename(columns=OUTPUT_COLUMNS),
        hide_index=True,
        height="auto",
        column_config={"public share": st.column_config.NumberColumn(format="%.4f")},
    )
    st.plotly_chart(figure_for(record), key=f"{key}.chart")
    st.caption(f"{release_summary(record)} The intervals are {record.metadata['intervals']}.")
    render_downloads(record, key)


def render_public_categories(record: ReleaseRecord) -> None:
    """Name the columns whose categories were read from the data and published as they are
    (a release made before this was recorded names none)."""
    public = record.metadata["plan"]["estimator"].get("categories_treated_as_public", [])
    if public:
        st.caption(
            "Categories treated as public (read from the data and published with the release): "
            + ", ".join(public)
            + "."
        )


def _file_stem(record: ReleaseRecord) -> str:
    stem = re.sub(r"[^A-Za-z0-9]+", "-", record.metadata["title"]).strip("-").lower()
    # The ledger's release number, not the key: the key hashes the plan and the data's fingerprint.
    return f"{stem or 'release'}-{record.ledger_record.id}"


def render_downloads(record: ReleaseRecord, key: str) -> None:
    """CSV (formulas escaped), JSON, script and (for estimates) HTML report downloads."""
    ui = _ui_of(record)
    rows = "Estimates and intervals" if ui is None else ui.release_rows
    report = ui is None or ui.has_intervals
    stem = _file_stem(record)
    csv_col, json_col, script_col, *html_col = st.columns(4 if report else 3)
    csv_col.download_button(
        "CSV", to_csv(record), f"{stem}.csv", "text/csv", key=f"{key}.csv",
        icon=":material/download:", on_click="ignore",
        help=f"{rows}; metadata in the leading # lines. Formulas are escaped.",
    )  # fmt: skip
    json_col.download_button(
        "JSON", to_json(record), f"{stem}.json", "application/json", key=f"{key}.json",
        icon=":material/download:", on_click="ignore", help=f"{rows} and full metadata.",
    )  # fmt: skip
    script_col.download_button(
        "Python script", to_script(record), f"{stem}.py", "text/x-python", key=f"{key}.py",
        icon=":material/code:", on_click="ignore",
        help="Redoes the release with dpcore's public API on the same data.",
    )  # fmt: skip
    if not report:
        return
    html_col[0].download_button(
        "HTML report", functools.partial(html_report, record, figure_for(record)), f"{stem}.html", "text/html",
        key=f"{key}.html", icon=":material/description:", on_click="ignore",
        help="Metadata, table and chart in one file.",
    )  # fmt: skip
    if not static_image_available():
        st.caption(
            "The HTML report has no static image: Chromium, which kaleido needs to draw one, "
            "is not installed (`apt-get install chromium`)."
        )


def render_history(ledger: Ledger) -> None:
    """The ledger's releases as a table, and the downloads of the one chosen."""
    records = ledger.history(payloads=False)  # results are read only for the chosen release
    if not records:
        st.markdown(":material/inbox: No releases yet in this ledger.")
        return
    st.dataframe(history_table(records), hide_index=True)
    keyed = {record.id: record for record in records if record.key}
    if not keyed:
        return
    chosen = st.selectbox(
        "Download a past release again",
        list(reversed(keyed)),
        format_func=lambda i: f"#{i} · {keyed[i].label} · {keyed[i].created_at[:19]}",
        key="release.history.choice",
    )
    try:
        record = ReleaseRecord.from_ledger(ledger.get(keyed[chosen].key))
    except ValueError as exc:  # a spend recorded by other tools, with no release payload
        st.caption(f"Nothing to download: {exc}.")
        return
    render_downloads(record, f"release.history.{chosen}")


LEDGER_SWITCH_KEY = "release.ledger.switch"


def _switch_ledger() -> None:
    # A callback runs before the page, so the sidebar and the page open the chosen ledger.
    get_state().ledger_name = st.session_state[LEDGER_SWITCH_KEY]


def render_ledger_admin(ledger: Ledger) -> None:
    """Switch ledgers, start a new one, or reset this one — each behind explicit confirmation."""
    summaries = list_ledgers(ledger.path)
    names = [s.name for s in summaries]
    # A keyed selectbox keeps its own value across reruns (its `index` only seeds it), so set it
    # to the ledger in use: otherwise, after "Start new ledger" it would still hold the old name
    # and switch the session straight back, charging the next release to the old ledger.
    st.session_state[LEDGER_SWITCH_KEY] = ledger.name
    st.selectbox(
        "Ledger in use",
        names,
        key=LEDGER_SWITCH_KEY,
        on_change=_switch_ledger,
        help="Every ledger in the file, archived ones included. Releases charge the one in use.",
    )
    new_col, reset_col = st.columns(2)
    with new_col, st.form("release.ledger.new", border=True):
        st.markdown("**Start a new ledger**")
        name = st.text_input("Name", key="release.ledger.new_name")
        rho = st.number_input(
            "Total budget ρ (zCDP)",
            min_value=constants.RHO_MIN,
            max_value=constants.RHO_MAX,
            value=constants.DEFAULT_LEDGER_TOTAL.rho,
            key="release.ledger.new_rho",
        )
        confirm = st.checkbox(
            "I confirm: start a new ledger and use it for the next releases",
            key="release.ledger.new_confirm",
        )
        if st.form_submit_button("Start new ledger"):
            _start_ledger(name, rho, confirm, names)
    with reset_col, st.form("release.ledger.reset", border=True):
        st.markdown(f"**Reset “{ledger.name}”**")
        st.caption(
            "Its history is kept as an archived ledger. A reset does not undo the privacy loss "
            "of past releases: only reset when the data or its owner's policy changes."
        )
        typed = st.text_input(
            f"Type the ledger's name ({ledger.name}) to confirm", key="release.ledger.reset_name"
        )
        if st.form_submit_button("Archive and reset"):
            if typed != ledger.name:
                st.error(
                    f"Nothing reset: type the ledger's name exactly ({ledger.name}) to confirm.",
                    icon=":material/error:",
                )
            else:
                archived = ledger.archive()
                # Rerun so the gauge, the sidebar and the Commit section show the emptied ledger.
                get_state().release_flash = f"Reset. The old history is kept as “{archived}”."
                st.rerun()


def _start_ledger(name: str, rho: float, confirmed: bool, existing: list[str]) -> None:
    name = name.strip()
    if not confirmed:
        st.error("Nothing started: tick the confirmation box first.", icon=":material/error:")
    elif not name:
        st.error("Nothing started: give the new ledger a name.", icon=":material/error:")
    elif name in existing:
        st.error(
            f"Nothing started: a ledger called “{name}” already exists. Choose another name, or "
            "switch to it above.",
            icon=":material/error:",
        )
    else:
        Ledger(None, name, ZCDP(rho))
        get_state().ledger_name = name
        st.rerun()


def _left_after(cost: Budget, ledger: Ledger) -> tuple[dict, dict]:
    """The ledger's charge for ``cost`` and what would be left after it, in the ledger's units."""
    charge = {k: float(v) for k, v in exact_components(cost, ledger.total.kind).items()}
    remaining = ledger.remaining()
    return charge, {k: remaining[k] - charge[k] for k in remaining}


def affordable(cost: Budget, ledger: Ledger) -> bool:
    return all(value >= 0 for value in _left_after(cost, ledger)[1].values())


def large_budget_warning(cost: Budget) -> str | None:
    """A plain warning when one release spends more than ε = 2 (ρ = 2 = ε²/2 in zCDP), else None.

    Above ε = 2 the promise is weak: whatever anyone believed about one person, the release can
    multiply the odds by up to e^ε (e² ≈ 7.4).
    """
    if isinstance(cost, ZCDP):
        epsilon = math.sqrt(2 * cost.rho)
        amount = f"ρ = {cost.rho:g} (as much as ε = {epsilon:.3g} of pure DP)"
    else:
        epsilon, amount = cost.epsilon, f"ε = {cost.epsilon:g}"
    if epsilon <= LARGE_EPSILON:
        return None
    return (
        f"**A large budget for one release:** {amount}. Above ε = {LARGE_EPSILON:g} the privacy "
        f"promise is weak: what anyone can learn about one person may change their odds by a "
        f"factor of up to e^{epsilon:.3g} ≈ {math.exp(epsilon):,.0f}. Lower it on the Budget page "
        "unless your data's owners have agreed to this."
    )


def cost_lines(cost: Budget, ledger: Ledger) -> list[str]:
    """The cost in its own units, the ledger's charge, and what is left before and after."""
    charge, after = _left_after(cost, ledger)
    remaining = ledger.remaining()
    lines = [f"Cost: **{cost}**, charged to the ledger as **{format_components(charge)}**."]
    if cost.kind == "pure" and ledger.total.kind == "zcdp":
        lines[0] += " (ε-DP counts as ρ = ε²/2.)"
    if any(value < 0 for value in after.values()):
        lines.append(
            f":warning: **Not affordable:** “{ledger.name}” has only "
            f"**{format_components(remaining)}** left. Commit stays off; lower the "
            "budget on the Budget page or start a new ledger below."
        )
    else:
        lines.append(
            f"Left in “{ledger.name}”: **{format_components(remaining)}** now, "
            f"**{format_components(after)}** after this release."
        )
    return lines
