"""Widgets of the synthetic-data analysis (AAAI 2024 arXiv, "Stratified Data Synthesis" and
appendix C) for the Estimator, Compare and Release pages (see :mod:`strata_ui.analyses`).

- :func:`render_estimator`: the synthesizer, columns, public bucket edges, vanilla or stratified,
  rows and seed, then a preview of DP synthetic rows (simulation noise, never downloadable);
- :func:`render_compare`: per-group 3-way workload error of vanilla and stratified synthesis, and
  the overall, worst-group and parity error across ε;
- :func:`current_plan`: the :class:`~dpcore.analyses.synth.SynthPlan` the Release page commits;
- :func:`render_record` and :func:`render_downloads`: a committed synthetic release on the Release
  page (its rows, a chart, and CSV / JSON / script downloads), for ``release_ui`` to call.

**Previews and downloads.** A preview is drawn with numpy noise and spends no budget, so
publishing it would leak: it is shown on screen only (first rows), labelled, and never offered
for download. The rows can be downloaded only from the Release page, after the budget is spent
in the ledger and the noise is drawn with OpenDP.

Choices live in :class:`SynthSettings` (via :func:`strata_ui.state.get_settings`); the groups
come from the Strata page and ε from the Budget page. Numerics live in :mod:`dpcore.analyses.synth`,
figures in :mod:`strata_ui.analyses.synth.charts`.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field

import pandas as pd
import streamlit as st
from pandas.api import types

from dpcore.accounting import PureDP, pure_epsilon_within
from dpcore.analyses.synth.config import (
    MAX_ROWS,
    METHOD_NAMES,
    MIN_MODEL_COLUMNS,
    MIN_ROWS,
    STRATEGIES,
    PreparedRows,
    SynthConfig,
    check_config,
    prepare_rows,
    run_synthesis,
)
from dpcore.analyses.synth.encoding import METHODS
from dpcore.analyses.synth.plan import SynthPlan
from dpcore.analyses.synth.workload import (
    SWEEP_EPSILONS,
    GroupWorkload,
    build_workload,
    sweep_errors,
    sweep_metrics,
)
from dpcore.grouping import Grouping, GroupingSpec
from dpcore.release import ReleaseRecord
from dpcore.shares import PublicShares
from strata_ui import constants, pipeline, release_ui
from strata_ui.analyses.synth import charts
from strata_ui.state import AppState, get_dataset, get_settings, get_state

PREVIEW_ROWS = 20
RUNS_MIN, RUNS_MAX = 1, 10
DEFAULT_COLUMNS = (
    "age",
    "workclass",
    "education",
    "marital_status",
    "hours_per_week",
    "income_over_50k",
)
DEFAULT_EDGES = {
    "age": "25, 35, 45, 55, 65",
    "hours_per_week": "20, 35, 41, 50",
    "score": "0.25, 0.5, 0.75",
}
METHOD_HELP = {
    "independent": "Noisy counts of each column on its own; rows combine the columns at random, "
    "so relationships between columns are lost. Fast and robust at small ε.",
    "mwem": "Selects the most informative 1- to 3-way tables privately, measures them with noise "
    "and fits a joint model to them (select–measure–project). Keeps relationships.",
    "histogram": "Noisy count of every combination of values. Exact in the limit, but the noise "
    "swamps it when there are many combinations per person.",
}
METHOD_LABELS = {
    "independent": "Independent marginals",
    "mwem": "MWEM",
    "histogram": "Full histogram",
}
STRATEGY_LABELS = {
    "stratified": "Stratified: one model per group",
    "vanilla": "Vanilla: one model for everyone",
}


@dataclass
class SynthSettings:
    """The synthetic-data analysis' choices in this session (defaults fit the demo data)."""

    method: str = "mwem"
    strategy: str = "stratified"
    columns: list[str] | None = None  # None: a default subset of the data set's columns
    edges_text: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_EDGES))
    categorical: list[str] = field(default_factory=lambda: ["income_over_50k"])
    n_rows: int = 10_000
    seed: int = 0
    rounds: int = 6
    runs: int = 3
    release_column: str | None = None


