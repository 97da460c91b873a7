"""The session's private sample, checked: its rows (the analysis' cached statistics) and plan."""

from __future__ import annotations

from dpcore.analyses.sample import SAMPLE, SamplePlan, SampleRows, SampleSettings
from dpcore.foundations.accounting import Budget
from strata_ui import pipeline
from strata_ui.analyses.base import session_plan
from strata_ui.state import get_dataset, get_settings


def current_rows() -> SampleRows:
    """The rows of the chosen columns in the Strata page's groups; ``ValueError`` says what to
    fix."""
    settings = get_settings(SampleSettings)
    SAMPLE.check(settings, get_dataset())
    return pipeline.current_statistics(SAMPLE, settings)


def current_plan(budget: Budget | None = None) -> SamplePlan:
    """The release the session would commit at ``budget`` (None: the Budget page's);
    ``ValueError`` says what to fix."""
    return session_plan(SAMPLE, lambda settings, budget: current_rows(), budget)
