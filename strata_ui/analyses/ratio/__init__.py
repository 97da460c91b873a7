"""The calibration ratio's widgets on every page (:data:`UI`)."""

from __future__ import annotations

from dpcore.analyses.ratio import RATIO, GroupRatioSums, RatioSettings
from dpcore.foundations.accounting import Budget
from dpcore.foundations.errors import SettingsError
from strata_ui import pipeline
from strata_ui.analyses.base import AnalysisUI
from strata_ui.analyses.ratio import compare, preview, session, settings
from strata_ui.analyses.ratio.learn import EXPLAINERS, PRESETS
from strata_ui.analyses.ratio.view import RatioView


class RatioUI(AnalysisUI):
    analysis = RATIO
    explainers = EXPLAINERS
    presets = PRESETS
    address_view = (RatioView, ("show_exact", "replicates", "bootstrap"))

    def render_estimator(self) -> None:
        preview.render(settings.render_settings())

    render_compare = staticmethod(compare.render_compare)

    def plan_statistics(self, settings: RatioSettings, budget: Budget) -> GroupRatioSums:
        """The sums, once the settings are checked against the budget (a Gaussian needs δ)."""
        try:
            session.check(settings, budget)
        except SettingsError as exc:
            raise ValueError(f"{exc} Fix it on the Estimator page.") from None
        return pipeline.current_statistics(RATIO, settings)


UI = RatioUI()
