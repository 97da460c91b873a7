"""The Estimator page's preview of the ratio: the noise each released sum gets, one simulated
release of every group's ratio with its interval, and a comparison of two groups (Miao & Li
2022, §2.3–2.4)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.analyses.ratio import (
    RATIO,
    GroupRatioSums,
    RatioResult,
    RatioSettings,
    estimate_ratios,
    release_cost,
)
from strata_ui import pipeline
from strata_ui.analyses.ratio import charts, session
from strata_ui.analyses.ratio.settings import COMPOSITION_LABELS
from strata_ui.analyses.ratio.view import RatioView
from strata_ui.state import get_settings, get_state, reset_settings, update_settings, widget_key
from strata_ui.style import by_interval_width, written_or_dash
from strata_ui.text import as_written
from strata_ui.widgets import bind, show_problems

PREVIEW_BANNER = "Preview — uses the confidential data; not a release."
TABLE_ROW_PX = 35  # height of one st.dataframe row


@st.cache_data(max_entries=64, show_spinner=False)
def _preview(
    _sums: GroupRatioSums, sums_key: tuple, arguments: tuple, interval: tuple, seed: int
) -> RatioResult:
    """One simulated release per key (``sums_key`` stands for ``_sums``); ``seed`` draws both
    the noise and the Monte Carlo correction's re-noising."""
    method, scale, level, B = interval
    return estimate_ratios(
        _sums, **dict(arguments), method=method, scale=scale, level=level, B=B, rng=seed
    )


def render(settings: RatioSettings) -> None:
    """What stops the settings, or what the release would look like: the rows left out, the
    noise per sum and a simulated release."""
    budget = pipeline.page_budget(get_state())
    problems = session.problems(settings, budget)
    if problems:
        show_problems(problems)
        return
    if (found := session.sums_or_error(settings)) is None:
        return
    sums, sums_key = found
    for message in sums.messages():
        st.warning(message, icon=":material/warning:")
    arguments = RATIO.arguments(settings, budget)
    render_noise_table(sums, arguments)
    render_preview(settings, arguments, sums, sums_key)


def render_noise_table(sums: GroupRatioSums, arguments: dict) -> None:
    """Each released sum's noise and the ledger's charge, under both accountings when the
    classic Gaussian runs at an ε budget (``arguments``: :meth:`RatioAnalysis.arguments`), at
    the sums' sensitivities: one person's, when a person may own several rows."""
    weighted = sums.w_column is not None
    in_use = arguments["composition"]
    compositions = [in_use]
    if arguments["mechanism"] == "gaussian" and get_state().budget_kind == "pure":
        compositions = ["basic", "zcdp"]
    rows = []
    for composition in compositions:
        try:
            cost, _, scales = release_cost(
                bounds=sums.bounds, weighted=weighted, binary_y=sums.binary_y,
                **{**arguments, "composition": composition},
            )  # fmt: skip
        except ValueError:
            continue  # e.g. basic composition with the classic Gaussian at this ε
        symbol = "b" if arguments["mechanism"] == "laplace" else "σ"
        rows.append(
            {
                "Accounting": COMPOSITION_LABELS[composition].split(":")[0]
                + (" (in use)" if composition == in_use else ""),
                f"Noise {symbol} on Σws and Σwy": scales["ws"],
                "Sums released": len(scales),
                "Charged to the ledger": str(cost),
            }
        )
    with st.expander("Noise per released sum and what the ledger is charged",
                     icon=":material/calculate:", expanded=False):  # fmt: skip
        st.dataframe(charts.noise_table(rows), hide_index=True)
        st.caption(
            "The ledger adds up ρ-zCDP. Gaussian noise of standard deviation σ on a sum that one "
            "person can change by at most Δ costs ρ = Δ²/(2σ²) whatever formula chose σ (Bun & "
            "Steinke 2016, Prop. 1.6), so a release is charged exactly that, summed over its "
            "sums. Basic composition meets the same (ε, δ) with more noise and a smaller ρ; zCDP "
            "spends more ρ for less noise. Laplace is pure ε-DP, charged as ρ = ε²/2."
        )


def _result_frame(result: RatioResult, sums: GroupRatioSums) -> pd.DataFrame:
    frame = result.frame()
    frame["rows"] = [*sums.rows.tolist(), int(sums.rows.sum())]
    frame["exact"] = [*sums.truth.tolist(), sums.global_truth]
    return frame


