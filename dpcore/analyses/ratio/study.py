"""The ratio paper's simulation (Miao & Li 2022, §3) beside its Table 1.

:func:`ratio_study` runs the paper's simulated calibration data through every interval method,
vectorized over replicates; :func:`load_table1` reads the paper's Table 1 bundled with dpcore and
:func:`table1_comparison` puts the two side by side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from itertools import product

import numpy as np
import pandas as pd

from dpcore.analyses.ratio.intervals import (
    RatioCI,
    nonprivate_ratio_ci,
    ratio_interval,
)
from dpcore.analyses.ratio.noise import (
    check_budget_args,
    noise_scales,
    release_ratio_sums,
)
from dpcore.analyses.ratio.sums import (
    COMPOSITIONS,
    MECHANISMS,
    METHODS,
    SCALES,
    SUM_NAMES,
    Composition,
    Mechanism,
    RatioBounds,
    RatioSums,
    Scale,
)
from dpcore.foundations.choices import one_of
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.metrics import coverage, interval_score
from dpcore.foundations.validation import (
    as_rng,
    open_unit_interval,
    positive_int,
    positive_number,
    shown,
)

__all__ = [
    "load_table1",
    "ratio_study",
    "simulate_calibration_sums",
    "table1_comparison",
]


_SIM_CHUNK_ROWS = 1 << 16  # simulated rows per block: float32 arrays of 256 kB stay in cache


TABLE1_PATH = "data/ratio_table1_gaussian.csv"


def simulate_calibration_sums(
    n: int,
    *,
    reps: int,
    weighted: bool,
    weight_bound: float = 3.0,
    true_ratio: float = 1.1,
    rng: np.random.Generator | int | None = None,
) -> RatioSums:
    r"""Exact sums of ``reps`` simulated datasets of the paper's design (§3), shape (reps,).

    Per row :math:`s \sim \mathrm{Beta}(2,2)`, :math:`y \sim \mathrm{Bernoulli}(s/1.1)` (so the
    true ratio E s / E y is ``true_ratio`` = 1.1), and with ``weighted`` :math:`w \sim
    \mathrm{Exp}(1)` clipped to [1/u_w, u_w], else w = 1. Rows are generated in float32 blocks and
    only their sums (accumulated in float64) are kept; Beta(2, 2) is drawn as the median of three
    uniforms, which has exactly that law and is ~4× faster than ``Generator.beta``.
    """
    n, reps = positive_int("n", n), positive_int("reps", reps)
    weight_bound, true_ratio = _check_design(weighted, weight_bound, true_ratio)
    generator = as_rng(rng)
    per_block = max(1, _SIM_CHUNK_ROWS // n)
    blocks = [
        _simulated_block(
            generator, min(per_block, reps - start), n, weighted, weight_bound, true_ratio
        )
        for start in range(0, reps, per_block)
    ]
    stacked = np.concatenate(blocks, axis=0)
    names = ("w", "ws", "wy", "ww", "wss", "wys") if weighted else ("ws", "wy", "wss", "wys")
    sums = {name: stacked[:, i] for i, name in enumerate(names)}
    if not weighted:
        sums["w"] = np.full(reps, float(n))
    return RatioSums(**sums)


def _check_design(weighted: bool, weight_bound: object, true_ratio: object) -> tuple[float, float]:
    weight_bound = positive_number("weight_bound", weight_bound)
    true_ratio = positive_number("true_ratio", true_ratio)
    if true_ratio < 1:
        raise ValueError(
            f"`true_ratio` must be >= 1 so that s/true_ratio is a probability, got {true_ratio!r}"
        )
    if weighted and weight_bound <= 1:
        raise ValueError(f"`weight_bound` must be > 1 for weighted data, got {weight_bound!r}")
    return weight_bound, true_ratio


def _simulated_block(
    generator: np.random.Generator,
    reps: int,
    n: int,
    weighted: bool,
    weight_bound: float,
    true_ratio: float,
) -> np.ndarray:
    """Sums of one block of replicates, shape (reps, 4) unweighted or (reps, 6) weighted."""
    u = generator.random((3, reps, n), dtype=np.float32)
    low = np.minimum(u[0], u[1])
    high = np.maximum(u[0], u[1], out=u[0])
    s = np.maximum(low, np.minimum(high, u[2], out=high), out=low)  # median of three uniforms
    y = generator.random((reps, n), dtype=np.float32) * np.float32(true_ratio) < s
    if weighted:
        w = generator.standard_exponential((reps, n), dtype=np.float32)
        np.clip(w, np.float32(1 / weight_bound), np.float32(weight_bound), out=w)
    else:
        w = np.float32(1.0)
    ws = w * s
    wy = np.where(y, w, np.float32(0.0))
    columns = [ws, wy, ws * s, wy * s]
    if weighted:
        columns = [w, ws, wy, w * w, ws * s, wy * s]
    return np.stack([c.sum(axis=1, dtype=np.float64) for c in columns], axis=1)


def _as_grid(name: str, values: object) -> tuple:
    items = tuple(values) if isinstance(values, list | tuple) else (values,)
    if not items:
        raise ValueError(f"`{name}` must list at least one value, got {shown(values)}")
    return items


def _summarise(ci: RatioCI, scale: Scale, truth: float) -> dict[str, float]:
    """Mean width, coverage, mean interval score and flagged count, on the analysis scale.

    As in the paper's tables, flagged replicates count as not covering and are left out of the
    mean width and score (the paper's NaN intervals are skipped by pandas' mean).
    """
    low, high = np.asarray(ci.low), np.asarray(ci.high)
    if scale == "log":
        low, high, truth = np.log(low), np.log(high), math.log(truth)
    ok = ~np.asarray(ci.flagged)
    score = interval_score(low[ok], high[ok], truth, 1 - ci.level)
    return {
        "width": float(np.mean(high[ok] - low[ok])) if ok.any() else math.nan,
        "coverage": float(coverage(low, high, truth)),
        "score": float(np.mean(score)) if ok.any() else math.nan,
        "flagged": int(np.count_nonzero(~ok)),
    }


@dataclass(frozen=True)
class _StudyGrid:
    """The validated grid of :func:`ratio_study`."""

    ns: tuple[int, ...]
    weightings: tuple[bool, ...]
    budgets: tuple[tuple[float, str, str], ...]  # (ε, mechanism, composition)
    methods: tuple[str, ...]
    scales: tuple[str, ...]
    reps: int
    B: int
    delta: float
    level: float
    weight_bound: float
    true_ratio: float


def _validate_study(
    n, epsilon, weighted, mechanism, composition, method, scale, reps, B, delta, level,
    weight_bound, true_ratio,
) -> _StudyGrid:  # fmt: skip
    """Check the whole grid, and refuse impossible budgets (e.g. classic Gaussian with ε/m >= 1),
    before anything is simulated."""
    weightings = _as_grid("weighted", weighted)
    for value in weightings:
        if not isinstance(value, bool | np.bool_):
            raise TypeError(f"`weighted` must be True or False, got {shown(value)}")
    epsilons = tuple(positive_number("epsilon", v) for v in _as_grid("epsilon", epsilon))
    pairs = product(
        (MECHANISMS.check("mechanism", v) for v in _as_grid("mechanism", mechanism)),
        (COMPOSITIONS.check("composition", v) for v in _as_grid("composition", composition)),
    )
    # zCDP calibrates only the Gaussian mechanism; other pairs with it are skipped.
    usable = [(mech, comp) for mech, comp in pairs if comp == "basic" or mech == "gaussian"]
    if not usable:
        raise ValueError(
            "no usable (mechanism, composition) pair: 'zcdp' needs mechanism='gaussian'"
        )
    budgets = tuple((eps, mech, comp) for eps, (mech, comp) in product(epsilons, usable))
    for is_weighted, (eps, mech, comp) in product(weightings, budgets):
        eps, delta_used = check_budget_args(eps, delta, mech, comp)
        noise_scales(
            dict.fromkeys(SUM_NAMES[: 6 if is_weighted else 5], 1.0), eps, delta_used, mech, comp
        )
    weight_bound, true_ratio = _check_design(any(weightings), weight_bound, true_ratio)
    return _StudyGrid(
        ns=tuple(positive_int("n", v) for v in _as_grid("n", n)),
        weightings=tuple(bool(v) for v in weightings),
        budgets=budgets,
        methods=tuple(
            one_of("method", v, {"public": "", **METHODS}) for v in _as_grid("method", method)
        ),
        scales=tuple(SCALES.check("scale", v) for v in _as_grid("scale", scale)),
        reps=positive_int("reps", reps),
        B=positive_int("B", B),
        delta=delta,
        level=open_unit_interval("level", level),
        weight_bound=weight_bound,
        true_ratio=true_ratio,
    )


def _setting_rows(
    grid: _StudyGrid, n: int, weighted: bool, generator: np.random.Generator
) -> list[dict]:
    """Rows of one (n, weighting): its data simulated once, released once per budget."""
    exact = simulate_calibration_sums(
        n,
        reps=grid.reps,
        weighted=weighted,
        weight_bound=grid.weight_bound,
        true_ratio=grid.true_ratio,
        rng=generator,
    )
    bounds = RatioBounds(1.0, 1.0, grid.weight_bound if weighted else 1.0)
    setting = {"n": n, "effective_n": float(np.mean(exact.effective_n)), "weighted": weighted}
    truth = grid.true_ratio
    public = {
        sc: _summarise(nonprivate_ratio_ci(exact, scale=sc, level=grid.level), sc, truth)
        for sc in grid.scales
    }
    rows = []
    for eps, mech, comp in grid.budgets:
        release = release_ratio_sums(
            exact,
            epsilon=eps,
            delta=grid.delta,
            mechanism=mech,
            bounds=bounds,
            composition=comp,
            noise=SimulationNoise(rng=generator),
        )
        budget = {"epsilon": eps, "delta": release.delta, "mechanism": mech, "composition": comp}
        for sc, meth in product(grid.scales, grid.methods):
            if meth == "public":
                summary = public[sc]
            else:
                ci = ratio_interval(
                    release, method=meth, scale=sc, level=grid.level, B=grid.B, rng=generator
                )
                summary = _summarise(ci, sc, truth)
            rows.append(
                {**setting, **budget, "method": meth, "scale": sc, "reps": grid.reps, **summary}
            )
    return rows


def ratio_study(
    *,
    n: int | Sequence[int] = (5000, 10000),
    epsilon: float | Sequence[float] = (0.2, 0.5, 1.0, 4.0),
    weighted: bool | Sequence[bool] = (False, True),
    mechanism: Mechanism | Sequence[Mechanism] = "gaussian",
    composition: Composition | Sequence[Composition] = "basic",
    method: str | Sequence[str] = ("public", "none", "monte_carlo", "analytical"),
    scale: Scale | Sequence[Scale] = "ratio",
    reps: int = 1000,
    B: int = 200,
    delta: float = 1e-6,
    level: float = 0.95,
    weight_bound: float = 3.0,
    true_ratio: float = 1.1,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """The paper's simulation (§3, Tables 1–4) over a grid, vectorized over replicates.

    Every grid argument takes one value or a sequence. For every n, weighting, ε, mechanism and
    composition, ``reps`` datasets are released once and every ``method`` × ``scale`` is computed
    from that same release. ``method`` may include ``"public"``, the non-private interval of the
    exact sums (the paper's public_* columns; it does not depend on the budget, so its row repeats
    for every budget setting). Pairs that cannot be combined (``composition="zcdp"`` with a
    mechanism other than ``"gaussian"``) are skipped, so ``composition=("basic", "zcdp")`` shows
    the two accountings side by side.

    Common random numbers: the data of each (n, weighting) are generated once and reused for every
    ε, mechanism, composition and method (the paper's code does the same in effect: it seeds each
    replicate identically across settings). Each setting's estimates stay unbiased, and differences
    between settings are less noisy than with independent data per setting.

    Returns a tidy frame, one row per setting and method: n, effective_n (mean Kish n of the exact
    data), weighted, epsilon, delta (0 for Laplace), mechanism, composition, method, scale, reps,
    width, coverage, score (mean interval score, Gneiting & Raftery 2007 eq. 43) and flagged (the
    count of degenerate replicates, which count as not covering and are left out of width and
    score, as the paper's NaN intervals are). Width and score are on the analysis scale (log units
    for ``scale="log"``, as in the paper's Tables 2 and 4).
    """
    grid = _validate_study(
        n, epsilon, weighted, mechanism, composition, method, scale, reps, B, delta, level,
        weight_bound, true_ratio,
    )  # fmt: skip
    generator = as_rng(rng)
    rows = [
        row
        for size, is_weighted in product(grid.ns, grid.weightings)
        for row in _setting_rows(grid, size, is_weighted, generator)
    ]
    return pd.DataFrame(rows)


def load_table1() -> pd.DataFrame:
    """Table 1 of the paper (Gaussian mechanism, ratio scale, 1000 replicates), as published.

    One row per setting: weighted (bool), n, effective_n, epsilon, then width, coverage and score
    for the public, nc (no correction), mc (Monte Carlo) and an (analytical) methods. Source:
    ``dpcore/data/ratio_table1_gaussian.csv`` (header comments describe the design).
    """
    with resources.files("dpcore").joinpath(TABLE1_PATH).open("r", encoding="utf-8") as handle:
        table = pd.read_csv(handle, comment="#")
    return table.assign(weighted=table["weighted"].map({"yes": True, "no": False}))


_METHOD_CODES = {"public": "public", "none": "nc", "monte_carlo": "mc", "analytical": "an"}


def table1_comparison(study: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Our :func:`~dpcore.analyses.ratio.ratio_study` rows beside the paper's Table 1.

    One row per setting (weighted, n, ε), composition and method with width, coverage and score
    from both (the paper's are NaN for settings it did not run, e.g. zCDP). ``study`` must be on
    the ratio scale with the Gaussian mechanism, as Table 1 is.
    """
    for name, value in (("study", study), ("paper", paper)):
        if not isinstance(value, pd.DataFrame):
            raise TypeError(f"`{name}` must be a DataFrame, got {type(value).__name__}")
    needed = {"weighted", "n", "epsilon", "method", "width", "coverage", "score"}
    if missing := needed - set(study.columns):
        raise ValueError(f"`study` lacks the columns {sorted(missing)}")
    long = []
    for method, code in _METHOD_CODES.items():
        part = paper[["weighted", "n", "effective_n", "epsilon"]].copy()
        part["method"] = method
        for metric in ("width", "coverage", "score"):
            part[f"paper_{metric}"] = paper[f"{code}_{metric}"]
        long.append(part)
    paper_long = pd.concat(long, ignore_index=True).astype({"n": int, "epsilon": float})
    ours = study.copy()
    if "composition" not in ours.columns:
        ours["composition"] = "basic"
    ours = ours.rename(columns={m: f"ours_{m}" for m in ("width", "coverage", "score")})
    ours = ours.drop(columns=["effective_n"], errors="ignore")
    paper_long["composition"] = "basic"
    merged = ours.merge(
        paper_long, on=["weighted", "n", "epsilon", "method", "composition"], how="left"
    )
    columns = ["weighted", "n", "effective_n", "epsilon", "composition", "method"]
    columns += [f"{who}_{m}" for m in ("width", "coverage", "score") for who in ("ours", "paper")]
    columns += [c for c in ("flagged", "reps") if c in merged.columns]
    order = {m: i for i, m in enumerate(_METHOD_CODES)}
    merged = merged.assign(_order=merged["method"].map(order))
    merged = merged.sort_values(
        ["weighted", "n", "epsilon", "composition", "_order"], kind="stable", ignore_index=True
    )
    return merged[columns]
