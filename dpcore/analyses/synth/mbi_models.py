r"""MST and AIM through OpenDP's ``opendp.extras.mbi`` (Private-PGM), for one group's coded rows.

- **MST** (McKenna, Miklau & Sheldon 2021, "Winning the NIST contest"): measures every 1-way
  marginal, selects d − 1 pairs of columns that join them in a maximum spanning tree (noisy
  max on how badly the current model fits each pair), measures those 2-way marginals and fits a
  graphical model to all measurements.
- **AIM** (McKenna, Mullins, Sheldon & Miklau 2022): measures the 1-way marginals, then selects
  one marginal of up to 3 columns per round with a noisy max that penalises large tables, measures
  it, refits, and raises its per-round budget when a round changed little.

Both run as OpenDP measurements (:func:`opendp.extras.mbi.make_contingency_table`) under
ρ-zCDP with Gaussian noise; OpenDP accounts them (the measurement's privacy map is checked to
return ρ). Neighbours differ by adding or removing one row (``Bound(per_group=1)``). Every
column's domain is public and given as ``keys`` (codes 0..K−1), so nothing is discovered from
the data. OpenDP adds a "missing" category to each key set; our rows never hold it, and the
fitted model's mass on it is dropped by conditioning (post-processing; see :func:`fit_joint`).

**Budget.** Callers pass ε; the model runs at :math:`\rho = \varepsilon^2/2`, the ρ an ε-DP
release would cost (Bun & Steinke 2016, Prop. 1.4). A ρ-zCDP ledger is then charged the same ρ
for the same budget control, whatever the synthesizer; a pure-ε ledger cannot record a zCDP
cost, so the analysis refuses MST and AIM under an ε budget.

**Randomness.** OpenDP draws its noise from its own secure sampler and takes no seed: previews
and simulations of MST and AIM use secure noise too, and a seed fixes only the rows drawn from
the fitted model (numpy ``rng``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

__all__ = [
    "MBI_NEEDS_ROWS",
    "MAX_MBI_CATEGORIES",
    "MAX_MBI_CELLS",
    "MBI_METHODS",
    "MBI_SECONDS",
    "estimate_seconds",
]


MBI_METHODS = ("mst", "aim")
"""The synthesizers fitted by OpenDP's mbi module."""


MBI_NEEDS_ROWS = (
    "MST and AIM are fitted by OpenDP, which counts the rows itself and takes no count per "
    "combination of values, and data read where it lies (files on disk, a Spark table) gives "
    "only those counts. Choose MWEM, independent marginals or the full histogram, which are "
    "fitted on the counts, or upload the data (or a sample of it) to use MST or AIM."
)
"""Why MST and AIM do not run on an engine's counts: OpenDP's ``make_contingency_table``
counts the rows of a polars LazyFrame (``pl.len()`` per marginal) and has no row weights, and
the counts of 1e8 rows must not be expanded back into rows."""


MAX_MBI_CELLS = 8_000_000
"""Largest joint domain (cells, OpenDP's extra "missing" category included) of an MST or AIM
model: the fitted model is expanded to a dense table (64 MB) to draw rows with our seed."""


MAX_MBI_CATEGORIES = 100
"""Most categories of one column for MST or AIM: a 2-way table of two such columns has 10,000
cells, each measured with noise of a whole row's weight."""


MBI_SECONDS: dict[str, tuple[float, float]] = {
    "mst": (20.0, 2.0),
    "aim": (20.0, 90.0),
}
r"""Time model of one synthesis, per method: (start-up seconds, seconds per model column per group).

MST: measured on 2 cores with ``benchmarks/bench_mst.py`` (the demo stratified by race × sex, 10
groups of 6 model columns: 155 s, the first group 33 s with OpenDP's set-up and JAX's compilation,
then about 12 s a group; issue 18: one model of the demo's 7 categorical columns in 31 s); the
model gives 140 s and 34 s. Measured again while other work shared the cores (load 5 to 13 on 2
cores): stratified 197 s (first group 33 s, then 9 to 26 s a group), one vanilla model of the 8
columns 69 s and 144 s — contention, not the model, makes up the difference, so the constants stay
those of the quiet machine. AIM: about 640 s for one model of the demo's 7 categorical columns on 2
cores (issue 18's measurement), i.e. about 90 s a column; measured again at load 4 to 6, one model
of the 8 columns took 1,166 s against the model's 740 s, the same slowdown as MST's under load.
Each fit grows roughly linearly in its number of columns (MST measures d − 1 pairs; AIM runs up to
16 d rounds, each a refit).
"""


def estimate_seconds(method: str, groups: int, columns: int, fits: int = 1) -> float:
    r"""Expected seconds of ``fits`` syntheses of ``groups`` models of ``columns`` columns:
    :math:`\text{fits} \cdot (a + b \cdot \text{groups} \cdot \text{columns})` with (a, b) from
    :data:`MBI_SECONDS`. A rough guide shown before a slow fit starts, not a promise."""
    start, per_column = MBI_SECONDS[method]
    return fits * (start + per_column * groups * columns)


