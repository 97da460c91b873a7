"""Monte Carlo engine: many replicates of a strategy's DP noise on one fixed dataset.

Vectorized over replicates and groups: replicates run in fixed-size chunks of arrays (the chunk
size is a constant so a seed always gives the same numbers, whatever the caller's progress
reporting), never in a Python loop per replicate. Simulation noise is numpy's; nothing here spends
privacy budget, and every number here comes from the confidential data (a preview, not a release).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from dpcore._validate import as_rng, positive_int
from dpcore.accounting import Budget
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import MeanEstimator, Strategy, run_strategy
from dpcore.mechanisms import SimulationNoise
from dpcore.metrics import normalized_error, parity_error
from dpcore.shares import PublicShares

__all__ = [
    "GLOBAL_LABEL",
    "SWEEP_METRICS",
    "budget_sweep",
    "summarize_sweep",
    "group_summary",
    "monte_carlo",
    "parity_by_replicate",
    "replicate_metrics",
]

GLOBAL_LABEL = "All (global)"
SWEEP_METRICS = ("global", "worst group", "parity")
"""The errors a privacy–utility curve follows (columns of :func:`replicate_metrics`)."""
CHUNK = 250
Progress = Callable[[int, int], None]


def _estimates(
    strata: GroupValues,
    estimator: MeanEstimator,
    budget: Budget,
    strategy: Strategy,
    shares: PublicShares | np.ndarray,
    global_fraction: float,
    replicates: int,
    rng: np.random.Generator,
    progress: Progress | None,
) -> tuple[np.ndarray, np.ndarray]:
    """(replicates, k) group estimates and (replicates,) global estimates, chunk by chunk."""
    noise = SimulationNoise(rng=rng)
    groups, whole = [], []
    for start in range(0, replicates, CHUNK):
        size = min(CHUNK, replicates - start)
        result = run_strategy(
            strategy, strata, estimator, budget, shares,
            global_fraction=global_fraction, replicates=size, noise=noise,
        )  # fmt: skip
        groups.append(result.group_estimates)
        whole.append(result.global_estimate)
        if progress is not None:
            progress(start + size, replicates)
    return np.concatenate(groups), np.concatenate(whole)


def _default_shares(values: GroupValues) -> np.ndarray:
    """The values' public shares, else their group counts treated as public."""
    if values.shares is not None:
        return values.shares.values
    return values.sizes / values.n


