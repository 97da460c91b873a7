"""Strata: the columns that split people into groups, group sizes, and public group shares."""

import dataclasses
import functools

import streamlit as st

from dpcore.foundations import theory
from dpcore.foundations.grouping import MAX_CODE_VALUES, OTHER_LABEL
from strata_ui import (
    charts_strata,
    data,
    group_list,
    noisy_small_groups,
    pipeline,
    private_edges,
    share_table,
)
from strata_ui.analyses import current
from strata_ui.constants import (
    HOLDOUT_FRACTION_MAX,
    HOLDOUT_FRACTION_MIN,
    MAX_GROUPS,
    MIN_GROUP_SIZE_MAX,
    MIN_GROUP_SIZE_MIN,
    SMALL_GROUP_SHARE,
)
from strata_ui.page_end import stop_page
from strata_ui.state import AppState, get_state
from strata_ui.style import three_digits
from strata_ui.text import as_code, as_written, in_label
from strata_ui.uploads import format_edges, parse_edges
from strata_ui.widgets import labelled_radio, show_error, stored_in, stored_on_change

st.title("Strata")
st.markdown(
    "Pick the columns that split people into groups (strata), such as race × sex. Everyone falls "
    "in exactly one group, so estimating every group separately costs the budget of one group."
)
state = get_state()

# ---- grouping columns ------------------------------------------------------------------
st.subheader("Group by")
kept_apart = current().columns_not_for_grouping()
options = [c for c in pipeline.column_kinds(state) if c not in kept_apart]
state.strata_columns = st.multiselect(
    "Grouping columns",
    options,
    default=[c for c in state.strata_columns if c in options],
    placeholder="Choose one or more columns",
    key=(columns_key := f"strata.columns.{state.dataset_fingerprint}"),
    **stored_in(columns_key, state, "strata_columns"),
    help="Choosing several columns makes intersectional groups, e.g. race × sex. At most "
    f"{MAX_GROUPS:,} groups.",
)
rules = {c: pipeline.column_rule(state, c) for c in state.strata_columns}
codes = [c for c, rule in rules.items() if rule == "codes"]
if codes:
    st.caption(
        f"{', '.join(map(as_code, codes))}: whole numbers with at most {MAX_CODE_VALUES} "
        "values, used as categories as they are (like yes/no or text), no bucket edges needed."
    )
numeric = [c for c, rule in rules.items() if rule == "edges"]
if numeric:
    st.markdown(
        "**Bucket edges for numeric columns.** Type the edges from outside knowledge (e.g. "
        "standard age bands), never from this data's quantiles or range: those would leak "
        "information about the people in it. Or find them privately: a small release of the "
        "column's quantiles, paid from the ledger."
    )


def store_bucket_edges(state: AppState, column: str, text: str) -> list | ValueError:
    """Keep the edges typed for ``column`` (none typed: none kept); returns them, or why the
    text is not a list of edges (the kept edges then stay)."""
    try:
        edges = parse_edges(text, column)
    except ValueError as exc:
        return exc
    if edges:
        state.bucket_edges[column] = edges
    else:
        state.bucket_edges.pop(column, None)
    return edges


def rows_used_caption(report, share_source: str) -> str:
    """Which rows the groups count, and why the shares do not reweight to every row."""
    caption = report.rows_used_sentence()
    if report.n_rows_without_values and share_source in ("data", "holdout", "noisy_counts"):
        caption += (
            " The shares count the same rows: they describe the people with a value, as the "
            "whole-population estimate does. To weight each group to its share of everyone instead (a "
            "nonresponse adjustment), take the shares from a public table."
        )
    return caption


columns_without_edges = []
for column in numeric:
    edges_key = f"strata.edges.{column}.{state.dataset_fingerprint}"
    store_edges = functools.partial(store_bucket_edges, state, column)
    private_edges.render(state, column, edges_key)
    text = st.text_input(
        f"Bucket edges for {in_label(column)}",
        value=format_edges(state.bucket_edges.get(column, [])),
        placeholder="comma-separated, e.g. 25, 35, 50, 65",
        key=edges_key,
        help="Edges 25, 35 make the buckets < 25, [25, 35) and ≥ 35.",
        **stored_on_change(edges_key, store_edges),
    )
    edges = store_edges(text)
    if (found := private_edges.found_label(column)) is not None and edges:
        st.caption(found)
    if isinstance(edges, ValueError):
        show_error(edges)
        columns_without_edges.append(column)
        continue
    if not edges:
        columns_without_edges.append(column)
        st.warning(
            f"{as_code(column)} is numeric: enter bucket edges for it above (comma-separated, e.g. "
            "25, 35, 50, 65), or remove it from the grouping columns.",
            icon=":material/warning:",
        )

