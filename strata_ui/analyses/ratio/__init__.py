"""The calibration ratio's widgets on every page (:data:`UI`)."""

from __future__ import annotations

from dpcore.foundations.accounting import Budget
from dpcore.foundations.errors import SettingsError

from dpcore.analyses.ratio import RATIO, RatioSettings
from dpcore.release import ReleasePlan
from strata_ui import pipeline
from strata_ui.analyses.base import AnalysisUI
from strata_ui.analyses.ratio import compare, preview, session, settings
from strata_ui.analyses.ratio.learn import EXPLAINERS, PRESETS
from strata_ui.analyses.ratio.view import RatioView
from strata_ui.state import get_settings, get_state


class RatioUI(AnalysisUI):
    analysis = RATIO
    explainers = EXPLAINERS
    presets = PRESETS
    address_view = (RatioView, ("show_exact", "replicates", "bootstrap"))

    def render_estimator(self) -> None:
        preview.render(settings.render_settings())

    render_compare = staticmethod(compare.render_compare)

    def current_plan(self, budget: Budget | None = None) -> ReleasePlan:
        state, chosen = get_state(), get_settings(RatioSettings)
        budget = pipeline.release_budget(state, budget)
        try:
            session.check(chosen, budget)
        except SettingsError as exc:
            raise ValueError(f"{exc} Fix it on the Estimator page.") from None
        stats = pipeline.current_statistics(RATIO, chosen)
        return RATIO.plan(stats, chosen, pipeline.plan_header(state, budget))


UI = RatioUI()
