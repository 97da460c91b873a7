"""What the general estimator estimates on a table: the model and its public bounds.

:class:`GvdpModel` names the estimator (mean, OLS, logistic) and its columns and turns a frame's
rows into the arrays :func:`~dpcore.analyses.gvdp.estimator.gvdp` takes; :class:`GvdpBoundsSpec`
holds the public bounds in the coefficients' own units.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from dpcore.analyses.gvdp.bounds import ROWS_PER_COEFFICIENT, GVDPBounds
from dpcore.foundations.choices import Choices
from dpcore.foundations.labels import plain_number
from dpcore.foundations.validation import (
    finite_number,
    numeric_values,
    positive_int,
    shown,
)

__all__ = [
    "BOUNDS_MODES",
    "INTERCEPT",
    "MODELS",
    "GvdpBoundsSpec",
    "GvdpModel",
    "ModelRows",
]


ModelKind = Literal["mean", "ols", "logistic"]


MODELS = Choices(
    ModelKind,
    {
        "mean": "Mean of a column",
        "ols": "Linear regression (OLS)",
        "logistic": "Logistic regression",
    },
)


BoundsMode = Literal["box", "guess"]


BOUNDS_MODES = Choices(
    BoundsMode,
    {
        "box": "Explicit public ranges",
        "guess": "A public guess × a safety factor",
    },
)


INTERCEPT = "intercept"
"""Name of the intercept coefficient of a regression."""


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
        MODELS.check("kind", self.kind)
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
        """The :func:`~dpcore.analyses.gvdp.gvdp` estimator name."""
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
        """Rows a GVDP subset needs (:data:`~dpcore.analyses.gvdp.ROWS_PER_COEFFICIENT` per
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
            values[column] = numeric_values(frame, role, column)
        matrix = np.column_stack([values[c] for c in self.columns]) if len(frame) else None
        if matrix is None:
            raise ValueError("the data have no rows")
        complete = np.all(np.isfinite(matrix), axis=1)
        return ModelRows(model=self, values=matrix, complete=complete)


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
                f"{model.d} coefficients). On the Strata page, merge or drop the small groups "
                "(with a larger minimum group size), use fewer covariates, or fit the whole "
                "population only."
            )
        y = block[:, 0]
        if model.kind == "mean":
            return _read_only(block[:, :1].copy())
        if model.kind == "logistic":
            _check_binary(y, model.outcome, where)
        X = np.column_stack([np.ones(block.shape[0]), block[:, 1:]])
        _check_design(X, model.coefficients, where)
        return (_read_only(X), _read_only(y.copy()))


def _read_only(array: np.ndarray) -> np.ndarray:
    """``array``, locked: the app shares one copy of the statistics between reruns and
    sessions (:attr:`~dpcore.analyses.base.Analysis.read_only_statistics`)."""
    array.setflags(write=False)
    return array


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


def _floats(name: str, values: object, d: int, coefficients: Sequence[str]) -> tuple[float, ...]:
    if isinstance(values, str) or not isinstance(values, Sequence | np.ndarray):
        raise TypeError(f"`{name}` must be a sequence of numbers, got {shown(values)}")
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
        BOUNDS_MODES.check("mode", self.mode)
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
                    f"{shown(value)}"
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
                        f"the public range of `{name}` must have low < high, got low = {plain_number(lo, 6)} "
                        f"and high = {plain_number(hi, 6)}"
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

    def public_range(self) -> tuple[np.ndarray, np.ndarray]:
        r"""Where the bounds say each coefficient lies: the box :math:`[\ell_j, h_j]`, or for a
        guess every coordinate of the ball :math:`B_2(0, c\|g\|_2)`, i.e. :math:`|\theta_j| \le
        c\|g\|_2`. Releases are clipped to it (post-processing, paper Assumption 2.6's set)."""
        if self.mode == "box":
            return np.asarray(self.low), np.asarray(self.high)
        radius = self.factor * float(np.linalg.norm(self.guess))
        return np.full(self.d, -radius), np.full(self.d, radius)

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
                f"`{c}` in [{plain_number(lo, 6)}, {plain_number(hi, 6)}], SE ≤ {plain_number(s, 6)}/√n"
                for c, lo, hi, s in zip(
                    self.coefficients, self.low, self.high, self.spread, strict=True
                )  # fmt: skip
            ]
        return [
            f"`{c}` guessed {plain_number(g, 6)}, SE guessed {plain_number(s, 6)}/√n"
            for c, g, s in zip(self.coefficients, self.guess, self.spread, strict=True)
        ]