@dataclass(frozen=True, eq=False)
class Resolved:
    """Everything a preview, a simulation or a plan needs, validated."""

    frame: pd.DataFrame
    grouping: Grouping
    spec: GroupingSpec
    config: SynthConfig
    prepared: PreparedRows
    epsilon: float
    sizes: dict[str, int]

    @property
    def key(self) -> tuple:
        """Cache key of the prepared rows."""
        return (get_state().dataset_fingerprint, self.spec, self.config)

    @property
    def shares(self) -> PublicShares:
        return self.grouping.shares

    @property
    def shares_key(self) -> tuple:
        return tuple(zip(self.shares.labels, self.shares.values.tolist(), strict=True))


# ---- choices to a configuration ----------------------------------------------------------------


def is_numeric(series: pd.Series) -> bool:
    """Numeric columns need public bucket edges (bools and text do not)."""
    return types.is_numeric_dtype(series.dtype) and not types.is_bool_dtype(series.dtype)


def default_columns(frame: pd.DataFrame, strata: list[str]) -> list[str]:
    """The demo's 6 columns when present; otherwise the first 6 text columns (no edges needed)."""
    chosen = [c for c in DEFAULT_COLUMNS if c in frame.columns and c not in strata]
    if len(chosen) >= MIN_MODEL_COLUMNS:
        return chosen
    return [c for c in frame.columns if c not in strata and not is_numeric(frame[c])][:6]


def chosen_columns(settings: SynthSettings, frame: pd.DataFrame, strata: list[str]) -> list[str]:
    """The chosen columns present in the data; the defaults when none is (e.g. a new upload)."""
    options = [c for c in frame.columns if c not in strata]
    chosen = [c for c in settings.columns or [] if c in options]
    if settings.columns is None or (settings.columns and not chosen):
        return default_columns(frame, strata)
    return chosen


def parse_edges(column: str, text: str) -> tuple[float, ...] | None:
    """Edges typed as numbers separated by commas or spaces; ``None`` if nothing was typed."""
    parts = [p for p in re.split(r"[,;\s]+", text.strip()) if p]
    if not parts:
        return None
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise ValueError(
            f"Bucket edges for `{column}` must be numbers separated by commas, got “{text}”."
        ) from None
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"Bucket edges for `{column}` must be finite numbers, got “{text}”.")
    if any(b <= a for a, b in zip(values, values[1:], strict=False)):
        raise ValueError(
            f"Bucket edges for `{column}` must increase from left to right, got “{text}”."
        )
    return values


def synth_epsilon(state: AppState) -> tuple[float, str]:
    """ε of the synthesis from the Budget page, and a sentence saying where it comes from.

    The synthesizers are pure ε-DP. With a ρ-zCDP budget they run at ε = √(2ρ): ε-DP implies
    ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4), so the release costs exactly ρ.
    """
    if state.budget_kind == "pure":
        epsilon, note = float(state.epsilon), f"ε = {state.epsilon:g} from the Budget page."
    else:
        epsilon = pure_epsilon_within(state.rho)
        note = (
            f"The Budget page sets ρ = {state.rho:g} (zCDP). These synthesizers are pure ε-DP, "
            "and ε-DP implies ε²/2-zCDP, so they run at ε = √(2ρ) = "
            f"{epsilon:.4g}, which costs exactly ρ = {state.rho:g}."
        )
    if not (math.isfinite(epsilon) and constants.EPSILON_MIN <= epsilon <= constants.EPSILON_MAX):
        raise ValueError(
            f"ε = {epsilon:g} is outside the range this app allows "
            f"({constants.EPSILON_MIN:g} to {constants.EPSILON_MAX:g}). Set the budget on the "
            "Budget page."
        )
    return epsilon, note


def current_config(settings: SynthSettings, frame: pd.DataFrame, strata: list[str]) -> SynthConfig:
    """The settings as a :class:`SynthConfig`; ``ValueError`` says what to fix."""
    columns = chosen_columns(settings, frame, strata)
    edges, categorical = [], []
    for column in columns:
        if not is_numeric(frame[column]):
            continue
        if column in settings.categorical:
            categorical.append(column)
            continue
        parsed = parse_edges(column, settings.edges_text.get(column, ""))
        if parsed is not None:
            edges.append((column, parsed))
    try:
        return SynthConfig(
            columns=tuple(columns), method=settings.method, n_rows=int(settings.n_rows),
            edges=tuple(edges), categorical=tuple(categorical), rounds=int(settings.rounds),
        )  # fmt: skip
    except (TypeError, ValueError) as exc:
        raise ValueError(f"The synthesizer's settings are not valid: {exc}.") from None


