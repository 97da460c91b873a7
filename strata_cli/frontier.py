"""``strata-lab frontier``: every stratification of the candidate columns × every strategy at one
budget, scored by simulated releases, with the Pareto frontier of population error against the
worst group's error (issue 17, item 4).

The scores are :meth:`MeanAnalysis.frontier`'s, against the confidential truth: the output is
always a curator preview. Every estimator of the mean is scored by simulated releases, CoinPress
(``--estimator coinpress --sizes-public``, at a ``--rho`` budget) included.
"""

from __future__ import annotations

import argparse

from dpcore.analyses import ANALYSES
from dpcore.analyses.command_line import adapter_of
from dpcore.foundations.accounting import format_components
from strata_cli.inputs import budget_arguments, data_arguments, read_data, simulation_arguments
from strata_cli.output import emit, records, text_table
from strata_cli.request import parse_request, requested_budget

__all__ = ["add_parser", "run"]

SCORED = ANALYSES[0]
"""The analysis whose stratifications are scored: the registry's first, the mean per group (the
only one with a frontier so far, :meth:`~dpcore.analyses.base.Analysis.frontier`)."""

CANDIDATE_COLUMNS = (
    "label", "by", "strategy", "groups", "global_error", "worst_group_error", "parity_error",
    "pareto", "skipped",
)  # fmt: skip
TEXT_COLUMNS = ("label", "groups", "global_error", "worst_group_error", "parity_error", "pareto")


def add_parser(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "frontier", parents=[data_arguments()],
        help="score every stratification of --by's columns × strategy at one budget",
        description="Score every non-empty subset of the --by columns as a stratification, with "
        "each strategy, by simulated releases at one budget, and mark the Pareto frontier of "
        "population error against worst-group error. A curator preview.",
    )  # fmt: skip
    budget_arguments(parser)
    adapter_of(SCORED).add_arguments(parser)
    simulation_arguments(
        parser.add_argument_group("simulation"), "--replicates", 200,
        "simulated releases per candidate",
    )  # fmt: skip
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    request = parse_request(args, SCORED)
    budget = requested_budget(args, request)
    frame = read_data(request.source.location, request.source.decimal_comma)
    request.analysis.check(request.settings, frame)
    table = request.analysis.frontier(
        frame, list(request.groups.by), request.settings, budget, request.groups,
        replicates=args.replicates, rng=args.seed,
    )  # fmt: skip
    document = {
        "curator_preview": True,
        "budget": budget.components(),
        "candidates": records(table, {column: column for column in CANDIDATE_COLUMNS}),
    }
    emit(document, request.output_format, render_text)
    return 0


def render_text(document: dict) -> str:
    rows = [{column: row[column] for column in TEXT_COLUMNS} for row in document["candidates"]]
    skipped = dict.fromkeys(  # one line per stratification, not per strategy
        f"- {' × '.join(row['by'])}: {row['skipped']}"
        for row in document["candidates"]
        if row["skipped"]
    )
    return "\n".join([
        f"Candidates at {format_components(document['budget'])}, "
        "errors in the value's units (pareto: on the frontier):",
        text_table(rows),
        *(["Skipped:", *skipped] if skipped else []),
        "Curator preview: scored against the confidential data; do not publish it.",
    ])  # fmt: skip
