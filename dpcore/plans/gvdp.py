r"""General estimators with valid confidence intervals (GVDP) on a table: models, public bounds,
previews, coverage studies, the k diagnostic and the release plan.

Builds on :mod:`dpcore.estimators.gvdp` (Covington, He, Honaker & Kamath, *Unbiased Statistical
Estimation and Valid Confidence Intervals Under Differential Privacy* — "the paper"). The pieces:

- :class:`GvdpModel` — what to estimate from which columns: the mean of a column, an OLS or a
  logistic regression with an intercept; :meth:`GvdpModel.rows` turns a frame into the arrays
  GVDP takes (rows with a missing or infinite value in any model column are dropped and counted);
- :class:`GvdpBoundsSpec` — the public bounds of the paper's Assumptions 2.6–2.7, either explicit
  ranges (a box for the parameter, a per-row spread bound for its variance) or a public guess
  widened by a safety factor (the paper's "bounds ≈ 100 times too large", §3);
- :func:`prepare_data` — the model's rows for the whole population and for every group of a
  :class:`~dpcore.strata.StrataSpec` (rows grouped with :meth:`Strata.assign`);
- :func:`run_population`, :func:`run_groups`, :func:`nonprivate` — one GVDP run (or the ordinary
  estimate) for the population and per group, recombined with public shares;
- :func:`coverage_on_data`, :func:`coverage_synthetic` — coverage studies (simulation only);
- :func:`blb_diagnostic` — the curator's §G.4 diagnostic for choosing k;
- :class:`GvdpPlan` — the release plan committed on the Release page (follows
  :class:`dpcore.release.ReleasePlan`).

Privacy model (stated on screen too):

- **Bounds never come from the private data.** In "guess" mode the guess is typed by the analyst
  (an earlier study, a codebook, theory); the factor widens it. :meth:`GVDPBounds.overestimated`
  is called with that public guess, never with the data's own estimate. Only the synthetic
  coverage study, where the truth is known and public, builds bounds from the truth.
- **The number of rows is public** (paper §2.2), so k may depend on it: every group uses the
  same subset size :math:`b = \lfloor N/k \rfloor` and gets :math:`k_g = \max(1,
  \lfloor n_g/b \rfloor)` subsets; each variance bound is scaled to the group's own rows.
- **Groups are disjoint**, so per-group runs with the full ρ compose in parallel (cost ρ); the
  recombined estimate :math:`\sum_g w_g\tilde\theta_g` is post-processing of DP outputs.

Never imports streamlit or plotly.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit, ndtri

from dpcore._validate import (
    as_rng,
    finite_number,
    open_unit_interval,
    positive_int,
    positive_number,
)
from dpcore.accounting import ZCDP
from dpcore.estimators.gvdp import (
    ROWS_PER_COEFFICIENT,
    GVDPBounds,
    GVDPCoverage,
    GVDPResult,
    NonPrivateCI,
    gvdp,
    gvdp_coverage,
    nonprivate_ci,
)
from dpcore.mechanisms import NoiseSource
from dpcore.release import DatasetRef, _data_line
from dpcore.strata import PublicShares, Strata, StrataSpec

__all__ = [
    "ALL",
    "BOUNDS_MODES",
    "DP",
    "INTERCEPT",
    "MAX_FIT_RISK",
    "MODELS",
    "NON_PRIVATE",
    "STRATEGIES",
    "BlbDiagnostic",
    "GroupedGvdp",
    "GvdpBoundsSpec",
    "GvdpData",
    "GvdpModel",
    "GvdpPlan",
    "ModelRows",
    "NonPrivate",
    "RunSettings",
    "blb_diagnostic",
    "comparison_frame",
    "coverage_frame",
    "coverage_on_data",
    "coverage_synthetic",
    "fit_risk",
    "groups_frame",
    "k_ladder",
    "nonprivate",
    "prepare_data",
    "private_part",
    "run_groups",
    "run_population",
    "subsets_for",
    "synthetic_coefficients",
    "synthetic_description",
    "synthetic_truth",
]

ModelKind = Literal["mean", "ols", "logistic"]
MODELS: dict[str, str] = {
    "mean": "Mean of a column",
    "ols": "Linear regression (OLS)",
    "logistic": "Logistic regression",
}
Strategy = Literal["stratified", "global_only"]
STRATEGIES: dict[str, str] = {
    "stratified": "per group (stratified), recombined with public shares",
    "global_only": "whole population only",
}
BoundsMode = Literal["box", "guess"]
BOUNDS_MODES: dict[str, str] = {
    "box": "Explicit public ranges",
    "guess": "A public guess × a safety factor",
}
INTERCEPT = "intercept"
"""Name of the intercept coefficient of a regression."""

ALL = "All"
"""Group label of the population rows of a release (as in :class:`~dpcore.release.MeanPlan`)."""

MAX_FIT_RISK = 0.05
"""Refuse a run whose BLB fit would fail with a larger (approximate) probability (our choice;
see :func:`fit_risk`)."""


# ------------------------------------------------------------------------------------------------
# The model: which columns, which estimator
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GvdpModel:
    """What GVDP estimates: a column's mean, or the coefficients of a regression with intercept.

    Parameters
    ----------
    kind : {"mean", "ols", "logistic"}
        ``"mean"``: the mean of ``outcome``. ``"ols"``: least-squares coefficients of
        ``outcome ~ 1 + covariates``. ``"logistic"``: logistic-regression coefficients (log-odds)
        of a 0/1 ``outcome`` on ``1 + covariates``.
    outcome : str
        The column averaged (mean) or explained (regressions).
    covariates : tuple of str
        Explanatory columns of a regression (at least one); empty for the mean. An intercept is
        always added (the paper's estimators take X as given; we put a column of ones first).
    """

    kind: ModelKind
    outcome: str
    covariates: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in MODELS:
            raise ValueError(f"`kind` must be one of {sorted(MODELS)}, got {self.kind!r}")
        if not isinstance(self.outcome, str) or not self.outcome:
            raise TypeError(f"`outcome` must be a column name (str), got {self.outcome!r}")
        if isinstance(self.covariates, str):
            raise TypeError(
                f"`covariates` must be a sequence of column names, got the string "
                f"{self.covariates!r}"
            )
        covariates = tuple(self.covariates)
        object.__setattr__(self, "covariates", covariates)
        for name in covariates:
            if not isinstance(name, str) or not name:
                raise TypeError(f"`covariates` must hold column names (str), got {name!r}")
        if self.kind == "mean" and covariates:
            raise ValueError(
                f"`covariates` must be empty for the mean, got {list(covariates)}; choose a "
                "regression to use covariates"
            )
        if self.kind != "mean" and not covariates:
            raise ValueError(
                "`covariates` must name at least one column for a regression, got none "
                "(a regression on the intercept alone is the mean of the outcome: choose the mean)"
            )
        if len(set(covariates)) != len(covariates):
            raise ValueError(f"`covariates` must not repeat a column, got {list(covariates)}")
        if self.outcome in covariates:
            raise ValueError(
                f"`outcome` {self.outcome!r} is also a covariate; a column cannot explain itself"
            )
        if INTERCEPT in covariates:
            raise ValueError(
                f"`covariates` must not include a column named {INTERCEPT!r}: the intercept is "
                "added automatically"
            )

    @property
    def estimator(self) -> str:
        """The :func:`~dpcore.estimators.gvdp.gvdp` estimator name."""
        return self.kind

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.outcome, *self.covariates)

    @property
    def coefficients(self) -> tuple[str, ...]:
        """Names of the estimated coordinates: the column (mean) or intercept + covariates."""
        return (self.outcome,) if self.kind == "mean" else (INTERCEPT, *self.covariates)

    @property
    def d(self) -> int:
        return len(self.coefficients)

    @property
    def min_rows(self) -> int:
        """Rows a GVDP subset needs (:data:`~dpcore.estimators.gvdp.ROWS_PER_COEFFICIENT` per
        coordinate)."""
        return ROWS_PER_COEFFICIENT * self.d

    @property
    def formula(self) -> str:
        """``"hours_per_week ~ 1 + age + income_over_50k"`` (or the column for the mean)."""
        if self.kind == "mean":
            return self.outcome
        return f"{self.outcome} ~ 1 + {' + '.join(self.covariates)}"

    @property
    def statistic(self) -> str:
        """What is estimated, in words."""
        if self.kind == "mean":
            return f"mean of {self.outcome}"
        what = "OLS coefficients" if self.kind == "ols" else "logistic-regression coefficients"
        return f"{what} of {self.formula}"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "outcome": self.outcome, "covariates": list(self.covariates)}

    def rows(self, frame: pd.DataFrame) -> ModelRows:
        """The model's arrays from ``frame``; rows with any missing or infinite model column are
        marked incomplete (``complete``) and left out of every fit."""
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}")
        values = {}
        for role, column in (("outcome", self.outcome), *(("covariates", c) for c in self.covariates)):  # fmt: skip
            values[column] = _numeric_column(frame, role, column)
        matrix = np.column_stack([values[c] for c in self.columns]) if len(frame) else None
        if matrix is None:
            raise ValueError("the data have no rows")
        complete = np.all(np.isfinite(matrix), axis=1)
        return ModelRows(model=self, values=matrix, complete=complete)


def _numeric_column(frame: pd.DataFrame, role: str, column: str) -> np.ndarray:
    if column not in frame.columns:
        available = ", ".join(str(c) for c in frame.columns)
        raise ValueError(
            f"`{role}` column {column!r} is not in the data; available columns: {available}"
        )
    series = frame[column]
    dtype = series.dtype
    numeric = pd.api.types.is_bool_dtype(dtype) or (
        pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype)
    )
    if not numeric:
        raise ValueError(
            f"`{role}` column {column!r} is not numeric (dtype {dtype}): GVDP fits numbers only. "
            "Choose a numeric column, or recode this one as 0/1 columns before uploading."
        )
    return series.to_numpy(dtype=np.float64, na_value=np.nan)


@dataclass(frozen=True, eq=False)
class ModelRows:
    """A model's columns as one float matrix (outcome first) and which rows are complete."""

    model: GvdpModel
    values: np.ndarray
    complete: np.ndarray

    def data(self, mask: np.ndarray | None = None, *, where: str = "the data") -> object:
        """GVDP-ready data for the complete rows (within ``mask``), validated with messages that
        name the column and ``where`` (e.g. "group 'Other × Female'")."""
        keep = self.complete if mask is None else self.complete & mask
        block = self.values[keep]
        model = self.model
        if block.shape[0] < model.min_rows:
            raise ValueError(
                f"{where} has {block.shape[0]:,} complete rows; GVDP needs at least "
                f"{model.min_rows} ({ROWS_PER_COEFFICIENT} per coefficient, "
                f"{model.d} coefficients). Merge small groups on the Strata page (raise the "
                "minimum group size), use fewer covariates, or fit the whole population only."
            )
        y = block[:, 0]
        if model.kind == "mean":
            return block[:, :1].copy()
        if model.kind == "logistic":
            _check_binary(y, model.outcome, where)
        X = np.column_stack([np.ones(block.shape[0]), block[:, 1:]])
        _check_design(X, model.coefficients, where)
        return (X, y.copy())


def _check_binary(y: np.ndarray, outcome: str, where: str) -> None:
    binary = (y == 0) | (y == 1)
    if not np.all(binary):
        distinct = np.unique(y).size
        raise ValueError(
            f"`outcome` column {outcome!r} must hold only 0 and 1 for a logistic model, but in "
            f"{where} it has {distinct:,} distinct values. Choose a 0/1 column (e.g. "
            "income_over_50k in the demo data), or use linear regression."
        )
    ones = int(y.sum())
    if ones in (0, y.size):
        only = "1" if ones else "0"
        raise ValueError(
            f"`outcome` column {outcome!r} is {only} in every row of {where}: a logistic model "
            "needs both 0s and 1s. Choose another outcome, or fit the whole population only."
        )


def _check_design(X: np.ndarray, names: Sequence[str], where: str) -> None:
    """Refuse a singular design with the first column that adds nothing new."""
    scale = np.maximum(np.abs(X).max(axis=0), np.finfo(float).tiny)
    scaled = X / scale
    for j in range(1, X.shape[1]):
        if np.ptp(X[:, j]) == 0:
            raise ValueError(
                f"covariate {names[j]!r} is constant in {where}, so it duplicates the intercept "
                "and its coefficient is not identified. Drop it from the covariates"
                + (" or fit the whole population only." if where != "the data" else ".")
            )
        if np.linalg.matrix_rank(scaled[:, : j + 1]) < j + 1:
            before = ", ".join(repr(n) for n in names[:j])
            raise ValueError(
                f"covariate {names[j]!r} is a linear combination of {before} in {where} "
                "(collinear columns: the design matrix is singular, so the coefficients are not "
                f"identified). Drop {names[j]!r} or one of the columns it repeats."
            )


# ------------------------------------------------------------------------------------------------
# Public bounds
# ------------------------------------------------------------------------------------------------


def _floats(name: str, values: object, d: int, coefficients: Sequence[str]) -> tuple[float, ...]:
    if isinstance(values, str) or not isinstance(values, Sequence | np.ndarray):
        raise TypeError(f"`{name}` must be a sequence of numbers, got {values!r}")
    out = []
    for coefficient, value in zip(coefficients, values, strict=False):
        try:
            out.append(finite_number(f"{name}` for `{coefficient}", value))
        except TypeError as err:
            raise TypeError(str(err).replace("a real number", "a number")) from None
    if len(values) != d:
        raise ValueError(
            f"`{name}` must have one value per coefficient ({d}: {', '.join(coefficients)}), "
            f"got {len(values)}"
        )
    return tuple(out)


@dataclass(frozen=True)
class GvdpBoundsSpec:
    r"""Public bounds on the estimator's sampling distribution (paper Assumptions 2.6–2.7).

    They must come from knowledge outside the private data. Two ways to state them:

    ``mode="box"`` — explicit ranges. Each coefficient :math:`\theta_j \in [\ell_j, h_j]`
    (the parameter ball is the one around this box, :meth:`GVDPBounds.box`), and a **per-row
    spread bound** :math:`s_j`: the standard error of :math:`\hat\theta_j` on n rows is at most
    :math:`s_j/\sqrt n`, so the variance bound for a run on n rows is
    :math:`v_j = s_j^2/n`. For the mean of a column known to lie in [L, U], :math:`s = (U-L)/2`
    always holds (no variable in [L, U] has a larger standard deviation).

    ``mode="guess"`` — a public guess :math:`g_j` of each coefficient and :math:`s_j` of its
    per-row spread, widened by a safety ``factor`` c ≥ 1, as in the paper's experiments (§3: bounds
    ≈ 100 times looser than the tightest; App. F.3: 10,000). The bounds are those of
    :meth:`GVDPBounds.overestimated` with the guess in place of the truth: the ball
    :math:`B_2(0, c\|g\|_2)`, variances :math:`c\,s_j^2/n` and their spread
    :math:`\sqrt c\,\kappa\,s_j^2/n`. They are valid when the guess is within the factor of the
    truth (:math:`\|\theta\|_2 \le c\|g\|_2` and :math:`\operatorname{Var}\hat\theta_j \le
    c\,s_j^2/n`).

    ``coefficients`` names the coordinates (for messages and the release metadata).
    """

    mode: BoundsMode
    coefficients: tuple[str, ...]
    spread: tuple[float, ...]
    low: tuple[float, ...] = ()
    high: tuple[float, ...] = ()
    guess: tuple[float, ...] = ()
    factor: float = 1.0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self.mode not in BOUNDS_MODES:
            raise ValueError(f"`mode` must be one of {sorted(BOUNDS_MODES)}, got {self.mode!r}")
        if isinstance(self.coefficients, str) or not self.coefficients:
            raise ValueError(f"`coefficients` must name the coordinates, got {self.coefficients!r}")
        names = tuple(str(c) for c in self.coefficients)
        set_(self, "coefficients", names)
        d = len(names)
        spread = _floats("spread", self.spread, d, names)
        for name, value in zip(names, spread, strict=True):
            if value <= 0:
                raise ValueError(
                    f"`spread` for `{name}` must be > 0 (a bound on a standard deviation), got "
                    f"{value!r}"
                )
        set_(self, "spread", spread)
        factor = finite_number("factor", self.factor)
        set_(self, "factor", factor)
        if self.mode == "box":
            low = _floats("low", self.low, d, names)
            high = _floats("high", self.high, d, names)
            for name, lo, hi in zip(names, low, high, strict=True):
                if not lo < hi:
                    raise ValueError(
                        f"the public range of `{name}` must have low < high, got low = {lo:g} "
                        f"and high = {hi:g}"
                    )
            if self.guess or factor != 1.0:
                raise ValueError("`guess` and `factor` apply to mode='guess' only")
            set_(self, "low", low)
            set_(self, "high", high)
        else:
            guess = _floats("guess", self.guess, d, names)
            if factor < 1:
                raise ValueError(
                    f"`factor` must be >= 1 (a factor below 1 makes the bounds tighter than the "
                    f"guess), got {factor!r}"
                )
            if not any(guess):
                raise ValueError(
                    "`guess` must not be all zero: the bounds are a ball of radius factor × "
                    "‖guess‖ around 0; guess the size of at least one coefficient"
                )
            if self.low or self.high:
                raise ValueError("`low` and `high` apply to mode='box' only")
            set_(self, "guess", guess)

    @property
    def d(self) -> int:
        return len(self.coefficients)

    def for_rows(self, n: int, k: int, resamples: int) -> GVDPBounds:
        """The :class:`GVDPBounds` of a run on ``n`` rows with ``k`` subsets."""
        n, k = positive_int("n", n), positive_int("k", k)
        variance = np.square(self.spread) / n
        if self.mode == "box":
            return GVDPBounds.box(self.low, self.high, variance)
        return GVDPBounds.overestimated(
            self.guess, variance, self.factor, resamples=resamples, subset_size=n // k
        )

    def to_dict(self) -> dict:
        out: dict = {"mode": self.mode, "coefficients": list(self.coefficients)}
        if self.mode == "box":
            out |= {"low": list(self.low), "high": list(self.high)}
        else:
            out |= {"guess": list(self.guess), "factor": self.factor}
        return out | {"spread": list(self.spread)}

    def describe(self) -> list[str]:
        """One phrase per coefficient, e.g. ``"age in [-5, 5], SE ≤ 5/√n"``."""
        if self.mode == "box":
            return [
                f"`{c}` in [{lo:g}, {hi:g}], SE ≤ {s:g}/√n"
                for c, lo, hi, s in zip(
                    self.coefficients, self.low, self.high, self.spread, strict=True
                )  # fmt: skip
            ]
        return [
            f"`{c}` guessed {g:g}, SE guessed {s:g}/√n"
            for c, g, s in zip(self.coefficients, self.guess, self.spread, strict=True)
        ]


# ------------------------------------------------------------------------------------------------
# Data per group
# ------------------------------------------------------------------------------------------------


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

    def subset_rows(self, k: int) -> int:
        r"""Subset size :math:`b = \lfloor N/k \rfloor` for ``k`` subsets of the population,
        refused with "use k ≤ …" when below the minimum."""
        k = positive_int("k", k)
        b = self.rows // k
        if b < self.model.min_rows:
            most = self.rows // self.model.min_rows
            raise ValueError(
                f"`k` = {k:,} leaves subsets of {b:,} rows (N = {self.rows:,}); GVDP needs at "
                f"least {self.model.min_rows} rows per subset ({ROWS_PER_COEFFICIENT} per "
                f"coefficient): use k ≤ {most:,}"
            )
        return b

    def group_subsets(self, k: int) -> np.ndarray:
        """Each group's :math:`k_g` at the population's subset size."""
        b = self.subset_rows(k)
        return np.array([subsets_for(int(n), b) for n in self.group_rows], dtype=int)

    def check_k(self, k: int, resamples: int) -> int:
        """The subset size b for ``k``; ``ValueError`` when subsets are too small or a 0/1 column
        would too likely be constant in one (:func:`fit_risk` > :data:`MAX_FIT_RISK`)."""
        b = self.subset_rows(k)
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

    def group_problem(self, k: int, resamples: int) -> str | None:
        """Why the groups cannot be fitted with ``k`` (see :meth:`check_k`), or None."""
        if self.group_error is not None:
            return self.group_error
        subsets = self.group_subsets(k)
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


def private_part(frame: pd.DataFrame, spec: StrataSpec) -> pd.DataFrame:
    """The confidential rows (:meth:`StrataSpec.private_rows`)."""
    return spec.private_rows(frame)


def prepare_data(
    frame: pd.DataFrame,
    model: GvdpModel,
    spec: StrataSpec,
    *,
    strata: Strata | None = None,
    shares: PublicShares | None = None,
) -> GvdpData:
    """The model's rows for the population and every group of ``spec`` (built if not given).

    Errors about the population (unknown or non-numeric column, too few rows, a 0/1 outcome that
    is not, collinear covariates) raise ``ValueError``; errors that concern only the groups are
    kept in :attr:`GvdpData.group_error`, so the whole population can still be fitted.
    """
    if not isinstance(model, GvdpModel):
        raise TypeError(f"`model` must be a GvdpModel, got {type(model).__name__}")
    if not isinstance(spec, StrataSpec):
        raise TypeError(f"`spec` must be a StrataSpec, got {type(spec).__name__}")
    if strata is None or shares is None:
        strata, shares = spec.build(frame)
    private = private_part(frame, spec)
    rows = model.rows(private)
    population = rows.data()
    codes = strata.assign(private)
    groups, group_rows, error = [], [], None
    for g, label in enumerate(strata.labels):
        mask = codes == g
        group_rows.append(int(np.sum(rows.complete & mask)))
        if error is None:
            try:
                groups.append(rows.data(mask, where=f"group {label!r}"))
            except ValueError as exc:
                error = str(exc)
    n_complete = int(rows.complete.sum())
    binary, rare, group_rare = _binary_columns(rows, codes, len(strata.labels))
    return GvdpData(
        model=model,
        labels=tuple(strata.labels),
        shares=np.asarray(shares.values, dtype=float),
        share_description=shares.description,
        population=population,
        rows=n_complete,
        groups=tuple(groups) if error is None else (),
        group_rows=np.array(group_rows, dtype=int),
        n_input=len(private),
        n_missing=len(private) - n_complete,
        n_ungrouped=int(np.sum(rows.complete & (codes < 0))),
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


# ------------------------------------------------------------------------------------------------
# Runs: population, groups, and the non-private reference
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunSettings:
    """The GVDP settings shared by every run (paper Alg. 1 inputs besides data and bounds)."""

    k: int
    rho: float
    resamples: int = 10
    steps: int = 5
    beta: float = 0.03
    mean_fraction: float = 0.5
    level: float = 0.95

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", positive_int("k", self.k))
        object.__setattr__(self, "rho", positive_number("rho", self.rho))
        resamples = positive_int("resamples", self.resamples)
        if resamples < 2:
            raise ValueError(
                f"`resamples` must be >= 2 (the BLB variance needs two resamples), got {resamples}"
            )
        object.__setattr__(self, "steps", positive_int("steps", self.steps))
        for name in ("beta", "mean_fraction", "level"):
            object.__setattr__(self, name, open_unit_interval(name, getattr(self, name)))

    def gvdp_kwargs(self) -> dict:
        return {
            "rho": self.rho, "t": self.steps, "resamples": self.resamples, "level": self.level,
            "mean_fraction": self.mean_fraction, "beta": self.beta,
        }  # fmt: skip


def run_population(
    data: GvdpData,
    bounds: GvdpBoundsSpec,
    settings: RunSettings,
    *,
    rng: np.random.Generator | int | None = None,
    noise: NoiseSource | None = None,
) -> GVDPResult:
    """One GVDP run (paper Alg. 1) on the population's complete rows with k subsets."""
    _check_bounds(bounds, data.model)
    data.check_k(settings.k, settings.resamples)  # "use k ≤ …" before anything runs
    return gvdp(
        data.population, data.model.estimator, k=settings.k,
        bounds=bounds.for_rows(data.rows, settings.k, settings.resamples),
        rng=rng, noise=noise, **settings.gvdp_kwargs(),
    )  # fmt: skip


@dataclass(frozen=True, eq=False)
class GroupedGvdp:
    r"""Per-group GVDP runs and their recombination :math:`\sum_g w_g\tilde\theta_g` with
    :math:`\operatorname{Var} = \sum_g w_g^2 \operatorname{Var}_g` (as
    :func:`~dpcore.estimators.gvdp.gvdp_stratified`)."""

    labels: tuple[str, ...]
    results: tuple[GVDPResult, ...]
    subsets: np.ndarray
    shares: np.ndarray
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    variance: np.ndarray


def run_groups(
    data: GvdpData,
    bounds: GvdpBoundsSpec,
    settings: RunSettings,
    *,
    rng: np.random.Generator | int | None = None,
    noise: NoiseSource | None = None,
) -> GroupedGvdp:
    r"""GVDP in every group with the full ρ (parallel composition), recombined with the public
    shares.

    Mirrors :func:`~dpcore.estimators.gvdp.gvdp_stratified` with the app's rule for k: every group
    uses the population's subset size b, so group g gets :math:`k_g = \max(1, \lfloor n_g/b
    \rfloor)` subsets, and its variance bound is scaled to its own :math:`n_g` rows. A failure is
    reported with the group's name. The recombination uses the **DP** group estimates.
    """
    _check_bounds(bounds, data.model)
    data.check_k(settings.k, settings.resamples)
    problem = data.group_problem(settings.k, settings.resamples)
    if problem is not None:
        raise ValueError(problem)
    subsets = data.group_subsets(settings.k)
    # One independent stream per group, so a group's draws do not depend on the groups before it.
    streams = as_rng(rng).spawn(len(data.groups))
    results = []
    for label, group, n_g, k_g, gen in zip(
        data.labels, data.groups, data.group_rows, subsets, streams, strict=True
    ):
        try:
            results.append(
                gvdp(
                    group,
                    data.model.estimator,
                    k=int(k_g),
                    bounds=bounds.for_rows(int(n_g), int(k_g), settings.resamples),
                    rng=gen,
                    noise=noise,
                    **settings.gvdp_kwargs(),
                )  # fmt: skip
            )
        except ValueError as exc:
            raise ValueError(f"group {label!r} ({n_g:,} rows, k = {k_g}): {exc}") from exc
    estimate, variance, low, high = _recombine(
        data.shares, [r.estimate for r in results], [r.variance for r in results], settings.level
    )
    return GroupedGvdp(
        labels=data.labels, results=tuple(results), subsets=subsets, shares=data.shares,
        estimate=estimate, low=low, high=high, variance=variance,
    )  # fmt: skip


def _recombine(shares, estimates, variances, level):
    weights = np.asarray(shares, dtype=float)
    estimate = weights @ np.stack(estimates)
    variance = (weights**2) @ np.stack(variances)
    half = ndtri(0.5 + level / 2) * np.sqrt(variance)
    return estimate, variance, estimate - half, estimate + half


@dataclass(frozen=True, eq=False)
class NonPrivate:
    """The ordinary estimates and intervals (**not private**: curator previews only)."""

    population: NonPrivateCI
    groups: tuple[NonPrivateCI, ...]
    recombined: tuple[np.ndarray, np.ndarray, np.ndarray] | None


def nonprivate(data: GvdpData, level: float = 0.95) -> NonPrivate:
    """:func:`~dpcore.estimators.gvdp.nonprivate_ci` for the population and every group, and the
    share-weighted recombination of the group estimates (what the DP recombination targets)."""
    estimator = data.model.estimator
    population = nonprivate_ci(data.population, estimator, level)
    groups = tuple(nonprivate_ci(g, estimator, level) for g in data.groups)
    recombined = None
    if groups:
        estimate, _, low, high = _recombine(
            data.shares, [g.estimate for g in groups], [g.variance for g in groups], level
        )
        recombined = (estimate, low, high)
    return NonPrivate(population, groups, recombined)


def _check_bounds(bounds: object, model: GvdpModel) -> None:
    if not isinstance(bounds, GvdpBoundsSpec):
        raise TypeError(f"`bounds` must be a GvdpBoundsSpec, got {type(bounds).__name__}")
    if bounds.coefficients != model.coefficients:
        raise ValueError(
            f"`bounds` are for the coefficients {list(bounds.coefficients)}, but the model "
            f"estimates {list(model.coefficients)}"
        )


# ------------------------------------------------------------------------------------------------
# Tidy frames for charts and tables
# ------------------------------------------------------------------------------------------------

DP = "DP (GVDP)"
NON_PRIVATE = "Non-private"


def comparison_frame(model: GvdpModel, result: GVDPResult, reference: NonPrivateCI) -> pd.DataFrame:
    """Per coefficient, the DP and the non-private estimate and interval (long format)."""
    rows = []
    for method, fit in ((DP, result), (NON_PRIVATE, reference)):
        for j, name in enumerate(model.coefficients):
            rows.append(
                {
                    "coefficient": name, "method": method, "estimate": float(fit.estimate[j]),
                    "low": float(fit.low[j]), "high": float(fit.high[j]),
                }
            )  # fmt: skip
    return pd.DataFrame(rows)


def groups_frame(
    model: GvdpModel, grouped: GroupedGvdp, reference: NonPrivate, rows: np.ndarray
) -> pd.DataFrame:
    """Per group and coefficient, the DP and non-private estimates, plus the recombined rows
    (``group`` = :data:`ALL`, ``level`` = "population")."""
    out = []
    fits = [
        (
            label,
            "group",
            int(n),
            int(k),
            dp.estimate,
            dp.low,
            dp.high,
            np_.estimate,
            np_.low,
            np_.high,
        )  # fmt: skip
        for label, n, k, dp, np_ in zip(
            grouped.labels, rows, grouped.subsets, grouped.results, reference.groups, strict=True
        )
    ]
    if reference.recombined is not None:
        fits.append(
            (ALL, "population", int(np.sum(rows)), int(np.sum(grouped.subsets)),
             grouped.estimate, grouped.low, grouped.high, *reference.recombined)
        )  # fmt: skip
    for label, level, n, k, est, low, high, np_est, np_low, np_high in fits:
        for j, name in enumerate(model.coefficients):
            for method, values in ((DP, (est, low, high)), (NON_PRIVATE, (np_est, np_low, np_high))):  # fmt: skip
                out.append(
                    {
                        "level": level, "group": label, "rows": n, "subsets": k,
                        "coefficient": name, "method": method,
                        "estimate": float(values[0][j]), "low": float(values[1][j]),
                        "high": float(values[2][j]),
                    }
                )  # fmt: skip
    return pd.DataFrame(out)


# ------------------------------------------------------------------------------------------------
# Coverage studies (simulation only; never a release)
# ------------------------------------------------------------------------------------------------


def coverage_on_data(
    data: GvdpData,
    bounds: GvdpBoundsSpec,
    settings: RunSettings,
    *,
    replications: int,
    rng: np.random.Generator | int | None = None,
) -> GVDPCoverage:
    r"""Coverage of the full-data non-private estimate over fresh GVDP randomness on fixed data.

    Each replication redraws the BLB partition and resamples and the privacy noise on the same
    rows (:func:`~dpcore.estimators.gvdp.gvdp_coverage` with a generator that returns the data).
    The truth is the ordinary full-data estimate :math:`\hat\theta`. This is not the paper's
    coverage of θ (that needs fresh samples from the population, :func:`coverage_synthetic`):
    since the interval also allows for sampling error, it should cover :math:`\hat\theta` *at
    least* at the nominal rate, and falling below flags a bias — subsets too small for the
    estimator (lower k; App. G.1) or bounds that clip.
    """
    _check_bounds(bounds, data.model)
    data.check_k(settings.k, settings.resamples)
    truth = nonprivate_ci(data.population, data.model.estimator, settings.level).estimate
    return gvdp_coverage(
        lambda _rng: data.population, truth, data.model.estimator,
        replications=replications, k=settings.k,
        bounds=bounds.for_rows(data.rows, settings.k, settings.resamples), rng=rng,
        **settings.gvdp_kwargs(),
    )  # fmt: skip


SYNTHETIC_SLOPE = 0.5
"""Every covariate's coefficient in the synthetic models; the intercept is 1 (OLS) or −1
(logistic), the mean 1 (the paper's §3 example N(μ = 1, σ² = 1))."""


def synthetic_truth(kind: ModelKind, d: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The synthetic model's parameter θ and per-row variances :math:`n\operatorname{Var}
    \hat\theta_j`.

    - mean: rows :math:`x_i \sim N(1, 1)`: θ = 1, per-row variance 1;
    - OLS: :math:`y = X\beta + \varepsilon`, :math:`X = (1, Z)`, :math:`Z \sim N(0, I_{d-1})`,
      :math:`\varepsilon \sim N(0, 1)`, β = (1, ½, …): per-row variances
      :math:`\operatorname{diag}(E[xx^\top])^{-1} = 1`;
    - logistic: :math:`P(y = 1) = \operatorname{expit}(X\beta)` with β = (−1, ½, …): per-row
      variances :math:`\operatorname{diag}(I(\beta)^{-1})` with :math:`I(\beta) =
      E[p(1-p)xx^\top]`, computed once from 400,000 draws with a fixed seed (public: no data).
    """
    positive_int("d", d)
    if kind == "mean":
        if d != 1:
            raise ValueError(f"`d` must be 1 for the mean, got {d}")
        return np.ones(1), np.ones(1)
    if kind == "ols":
        return np.r_[1.0, np.full(d - 1, SYNTHETIC_SLOPE)], np.ones(d)
    if kind == "logistic":
        beta = np.r_[-1.0, np.full(d - 1, SYNTHETIC_SLOPE)]
        return beta, np.array(_logistic_variances(d))
    raise ValueError(f"`kind` must be one of {sorted(MODELS)}, got {kind!r}")


def synthetic_coefficients(kind: ModelKind, d: int) -> tuple[str, ...]:
    """Names of the synthetic model's coordinates: ``("mean",)`` or intercept, x1, x2, …"""
    if kind == "mean":
        return ("mean",)
    return (INTERCEPT, *(f"x{j}" for j in range(1, d)))


def synthetic_description(kind: ModelKind, d: int) -> str:
    """The synthetic model in one line, e.g. ``"y = 1 + 0.5·x1 + N(0, 1)"``."""
    theta, _ = synthetic_truth(kind, d)
    names = synthetic_coefficients(kind, d)
    if kind == "mean":
        return "rows x ~ N(1, 1): the true mean is 1"
    linear = f"{theta[0]:g}" + "".join(f" + {b:g}·{x}" for b, x in zip(theta[1:], names[1:], strict=True))  # fmt: skip
    covariates = f"{', '.join(names[1:])} independent standard normal"
    if kind == "ols":
        return f"y = {linear} + N(0, 1) with {covariates}"
    return f"P(y = 1) = expit({linear}) with {covariates}"


@functools.lru_cache(maxsize=16)
def _logistic_variances(d: int) -> tuple[float, ...]:
    beta = np.r_[-1.0, np.full(d - 1, SYNTHETIC_SLOPE)]
    X = _synthetic_design(400_000, d, np.random.default_rng(0))
    p = expit(X @ beta)
    information = (X * (p * (1 - p))[:, None]).T @ X / X.shape[0]
    return tuple(float(v) for v in np.diag(np.linalg.inv(information)))


def _synthetic_design(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    return np.column_stack([np.ones(n), rng.standard_normal((n, d - 1))])


def _synthetic_generator(kind: ModelKind, n: int, d: int):
    theta, _ = synthetic_truth(kind, d)

    def generate(rng: np.random.Generator) -> object:
        if kind == "mean":
            return theta[0] + rng.standard_normal((n, 1))
        X = _synthetic_design(n, d, rng)
        if kind == "ols":
            return X, X @ theta + rng.standard_normal(n)
        return X, (rng.random(n) < expit(X @ theta)).astype(float)

    return generate


def coverage_synthetic(
    kind: ModelKind,
    n: int,
    d: int,
    settings: RunSettings,
    *,
    factor: float,
    replications: int,
    rng: np.random.Generator | int | None = None,
) -> GVDPCoverage:
    r"""Coverage of the true θ on fresh synthetic samples of n rows (the paper's §3 setting).

    Each replication draws a new sample from the model of :func:`synthetic_truth` and runs GVDP
    with bounds ``factor`` times looser than the tightest (:meth:`GVDPBounds.overestimated` with
    the known truth — allowed here because the synthetic truth is public, never for a release).
    """
    theta, per_row = synthetic_truth(kind, d)
    n = positive_int("n", n)
    if n // settings.k < ROWS_PER_COEFFICIENT * d:
        raise ValueError(
            f"`k` = {settings.k:,} leaves subsets of {n // settings.k} rows (n = {n:,}): use "
            f"k ≤ {n // (ROWS_PER_COEFFICIENT * d):,}"
        )
    bounds = GVDPBounds.overestimated(
        theta, per_row / n, factor, resamples=settings.resamples, subset_size=n // settings.k
    )
    return gvdp_coverage(
        _synthetic_generator(kind, n, d), theta, kind, replications=replications,
        k=settings.k, bounds=bounds, rng=rng, **settings.gvdp_kwargs(),
    )  # fmt: skip


def coverage_frame(
    coverage: GVDPCoverage, coefficients: Sequence[str], *, confidence: float = 0.95
) -> pd.DataFrame:
    r"""Per coefficient: observed coverage with its Clopper–Pearson interval, the nominal level
    and the binomial band of coverages consistent with it.

    With R replications of a procedure that covers with probability = nominal, the number
    covered is Binomial(R, nominal); the band holds the central ``confidence`` of that law, so an
    observed coverage outside it is unlikely under correct calibration.
    """
    R = coverage.replications
    nominal = coverage.level
    tail = (1 - confidence) / 2
    band_low = stats.binom.ppf(tail, R, nominal) / R
    band_high = stats.binom.ppf(1 - tail, R, nominal) / R
    covered = coverage.covered.sum(axis=0)
    rows = []
    for j, name in enumerate(coefficients):
        c = int(covered[j])
        low = stats.beta.ppf(tail, c, R - c + 1) if c > 0 else 0.0
        high = stats.beta.ppf(1 - tail, c + 1, R - c) if c < R else 1.0
        rows.append(
            {
                "coefficient": name, "coverage": c / R, "low": float(low), "high": float(high),
                "nominal": nominal, "band_low": float(band_low), "band_high": float(band_high),
                "replications": R,
                "mean_width": float(np.mean(coverage.high[:, j] - coverage.low[:, j])),
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------------
# Choosing k (paper §3 and App. G.4): the curator's BLB diagnostic
# ------------------------------------------------------------------------------------------------


def k_ladder(k: int, rows: int, d: int) -> tuple[int, ...]:
    """k/4, k/2, k, 2k, 4k (rounded), keeping those that leave ≥ 5 rows per coefficient."""
    k = positive_int("k", k)
    most = rows // (ROWS_PER_COEFFICIENT * d)
    ladder = {max(1, round(k * f)) for f in (0.25, 0.5, 1, 2, 4)}
    return tuple(sorted(v for v in ladder if v <= most))


@dataclass(frozen=True, eq=False)
class BlbDiagnostic:
    """Subset estimates and standard errors at several k (**not private**; never release).

    ``frame``: one row per (k, subset, coefficient) with ``k``, ``b`` (rows per subset),
    ``coefficient``, ``estimate`` (:math:`\\hat\\theta_i^{BLB}`) and ``se``
    (:math:`\\sqrt{\\hat V_i^{BLB}}`, the subset's estimate of the full-sample standard error).
    ``failed`` maps each k whose BLB could not run to the reason.
    """

    frame: pd.DataFrame
    failed: dict[int, str]


def blb_diagnostic(
    data: GvdpData,
    bounds: GvdpBoundsSpec,
    settings: RunSettings,
    ks: Sequence[int],
    *,
    rng: np.random.Generator | int | None = None,
) -> BlbDiagnostic:
    r"""The BLB subset estimates at each k in ``ks`` (paper Fig. 3 and App. G.4).

    The paper's advice: take the largest k for which the BLB estimates, computed on subsets of
    b = n/k rows, still approximate the estimator's sampling distribution; start small and raise
    k until their distribution "starts to look substantially different". Here the subsets'
    estimates :math:`\hat\theta_i^{BLB}` should centre on the full-data estimate and their
    standard errors :math:`\sqrt{\hat V_i^{BLB}}` on the full-data standard error; a drift of
    either as k grows means b is too small (e.g. the small-sample bias of a logistic fit,
    App. G.1). Runs :func:`gvdp` with simulation noise and keeps only the subset arrays, which are
    computed from the confidential data without noise: a curator's diagnostic, never a release.
    """
    _check_bounds(bounds, data.model)
    gen = as_rng(rng)
    frames, failed = [], {}
    for k in ks:
        try:
            run = run_population(data, bounds, _with_k(settings, int(k)), rng=gen)
        except ValueError as exc:
            failed[int(k)] = str(exc)
            continue
        estimates, variances = run.subset_estimates, run.subset_variances
        count = estimates.shape[0]
        for j, name in enumerate(data.model.coefficients):
            frames.append(
                pd.DataFrame(
                    {
                        "k": int(k), "b": data.rows // int(k), "coefficient": name,
                        "estimate": estimates[:, j], "se": np.sqrt(variances[:, j]),
                        "subset": np.arange(count),
                    }
                )
            )  # fmt: skip
    columns = ["k", "b", "coefficient", "estimate", "se", "subset"]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    return BlbDiagnostic(frame=frame, failed=failed)


def _with_k(settings: RunSettings, k: int) -> RunSettings:
    return RunSettings(
        k=k, rho=settings.rho, resamples=settings.resamples, steps=settings.steps,
        beta=settings.beta, mean_fraction=settings.mean_fraction, level=settings.level,
    )  # fmt: skip


# ------------------------------------------------------------------------------------------------
# The release plan
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GvdpPlan:
    r"""A planned GVDP release: estimates and valid intervals per group and for the population.

    Follows :class:`dpcore.release.ReleasePlan`. ``strategy="stratified"`` runs GVDP (paper
    Alg. 1) in every group with the whole ρ — groups are disjoint, so they compose in parallel
    and the release costs ρ — and releases every group's estimate and interval plus their
    share-weighted recombination (post-processing of DP outputs: no extra cost).
    ``strategy="global_only"`` runs GVDP once on all rows (cost ρ). The privacy noise comes from
    the given :class:`~dpcore.mechanisms.NoiseSource` (OpenDP's SecureNoise in a real release);
    the BLB partition and resamples from fresh OS entropy.

    Parameters
    ----------
    data
        The model's rows (:func:`prepare_data`), built from the frame that ``dataset``
        fingerprints with ``spec``. Not part of the plan's identity.
    dataset, spec
        Where the rows and groups come from; in the metadata and the reproduction script.
    model, bounds
        What is estimated (:class:`GvdpModel`) and the public bounds (:class:`GvdpBoundsSpec`).
    budget
        The release's ρ-zCDP budget (GVDP adds Gaussian noise: zCDP, never pure ε-DP).
    k
        BLB subsets of the population; groups use the same subset size b = ⌊N/k⌋.
    resamples, steps, beta, mean_fraction
        r, t, β and the estimate's share of ρ (:func:`~dpcore.estimators.gvdp.gvdp`).
    level
        Confidence level of the intervals.
    label
        A name for the release; part of its identity.

    Build one from a frame with :meth:`build`.
    """

    data: GvdpData = field(compare=False, repr=False)
    dataset: DatasetRef
    spec: StrataSpec
    model: GvdpModel
    bounds: GvdpBoundsSpec
    budget: ZCDP
    k: int
    strategy: Strategy = "stratified"
    resamples: int = 10
    steps: int = 5
    beta: float = 0.03
    mean_fraction: float = 0.5
    level: float = 0.95
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.data, GvdpData):
            raise TypeError(f"`data` must be GvdpData, got {type(self.data).__name__}")
        if not isinstance(self.dataset, DatasetRef):
            raise TypeError(f"`dataset` must be a DatasetRef, got {type(self.dataset).__name__}")
        if not isinstance(self.spec, StrataSpec):
            raise TypeError(f"`spec` must be a StrataSpec, got {type(self.spec).__name__}")
        if not isinstance(self.model, GvdpModel) or self.data.model != self.model:
            raise ValueError("`data` must be prepared for `model` (prepare_data(frame, model, …))")
        if not isinstance(self.budget, ZCDP):
            raise TypeError(
                f"`budget` must be a ZCDP budget (GVDP adds Gaussian noise, so it meets ρ-zCDP "
                f"but never pure ε-DP), got {type(self.budget).__name__} {self.budget!r}"
            )
        if self.strategy not in STRATEGIES:
            raise ValueError(
                f"`strategy` must be one of {sorted(STRATEGIES)}, got {self.strategy!r}"
            )
        if not isinstance(self.label, str):
            raise TypeError(f"`label` must be a str, got {type(self.label).__name__}")
        _check_bounds(self.bounds, self.model)
        settings = self.settings  # validates k, r, t, β, mean_fraction and level
        self.data.check_k(settings.k, settings.resamples)
        if self.strategy == "stratified":
            problem = self.data.group_problem(settings.k, settings.resamples)
            if problem is not None:
                raise ValueError(problem)
        if not self.label.strip():
            by = f" by {' × '.join(self.spec.by)}" if self.strategy == "stratified" else ""
            object.__setattr__(self, "label", f"GVDP {self.model.statistic}{by}")

    @classmethod
    def build(
        cls,
        frame: pd.DataFrame,
        *,
        spec: StrataSpec,
        dataset_name: str,
        model: GvdpModel,
        bounds: GvdpBoundsSpec,
        budget: ZCDP,
        k: int,
        strategy: Strategy = "stratified",
        resamples: int = 10,
        steps: int = 5,
        beta: float = 0.03,
        mean_fraction: float = 0.5,
        level: float = 0.95,
        label: str = "",
    ) -> GvdpPlan:
        """The plan for ``frame``: groups from ``spec``, rows from ``model``'s columns."""
        return cls(
            data=prepare_data(frame, model, spec), dataset=DatasetRef.of(frame, dataset_name),
            spec=spec, model=model, bounds=bounds, budget=budget, k=k, strategy=strategy,
            resamples=resamples, steps=steps, beta=beta, mean_fraction=mean_fraction,
            level=level, label=label,
        )  # fmt: skip

    @property
    def settings(self) -> RunSettings:
        return RunSettings(
            k=self.k, rho=self.budget.rho, resamples=self.resamples, steps=self.steps,
            beta=self.beta, mean_fraction=self.mean_fraction, level=self.level,
        )  # fmt: skip

    @property
    def cost(self) -> ZCDP:
        """ρ: one GVDP run, or disjoint groups' runs in parallel (McSherry 2009, Thm. 4)."""
        return self.budget

    @property
    def statistic(self) -> str:
        return self.model.statistic

    @property
    def interval_description(self) -> str:
        """What the intervals cover, for the release's metadata."""
        return (
            f"{self.level:.0%} GVDP confidence intervals (Covington et al., Thm. 2.12): they "
            "cover the population parameter, allowing for sampling error and the DP noise, when "
            "the bag of little bootstraps approximates the estimator's sampling distribution and "
            "the public bounds hold (with probability ≥ 1 − β = "
            f"{1 - self.beta:g} over the noise). The 'All' rows of a stratified release are the "
            "share-weighted sums of the DP group estimates. Row counts (each group's, when "
            "stratified) are treated as public: they set the subsets per group and the variance "
            "bounds (paper §2.2)"
        )

    def parameters(self) -> dict:
        """Everything that defines the release, JSON-ready (the plan's identity)."""
        return {
            "kind": "gvdp",
            "statistic": self.statistic,
            "label": self.label,
            "dataset": {"name": self.dataset.name, "fingerprint": self.dataset.fingerprint,
                        "rows": self.dataset.rows},
            "strata": self.spec.to_dict(),
            "estimator": {
                "class": "GvdpPlan", "model": self.model.to_dict(),
                "bounds": self.bounds.to_dict(), "k": self.k, "resamples": self.resamples,
                "steps": self.steps, "beta": self.beta, "mean_fraction": self.mean_fraction,
            },
            "budget": {"kind": self.budget.kind, **self.budget.components()},
            "strategy": self.strategy,
            "level": self.level,
        }  # fmt: skip

    def run(self, noise: NoiseSource) -> list[dict]:
        """Draw the release with ``noise``: per group and coefficient (stratified), then the
        population rows (group ``"All"``). Every number is a DP output or a public share."""
        names = self.model.coefficients
        rows = []
        if self.strategy == "stratified":
            grouped = run_groups(self.data, self.bounds, self.settings, noise=noise)
            for label, share, result in zip(
                grouped.labels, grouped.shares, grouped.results, strict=True
            ):
                for j, name in enumerate(names):
                    rows.append(
                        _row("group", label, name, result.estimate[j], result.low[j],
                             result.high[j], result.variance[j]) | {"public_share": float(share)}
                    )  # fmt: skip
            population = (grouped.estimate, grouped.low, grouped.high, grouped.variance)
        else:
            result = run_population(self.data, self.bounds, self.settings, noise=noise)
            population = (result.estimate, result.low, result.high, result.variance)
        for j, name in enumerate(names):
            rows.append(_row("population", ALL, name, *(part[j] for part in population)))
        return rows

    def review_lines(self) -> list[str]:
        """Markdown lines that describe the plan for a person about to commit it."""
        data, settings = self.data, self.settings
        b = data.subset_rows(self.k)
        dropped = f"; {data.n_missing:,} dropped for missing values" if data.n_missing else ""
        lines = [
            f"**Statistic:** {self.statistic}, {STRATEGIES[self.strategy]}",
            _data_line(self.dataset),
        ]
        if self.strategy == "stratified":
            subsets = data.group_subsets(self.k)
            per_group = ", ".join(
                f"{label} {k_g}" for label, k_g in zip(data.labels, subsets, strict=True)
            )
            lines.append(
                f"**Strata:** {' × '.join(self.spec.by)} — {len(data.labels)} groups; shares: "
                f"{data.share_description.lower()}"
            )
            lines.append(
                f"**Rows:** {data.rows:,} complete rows{dropped}; subsets of b = {b:,} rows in "
                f"every group, so k per group: {per_group} (group sizes are treated as public)"
            )
        else:
            lines.append(
                f"**Rows:** {data.rows:,} complete rows{dropped}; k = {self.k:,} subsets of "
                f"b = {b:,} rows"
            )
        mode = (
            "explicit public ranges"
            if self.bounds.mode == "box"
            else f"a public guess × factor {self.bounds.factor:g}"
        )
        lines += [
            f"**Estimator:** GVDP (Covington et al.): bag of little bootstraps with r = "
            f"{settings.resamples} resamples, CoinPress with t = {settings.steps} steps, "
            f"{settings.mean_fraction:.0%} of ρ for the estimate, β = {settings.beta:g}",
            f"**Public bounds** ({mode}): " + "; ".join(self.bounds.describe()),
            f"**Accounting:** ρ = {self.budget.rho:g} zCDP"
            + (
                "; groups are disjoint, so all groups together cost one group's ρ, and the "
                "recombined estimate is post-processing"
                if self.strategy == "stratified"
                else ""
            ),
            f"**Intervals:** {self.level:.0%} GVDP intervals (sampling error + DP noise)",
        ]
        return lines

    def script_body(self) -> str:
        """The Python lines that rebuild this plan from a frame named ``frame``."""
        spec_arguments = ", ".join(
            f"{f.name}={getattr(self.spec, f.name)!r}" for f in fields(self.spec)
        )
        return (
            "from dpcore.plans.gvdp import GvdpBoundsSpec, GvdpModel, GvdpPlan\n"
            "from dpcore.strata import StrataSpec\n\n"
            f"spec = StrataSpec({spec_arguments})\n"
            "plan = GvdpPlan.build(\n"
            "    frame,\n"
            "    spec=spec,\n"
            f"    dataset_name={self.dataset.name!r},\n"
            f"    model={self.model!r},\n"
            f"    bounds={self.bounds!r},\n"
            f"    budget={self.budget!r},\n"
            f"    k={self.k!r},\n"
            f"    strategy={self.strategy!r},\n"
            f"    resamples={self.resamples!r},\n"
            f"    steps={self.steps!r},\n"
            f"    beta={self.beta!r},\n"
            f"    mean_fraction={self.mean_fraction!r},\n"
            f"    level={self.level!r},\n"
            f"    label={self.label!r},\n"
            ")\n"
        )


def _row(level, group, coefficient, estimate, low, high, variance) -> dict:
    return {
        "level": level, "group": group, "coefficient": coefficient,
        "estimate": float(estimate), "low": float(low), "high": float(high),
        "std_error": float(math.sqrt(variance)),
    }  # fmt: skip
