"""From the session's choices to dpcore objects, cached so a rerun never redoes a pass over rows.

Pages call these and show any ``ValueError``/``TypeError`` with ``st.error``: every message is
written for the user. Caches are keyed on primitives (dataset fingerprint, column names, numbers,
frozen dataclasses) and, for simulations, a seed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.accounting import ZCDP, Budget, PureDP, pure_epsilon_within
from dpcore.analyses.mean import simulate
from dpcore.analyses.mean.coinpress import CoinPressMean
from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.analyses.mean.plan import MeanPlan
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import Strategy
from dpcore.grouping import Grouping, GroupingSpec
from dpcore.release import DatasetRef, PlanHeader
from strata_ui import constants
from strata_ui.state import AppState, get_dataset

Estimator = LaplaceMean | GaussianMean | CoinPressMean

ESTIMATOR_LABELS = {
    "laplace": "Laplace mean (ε-DP)",
    "gaussian": "Gaussian mean (ρ-zCDP)",
    "coinpress": "CoinPress (ρ-zCDP, adaptive)",
}
SHARE_SOURCE_LABELS = {
    "data": "Group counts from the data, treated as public",
    "table": "A table of public shares (e.g. census figures)",
    "holdout": "A public holdout split of the data",
}


def grouping_spec(state: AppState) -> GroupingSpec:
    """The session's grouping choices as a :class:`~dpcore.grouping.GroupingSpec`."""
    if not state.strata_columns:
        raise ValueError("Choose at least one column to group by on the Strata page.")
    return GroupingSpec(
        by=tuple(state.strata_columns),
        edges=tuple(
            (column, tuple(state.bucket_edges[column]))
            for column in state.strata_columns
            if column in state.bucket_edges
        ),
        min_group_size=state.min_group_size,
        small_groups=state.small_groups,
        share_source=state.share_source,
        share_table=tuple(state.share_table.items()) if state.share_source == "table" else (),
        holdout_fraction=state.holdout_fraction if state.share_source == "holdout" else None,
    )


@st.cache_data(max_entries=16, show_spinner="Grouping rows…")
def _build_grouping(_frame: pd.DataFrame, fingerprint: str, spec: GroupingSpec) -> Grouping:
    """One pass over the grouping columns per distinct spec (``fingerprint`` stands for
    ``_frame``)."""
    return spec.build(_frame)


def current_grouping(state: AppState) -> Grouping:
    """The session's groups and recombination shares; ``ValueError`` explains what to fix."""
    return _build_grouping(get_dataset(), state.dataset_fingerprint, grouping_spec(state))


def grouping_key(state: AppState) -> tuple:
    """Everything that determines the groups, as a hashable cache key."""
    return (state.dataset_fingerprint, grouping_spec(state))


@st.cache_data(max_entries=16, show_spinner="Sorting each group's values…")
def _build_values(_grouping: Grouping, _frame: pd.DataFrame, key: tuple, value: str) -> GroupValues:
    """The mean's statistics per grouping and value column (``key`` stands for the grouping)."""
    return GroupValues.from_grouping(_grouping, _frame, value)


def current_values(state: AppState) -> GroupValues:
    """Each group's values of the value column (the mean's statistics), cached."""
    if state.value_column is None:
        raise ValueError("Choose the value column to estimate on the Data page.")
    grouping = current_grouping(state)
    return _build_values(grouping, get_dataset(), grouping_key(state), state.value_column)


def current_estimator(state: AppState) -> Estimator:
    """The estimator configured on the Estimator page."""
    if state.clip_low is None or state.clip_high is None:
        raise ValueError(
            "Enter public lower and upper bounds for the value on the Estimator page. They must "
            "come from outside knowledge (e.g. 0 to 100 hours a week), never from the data."
        )
    bounds = (state.clip_low, state.clip_high)
    if state.estimator == "laplace":
        return LaplaceMean(bounds=bounds, n_public=state.n_public)
    if state.estimator == "gaussian":
        return GaussianMean(bounds=bounds, n_public=state.n_public)
    return CoinPressMean(
        prior=bounds, sigma=state.coinpress_sigma, steps=state.coinpress_steps,
        beta=state.coinpress_beta,
    )  # fmt: skip


