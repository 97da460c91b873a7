r"""The stratification paper's synthetic-data finding rebuilt on the demo: stratified against
vanilla MST, per-group 3-way workload error (Rosenblatt, Stoyanovich & Musco, AAAI 2024 arXiv,
appendix C, Fig. 9 and Def. 14).

The paper states its budgets as ε ∈ {0.01, 0.05, 0.1, 0.5, 1, 5} ("Synthesizers and Privacy
Settings", the settings of McKenna et al. 2022), whose MST and AIM run in ρ-zCDP at the ρ that
gives (ε, δ)-DP; the paper does not state δ, so we take AIM's δ = 10⁻⁹ and the conversion of
Canonne, Kamath & Steinke (2020, Prop. 12; :meth:`~dpcore.foundations.accounting.ZCDP.to_approx_dp`).
"""

from __future__ import annotations

import pandas as pd

from dpcore.analyses.synth.config import SynthConfig, prepare_rows
from dpcore.analyses.synth.synthesizers import Progress
from dpcore.analyses.synth.workload import sweep_errors
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.grouping import GroupingSpec

__all__ = ["FIGURE9_DELTA", "FIGURE9_EPSILONS", "figure9_config", "figure9_errors", "paper_rho"]


FIGURE9_EPSILONS = (0.1, 0.5, 1.0, 5.0)
"""The paper's ε values offered (its 0.01 and 0.05 leave our small groups pure noise)."""


FIGURE9_DELTA = 1e-9
"""δ of the (ε, δ) the paper's budgets are read as (AIM's default; the paper states none)."""


def paper_rho(epsilon: float, delta: float = FIGURE9_DELTA) -> float:
    r"""The largest ρ whose ρ-zCDP implies (ε, δ)-DP (CKS 2020, Prop. 12), found by root
    search on :meth:`ZCDP.to_approx_dp`, which is increasing in ρ."""
    from scipy.optimize import brentq  # deferred: slow to import, rarely needed

    def excess(log_rho: float) -> float:
        return ZCDP(10.0**log_rho).to_approx_dp(delta).epsilon - epsilon

    return 10.0 ** brentq(excess, -12, 3, xtol=1e-12)


def figure9_config() -> SynthConfig:
    """The demo's columns for the preset: the synthesis analysis' defaults with MST."""
    return SynthConfig(
        columns=("age", "workclass", "education", "marital_status", "hours_per_week",
                 "income_over_50k"),
        method="mst", n_rows=10_000,
        edges=(("age", (25.0, 35.0, 45.0, 55.0, 65.0)), ("hours_per_week", (20.0, 35.0, 41.0, 50.0))),
        categorical=("income_over_50k",),
    )  # fmt: skip


def figure9_errors(
    frame: pd.DataFrame,
    epsilon: float,
    *,
    runs: int = 1,
    rng: int = 0,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """Per-group 3-way error of vanilla and stratified MST on ``frame`` (the demo) by race ×
    sex, at the ρ of the paper's ``epsilon`` (:func:`paper_rho`); a
    :func:`~dpcore.analyses.synth.sweep_errors` frame whose ``epsilon`` column is the ε MST
    is called with (ρ = ε²/2) and a column ``paper_epsilon``."""
    spec = GroupingSpec(by=("race", "sex"))
    grouping = spec.build(frame)
    config = figure9_config()
    prepared = prepare_rows(frame, spec, grouping, config)
    run_epsilon = (2 * paper_rho(epsilon)) ** 0.5
    errors = sweep_errors(
        prepared, config, spec, grouping.shares, epsilons=(run_epsilon,), runs=runs, rng=rng,
        progress=progress,
    )  # fmt: skip
    return errors.assign(paper_epsilon=epsilon)
