"""The analyses a user can choose on the Estimator page, and where each one's widgets live.

The stratified mean is built into the Estimator, Compare and Release pages. Every other analysis
is a module ``strata_ui.<name>_ui`` with three functions the pages call:

- ``render_estimator()``: its settings, drawn on the Estimator page;
- ``render_compare()``: its simulation views, drawn on the Compare page;
- ``current_plan()``: the release it would commit (a plan accepted by
  :func:`dpcore.release.release`), or raise ``ValueError`` saying what to fix.

Each keeps its choices in its own settings dataclass through :func:`strata_ui.state.get_settings`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

ANALYSIS_LABELS = {
    "mean": "Mean per group (stratified)",
    "ratio": "Ratio of sums (calibration ratio)",
    "gvdp": "General estimator with valid CIs",
    "synth": "Synthetic data",
}
ANALYSIS_HELP = {
    "mean": "The average of one column in each group and overall, with Laplace, Gaussian or "
    "CoinPress noise.",
    "ratio": "Σ score / Σ label per group: is a classifier equally calibrated across groups? "
    "With confidence intervals that stay valid under DP noise.",
    "gvdp": "A mean, regression or logistic coefficient with an unbiased DP estimate and a valid "
    "confidence interval, even with very loose bounds.",
    "synth": "Privately generated rows: does a synthetic release treat small groups fairly?",
}


def module_for(analysis: str) -> ModuleType:
    """The module holding ``analysis``'s widgets (not the built-in mean)."""
    if analysis not in ANALYSIS_LABELS or analysis == "mean":
        raise ValueError(
            f"`analysis` must be one of {sorted(ANALYSIS_LABELS)[1:]}, got {analysis!r}"
        )
    return importlib.import_module(f"strata_ui.{analysis}_ui")
