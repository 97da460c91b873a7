"""Slow synthesizers (MST and AIM, seconds to minutes a fit): a time estimate before a fit, a
button that starts it, and a progress bar that moves with each group fitted. Results are kept
by their inputs (the data's and groups' key, the settings, the budget, the seed) in
:mod:`strata_ui.shared_results`, so a fit runs once per choice and a rerun shows it again at once.
"""

from __future__ import annotations

import streamlit as st

from dpcore.analyses.synth import estimate_seconds
from dpcore.analyses.synth.config import model_columns, output_columns
from dpcore.planner import duration_text
from strata_ui.analyses.synth.settings import SynthView
from strata_ui.analyses.synth.synthesis import Resolved
from strata_ui.shared_results import kept_or_run
from strata_ui.state import get_settings, update_settings

__all__ = ["duration_text", "fit_seconds", "kept_or_run", "started"]


def fit_seconds(resolved: Resolved, strategies: tuple[str, ...], runs: int = 1) -> float:
    """Expected seconds of ``runs`` syntheses per strategy (:func:`estimate_seconds`)."""
    config, by = resolved.config, resolved.spec.by
    groups = len(resolved.shares.values)
    return sum(
        estimate_seconds(config.method, groups, len(model_columns(config, by)), runs)
        if strategy == "stratified"
        else estimate_seconds(config.method, 1, len(output_columns(config, by)), runs)
        for strategy in strategies
    )


def started(key: tuple, label: str, seconds: float, button_key: str) -> bool:
    """Whether the fit that ``key`` stands for has been asked for: shows the time estimate and
    a button until it is, then remembers it for the session (the result is cached)."""
    token = repr(key)
    if token in get_settings(SynthView).started:
        return True
    st.info(
        f"{label} takes {duration_text(seconds)} here (estimated from measured seconds per group "
        "and column; 2 cores). It runs once for these settings and is then kept.",
        icon=":material/schedule:",
    )
    if st.button(
        f"Run it ({duration_text(seconds)})", key=button_key, icon=":material/play_arrow:"
    ):
        update_settings(SynthView, started=(*get_settings(SynthView).started, token))
        return True
    return False