@st.cache_data(max_entries=16, show_spinner="Selecting the rows to synthesize…")
def _prepare(
    _frame: pd.DataFrame,
    _grouping: Grouping,
    fingerprint: str,
    spec: GroupingSpec,
    config: SynthConfig,
) -> PreparedRows:
    prepared = prepare_rows(_frame, spec, _grouping, config)
    # Count the categories now, so the cached rows carry them: check_config (every rerun) and
    # the plan's own check then read them instead of scanning every column again.
    prepared.domain_sizes(config, spec)
    return prepared


def resolve(strategies: tuple[str, ...]) -> Resolved:
    """The session's validated synthesis for ``strategies``; ``ValueError`` says what to fix."""
    state, settings = get_state(), get_settings(SynthSettings)
    frame = get_dataset()
    grouping = pipeline.current_grouping(state)
    spec = pipeline.grouping_spec(state)
    config = current_config(settings, frame, list(spec.by))
    epsilon, _ = synth_epsilon(state)
    prepared = _prepare(frame, grouping, state.dataset_fingerprint, spec, config)
    sizes = check_config(prepared, config, spec, grouping.shares, strategies)
    return Resolved(frame, grouping, spec, config, prepared, epsilon, sizes)


# ---- cached computations ------------------------------------------------------------------------


@st.cache_data(max_entries=32, show_spinner="Drawing a preview of synthetic rows…")
def _preview(
    _resolved: Resolved, key: tuple, shares_key: tuple, epsilon: float, strategy: str, seed: int
) -> dict:
    data = run_synthesis(
        _resolved.prepared, _resolved.config, _resolved.spec, _resolved.shares, epsilon=epsilon,
        strategy=strategy, noise="simulation", rng=seed,
    )  # fmt: skip
    # Rows come grouped by stratum; show a random few (post-processing of DP rows).
    shown = data.frame.sample(n=min(PREVIEW_ROWS, len(data.frame)), random_state=seed)
    return {
        "head": shown.astype(str),
        "rows": len(data.frame),
        "group_rows": data.group_rows,
        "domain_from_data": data.domain_from_data,
        "selected": dict(data.selected),
    }


@st.cache_data(max_entries=8, show_spinner="Counting the real rows' 3-way tables…")
def _workload(_resolved: Resolved, key: tuple) -> GroupWorkload:
    return build_workload(_resolved.prepared, _resolved.config, _resolved.spec)


@st.cache_data(max_entries=32, show_spinner=False)
def _metrics(
    _errors: pd.DataFrame, key: tuple, shares_key: tuple, epsilons: tuple, runs: int, seed: int
) -> pd.DataFrame:
    return sweep_metrics(_errors)


@st.cache_data(max_entries=256, show_spinner=False)
def _sweep_point(
    _resolved: Resolved, key: tuple, shares_key: tuple, epsilon: float, runs: int, seed: int
) -> pd.DataFrame:
    return sweep_errors(
        _resolved.prepared, _resolved.config, _resolved.spec, _resolved.shares,
        epsilons=(epsilon,), runs=runs, rng=seed, workload=_workload(_resolved, key),
    )  # fmt: skip


# ---- Estimator page -----------------------------------------------------------------------------


def _render_method(settings: SynthSettings) -> None:
    methods = list(METHODS)
    settings.method = st.radio(
        "Synthesizer",
        methods,
        index=methods.index(settings.method),
        format_func=METHOD_LABELS.__getitem__,
        key="synth.method",
        help="How the private model of the data is built. All three are pure ε-DP.",
    )
    st.caption(METHOD_HELP[settings.method])
    if settings.method == "mwem":
        settings.rounds = st.slider(
            "MWEM rounds",
            min_value=1,
            max_value=20,
            value=int(settings.rounds),
            key="synth.rounds",
            help="How many tables MWEM selects and measures; ε is split across the rounds.",
        )
        st.caption("More rounds measure more tables, each with less budget (noisier).")


