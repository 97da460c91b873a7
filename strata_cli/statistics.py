"""The statistics of the data a request names, through the analysis' own methods: from an
engine's passes (a file, a folder of Parquet parts, a Spark table), or from the rows of one
file read into memory where the analysis needs them (:meth:`AnalysisCli.rows_needed`).

Nothing here computes a number: the analysis does (:meth:`Analysis.engine_statistics`,
:meth:`Analysis.statistics`).
"""

from __future__ import annotations

from dpcore.analyses import ANALYSES
from dpcore.analyses.base import EngineStatistics, unit_keyword
from dpcore.analyses.command_line import adapter_of
from dpcore.foundations.validation import column_kind
from dpcore.release import DatasetRef
from strata_cli.inputs import CliError, read_identified
from strata_cli.request import CliRequest
from strata_cli.sources import open_engine

__all__ = ["planned_statistics", "statistics"]


def statistics(request: CliRequest) -> EngineStatistics:
    """The statistics and the data reference a release records: from the engine the request
    asks for, each person's rows bounded as it says, or from one file in memory; a column the
    analysis names but the data lacks is refused before any pass."""
    analysis, settings = request.analysis, request.settings
    reason = request.adapter.rows_needed(settings)
    if reason is not None:
        if request.source.engine not in (None, "pandas") or not request.source.is_one_file:
            raise CliError(reason)
        stats, dataset = rows_in_memory(request)
        return EngineStatistics(stats, dataset)
    engine = open_engine(request.source)
    request.adapter.check_columns(settings, engine.column_kinds())
    return analysis.engine_statistics(
        engine, request.groups, settings, **unit_keyword(analysis, request.unit)
    )


def planned_statistics(request: CliRequest) -> object:
    """The statistics the planner takes: an engine's, for an analysis whose planner takes them
    (:attr:`AnalysisCli.plans_on_engines`) or, for one that also reads one file's rows, where
    there is no one file or the engine's options are given
    (:attr:`AnalysisCli.plans_beyond_one_file`); else those of the rows of one file in memory."""
    if request.adapter.plans_on_engines:
        return statistics(request).stats
    given = [
        option for option, used in (
            ("--engine", request.source.engine is not None),
            ("--person", request.unit.column is not None),
        ) if used
    ]  # fmt: skip
    if request.adapter.plans_beyond_one_file and (given or not request.source.is_one_file):
        return statistics(request).stats
    if given:
        on_engines = [
            a.name for a in ANALYSES
            if adapter_of(a).plans_on_engines or adapter_of(a).plans_beyond_one_file
        ]  # fmt: skip
        raise CliError(
            f"{' and '.join(given)} apply to --analysis {' and '.join(on_engines)} here; the "
            "plans of the other analyses read one file into memory"
        )
    return rows_in_memory(request)[0]


def rows_in_memory(request: CliRequest) -> tuple[object, DatasetRef]:
    """The statistics of the rows of the request's file, read into memory, and the file's
    reference (identified by its bytes, as the app identifies an upload of it)."""
    analysis, settings = request.analysis, request.settings
    frame, dataset = read_identified(request.source.location, request.source.decimal_comma)
    analysis.check(settings, frame)
    request.adapter.check_columns(settings, {str(c): column_kind(frame[c]) for c in frame})
    stats = analysis.statistics(
        frame, request.groups.build(frame), settings, **unit_keyword(analysis, request.unit)
    )
    return stats, dataset
