"""The synthetic data's Estimator page: its settings, then a preview of DP synthetic rows.

**Previews and downloads.** A preview is drawn with numpy noise and spends no budget, so
publishing it would leak: it is shown on screen only (first rows), labelled, and never offered
for download. The rows can be downloaded only from the Release page, after the budget is spent
in the ledger and the noise is drawn with OpenDP.
"""

from __future__ import annotations

import time

import numpy as np
import streamlit as st

from dpcore.analyses.synth import MBI_METHODS, METHOD_NAMES, SYNTH, PreparedRows, SynthSettings
from dpcore.analyses.synth.group_rows import COUNT_FRACTION
from dpcore.analyses.synth.synthesizers import Progress
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.release import PlanHeader
from strata_ui import pipeline
from strata_ui.analyses.synth import slow_fits
from strata_ui.analyses.synth.settings import SynthView, render_settings
from strata_ui.analyses.synth.synthesis import Resolved, resolve, synth_epsilon
from strata_ui.state import get_settings, get_state
from strata_ui.style import plain_number
from strata_ui.text import as_code, as_text, as_written
from strata_ui.widgets import show_error

PREVIEW_ROWS = 20


def render_estimator() -> None:
    """Settings and a preview of synthetic rows, drawn on the Estimator page."""
    state = get_state()
    st.markdown(
        "Generate privately **synthetic rows** that mimic the data. *Stratified* synthesis fits "
        "one private model per group of the Strata page and draws each group's rows from its own "
        "model, so small groups are not drowned out by large ones; *vanilla* fits one model to "
        "everyone. Rosenblatt et al. (AAAI 2024, appendix C) find that stratifying lowers parity "
        "error for most synthesizers — but a small group that must afford its own model can "
        "also do worse. The Compare page shows which happens here."
    )
    settings = render_settings(pipeline.column_kinds(state), list(state.strata_columns))
    try:
        _, note = synth_epsilon(state, settings)
    except ValueError as exc:
        show_error(exc)
        return
    st.caption(
        f"Privacy budget: {as_written(note)} Stratified or vanilla, a release costs the budget once (groups "
        "are disjoint, so their models compose in parallel)."
    )
    try:
        resolved = resolve((settings.strategy,))
    except (ValueError, TypeError) as exc:
        show_error(exc)
        return
    try:
        _render_preview(resolved, settings)
    except (ValueError, TypeError) as exc:
        st.error(f"The preview could not be drawn: {as_written(exc)}", icon=":material/error:")
        return
    st.caption(
        "Next: the Compare page shows each group's error, vanilla against stratified, across ε; "
        "the Release page commits the synthetic rows."
    )


@st.cache_data(max_entries=32, show_spinner="Drawing a preview of synthetic rows…")
def _preview(
    _stats: PreparedRows,
    _settings: SynthSettings,
    _header: PlanHeader,
    key: tuple,
    strategy: str,
    epsilon: float,
    seed: int,
) -> dict:
    """:func:`_draw_preview`, cached (``key``, ``strategy`` and ``epsilon`` stand for the rows,
    the settings and the header)."""
    return _draw_preview(_stats, _settings, _header, seed)


def _draw_preview(
    stats: PreparedRows,
    settings: SynthSettings,
    header: PlanHeader,
    seed: int,
    progress: Progress | None = None,
) -> dict:
    """The plan's synthetic rows drawn once with numpy noise (MST and AIM draw OpenDP's noise,
    which takes no seed); ``progress`` follows the fits of the slow synthesizers."""
    generator = np.random.default_rng(seed)
    plan = SYNTH.plan(stats, settings, header)
    data = plan.estimate(SimulationNoise(rng=generator), generator, progress=progress)
    # Rows come grouped by stratum; show a random few (post-processing of DP rows).
    shown = data.frame.sample(n=min(PREVIEW_ROWS, len(data.frame)), random_state=seed)
    return {
        "head": shown.astype(str),
        "rows": len(data.frame),
        "group_rows": data.group_rows,
        "domain_from_data": data.domain_from_data,
        "selected": dict(data.selected),
    }


