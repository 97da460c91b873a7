"""The general estimator's sufficient data: the model's usable rows, grouped.

:func:`prepare_data` drops rows with a missing model value, groups the rest with the strata and
checks, per group, that the bag of little bootstraps has enough rows per subset (and, for a
binary column, enough of each value) before any noise is drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpcore.analyses.base import NeedsRowsInMemory
from dpcore.analyses.gvdp.bounds import (
    ROWS_PER_COEFFICIENT,
    recommended_subset_rows,
    recommended_subsets,
)
from dpcore.analyses.gvdp.model import GvdpModel, ModelRows
from dpcore.foundations.grouping import DROPPED_CODE, Grouping
from dpcore.foundations.shares import require_fixed_shares
from dpcore.foundations.validation import (
    instance_of,
    positive_int,
)

__all__ = [
    "MAX_FIT_RISK",
    "GvdpData",
    "Moments",
    "fitting_subsets",
    "fit_risk",
    "prepare_data",
    "subsets_for",
]


MAX_FIT_RISK = 0.05
"""Refuse a run whose BLB fit would fail with a larger (approximate) probability (our choice;
see :func:`fit_risk`)."""


def subsets_for(rows: int, subset_rows: int) -> int:
    r""":math:`k_g = \max(1, \lfloor n_g / b \rfloor)`: a group's subsets at subset size b."""
    return max(1, positive_int("rows", rows) // positive_int("subset_rows", subset_rows))


def fit_risk(rare: int, rows: int, k: int, resamples: int) -> float:
    r"""Approximate probability that a 0/1 column is constant in some BLB subset or resample.

    A regression with a 0/1 column (a covariate, or a logistic outcome) cannot be fitted on a
    subset, or a resample, in which the column takes one value only: OLS has a singular
    :math:`X^\top WX` and the BLB stops; a logistic fit drifts to a huge coefficient that the
    ridge barely holds (paper App. F.1 meets the same problem with rare classes). With m rows of
    the rarer value among n rows split into k subsets of b = n/k rows, a subset misses them all
    with probability ≈ :math:`e^{-m/k}` (Poisson), and one of its r resamples of n draws misses
    its ≈ m/k rare rows with probability ≈ :math:`(1 - m/(kb))^n \approx e^{-m}`; by the union
    bound the run fails with probability at most about
    :math:`k e^{-m/k}\,[k > 1] + k r e^{-m}`.
    """
    if rare <= 0:
        return 1.0
    risk = k * math.exp(-rare / k) if k > 1 else 0.0
    risk += k * resamples * math.exp(-rare)
    return min(1.0, risk)


def fitting_subsets(k: int, rows: int, rare: tuple[int, ...], resamples: int) -> int:
    """The largest number of subsets ≤ ``k`` (at least 1) at which no 0/1 column, with
    ``rare`` rows of its rarer value among ``rows``, has a :func:`fit_risk` above
    :data:`MAX_FIT_RISK`: an automatic k lowered before a fit would likely fail. The risk
    grows with k, so a bisection finds it."""

    def fits(c: int) -> bool:
        return all(fit_risk(int(m), rows, c, resamples) <= MAX_FIT_RISK for m in rare)

    if fits(k):
        return k
    low, high = 1, k  # fits(low) is assumed; fits(high) is false
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


def _risk_message(column: str, outcome: bool, where: str, k: int, b: int, risk: float) -> str:
    role = f"the outcome {column!r}" if outcome else f"covariate {column!r}"
    fix = "lower k" + ("" if outcome else f", drop {column!r} from the covariates")
    if where != "the data":
        fix += ", merge small groups on the Strata page, or fit the whole population only"
    return (
        f"{role} is 0/1 and its rarer value is scarce in {where}: split into k = {k:,} subsets "
        f"of {b:,} rows, a subset or a bootstrap resample would have it constant — and the fit "
        f"would fail — with probability ≈ {100 * risk:.2g}%. To fix it: {fix}."
    )


@dataclass(frozen=True, eq=False)
class Moments:
    r"""The unweighted sums of every run's rows that the non-private fit needs, one run per
    group and then the whole population's: :math:`\sum XX^\top` (runs, p, p),
    :math:`\sum Xy` (runs, p) and :math:`\sum y^2` (runs,), X = (1, covariates) (the mean:
    X = (1)). An engine computes them in its pass (:func:`~dpcore.analyses.gvdp.aggregate.aggregate_gvdp`).
    **Not private**: curator previews only."""

    gram: np.ndarray
    xy: np.ndarray
    yy: np.ndarray


@dataclass(frozen=True, eq=False)
class GvdpData:
    """A model's rows for the whole population and for every group (confidential).

    ``population`` and ``groups[g]`` are GVDP-ready data (see :func:`gvdp`); ``rows`` counts the
    population's complete rows and ``group_rows`` each group's. ``n_input`` rows of the private
    part of the frame were read; ``n_missing`` had a missing or infinite model column and were
    dropped; ``n_ungrouped`` complete rows belong to a group dropped on the Strata page (they
    count for the population, not for the groups). ``group_error`` says why the groups cannot be
    fitted (a too-small group, a constant covariate in a group…); None when they can.
    ``binary`` names the model's 0/1 columns that a fit needs to vary (regression covariates and a
    logistic outcome), with the count of their rarer value in the population (``rare``) and in
    every group (``group_rare``, shape (groups, len(binary))), for :func:`fit_risk`.

    Rows an engine keeps where they lie (:func:`~dpcore.analyses.gvdp.aggregate.aggregate_gvdp`) leave
    ``population`` None and ``groups`` empty: each run then draws its bag of little bootstraps
    from ``bags`` (:class:`~dpcore.analyses.gvdp.aggregate.EngineBags`) with a salt drawn from the run's
    random generator; ``engine`` names the engine and ``recipe`` is the Python that runs its
    pass again (for a release's script). Views that need the rows say so
    (:meth:`require_rows`).
    """

    model: GvdpModel
    labels: tuple[str, ...]
    shares: np.ndarray
    share_description: str
    population: object
    rows: int
    groups: tuple[object, ...]
    group_rows: np.ndarray
    n_input: int
    n_missing: int
    n_ungrouped: int
    group_error: str | None = None
    binary: tuple[str, ...] = ()
    rare: tuple[int, ...] = ()
    group_rare: np.ndarray | None = None
    bags: object | None = None
    moments: Moments | None = None
    engine: str = ""
    recipe: str = ""

    def __post_init__(self) -> None:
        for array in (self.shares, self.group_rows, self.group_rare):
            if array is not None:
                array.setflags(write=False)  # shared between reruns: see ModelRows.data

    @property
    def in_memory(self) -> bool:
        """Whether the rows are in memory (False: an engine keeps them where they lie)."""
        return self.bags is None

    def require_rows(self, view: str) -> None:
        """Refuse ``view`` (e.g. "The non-private comparison") on rows an engine keeps where they
        lie, saying so plainly: it reads the rows themselves."""
        if not self.in_memory:
            raise NeedsRowsInMemory(
                f"{view} reads every row again and again, and the data in use stays where it "
                f"lies (read by the {self.engine} engine). Upload the data (or a sample of it) "
                "on the Data page to see it; the release itself runs where the data lies."
            )

    def messages(self) -> list[str]:
        """Plain sentences about dropped rows (empty when every row was used)."""
        out = []
        if self.n_missing:
            columns = ", ".join(f"`{c}`" for c in self.model.columns)
            out.append(
                f"{self.n_missing:,} of {self.n_input:,} rows have a missing or infinite value in "
                f"{columns} and were dropped (a row with any model column missing is left out)."
            )
        if self.n_ungrouped:
            out.append(
                f"{self.n_ungrouped:,} rows belong to a group dropped on the Strata page: they "
                "count for the whole population but not in the per-group estimates."
            )
        return out

    def subsets(self, k: int | None, resamples: int = 10) -> int:
        """The population's subsets: ``k``, or when ``k`` is None (automatic) the rule's
        (:func:`~dpcore.analyses.gvdp.recommended_subsets`), lowered until no 0/1 column is
        likely constant in a subset (:func:`fitting_subsets`)."""
        if k is None:
            rule = recommended_subsets(self.rows, self.model.estimator, self.model.d)
            return fitting_subsets(rule, self.rows, self.rare, resamples)
        return positive_int("k", k)

    def subset_rows(self, k: int | None, resamples: int = 10) -> int:
        r"""Subset size :math:`b = \lfloor N/k \rfloor` for ``k`` subsets of the population
        (None: the rule's), refused with "use k ≤ …" when below the minimum."""
        k = self.subsets(k, resamples)
        b = self.rows // k
        if b < self.model.min_rows:
            most = self.rows // self.model.min_rows
            raise ValueError(
                f"`k` = {k:,} leaves subsets of {b:,} rows (N = {self.rows:,}); GVDP needs at "
                f"least {self.model.min_rows} rows per subset ({ROWS_PER_COEFFICIENT} per "
                f"coefficient): use k ≤ {most:,}"
            )
        return b

    def group_subsets(self, k: int | None, resamples: int = 10) -> np.ndarray:
        """Each group's :math:`k_g`: at the population's subset size for a chosen ``k``; with
        ``k`` None (automatic), each group's own by the rule of
        :func:`~dpcore.analyses.gvdp.recommended_subset_rows` on its own rows (lowered as
        :meth:`subsets` lowers it), so that a small group keeps enough subsets for the noise
        not to swamp it."""
        if k is None:
            estimator, d = self.model.estimator, self.model.d
            out = []
            for g, n in enumerate(int(n) for n in self.group_rows):
                rule = subsets_for(n, recommended_subset_rows(max(n, 1), estimator, d))
                rare = () if self.group_rare is None else tuple(self.group_rare[g])
                out.append(fitting_subsets(rule, n, rare, resamples))
            return np.array(out, dtype=int)
        b = self.subset_rows(k)
        return np.array([subsets_for(int(n), b) for n in self.group_rows], dtype=int)

    def check_k(self, k: int | None, resamples: int) -> int:
        """The subset size b for ``k`` (None: the rule's); ``ValueError`` when subsets are too
        small or a 0/1 column would too likely be constant in one (:func:`fit_risk` >
        :data:`MAX_FIT_RISK`)."""
        b = self.subset_rows(k, resamples)
        k = self.subsets(k, resamples)
        for column, rare in zip(self.binary, self.rare, strict=True):
            risk = fit_risk(rare, self.rows, k, resamples)
            if risk > MAX_FIT_RISK:
                most = max(
                    (
                        c
                        for c in range(1, k)
                        if fit_risk(rare, self.rows, c, resamples) <= MAX_FIT_RISK
                    ),  # fmt: skip
                    default=None,
                )
                message = _risk_message(
                    column, column == self.model.outcome, "the data", k, b, risk
                )
                if most is not None:
                    message = message.replace("lower k", f"use k ≤ {most:,}")
                raise ValueError(message)
        return b

    def group_problem(self, k: int | None, resamples: int) -> str | None:
        """Why the groups cannot be fitted with ``k`` (see :meth:`check_k`), or None."""
        if self.group_error is not None:
            return self.group_error
        subsets = self.group_subsets(k, resamples)
        for g, label in enumerate(self.labels):
            n_g, k_g = int(self.group_rows[g]), int(subsets[g])
            for c, column in enumerate(self.binary):
                risk = fit_risk(int(self.group_rare[g, c]), n_g, k_g, resamples)
                if risk > MAX_FIT_RISK:
                    return _risk_message(
                        column, column == self.model.outcome, f"group {label!r}", k_g,
                        n_g // k_g, risk,
                    )  # fmt: skip
        return None


def prepare_data(frame: pd.DataFrame, model: GvdpModel, grouping: Grouping) -> GvdpData:
    """The model's rows for the population and every group of ``grouping``.

    ``grouping`` is built from ``frame``; its public holdout rows are never read. Errors about
    the population (unknown or non-numeric column, too few rows, a 0/1 outcome that is not,
    collinear covariates) raise ``ValueError``; errors that concern only the groups are kept in
    :attr:`GvdpData.group_error`, so the whole population can still be fitted.
    """
    instance_of("model", model, GvdpModel)
    instance_of("grouping", grouping, Grouping)
    private = grouping.private
    codes = grouping.codes_for(frame)[private]
    private_rows = frame[private] if not private.all() else frame
    rows = model.rows(private_rows)
    population = rows.data()
    groups, group_rows, error = [], [], None
    for g, label in enumerate(grouping.labels):
        mask = codes == g
        group_rows.append(int(np.sum(rows.complete & mask)))
        if error is None:
            try:
                groups.append(rows.data(mask, where=f"group {label!r}"))
            except ValueError as exc:
                error = str(exc)
    n_complete = int(rows.complete.sum())
    binary, rare, group_rare = _binary_columns(rows, codes, grouping.k)
    return GvdpData(
        model=model,
        labels=tuple(grouping.labels),
        shares=np.asarray(
            require_fixed_shares(grouping.shares, "The general estimator").values, dtype=float
        ),
        share_description=grouping.shares.description,
        population=population,
        rows=n_complete,
        groups=tuple(groups) if error is None else (),
        group_rows=np.array(group_rows, dtype=int),
        n_input=len(private_rows),
        n_missing=len(private_rows) - n_complete,
        n_ungrouped=int(np.sum(rows.complete & (codes == DROPPED_CODE))),
        group_error=error,
        binary=binary,
        rare=rare,
        group_rare=group_rare,
    )


def _binary_columns(
    rows: ModelRows, codes: np.ndarray, groups: int
) -> tuple[tuple[str, ...], tuple[int, ...], np.ndarray]:
    """The 0/1 columns a fit needs to vary and the counts of their rarer value (population and
    per group); see :func:`fit_risk`."""
    model = rows.model
    if model.kind == "mean":
        return (), (), np.zeros((groups, 0), dtype=int)
    candidates = list(model.covariates) + ([model.outcome] if model.kind == "logistic" else [])
    block = rows.values[rows.complete]
    group_codes = codes[rows.complete]
    names, rare, per_group = [], [], []
    for column in candidates:
        values = block[:, model.columns.index(column)]
        distinct = np.unique(values)
        if distinct.size != 2:
            continue
        low = values == distinct[0]
        names.append(column)
        rare.append(int(min(low.sum(), (~low).sum())))
        in_group = group_codes[:, None] == np.arange(groups)[None, :]
        lows = (in_group & low[:, None]).sum(axis=0)
        per_group.append(np.minimum(lows, in_group.sum(axis=0) - lows))
    group_rare = (
        np.column_stack(per_group).astype(int) if per_group else np.zeros((groups, 0), dtype=int)
    )
    return tuple(names), tuple(rare), group_rare
