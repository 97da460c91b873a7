"""The GVDP estimator's widgets on every page (:data:`UI`)."""

from __future__ import annotations

import plotly.graph_objects as go

from dpcore.analyses.gvdp import GVDP
from dpcore.release import ReleasePlan, ReleaseRecord
from strata_ui.analyses.base import AnalysisUI
from strata_ui.analyses.gvdp import charts, widgets
from strata_ui.analyses.gvdp.learn import EXPLAINERS, PRESETS


class GvdpUI(AnalysisUI):
    analysis = GVDP
    explainers = EXPLAINERS
    presets = PRESETS

    def render_estimator(self) -> None:
        widgets.render_estimator()

    def render_compare(self) -> None:
        widgets.render_compare()

    def current_plan(self) -> ReleasePlan:
        return widgets.current_plan()

    def release_figure(self, record: ReleaseRecord) -> go.Figure:
        """One panel per coefficient: coefficients differ in scale."""
        return charts.release_figure(record)


UI = GvdpUI()
