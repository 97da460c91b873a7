"""How the database engines (DuckDB, Spark) join the cell-to-group map of
:meth:`~dpcore.engines.base.Engine.clipped_sums` onto their cells, and fold per-cell totals
back into groups: the same steps whatever runs the pass. Pure pandas/numpy; never imports
streamlit or plotly."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from dpcore.engines.base import GROUP

__all__ = ["add_by_rank", "group_columns", "with_group_bounds"]


def with_group_bounds(cell_groups: pd.DataFrame, low: np.ndarray, high: np.ndarray) -> pd.DataFrame:
    """``cell_groups`` with each cell's clipping bounds ``__low`` and ``__high``: its group's."""
    group = cell_groups[GROUP].to_numpy()
    return cell_groups.assign(__low=low[group].astype(float), __high=high[group].astype(float))


def group_columns(
    labels: pd.DataFrame, cell_groups: pd.DataFrame, by: Iterable[str]
) -> pd.DataFrame:
    """The columns of ``cell_groups`` (keyed by the labels of ``by``) for every cell of
    ``labels``, in its order: :data:`GROUP` −1 for a cell in no group, 0 for its other
    columns."""
    joined = labels.merge(cell_groups, on=list(by), how="left")
    return joined.drop(columns=list(by)).fillna({GROUP: -1}).fillna(0)


def add_by_rank(
    out: np.ndarray,
    group_of_rank: dict[int, int],
    ranks: Iterable[object],
    totals: Iterable[object],
) -> np.ndarray:
    """Add each cell's total (the cell known by its rank) into ``out`` at its group, leaving
    out the cells in no group (−1); ``out``, for chaining."""
    for rank, total in zip(ranks, totals, strict=True):
        if group_of_rank[int(rank)] >= 0:
            out[group_of_rank[int(rank)]] += float(total)
    return out