def _render_strategy(settings: SynthSettings, by: list[str]) -> None:
    strategies = list(STRATEGIES)
    settings.strategy = st.radio(
        "Stratification (for the preview and the release)",
        strategies,
        index=strategies.index(settings.strategy),
        format_func=STRATEGY_LABELS.__getitem__,
        key="synth.strategy",
        help="Stratified fits one private model per group of the Strata page, each with the "
        "full ε (the groups are disjoint, so the cost is ε once). Vanilla fits one model to all "
        "rows. The Compare page simulates both.",
    )
    groups = " × ".join(by) or "the Strata page's columns"
    if settings.strategy == "stratified":
        st.caption(
            f"One model per group of {groups}; each group's rows are drawn in proportion to its "
            "public share (Strata page)."
        )
    else:
        st.caption(f"One model for everyone; {groups} are modelled like the other columns.")


def _render_columns(settings: SynthSettings, frame: pd.DataFrame, by: list[str]) -> None:
    options = [c for c in frame.columns if c not in by]
    chosen = chosen_columns(settings, frame, by)
    fingerprint = get_state().dataset_fingerprint
    settings.columns = st.multiselect(
        "Columns to synthesize",
        options,
        default=chosen,
        key=f"synth.columns.{fingerprint}.{'-'.join(by)}",
        help=f"At least {MIN_MODEL_COLUMNS}. The strata columns ({', '.join(by) or 'none'}) "
        "are always included. Every extra column multiplies the number of combinations.",
    )
    st.caption(
        f"The strata columns {', '.join(by) or '(none chosen)'} are always included (GroupValues "
        "page). Numeric columns need public bucket edges, or can be treated as categories."
    )
    numeric = [c for c in settings.columns if is_numeric(frame[c])]
    if numeric:
        st.markdown("**Numeric columns: public bucket edges**")
        st.caption(
            "Type edges from outside knowledge (e.g. age 25, 35, 45, 55, 65), never read off the "
            "data. A value at an edge goes to the upper bucket. Or treat each value as a category "
            "(for 0/1 columns); the list of values is then read from the data and not protected."
        )
    for column in numeric:
        edges_col, cat_col = st.columns([3, 1])
        with cat_col:
            as_category = st.checkbox(
                "Values are categories",
                value=column in settings.categorical,
                key=f"synth.categorical.{column}",
                help="Each distinct value becomes a category (for codes like 0/1).",
            )
        settings.categorical = [c for c in settings.categorical if c != column] + (
            [column] if as_category else []
        )
        with edges_col:
            settings.edges_text[column] = st.text_input(
                f"Bucket edges for {column}",
                value=settings.edges_text.get(column, ""),
                key=f"synth.edges.{column}",
                disabled=as_category,
                placeholder="e.g. 25, 45, 65",
                help="Public cut points, separated by commas.",
            )


def _render_rows(settings: SynthSettings) -> None:
    rows_col, seed_col = st.columns(2)
    with rows_col:
        settings.n_rows = int(
            st.number_input(
                "Synthetic rows",
                min_value=MIN_ROWS,
                max_value=MAX_ROWS,
                value=int(settings.n_rows),
                step=1000,
                key="synth.n_rows",
                help="How many rows to generate (public). Groups get rows in proportion to their "
                "public shares.",
            )
        )
        st.caption("More rows mean less sampling noise in small groups and a bigger file.")
    with seed_col:
        settings.seed = int(
            st.number_input(
                "Random seed",
                min_value=0,
                value=int(settings.seed),
                step=1,
                key="synth.seed",
                help="Seeds the simulation noise of the previews and the Compare page.",
            )
        )
        st.caption("Previews only: a release draws fresh OpenDP noise.")


def _preview_label(resolved: Resolved, strategy: str) -> str:
    by = " × ".join(resolved.spec.by)
    how = (
        f"stratified by {by}" if strategy == "stratified" else f"vanilla (one model; {by} modelled)"
    )
    return (
        f"Differentially private synthetic rows, ε = {resolved.epsilon:.4g}, "
        f"{METHOD_NAMES[resolved.config.method]}, {how}; simulation noise — a preview, not a "
        "release."
    )


