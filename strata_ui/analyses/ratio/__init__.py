"""The calibration ratio's widgets on every page (:data:`UI`)."""

from __future__ import annotations

from dpcore.analyses.ratio import RATIO
from dpcore.release import ReleasePlan
from strata_ui.analyses.base import AnalysisUI
from strata_ui.analyses.ratio import widgets
from strata_ui.analyses.ratio.learn import EXPLAINERS, PRESETS


class RatioUI(AnalysisUI):
    analysis = RATIO
    explainers = EXPLAINERS
    presets = PRESETS

    def render_estimator(self) -> None:
        widgets.render_estimator()

    def render_compare(self) -> None:
        widgets.render_compare()

    def current_plan(self) -> ReleasePlan:
        return widgets.current_plan()


UI = RatioUI()