def mbi_cells(sizes: tuple[int, ...]) -> int:
    """Cells of the dense joint model: each column has OpenDP's extra "missing" category."""
    return math.prod(k + 1 for k in sizes)


@lru_cache(maxsize=16)
def _measurement(method: str, sizes: tuple[int, ...], rho: float):
    """The OpenDP measurement fitting ``method`` at ρ on coded columns ``c0..c{d-1}``.

    It depends on the public domain and ρ only, so one measurement serves every group (each
    group's rows are a separate invocation: parallel composition over disjoint groups)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    columns = [f"c{j}" for j in range(len(sizes))]
    domain = dp.lazyframe_domain([dp.series_domain(c, dp.atom_domain(T="i64")) for c in columns])
    d_in = [dp.polars.Bound(per_group=1)]
    algorithm = dp.mbi.MST() if method == "mst" else dp.mbi.AIM()
    measurement, _, _ = dp.mbi.make_contingency_table(
        domain, dp.frame_distance(dp.symmetric_distance()), dp.zero_concentrated_divergence(),
        d_in=d_in, d_out=rho, keys={c: list(range(k)) for c, k in zip(columns, sizes, strict=True)},
        algorithm=algorithm,
    )  # fmt: skip
    if measurement.map(d_in) > rho:
        raise RuntimeError(f"OpenDP accounts {measurement.map(d_in)} for ρ = {rho}")
    return measurement, tuple(columns)


MST_NUDGES = 64
"""Floats below ρ :func:`mst_rho` tries: a split that fits is found within a few."""


def _prior(x: float) -> float:
    return math.nextafter(x, -math.inf)


def _sum_rounded_up(values: list[float]) -> float:
    """A sum of budgets as OpenDP composes them: every addition rounded up, never down."""
    total = 0.0
    for value in values:
        rounded = total + value
        if Fraction(rounded) < Fraction(total) + Fraction(value):
            rounded = math.nextafter(rounded, math.inf)
        total = rounded
    return total


def _mst_split_fits(rho: float, columns: int) -> bool:
    """Whether OpenDP's MST, handed ``rho`` for ``columns`` columns, can pay for every query.

    OpenDP 0.16 splits ρ as: half (less two ulps) for the multiway stage after the one-way
    marginals; 90% of that to measure; the rest, less two ulps, to select d − 1 edges at
    ``prior(select / (d − 1))`` each (``opendp.extras.mbi``). Its odometer adds the d − 1
    shares rounding up, and for some ρ and d that sum exceeds the selection's budget by an ulp:
    the query is refused ("insufficient budget for query: 0.0007486528836794505 >
    0.0007486528836794504" at ρ = 0.015, d = 8), after minutes of fitting."""
    multiway = _prior(_prior(rho - rho * 0.5))
    select = _prior(_prior(multiway - multiway * 0.9))
    edges = columns - 1
    return edges < 1 or _sum_rounded_up([_prior(select / edges)] * edges) <= select


def mst_rho(rho: float, columns: int) -> float:
    """The ρ to hand OpenDP's MST for a model of ``columns`` columns: the largest float at most
    ``rho`` whose split leaves OpenDP no rounding excess (:func:`_mst_split_fits`), a few ulps
    below ``rho`` at most. The ledger is charged ``rho``, never less than what runs."""
    candidate = rho
    for _ in range(MST_NUDGES):
        if _mst_split_fits(candidate, columns):
            return candidate
        candidate = _prior(candidate)
    raise ValueError(
        f"OpenDP's MST cannot split ρ = {rho!r} over {columns} columns without rounding past it; "
        "choose a slightly different budget"
    )


def check_rows_for_mbi(method: str, weights: np.ndarray | None) -> None:
    """Refuse MST and AIM on weighted cells (:data:`MBI_NEEDS_ROWS`)."""
    if method in MBI_METHODS and weights is not None:
        raise ValueError(MBI_NEEDS_ROWS)


def fit_joint(codes: np.ndarray, sizes: tuple[int, ...], method: str, epsilon: float) -> np.ndarray:
    r"""The joint distribution over ``sizes`` of an MST or AIM model fitted on ``codes``.

    Runs at :math:`\rho = \varepsilon^2/2`-zCDP. OpenDP's model also covers a "missing" category
    per column (the last code); the rows never hold it, so the dense model is conditioned on
    every column being present: those cells are dropped and the rest renormalised — a function of
    the DP model alone (post-processing). A model that puts no mass on the real domain (only
    possible when the noise swamps everything) falls back to the uniform distribution.
    """
    import polars as pl

    rho = epsilon**2 / 2
    if method == "mst":
        rho = mst_rho(rho, len(sizes))
    measurement, columns = _measurement(method, tuple(int(k) for k in sizes), rho)
    frame = pl.LazyFrame({c: codes[:, j].astype(np.int64) for j, c in enumerate(columns)})
    table = measurement(frame)
    dense = np.asarray(table.project(list(columns)), dtype=float)
    joint = np.clip(dense[tuple(slice(0, k) for k in sizes)], 0.0, None)
    total = joint.sum()
    if not np.isfinite(total) or total <= 0:
        return np.full(sizes, 1.0 / math.prod(sizes))
    return joint / total
