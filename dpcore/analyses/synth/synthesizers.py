"""DP synthesizers, vanilla and stratified (Rosenblatt, Stoyanovich & Musco, AAAI 2024
arXiv, appendix C): independent 1-way marginals, a full histogram and MWEM over marginals
(ε-DP), and MST and AIM through OpenDP (ρ = ε²/2-zCDP, :mod:`.mbi_models`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from dpcore.analyses.sample.samplers import draw_categorical, project_simplex
from dpcore.analyses.synth.encoding import (
    Method,
    allocate_rows,
    check_columns,
    check_domain,
    check_edges,
    check_frame,
    check_method,
    check_names,
    encode_rows,
    strata_groups,
)
from dpcore.analyses.synth.mbi_models import (
    MAX_MBI_CELLS,
    MBI_METHODS,
    check_rows_for_mbi,
    fit_joint,
    mbi_cells,
)
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import LABEL_SEPARATOR
from dpcore.foundations.mechanisms import NoiseKind, NoiseSource, as_noise_source
from dpcore.foundations.shares import PublicShares
from dpcore.foundations.validation import as_rng, positive_int, positive_number, shown
from dpcore.release.plan import Progress

__all__ = [
    "MAX_HISTOGRAM_CELLS",
    "MAX_MWEM_CELLS",
    "SyntheticData",
    "synthesize",
]


MAX_HISTOGRAM_CELLS = 1_000_000
"""Largest joint domain (cells) that ``method="histogram"`` accepts."""


MAX_MWEM_CELLS = 8_000_000
"""Largest joint domain that ``method="mwem"`` keeps in memory (64 MB as float64)."""


ALL_ROWS_LABEL = "All"
"""Group label of a vanilla (unstratified) synthesis in :attr:`SyntheticData.group_rows`."""


_MWEM_INIT_FRACTION = 0.3  # share of ε for the 1-way marginals that initialise MWEM


_MWEM_FINAL_SWEEPS = 3  # passes over all measurements after the last round


_MWEM_FLOOR = 1e-6  # uniform mass mixed into every MWEM target; keeps the model positive


@dataclass(frozen=True)
class SyntheticData:
    """A synthetic table and what it cost.

    Attributes
    ----------
    frame
        The synthetic rows; every column categorical with the full domain as its categories.
    method
        The synthesizer (a key of :data:`METHODS`).
    budget
        Privacy cost of the release under add/remove-one neighbours, also when stratified
        (parallel composition over disjoint groups): ``PureDP(ε)``, or ``ZCDP(ε²/2)`` for MST
        and AIM.
    strata
        The stratification columns, empty for vanilla.
    group_rows
        Synthetic rows per group (index: group labels; ``"All"`` for vanilla).
    domain
        Column → categories, in code order.
    domain_from_data
        Columns whose categories were read from the data (no ``domain`` given): the category
        *set* is then treated as public, as a schema would be. The UI should say so.
    selected
        Group → marginals that MWEM selected, in order (empty for other methods). Each marginal is
        a tuple of column names; releasing them is post-processing of DP selections.
    noise
        ``"simulation"`` (numpy, a preview) or ``"secure"`` (OpenDP, a release).
    """

    frame: pd.DataFrame
    method: Method
    budget: PureDP | ZCDP
    strata: tuple[str, ...]
    group_rows: pd.Series
    domain: Mapping[str, tuple[str, ...]]
    domain_from_data: tuple[str, ...] = ()
    selected: Mapping[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    noise: NoiseKind = "simulation"

    def __post_init__(self) -> None:
        if not isinstance(self.frame, pd.DataFrame):
            raise TypeError(f"`frame` must be a pandas DataFrame, got {type(self.frame).__name__}")
        check_method(self.method)
        if not isinstance(self.budget, ZCDP if self.method in MBI_METHODS else PureDP):
            raise TypeError(
                f"`budget` must be ZCDP for MST and AIM, else PureDP; got {self.budget!r} for "
                f"{self.method!r}"
            )
        if int(self.group_rows.sum()) != len(self.frame):
            raise ValueError(
                f"`group_rows` must add up to the {len(self.frame):,} rows of `frame`, got "
                f"{int(self.group_rows.sum()):,}"
            )


@dataclass(frozen=True, eq=False)
class _GroupRows:
    """The rows a synthesizer fits, encoded: one row of category ``codes`` per row (or per
    engine cell, counted ``weights[i]`` times; None counts each once) over columns of
    ``sizes`` categories each."""

    codes: np.ndarray
    weights: np.ndarray | None
    sizes: tuple[int, ...]

    def marginal(self, axes: tuple[int, ...]) -> np.ndarray:
        """The rows in each cell of the marginal on ``axes``; row i counts ``weights[i]`` times
        (an engine's cell of that many identical rows), once without weights. Whole numbers
        either way, exact in floating point, so cells and their rows give the same marginals."""
        shape = tuple(self.sizes[a] for a in axes)
        codes = self.codes
        flat = (
            np.ravel_multi_index(codes[:, list(axes)].T, shape) if len(codes) else np.zeros(0, int)
        )
        counts = np.bincount(flat, weights=self.weights, minlength=math.prod(shape))
        return counts.astype(float).reshape(shape)


def _model_marginal(joint: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return np.einsum(joint, list(range(joint.ndim)), list(axes))


def _model_marginals(
    joint: np.ndarray, targets: list[tuple[int, ...]]
) -> dict[tuple[int, ...], np.ndarray]:
    """Many marginals of ``joint`` at once, sharing partial sums.

    Axes are summed out one at a time, largest first, in one canonical order; every partial sum
    is cached, so targets that drop the same large axes share the passes over the full joint.
    """
    order = sorted(range(joint.ndim), key=lambda a: -joint.shape[a])
    cache: dict[tuple[int, ...], np.ndarray] = {(): joint}

    def summed(removed: tuple[int, ...]) -> np.ndarray:
        if removed not in cache:
            parent = summed(removed[:-1])
            position = sum(1 for a in range(removed[-1]) if a not in removed[:-1])
            cache[removed] = parent.sum(axis=position)
        return cache[removed]

    return {axes: summed(tuple(a for a in order if a not in axes)) for axes in targets}


def _to_distribution(noisy_counts: np.ndarray, total: float) -> np.ndarray:
    """Post-processing: the projection of noisy counts / total onto the simplex."""
    return project_simplex(noisy_counts.ravel() / total).reshape(noisy_counts.shape)


def _noisy_total(noisy: list[np.ndarray]) -> float:
    r"""Estimate of the group size n from noisy marginals with equal noise scale, at least 1.

    Marginal j sums to n plus noise of variance :math:`\propto K_j` (its cell count), so the
    inverse-variance average :math:`\hat n = \sum_j (S_j/K_j) / \sum_j (1/K_j)` is used.
    """
    weights = np.array([1 / m.size for m in noisy])
    return max(float(np.dot(weights, [m.sum() for m in noisy]) / weights.sum()), 1.0)


def _fit_independent(rows: _GroupRows, epsilon: float, noise: NoiseSource) -> list[np.ndarray]:
    r"""Noisy 1-way marginals: d histograms have L1 sensitivity d, so Laplace scale d/ε."""
    d = len(rows.sizes)
    noisy = [noise.add_laplace(rows.marginal((j,)), d / epsilon) for j in range(d)]
    total = _noisy_total(noisy)
    return [_to_distribution(m, total) for m in noisy]


def _fit_histogram(rows: _GroupRows, epsilon: float, noise: NoiseSource) -> np.ndarray:
    """Noisy full-joint histogram (sensitivity 1, Laplace scale 1/ε), projected to the simplex."""
    joint = rows.marginal(tuple(range(len(rows.sizes))))
    noisy = noise.add_laplace(joint, 1 / epsilon)
    return _to_distribution(noisy, _noisy_total([noisy]))


def _outer(marginals: list[np.ndarray]) -> np.ndarray:
    joint = marginals[0]
    for m in marginals[1:]:
        joint = np.multiply.outer(joint, m)
    return joint


def _floored(target: np.ndarray) -> np.ndarray:
    return (1 - _MWEM_FLOOR) * target + _MWEM_FLOOR / target.size


def _ipf_step(joint: np.ndarray, axes: tuple[int, ...], target: np.ndarray) -> None:
    """In place: rescale ``joint`` so its marginal on ``axes`` equals ``target`` (KL projection)."""
    current = _model_marginal(joint, axes)
    shape = [joint.shape[a] if a in axes else 1 for a in range(joint.ndim)]
    joint *= (target / np.maximum(current, np.finfo(float).tiny)).reshape(shape)


def _exponential_mechanism(scores: np.ndarray, epsilon: float, noise: NoiseSource) -> int:
    r"""Index i with probability :math:`\propto \exp(\varepsilon\, q_i / (2\Delta))`, Δ = 1.

    Gumbel-max: :math:`\arg\max_i \varepsilon q_i/2 + G_i` with :math:`G_i = -\ln|L_i|`,
    :math:`L_i \sim \mathrm{Laplace}(1)` (then :math:`|L_i| \sim \mathrm{Exp}(1)` and
    :math:`-\ln|L_i| \sim \mathrm{Gumbel}(0, 1)`), so the draws come from the noise source.
    """
    gumbel = -np.log(np.abs(noise.add_laplace(np.zeros(len(scores)), 1.0)))
    return int(np.argmax(epsilon * scores / 2 + gumbel))


class _Measurements:
    """Noisy marginals by attribute set; repeated measurements are averaged by inverse variance."""

    def __init__(self, total: float) -> None:
        self.total = total
        self._sums: dict[tuple[int, ...], tuple[np.ndarray, float]] = {}

    def add(self, axes: tuple[int, ...], noisy: np.ndarray, scale: float) -> np.ndarray:
        """Record a measurement with Laplace scale ``scale``; return the marginal's target."""
        weighted, weight = self._sums.get(axes, (0.0, 0.0))
        self._sums[axes] = (weighted + noisy / scale**2, weight + 1 / scale**2)
        return self.target(axes)

    def target(self, axes: tuple[int, ...]) -> np.ndarray:
        weighted, weight = self._sums[axes]
        return _floored(_to_distribution(weighted / weight, self.total))

    def __iter__(self):
        return iter(list(self._sums))


def _fit_mwem(
    rows: _GroupRows, epsilon: float, noise: NoiseSource, *, rounds: int, way: int
) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """Budget-aware MWEM over the 1- to ``way``-way marginals (see :func:`synthesize`).

    Returns the dense joint distribution and the selected marginals in order.
    """
    d = len(rows.sizes)
    workload = [axes for r in range(1, min(way, d) + 1) for axes in combinations(range(d), r)]
    eps_init = _MWEM_INIT_FRACTION * epsilon
    scale = 2 * rounds / (epsilon - eps_init)  # each round: ε_r/2 to select, ε_r/2 to measure
    noisy = [noise.add_laplace(rows.marginal((j,)), d / eps_init) for j in range(d)]
    measured = _Measurements(_noisy_total(noisy))
    joint = _outer([measured.add((j,), m, d / eps_init) for j, m in enumerate(noisy)])
    truth = {axes: rows.marginal(axes) for axes in workload}
    penalty = np.array([scale * truth[axes].size for axes in workload])
    chosen: list[tuple[int, ...]] = []
    for _ in range(rounds):
        model = _model_marginals(joint, workload)
        errors = np.array([np.abs(truth[a] - measured.total * model[a]).sum() for a in workload])
        axes = workload[_exponential_mechanism(errors - penalty, 1 / scale, noise)]
        chosen.append(axes)
        _ipf_step(joint, axes, measured.add(axes, noise.add_laplace(truth[axes], scale), scale))
    for _ in range(_MWEM_FINAL_SWEEPS):
        for axes in measured:
            _ipf_step(joint, axes, measured.target(axes))
    return joint / joint.sum(), chosen


def _sample_joint(joint: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    flat = draw_categorical(joint.ravel(), size, rng=rng)
    return np.column_stack(np.unravel_index(flat, joint.shape)).reshape(size, joint.ndim)


def _sample_product(marginals: list[np.ndarray], size: int, rng: np.random.Generator) -> np.ndarray:
    return np.column_stack([draw_categorical(m, size, rng=rng) for m in marginals])


def _check_domain_size(method: Method, sizes: tuple[int, ...], columns: tuple[str, ...]) -> None:
    cells = mbi_cells(sizes) if method in MBI_METHODS else math.prod(sizes)
    limit = {
        "histogram": MAX_HISTOGRAM_CELLS, "mwem": MAX_MWEM_CELLS, "mst": MAX_MBI_CELLS,
        "aim": MAX_MBI_CELLS,
    }.get(method)  # fmt: skip
    if limit is not None and cells > limit:
        raise ValueError(
            f"`method={method!r}` keeps the full joint domain of {list(columns)} in memory: "
            f"{cells:,} cells, above its limit of {limit:,}. Model fewer columns, use coarser "
            "bucket edges, stratify (the strata columns leave the model), or use "
            "method='independent'"
        )


def check_weights(weights: object, rows: int) -> np.ndarray | None:
    """``weights`` as float counts, one whole number ≥ 0 per row (None stays None)."""
    if weights is None:
        return None
    array = np.asarray(weights, dtype=float)
    if array.shape != (rows,) or not np.all((array >= 0) & (array == np.round(array))):
        raise ValueError(f"`weights` must be {rows:,} whole numbers >= 0, one per row")
    return array


def _fit_and_sample(
    rows: _GroupRows,
    size: int,
    *,
    method: Method,
    epsilon: float,
    noise: NoiseSource,
    rng: np.random.Generator,
    rounds: int,
    way: int,
) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    if method == "independent":
        return _sample_product(_fit_independent(rows, epsilon, noise), size, rng), []
    if method == "histogram":
        return _sample_joint(_fit_histogram(rows, epsilon, noise), size, rng), []
    if method in MBI_METHODS:
        check_rows_for_mbi(method, rows.weights)
        return _sample_joint(fit_joint(rows.codes, rows.sizes, method, epsilon), size, rng), []
    joint, chosen = _fit_mwem(rows, epsilon, noise, rounds=rounds, way=way)
    return _sample_joint(joint, size, rng), chosen


def fit_groups(
    codes: np.ndarray,
    index: np.ndarray,
    sizes: tuple[int, ...],
    counts: np.ndarray,
    progress: Progress | None = None,
    weights: np.ndarray | None = None,
    **fit: object,
) -> list[tuple[np.ndarray, list[tuple[int, ...]]]]:
    """Per group g: ``counts[g]`` synthetic rows (codes) from a model fitted on the group's rows
    (row i counted ``weights[i]`` times, once without weights).

    ``progress(done, total)`` is called before each group's fit and once at the end."""
    order = np.argsort(index, kind="stable")
    bounds = np.searchsorted(index[order], np.arange(len(counts) + 1))
    out = []
    for g, count in enumerate(counts.tolist()):
        if progress is not None:
            progress(g, len(counts))
        if count == 0:
            out.append((np.zeros((0, len(sizes)), dtype=np.int64), []))
            continue
        chosen = order[bounds[g] : bounds[g + 1]]
        group_weights = None if weights is None else weights[chosen]
        out.append(_fit_and_sample(_GroupRows(codes[chosen], group_weights, sizes), count, **fit))
    if progress is not None:
        progress(len(counts), len(counts))
    return out


def assemble_rows(
    fitted: list[tuple[np.ndarray, list]],
    groups: np.ndarray,
    model_cols: tuple[str, ...],
    strata_cols: tuple[str, ...],
    output: tuple[str, ...],
    labels: Mapping[str, tuple[str, ...]],
) -> pd.DataFrame:
    """The synthetic frame: model columns from the draws, strata columns set to each group."""
    counts = [len(rows) for rows, _ in fitted]
    model = np.concatenate([rows for rows, _ in fitted])
    data = {c: model[:, j] for j, c in enumerate(model_cols)}
    data |= {c: np.repeat(groups[:, j], counts) for j, c in enumerate(strata_cols)}
    return pd.DataFrame(
        {c: pd.Categorical.from_codes(data[c], categories=list(labels[c])) for c in output}
    )


def synthesize(
    frame: pd.DataFrame,
    columns: Sequence[str] | None = None,
    *,
    method: Method,
    epsilon: float,
    n_rows: int,
    strata: str | Sequence[str] | None = None,
    shares: PublicShares | Mapping | pd.Series | None = None,
    rng: np.random.Generator | int | None = None,
    edges: Mapping[str, Sequence[float]] | None = None,
    domain: Mapping[str, Sequence[str]] | None = None,
    rounds: int = 6,
    way: int = 3,
    noise: NoiseKind | NoiseSource = "simulation",
    progress: Progress | None = None,
    weights: Sequence[int] | np.ndarray | None = None,
) -> SyntheticData:
    r"""DP synthetic categorical data, vanilla or stratified (AAAI 2024, appendix C).

    **Vanilla** (``strata=None``): one model of ``columns`` fitted on all rows with budget ε;
    ``n_rows`` rows drawn from it. **Stratified**: for each group g of the ``strata`` columns a
    model of the other columns is fitted on the group's rows :math:`G_g` with the full ε, and
    :math:`n_g` rows are drawn from it with the strata columns set to g's values, where
    :math:`n_g \approx` ``n_rows`` :math:`\cdot w_g` (largest remainders, so
    :math:`\sum_g n_g` = ``n_rows``) and :math:`w_g` are the caller's public ``shares``. Groups
    are disjoint, so the release is ε-DP by parallel composition. The groups are those of
    ``shares`` — a public list — so a group with a share but no rows is fitted to noise alone,
    and a row whose group has no share is an error.

    Models (neighbours: add/remove one row; Laplace noise through ``noise``):

    - ``"independent"``: the d 1-way marginals :math:`M_j(D)` with
      :math:`\mathrm{Lap}(d/\varepsilon)` per cell (L1 sensitivity d), each projected onto the
      simplex (:func:`project_simplex`); columns drawn independently.
    - ``"histogram"``: the full-joint histogram with :math:`\mathrm{Lap}(1/\varepsilon)` per
      cell, projected onto the simplex — the k-ary sampler (Raskhodnikova et al. 2021, Alg. 3)
      on the joint domain, counts instead of proportions because n is not public under
      add/remove. Refused above :data:`MAX_HISTOGRAM_CELLS` cells.
    - ``"mwem"``: MWEM (Hardt, Ligett & McSherry 2012) with whole marginals as queries, made
      budget-aware as in AIM (McKenna et al. 2022) — the select–measure–project loop of AAAI
      2024, app. C. A share :math:`\varepsilon_0 = 0.3\varepsilon` measures the d 1-way
      marginals (:math:`\mathrm{Lap}(d/\varepsilon_0)`); their projected product is the initial
      model p, and their noisy sums :math:`S_j` give :math:`\hat n = \sum_j (S_j/K_j) /
      \sum_j (1/K_j)` (inverse-variance weights; :math:`K_j` cells). Each of the T = ``rounds``
      rounds spends :math:`\varepsilon_r = 0.7\varepsilon/T`, so the total is ε by sequential
      composition:

      1. **select** a marginal S among all 1- to ``way``-way marginals with the exponential
         mechanism (:math:`\varepsilon_r/2`), score :math:`q(S) = \lVert M_S(D) - \hat n\,
         M_S(p)\rVert_1 - b\,|\Omega_S|`, sensitivity 1 (the penalty, AIM's, is the expected
         L1 error :math:`E|\mathrm{Lap}(b)| = b` per cell of measuring S; it is data-free and
         keeps a small group from spending its budget on marginals that noise would swamp);
      2. **measure** :math:`M_S(D) + \mathrm{Lap}(b)`, :math:`b = 2/\varepsilon_r`; repeated
         measurements of one marginal are averaged with inverse-variance weights;
      3. **project** with the multiplicative update :math:`p(x) \leftarrow p(x)\,y_S(x_S) /
         M_S(p)(x_S)`, :math:`y_S` the simplex projection of the measurement over
         :math:`\hat n`.

      Three sweeps over all measured marginals close the fit. The update is the KL
      (I-)projection of p onto one measured marginal — iterative proportional fitting — of
      which MWEM's :math:`p(x)\exp(q(x)(m - q(p))/2n)` is a first-order version that converges
      slowly when a marginal's cells hold small probabilities. Targets are mixed with
      :math:`10^{-6}` of the uniform distribution so p stays positive and a cell zeroed by one
      noisy measurement can be revived by another. p is a dense array over the joint domain:
      refused above :data:`MAX_MWEM_CELLS` cells.
    - ``"mst"`` and ``"aim"``: MST (McKenna, Miklau & Sheldon 2021) and AIM (McKenna et al.
      2022) run by OpenDP (:func:`~dpcore.analyses.synth.mbi_models.fit_joint`) at
      :math:`\rho = \varepsilon^2/2`-zCDP with Gaussian noise, which is what an ε-DP release
      costs a zCDP ledger (Bun & Steinke 2016, Prop. 1.4); the release's budget is then
      ``ZCDP(ε²/2)``. OpenDP's noise is always its own secure noise (``noise`` and the seed do
      not reach it); ``rng`` draws the rows. Refused above
      :data:`~dpcore.analyses.synth.mbi_models.MAX_MBI_CELLS` cells.

    Parameters
    ----------
    frame
        The confidential rows.
    columns
        Columns to synthesize; by default every non-numeric column and every column in
        ``edges``. Strata columns not listed are appended to the output.
    method
        ``"independent"``, ``"mwem"``, ``"histogram"``, ``"mst"`` or ``"aim"``.
    epsilon
        Total ε (> 0) of the release (ρ = ε²/2 for MST and AIM).
    n_rows
        Synthetic rows to draw.
    strata, shares
        Stratification columns and their public group shares: a :class:`PublicShares` with
        labels, or a mapping / Series from a group (a tuple of values, or values joined by
        ``" × "``) to its share; shares are >= 0 and sum to 1.
    rng
        Seeds the simulation noise and the draws of rows.
    edges
        Public bucket edges for numeric columns (see :func:`bucketize`). Required for every
        numeric column used; never derived from data.
    domain
        Public categories per column. Columns without one use the categories in the data, which
        treats the category *set* as public; they are listed in
        :attr:`SyntheticData.domain_from_data`.
    rounds, way
        MWEM's number of rounds T and the largest order of the marginals it selects from.
    noise
        ``"simulation"`` (numpy, seeded by ``rng``), ``"secure"`` (OpenDP) or a
        :class:`~dpcore.foundations.mechanisms.NoiseSource` (not used by MST and AIM, which draw OpenDP's).
    progress
        Called with (groups fitted, groups) as the fits run.
    weights
        How many identical rows each row of ``frame`` stands for (whole numbers ≥ 0): an
        engine's count of each combination of values (:func:`~dpcore.analyses.synth.aggregate.aggregate_synth`).
        Every model above but MST and AIM reads the rows only through their marginal counts,
        so a table of cells with their counts gives exactly the release its rows would, with
        the same noise at the same seed; MST and AIM (OpenDP counts the rows) refuse weights.
        None: each row counts once.

    Returns
    -------
    SyntheticData
    """
    frame = check_frame(frame)
    method = check_method(method)
    epsilon = positive_number("epsilon", epsilon)
    n_rows = positive_int("n_rows", n_rows)
    rounds, way = positive_int("rounds", rounds), positive_int("way", way)
    strata_cols = () if strata is None else check_names("strata", strata)
    if strata is not None and not strata_cols:
        raise ValueError("`strata` must name at least one column, got none")
    if (shares is None) != (strata is None):
        raise ValueError(
            "`shares` must be given exactly when `strata` is: a stratified synthesis draws each "
            f"group in proportion to its public share; got strata={shown(strata)}, "
            f"shares={shown(shares)}"
        )
    edges_arr = check_edges(edges)
    columns = check_columns(frame, columns, strata_cols, edges_arr)
    row_weights = check_weights(weights, len(frame))
    check_rows_for_mbi(method, row_weights)
    output = columns + tuple(c for c in strata_cols if c not in columns)
    model_cols = tuple(c for c in output if c not in strata_cols)
    codes, labels = encode_rows(
        frame, model_cols + strata_cols, edges_arr, check_domain(domain, output)
    )
    sizes = tuple(len(labels[c]) for c in model_cols)
    _check_domain_size(method, sizes, model_cols)
    groups, weights, index = strata_groups(codes, labels, strata_cols, model_cols, shares)
    generator = as_rng(rng)
    source = as_noise_source(noise, rng=generator)
    fitted = fit_groups(
        codes[:, : len(model_cols)],
        index,
        sizes,
        allocate_rows(n_rows, weights),
        method=method,
        epsilon=epsilon,
        noise=source,
        rng=generator,
        rounds=rounds,
        way=way,
        progress=progress,
        weights=row_weights,
    )
    group_labels = [
        LABEL_SEPARATOR.join(labels[c][k] for c, k in zip(strata_cols, g, strict=True))
        if strata_cols
        else ALL_ROWS_LABEL
        for g in groups.tolist()
    ]
    return SyntheticData(
        frame=assemble_rows(fitted, groups, model_cols, strata_cols, output, labels),
        method=method,
        budget=ZCDP(epsilon**2 / 2) if method in MBI_METHODS else PureDP(epsilon),
        strata=strata_cols,
        group_rows=pd.Series([len(c) for c, _ in fitted], index=group_labels, name="rows"),
        domain={c: labels[c] for c in output},
        domain_from_data=tuple(c for c in output if c not in edges_arr and c not in (domain or {})),
        selected={
            lab: tuple(tuple(model_cols[a] for a in axes) for axes in chosen)
            for lab, (_, chosen) in zip(group_labels, fitted, strict=True)
            if chosen
        },
        noise=source.kind,
    )
