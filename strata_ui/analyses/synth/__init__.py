"""The synthetic data's widgets on every page (:data:`UI`): AAAI 2024 arXiv, "Stratified Data
Synthesis" and appendix C.

- :mod:`.settings`: the synthesizer, columns, public bucket edges, vanilla or stratified, rows
  and seed (:class:`~dpcore.analyses.synth.SynthSettings` and :class:`.settings.SynthView`);
- :mod:`.estimator`: the Estimator page, with a preview of DP synthetic rows (simulation noise,
  never downloadable);
- :mod:`.compare`: the Compare page, per-group 3-way workload error of vanilla and stratified
  synthesis, and the overall, worst-group and parity error across ε;
- :mod:`.release`: a committed synthetic release on the Release page (its rows, a chart, and
  CSV / JSON / script downloads);
- :mod:`.synthesis`: the session's checked synthesis, shared by the three pages;
- :mod:`.slow`: time estimate, start button and progress bar of MST and AIM;
- :mod:`.learn`: the paper's appendix C finding rebuilt with MST (a Learn preset).

The groups come from the Strata page and ε from the Budget page. Numerics live in
:mod:`dpcore.analyses.synth`, figures in :mod:`strata_ui.analyses.synth.charts`.
"""

from __future__ import annotations

from dpcore.analyses.synth import SYNTH, SynthSettings
from dpcore.analyses.synth.config import PreparedRows
from dpcore.foundations.accounting import Budget
from dpcore.release import ReleaseRecord
from strata_ui.analyses.base import AnalysisUI
from strata_ui.analyses.synth import compare, estimator, learn, release
from strata_ui.analyses.synth.settings import SynthView
from strata_ui.analyses.synth.synthesis import resolve


class SynthUI(AnalysisUI):
    analysis = SYNTH
    has_intervals = False
    release_rows = "The synthetic rows"
    address_view = (SynthView, ("seed", "runs"))

    render_estimator = staticmethod(estimator.render_estimator)
    render_compare = staticmethod(compare.render_compare)
    presets = learn.PRESETS

    def plan_statistics(self, settings: SynthSettings, budget: Budget) -> PreparedRows:
        """The rows, once checked for the release's strategy."""
        return resolve((settings.strategy,)).stats

    def render_record(self, record: ReleaseRecord, key: str) -> bool:
        release.render_record(record, key)
        return True


UI = SynthUI()
