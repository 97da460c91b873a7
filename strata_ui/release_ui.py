"""Widgets of the Release page: a release's outputs and downloads, the history, the cost and
the checks before a commit."""

from __future__ import annotations

import math
import re
import unicodedata

import pandas as pd
import streamlit as st

from dpcore.analyses import REGISTRY
from dpcore.foundations.accounting import (
    SYMBOLS,
    ZCDP,
    Budget,
    charge_of,
    exact_components,
    format_components,
)
from dpcore.foundations.ledger import (
    Ledger,
    LedgerDataset,
    OtherDatasetError,
    ReleasedElsewhereError,
)
from dpcore.release import (
    ReleasePlan,
    ReleaseRecord,
    nothing_published,
    small_groups_statement,
    to_csv,
    to_json,
    to_script,
)
from strata_ui import allowances, roles
from strata_ui.analyses import AnalysisUI, for_kind
from strata_ui.charts_release import (
    budget_gauge,
    gauge_summary,
    release_figure,
    release_summary,
)
from strata_ui.data import history_table
from strata_ui.report import html_report
from strata_ui.roles import Action
from strata_ui.static_image import static_image_available
from strata_ui.style import by_interval_width, plain_number, written_or_dash
from strata_ui.text import as_text, as_written

OTHER_DATA_KEY = "release.other_data"

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
    "noisy_share": "noisy share",
    "flag": "why not released as itself",
}


def render_gauge(ledger: Ledger) -> None:
    remaining, total = ledger.remaining(), ledger.total.components()
    key = next(iter(remaining))
    st.plotly_chart(
        budget_gauge(remaining[key], total[key], SYMBOLS[key], ledger.name),
        key=f"release.gauge.{ledger.name}",
    )
    st.caption(gauge_summary(remaining[key], total[key], SYMBOLS[key], ledger.name))


def _ui_of(record: ReleaseRecord) -> AnalysisUI | None:
    """The widgets of the analysis that made ``record``; None for a kind no longer registered
    (the record is then drawn the generic way)."""
    kind = record.metadata.get("plan", {}).get("kind", "mean")
    return for_kind(kind) if kind in REGISTRY else None


def figure_for(record: ReleaseRecord):
    """The release's chart: its analysis's own if it draws one, else the generic
    estimates-with-intervals chart; None for a release without estimates (synthetic rows, a
    sample)."""
    ui = _ui_of(record)
    if ui is None:
        return release_figure(record)
    figure = ui.release_figure(record)
    if figure is None and ui.has_intervals:
        return release_figure(record)
    return figure


def charge_text(cost: Budget) -> str:
    """What ``cost`` takes from a zCDP ledger, in plain numbers: ``ρ = 0.5``."""
    return f"ρ = {plain_number(charge_of(cost))}"


def render_record(record: ReleaseRecord, key: str) -> None:
    """A release's DP outputs as a table and a chart, then its four downloads; a release that
    withheld every output says so in one sentence, with no empty chart."""
    if (sentence := nothing_published(record.outputs)) is not None:
        st.warning(sentence, icon=":material/visibility_off:")
        render_downloads(record, key)
        return
    ui = _ui_of(record)
    if ui is not None and ui.render_record(record, key):
        return
    st.dataframe(released_table(record.frame), hide_index=True, height="auto")
    st.plotly_chart(figure_for(record), key=f"{key}.chart")
    st.caption(
        f"{as_written(release_summary(record))} The intervals are {record.metadata['intervals']}."
    )
    render_small_groups(record)
    render_downloads(record, key)


VALUE_COLUMNS = ("estimate", "low", "high")
SHARE_COLUMNS = ("public_share", "noisy_share")


def released_table(frame: pd.DataFrame) -> pd.DataFrame:
    """A release's rows as people read them: each estimate and its interval ends with the
    decimals its interval's width supports and thousands separators (31,491 rather than
    31490.6899), shares to three significant digits, "—" for what was not released."""
    if {"low", "high"} <= set(frame):
        widths = pd.to_numeric(frame["high"]) - pd.to_numeric(frame["low"])
    else:
        widths = pd.Series(math.nan, index=frame.index)
    written = by_interval_width(frame, VALUE_COLUMNS, widths)
    for column in (c for c in SHARE_COLUMNS if c in frame):
        written[column] = written_or_dash(frame[column])
    return written.rename(columns=OUTPUT_COLUMNS)


