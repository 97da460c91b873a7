"""What the subcommands share: their arguments, and turning parsed arguments into the library's
objects (the table, its groups, a ledger).

Every subcommand (``plan``, ``frontier``, ``release``) reads the same data arguments, declared
once here as a parent parser; the budget and ledger arguments likewise. Each analysis' own
options are its command-line adapter's (:mod:`dpcore.analyses.command_line`). Malformed values (``--bounds x``) are usage errors, status 2; values
that parse but the library refuses (``--bounds 5,1``) raise its ``ValueError``, status 1. Nothing
here computes a number: the library does.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

import pandas as pd

from dpcore.analyses.command_line import (
    bounds,
    bucket_edges,
    column_list,
    number_between,
    whole_number,
)
from dpcore.foundations.dataset import DatasetRef
from dpcore.foundations.grouping import (
    MAX_GROUPS,
    GroupingSpec,
    check_categories,
    codebook_categories,
)
from dpcore.foundations.io import load_table
from dpcore.foundations.ledger import Ledger, list_ledgers
from strata_cli.words import in_cli_words

__all__ = [
    "CliError",
    "budget_amount",
    "budget_arguments",
    "data_arguments",
    "grouping_spec",
    "ledger_arguments",
    "open_ledger",
    "read_data",
    "noise_seed",
    "simulation_arguments",
]

ESTIMATORS = ("laplace", "gaussian", "coinpress")
"""The noises ``--estimator`` chooses: the mean's estimators, whose names the other analyses
take for their noise (each says which it runs with)."""
ESTIMATOR_BUDGETS = {"laplace": "ε-DP", "gaussian": "ρ-zCDP", "coinpress": "ρ-zCDP, adaptive"}


class CliError(Exception):
    """A problem the user can fix, reported as one line with exit status 1."""


# --------------------------------------------------------------------------------------------
# Argument types: a malformed value is a usage error (status 2)
# --------------------------------------------------------------------------------------------


def noise_seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


budget_amount = number_between(0, float("inf"), "a finite number above 0", "budget_amount")


# --------------------------------------------------------------------------------------------
# Shared arguments
# --------------------------------------------------------------------------------------------


def data_arguments(
    formats: tuple[str, ...] = ("json", "text"),
    data_help: str = "CSV or Parquet file (.csv, .csv.gz, .parquet)",
    value_required: bool = True,
) -> argparse.ArgumentParser:
    """The parent parser of every subcommand, with the output ``formats`` it offers;
    ``value_required=False`` for a
    subcommand that also plans other analyses (which check ``--value`` and ``--bounds``
    themselves)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("data", metavar="DATA", help=data_help)
    data = parent.add_argument_group("data and groups")
    data.add_argument(
        "--decimal-comma",
        action="store_true",
        help="the CSV file's numbers use decimal commas (3,25), its fields ; tab or | between "
        "them (a comma-separated file is refused); read by the pandas engine only",
    )
    data.add_argument(
        "--by",
        type=column_list,
        required=True,
        metavar="COL[,COL...]",
        help="grouping columns; groups are their intersections",
    )
    data.add_argument(
        "--value", required=value_required, metavar="COL", help="the numeric column to average"
    )
    data.add_argument(
        "--bounds",
        type=bounds,
        required=value_required,
        metavar="L,U",
        help="the value's public range, never read off the data "
        "(write --bounds=-10,10 when L is negative); or auto (auto:F) to find it privately, "
        "paying the share F of the budget (default 0.2; the mean)",
    )
    data.add_argument(
        "--search-range",
        type=bounds,
        metavar="L,U",
        help="with --bounds auto: a public range you know holds every value, where the bounds "
        "are searched (default -1e9,1e9, a coarser search)",
    )
    data.add_argument(
        "--estimator",
        choices=ESTIMATORS,
        help=", ".join(f"{name} ({ESTIMATOR_BUDGETS[name]})" for name in ESTIMATORS)
        + "; the noise of every analysis but the private sample, whose --sampler chooses it",
    )
    data.add_argument(
        "--sizes-public",
        action="store_true",
        help="treat the group sizes as public (otherwise a release keeps them private; the "
        "planner's answer still reveals them, so it is marked a curator preview)",
    )
    data.add_argument(
        "--edges",
        type=bucket_edges,
        action="append",
        default=[],
        metavar="COL=E1;E2;...",
        help="public bucket edges of a numeric grouping column (quote it in a "
        "shell); repeat for each such column",
    )
    data.add_argument(
        "--min-group-size",
        type=whole_number("min_group_size"),
        default=2,
        metavar="N",
        help="smaller groups are merged or dropped (default 2)",
    )
    data.add_argument(
        "--small-groups",
        choices=("merge", "drop", "keep"),
        default="merge",
        help="what to do with groups under --min-group-size (default merge); keep releases "
        "every group whatever its size, as private group sizes require",
    )
    data.add_argument(
        "--codebook",
        metavar="CSV",
        help="the public list of each grouping column's categories (columns column,category; "
        "one row per category): every combination is a group, one with no rows included, and "
        "rows with an undeclared category are left out; default: the categories in the data, "
        "treated as public",
    )
    parent.add_argument(
        "--format",
        choices=formats,
        default="json",
        help=f"{' or '.join(formats)} (default json)",
    )
    return parent


