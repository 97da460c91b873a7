"""The GVDP estimator's widgets on every page (:data:`UI`): the settings (:mod:`.settings`), the
Estimator page's preview (:mod:`.estimator`), the Compare page's coverage study (:mod:`.compare`)
and its charts (:mod:`.charts`); view-only choices are a :class:`.view.GvdpView`."""

from __future__ import annotations

import plotly.graph_objects as go

from dpcore.analyses.gvdp import GVDP
from dpcore.release import ReleaseRecord
from strata_ui.analyses.base import AnalysisUI
from strata_ui.analyses.gvdp import charts, compare, estimator
from strata_ui.analyses.gvdp import settings as settings_widgets
from strata_ui.analyses.gvdp.learn import EXPLAINERS, PRESETS
from strata_ui.analyses.gvdp.view import GvdpView


class GvdpUI(AnalysisUI):
    analysis = GVDP
    explainers = EXPLAINERS
    presets = PRESETS
    address_view = (GvdpView, ("coverage_source", "replications", "synthetic_factor"))

    render_estimator = staticmethod(estimator.render_estimator)
    render_compare = staticmethod(compare.render_compare)
    render_release_options = staticmethod(settings_widgets.render_uninformative_choice)

    def release_figure(self, record: ReleaseRecord) -> go.Figure:
        """One panel per coefficient: coefficients differ in scale."""
        return charts.release_figure(record)


UI = GvdpUI()