def render_small_groups(record: ReleaseRecord) -> None:
    """Which groups the release's noisy counts merged or left out, and that they decided."""
    statement = small_groups_statement(record.metadata["plan"]["strata"])
    if statement is None:
        return
    flags = record.frame.get("flag", pd.Series(dtype=object)).fillna("")
    named = record.frame.loc[flags != "", "group"].tolist()
    st.info(
        f"Small groups: {as_written(statement)}. "
        + (
            f"This release: {', '.join(map(as_text, named))}."
            if named
            else "This release merged or left out no group."
        ),
        icon=":material/info:",
    )


def render_exact_shares_notice(plan: ReleasePlan) -> None:
    """Before a commit, say that the group rows will publish shares read exactly from the data
    (the Strata page's default source), which no noise protects."""
    shares = getattr(plan, "shares_read_from_data", None)
    if shares is None:
        return
    st.warning(
        f"This release publishes {as_written(shares)} (the source of the shares chosen on the Strata "
        "page). Those shares are not differentially private: with the number of rows, they "
        "give each group's exact size. To publish outside your organisation, choose a table of "
        "public shares (e.g. census figures) or the release's own noisy group counts on the "
        "Strata page.",
        icon=":material/warning:",
    )


def render_declared_public(plan: ReleasePlan) -> None:
    """Before a commit, exactly what the release takes as public rather than protects: the
    sentence that opens every export of it."""
    facts = plan.declared_public()
    if not facts:
        st.markdown("- **Declared public:** nothing; every number released is a DP output.")
        return
    st.markdown(
        "- **Declared public (not protected by differential privacy):** "
        + "; ".join(map(as_written, facts))
        + "."
    )


def render_public_categories(record: ReleaseRecord) -> None:
    """Name the columns whose categories were read from the data and published as they are
    (a release made before this was recorded names none)."""
    public = record.metadata["plan"]["estimator"].get("categories_treated_as_public", [])
    if public:
        st.caption(
            "Categories treated as public (read from the data and published with the release): "
            + ", ".join(map(as_text, public))
            + "."
        )


def download_stem(record: ReleaseRecord) -> str:
    """The downloads' file name without its extension: the release's title and ledger number."""
    # Accents dropped, not the letters: "région" gives "region", not "r-gion".
    title = unicodedata.normalize("NFKD", record.metadata["title"]).encode("ascii", "ignore")
    stem = re.sub(r"[^A-Za-z0-9]+", "-", title.decode()).strip("-").lower()
    # The ledger's release number, not the key: the key hashes the plan and the data's fingerprint.
    return f"{stem or 'release'}-{record.ledger_record.id}"


def render_downloads(record: ReleaseRecord, key: str) -> None:
    """CSV (formulas escaped), JSON, script and HTML report downloads."""
    ui = _ui_of(record)
    rows = "Estimates and intervals" if ui is None else ui.release_rows
    stem = download_stem(record)
    csv_col, json_col, script_col, html_col = st.columns(4)
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
    figure = figure_for(record)
    _render_report_download(html_col.empty(), record, figure, key, stem)
    if figure is not None and not static_image_available():
        st.caption(
            "The HTML report has no static image: Chromium, which kaleido needs to draw one, "
            "is not installed (`apt-get install chromium`)."
        )


_REPORT = "release.report"
"""The session's last HTML report: (release run id, its HTML)."""
REPORT_WAIT = "Preparing the HTML report: its chart is drawn as an image, which takes 5 to 15 s…"


def _render_report_download(
    slot, record: ReleaseRecord, figure: object, key: str, stem: str
) -> None:
    """The HTML report's download, prepared on request with a spinner: drawing its chart as a
    static image took 10.9 s, and a download built on the click showed nothing meanwhile."""
    run_id = record.metadata["run_id"]
    prepared = st.session_state.get(_REPORT)
    if prepared is None or prepared[0] != run_id:
        asked = slot.button(
            "HTML report", key=f"{key}.html.prepare", icon=":material/description:",
            help="The release's facts, outputs and chart in one file that opens offline. "
            "Prepared when you ask (5 to 15 s, the page says so), then one more click "
            "downloads it.",
        )  # fmt: skip
        if not asked:
            return
        with slot, st.spinner(REPORT_WAIT, show_time=True):
            prepared = (run_id, html_report(record, figure))
        st.session_state[_REPORT] = prepared
    slot.download_button(
        "Download the HTML report", prepared[1], f"{stem}.html", "text/html",
        key=f"{key}.html", icon=":material/download:", on_click="ignore", type="primary",
        help="The release's facts, outputs and chart in one file that opens offline.",
    )  # fmt: skip