def _preview_label(resolved: Resolved, strategy: str) -> str:
    by = " × ".join(resolved.spec.by)
    how = (
        f"one model per group of {by}"
        if strategy == "stratified"
        else f"one model for everyone ({by} modelled as columns)"
    )
    return (
        f"Differentially private synthetic rows, {_budget_label(resolved)}, "
        f"{METHOD_NAMES[resolved.config.method]}, {how}; {_noise_label(resolved)} — a preview, "
        "not a release."
    )


def _noise_label(resolved: Resolved) -> str:
    if resolved.config.method in MBI_METHODS:
        return "OpenDP's noise (it takes no seed), no budget spent"
    return "simulation noise"


def _budget_label(resolved: Resolved) -> str:
    """ε, or for MST and AIM the ρ = ε²/2 they run at."""
    if resolved.config.method in MBI_METHODS:
        return f"ρ = {plain_number(resolved.epsilon**2 / 2, 4)} (zCDP)"
    return f"ε = {plain_number(resolved.epsilon, 4)}"


def _render_preview(resolved: Resolved, settings: SynthSettings) -> None:
    st.subheader("Preview")
    state = get_state()
    header = pipeline.plan_header(state, pipeline.page_budget(state))
    seed = get_settings(SynthView).seed
    key = (resolved.key, settings.strategy, resolved.epsilon, seed)
    started = time.perf_counter()
    if settings.method in MBI_METHODS:
        name = METHOD_NAMES[settings.method]
        seconds = slow_fits.fit_seconds(resolved, (settings.strategy,))
        label = f"An {name} preview ({settings.strategy})"
        if not slow_fits.started(("preview", *key), label, seconds, "synth.preview.run"):
            return
        preview = slow_fits.kept_or_run(
            ("preview", *key), f"Fitting {name}",
            lambda progress: _draw_preview(resolved.stats, settings, header, seed, progress),
        )  # fmt: skip
    else:
        preview = _preview(resolved.stats, settings, header, *key)
    elapsed = time.perf_counter() - started
    st.info(_preview_label(resolved, settings.strategy), icon=":material/visibility:")
    # Tall enough for every preview row (35 px a row, plus the header).
    st.dataframe(preview["head"], hide_index=True, height=35 * (len(preview["head"]) + 1) + 3)
    st.caption(
        f"{len(preview['head'])} of {preview['rows']:,} rows, picked at random. The preview "
        "spends no budget, so it is shown here only and cannot be downloaded. To publish or download synthetic rows, commit them on the Release page: "
        "that spends the budget once and draws the noise with OpenDP. (Drawn in "
        f"{elapsed:.2f} s.)"
    )
    _render_unprotected(resolved, settings, list(preview["domain_from_data"]))
    with st.expander("Rows per group" + (" and what MWEM measured" if preview["selected"] else "")):
        table = preview["group_rows"].rename("synthetic rows").rename_axis("group").reset_index()
        st.dataframe(table, hide_index=True)
        for group, marginals in preview["selected"].items():
            tables = "; ".join(" × ".join(m) for m in marginals)
            st.markdown(f"- **{as_text(group)}**: {as_text(tables)}")


def _render_unprotected(resolved: Resolved, settings: SynthSettings, from_data: list) -> None:
    """What the preview's rows do not protect, and which rows were left out."""
    if from_data:
        st.caption(
            ":material/warning: **Not protected:** the category lists of "
            + ", ".join(map(as_code, from_data))
            + " were read from the data and are treated as public, as a schema would be. The "
            "counts behind every row are protected; the list of categories is not (a category "
            "held by one person reveals that it exists)."
        )
    if settings.strategy == "stratified" and resolved.shares.drawn_with_release:
        st.caption(
            f"Rows per group come from the release's own noisy group counts "
            f"({COUNT_FRACTION:.0%} of the budget): no exact group size is used or published "
            "(Strata page)."
        )
    elif resolved.shares.source == "data" and settings.strategy == "stratified":
        st.caption(
            "Rows per group follow the data's own group counts, declared public on the Strata "
            "page: the release shows every group's exact share."
        )
    for message in resolved.stats.messages():
        st.caption(message)
