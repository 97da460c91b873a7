r"""GVDP's statistics from an engine's passes, for the fits linear in row weights (the mean and
OLS): the rows of every group from one pass (:func:`aggregate_gvdp`), then, per release, the
bag of little bootstraps from one more pass with a fresh salt (:class:`EngineBags`,
:mod:`dpcore.engines.blb`), fed to GVDP's private stage unchanged (Covington et al., Alg. 1).

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpcore.analyses.base import EngineStatistics
from dpcore.analyses.gvdp.blb import Bag, degrees_of_freedom_factor, least_norm_solve
from dpcore.analyses.gvdp.bounds import ROWS_PER_COEFFICIENT
from dpcore.analyses.gvdp.data import GvdpData, Moments
from dpcore.analyses.gvdp.model import GvdpModel
from dpcore.engines.base import GROUP, Clipped, Engine, SumsQuery, aggregate_cells
from dpcore.engines.blb import K_COLUMN, SCALE_COLUMN, SUBSET, BlbQuery
from dpcore.foundations.grouping import HOLDOUT_CODE, GroupingSpec
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from dpcore.foundations.shares import require_fixed_shares

__all__ = ["ENGINE_MODELS", "EngineBags", "aggregate_gvdp", "gvdp_rows_query"]

ENGINE_MODELS = ("mean", "ols")
"""The models whose fit is linear in row weights, so that an engine's weighted sums give it; a
logistic fit needs a pass per Newton step and runs on rows in memory only."""
UNCLIPPED = float(np.finfo(float).max)
"""No row is clipped (module doc of :mod:`dpcore.engines.blb`): the inputs' bounds are the
largest doubles, and only finite rows are used."""
KEPT = "kept"


def gvdp_rows_query(spec: GroupingSpec, model: GvdpModel, unit: PrivacyUnit = ROW) -> SumsQuery:
    """The rows a GVDP run reads: the cells of ``spec``, the model's columns (outcome first),
    the rows with all of them finite that the contribution bound of ``unit`` keeps; per cell
    the number of those rows (``kept``)."""
    roles = ("outcome", *("covariate" for _ in model.covariates))
    inputs = tuple(
        Clipped(column, -UNCLIPPED, UNCLIPPED, role)
        for column, role in zip(model.columns, roles, strict=True)
    )
    return SumsQuery(spec.by, spec.edges, inputs, moment_sums(model), unit=unit)


def moment_sums(model: GvdpModel) -> tuple[tuple[str, tuple[str, ...]], ...]:
    r"""The unweighted sums of the non-private fit: :math:`\sum X_a X_b` (a ≤ b; ``kept`` is
    :math:`\sum 1`), :math:`\sum X_a y` and :math:`\sum y^2`, X = (1, covariates)."""
    design = (None, *model.covariates)
    y = model.outcome
    out = []
    for a in range(len(design)):
        for b in range(a, len(design)):
            factors = tuple(c for c in (design[a], design[b]) if c is not None)
            out.append((KEPT if not factors else f"m_{a}_{b}", factors))
    out += [(f"m_{a}_y", (*(() if c is None else (c,)), y)) for a, c in enumerate(design)]
    return (*out, ("m_y_y", (y, y)))


def _moments(table: pd.DataFrame, model: GvdpModel, codes: np.ndarray, groups: int) -> Moments:
    """Per group (and for every private row, last) the sums of :func:`moment_sums`."""
    p = model.d if model.kind != "mean" else 1
    runs = np.where(codes >= 0, codes, groups)  # a dropped group's rows: the population's only
    private = codes != HOLDOUT_CODE

    def per_run(name: str) -> np.ndarray:
        by_run = np.bincount(runs[private], weights=table[name].to_numpy(float)[private],
                             minlength=groups + 1)  # fmt: skip
        by_run[groups] = by_run.sum()
        return by_run

    gram = np.zeros((groups + 1, p, p))
    xy = np.zeros((groups + 1, p))
    for a in range(p):
        for b in range(a, p):
            gram[:, a, b] = gram[:, b, a] = per_run(KEPT if a == b == 0 else f"m_{a}_{b}")
        xy[:, a] = per_run(f"m_{a}_y")
    return Moments(gram, xy, per_run("m_y_y"))


@dataclass(frozen=True, eq=False)
class EngineBags:
    """Where a GVDP run draws its bag of little bootstraps: one pass of ``engine`` over the
    rows of ``query`` per salt and run (:meth:`population`, :meth:`groups`); ``cells`` holds
    the private cells' labels and their group code (:data:`GROUP`, −1 for a dropped group)."""

    engine: Engine
    query: SumsQuery
    cells: pd.DataFrame

    def population(self, salt: str, k: int, resamples: int, rows: int) -> Bag:
        """The bag of the run on every private row, with k subsets."""
        return self._bags(salt, True, (int(k),), (int(rows),), int(resamples))[0]

    def groups(
        self, salt: str, subsets: tuple[int, ...], resamples: int, rows: tuple[int, ...]
    ) -> list[Bag]:
        """The bag of every group's run, group g with ``subsets[g]`` subsets."""
        return self._bags(
            salt, False, tuple(int(k) for k in subsets), tuple(int(n) for n in rows),
            int(resamples),
        )  # fmt: skip

    @functools.lru_cache(maxsize=8)  # noqa: B019 - a release's preview and run share a salt
    def _bags(
        self, salt: str, population: bool, subsets: tuple[int, ...], rows: tuple[int, ...],
        resamples: int,
    ) -> list[Bag]:  # fmt: skip
        cells = self.cells
        mapping = cells.assign(**{GROUP: 0}) if population else cells[cells[GROUP] >= 0]
        ks = np.asarray(subsets, dtype=np.int64)
        k_of_cell = ks[mapping[GROUP].to_numpy(np.int64)]
        mapping = mapping.assign(**{
            K_COLUMN: k_of_cell, SCALE_COLUMN: [1.0 / math.sqrt(k) for k in k_of_cell]
        })  # fmt: skip
        query = BlbQuery(self.query, resamples, salt)
        table = self.engine.blb_sums(query, mapping)
        return bag_estimates(table, ks, np.asarray(rows), query.design, resamples)


