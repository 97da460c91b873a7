r"""The calibration ratio's sums from an engine's pass: the same per-group sums
:func:`~dpcore.analyses.ratio.groups.group_ratio_sums` computes from rows in memory, for data
that stays where it lies (files on disk, a Spark table).

Miao & Li 2022, §2.3.1: per group the clipped sums :math:`\sum w, \sum ws, \sum wy, \sum ws^2,
\sum wys`, plus :math:`\sum w^2` with weights and :math:`\sum wy^2` for a label that is not 0/1.
Each is a product of the row's score s, label y and weight w, each clipped to its public bounds
before anything is summed (:func:`ratio_query`); the engine's pass sums them per cell, and the
cells are grouped as :func:`~dpcore.analyses.mean.aggregate.aggregate_mean` groups them
(:func:`~dpcore.engines.base.aggregate_cells`).

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dpcore.analyses.base import EngineStatistics
from dpcore.analyses.ratio.groups import GroupRatioSums, RatioColumns, check_ratio_bounds
from dpcore.analyses.ratio.sums import RatioBounds, RatioSums
from dpcore.engines.base import (
    Clipped,
    Engine,
    EngineError,
    SumsQuery,
    aggregate_cells,
)
from dpcore.foundations.grouping import DROPPED_CODE, GroupingSpec
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit, dropped_rows_notes

__all__ = ["aggregate_ratio", "ratio_query"]

PREFIX = "sum_"
"""The cells' column of the sum ``w`` is ``sum_w`` (a grouping column may be called ``w``)."""


def ratio_query(spec: GroupingSpec, columns: RatioColumns) -> SumsQuery:
    """The pass the ratio needs: s, y (and w) clipped to [0, u] per row, and per cell the sums
    of their products in :class:`~dpcore.analyses.ratio.RatioSums`' names (prefixed
    :data:`PREFIX`), multiplied left to right as :func:`group_ratio_sums` multiplies them.
    Without weights every weight is 1, so Σw counts the rows. A label declared 0/1 is checked
    (``binary``), never inferred."""
    s_column, y_column, w_column = columns.s_column, columns.y_column, columns.w_column
    bounds, binary_y = columns.bounds, columns.binary_y
    inputs = [Clipped(s_column, 0.0, bounds.s, "score"), Clipped(y_column, 0.0, bounds.y, "label")]
    w = () if w_column is None else (w_column,)
    if w_column is not None:
        inputs.append(Clipped(w_column, 0.0, bounds.w, "weight"))
    s, y = s_column, y_column
    products = {"w": w, "ws": (*w, s), "wy": (*w, y), "wss": (*w, s, s), "wys": (*w, y, s)}
    if w_column is not None:
        products["ww"] = (w_column, w_column)
    if not binary_y:
        products["wyy"] = (*w, y, y)
    return SumsQuery(
        spec.by, spec.edges, tuple(inputs),
        tuple((PREFIX + name, factors) for name, factors in products.items()),
        binary=(y_column,) if binary_y else (), unit=columns.unit,
    )  # fmt: skip


def aggregate_ratio(
    engine: Engine,
    spec: GroupingSpec,
    *,
    s_column: str,
    y_column: str,
    w_column: str | None = None,
    bounds: RatioBounds,
    binary_y: bool,
    unit: PrivacyUnit = ROW,
) -> EngineStatistics[GroupRatioSums]:
    """The groups of ``spec`` and every group's clipped sums (module doc), from one pass of
    ``engine``, with the contribution bound of ``unit`` applied before anything is summed.

    The same sums as :func:`~dpcore.analyses.ratio.groups.group_ratio_sums` on the rows in
    memory: rows with a missing or infinite s, y or w are left out (and counted), every group of
    the grouping stays (one with no row has zero sums). With a person column, each person's rows
    are bounded as for the mean (at most ``unit.max_rows`` rows in each of at most
    ``unit.max_groups`` groups), so one person adds at most c = ``unit.rows_per_person`` rows:
    the returned ``bounds`` carry that c, and every sum's sensitivity is c times one row's
    (:meth:`~dpcore.analyses.ratio.RatioBounds.sensitivities`), so a release protects one person.

    Raises
    ------
    EngineError
        An unknown column, a column of the wrong kind, a label declared 0/1 that is not, rows
        without a person id, or data the engine cannot read.
    ValueError
        Bounds that do not fit the columns, or groups the spec cannot build.
    """
    weighted = w_column is not None
    bounds = check_ratio_bounds(bounds, weighted, binary_y)
    columns = RatioColumns(s_column, y_column, w_column, bounds, binary_y, unit)
    query = ratio_query(spec, columns)
    cells, grouping, dataset = aggregate_cells(engine, spec, query)
    table = cells.table
    codes = grouping.codes
    inside = codes >= 0
    if binary_y and table.loc[inside, "not_binary"].sum() > 0:
        raise EngineError(
            f"The label column `{y_column}` has values other than 0 and 1, but the label is "
            "declared binary (0/1). Declare its largest possible value instead (untick “Label "
            "is binary (0/1)” in the app, or pass --label-bound on the command line), or choose "
            "a 0/1 column."
        )

    def per_group(column: str) -> np.ndarray:
        weights = table[column].to_numpy(float)[inside]
        return np.bincount(codes[inside], weights=weights, minlength=grouping.k)

    names = [name.removeprefix(PREFIX) for name, _ in query.sums]
    finite = table["finite"].to_numpy(float)
    stats = GroupRatioSums(
        labels=tuple(grouping.labels),
        sums=RatioSums(**{name: per_group(PREFIX + name) for name in names}),
        rows=per_group("usable").round().astype(np.int64),
        n_input=int(table["rows"].sum()),
        n_missing=int(round(table["rows"].sum() - finite.sum())),
        n_ungrouped=int(round(finite[codes == DROPPED_CODE].sum())),
        **{**columns.keywords,
           "bounds": dataclasses.replace(bounds, rows_per_person=unit.rows_per_person)},
        unit=unit, engine=engine.name, recipe=_recipe(engine, columns),
        notes=(
            *grouping.report.messages(),
            *dropped_rows_notes(
                unit, int(round(finite[inside].sum() - per_group("usable").sum()))
            ),
        ),
    )  # fmt: skip
    return EngineStatistics(stats, dataset)


def _recipe(engine: Engine, columns: RatioColumns) -> str:
    """Python that runs the same pass again, for a release's script (``spec`` defined)."""
    arguments = ", ".join(f"{name}={value!r}" for name, value in columns.keywords.items())
    unit = columns.unit
    person = "" if unit == ROW else (
        f", unit=PrivacyUnit({unit.column!r}, max_groups={unit.max_groups}, "
        f"max_rows={unit.max_rows})"
    )  # fmt: skip
    return (
        f"from dpcore import RatioBounds\n"
        f"from dpcore.engines import {type(engine).__name__}\n"
        "from dpcore.analyses.ratio.aggregate import aggregate_ratio\n"
        f"{'' if unit == ROW else 'from dpcore.foundations.privacy_unit import PrivacyUnit'}\n"
        f"aggregated = aggregate_ratio({engine.expression}, spec, {arguments}{person})\n"
    )
