"""What the subcommands share: their arguments, and turning parsed arguments into the library's
objects (the table, its groups, the mean's settings, a budget, a ledger).

Every subcommand that estimates a mean per group of a table (``plan``, ``frontier``, and later
``release``) reads the same data arguments, declared once here as a parent parser; the budget and
ledger arguments likewise. Malformed values (``--bounds x``) are usage errors, status 2; values
that parse but the library refuses (``--bounds 5,1``) raise its ``ValueError``, status 1. Nothing
here computes a number: the library does.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from dpcore.analyses import MEAN
from dpcore.analyses.mean import ESTIMATOR_LABELS, MeanSettings
from dpcore.analyses.mean.strategies import Strategy
from dpcore.foundations.accounting import ZCDP, Budget, PureDP
from dpcore.foundations.errors import BudgetKindError
from dpcore.foundations.grouping import (
    MAX_GROUPS,
    GroupingSpec,
    check_categories,
    codebook_categories,
)
from dpcore.foundations.io import load_table
from dpcore.foundations.ledger import Ledger, list_ledgers
from dpcore.foundations.validation import (
    WHOLE_NUMBER_LIMITS,
    bounds_problem,
    check_bucket_edges,
    positive_int,
)

__all__ = [
    "CliError",
    "bucket_edges",
    "budget_arguments",
    "check_budget_kind",
    "check_coinpress_sizes",
    "coinpress_arguments",
    "column_list",
    "data_arguments",
    "grouping_spec",
    "ledger_arguments",
    "mean_settings",
    "open_ledger",
    "positive_bound",
    "read_data",
    "requested_budget",
]

PLANNED_ESTIMATORS = ("laplace", "gaussian", "coinpress")
"""The means ``strata-lab plan`` and ``frontier`` score."""
ESTIMATOR_BUDGETS = {"laplace": "ε-DP", "gaussian": "ρ-zCDP", "coinpress": "ρ-zCDP, adaptive"}
BUDGET_KINDS = {"pure": "ε-DP", "approx": "(ε, δ)-DP", "zcdp": "ρ-zCDP"}


class CliError(Exception):
    """A problem the user can fix, reported as one line with exit status 1."""


# --------------------------------------------------------------------------------------------
# Argument types: a malformed value is a usage error (status 2)
# --------------------------------------------------------------------------------------------


def column_list(text: str) -> tuple[str, ...]:
    columns = tuple(name.strip() for name in text.split(","))
    if not all(columns):
        raise argparse.ArgumentTypeError(f"expected column names separated by commas, got {text!r}")
    return columns


def bounds(text: str) -> tuple[float, float]:
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected two numbers L,U (the value's public range, e.g. 0,100), got {text!r}"
        ) from None
    problem = bounds_problem(low, high)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return low, high


def whole_number(parameter: str, *, zero: bool = False) -> Callable[[str], int]:
    """An argument type for the library's whole-number ``parameter``: checked against the same
    limits as the Python API (:func:`dpcore.foundations.validation.positive_int`) while the
    command line is read, before any data is; 0 is taken too where it means "none"
    (``zero``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if zero and value == 0:
            return 0
        try:
            return positive_int(parameter, value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc).replace(f"`{parameter}` ", "")) from None

    parse.__name__ = parameter  # argparse names the type in its messages
    return parse


def seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def budget_amount(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number above 0, got {text!r}")
    return value


def bucket_edges(text: str) -> tuple[str, tuple[float, ...]]:
    column, _, edges = text.partition("=")
    try:
        values = tuple(float(edge) for edge in edges.split(";"))
    except ValueError:
        values = ()
    if not column.strip() or not values:
        raise argparse.ArgumentTypeError(
            f"expected COL=E1;E2;... (public bucket edges of a numeric column), got {text!r}"
        )
    try:
        check_bucket_edges(column.strip(), values)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return column.strip(), values


def positive_bound(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(
            f"expected a public upper bound: a finite number above 0, got {text!r}"
        )
    return value


def fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a number strictly between 0 and 1, got {text!r}"
        )
    return value


# --------------------------------------------------------------------------------------------
# Shared arguments
# --------------------------------------------------------------------------------------------


def data_arguments(
    estimators: tuple[str, ...] = PLANNED_ESTIMATORS,
    formats: tuple[str, ...] = ("json", "text"),
    data_help: str = "CSV or Parquet file (.csv, .csv.gz, .parquet)",
    value_required: bool = True,
) -> argparse.ArgumentParser:
    """The parent parser of every subcommand that estimates a mean per group of a table, with
    the ``estimators`` and output ``formats`` it offers; ``value_required=False`` for a
    subcommand that also plans other analyses (which check ``--value`` and ``--bounds``
    themselves)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("data", metavar="DATA", help=data_help)
    data = parent.add_argument_group("data and groups")
    data.add_argument(
        "--decimal-comma",
        action="store_true",
        help="the CSV file's numbers use decimal commas (3,25), its fields ; tab or | between "
        "them (a comma-separated file is refused)",
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
        "(write --bounds=-10,10 when L is negative)",
    )
    data.add_argument(
        "--estimator",
        choices=estimators,
        required=True,
        help=", ".join(f"{name} ({ESTIMATOR_BUDGETS[name]})" for name in estimators),
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


def coinpress_arguments(group) -> None:
    """``--sigma`` and ``--steps``: CoinPress's public spread bound and its number of steps."""
    group.add_argument(
        "--sigma", type=positive_bound, default=15.0, metavar="S",
        help="CoinPress: a public bound on each group's standard deviation (default 15)",
    )  # fmt: skip
    group.add_argument(
        "--steps", type=whole_number("coinpress_steps"), default=3,
        help=f"CoinPress steps, 1 to {WHOLE_NUMBER_LIMITS['steps'][0]} (default 3)",
    )  # fmt: skip


def check_coinpress_sizes(args: argparse.Namespace) -> None:
    """Refuse CoinPress without ``--sizes-public``: it scales its noise and intervals to the
    exact group sizes."""
    if args.estimator == "coinpress" and not args.sizes_public:
        raise CliError(
            "CoinPress scales its noise and intervals to the exact group sizes, so it needs "
            "--sizes-public (the sizes are then treated as public); for private sizes choose "
            "--estimator laplace or gaussian"
        )


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
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    table = load_table(data, Path(path).name, decimal="," if decimal_comma else ".")
    for note in table.notes:
        print(f"strata-lab: note: {note}", file=sys.stderr)
    return table.frame


def mean_settings(
    args: argparse.Namespace,
    frame: pd.DataFrame,
    strategy: Strategy = "stratified",
    global_fraction: float = 0.5,
) -> MeanSettings:
    """The mean's settings from the data arguments (and CoinPress's, where the subcommand has
    them), checked by the library (bounds in order)."""
    low, high = args.bounds
    settings = MeanSettings(
        value=args.value, estimator=args.estimator, clip_low=low, clip_high=high,
        n_public=args.sizes_public, strategy=strategy, global_fraction=global_fraction,
        coinpress_sigma=getattr(args, "sigma", 15.0), coinpress_steps=getattr(args, "steps", 3),
    )  # fmt: skip
    MEAN.check(settings, frame)
    return settings


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


def requested_budget(args: argparse.Namespace) -> Budget:
    return PureDP(args.epsilon) if args.epsilon is not None else ZCDP(args.rho)


def check_budget_kind(settings: MeanSettings, budget: Budget, source: str) -> None:
    """Raise a :class:`CliError` naming ``source`` (an option, a ledger) when the estimator
    cannot run under a budget of ``budget``'s kind (:meth:`MeanAnalysis.native_budget`)."""
    try:
        MEAN.native_budget(settings, budget)
    except BudgetKindError as exc:
        # What the estimator accepts, not what the failed conversion named.
        accepted = ("pure", "zcdp") if settings.estimator == "laplace" else ("zcdp",)
        needs = " or ".join(BUDGET_KINDS[kind] for kind in accepted)
        raise CliError(
            f"the {ESTIMATOR_LABELS[settings.estimator]} cannot run under the "
            f"{BUDGET_KINDS[exc.kind]} budget of {source}; it needs {needs}"
        ) from None


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
    group.add_argument("--seed", type=seed, default=0, help="of the simulated releases (default 0)")