def render_history(ledger: Ledger) -> None:
    """The ledger's releases as a table, and the downloads of the one chosen."""
    records = ledger.history(payloads=False)  # results are read only for the chosen release
    if not records:
        st.markdown(":material/inbox: No releases yet in this ledger.")
        return
    st.dataframe(history_table(records, allowances.actors_of(ledger)), hide_index=True)
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
        st.caption(f"Nothing to download: {as_written(exc)}.")
        return
    render_downloads(record, f"release.history.{chosen}")


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
        amount = f"ρ = {cost.rho:g} (as much as ε = {plain_number(epsilon, 3)} of pure DP)"
    else:
        epsilon, amount = cost.epsilon, f"ε = {cost.epsilon:g}"
    if epsilon <= LARGE_EPSILON:
        return None
    return (
        f"**A large budget for one release:** {amount}. Above ε = {LARGE_EPSILON:g} the privacy "
        f"promise is weak: what anyone can learn about one person may change their odds by a "
        f"factor of up to e^{plain_number(epsilon, 3)} ≈ {_factor_text(epsilon)}. Lower it on the "
        "Budget page unless your data's owners have agreed to this."
    )


OVERFLOWING_EXPONENT = 709.0
"""math.exp overflows a double beyond about 709.78."""


def _factor_text(epsilon: float) -> str:
    """e^ε as ``7`` or ``1,097``; past a million as a power of ten (``6.5 × 10^20``), which a
    reader can take in where 21 digits are a blur; beyond a double's range (ε > 709, a planner
    answer for a target out of reach) from ε's digits alone (``10^3,474``)."""
    if epsilon > OVERFLOWING_EXPONENT:
        return f"10^{epsilon / math.log(10):,.0f}"
    factor = math.exp(epsilon)
    if factor < 1e6:
        return f"{factor:,.0f}"
    mantissa, exponent = f"{factor:.1e}".split("e")
    return f"{mantissa} × 10^{int(exponent)}"


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
            "budget, or switch to or start another ledger, on the Budget page."
        )
    else:
        lines.append(
            f"Left in “{ledger.name}”: **{format_components(remaining)}** now, "
            f"**{format_components(after)}** after this release."
        )
    return lines


def other_data_choice(plan: ReleasePlan, ledger: Ledger) -> bool | None:
    """``None`` when ``ledger`` covers the plan's data (or has no release yet). Otherwise say,
    before the commit, that the plan is on other data, and return whether the user ticked that
    the ledger covers both; or, for data another ledger released on, say so and return False
    (only a curator's raise on the Budget page lets this ledger take it on)."""
    data = plan.header.dataset
    if not data.identity:  # the commit says what to declare
        return None
    dataset = LedgerDataset(data.identity, data.name, aliases=data.aliases)
    try:
        ledger.check_dataset(dataset)
        return None
    except ReleasedElsewhereError as refusal:
        st.error(
            "**Released on under another ledger.** "
            + as_written(
                refusal.advice(
                    f"switch to ledger “{refusal.owners[0]}” on the Budget page",
                    "a curator starts or raises a ledger for it on the Budget page, with a reason",
                    refused=False,
                )
            ),
            icon=":material/block:",
        )
        return False
    except OtherDatasetError as refusal:
        if not roles.allows(Action.CONFIRM_OTHER_DATA):
            st.warning(
                f"**Other data than this ledger's.** “{as_text(ledger.name)}” is the budget of other "
                "data. Only a curator may confirm that both are about the same people; ask "
                "one, or release on the data of this ledger.",
                icon=":material/warning:",
            )
            return False
        st.warning(
            "**Other data than this ledger's.** "
            + as_written(
                refusal.advice(
                    "tick the box below",
                    start="start a new ledger for it on the Budget page",
                    refused=False,
                )
            ),
            icon=":material/warning:",
        )
    return st.checkbox(
        "This ledger covers both: they hold data about the same people, so their releases "
        "share one budget.",
        key=OTHER_DATA_KEY,
    )


def allowance_problem(cost: Budget, ledger: Ledger) -> str | None:
    """Why the user may not commit ``cost`` on ``ledger`` (role or allowance), or None."""
    try:
        allowances.check_commit(ledger, roles.current_user(), cost)
    except roles.NotAllowed as exc:
        return str(exc).removeprefix("Refused: ")
    return None
