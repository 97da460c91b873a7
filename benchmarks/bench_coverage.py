"""Do the intervals cover what they claim, at every group size and budget, on data nobody tuned
them to? (issue 42; prints tables, not a test — ``tests/unit/dpcore/test_interval_coverage.py``
runs a coarse grid of the same cells as a test.)

Populations are generated here, with heavy right tails, skew and a point mass at zero, as
earnings are (none of the methods was tuned to them):

- ``lognormal``: weekly-wage-like, median 600, log-sd 0.8 (skewness ≈ 3), public range [0, 4000];
- ``pareto``: 250·(1 + Pareto(α = 2.5)), a power tail (skewness ≈ 7 inside its range), public
  range [0, 5000];
- ``zero-inflated``: 35% zeros, the rest lognormal (median 700, log-sd 0.7), range [0, 3000].

Each is one million values drawn once from a fixed seed; a "sample" draws rows from it with
replacement, so the population's (clipped) mean and ratio are known exactly. Groups are one
per size in :data:`SIZES` (30 to 10,000 rows), recombined with their shares in the sample (a
stratified design). Budgets run over ε in :data:`EPSILONS` (0.1 to 10); the ρ-zCDP methods run at
ρ = ε²/2, what an ε budget converts to on the Budget page.

Every interval is computed by the library itself, vectorised over replicates (no Python loop per
replicate): the mean's through :meth:`dpcore.analyses.mean.MeanPlan.intervals` (clipped into the
public range as a release does), the ratio's through :func:`dpcore.analyses.ratio.ratio_interval`
and GVDP's through :func:`dpcore.analyses.gvdp.gvdp_coverage` (whose bag of little bootstraps
runs per data set inside the library). What each covers:

====================  =================================================================
interval              target
====================  =================================================================
mean noise-only       the sample's mean of values clipped to the public range (fixed
                      sample, fresh noise): Laplace, Gaussian, CoinPress
mean with sampling    the population's clipped mean (fresh samples and noise)
ratio                 the population's ratio of clipped means (fresh samples and noise),
                      analytical and Monte Carlo corrections, Gaussian and Laplace noise
GVDP mean             the population mean (fresh samples), k by the library's rule
====================  =================================================================

Each cell prints coverage ± its binomial standard error √(p(1 − p)/R), and the mean width over
the width of the non-private interval of the same target (the classical t interval of the
sample, or the delta-method / sandwich interval; for noise-only intervals the t interval of
the sampling error they leave out, for scale). ``!`` marks a cell more than 3 standard errors
(at the nominal rate, √(0.95·0.05/R)) below 95%.

Run: ``PYTHONPATH=. python benchmarks/bench_coverage.py [--replicates R] [--quick]``
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import ndtri
from scipy.stats import t as student_t

from dpcore.analyses.gvdp import GvdpBoundsSpec, gvdp_coverage, recommended_subsets
from dpcore.analyses.gvdp.plan import HEAVY_TAIL_NOTE
from dpcore.analyses.gvdp.withhold import subsets_needed
from dpcore.analyses.mean import CoinPressMean, GaussianMean, LaplaceMean, MeanPlan
from dpcore.analyses.mean.sampling_error import release_squares
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import run_strategy
from dpcore.analyses.ratio import RatioBounds, RatioSums, nonprivate_ratio_ci, ratio_interval
from dpcore.analyses.ratio.noise import release_ratio_sums
from dpcore.analyses.ratio.plan import SMALL_SKEWED_NOTE
from dpcore.analyses.ratio.preview import recombine
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.release.plan import DatasetRef, PlanHeader

NOMINAL = 0.95
SIZES = (30, 100, 300, 1_000, 3_000, 10_000)
EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
POPULATION_ROWS = 1_000_000
ALL = "All"


@dataclass(frozen=True)
class Population:
    """A generated population: ``values`` (one million), a public range [low, high] for the
    values, ``sigma`` a generous public bound on the spread of a group's clipped values
    (CoinPress's σ, GVDP's per-row spread: 1.5 times the population's), ``hours``, a second
    positive column (the ratio's denominator) in [0, 80], and whether its tail is so heavy that
    its fourth moment is infinite (``very_heavy``)."""

    name: str
    values: np.ndarray = field(repr=False)
    hours: np.ndarray = field(repr=False)
    low: float
    high: float
    very_heavy: bool = False  # an infinite fourth moment: GVDP's coverage note applies

    @property
    def clipped(self) -> np.ndarray:
        return np.clip(self.values, self.low, self.high)

    @property
    def sigma(self) -> float:
        return float(round(1.5 * self.clipped.std(), -1))

    @property
    def clipped_mean(self) -> float:
        return float(self.clipped.mean())

    def sample(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        """Row indices of ``size`` draws with replacement."""
        return rng.integers(0, self.values.size, size)


def populations(seed: int = 20_240_942) -> dict[str, Population]:
    """The three populations of the module docstring, drawn once from ``seed``."""
    rng = np.random.default_rng(seed)
    n = POPULATION_ROWS

    def hours(values: np.ndarray) -> np.ndarray:
        # Weekly hours, loosely rising with earnings: the ratio's denominator.
        base = 15 + 40 * rng.beta(2.0, 2.0, n) + 0.004 * np.minimum(values, 2500)
        return np.clip(np.round(base), 1, 80)

    lognormal = np.exp(rng.normal(math.log(600), 0.8, n))
    pareto = 250 * (1 + rng.pareto(2.5, n))
    zeros = np.where(rng.random(n) < 0.35, 0.0, np.exp(rng.normal(math.log(700), 0.7, n)))
    return {
        "lognormal": Population("lognormal", lognormal, hours(lognormal), 0.0, 4000.0),
        "pareto": Population("pareto", pareto, hours(pareto), 0.0, 5000.0, very_heavy=True),
        "zero-inflated": Population("zero-inflated", zeros, hours(zeros), 0.0, 3000.0),
    }


@dataclass(frozen=True)
class Cell:
    """One interval at one group size and budget: of ``replicates`` releases, ``published``
    had an interval (a ratio whose noisy sums leave it undefined has none, its flag says why)
    and ``covered`` of those contained the target; ``width`` is their mean width over the
    non-private interval's. ``claimed`` is the coverage the release promises there: the
    nominal 95%, the lower end of its coverage note (:class:`~dpcore.release.CoverageNote`)
    where it has one, or None where the method's assumption fails (CoinPress's σ below the
    sample's spread), with ``remark`` saying which."""

    interval: str
    population: str
    group: str
    n: int
    epsilon: float
    covered: int
    published: int
    replicates: int
    width: float
    claimed: float | None = NOMINAL
    remark: str = ""

    @property
    def coverage(self) -> float:
        return self.covered / max(self.published, 1)

    @property
    def se(self) -> float:
        """The coverage's binomial standard error, √(p(1 − p)/R) at the observed p."""
        p = self.coverage
        return math.sqrt(max(p * (1 - p), 1e-12) / max(self.published, 1))

    def shortfall(self, claimed: float | None = None) -> float:
        """How many standard errors (at the claimed rate) the coverage lies below ``claimed``
        (default: the cell's own claim; NaN where it claims nothing)."""
        claimed = self.claimed if claimed is None else claimed
        if claimed is None or self.published == 0:
            return math.nan
        return (claimed - self.coverage) / math.sqrt(claimed * (1 - claimed) / self.published)


# ---- samples ---------------------------------------------------------------------------------


def _groups(sizes: Iterable[int]) -> tuple[str, ...]:
    return tuple(f"n={n}" for n in sizes)


def _plan(values: GroupValues, estimator, budget, sizes: tuple[int, ...], **options) -> MeanPlan:
    """The release plan of stratified means of ``values`` (shares: the sample's design)."""
    shares = tuple(zip(values.labels, np.asarray(sizes) / sum(sizes), strict=True))
    spec = GroupingSpec(by=("group",), share_source="table", share_table=shares)
    header = PlanHeader(dataset=DatasetRef("bench", "-", values.n), spec=spec, budget=budget)
    return MeanPlan(values=values, header=header, estimator=estimator, **options)


def _values(population: Population, rows: np.ndarray, sizes: tuple[int, ...]) -> GroupValues:
    """A fixed stratified sample: group g holds ``sizes[g]`` rows of ``rows`` (indices)."""
    frame = pd.DataFrame(
        {
            "group": np.repeat(_groups(sizes), sizes),
            "value": population.values[rows],
        }
    )
    shares = tuple(zip(_groups(sizes), np.asarray(sizes) / sum(sizes), strict=True))
    spec = GroupingSpec(by=("group",), share_source="table", share_table=shares)
    return GroupValues.from_grouping(spec.build(frame), frame, "value")


@dataclass(frozen=True, eq=False)
class ReplicatedSamples:
    """Fresh stratified samples, one per replicate: group g is ``values[g]`` of shape (R, n_g).
    Provides what the clipped means and their paid variances read (``sizes``,
    ``clipped_sums``, ``centred_squares``), one row per replicate: the estimators then draw
    each replicate's noise on its own sample, vectorised."""

    values: tuple[np.ndarray, ...]
    labels: tuple[str, ...]

    @property
    def k(self) -> int:
        return len(self.values)

    @property
    def sizes(self) -> np.ndarray:
        return np.array([v.shape[1] for v in self.values])

    def clipped_sums(self, low, high) -> np.ndarray:
        low, high = (np.broadcast_to(b, (len(self.values),)) for b in (low, high))
        return np.column_stack(
            [np.clip(v, a, b).sum(axis=1) for v, a, b in zip(self.values, low, high, strict=True)]
        )

    def centred_squares(self, low, high) -> np.ndarray:
        low, high = (np.broadcast_to(b, (len(self.values),)) for b in (low, high))
        return np.column_stack(
            [
                ((np.clip(v, a, b) - (a + b) / 2) ** 2).sum(axis=1)
                for v, a, b in zip(self.values, low, high, strict=True)
            ]
        )


def _t_widths(clipped: Iterable[np.ndarray], weights: np.ndarray) -> tuple[np.ndarray, float]:
    """Mean width of the classical t interval of each group's mean (rows (R, n_g) or (n_g,))
    and of the stratified population mean (normal, Cochran eq. 5.6)."""
    widths, variances = [], []
    for rows in clipped:
        n = rows.shape[-1]
        var = rows.var(axis=-1, ddof=1) / n
        widths.append(np.mean(2 * student_t.ppf(0.5 + NOMINAL / 2, n - 1) * np.sqrt(var)))
        variances.append(var)
    population = 2 * ndtri(0.5 + NOMINAL / 2) * np.sqrt(weights**2 @ np.array(variances))
    return np.array(widths), float(np.mean(population))


def _cells(
    name, population, sizes, epsilon, covered, replicates, widths, reference, *,
    published=None, claimed=None, remarks=None,
) -> list[Cell]:  # fmt: skip
    """Cells of the groups of ``sizes`` (in that order) and of their recombination."""
    labels = [*_groups(sizes), ALL]
    ns = [*sizes, sum(sizes)]
    count = len(labels)
    published = [replicates] * count if published is None else published
    claimed = [NOMINAL] * count if claimed is None else claimed
    remarks = [""] * count if remarks is None else remarks
    return [
        Cell(
            name, population.name, label, n, epsilon, int(c), int(p), replicates, float(w / r), k, m
        )  # fmt: skip
        for label, n, c, p, w, r, k, m in zip(
            labels, ns, covered, published, widths, reference, claimed, remarks, strict=True
        )
    ]


def _noted(sizes, note: dict | None, rows: int = 1000) -> list[float]:
    """The claimed coverage of each group and of their recombination: a coverage note's lower
    end for estimates over fewer than ``rows`` rows, else the nominal level."""
    if note is None:
        return [NOMINAL] * (len(sizes) + 1)
    return [note["lowest"] if n < rows else NOMINAL for n in [*sizes, sum(sizes)]]


# ---- the mean --------------------------------------------------------------------------------


def _mean_estimator(kind: str, population: Population, epsilon: float):
    """The app's estimator of ``kind`` for the population's public range, and its budget."""
    bounds = (population.low, population.high)
    if kind == "laplace":
        return LaplaceMean(bounds=bounds), PureDP(epsilon)
    rho = ZCDP(epsilon**2 / 2)
    if kind == "gaussian":
        return GaussianMean(bounds=bounds), rho
    coinpress = CoinPressMean(
        prior=bounds, sigma=population.sigma, steps=3, beta=0.01, clip_to_prior=True
    )
    return coinpress, rho


def mean_noise_cells(
    kind: str, population: Population, sizes: tuple[int, ...], epsilon: float,
    replicates: int, rng: np.random.Generator,
) -> list[Cell]:  # fmt: skip
    """Noise-only intervals on one fixed sample: do they cover its clipped means?"""
    rows = population.sample(rng, (sum(sizes),))
    values = _values(population, rows, sizes)
    sizes = tuple(int(n) for n in values.sizes)  # the grouping's order of the groups
    estimator, budget = _mean_estimator(kind, population, epsilon)
    plan = _plan(values, estimator, budget, sizes)
    result = run_strategy(
        "stratified", values, estimator, plan.mean_budget, values.shares,
        replicates=replicates, noise=SimulationNoise(rng=rng),
    )  # fmt: skip
    low, high = estimator.public_range
    groups, whole = (part.within(low, high) for part in plan.intervals(result))
    clipped = [np.clip(values.group_values(g), low, high) for g in range(values.k)]
    truth = np.array([c.mean() for c in clipped])
    weights = np.asarray(values.shares.values)
    covered = np.append(groups.covers(truth).sum(axis=0), whole.covers(truth @ weights).sum())
    widths = np.append(np.mean(groups.width, axis=0), np.mean(whole.width))
    reference_groups, reference_whole = _t_widths(clipped, weights)
    claimed, remarks = None, None
    if kind == "coinpress":  # its promise needs σ to bound every group's spread
        violated = [float(c.std()) > population.sigma for c in clipped]
        violated.append(any(violated))
        claimed = [None if v else NOMINAL for v in violated]
        remarks = ["σ below the sample's spread" if v else "" for v in violated]
    return _cells(f"mean {kind}, noise only", population, sizes, epsilon, covered, replicates,
                  widths, np.append(reference_groups, reference_whole), claimed=claimed,
                  remarks=remarks)  # fmt: skip


def mean_sampling_cells(
    kind: str, population: Population, sizes: tuple[int, ...], epsilon: float,
    replicates: int, rng: np.random.Generator,
) -> list[Cell]:  # fmt: skip
    """Intervals with sampling error on fresh samples: do they cover the population's clipped
    mean? Each replicate draws its own rows and its own noise (means and variances)."""
    values = _values(population, population.sample(rng, (sum(sizes),)), sizes)
    sizes = tuple(int(n) for n in values.sizes)  # the grouping's order of the groups
    samples = ReplicatedSamples(
        tuple(population.values[population.sample(rng, (replicates, n))] for n in sizes),
        values.labels,
    )
    estimator, budget = _mean_estimator(kind, population, epsilon)
    plan = _plan(values, estimator, budget, sizes, sampling_error=True)
    noise = SimulationNoise(rng=rng)
    result = run_strategy(
        "stratified", samples, estimator, plan.mean_budget, values.shares,
        replicates=replicates, noise=noise,
    )  # fmt: skip
    squares = release_squares(samples, estimator, plan.variance_budget, "stratified", 0.5, noise)
    low, high = estimator.public_range
    groups, whole = (part.within(low, high) for part in plan.intervals(result, squares))
    truth = np.full(len(sizes), population.clipped_mean)
    weights = np.asarray(values.shares.values)
    covered = np.append(groups.covers(truth).sum(axis=0), whole.covers(truth @ weights).sum())
    widths = np.append(np.mean(groups.width, axis=0), np.mean(whole.width))
    clipped = [np.clip(v, low, high) for v in samples.values]
    reference_groups, reference_whole = _t_widths(clipped, weights)
    note = plan.coverage_note
    return _cells(f"mean {kind}, with sampling error", population, sizes, epsilon, covered,
                  replicates, widths, np.append(reference_groups, reference_whole),
                  claimed=_noted(sizes, None if note is None else vars(note)))  # fmt: skip


# ---- the ratio -------------------------------------------------------------------------------


def ratio_cells(
    mechanism: str, method: str, population: Population, sizes: tuple[int, ...],
    epsilon: float, replicates: int, rng: np.random.Generator,
) -> list[Cell]:  # fmt: skip
    """Σs/Σy of earnings over hours on fresh samples: do the intervals cover the population's
    ratio of clipped means (per group, and recombined over the groups)?"""
    bounds = RatioBounds(s=population.high, y=80.0)
    parts = {name: [] for name in ("ws", "wss", "wy", "wyy", "wys")}
    for n in sizes:
        rows = population.sample(rng, (replicates, n))
        s = np.clip(population.values[rows], 0, bounds.s)
        y = np.clip(population.hours[rows], 0, bounds.y)
        for name, column in (("ws", s), ("wss", s * s), ("wy", y), ("wyy", y * y), ("wys", y * s)):
            parts[name].append(column.sum(axis=1))
    exact = RatioSums(
        w=np.broadcast_to(np.asarray(sizes, dtype=float), (replicates, len(sizes))),
        **{name: np.column_stack(columns) for name, columns in parts.items()},
    )
    release = release_ratio_sums(
        exact, epsilon=epsilon, delta=1e-6 if mechanism != "laplace" else None,
        mechanism=mechanism, bounds=bounds, noise=SimulationNoise(rng=rng),
    )  # fmt: skip
    truth = float(np.clip(population.values, 0, bounds.s).mean() / population.hours.mean())
    covered, published, widths, reference = [], [], [], []
    for part, sums in ((release, exact), (recombine(release), _totals(exact))):
        ci = ratio_interval(part, method=method, rng=rng)
        public = nonprivate_ratio_ci(sums)
        shown = ~np.asarray(ci.flagged, dtype=bool)
        covered.append(np.atleast_1d((ci.covers(truth) & shown).sum(axis=0)))
        published.append(np.atleast_1d(shown.sum(axis=0)))
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a group with none published
            widths.append(np.atleast_1d(np.nanmean(np.where(shown, ci.width, np.nan), axis=0)))
        reference.append(np.atleast_1d(np.nanmean(public.width, axis=0)))
    return _cells(
        f"ratio {mechanism}, {method}", population, sizes, epsilon, np.concatenate(covered),
        replicates, np.concatenate(widths), np.concatenate(reference),
        published=np.concatenate(published), claimed=_noted(sizes, SMALL_SKEWED_NOTE),
    )  # fmt: skip


def _totals(sums: RatioSums) -> RatioSums:
    return RatioSums(
        w=sums.w.sum(axis=-1), ws=sums.ws.sum(axis=-1), wy=sums.wy.sum(axis=-1),
        wss=sums.wss.sum(axis=-1), wys=sums.wys.sum(axis=-1), wyy=sums.wyy.sum(axis=-1),
    )  # fmt: skip


# ---- GVDP ------------------------------------------------------------------------------------


def gvdp_mean_cells(
    population: Population, sizes: tuple[int, ...], epsilon: float, replicates: int,
    rng: np.random.Generator, *, fixed_k: int | None = None,
) -> list[Cell]:  # fmt: skip
    """GVDP's mean of the (unclipped) values on fresh samples of each size, with the library's
    default k (:func:`~dpcore.analyses.gvdp.recommended_subsets`) and public bounds: the mean
    in the public range, the per-row spread ``population.sigma``. A size at which the release
    would be withheld (too few subsets for the budget) is skipped."""
    rho = epsilon**2 / 2
    spec = GvdpBoundsSpec(
        "box", ("value",), spread=(population.sigma,), low=(population.low,),
        high=(population.high,),
    )  # fmt: skip
    truth = float(population.values.mean())
    sd = float(population.values.std())
    cells = []
    for n in sizes:
        k = recommended_subsets(n, "mean", 1) if fixed_k is None else fixed_k
        if n // k < 5 or k < subsets_needed(rho=rho, mean_fraction=0.5, steps=5, beta=0.03, d=1):
            continue
        result = gvdp_coverage(
            lambda r, n=n: population.values[population.sample(r, (n,))], [truth], "mean",
            replications=replicates, k=k, rho=rho, resamples=10,
            bounds=spec.for_rows(n, k, 10), rng=rng,
        )  # fmt: skip
        width = float(np.mean(result.high - result.low))
        reference = 2 * ndtri(0.5 + NOMINAL / 2) * sd / math.sqrt(n)
        # Every GVDP release states the note; it concerns very heavy tails only.
        claimed = HEAVY_TAIL_NOTE["lowest"] if population.very_heavy else NOMINAL
        name = "GVDP mean" if fixed_k is None else f"GVDP mean, k = {fixed_k:,} (the old default)"
        cells.append(
            Cell(name, population.name, f"n={n}", n, epsilon, int(result.covered.sum()),
                 replicates, replicates, width / reference,
                 claimed if fixed_k is None else None, "" if fixed_k is None else "no claim")
        )  # fmt: skip
    return cells


# ---- the grid ----------------------------------------------------------------------------------

Family = Callable[..., list[Cell]]


def families() -> dict[str, tuple[Family, tuple]]:
    """Every interval of the benchmark: its cell function and leading arguments."""
    return {
        "mean laplace, noise only": (mean_noise_cells, ("laplace",)),
        "mean gaussian, noise only": (mean_noise_cells, ("gaussian",)),
        "mean coinpress, noise only": (mean_noise_cells, ("coinpress",)),
        "mean laplace, with sampling error": (mean_sampling_cells, ("laplace",)),
        "mean gaussian, with sampling error": (mean_sampling_cells, ("gaussian",)),
        "ratio gaussian, analytical": (ratio_cells, ("gaussian_analytic", "analytical")),
        "ratio gaussian, monte_carlo": (ratio_cells, ("gaussian_analytic", "monte_carlo")),
        "ratio laplace, analytical": (ratio_cells, ("laplace", "analytical")),
        "ratio laplace, monte_carlo": (ratio_cells, ("laplace", "monte_carlo")),
        "GVDP mean": (gvdp_mean_cells, ()),
        # For comparison only (no release uses it now): the default k before issue 42.
        "GVDP mean, k = 1,000 (the old default)": (_old_default_gvdp, ()),
    }


def _old_default_gvdp(population, sizes, epsilon, replicates, rng) -> list[Cell]:
    return gvdp_mean_cells(population, sizes, epsilon, replicates, rng, fixed_k=1000)


def run(
    names: Iterable[str] | None = None,
    *,
    population_names: Iterable[str] | None = None,
    sizes: tuple[int, ...] = SIZES,
    epsilons: tuple[float, ...] = EPSILONS,
    replicates: int = 1000,
    gvdp_replicates: int = 300,
    seed: int = 42,
) -> pd.DataFrame:
    """Every cell of the grid as a frame (one row per interval, population, group and ε), from
    ``seed``: the same arguments always give the same numbers."""
    pops = populations()
    chosen = families() if names is None else {n: families()[n] for n in names}
    rows = []
    for f, (name, (function, leading)) in enumerate(chosen.items()):
        for p, population in enumerate(
            pops.values() if population_names is None else [pops[n] for n in population_names]
        ):
            for e, epsilon in enumerate(epsilons):
                rng = np.random.default_rng([seed, f, p, e])
                count = gvdp_replicates if name.startswith("GVDP") else replicates
                rows += function(*leading, population, sizes, epsilon, count, rng)
    frame = pd.DataFrame([{**vars(c), "coverage": c.coverage, "se": c.se,
                           "shortfall": c.shortfall(), "below_nominal": c.shortfall(NOMINAL)}
                          for c in rows])  # fmt: skip
    return frame


def table(frame: pd.DataFrame) -> str:
    """One block per interval and population: group sizes down, ε across, each cell
    ``coverage±se ×width``, ``!`` where more than 3 standard errors below 95%."""
    out = []
    for (interval, population), block in frame.groupby(["interval", "population"], sort=False):
        epsilons = sorted(block["epsilon"].unique())
        out.append(f"\n== {interval} — {population}")
        out.append("group     " + "".join(f"ε={e:<18g}" for e in epsilons))
        for group, rows in block.groupby("group", sort=False):
            cells = rows.set_index("epsilon")
            text = []
            for e in epsilons:
                if e not in cells.index:
                    text.append(f"{'withheld':<20}")
                    continue
                c = cells.loc[e]
                claimed = None if pd.isna(c["claimed"]) else c["claimed"]
                if claimed is None:
                    mark = "σ" if c["remark"].startswith("σ") else "·"
                else:
                    mark = "*" if claimed < NOMINAL else " "
                mark = "!" if c["shortfall"] > 3 else mark
                text.append(f"{c['coverage']:.3f}±{c['se']:.3f}{mark}×{c['width']:<7.3g}")
            out.append(f"{group:<10}" + "".join(f"{t:<20}" for t in text))
    return "\n".join(out)


LEGEND = (
    "Each cell: coverage±SE ×(mean width / non-private width). Marks: ! more than 3 SE below "
    "what the release claims there; * a cell its release's coverage note covers (claims less "
    "than 95%, with the number); σ CoinPress's σ was below the sample's spread (no claim); · "
    "a comparison no release makes now (GVDP's old default k)."
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--gvdp-replicates", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="200 replicates, ε ∈ {0.1, 1, 10}")
    parser.add_argument("--only", action="append", help="an interval family (repeatable)")
    args = parser.parse_args()
    options = {"replicates": args.replicates, "gvdp_replicates": args.gvdp_replicates}
    if args.quick:
        options = {"replicates": 200, "gvdp_replicates": 100, "epsilons": (0.1, 1.0, 10.0)}
    started = time.process_time()
    frame = run(args.only, **options)
    print(LEGEND)
    print(table(frame))
    worst = frame.sort_values("below_nominal", ascending=False).head(8)
    print("\nLargest shortfalls below 95% (standard errors):")
    columns = ["interval", "population", "group", "epsilon", "coverage", "se", "claimed",
               "below_nominal"]  # fmt: skip
    print(worst[columns].to_string(index=False))
    print(
        f"\n{len(frame)} cells; {(frame['below_nominal'] > 3).sum()} more than 3 SE below 95%, "
        f"{(frame['shortfall'] > 3).sum()} more than 3 SE below what the release claims there; "
        f"{time.process_time() - started:.0f} CPU-s"
    )


if __name__ == "__main__":
    main()