def budget_for(state: AppState, value: float | None = None) -> Budget:
    """The per-release budget in the estimator's own accounting.

    Laplace is ε-DP; a ρ-zCDP budget runs it at ε = √(2ρ), which is ρ-zCDP (Bun & Steinke 2016,
    Prop. 1.4). Gaussian and CoinPress satisfy zCDP but never pure ε-DP, so an ε budget is refused.
    ``value`` overrides the slider's ε or ρ (for sweeps).
    """
    if state.budget_kind == "pure":
        epsilon = state.epsilon if value is None else value
        if state.estimator != "laplace":
            raise ValueError(
                f"The {ESTIMATOR_LABELS[state.estimator]} adds Gaussian noise, which cannot meet "
                "pure ε-DP. Switch the Budget page to ρ-zCDP, or choose the Laplace mean."
            )
        return PureDP(epsilon)
    rho = state.rho if value is None else value
    return PureDP(pure_epsilon_within(rho)) if state.estimator == "laplace" else ZCDP(rho)


@st.cache_data(max_entries=4, show_spinner="Fingerprinting the dataset…")
def _dataset_ref(_frame: pd.DataFrame, fingerprint: str, name: str) -> DatasetRef:
    return DatasetRef.of(_frame, name)


def plan_header(state: AppState, budget: Budget) -> PlanHeader:
    """The header of the release the session would commit at ``budget``: the data in use, the
    groups of the Strata page, and the name and level of the Release page."""
    return PlanHeader(
        dataset=_dataset_ref(get_dataset(), state.dataset_fingerprint, state.dataset_name),
        spec=grouping_spec(state), budget=budget, label=state.release_label,
        level=state.release_level,
    )  # fmt: skip


def current_plan(state: AppState) -> MeanPlan:
    """The release the session would commit: its groups, estimator, budget and strategy."""
    return MeanPlan(
        values=current_values(state), header=plan_header(state, budget_for(state)),
        estimator=current_estimator(state), strategy=state.release_strategy,
        global_fraction=state.global_fraction,
    )  # fmt: skip


# Summaries of Monte Carlo frames for the Compare page's charts (tidy frames, cached per budget).


def replicate_metrics(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per replicate: global error, worst group error and parity error (Def. 10, ω = 1/k).

    Errors are normalized absolute errors (fractions, not %), as in :func:`dpcore.metrics`.
    """
    groups = frame[frame["level"] == "group"]
    whole = frame[frame["level"] == "global"].set_index("replicate")["error"]
    parity = simulate.parity_by_replicate(frame).reindex(whole.index)
    worst = groups.groupby("replicate")["error"].max().reindex(whole.index)
    return pd.DataFrame(
        {
            "replicate": whole.index.to_numpy(),
            "global": whole.to_numpy(),
            "worst group": worst.to_numpy(),
            "parity": parity.to_numpy(),
        }
    )


def group_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per group: size, mean error and its 5th/95th percentiles over replicates, smallest first."""
    groups = frame[frame["level"] == "group"]
    summary = groups.groupby("group", sort=False).agg(
        size=("size", "first"),
        mean=("error", "mean"),
        q05=("error", lambda e: float(np.quantile(e, 0.05))),
        q95=("error", lambda e: float(np.quantile(e, 0.95))),
    )
    return summary.reset_index().sort_values("size", kind="stable", ignore_index=True)


@st.cache_data(max_entries=128, show_spinner=False)
def _metrics(
    _values: GroupValues,
    values_key: tuple,
    estimator: Estimator,
    budget: Budget,
    strategy: Strategy,
    shares: tuple[float, ...],
    global_fraction: float,
    replicates: int,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run the Monte Carlo once per key and keep only its summaries (the frame is not needed)."""
    frame = simulate.monte_carlo(
        _values, estimator, budget, strategy=strategy,
        shares=np.array(shares), global_fraction=global_fraction, replicates=replicates, rng=seed,
    )  # fmt: skip
    return replicate_metrics(frame), group_summary(frame)


def simulate_metrics(
    state: AppState,
    strategy: Strategy,
    budget: Budget | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cached (:func:`replicate_metrics`, :func:`group_summary`) of the session's Monte Carlo run
    (:func:`dpcore.analyses.mean.simulate.monte_carlo`, cached per budget, strategy and seed)."""
    values = current_values(state)
    return _metrics(
        values, (grouping_key(state), state.value_column), current_estimator(state),
        budget_for(state) if budget is None else budget, strategy,
        tuple(float(v) for v in values.shares.values), state.global_fraction, state.replicates,
        state.seed,
    )  # fmt: skip


def sweep_values(state: AppState, points: int = 8) -> tuple[float, ...]:
    """``points`` log-spaced ε (or ρ) values over the slider's range, to 2 significant digits."""
    if state.budget_kind == "pure":
        low, high = constants.EPSILON_MIN, constants.EPSILON_MAX
    else:
        low, high = constants.RHO_MIN, constants.RHO_MAX
    return tuple(float(f"{v:.2g}") for v in np.geomspace(low, high, points))
