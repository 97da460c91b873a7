"""The private sample's widgets on every page (:data:`UI`): Raskhodnikova, Sivakumar, Smith &
Swanberg (NeurIPS 2021).

- :mod:`.settings`: the sampler, columns and their public categories, group and records;
- :mod:`.estimator`: the Estimator page, with a preview (simulation noise, never downloadable);
- :mod:`.compare`: the Compare page, one record's distance to the group across budgets;
- :mod:`.release`: a committed sample on the Release page;
- :mod:`.learn`: the Learn explainer, sampling against learning;
- :mod:`.charts`: the figures (no streamlit).
"""

from __future__ import annotations

from dpcore.analyses.sample import SAMPLE, SamplePlan
from dpcore.foundations.accounting import Budget
from dpcore.release import ReleaseRecord
from strata_ui.analyses.base import AnalysisUI
from strata_ui.analyses.sample import compare, estimator, release, session
from strata_ui.analyses.sample.learn import EXPLAINERS
from strata_ui.analyses.sample.settings import SampleView


class SampleUI(AnalysisUI):
    analysis = SAMPLE
    has_intervals = False
    release_rows = "The private records"
    address_view = (SampleView, ("seed", "runs"))
    explainers = EXPLAINERS

    render_estimator = staticmethod(estimator.render_estimator)
    render_compare = staticmethod(compare.render_compare)

    def current_plan(self, budget: Budget | None = None) -> SamplePlan:
        return session.current_plan(budget)

    def render_record(self, record: ReleaseRecord, key: str) -> bool:
        release.render_record(record, key)
        return True


UI = SampleUI()
