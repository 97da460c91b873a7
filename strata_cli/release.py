"""``strata-lab release``: the analysis ``--analysis`` names, found through the registry,
released through the ledger on any engine (issue 16, item 4): a stratified mean, the
calibration ratio per group, the general estimator's mean of ``--value`` with a valid interval
(Covington et al.; its bag of little bootstraps drawn by the engine's passes,
:mod:`dpcore.engines.blb`), synthetic rows, or a few private records of one group.

The data is read by an engine (:mod:`strata_cli.sources`, :mod:`dpcore.engines`): ``pandas``
loads one file into memory as the app does; ``duckdb`` streams a file, a glob or a folder of
Parquet or CSV files far larger than memory; ``spark`` reads a table or files in a Spark
cluster. A person column bounds each person's rows before anything is summed, and the release
then protects one person at the budget given.

A real release draws OpenDP noise and charges the ledger once: a second run of the same plan on
the same data prints the recorded release and spends nothing, whether the first was made here,
in the app or by a release's script (the data is known by its identity, computed from its
content the same way everywhere). ``--dry-run`` draws seeded numpy noise, charges
a throw-away ledger, and says so in its metadata; with ``--ledger`` it also says whether the
real ledger could afford the release. The output is the app's download (:mod:`dpcore.release.exports`):
DP outputs and public metadata only. Synthetic rows and sampled records come as CSV (``--format csv``: every row,
after ``#`` metadata lines), JSON, or a text summary of their first rows.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dpcore.analyses.command_line import NOISY_SHARES, Shares, fraction
from dpcore.foundations.accounting import Budget, BudgetExceededError
from dpcore.foundations.ledger import (
    Ledger,
    LedgerDataset,
    OtherDatasetError,
    ReleasedElsewhereError,
    default_ledger_path,
)
from dpcore.foundations.shares import share_file_rows
from dpcore.release import PlanHeader, ReleasePlan, ReleaseRecord, release
from dpcore.release.exports import public_metadata, to_csv, to_json
from strata_cli.inputs import (
    CliError,
    budget_arguments,
    data_arguments,
    ledger_arguments,
    noise_seed,
)
from strata_cli.output import text_table
from strata_cli.request import (
    CliRequest,
    LedgerChoice,
    analysis_arguments,
    check_budget_kind,
    check_ledger_kind,
    parse_request,
    requested_budget,
    strategy_arguments,
)
from strata_cli.sources import engine_arguments
from strata_cli.statistics import statistics
from strata_cli.words import in_cli_words

__all__ = ["add_parser", "run"]

COVERS_FLAG = "--ledger-covers-new-data"
# The command line opens existing ledgers only; the app's Budget page starts and raises them.
START_ADVICE = "start a ledger for it on the app's Budget page and pass its --ledger-name"
RAISE_ADVICE = (
    "a curator lets a ledger take it on, with a reason, on the app's Budget page (Start a new "
    "ledger, or raise this one's total)"
)


TEXT_ROWS = 20
"""Rows of a release that ``--format text`` shows (synthetic rows run to thousands)."""


@dataclass(frozen=True)
class ReleaseOptions:
    """What ``release`` asks besides the request: the budget, the release's level and title,
    a dry run or the real one, and the ledger it charges."""

    budget: Budget
    level: float
    title: str
    dry_run: bool
    seed: int
    ledger: LedgerChoice
    covers_new_data: bool


def add_parser(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "release",
        parents=[
            data_arguments(
                formats=("json", "csv", "text"), value_required=False,
                data_help="a CSV or Parquet file, a glob (quoted) or a folder of them, or "
                "spark:TABLE for a table of the Spark session's catalog",
            )
        ],
        help="release private means, calibration ratios, GVDP means, synthetic rows or a "
        "private sample through the ledger",
        description="Release the private mean of a column (or, with --analysis ratio, the "
        "calibration ratio Σ score / Σ label, with --analysis gvdp the general estimator's "
        "mean with a valid interval) in every group and for everyone, with --analysis synth "
        "private synthetic rows, or with --analysis sample a few private records of one group, "
        "charging the ledger once. --dry-run draws seeded simulation noise and spends nothing.",
    )  # fmt: skip
    budget_arguments(parser)
    engine_arguments(parser)
    analysis_arguments(parser)
    options = parser.add_argument_group("release")
    strategy_arguments(options)
    options.add_argument(
        "--level", type=fraction, default=0.95, help="of the noise intervals (default 0.95)"
    )
    options.add_argument(
        "--shares", metavar="CSV",
        help="public shares of the groups (columns group,share, e.g. census proportions) "
        f"to recombine them with, or {NOISY_SHARES!r}: the release's own noisy group counts "
        "(private sizes only); default: the data's own group counts, treated as public",
    )  # fmt: skip
    options.add_argument("--title", default="", help="the release's title (default: made up)")
    options.add_argument(
        "--dry-run", action="store_true",
        help="seeded simulation noise; nothing is charged to any ledger",
    )  # fmt: skip
    options.add_argument(
        "--seed", type=noise_seed, default=0, help="of --dry-run's noise (default 0)"
    )
    ledger = ledger_arguments(
        parser, f"the one charged (default: the app's, {default_ledger_path()})"
    )
    ledger.add_argument(
        COVERS_FLAG, action="store_true",
        help="charge the ledger although its releases so far were on other data: confirms "
        "that this data is about the same people (a corrected file, another extract), so both "
        "share one budget. Without it such a release is refused; for data about other people "
        "use another ledger (start one on the app's Budget page, then --ledger-name). The same "
        "file is the same data whichever engine reads it, and however the app read it",
    )  # fmt: skip
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Every option is checked (the analysis' settings, the groups it releases, the budget)
    before the ledger is opened and before the pass over the data."""
    request = parse_request(args)
    groups = request.adapter.release_groups(
        request.groups, requested_shares(args.shares), request.common
    )
    request = dataclasses.replace(request, groups=groups)
    options = ReleaseOptions(
        budget=requested_budget(args, request), level=args.level, title=args.title,
        dry_run=args.dry_run, seed=args.seed, ledger=LedgerChoice.of(args),
        covers_new_data=args.ledger_covers_new_data,
    )  # fmt: skip
    return release_request(request, options)


