"""Monte Carlo engine: many replicates of a strategy's DP noise on one fixed dataset.

Vectorized over replicates and groups: replicates run in fixed-size chunks of arrays (the chunk
size is a constant so a seed always gives the same numbers, whatever the caller's progress
reporting), never in a Python loop per replicate. Simulation noise is numpy's; nothing here spends
privacy budget, and every number here comes from the confidential data (a preview, not a release).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import MeanEstimator, Strategy, run_strategy
from dpcore.foundations.accounting import Budget
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.metrics import normalized_error, parity_from_errors, worst_group_error
from dpcore.foundations.shares import PublicShares
from dpcore.foundations.validation import as_rng, positive_int

__all__ = [
    "GLOBAL_LABEL",
    "SWEEP_METRICS",
    "Simulation",
    "budget_sweep",
    "summarize_sweep",
    "group_summary",
    "monte_carlo",
    "parity_by_replicate",
    "replicate_metrics",
    "simulate_releases",
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
    """(replicates, k) group estimates and (replicates,) global estimates, chunk by chunk, in
    the public range as a release publishes them (:func:`~dpcore.analyses.mean.strategies.
    recombine_clamped`): a simulated error is the error of a released number."""
    noise = SimulationNoise(rng=rng)
    groups, whole = [], []
    for start in range(0, replicates, CHUNK):
        size = min(CHUNK, replicates - start)
        result = run_strategy(
            strategy, strata, estimator, budget, shares,
            global_fraction=global_fraction, replicates=size, noise=noise,
        )  # fmt: skip
        (low, high), (whole_low, whole_high) = _published_ranges(estimator, result)
        groups.append(np.clip(result.group_estimates, low, high))
        whole.append(np.clip(result.global_estimate, whole_low, whole_high))
        if progress is not None:
            progress(start + size, replicates)
    return np.concatenate(groups), np.concatenate(whole)


def _published_ranges(estimator: MeanEstimator, result) -> tuple[tuple, tuple]:
    """The ranges a release clips its group and population estimates into: the public range,
    or the bounds each simulated release found privately (per group, shape (R, k) or (R, 1),
    and their envelope for the population; :mod:`~dpcore.analyses.mean.found_bounds`)."""
    if result.bounds is None:
        return estimator.public_range, estimator.public_range
    whole_low, whole_high = result.bounds.envelope()
    return (result.bounds.low, result.bounds.high), (whole_low[..., 0], whole_high[..., 0])


def _default_shares(values: GroupValues) -> PublicShares | np.ndarray:
    """The values' shares (whole, so that shares drawn with each release stay so), else their
    group counts treated as public."""
    if values.shares is not None:
        return values.shares
    return values.sizes / values.n


@dataclass(frozen=True, eq=False)
class Simulation:
    """Simulated releases of one strategy as arrays, with the true means they are scored against.

    ``groups`` has shape (R, k) and ``whole`` (R,), one row per replicate (numbered ``ids``).
    Every summary is computed on these arrays: the tidy frame of :func:`monte_carlo`, with one
    row per replicate and group, is only built when asked for (:meth:`frame`), since at
    k = 1,000 groups and R = 1,000 replicates building it, and grouping it back, took most of a
    Compare page's simulation.
    """

    labels: tuple[str, ...]
    sizes: np.ndarray
    n: int
    truth: np.ndarray
    global_truth: float
    groups: np.ndarray
    whole: np.ndarray
    ids: np.ndarray
    absolute_over: float | None = None
    """None: errors relative to each true value (AAAI 2024, Def. 10). A width: absolute errors
    over it (the public range's), for data where a true value is 0 and the relative error is
    undefined."""

    def _error(self, estimate: np.ndarray, truth: np.ndarray | float) -> np.ndarray:
        if self.absolute_over is None:
            return normalized_error(estimate, truth)
        return np.abs(np.subtract(estimate, truth, dtype=float)) / self.absolute_over

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> Simulation:
        """The arrays of a :func:`monte_carlo` frame (groups in their order of appearance)."""
        groups = frame[frame["level"] == "group"]
        labels = pd.unique(groups["group"])
        wide = groups.pivot(index="replicate", columns="group", values="estimate")[labels]
        first = groups.drop_duplicates("group").set_index("group").loc[labels]
        whole = frame[frame["level"] == "global"].set_index("replicate")
        return cls(
            labels=tuple(str(label) for label in labels),
            sizes=first["size"].to_numpy(),
            n=int(whole["size"].iloc[0]),
            truth=first["truth"].to_numpy(),
            global_truth=float(whole["truth"].iloc[0]),
            groups=wide.to_numpy(),
            whole=whole["estimate"].reindex(wide.index).to_numpy(),
            ids=wide.index.to_numpy(),
        )

    def frame(self) -> pd.DataFrame:
        """The tidy frame of :func:`monte_carlo`."""
        reps, k = self.groups.shape
        estimate = np.column_stack([self.groups, self.whole]).ravel()
        truth = np.tile(np.append(self.truth, self.global_truth), reps)
        return pd.DataFrame(
            {
                "replicate": np.repeat(self.ids, k + 1),
                "group": np.tile(np.array([*self.labels, GLOBAL_LABEL], dtype=object), reps),
                "level": np.tile(np.array(["group"] * k + ["global"], dtype=object), reps),
                "size": np.tile(np.append(self.sizes, self.n), reps),
                "estimate": estimate,
                "truth": truth,
                "error": self._error(estimate, truth),
            }
        )

    @cached_property
    def group_errors(self) -> np.ndarray:
        """(R, k) normalized error of each group in each replicate, computed once: every
        summary reads it, and at k = 4,802 groups each computation cost 25–60 ms."""
        return self._error(self.groups, self.truth)

    @cached_property
    def global_errors(self) -> np.ndarray:
        """(R,) normalized error of the population estimate in each replicate."""
        return self._error(self.whole, self.global_truth)

    def parity(self, omega: float | None = None) -> np.ndarray:
        """(R,) parity error of each replicate (AAAI 2024, Def. 10; ω = 1/k by default)."""
        return parity_from_errors(self.group_errors, self.global_errors, omega)

    def metrics(self) -> pd.DataFrame:
        """One row per replicate: the global error, the worst group's error and the parity error
        (fractions, not %), and ``global_abs``, the population estimate's absolute error in the
        value's units; see :func:`replicate_metrics`."""
        return pd.DataFrame(
            {
                "replicate": self.ids,
                "global": self.global_errors,
                "global_abs": np.abs(self.whole - self.global_truth),
                "worst group": worst_group_error(self.group_errors),
                "parity": self.parity(),
            }
        )

    def summary(self) -> pd.DataFrame:
        """Per group: size, mean error with its 5th/95th percentiles over replicates and the mean
        absolute error in the value's units; smallest group first (see :func:`group_summary`)."""
        errors = self.group_errors
        q05, q95 = np.quantile(errors, [0.05, 0.95], axis=0)
        summary = pd.DataFrame(
            {
                "group": list(self.labels),
                "size": self.sizes,
                "mean": errors.mean(axis=0),
                "abs_mean": np.abs(self.groups - self.truth).mean(axis=0),
                "q05": q05,
                "q95": q95,
            }
        )
        return summary.sort_values("size", kind="stable", ignore_index=True)


def simulate_releases(
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
    absolute_over: float | None = None,
) -> Simulation:
    """Simulate ``replicates`` releases of ``strategy``, as arrays; see :func:`monte_carlo`.
    ``absolute_over``: score absolute errors over this width instead of relative ones
    (:attr:`Simulation.absolute_over`)."""
    replicates = positive_int("replicates", replicates)
    shares = _default_shares(strata) if shares is None else shares
    groups, whole = _estimates(
        strata, estimator, budget, strategy, shares, global_fraction, replicates, as_rng(rng),
        progress,
    )  # fmt: skip
    # A kept group with no rows is estimated (and recombined) like the others, but has no true
    # mean to score: the per-group arrays leave it out.
    # (A slice rather than a mask when every group is scored: a masked copy of thousands of
    # groups' replicates cost a tenth of the simulation.)
    scored = slice(None) if strata.sizes.all() else strata.sizes > 0
    return Simulation(
        labels=tuple(np.asarray(strata.labels, dtype=object)[scored]), sizes=strata.sizes[scored],
        n=strata.n, truth=strata.means[scored], global_truth=strata.global_mean,
        groups=groups[:, scored], whole=whole, ids=np.arange(replicates),
        absolute_over=absolute_over,
    )  # fmt: skip


def monte_carlo(
    strata: GroupValues, estimator: MeanEstimator, budget: Budget, **options: Any
) -> pd.DataFrame:
    """Simulate releases of a strategy and score each against the true means: the releases of
    :func:`simulate_releases` with the same ``options`` (``strategy``, ``shares``,
    ``global_fraction``, ``replicates``, ``rng``, ``progress``), as a tidy frame.

    One row per replicate and group, plus one row per replicate for the global estimate
    (``group == GLOBAL_LABEL``, ``level == "global"``). Columns: ``replicate``, ``group``,
    ``level``, ``size``, ``estimate``, ``truth``, ``error`` (normalized absolute error,
    :func:`dpcore.foundations.metrics.normalized_error`). ``shares`` default to the values' own
    public shares (else their counts, treated as public).
    """
    return simulate_releases(strata, estimator, budget, **options).frame()


def parity_by_replicate(frame: pd.DataFrame, omega: float | None = None) -> pd.Series:
    """Parity error (AAAI 2024, Def. 10) of each replicate of a :func:`monte_carlo` frame."""
    simulation = Simulation.from_frame(frame)
    index = pd.Index(simulation.ids, name="replicate")
    return pd.Series(simulation.parity(omega), index=index, name="parity_error")


def replicate_metrics(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per replicate of a :func:`monte_carlo` frame: the global error, the worst group's
    error and the parity error (AAAI 2024, Def. 10, ω = 1/k), and the global error in the
    value's units (``global_abs``).

    Errors are normalized absolute errors (fractions, not %), as in :mod:`dpcore.foundations.metrics`.
    """
    return Simulation.from_frame(frame).metrics()


def group_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per group of a :func:`monte_carlo` frame: size, mean (normalized) error and its 5th/95th
    percentiles over replicates, and ``abs_mean``, the mean absolute error in the value's units;
    smallest group first."""
    return Simulation.from_frame(frame).summary()


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
            simulation = simulate_releases(
                strata, estimator, budget, strategy=strategy, shares=shares,
                global_fraction=global_fraction, replicates=replicates, rng=generator,
            )  # fmt: skip
            value = next(iter(budget.components().values()))
            runs.append((value, strategy, simulation.metrics()))
            if progress is not None:
                progress(i * len(strategies) + j + 1, total)
    return summarize_sweep(runs)


def summarize_sweep(runs: Iterable[tuple[float, str, pd.DataFrame]]) -> pd.DataFrame:
    """The privacy–utility curve of ``(budget value, strategy, replicate_metrics frame)`` runs:
    one row per budget, strategy and metric (``global``, ``worst group``, ``parity``) with the
    mean and the 5th/95th percentiles over the replicates that published an estimate (the
    bands), and ``published``, their share: a release whose every noisy count falls below the
    minimum group size publishes nothing (its errors are NaN), which is not an error of 0 or of
    ∞ but a release without the number; NaN summaries where none published one."""
    rows = []
    for value, strategy, metrics in runs:
        for metric in SWEEP_METRICS:
            errors = metrics[metric].to_numpy()
            published = errors[~np.isnan(errors)]
            low, high, mean = (
                (*np.quantile(published, [0.05, 0.95]), published.mean())
                if published.size
                else (np.nan,) * 3
            )
            rows.append((value, strategy, metric, mean, low, high, published.size / errors.size))
    return pd.DataFrame(
        rows, columns=["budget", "strategy", "metric", "mean", "q05", "q95", "published"]
    )