def budget_arguments(parser: argparse.ArgumentParser) -> None:
    """``--epsilon E | --rho R``, exactly one."""
    budget = parser.add_argument_group("budget").add_mutually_exclusive_group(required=True)
    budget.add_argument("--epsilon", type=budget_amount, metavar="E", help="a pure ε-DP budget")
    budget.add_argument("--rho", type=budget_amount, metavar="R", help="a ρ-zCDP budget")


def ledger_arguments(parser: argparse.ArgumentParser, purpose: str) -> argparse._ArgumentGroup:
    """``--ledger PATH --ledger-name NAME``: an existing ledger file and the ledger in it;
    returns their group of the help, for a command's own ledger options."""
    ledger = parser.add_argument_group("ledger")
    ledger.add_argument("--ledger", metavar="PATH", help=f"an existing ledger file: {purpose}")
    ledger.add_argument(
        "--ledger-name",
        default="default",
        metavar="NAME",
        help="which ledger in the file (default 'default')",
    )
    return ledger


# --------------------------------------------------------------------------------------------
# From arguments to the library's objects
# --------------------------------------------------------------------------------------------


def read_data(path: str, decimal_comma: bool = False) -> pd.DataFrame:
    """The table in ``path`` (its numbers written with decimal commas if ``decimal_comma``);
    what reading changed (columns left out or renamed) goes to stderr as notes."""
    return read_identified(path, decimal_comma)[0]


def read_identified(path: str, decimal_comma: bool = False) -> tuple[pd.DataFrame, DatasetRef]:
    """The table in ``path`` (as :func:`read_data`) and its reference, identified by the file's
    bytes as the app identifies an upload of the same file (one read of the file)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    table = load_table(data, Path(path).name, decimal="," if decimal_comma else ".")
    for note in table.notes:
        print(f"strata-lab: note: {in_cli_words(note)}", file=sys.stderr)
    return table.frame, DatasetRef.of(table.frame, Path(path).name, data=data)


def grouping_spec(args: argparse.Namespace) -> GroupingSpec:
    categories = read_codebook(args.codebook) if args.codebook else {}
    ignored = [column for column in categories if column not in args.by]
    if ignored:  # a codebook usually covers the whole dataset, not only the grouping columns
        print(f"strata-lab: note: --codebook: ignored {', '.join(ignored)} (not in --by)",
              file=sys.stderr)  # fmt: skip
    categories = {column: categories[column] for column in args.by if column in categories}
    if args.codebook and not categories:
        raise CliError(f"--codebook {args.codebook}: it lists no category of {', '.join(args.by)}")
    try:
        declared = check_categories(categories, tuple(args.by), dict(args.edges), MAX_GROUPS)
    except (TypeError, ValueError) as exc:
        raise CliError(f"--codebook {args.codebook}: {exc}") from None
    return GroupingSpec(
        by=args.by, edges=tuple(args.edges), min_group_size=args.min_group_size,
        small_groups=args.small_groups, categories=tuple(declared.items()),
    )  # fmt: skip


def read_codebook(path: str) -> dict[str, tuple[str, ...]]:
    """The declared categories of the codebook CSV at ``path`` (:func:`codebook_categories`)."""
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        return codebook_categories(table)
    except (OSError, ValueError) as exc:
        raise CliError(f"cannot read the codebook {path}: {exc}") from None


def open_ledger(path: str, name: str) -> Ledger:
    """The existing ledger ``name`` in the file ``path``, opened without writing to it."""
    if not Path(path).is_file():
        raise CliError(f"no ledger file at {path}")
    try:
        totals = {summary.name: summary.total for summary in list_ledgers(path)}
    except sqlite3.Error as exc:
        raise CliError(f"{path} is not a Strata Lab ledger file ({exc})") from None
    if name not in totals:
        raise CliError(
            f"the ledger file {path} has no ledger named {name!r}; it has: "
            f"{', '.join(map(repr, totals)) or 'none'}"
        )
    return Ledger(path, name, totals[name])


def simulation_arguments(
    group, option: str, default: int, help: str, *, zero: bool = False
) -> None:
    """``option`` (how many simulated releases; 0 for none where ``zero``) and ``--seed`` (of
    their noise)."""
    group.add_argument(
        option, type=whole_number("replicates", zero=zero), default=default, metavar="N",
        help=f"{help} (default {default})",
    )  # fmt: skip
    group.add_argument(
        "--seed", type=noise_seed, default=0, help="of the simulated releases (default 0)"
    )