def monte_carlo(
    strata: GroupValues,
    estimator: MeanEstimator,
    budget: Budget,
    *,
    strategy: Strategy = "stratified",
    shares: PublicShares | np.ndarray | None = None,
    global_fraction: float = 0.5,
    replicates: int = 1000,
    rng: np.random.Generator | int | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """Simulate ``replicates`` releases of ``strategy`` and score each against the true means.

    Returns a tidy frame with one row per replicate and group, plus one row per replicate for the
    global estimate (``group == GLOBAL_LABEL``, ``level == "global"``). Columns: ``replicate``,
    ``group``, ``level``, ``size``, ``estimate``, ``truth``, ``error`` (normalized absolute error,
    :func:`dpcore.metrics.normalized_error`). ``shares`` default to the
    values' own public shares (else their counts, treated as public). ``progress(done, total)`` is called after each chunk.
    """
    replicates = positive_int("replicates", replicates)
    shares = _default_shares(strata) if shares is None else shares
    groups, whole = _estimates(
        strata, estimator, budget, strategy, shares, global_fraction, replicates, as_rng(rng),
        progress,
    )  # fmt: skip
    k = strata.k
    estimate = np.column_stack([groups, whole]).ravel()
    truth = np.tile(np.append(strata.means, strata.global_mean), replicates)
    return pd.DataFrame(
        {
            "replicate": np.repeat(np.arange(replicates), k + 1),
            "group": np.tile(np.array([*strata.labels, GLOBAL_LABEL], dtype=object), replicates),
            "level": np.tile(np.array(["group"] * k + ["global"], dtype=object), replicates),
            "size": np.tile(np.append(strata.sizes, strata.n), replicates),
            "estimate": estimate,
            "truth": truth,
            "error": normalized_error(estimate, truth),
        }
    )


def parity_by_replicate(frame: pd.DataFrame, omega: float | None = None) -> pd.Series:
    """Parity error (AAAI 2024, Def. 10) of each replicate of a :func:`monte_carlo` frame."""
    groups = frame[frame["level"] == "group"]
    wide = groups.pivot(index="replicate", columns="group", values="estimate")
    truth = groups.drop_duplicates("group").set_index("group")["truth"].reindex(wide.columns)
    whole = frame[frame["level"] == "global"].set_index("replicate")
    values = parity_error(
        wide.to_numpy(), truth.to_numpy(), whole["estimate"].reindex(wide.index).to_numpy(),
        float(whole["truth"].iloc[0]), omega,
    )  # fmt: skip
    return pd.Series(values, index=wide.index, name="parity_error")


def replicate_metrics(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per replicate of a :func:`monte_carlo` frame: the global error, the worst group's
    error and the parity error (AAAI 2024, Def. 10, ω = 1/k).

    Errors are normalized absolute errors (fractions, not %), as in :mod:`dpcore.metrics`.
    """
    groups = frame[frame["level"] == "group"]
    whole = frame[frame["level"] == "global"].set_index("replicate")["error"]
    parity = parity_by_replicate(frame).reindex(whole.index)
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
    """Per group of a :func:`monte_carlo` frame: size, mean (normalized) error and its 5th/95th
    percentiles over replicates, and ``abs_mean``, the mean absolute error in the value's units;
    smallest group first."""
    groups = frame[frame["level"] == "group"]
    groups = groups.assign(abs_error=(groups["estimate"] - groups["truth"]).abs())
    summary = groups.groupby("group", sort=False).agg(
        size=("size", "first"),
        mean=("error", "mean"),
        abs_mean=("abs_error", "mean"),
        q05=("error", lambda e: float(np.quantile(e, 0.05))),
        q95=("error", lambda e: float(np.quantile(e, 0.95))),
    )
    return summary.reset_index().sort_values("size", kind="stable", ignore_index=True)


def budget_sweep(
    strata: GroupValues,
    estimator: MeanEstimator,
    budgets: Sequence[Budget],
    strategies: Sequence[Strategy],
    *,
    shares: PublicShares | None = None,
    global_fraction: float = 0.5,
    replicates: int = 200,
    rng: np.random.Generator | int | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """The privacy–utility curve: error summaries for every (budget, strategy) pair.

    Returns one row per budget, strategy and metric (``global``, ``worst group``, ``parity``) with
    the mean and the 5th/95th percentiles over replicates (the bands).
    """
    generator = as_rng(rng)
    runs = []
    total = len(budgets) * len(strategies)
    for i, budget in enumerate(budgets):
        for j, strategy in enumerate(strategies):
            frame = monte_carlo(
                strata, estimator, budget, strategy=strategy, shares=shares,
                global_fraction=global_fraction, replicates=replicates, rng=generator,
            )  # fmt: skip
            value = next(iter(budget.components().values()))
            runs.append((value, strategy, replicate_metrics(frame)))
            if progress is not None:
                progress(i * len(strategies) + j + 1, total)
    return summarize_sweep(runs)


def summarize_sweep(runs: Iterable[tuple[float, str, pd.DataFrame]]) -> pd.DataFrame:
    """The privacy–utility curve of ``(budget value, strategy, replicate_metrics frame)`` runs:
    one row per budget, strategy and metric (``global``, ``worst group``, ``parity``) with the
    mean and the 5th/95th percentiles over replicates (the bands)."""
    rows = []
    for value, strategy, metrics in runs:
        for metric in SWEEP_METRICS:
            errors = metrics[metric].to_numpy()
            low, high = np.quantile(errors, [0.05, 0.95])
            rows.append((value, strategy, metric, errors.mean(), low, high))
    return pd.DataFrame(rows, columns=["budget", "strategy", "metric", "mean", "q05", "q95"])