def release_request(request: CliRequest, options: ReleaseOptions) -> int:
    """The plan of the request's analysis from the engine's passes, released for real (OpenDP
    noise, charged once) or as a dry run, and printed."""
    ledger = None
    if not options.dry_run or options.ledger.path:
        ledger = options.ledger.open(str(default_ledger_path()))
        check_budget_kind(request, ledger.total, f"ledger {ledger.name!r}")
        check_ledger_kind(request, options.budget, ledger)
    aggregated = statistics(request)
    for message in aggregated.stats.messages():
        print(f"strata-lab: note: {in_cli_words(message)}", file=sys.stderr)
    header = PlanHeader(
        dataset=aggregated.dataset, spec=request.groups, budget=options.budget,
        label=options.title, level=options.level,
    )  # fmt: skip
    plan = request.analysis.plan(aggregated.stats, request.settings, header)
    if options.dry_run:
        record = dry_run(plan, ledger, options.seed, options.covers_new_data)
    else:
        record = spend(plan, ledger, options.covers_new_data)
    print(render(record, request.output_format))
    return 0


def requested_shares(option: str | None) -> Shares:
    """What ``--shares`` asks for: nothing (the data's counts), the noisy counts, or a file."""
    if option is None:
        return Shares()
    if option == NOISY_SHARES:
        return Shares("noisy_counts")
    return Shares("table", read_shares(option))


def read_shares(path: str) -> tuple[tuple[str, float], ...]:
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
        return share_file_rows(table)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise CliError(f"cannot read the shares file {path}: {exc}") from None
    except ValueError as exc:
        raise CliError(f"the shares file {path}: {exc}") from None


def spend(plan: ReleasePlan, ledger: Ledger, covers_new_data: bool) -> ReleaseRecord:
    """The release drawn with OpenDP noise and charged once; a repeat prints the record. A
    ledger bound to other data refuses it unless ``covers_new_data`` (nothing is spent)."""
    try:
        record = release(plan, ledger, noise="secure", allow_other_dataset=covers_new_data)
    except OtherDatasetError as exc:
        raise CliError(exc.advice(f"pass {COVERS_FLAG}", start=START_ADVICE)) from None
    except ReleasedElsewhereError as exc:
        raise CliError(exc.advice(elsewhere_use(exc), RAISE_ADVICE)) from None
    if not record.spent:
        print(
            "strata-lab: note: this plan was released before; the recorded release is printed "
            "and nothing was spent",
            file=sys.stderr,
        )
    return record


def dry_run(
    plan: ReleasePlan, ledger: Ledger | None, seed: int, covers_new_data: bool
) -> ReleaseRecord:
    """The release drawn with seeded numpy noise against a throw-away ledger of exactly its
    cost; ``ledger``, if given, is only asked whether it would take the real one."""
    data = plan.header.dataset
    if ledger is not None and data.identity:
        try:
            dataset = LedgerDataset(data.identity, data.name, aliases=data.aliases)
            ledger.check_dataset(dataset, allow_other_dataset=covers_new_data)
            ledger.check_affordable(plan.cost)
        except OtherDatasetError as exc:
            note = exc.advice(f"pass {COVERS_FLAG}", start=START_ADVICE)
            print(f"strata-lab: note: the real release would fail: {in_cli_words(note)}",
                  file=sys.stderr)  # fmt: skip
        except ReleasedElsewhereError as exc:
            note = exc.advice(elsewhere_use(exc), RAISE_ADVICE)
            print(f"strata-lab: note: the real release would fail: {in_cli_words(note)}",
                  file=sys.stderr)  # fmt: skip
        except BudgetExceededError as exc:
            print(f"strata-lab: note: the real release would fail: {in_cli_words(str(exc))}",
                  file=sys.stderr)  # fmt: skip
    if not data.identity:  # a throw-away ledger needs no identity: name the data for it alone
        unnamed = dataclasses.replace(data, identity="declared:dry run")
        plan = dataclasses.replace(plan, header=dataclasses.replace(plan.header, dataset=unnamed))
    with tempfile.TemporaryDirectory(prefix="strata-dry-run-") as folder:
        scratch = Ledger(Path(folder) / "ledger.sqlite", "dry run", plan.cost)
        return release(plan, scratch, noise="simulation", rng=seed)


def elsewhere_use(refusal: ReleasedElsewhereError) -> str:
    """How to charge the ledger that holds the data, in the command line's words."""
    return f"pass --ledger-name {shlex.quote(refusal.owners[0])}"


def render(record: ReleaseRecord, output_format: str) -> str:
    if output_format == "json":
        return to_json(record)
    if output_format == "csv":
        return to_csv(record)
    metadata = public_metadata(record.metadata)
    lines = [metadata["title"], f"Noise: {metadata['noise']}", ""]
    lines.append(text_table(record.outputs[:TEXT_ROWS]))
    if len(record.outputs) > TEXT_ROWS:
        lines.append(
            f"… and {len(record.outputs) - TEXT_ROWS:,} more rows ({len(record.outputs):,} in "
            "all; --format csv or json gives every row)"
        )
    lines += ["", f"Intervals: {metadata['intervals']}"]
    return "\n".join(lines)