def aggregate_gvdp(
    engine: Engine, spec: GroupingSpec, model: GvdpModel, unit: PrivacyUnit = ROW
) -> EngineStatistics[GvdpData]:
    """The groups of ``spec`` and every group's usable rows for ``model`` (a mean or OLS), from
    one pass of ``engine``; each release then draws its bag of little bootstraps through
    :attr:`GvdpData.bags`. Rows with a missing or infinite model value are left out (and
    counted), as :func:`~dpcore.analyses.gvdp.prepare_data` leaves them out in memory.

    With a person column (``unit``), every row of a person falls in one subset of their group
    (:mod:`dpcore.engines.blb`), so a release at ρ protects the person, all their rows
    together, as Sample & Aggregate protects one row; each person must then be bounded to one
    group (``max_groups=1``), so that the groups still compose in parallel. (The app and the
    command line count each row as a person for GVDP so far.)

    Raises
    ------
    EngineError
        Data the pass cannot read as asked (:func:`~dpcore.engines.base.aggregate_cells`).
    ValueError
        A logistic model (a Newton step per pass), a person bounded to several groups, too few
        rows, or groups the spec cannot build.
    """
    if model.kind not in ENGINE_MODELS:
        raise ValueError(
            "A logistic regression needs the rows in memory (each Newton step of its fit would "
            "be one more pass over every row). Upload the data (or a sample of it) on the Data "
            "page, or choose the mean or a linear regression (OLS)."
        )
    if unit.max_groups > 1:
        raise ValueError(
            f"A person may be in {unit.max_groups} groups here, and GVDP's groups compose in "
            "parallel only when each person is in one: bound each person to one group "
            "(max_groups=1; their rows then fall in one subset, however many they are)."
        )
    query = gvdp_rows_query(spec, model, unit)
    cells, grouping, dataset = aggregate_cells(engine, spec, query)
    table = cells.table
    codes = grouping.codes
    private = codes != HOLDOUT_CODE
    kept = table[KEPT].to_numpy(float)
    group_rows = np.bincount(codes[codes >= 0], weights=kept[codes >= 0], minlength=grouping.k)
    group_rows = group_rows.round().astype(int)
    rows = int(round(kept[private].sum()))
    if rows < model.min_rows:
        raise ValueError(
            f"the data have {rows:,} complete rows; GVDP needs at least {model.min_rows} "
            f"({ROWS_PER_COEFFICIENT} per coefficient, {model.d} coefficients)."
        )
    small = [label for label, n in zip(grouping.labels, group_rows, strict=True)
             if n < model.min_rows]  # fmt: skip
    group_error = None
    if small:
        group_error = (
            f"group {small[0]!r} has {int(group_rows[grouping.labels.index(small[0])]):,} "
            f"complete rows; GVDP needs at least {model.min_rows} ({ROWS_PER_COEFFICIENT} per "
            f"coefficient, {model.d} coefficients). On the Strata page, merge or drop the small "
            "groups (with a larger minimum group size), use fewer covariates, or fit the whole "
            "population only."
        )
    labelled = table.loc[private, list(spec.by)].reset_index(drop=True)
    labelled[GROUP] = codes[private]
    n_input = int(table.loc[private, "rows"].sum())
    n_missing = n_input - int(table.loc[private, "finite"].sum())  # the bound's drops aside
    stats = GvdpData(
        model=model, labels=tuple(grouping.labels),
        shares=np.asarray(
            require_fixed_shares(grouping.shares, "The general estimator").values, dtype=float
        ),
        share_description=grouping.shares.description, population=None, rows=rows, groups=(),
        group_rows=group_rows, n_input=n_input, n_missing=n_missing,
        n_ungrouped=int(round(kept[codes == -1].sum())), group_error=group_error,
        bags=EngineBags(engine, query, labelled), engine=engine.name,
        moments=_moments(table, model, codes, grouping.k), recipe=_recipe(engine, model),
    )  # fmt: skip
    return EngineStatistics(stats, dataset)


