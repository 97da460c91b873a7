"""The mean's widgets on every page (:data:`UI`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.analyses.mean import MEAN, MeanSettings
from strata_ui import pipeline
from strata_ui.analyses.base import AnalysisUI
from strata_ui.analyses.mean import compare, settings
from strata_ui.analyses.mean.explainers import EXPLAINERS
from strata_ui.analyses.mean.presets import PRESETS
from strata_ui.state import get_settings, get_state, reset_settings
from strata_ui.text import as_written

PREVIEW_BANNER = "Preview — uses the confidential data; not a release."


class MeanUI(AnalysisUI):
    analysis = MEAN
    explainers = EXPLAINERS
    presets = PRESETS
    address_view = (compare.MeanView, ("vanilla_strategy", "log_axis", "sweep_metric", "measure"))

    def render_estimator(self) -> None:
        chosen = settings.render_estimator_settings()
        settings.render_configured(chosen)
        _render_preview(chosen)

    render_compare = staticmethod(compare.render_compare)

    def render_data_choices(self, kinds: dict[str, str]) -> None:
        settings.render_value_column()

    def columns_not_for_grouping(self) -> tuple[str, ...]:
        value = get_settings(MeanSettings).value
        return () if value is None else (value,)

    def render_budget_choices(self) -> None:
        settings.render_budget_split()

    def render_release_options(self) -> None:
        settings.render_strategy_choice()
        settings.render_interval_choice()

    def on_dataset_change(self, *, demo: bool) -> None:
        # Bounds are public facts about the value column; the old ones say nothing of new data.
        # The defaults fit the demo data (hours per week, 0–100).
        restored = (
            MeanSettings() if demo else MeanSettings(value=None, clip_low=None, clip_high=None)
        )
        reset_settings(MeanSettings, value=restored.value, clip_low=restored.clip_low,
                        clip_high=restored.clip_high)  # fmt: skip


def _render_preview(chosen: MeanSettings) -> None:
    """One simulated release of the planned estimates, in an expander (numpy noise, seeded)."""
    state = get_state()
    with st.expander("Preview: one simulated release", icon=":material/visibility:"):
        st.info(
            f"{PREVIEW_BANNER} The noise is drawn once with the Compare page's seed; a real "
            "release on the Release page draws fresh noise with OpenDP.",
            icon=":material/visibility:",
        )
        try:
            values = pipeline.current_statistics(MEAN, chosen)
            header = pipeline.plan_header(state, pipeline.page_budget(state))
            result = MEAN.preview(values, chosen, header, rng=state.seed)
        except (ValueError, TypeError) as exc:
            st.caption(f"No preview yet: {as_written(exc)}")
            return
        table = pd.DataFrame(
            {
                "group": [*values.labels, "All"],
                "rows": [*values.sizes.tolist(), values.n],
                "DP estimate (simulated)": [
                    *result.group_estimates.tolist(),
                    float(result.global_estimate),
                ],  # fmt: skip
            }
        )
        found = result.bounds
        if found is not None:  # DP outputs of this simulated release, as a release publishes
            lows, highs = (np.broadcast_to(b, (values.k,)) for b in (found.low, found.high))
            whole_low, whole_high = (float(b[0]) for b in found.envelope())
            table["bounds found (simulated)"] = [
                *(f"[{lo:.4g}, {hi:.4g}]" for lo, hi in zip(lows, highs, strict=True)),
                f"[{whole_low:.4g}, {whole_high:.4g}]",
            ]
        st.dataframe(table, hide_index=True, key="mean.table.preview")
        st.caption(
            "The curator's view: the rows per group come from the data without noise. The "
            f"estimates follow the strategy chosen on the Release page ({chosen.strategy})."
            + (
                ""
                if found is None
                else " The bounds were found privately in this simulated release, as a release "
                "finds them, and clip its estimates."
            )
        )


UI = MeanUI()