def render_preview(
    settings: RatioSettings, arguments: dict, sums: GroupRatioSums, sums_key: tuple
) -> None:
    """One simulated release of every group's ratio: a chart, its summary and a table, then
    the two-group comparison."""
    st.subheader("Preview: calibration ratio per group")
    st.info(
        f"{PREVIEW_BANNER} One simulated release with the settings above (numpy noise; a real "
        "release on the Release page draws fresh noise with OpenDP).",
        icon=":material/visibility:",
    )
    view = _render_preview_controls()
    level = get_state().release_level
    interval = (settings.method, settings.scale, level, settings.B)
    result = _preview(sums, sums_key, tuple(arguments.items()), interval, view.preview_seed)
    frame = _result_frame(result, sums)
    x_title = charts.ratio_axis_title(settings.s_column, settings.y_column, settings.w_column)
    st.plotly_chart(
        charts.preview_figure(frame, level=level, x_title=x_title, show_exact=view.show_exact),
        key="ratio.chart.preview",
    )
    st.markdown(as_written(charts.preview_summary(frame, level=level)))
    _render_preview_table(frame, show_exact=view.show_exact)
    st.caption(
        "A group has no interval when its noisy sums make the ratio undefined (e.g. the noisy "
        "Σ label is 0 or below) — typical of small groups at small budgets. Its row says why."
    )
    _render_pairwise(settings, result)


def _render_preview_controls() -> RatioView:
    """The button that draws new noise and the switch for the exact ratios; returns the view
    chosen."""
    redraw_col, exact_col, _ = st.columns([1, 1, 2])
    with redraw_col:
        if st.button(
            "Draw new noise", key=widget_key(RatioView, "preview_seed"), icon=":material/casino:",
            help="Simulate another release: same data and settings, new noise.",
        ):  # fmt: skip
            update_settings(RatioView, preview_seed=get_settings(RatioView).preview_seed + 1)
        st.caption(f"Noise draw #{get_settings(RatioView).preview_seed}.")
    with exact_col:
        bind(
            st.toggle, "Show the exact ratios", RatioView, "show_exact",
            help="The confidential ratio of the clipped data, to see how close the release is.",
            caption="Confidential: never published.",
        )  # fmt: skip
    return get_settings(RatioView)


def _render_preview_table(frame: pd.DataFrame, *, show_exact: bool) -> None:
    table = charts.preview_table(frame)
    if not show_exact:
        table = table.drop(columns=["Exact ratio (confidential)"])
    numbers = ("Exact ratio (confidential)", "DP estimate", "CI low", "CI high")
    written = by_interval_width(table, numbers, table["Width"])
    written["Width"] = written_or_dash(table["Width"], 2)
    st.dataframe(
        written,
        column_config={"Rows": st.column_config.NumberColumn(format="localized")},
        hide_index=True,
        height=TABLE_ROW_PX * (len(table) + 1) + 3,  # every group and the total, no scrolling
        key="ratio.table.preview",
    )


def _render_pairwise(settings: RatioSettings, result: RatioResult) -> None:
    """The z-test on two groups' difference (§2.4); disjoint groups have independent noise."""
    st.subheader("Compare two groups")
    st.markdown(
        "Is one group's calibration different from another's? A z-test on the difference of "
        "their ratios (§2.4); the groups are disjoint, so their releases are independent."
    )
    labels = list(result.labels)
    if len(labels) < 2:
        st.info("There is only one group: choose more strata on the Strata page to compare.",
                icon=":material/info:")  # fmt: skip
        return
    group_a, group_b = _choose_pair(labels)
    comparison = result.compare(labels.index(group_a), labels.index(group_b))
    sentence = charts.comparison_sentence(comparison, group_a, group_b, scale=settings.scale)
    if comparison.flag is None:
        st.markdown(sentence)
        st.dataframe(
            charts.comparison_table(comparison, group_a, group_b),
            hide_index=True,
            column_config={
                name: st.column_config.NumberColumn(format="localized")
                for name in ("Difference A − B", "CI low", "CI high", "z", "p-value")
            },
            key="ratio.table.compare",
        )
    else:
        st.warning(sentence, icon=":material/warning:")
    scale_note = " of log ratios" if settings.scale == "log" else ""
    st.caption(
        f"Preview from one simulated release. The difference{as_written(scale_note)} uses each group's own "
        "interval method; p < 1 − level means the groups differ at that level."
    )


def _choose_pair(labels: list[str]) -> tuple[str, str]:
    """Groups A and B, two different groups of ``labels`` (the first ones by default)."""
    view = get_settings(RatioView)
    if view.compare_a not in labels:
        view = reset_settings(RatioView, compare_a=labels[0])
    if view.compare_b not in labels or view.compare_b == view.compare_a:
        view = reset_settings(
            RatioView, compare_b=next(label for label in labels if label != view.compare_a)
        )
    a_col, b_col = st.columns(2)
    with a_col:
        group_a = bind(st.selectbox, "Group A", RatioView, "compare_a", options=labels,
                       help="The first group of the comparison.")  # fmt: skip
    with b_col:
        others = [label for label in labels if label != group_a]
        if get_settings(RatioView).compare_b not in others:
            reset_settings(RatioView, compare_b=others[0])
        group_b = bind(st.selectbox, "Group B", RatioView, "compare_b", options=others,
                       help="The second group; it must differ from group A.")  # fmt: skip
    return group_a, group_b
