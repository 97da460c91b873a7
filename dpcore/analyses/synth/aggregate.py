"""Synthetic data's counts from an engine's pass: the rows of each combination of values of the
synthesized columns, in each group (issue 16: "marginal counts for synthesis").

Every synthesized column is categorical or bucketed by public edges, so the rows a synthesizer
sees are described exactly by the count of rows in each cell of the joint domain, per group.
The pass (:func:`~dpcore.engines.base.count_query`) labels each row in the engine — a numeric
column by its bucket at the public edges, any other by its value — and counts the rows of each
cell; only the cells come back. Independent marginals, the full histogram and MWEM read the rows
only through their marginal counts (:func:`~dpcore.analyses.synth.synthesize` with
``weights``), so the cells give the release the rows would give, with the same noise at the same
seed. MST and AIM are fitted by OpenDP, which counts rows itself: they are refused
(:data:`~dpcore.analyses.synth.mbi_models.MBI_NEEDS_ROWS`); the counts of 1e8 rows are never
expanded back into rows.

**Category labels.** As in memory: a bucketed column's categories are its bucket labels (public
edges), a grouping column's the declared list when one is declared, and every other column's
are read off the data and treated as public, which the plan and the app say
(:attr:`~dpcore.analyses.synth.SynthPlan.from_data`). A numeric column treated as categories is
labelled as the engines label category codes: a whole number as an integer ("1" for 1.0); a
decimal that is not whole, or more than :data:`~dpcore.foundations.grouping.MAX_CODE_VALUES` distinct
values, is refused (give it edges), where rows in memory would take any values as text.

**Privacy unit.** Each row is one person, as in memory: a release is ε-DP for one row added or
removed, the sensitivity every synthesizer is calibrated to (one row changes one cell of each
marginal by 1). A person column is refused before any pass
(:meth:`~dpcore.analyses.base.Analysis.needs_row_unit`): bounding a person to c rows would
multiply every marginal's sensitivity by c, and MWEM's selection scores, the noisy totals and
OpenDP's measurements would each have to carry that c.

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import pandas as pd

from dpcore.analyses.base import EngineStatistics
from dpcore.analyses.synth.config import (
    PreparedRows,
    SynthConfig,
    all_edges,
    check_columns_chosen,
    check_groups_kept,
    model_columns,
    numeric_needs_edges,
    output_columns,
)
from dpcore.analyses.synth.mbi_models import MBI_METHODS, MBI_NEEDS_ROWS
from dpcore.engines.base import (
    NOT_WHOLE_LABEL,
    Engine,
    EngineError,
    SumsQuery,
    aggregate_cells,
    count_query,
)
from dpcore.foundations.grouping import DROPPED_CODE, MAX_CODE_VALUES, GroupingSpec
from dpcore.foundations.labels import MISSING_LABEL

__all__ = ["aggregate_synth", "synth_query"]

NUMBERS = ("whole number", "decimal number")


def synth_query(spec: GroupingSpec, config: SynthConfig) -> SumsQuery:
    """The pass synthetic data needs: the rows of each cell of the grouping columns and the
    synthesized ones, each numeric column bucketed at its public edges."""
    by = (*spec.by, *model_columns(config, spec.by))
    return count_query(by, tuple(all_edges(config, spec).items()))


def aggregate_synth(
    engine: Engine, spec: GroupingSpec, config: SynthConfig
) -> EngineStatistics[PreparedRows]:
    """The groups of ``spec`` and the rows of every combination of the synthesized columns'
    values in each, from one pass of ``engine`` (module doc), as the
    :class:`~dpcore.analyses.synth.PreparedRows` the synthesizers, plans and Compare page take.

    Raises
    ------
    EngineError
        Before any pass: MST or AIM, a column not in the data, a numeric column without edges
        (not treated as categories); after it, a column with missing values, a numeric column
        treated as categories that holds numbers that are not whole, or data the engine cannot
        read.
    ValueError
        Columns that cannot be synthesized whatever the data, groups the spec cannot build or
        merged into one.
    """
    check_on_engine(config, spec, engine.column_kinds())
    cells, grouping, dataset = aggregate_cells(engine, spec, synth_query(spec, config))
    check_groups_kept(grouping, spec)
    table = cells.table
    output = list(output_columns(config, spec.by))
    keep = (grouping.codes >= 0) & (table["usable"].to_numpy() > 0)
    kept = table.loc[keep, [*output, "usable"]].sort_values(output, ignore_index=True)
    check_labels(kept, config)
    prepared = PreparedRows(
        rows=kept[output], grouping=grouping, config=config,
        n_input=int(table["rows"].sum()),
        n_dropped=int(table.loc[grouping.codes == DROPPED_CODE, "rows"].sum()),
        weights=kept["usable"].to_numpy(float), bucketed=True, engine=engine.name,
        recipe=_recipe(engine, config),
    )  # fmt: skip
    prepared.domain_sizes(config, spec)  # the categories, counted once
    return EngineStatistics(prepared, dataset)


def check_on_engine(config: SynthConfig, spec: GroupingSpec, kinds: dict[str, str]) -> None:
    """Refuse, before any pass, what cannot run on an engine's counts: MST and AIM, columns not
    in the data, a numeric column without edges not treated as categories."""
    if config.method in MBI_METHODS:
        raise EngineError(MBI_NEEDS_ROWS)
    check_columns_chosen(config, spec)
    missing = [c for c in (*output_columns(config, spec.by), *config.categorical)
               if c not in kinds]  # fmt: skip
    if missing:
        raise EngineError(
            f"The data has no column {', '.join(f'`{c}`' for c in missing)} to synthesize; its "
            f"columns are: {', '.join(kinds)}."
        )
    edges = all_edges(config, spec)
    for column in model_columns(config, spec.by):
        if kinds[column] in NUMBERS and column not in edges and column not in config.categorical:
            raise EngineError(numeric_needs_edges(column))


def check_labels(cells: pd.DataFrame, config: SynthConfig) -> None:
    """Refuse missing values (the synthesizers model every row's value, as in memory) and a
    numeric column treated as categories that does not hold category codes: the engines label
    numbers without edges as codes only (the pandas engine refuses other numbers in its pass,
    as it does for a grouping column)."""
    for column in cells.columns.drop("usable"):
        labels = cells[column]
        if (labels == MISSING_LABEL).any():
            raise EngineError(
                f"The column `{column}` has missing values, which the synthesizers cannot "
                "model: give them a category of their own in the data (or leave those rows "
                "out), or synthesize without this column."
            )
        if column not in config.categorical:
            continue
        if (labels == NOT_WHOLE_LABEL).any() or labels.nunique() > MAX_CODE_VALUES:
            raise EngineError(
                f"The column `{column}` is treated as categories but holds numbers that are "
                f"not category codes (whole numbers with at most {MAX_CODE_VALUES} values): "
                f"give it public bucket edges instead (e.g. --synth-edges {column}=25;45;65 on "
                "the command line)."
            )


def _recipe(engine: Engine, config: SynthConfig) -> str:
    """Python that runs the same pass again, for a release's script (``spec`` defined)."""
    return (
        "from dpcore import SynthConfig\n"
        f"from dpcore.engines import {type(engine).__name__}\n"
        "from dpcore.analyses.synth.aggregate import aggregate_synth\n"
        f"aggregated = aggregate_synth({engine.expression}, spec, {config!r})\n"
    )