def _render_preview(resolved: Resolved, settings: SynthSettings) -> None:
    st.subheader("Preview")
    started = time.perf_counter()
    preview = _preview(
        resolved, resolved.key, resolved.shares_key, resolved.epsilon, settings.strategy,
        settings.seed,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    st.info(_preview_label(resolved, settings.strategy), icon=":material/visibility:")
    # Tall enough for every preview row (35 px a row, plus the header).
    st.dataframe(preview["head"], hide_index=True, height=35 * (len(preview["head"]) + 1) + 3)
    st.caption(
        f"{len(preview['head'])} of {preview['rows']:,} rows, picked at random. The preview's "
        "noise comes from numpy and spends no budget, so it is shown here only and cannot be downloaded. To "
        "publish or download synthetic rows, commit them on the Release page: that spends the "
        f"budget once and draws the noise with OpenDP. (Drawn in {elapsed:.2f} s.)"
    )
    from_data = list(preview["domain_from_data"])
    if from_data:
        st.caption(
            ":material/warning: **Not protected:** the category lists of "
            + ", ".join(f"`{c}`" for c in from_data)
            + " were read from the data and are treated as public, as a schema would be. The "
            "counts behind every row are protected; the list of categories is not (a category "
            "held by one person reveals that it exists)."
        )
    if resolved.shares.source == "data" and settings.strategy == "stratified":
        st.caption(
            "The group shares are the group counts of the data, treated as public (Strata page)."
        )
    for message in resolved.prepared.messages():
        st.caption(message)
    with st.expander("Rows per group" + (" and what MWEM measured" if preview["selected"] else "")):
        table = preview["group_rows"].rename("synthetic rows").rename_axis("group").reset_index()
        st.dataframe(table, hide_index=True)
        for group, marginals in preview["selected"].items():
            tables = "; ".join(" × ".join(m) for m in marginals)
            st.markdown(f"- **{group}**: {tables}")


def render_estimator() -> None:
    """Settings and a preview of synthetic rows, drawn on the Estimator page."""
    state, settings = get_state(), get_settings(SynthSettings)
    frame = get_dataset()
    st.markdown(
        "Generate privately **synthetic rows** that mimic the data. *Stratified* synthesis fits "
        "one private model per group of the Strata page and draws each group's rows from its own "
        "model, so small groups are not drowned out by large ones; *vanilla* fits one model to "
        "everyone. Rosenblatt et al. (AAAI 2024, appendix C) find that stratifying lowers parity "
        "error for most synthesizers — but a small group that must afford its own model can "
        "also do worse. The Compare page shows which happens here."
    )
    by = list(state.strata_columns)
    method_col, strategy_col = st.columns(2)
    with method_col:
        _render_method(settings)
    with strategy_col:
        _render_strategy(settings, by)
    _render_columns(settings, frame, by)
    _render_rows(settings)
    try:
        _, note = synth_epsilon(state)
    except ValueError as exc:
        st.error(str(exc), icon=":material/error:")
        return
    st.caption(
        f"Privacy budget: {note} Stratified or vanilla, a release costs ε once (groups are "
        "disjoint, so their models compose in parallel)."
    )
    try:
        resolved = resolve((settings.strategy,))
    except (ValueError, TypeError) as exc:
        st.error(str(exc), icon=":material/error:")
        return
    try:
        _render_preview(resolved, settings)
    except (ValueError, TypeError) as exc:
        st.error(f"The preview could not be drawn: {exc}", icon=":material/error:")
        return
    st.caption(
        "Next: the Compare page shows each group's error, vanilla against stratified, across ε; "
        "the Release page commits the synthetic rows."
    )


# ---- Compare page ------------------------------------------------------------------------------


def _sweep(resolved: Resolved, runs: int, seed: int) -> tuple[pd.DataFrame, float]:
    epsilons = sorted(set(SWEEP_EPSILONS) | {round(resolved.epsilon, 6)})
    progress = st.progress(0.0, text="Simulating synthetic releases…")
    started = time.perf_counter()
    parts = []
    for i, epsilon in enumerate(epsilons):
        progress.progress(
            i / len(epsilons), text=f"Simulating ε = {epsilon:g} ({i + 1}/{len(epsilons)})"
        )
        parts.append(_sweep_point(resolved, resolved.key, resolved.shares_key, epsilon, runs, seed))
    progress.empty()
    return pd.concat(parts, ignore_index=True), time.perf_counter() - started


def render_compare() -> None:
    """Per-group error and ε sweeps of vanilla and stratified synthesis, on the Compare page."""
    state, settings = get_state(), get_settings(SynthSettings)
    st.caption(
        f"Synthesizing {', '.join(settings.columns or [])} with "
        f"{METHOD_NAMES.get(settings.method, settings.method)}, {settings.n_rows:,} rows, by "
        f"**{' × '.join(state.strata_columns) or 'no strata yet'}**. Change these on the Strata "
        "and Estimator pages."
    )
    settings.runs = st.slider(
        "Simulated synthetic releases per ε and strategy",
        min_value=RUNS_MIN,
        max_value=RUNS_MAX,
        value=int(settings.runs),
        key="synth.runs",
        help="Each run fits new noisy models; more runs give steadier averages but take longer.",
    )
    st.caption(
        "Errors compare each synthetic table with the confidential rows, group by group: the "
        "3-way workload error (Def. 14) averages, over every 3 columns besides the strata, the "
        "L1 distance between the real and the synthetic shares of each combination."
    )
    try:
        resolved = resolve(("stratified", "vanilla"))
        errors, elapsed = _sweep(resolved, settings.runs, settings.seed)
    except (ValueError, TypeError) as exc:
        st.error(str(exc), icon=":material/error:")
        return
    metrics = _metrics(
        errors, resolved.key, resolved.shares_key, tuple(sorted(errors["epsilon"].unique())),
        settings.runs, settings.seed,
    )  # fmt: skip
    epsilon = charts.nearest_epsilon(errors, resolved.epsilon)
    st.caption(
        f"{settings.runs} run(s) per ε and strategy at ε = "
        f"{', '.join(f'{e:g}' for e in sorted(errors['epsilon'].unique()))}; simulation noise, "
        f"nothing spent. Took {elapsed:.2f} s (repeat visits are cached)."
    )

    st.subheader("1. Error in each group")
    st.plotly_chart(charts.group_error_figure(errors, epsilon), key="synth.chart.groups")
    st.markdown(charts.group_error_summary(errors, epsilon))

    st.subheader("2. Error on all rows")
    st.plotly_chart(
        charts.sweep_figure(metrics, "overall", current=epsilon), key="synth.chart.overall"
    )
    st.markdown(charts.sweep_summary(metrics, "overall", current=epsilon))

    st.subheader("3. Worst-group error")
    st.plotly_chart(
        charts.sweep_figure(metrics, "worst group", current=epsilon), key="synth.chart.worst"
    )
    st.markdown(charts.sweep_summary(metrics, "worst group", current=epsilon))
    st.caption(
        "Why stratifying can hurt the worst group: each group's model sees only that group's "
        "rows, so a small group pays the full noise of every table it measures on its own. "
        "Vanilla borrows strength from everyone — and imposes the majority's patterns."
    )

    st.subheader("4. Parity error")
    st.caption(
        "Parity error (Def. 11, ω = 1/k): the error on all rows weighted 1/k plus the average "
        "group error. Lower means the errors are shared more fairly."
    )
    st.plotly_chart(
        charts.sweep_figure(metrics, "parity", current=epsilon), key="synth.chart.parity"
    )
    st.markdown(charts.sweep_summary(metrics, "parity", current=epsilon))


# ---- Release page ------------------------------------------------------------------------------


def current_plan() -> SynthPlan:
    """The synthetic release the session would commit."""
    state, settings = get_state(), get_settings(SynthSettings)
    resolved = resolve((settings.strategy,))
    return SynthPlan(
        prepared=resolved.prepared, header=pipeline.plan_header(state, PureDP(resolved.epsilon)),
        config=resolved.config, strategy=settings.strategy,
    )  # fmt: skip


def render_record(record: ReleaseRecord, key: str) -> None:
    """A committed synthetic release: its rows, one column's categories as a chart, downloads."""
    frame = record.frame
    plan = record.metadata["plan"]
    epsilon = plan["budget"]["epsilon"]
    st.markdown(
        f"**Differentially private synthetic rows** — {len(frame):,} rows, ε = {epsilon:g}, "
        f"{plan['statistic']}, {plan['strategy']}; {record.metadata['noise']}. These rows are a "
        "DP release: they may be published and downloaded."
    )
    st.dataframe(frame, hide_index=True)
    settings = get_settings(SynthSettings)
    columns = list(frame.columns)
    if settings.release_column not in columns:
        settings.release_column = columns[0]
    settings.release_column = st.selectbox(
        "Column to chart",
        columns,
        index=columns.index(settings.release_column),
        key=f"{key}.synth.column",
        help="The share of synthetic rows in each category of this column.",
    )
    st.plotly_chart(
        charts.category_figure(frame, settings.release_column), key=f"{key}.synth.chart"
    )
    st.caption(charts.category_summary(frame, settings.release_column))
    release_ui.render_downloads(record, key)
