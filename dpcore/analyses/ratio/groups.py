r"""The calibration ratio's sufficient statistics: every group's clipped sums.

For every group :math:`G_g` the target is :math:`r_g = \sum_{G_g} w s / \sum_{G_g} w y` (Miao &
Li 2022, §2.1). :func:`group_ratio_sums` computes every group's sums in one vectorized pass;
:func:`bootstrap_group_sums` resamples the rows (or people) within groups for the Compare page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpcore.analyses.ratio.sums import (
    RatioBounds,
    RatioSums,
)
from dpcore.foundations.grouping import DROPPED_CODE, HOLDOUT_CODE, Grouping
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit, dropped_rows_notes, row_weights
from dpcore.foundations.validation import as_rng, instance_of, numeric_values, positive_int

__all__ = [
    "GroupRatioSums",
    "RatioColumns",
    "bootstrap_group_sums",
    "group_ratio_sums",
]


@dataclass(frozen=True)
class RatioColumns:
    """What the ratio sums in a frame (Miao & Li 2022, §2.3.1): the score ``s_column``, the
    label ``y_column`` and the optional weight ``w_column``, their public upper ``bounds``
    (lower bounds 0), whether the label is declared 0/1 (``binary_y``), and the privacy ``unit``
    whose contributions are bounded. One object for the inputs that the pass in memory
    (:func:`group_ratio_sums`), the engine's pass (:func:`~dpcore.analyses.ratio.aggregate.
    ratio_query`) and their sums (:class:`GroupRatioSums`, which are a ``RatioColumns``) share;
    the public functions keep their keywords, which released scripts call."""

    s_column: str
    y_column: str
    w_column: str | None
    bounds: RatioBounds
    binary_y: bool
    unit: PrivacyUnit = ROW

    @property
    def keywords(self) -> dict:
        """The columns, bounds and label choice as the public functions' keywords (in their
        order; ``unit`` apart, since a script names it only for a person column)."""
        return {"s_column": self.s_column, "y_column": self.y_column, "w_column": self.w_column,
                "bounds": self.bounds, "binary_y": self.binary_y}  # fmt: skip


@dataclass(frozen=True, eq=False, kw_only=True)
class GroupRatioSums(RatioColumns):
    """The exact clipped sums of every group (§2.3.1), aligned with ``labels``, and the
    :class:`RatioColumns` they were taken with.

    ``sums`` is a :class:`~dpcore.analyses.ratio.RatioSums` of arrays of shape ``(k,)``. The
    counts say what happened to the rows: ``n_missing`` rows were dropped for a missing or
    infinite s, y or w, and ``n_ungrouped`` rows belong to no group (their group was dropped on
    the Strata page). ``rows`` counts the rows summed per group. Everything here is confidential:
    use it for releases and previews, never show it as a release.

    Sums an engine computed (:func:`~dpcore.analyses.ratio.aggregate.aggregate_ratio`) also say which ``engine``,
    the privacy ``unit`` whose contributions it bounded (``bounds.rows_per_person`` is then its
    c, so that every sensitivity is one person's), Python that runs the same pass again
    (``recipe``, for a release's script) and ``notes`` on what the pass left out.
    """

    labels: tuple[str, ...]
    sums: RatioSums
    rows: np.ndarray
    n_input: int
    n_missing: int
    n_ungrouped: int
    engine: str = ""
    recipe: str = ""
    notes: tuple[str, ...] = ()

    # Sums of arrays compare and hash by identity, not by the columns they were taken with.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __post_init__(self) -> None:
        if self.bounds.rows_per_person != self.unit.rows_per_person:
            raise ValueError(
                f"`bounds.rows_per_person` must be the privacy unit's {self.unit.rows_per_person} "
                f"rows per person, got {self.bounds.rows_per_person}"
            )

    @property
    def k(self) -> int:
        return len(self.labels)

    @property
    def truth(self) -> np.ndarray:
        """The exact ratio Σws/Σwy of the clipped rows per group (NaN where Σwy = 0)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.asarray(self.sums.ws) / np.asarray(self.sums.wy)
        return np.where(np.asarray(self.sums.wy) > 0, ratio, np.nan)

    @property
    def global_truth(self) -> float:
        """The exact ratio over every grouped row (NaN if Σwy = 0)."""
        wy = float(np.sum(self.sums.wy))
        return float(np.sum(self.sums.ws)) / wy if wy > 0 else math.nan

    def messages(self) -> list[str]:
        """Plain sentences about dropped rows (empty when every row was used)."""
        out = []
        columns = ", ".join(f"`{c}`" for c in (self.s_column, self.y_column, self.w_column) if c)
        if self.n_missing:
            out.append(
                f"{self.n_missing:,} of {self.n_input:,} rows have a missing or infinite value in "
                f"{columns} and were dropped (rows with any of them missing are left out)."
            )
        if self.n_ungrouped:
            out.append(
                f"{self.n_ungrouped:,} rows belong to a group dropped on the Strata page and are "
                "not counted."
            )
        return out + list(self.notes)


ROLE_WORDS = {"s_column": "score", "y_column": "label", "w_column": "weight"}
"""Each column parameter's role, in words."""


def _check_columns(
    s_column: object, y_column: object, w_column: object
) -> tuple[str, str, str | None]:
    names = {"s_column": s_column, "y_column": y_column}
    if w_column is not None:
        names["w_column"] = w_column
    for parameter, column in names.items():
        if not isinstance(column, str):
            raise TypeError(f"`{parameter}` must be a column name (str), got {column!r}")
    seen: dict[str, str] = {}
    for parameter, column in names.items():
        if column in seen:
            raise ValueError(
                f"`{parameter}` and `{seen[column]}` must be different columns, got {column!r} "
                "for both"
            )
        seen[column] = parameter
    return s_column, y_column, w_column


def check_ratio_bounds(bounds: object, weighted: bool, binary_y: bool) -> RatioBounds:
    if not isinstance(bounds, RatioBounds):
        raise TypeError(f"`bounds` must be a RatioBounds, got {type(bounds).__name__} {bounds!r}")
    if weighted and bounds.w < 1:
        raise ValueError(
            f"`bounds.w` must be >= 1 for weighted data: weights are clipped to [0, u_w] and a "
            f"bound below 1 would shrink even a unit weight, got {bounds.w!r}"
        )
    if not weighted and bounds.w != 1:
        raise ValueError(f"`bounds.w` must be 1 without a weight column, got {bounds.w!r}")
    if binary_y and bounds.y != 1:
        raise ValueError(f"`bounds.y` must be 1 for a binary label (y is 0 or 1), got {bounds.y!r}")
    return bounds


def _row_matrix(frame: pd.DataFrame, grouping: Grouping, columns: RatioColumns) -> _Rows:
    """Group index, owner and per-row summands of every row the ratio sums (:class:`_Rows`):
    rows in a group with finite s, y (and w) that the contribution bound of ``columns.unit``
    keeps."""
    s_column, y_column, w_column = columns.s_column, columns.y_column, columns.w_column
    bounds, binary_y, unit = columns.bounds, columns.binary_y, columns.unit
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}")
    instance_of("grouping", grouping, Grouping)
    instance_of("unit", unit, PrivacyUnit)
    codes = grouping.codes_for(frame)
    if not isinstance(binary_y, bool):
        raise TypeError(f"`binary_y` must be True or False, got {binary_y!r}")
    s_column, y_column, w_column = _check_columns(s_column, y_column, w_column)
    bounds = check_ratio_bounds(bounds, w_column is not None, binary_y)
    if bounds.rows_per_person != unit.rows_per_person:
        raise ValueError(
            f"`bounds.rows_per_person` must be the privacy unit's {unit.rows_per_person} rows per "
            f"person, got {bounds.rows_per_person}"
        )
    parameters = {"s_column": s_column, "y_column": y_column}
    if w_column is not None:
        parameters["w_column"] = w_column
    raw = np.column_stack(
        [numeric_values(frame, name, column) for name, column in parameters.items()]
    )
    roles = {column: f"the {ROLE_WORDS[name]}" for name, column in parameters.items()}
    private = codes != HOLDOUT_CODE
    finite = np.isfinite(raw).all(axis=1)
    weights = row_weights(frame, grouping, raw, roles, unit)
    n_missing = int(np.count_nonzero(private & ~finite))
    n_ungrouped = int(np.count_nonzero(finite & (codes == DROPPED_CODE)))
    keep = (weights > 0) & (codes >= 0)
    n_bounded_out = int(np.count_nonzero(finite & (codes >= 0))) - int(round(weights[keep].sum()))
    s, y = raw[keep, 0], raw[keep, 1]
    if binary_y and not np.all((y == 0) | (y == 1)):
        raise ValueError(
            f"`y_column` {y_column!r} must contain only 0 and 1 when the label is declared binary "
            "(`binary_y=True`); declare it not binary, or choose a 0/1 column"
        )
    s, y = np.clip(s, 0.0, bounds.s), np.clip(y, 0.0, bounds.y)
    w = np.ones_like(s) if w_column is None else np.clip(raw[keep, 2], 0.0, bounds.w)
    ws, wy = w * s, w * y
    columns = {"w": w, "ws": ws, "wy": wy, "wss": ws * s, "wys": wy * s}
    if w_column is not None:
        columns["ww"] = w * w
    if not binary_y:
        columns["wyy"] = wy * y
    owners = (
        np.flatnonzero(keep) if unit.column is None
        else pd.factorize(frame[unit.column].to_numpy()[keep])[0]
    )  # fmt: skip
    # Under a person's bound each row's summands count with its weight (m/n of a person's n
    # rows in a cell); without one every weight is 1.
    matrix = np.column_stack(list(columns.values())) * weights[keep, None]
    return _Rows(
        codes[keep], owners, matrix, weights[keep], tuple(columns), int(private.sum()),
        n_missing, n_ungrouped, n_bounded_out,
    )  # fmt: skip


@dataclass(frozen=True, eq=False)
class _Rows:
    """The rows the ratio sums: each row's group ``codes``, its person (``owners``, one per row
    without a person column) and its summands ``matrix`` (one column per sum of ``names``, in
    :class:`RatioSums` order: clipped w, ws, wy, ws², wys (, w², wy²)), times the row's
    ``weight`` under the contribution bound, and the confidential counts of rows read,
    missing, in no group and left out by the contribution bound (the public holdout is never
    read)."""

    codes: np.ndarray
    owners: np.ndarray
    matrix: np.ndarray
    weights: np.ndarray
    names: tuple[str, ...]
    n_input: int
    n_missing: int
    n_ungrouped: int
    n_bounded_out: int


def group_ratio_sums(
    frame: pd.DataFrame,
    grouping: Grouping,
    *,
    s_column: str,
    y_column: str,
    w_column: str | None = None,
    bounds: RatioBounds,
    binary_y: bool,
    unit: PrivacyUnit = ROW,
) -> GroupRatioSums:
    r"""Every group's clipped sums :math:`\sum w, \sum ws, \sum wy, \sum ws^2, \sum wys` (§2.3.1).

    Rows are grouped by ``grouping`` (built from ``frame``) — the groups of the Strata page,
    merged groups included; rows of dropped groups and of the public holdout are left out. Rows
    with a missing or infinite s, y or w are dropped (and counted). Values are clipped to the
    public ``bounds`` (lower bounds 0): s to [0, u_s], y to [0, u_y], w to [0, u_w].
    ``binary_y=True`` declares y ∈ {0, 1} (a public fact, checked here, never inferred), so
    Σwy² = Σwy is not released; without ``w_column`` every weight is 1 and Σw² = Σw is not
    released. One vectorized pass (``np.bincount``).

    With a person column in ``unit``, each person's rows are bounded first, in the cells of the
    grouping columns and exactly as every engine bounds them
    (:func:`~dpcore.foundations.privacy_unit.row_weights`): a person's rows in a cell count as
    at most ``unit.max_rows`` rows (their summands scaled), in at most ``unit.max_groups``
    groups, so that these sums equal
    :func:`~dpcore.analyses.ratio.aggregate.aggregate_ratio`'s. One person then adds at most
    c = ``unit.rows_per_person`` rows' worth, each with summands in [0, Δ] (Miao & Li §2.3.1), so each
    sum over the groups moves by at most c·Δ when a person is added or removed: ``bounds``
    must carry that c (``RatioBounds(..., rows_per_person=c)``), and every sensitivity is then
    one person's (:meth:`RatioBounds.sensitivities`).
    """
    rows = _row_matrix(
        frame, grouping, RatioColumns(s_column, y_column, w_column, bounds, binary_y, unit)
    )
    k = grouping.k
    totals = {
        name: np.bincount(rows.codes, weights=rows.matrix[:, i], minlength=k)
        for i, name in enumerate(rows.names)
    }
    return GroupRatioSums(
        labels=tuple(grouping.labels),
        sums=RatioSums(**totals),
        rows=np.bincount(rows.codes, weights=rows.weights, minlength=k).round().astype(np.int64),
        n_input=rows.n_input,
        n_missing=rows.n_missing,
        n_ungrouped=rows.n_ungrouped,
        s_column=s_column,
        y_column=y_column,
        w_column=w_column,
        bounds=bounds,
        binary_y=binary_y,
        unit=unit,
        notes=dropped_rows_notes(unit, rows.n_bounded_out),
    )


def bootstrap_group_sums(
    frame: pd.DataFrame,
    grouping: Grouping,
    sums: GroupRatioSums,
    *,
    replicates: int,
    rng: np.random.Generator | int | None = None,
) -> RatioSums:
    """Group sums of ``replicates`` bootstrap resamples of the rows, shape ``(replicates, k)``.

    ``sums`` are :func:`group_ratio_sums` of ``frame`` and ``grouping``: their columns, bounds,
    binary-label choice and privacy unit say which rows and summands to resample. Each group's
    rows are resampled with replacement, keeping its size (a stratified nonparametric
    bootstrap, Efron & Tibshirani 1993 §8): the sampling variation that the delta-method part
    of the interval (eq. 1–4) is for. With a person column, the rows the bound kept are
    resampled by person: each group's people are redrawn with all their rows in the group
    (the cluster bootstrap, Davison & Hinkley 1997 §3.8), since one person's rows are not
    independent draws. Vectorized: per group and block of replicates, uniform indices are
    counted with ``np.bincount`` and the counts multiply the per-row (per-person) summands, so
    no Python loop runs per replicate. For the Compare page only.
    """
    replicates = positive_int("replicates", replicates)
    generator = as_rng(rng)
    rows = _row_matrix(frame, grouping, sums)
    codes, matrix, names = rows.codes, rows.matrix, rows.names
    if sums.unit.column is not None:  # one unit per person and group: their rows' summands
        pairs = pd.MultiIndex.from_arrays([codes, rows.owners])
        unit_of, units = pd.factorize(pairs)
        matrix = np.stack(
            [np.bincount(unit_of, weights=matrix[:, i]) for i in range(len(names))], axis=1
        )
        codes = units.get_level_values(0).to_numpy()
    order = np.argsort(codes, kind="stable")
    codes, matrix = codes[order], matrix[order]
    offsets = np.searchsorted(codes, np.arange(grouping.k + 1))
    out = np.zeros((replicates, grouping.k, len(names)))
    for g in range(grouping.k):
        group = matrix[offsets[g] : offsets[g + 1]]
        n = group.shape[0]
        if n == 0:
            continue
        step = max(1, (1 << 22) // n)  # ~4M draws per block keeps memory small
        for start in range(0, replicates, step):
            r = min(step, replicates - start)
            index = generator.integers(0, n, size=(r, n)) + (np.arange(r) * n)[:, None]
            counts = np.bincount(index.ravel(), minlength=r * n).reshape(r, n)
            out[start : start + r, g] = counts @ group
    return RatioSums.from_stack(names, out)
