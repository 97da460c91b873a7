"""The stratification frontier: every candidate grouping × every strategy at one budget, scored by
the population's error against the worst group's error (Rosenblatt, Stoyanovich & Musco, AAAI
2024 — the paper's question, asked of every stratification at once).

A candidate stratification is a non-empty subset of the candidate columns, grouped by the
intersection of its columns with the user's small-group rule. Each is run with each strategy
(stratified; one estimate for everyone; both, with the budget split) as seeded simulated
releases, each estimate clipped into the public range as a release clips it. Errors are in the
value's units: the population error is the mean |μ̂ − μ|, the worst
group's error the mean over releases of max_g |μ̂_g − μ_g|, and the parity error is the paper's
Def. 10 (relative, ω = 1/k). A candidate is on the Pareto frontier when no other has a population
error and a worst-group error both at most its own, one of them strictly smaller.

Every number here is scored against the confidential truth: a curator's preview, like the
Compare page. Shares are each candidate's own group counts (the preview does not need public
shares for groupings the user has not declared).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import (
    STRATEGY_NAMES,
    MeanEstimator,
    Strategy,
    run_strategy,
)
from dpcore.foundations.accounting import Budget
from dpcore.foundations.grouping import GroupingSpec, SmallGroups
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.metrics import parity_error
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from dpcore.foundations.validation import as_rng, positive_int

__all__ = ["FRONTIER_STRATEGIES", "candidate_columns", "pareto_mask", "stratification_frontier"]

FRONTIER_STRATEGIES: tuple[Strategy, ...] = ("stratified", "global_only", "global_and_groups")
MAX_CANDIDATE_COLUMNS = 6
"""2⁶ − 1 = 63 stratifications × 3 strategies: the most the frontier draws at once."""


def candidate_columns(columns: Sequence[str]) -> list[tuple[str, ...]]:
    """Every non-empty subset of ``columns``, smallest first, in the columns' order."""
    columns = tuple(dict.fromkeys(columns))
    if not columns:
        raise ValueError("Choose at least one candidate column for the frontier.")
    if len(columns) > MAX_CANDIDATE_COLUMNS:
        raise ValueError(
            f"The frontier compares every subset of its columns: {len(columns)} columns make "
            f"{2 ** len(columns) - 1} stratifications. Choose at most {MAX_CANDIDATE_COLUMNS}."
        )
    return [c for size in range(1, len(columns) + 1) for c in itertools.combinations(columns, size)]


def pareto_mask(first: np.ndarray, second: np.ndarray, rtol: float = 1e-9) -> np.ndarray:
    """True where no other point is at most as large in both and smaller in one (NaN: False).
    Values within ``rtol`` of each other count as equal, so that rounding in the last bits (one
    estimate for everyone summed in another order) does not decide the frontier."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    valid = np.isfinite(first) & np.isfinite(second)

    def below(values: np.ndarray, slack: float) -> np.ndarray:
        """[i, j]: point j's value is below point i's, up to ``slack`` of its size."""
        return values[None, :] < values[:, None] + slack * np.abs(values[:, None])

    at_most = below(first, rtol) & below(second, rtol)
    smaller = below(first, -rtol) | below(second, -rtol)
    dominated = (at_most & smaller & valid[None, :]).any(axis=1)
    return valid & ~dominated


def _scores(
    values: GroupValues,
    estimator: MeanEstimator,
    budget: Budget,
    strategy: Strategy,
    global_fraction: float,
    replicates: int,
    rng: np.random.Generator,
) -> tuple[float, float, float]:
    result = run_strategy(
        strategy, values, estimator, budget, values.sizes / values.n,
        global_fraction=global_fraction, replicates=replicates, noise=SimulationNoise(rng=rng),
    )  # fmt: skip
    # Score what a release publishes: every estimate clipped into the public range.
    low, high = estimator.public_range
    groups = np.clip(result.group_estimates, low, high)
    population = np.clip(result.global_estimate, low, high)
    group_errors = np.abs(groups - values.means)
    global_error = float(np.mean(np.abs(population - values.global_mean)))
    worst = float(group_errors.max(axis=1).mean())
    try:
        parity = float(parity_error(groups, values.means, population, values.global_mean).mean())
    except ValueError:  # a true mean of 0: the relative parity error is undefined
        parity = float("nan")
    return global_error, worst, parity


def stratification_frontier(
    frame: pd.DataFrame,
    columns: Sequence[str],
    value: str,
    estimator: MeanEstimator,
    budget: Budget,
    *,
    edges: dict[str, Sequence[float]] | None = None,
    min_group_size: int = 2,
    small_groups: SmallGroups = "merge",
    global_fraction: float = 0.5,
    max_groups: int = 5000,
    replicates: int = 200,
    rng: np.random.Generator | int | None = None,
    progress: Callable[[int, int], None] | None = None,
    unit: PrivacyUnit = ROW,
) -> pd.DataFrame:
    """Score every candidate stratification of ``columns`` × strategy at ``budget`` (the
    estimator's own budget) by simulation (module docstring). With a person column in
    ``unit``, each candidate bounds each person's rows in its own cells (a person's groups
    depend on the grouping) and its mechanisms run at ``unit.row_budget(budget)``, as its
    release would.

    Returns one row per candidate: ``label``, ``by`` (tuple), ``strategy`` and its
    ``strategy_name`` (what a user reads), ``groups`` (k), ``global_error``, ``worst_group_error``,
    ``parity_error``, ``pareto`` and ``skipped`` (why a candidate was not scored, else "").
    """
    replicates = positive_int("replicates", replicates)
    # Common random numbers: every candidate draws from the same seed, so differences between
    # candidates are theirs, not the noise's (one estimate for everyone then scores the same
    # population error under every stratification, as it should).
    seed = int(as_rng(rng).integers(2**63))
    edges = dict(edges or {})
    subsets = candidate_columns(columns)
    rows = []
    for i, by in enumerate(subsets):
        spec = GroupingSpec(
            by=by, edges=tuple((c, tuple(edges[c])) for c in by if c in edges),
            min_group_size=min_group_size, small_groups=small_groups, needs_values=(value,),
        )  # fmt: skip
        try:
            grouping = spec.build(frame)
            if grouping.k > max_groups:
                raise ValueError(f"{grouping.k} groups, over the limit of {max_groups}")
            values = GroupValues.from_grouping(grouping, frame, value, unit)
        except ValueError as exc:
            unscored = (float("nan"),) * 3
            rows += [_row(by, strategy, 0, unscored, str(exc)) for strategy in FRONTIER_STRATEGIES]
        else:
            for strategy in FRONTIER_STRATEGIES:
                scores = _scores(
                    values,
                    estimator,
                    unit.row_budget(budget),
                    strategy,
                    global_fraction,
                    replicates,
                    np.random.default_rng(seed),
                )
                rows.append(_row(by, strategy, values.k, scores, ""))
        if progress is not None:
            progress(i + 1, len(subsets))
    table = pd.DataFrame(rows)
    table["pareto"] = pareto_mask(table["global_error"], table["worst_group_error"])
    return table


def _row(by: tuple[str, ...], strategy: Strategy, groups: int, scores, skipped: str) -> dict:
    global_error, worst, parity = scores
    return {
        "label": f"{' × '.join(by)}: {STRATEGY_NAMES[strategy].lower()}", "by": by,
        "strategy": strategy, "strategy_name": STRATEGY_NAMES[strategy], "groups": groups,
        "global_error": global_error, "worst_group_error": worst, "parity_error": parity,
        "skipped": skipped,
    }  # fmt: skip
