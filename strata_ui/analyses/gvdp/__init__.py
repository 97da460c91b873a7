"""The GVDP estimator's widgets on every page (:data:`UI`): the settings (:mod:`.settings`), the
Estimator page's preview (:mod:`.estimator`), the Compare page's coverage study (:mod:`.compare`)
and its charts (:mod:`.charts`); view-only choices are a :class:`.view.GvdpView`."""

from __future__ import annotations

import plotly.graph_objects as go

from dpcore.analyses.gvdp import GVDP, GvdpSettings
from dpcore.release import ReleaseRecord
from strata_ui.analyses.base import AnalysisUI
from strata_ui.analyses.gvdp import charts, compare, estimator
from strata_ui.analyses.gvdp import settings as settings_widgets
from strata_ui.analyses.gvdp.learn import EXPLAINERS, PRESETS
from strata_ui.analyses.gvdp.view import GvdpView
from strata_ui.state import reset_settings


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

    def on_dataset_change(self, *, demo: bool) -> None:
        # The demo's boxes are public figures from outside knowledge; on other data nobody has
        # typed a box yet, and the generic one is far too wide: the box is found privately by
        # default there (a share of ρ, said on the Estimator page before any commit).
        reset_settings(GvdpSettings, box_source="typed" if demo else "private")


UI = GvdpUI()