if state.strata_columns and not columns_without_edges:
    group_list.render(state)

# The share source decides who decides small groups (exact sizes, or the release's noisy
# counts), so its radio runs first; the containers keep the page's order on screen.
small_groups_box, groups_box = st.container(), st.container()
st.subheader("Public group shares")
st.markdown(
    "The population estimate recombines the group estimates weighted by each group's share of "
    "the population. By default each release draws its own noisy group counts and takes the "
    "shares from them, so no exact size leaves; a table of public shares or a holdout split "
    "publish no size either."
)
labelled_radio(
    "Source of the shares", state, "share_source", pipeline.SHARE_SOURCE_LABELS,
    key="strata.share_source",
)  # fmt: skip
noisy = state.share_source == "noisy_counts"

with small_groups_box:
    st.subheader("Small groups")
    size, policy = st.columns(2)
    policy_labels = (
        noisy_small_groups.POLICY_LABELS if noisy else {
            "merge": f"Merge them into “{OTHER_LABEL}”",
            "drop": "Drop them",
            "keep": "Keep every group",
        }
    )  # fmt: skip
    labelled_radio(
        "Groups whose noisy count is below the minimum" if noisy
        else "Groups below the minimum size",
        state, "small_groups", policy_labels, widget=policy.radio, horizontal=True,
        key="strata.small_groups",
        help="The release's own noisy counts decide, at release, so this works with group sizes "
        "kept private." if noisy else "Merging or dropping decides from each group's exact "
        "size. Keep every group when the release keeps group sizes private, or take the shares "
        "from the release's noisy counts, which then decide.",
    )  # fmt: skip
    state.min_group_size = int(
        size.number_input(
            "Minimum noisy count" if noisy else "Minimum group size (rows)",
            min_value=MIN_GROUP_SIZE_MIN,
            max_value=MIN_GROUP_SIZE_MAX,
            value=max(state.min_group_size, MIN_GROUP_SIZE_MIN),
            step=1,
            key="strata.min_group_size",
            disabled=state.small_groups == "keep",
            help="The threshold: smaller groups are merged or left out, since a tiny group's "
            "private mean is mostly noise.",
        )
    )

# ---- groups -----------------------------------------------------------------------------
# A start with no column, or a numeric column still waiting for its edges, is a normal state:
# the hint above says what to do, so the groups wait without a red error.
if not state.strata_columns:
    groups_box.info(
        "Choose one or more grouping columns above to see the groups they make.",
        icon=":material/info:",
    )
    stop_page()
if columns_without_edges:
    stop_page()
# Shares from a table are checked further down, next to the table, so build the groups first.
# Noisy-count shares cannot fail, and their rule keeps every group for the release to decide.
grouping_state = (
    state
    if state.share_source in ("holdout", "noisy_counts")
    else dataclasses.replace(state, share_source="data")
)
with groups_box:
    grouping = pipeline.current_grouping_or_error(grouping_state)
    if grouping is None:
        stop_page()

    if state.small_groups == "keep":
        st.caption("Policy: every group is kept, whatever its size.")
    elif grouping.shares.rule is not None:
        st.caption(noisy_small_groups.policy_caption(grouping.shares.rule))
    else:
        policy_text = (
            f"merged into “{OTHER_LABEL}”" if state.small_groups == "merge"
            else "dropped (not estimated)"
        )  # fmt: skip
        st.caption(
            f"Policy: groups with fewer than {state.min_group_size:,} rows are {policy_text}."
        )
    for message in grouping.report.messages():
        st.info(message, icon=":material/info:")

    sizes = charts_strata.group_size_frame(grouping.labels, grouping.sizes)
    n_groups, n_rows, smallest = st.columns(3)
    n_groups.metric("Groups", f"{grouping.k:,}")
    n_rows.metric("Rows used", f"{grouping.n:,}")
    smallest.metric("Smallest group", f"{int(sizes['size'].min()):,} rows")
    if grouping.report.needs_values:  # the rows the estimate uses, said where they are counted
        st.caption(as_written(rows_used_caption(grouping.report, state.share_source)))
    if (warning := data.many_groups_warning(grouping.sizes)) is not None:
        st.warning(warning, icon=":material/warning:")
    st.plotly_chart(charts_strata.group_size_chart(sizes))
    n_small = int(sizes["small"].sum())
    st.caption(
        f"{charts_strata.group_size_summary(sizes)} "
        f"{n_small:,} of {grouping.k:,} groups hold less than {SMALL_GROUP_SHARE:.0%} of the "
        "rows (highlighted): their private estimates will be the noisiest. The sizes are the "
        "curator's view of the confidential data, not differentially private."
    )

