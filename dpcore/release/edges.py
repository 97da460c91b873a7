r"""Bucket edges for a numeric grouping column, found privately and released through the ledger
(issue 39, item 3): an alternative to typing them from outside knowledge.

A numeric column (an age, an income) groups people only once it is cut into buckets, and the
edges must not be read off the data. :class:`EdgesPlan` is a release like any other
(:class:`~dpcore.release.plan.ReleasePlan`): it spends its budget once through the ledger and
publishes K − 1 edges, the column's quantiles j/K (j = 1 … K − 1), each chosen by the private
selection of :mod:`dpcore.foundations.private_bounds` over the public grid of a search range,
with an equal share of the budget (sequential composition). Neighbouring datasets add or remove
one person (the column's size is not assumed public), so each quantile's scores have sensitivity
max(α, 1 − α). Equal or crossing draws are post-processed into strictly increasing edges.

The edges are then DP outputs: typed into the Strata page as public edges, they cost nothing
more, and the ledger keeps the release that found them.

Pure numpy; never imports streamlit or plotly, nor an analysis.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpcore.foundations.accounting import Budget, scale
from dpcore.foundations.labels import plain_number
from dpcore.foundations.mechanisms import NoiseSource, SimulationNoise
from dpcore.foundations.private_bounds import GridCounts, candidate_grid, private_quantile
from dpcore.foundations.validation import MAX_BOUND_MAGNITUDE, finite_number, instance_of
from dpcore.release.plan import PlanHeader, Progress, ReleaseRow

__all__ = ["EdgesPlan", "column_values"]

MAX_BUCKETS = 10


def column_values(frame: pd.DataFrame, column: str) -> np.ndarray:
    """The finite values of ``column``, sorted (rows without one are left out)."""
    if column not in frame:
        raise ValueError(f"The column `{column}` is not in the data.")
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
    return np.sort(values[np.isfinite(values)])


@dataclass(frozen=True)
class EdgesPlan:
    """A planned release of ``buckets`` − 1 bucket edges of ``column`` (module doc).

    ``values`` are the column's finite values, sorted (the curator's; not part of the plan's
    identity); ``search`` the public range the edges are searched in; ``header`` the data, the
    budget and a name (its groups are the column alone).
    """

    values: np.ndarray = field(compare=False, repr=False)
    header: PlanHeader
    column: str
    buckets: int
    search: tuple[float, float]

    def __post_init__(self) -> None:
        instance_of("header", self.header, PlanHeader)
        if not (isinstance(self.buckets, int) and 2 <= self.buckets <= MAX_BUCKETS):
            raise ValueError(
                f"`buckets` must be a whole number from 2 to {MAX_BUCKETS}, got {self.buckets!r}"
            )
        low, high = (finite_number(f"search[{i}]", v) for i, v in enumerate(self.search))
        if max(abs(low), abs(high)) > MAX_BOUND_MAGNITUDE:
            raise ValueError(
                f"The search range must lie within ±{MAX_BOUND_MAGNITUDE:.0e} (edges beyond it "
                f"cannot group the rows), got [{low:g}, {high:g}]: rescale the column."
            )
        if not low < high:
            raise ValueError(
                f"The search range must run from a lower to a higher value, got [{low:g}, "
                f"{high:g}]: type a public range that surely holds every value of `{self.column}`."
            )
        object.__setattr__(self, "search", (low, high))
        values = np.sort(np.asarray(self.values, dtype=float))
        if values.size == 0 or not np.isfinite(values).all():
            raise ValueError(f"`{self.column}` has no finite value to find edges in.")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "header", self.header.named(f"Bucket edges of {self.column}"))

    @property
    def cost(self) -> Budget:
        return self.header.budget

    def declared_public(self) -> list[str]:
        """The range the edges are searched in (:meth:`~dpcore.release.ReleasePlan.
        declared_public`); the edges found in it are DP outputs."""
        low, high = self.search
        return [f"the search range [{plain_number(low)}, {plain_number(high)}] of `{self.column}`"]

    @property
    def alphas(self) -> tuple[float, ...]:
        return tuple(j / self.buckets for j in range(1, self.buckets))

    def estimate(self, noise: NoiseSource, rng: np.random.Generator | None = None) -> np.ndarray:
        """The edges, strictly increasing: each quantile j/K drawn with (budget)/(K − 1)
        (:func:`~dpcore.foundations.private_bounds.private_quantile`, sizes not public)."""
        grid = candidate_grid(*self.search)
        counts = GridCounts.from_sorted(self.values, [0, self.values.size], grid)
        each = scale(self.header.budget, 1 / (self.buckets - 1))
        picks = [private_quantile(counts, alpha, each, noise=noise)[0] for alpha in self.alphas]
        return _increasing(np.array(picks), grid)

    def run(
        self, noise: NoiseSource, rng: np.random.Generator, progress: Progress | None = None
    ) -> list[ReleaseRow]:
        edges = self.estimate(noise, rng)
        return [
            ReleaseRow("population", f"edge {j} (quantile {alpha:.0%})", float(edge))
            for j, (alpha, edge) in enumerate(zip(self.alphas, edges, strict=True), start=1)
        ]

    @property
    def interval_description(self) -> str:
        return "no intervals: the edges are quantiles found privately, published as they are"

    def parameters(self) -> dict:
        identity = self.header.identity(kind="edges", statistic=f"bucket edges of {self.column}")
        return {
            **identity,
            "estimator": {
                "class": "EdgesPlan",
                "column": self.column,
                "buckets": self.buckets,
                "quantiles": list(self.alphas),
                "search_range": list(self.search),
                "candidates": len(candidate_grid(*self.search)),
                "method": "each quantile by private selection over a public log grid (Smith "
                "2011; OpenDP make_noisy_max), the budget split equally between them",
            },
        }

    def review_lines(self) -> list[str]:
        low, high = self.search
        return [
            f"**Statistic:** {self.buckets - 1} bucket edges of `{self.column}` (its quantiles "
            + ", ".join(f"{a:.0%}" for a in self.alphas)
            + ")",
            self.header.data_line(),
            f"**Method:** each edge chosen privately among {len(candidate_grid(low, high)):,} "
            f"public candidates log-spaced within [{low:g}, {high:g}], with "
            f"{scale(self.header.budget, 1 / (self.buckets - 1))} each; neighbours add or "
            "remove one person",
            f"**Cost:** {self.cost}, charged once to the ledger",
        ]

    def script_body(self) -> str:
        return (
            f"{self.header.script()}"
            "from dpcore.release.edges import EdgesPlan, column_values\n\n"
            "plan = EdgesPlan(\n"
            f"    values=column_values(frame, {self.column!r}),\n"
            "    header=header,\n"
            f"    column={self.column!r},\n"
            f"    buckets={self.buckets!r},\n"
            f"    search={self.search!r},\n"
            ")\n"
        )

    def preview(self) -> pd.DataFrame:
        """Each edge's spread over 200 simulated releases (a curator's preview)."""
        draws = np.array([self.estimate(SimulationNoise(rng=seed)) for seed in range(200)])
        low, middle, high = np.quantile(draws, [0.05, 0.5, 0.95], axis=0)
        return pd.DataFrame({
            "edge": [f"quantile {a:.0%}" for a in self.alphas],
            "median (simulated)": middle, "5%": low, "95%": high,
        })  # fmt: skip


def _increasing(edges: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Sorted, each edge stepped up to the next candidate above the one before it, then
    rounded to the fewest significant digits (3 to 6) that keep them strictly increasing
    (post-processing): the buckets never collapse, and their labels stay readable."""
    index = np.searchsorted(grid, np.sort(edges))
    for j in range(1, index.size):
        index[j] = max(index[j], index[j - 1] + 1)
    exact = grid[np.minimum(index, grid.size - 1)]
    for digits in range(3, 7):
        rounded = np.array([float(f"{e:.{digits}g}") for e in exact])
        if np.all(np.diff(rounded) > 0):
            return rounded
    return exact
