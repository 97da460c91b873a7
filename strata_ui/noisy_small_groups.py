"""The Strata page's small-group rule when the release's own noisy counts decide it: the
threshold, what it costs and each group's chance, in plain words.

With shares from the release's noisy counts, merging or dropping small groups reads those noisy
counts at release (:class:`dpcore.foundations.small_groups.NoisyCountRule`), never the exact sizes. Which
groups it merges or drops is known only once the noise is drawn, at commit; before that the page
can only show each group's chance, computed from the exact counts, as a curator's preview.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.foundations.grouping import OTHER_LABEL, Grouping
from dpcore.foundations.small_groups import CountNoise, NoisyCountRule
from strata_ui import pipeline
from strata_ui.analyses import current
from strata_ui.state import AppState, get_settings
from strata_ui.text import as_written

POLICY_LABELS = {
    "merge": f"Merge them into “{OTHER_LABEL}”",
    "drop": "Release only the groups that reach it",
    "keep": "Keep every group",
}
"""The small-group choices when the noisy counts decide (the exact sizes' are the page's)."""

OUTCOME = {
    "merge": f"merged into one group “{OTHER_LABEL}”",
    "drop": "not released (its row in the release says so)",
}


def policy_caption(rule: NoisyCountRule) -> str:
    """One line under the choice: what happens, and that noisy counts decide it."""
    return (
        f"Policy: at release, a group whose **noisy count** is below {rule.min_size:,} is "
        f"{OUTCOME[rule.policy]}. The noisy counts decide, never the exact sizes shown below."
    )


def count_noise(state: AppState) -> CountNoise | None:
    """The noise the current analysis adds to each group's count at the Budget page's budget,
    divided among the rows one person may own as the release divides it; None when it draws no
    noisy counts. ``ValueError``/``TypeError`` say what to fix."""
    analysis = current().analysis
    settings = get_settings(analysis.settings_type)
    unit = pipeline.checked_unit(analysis, state)
    return analysis.count_noise(settings, unit.row_budget(pipeline.page_budget(state)))


def render(state: AppState, grouping: Grouping) -> None:
    """The rule in words, its cost, and each group's chance of clearing the threshold."""
    rule = grouping.shares.rule
    if rule is None:
        return
    st.markdown(
        f"**Small groups decided by noisy counts.** At release every group's count gets random "
        f"noise; the same noisy counts make the shares. A group whose noisy count reaches "
        f"{rule.min_size:,} is released as it is; one below it is {OUTCOME[rule.policy]}. "
        "Because only noisy counts decide, adding or removing one person changes which groups "
        "are released only by chance, never for certain."
    )
    try:
        noise = count_noise(state)
    except (ValueError, TypeError) as exc:
        st.warning(
            f"The noise on the counts is not known yet: {as_written(exc)}",
            icon=":material/warning:",
        )
        return
    if noise is None:
        st.warning(
            "This estimator draws no noisy counts: keep group sizes private with the Laplace or "
            "Gaussian mean (Estimator page) and estimate every group, or choose another source "
            "of shares.",
            icon=":material/warning:",
        )
        return
    st.markdown(
        f"**What it costs: nothing more.** With group sizes kept private, a release already "
        f"spends half of its groups' budget on these noisy counts ({noise.describe()} at the "
        "Budget page's budget). Deciding the small groups reuses them; the budget is spent "
        "once, when you commit on the Release page. Which groups were kept is known only then: "
        "the release lists them, and every download says so."
    )
    if rule.policy == "drop" and grouping.spec.declared:
        st.caption(
            "This is private selection of groups over your declared list: only the groups whose "
            "noisy count clears the threshold are published. Because the list is declared, a "
            "group that no one is in can only appear by chance, so no extra allowance δ is "
            "needed, unlike finding groups that were never declared."
        )
    st.dataframe(
        chance_frame(grouping, noise, rule.min_size),
        hide_index=True,
        column_config={"rows (not published)": st.column_config.NumberColumn(format="localized")},
    )
    st.caption(
        "Each group's chance of reaching the threshold at this budget: a curator's preview "
        "computed from the exact counts, never published."
    )


def chance_frame(grouping: Grouping, noise: CountNoise, threshold: int) -> pd.DataFrame:
    """Per group: its exact rows (curator's view) and its chance of reaching ``threshold``."""
    chance = noise.clear_probability(grouping.sizes, threshold)
    return pd.DataFrame(
        {
            "group": grouping.labels,
            "rows (not published)": grouping.sizes,
            "chance of reaching the threshold": [f"{p:.0%}" for p in chance],
        }
    )