# ---- public shares ---------------------------------------------------------------------
if state.share_source == "table":
    share_table.render(state, tuple(grouping.labels))
elif state.share_source == "holdout":
    state.holdout_fraction = st.slider(
        "Share of rows set aside as the public holdout",
        min_value=HOLDOUT_FRACTION_MIN,
        max_value=HOLDOUT_FRACTION_MAX,
        value=min(max(state.holdout_fraction, HOLDOUT_FRACTION_MIN), HOLDOUT_FRACTION_MAX),
        step=0.05,
        format="%.2f",
        key="strata.holdout_fraction",
        help="These rows are treated as public and are not used for the private estimates.",
    )
elif noisy:
    st.caption(
        "When group sizes are kept private (Estimator page), a release already adds noise to "
        "each group's count. Each group's share is then its noisy count over the sum of the "
        "noisy counts (a negative count counts as 0): protected by differential privacy, at no "
        "extra cost. The exact counts above are the curator's view and are never published."
    )
    noisy_small_groups.render(state, grouping)
else:
    st.warning(
        "**The data's own counts, declared public.** Every release with group rows then "
        "publishes each group's exact share of the rows, and with the number of rows each "
        "group's exact size: numbers no noise protects. Choose this only when those sizes are "
        "public already (e.g. from a census); otherwise keep the release's own noisy counts.",
        icon=":material/warning:",
    )
in_use = pipeline.current_grouping_or_error(state)
if in_use is not None:
    st.success(
        f"Shares in use: {as_written(in_use.shares.description)}.", icon=":material/check_circle:"
    )

# ---- theory: how uneven are the groups? -------------------------------------------------
st.subheader("How much extra error does stratifying cost?")
# Declared groups with no rows have no size to take the log of; the figure is about the others.
occupied = grouping.sizes[grouping.sizes > 0]
if occupied.size < 2:
    st.info("Fewer than two groups have rows: there is nothing to compare.", icon=":material/info:")
    stop_page()
shares_key = tuple(round(float(s), 6) for s in occupied / grouping.n)
alpha = pipeline.fitted_alpha(shares_key)
observed = theory.observed_log_sizes(occupied)
st.metric("How uneven the group sizes are (α)", three_digits(alpha))
st.markdown(
    "α sums up how uneven the groups are: a small α (well below 1) means one or two groups hold "
    "most people and the rest are small; a large α means groups of similar size."
)
curves = charts_strata.log_size_curves(grouping.n, occupied.size, charts_strata.alpha_grid(alpha))
empty = grouping.k - occupied.size
st.plotly_chart(
    charts_strata.figure1_chart(
        curves, n=grouping.n, k=occupied.size, alpha_fit=alpha, observed=observed, empty=empty
    )
)
st.markdown(charts_strata.figure1_summary(grouping.n, occupied.size, alpha, observed, empty))
st.caption(
    "After Figure 1 of Rosenblatt, Stoyanovich & Musco (AAAI 2024). The noise that stratifying "
    "adds to the population estimate grows with the sum of the logs of the group sizes "
    "(Σ log|G_i|, the vertical axis; point at a line to see its formula). It is largest when all "
    "groups are equal (top dashed line) and smallest when one group holds almost everyone "
    "(bottom dotted line); the solid curve is its expected value when group shares look like "
    "random draws with unevenness α (a Dirichlet α; for very small α it falls below the best "
    "case and leaves the chart: the bound is loose there). The diamond is this dataset: the "
    "closer it sits to the bottom line, the less extra error stratifying costs the population "
    "estimate."
)
