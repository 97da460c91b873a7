"""The synthetic data's widgets on every page (:data:`UI`)."""

from __future__ import annotations

from dpcore.analyses.synth import SYNTH
from dpcore.release import ReleasePlan, ReleaseRecord
from strata_ui.analyses.base import AnalysisUI
from strata_ui.analyses.synth import widgets


class SynthUI(AnalysisUI):
    analysis = SYNTH
    has_intervals = False
    release_rows = "The synthetic rows"

    def render_estimator(self) -> None:
        widgets.render_estimator()

    def render_compare(self) -> None:
        widgets.render_compare()

    def current_plan(self) -> ReleasePlan:
        return widgets.current_plan()

    def render_record(self, record: ReleaseRecord, key: str) -> bool:
        widgets.render_record(record, key)
        return True


UI = SynthUI()