def _recipe(engine: Engine, model: GvdpModel) -> str:
    """Python that runs the same pass again, for a release's script (``spec`` defined)."""
    return (
        "from dpcore import GvdpModel\n"
        f"from dpcore.engines import {type(engine).__name__}\n"
        "from dpcore.analyses.gvdp.aggregate import aggregate_gvdp\n"
        f"aggregated = aggregate_gvdp({engine.expression}, spec, {model!r})\n"
    )


def bag_estimates(
    table: pd.DataFrame, subsets: np.ndarray, rows: np.ndarray, p: int, resamples: int
) -> list[Bag]:
    r"""The fit of every (group, subset, resample) from the weighted sums of ``table`` (an
    engine's :meth:`blb_sums`), :math:`\hat\theta = (\sum w X X^\top)^{-1} \sum w X y`, and per
    group its BLB summaries (the r fits' mean and variance, ddof = 1) as a :class:`Bag` of
    ``rows[g]`` rows, the variances corrected for the p coefficients fitted on each subset
    (:func:`~dpcore.analyses.gvdp.blb.degrees_of_freedom_factor`, at its nominal size
    ``rows[g] // subsets[g]``); ``subsets[g]`` is group g's k. A resample whose sums are
    singular (no row drawn, or a covariate constant in it) is fitted by least norm
    (:func:`~dpcore.analyses.gvdp.blb.least_norm_solve`), as in memory."""
    group = table[GROUP].to_numpy(np.int64)
    subset = table[SUBSET].to_numpy(np.int64)
    offsets = np.concatenate([[0], np.cumsum(subsets)])
    slot = offsets[group] + subset
    total = int(offsets[-1])
    gram = np.zeros((total, resamples, p, p))
    rhs = np.zeros((total, resamples, p))
    for j in range(resamples):
        for a in range(p):
            for b in range(a, p):
                gram[slot, j, a, b] = gram[slot, j, b, a] = table[f"xx{j}_{a}_{b}"].to_numpy()
            rhs[slot, j, a] = table[f"xy{j}_{a}"].to_numpy()
    # As in memory: a resample whose sums are singular (a covariate constant in it, or no row
    # drawn) is fitted by least norm rather than refusing the release on an event one added
    # person can cause (least_norm_solve says why this keeps GVDP's privacy).
    fits = least_norm_solve(gram, rhs)
    bags = []
    for g, k_g in enumerate(subsets):
        part = fits[offsets[g] : offsets[g + 1]]
        variances = part.var(axis=1, ddof=1)
        if not np.all(np.isfinite(variances)):
            raise ValueError(
                "the fit overflowed on a bootstrap resample; lower `k` so each subset has more "
                "rows, or rescale the data"
            )
        # The mean is a regression on a constant here (p = 1): one factor serves both.
        factor = degrees_of_freedom_factor(int(rows[g]) // int(k_g), p)
        bags.append(Bag(part.mean(axis=1), variances * factor, int(rows[g])))
    return bags
