"""``strata-lab release``: a stratified mean, with ``--analysis ratio`` the calibration ratio
per group, with ``--analysis gvdp`` the general estimator's mean of ``--value`` with a valid
interval (Covington et al.; its bag of little bootstraps drawn by the engine's passes,
:mod:`dpcore.engines.blb`), or with ``--analysis synth`` synthetic rows, released through the
ledger, on any engine (issue 16, item 4).

The data is read by an engine (:mod:`strata_cli.sources`, :mod:`dpcore.engines`): ``pandas``
loads one file into memory as the app does; ``duckdb`` streams a file, a glob or a folder of
Parquet or CSV files far larger than memory; ``spark`` reads a table or files in a Spark
cluster. A person column bounds each person's rows before anything is summed, and the release
then protects one person at the budget given.

A real release draws OpenDP noise and charges the ledger once (a second run of the same plan
prints the recorded release and spends nothing). ``--dry-run`` draws seeded numpy noise, charges
a throw-away ledger, and says so in its metadata; with ``--ledger`` it also says whether the
real ledger could afford the release. The output is the app's download (:mod:`dpcore.release.exports`):
DP outputs and public metadata only. Synthetic rows come as CSV (``--format csv``: every row,
after ``#`` metadata lines), JSON, or a text summary of their first rows.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import typing
from pathlib import Path

import pandas as pd

from dpcore.analyses import GVDP, MEAN, RATIO, SYNTH
from dpcore.analyses.gvdp import GvdpSettings
from dpcore.analyses.mean import ESTIMATOR_LABELS, MeanSettings
from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.analyses.mean.strategies import Strategy
from dpcore.analyses.ratio import RatioSettings
from dpcore.analyses.synth import SynthPlan, SynthSettings
from dpcore.foundations.accounting import BudgetExceededError
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.ledger import Ledger, LedgerDataset, OtherDatasetError, default_ledger_path
from dpcore.foundations.shares import share_file_rows
from dpcore.release import PlanHeader, ReleaseRecord, release
from dpcore.release.exports import public_metadata, to_csv, to_json
from strata_cli.inputs import (
    CliError,
    budget_arguments,
    check_budget_kind,
    check_coinpress_sizes,
    coinpress_arguments,
    data_arguments,
    fraction,
    grouping_spec,
    ledger_arguments,
    open_ledger,
    requested_budget,
    seed,
)
from strata_cli.output import text_table
from strata_cli.planned import (
    analysis_arguments,
    gvdp_settings,
    ratio_on_engine,
    ratio_settings,
    synth_on_data,
)
from strata_cli.sources import engine_arguments, open_engine, privacy_unit

__all__ = ["add_parser", "run"]

COVERS_FLAG = "--ledger-covers-new-data"
# The command line opens existing ledgers only; the app's Budget page starts them.
START_ADVICE = "start a ledger for it on the app's Budget page and pass its --ledger-name"


TEXT_ROWS = 20
"""Rows of a release that ``--format text`` shows (synthetic rows run to thousands)."""

NOISY_SHARES = "noisy-counts"
"""The --shares value that takes the shares from the release's own noisy group counts."""


def add_parser(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "release",
        parents=[
            data_arguments(
                estimators=tuple(ESTIMATOR_LABELS), formats=("json", "csv", "text"),
                value_required=False,
                data_help="a CSV or Parquet file, a glob (quoted) or a folder of them, or "
                "spark:TABLE for a table of the Spark session's catalog",
            )
        ],
        help="release private means, calibration ratios, GVDP means or synthetic rows through "
        "the ledger",
        description="Release the private mean of a column (or, with --analysis ratio, the "
        "calibration ratio Σ score / Σ label, with --analysis gvdp the general estimator's "
        "mean with a valid interval) in every group and for everyone, or with "
        "--analysis synth private synthetic rows, charging the ledger once. --dry-run draws "
        "seeded simulation noise and spends nothing.",
    )  # fmt: skip
    budget_arguments(parser)
    engine_arguments(parser)
    analysis_arguments(parser, analyses=("mean", "ratio", "gvdp", "synth"))
    options = parser.add_argument_group("release")
    options.add_argument(
        "--strategy", choices=typing.get_args(Strategy), default="stratified",
        help="what the release publishes (default stratified)",
    )  # fmt: skip
    options.add_argument(
        "--global-fraction", type=fraction, default=0.5, metavar="F",
        help="the whole population's share of the budget with global_and_groups (default 0.5)",
    )  # fmt: skip
    coinpress_arguments(options)
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
    options.add_argument("--seed", type=seed, default=0, help="of --dry-run's noise (default 0)")
    ledger = ledger_arguments(
        parser, f"the one charged (default: the app's, {default_ledger_path()})"
    )
    ledger.add_argument(
        COVERS_FLAG, action="store_true",
        help="charge the ledger although its releases so far were on other data: confirms "
        "that this data is about the same people (a corrected file, another extract), so both "
        "share one budget. Without it such a release is refused; for data about other people "
        "use another ledger (start one on the app's Budget page, then --ledger-name). Another "
        "engine, or other columns read, count as other data",
    )  # fmt: skip
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.analysis == "synth":
        plan = synth_plan(args)
    else:
        plan = statistic_plan(args)
    covers = args.ledger_covers_new_data
    ledger = None if args.dry_run and not args.ledger else real_ledger(args)
    if args.dry_run:
        record = dry_run(plan, ledger, args.seed, covers)
    else:
        record = spend(plan, ledger, covers)
    print(render(record, args.format))
    return 0


def statistic_plan(args: argparse.Namespace):
    """The plan of the mean, the ratio or GVDP's mean, from the passes of the engine ``args``
    ask for."""
    ratio, gvdp = args.analysis == "ratio", args.analysis == "gvdp"
    # Every option is checked before the ledger is opened and before the pass over the data.
    choices = ratio_choices if ratio else gvdp_choices if gvdp else mean_choices
    settings, spec = choices(args)
    ledger = None if args.dry_run and not args.ledger else real_ledger(args)
    if ledger is not None and args.analysis == "mean":
        check_budget_kind(settings, ledger.total, f"ledger {ledger.name!r}")
    if ratio:
        analysis, aggregated = RATIO, ratio_on_engine(args, settings)
    elif gvdp:
        analysis, aggregated = GVDP, GVDP.engine_statistics(open_engine(args), spec, settings)
    else:
        unit = privacy_unit(args)
        engine = open_engine(args)
        analysis, aggregated = MEAN, aggregate_mean(engine, spec, args.value, args.bounds, unit)
    for message in aggregated.stats.messages():
        print(f"strata-lab: note: {message}", file=sys.stderr)
    header = PlanHeader(
        dataset=aggregated.dataset, spec=spec, budget=requested_budget(args), label=args.title,
        level=args.level,
    )  # fmt: skip
    return analysis.plan(aggregated.stats, settings, header)


def synth_plan(args: argparse.Namespace) -> SynthPlan:
    """The plan of synthetic rows: options checked before the ledger is opened and before the
    pass that counts each combination of values (:func:`~strata_cli.planned.synth_on_data`)."""
    misplaced = [option for option, used in (
        ("--global-fraction", args.global_fraction != 0.5), ("--shares", args.shares == NOISY_SHARES),
    ) if used]  # fmt: skip
    if misplaced:
        raise CliError(
            f"{' and '.join(misplaced)} {'is' if len(misplaced) == 1 else 'are'} for the mean; "
            "synthetic rows are drawn from one model per group in proportion to fixed public "
            "shares, or from one model for everyone (--strategy global_only)"
        )
    spec = synth_spec(args)
    budget = requested_budget(args)
    SYNTH.native_budget(SynthSettings(method=args.synthesizer), budget)  # before any pass
    if not args.dry_run or args.ledger:
        real_ledger(args)  # a ledger that cannot be opened stops the command before the pass
    settings, stats, dataset = synth_on_data(args, spec)
    for message in stats.messages():
        print(f"strata-lab: note: {message}", file=sys.stderr)
    header = PlanHeader(dataset=dataset, spec=spec, budget=budget, label=args.title)
    return SYNTH.plan(stats, settings, header)


def synth_spec(args: argparse.Namespace) -> GroupingSpec:
    """The groups of synthetic rows, drawn in proportion to public shares: ``--shares`` or,
    declared public by ``--sizes-public``, the data's own group counts; one model for everyone
    (``--strategy global_only``) needs none."""
    spec = grouping_spec(args)
    if args.shares is not None:
        return dataclasses.replace(spec, share_source="table", share_table=read_shares(args.shares))
    if not args.sizes_public and args.strategy == "stratified":
        raise CliError(
            "stratified synthetic rows are drawn in proportion to each group's share, and "
            "without --shares those are the data's own group counts, which would give each "
            "group's size away; pass public shares with --shares, or --sizes-public, or "
            "--strategy global_only (one model for everyone)"
        )
    return spec


def mean_choices(args: argparse.Namespace) -> tuple[MeanSettings, GroupingSpec]:
    """The mean's settings and groups, refused before any pass: options missing or out of
    order, a budget the estimator cannot run under, sizes that would not stay private."""
    missing = [option for option, value in (("--value", args.value), ("--bounds", args.bounds))
               if value is None]  # fmt: skip
    if missing:
        raise CliError(
            f"the mean needs {' and '.join(missing)}: the column to average and its public "
            "range L,U (e.g. --value hours --bounds 0,100)"
        )
    settings = MeanSettings(
        value=args.value, estimator=args.estimator, clip_low=args.bounds[0],
        clip_high=args.bounds[1], n_public=args.sizes_public, coinpress_sigma=args.sigma,
        coinpress_steps=args.steps, strategy=args.strategy, global_fraction=args.global_fraction,
    )  # fmt: skip
    MEAN.estimator(settings)  # refuses bounds out of order
    check_budget_kind(settings, requested_budget(args), budget_option(args))
    privacy_unit(args)
    return settings, release_spec(args)


def ratio_choices(args: argparse.Namespace) -> tuple[RatioSettings, GroupingSpec]:
    """The ratio's settings and groups, refused before any pass: options of the mean, a
    mechanism that cannot run at the budget, groups that would give exact sizes away. The ratio
    publishes noisy sums only, so either the sizes are declared public or the groups are a
    declared list kept whatever their sizes."""
    misplaced = [
        option for option, used in (
            ("--shares", args.shares is not None),
            ("--strategy", args.strategy != "stratified"),
        ) if used
    ]  # fmt: skip
    if misplaced:
        raise CliError(
            f"{' and '.join(misplaced)} {'is' if len(misplaced) == 1 else 'are'} for the mean; "
            "the ratio publishes every group and the all-groups ratio, added up from the noisy "
            "group sums"
        )
    settings = ratio_settings(args)
    RATIO.arguments(settings, requested_budget(args))  # the mechanism runs at this budget
    privacy_unit(args)
    spec = grouping_spec(args)
    gaps = set() if args.sizes_public else set(spec.private_sizes_gaps()) - {"shares"}
    if gaps:
        raise CliError(
            "the group sizes are private (no --sizes-public), but "
            + ("the list of groups would come from the data; declare each grouping column's "
               "categories with --codebook" if "list" in gaps else
               f"--small-groups {spec.small_groups} would decide from their exact sizes which "
               "groups to " + spec.small_groups + "; pass --small-groups keep")
            + ", or pass --sizes-public"
        )  # fmt: skip
    return settings, spec


def gvdp_choices(args: argparse.Namespace) -> tuple[GvdpSettings, GroupingSpec]:
    """The general estimator's mean of ``--value`` (:func:`~strata_cli.planned.gvdp_settings`)
    and its groups, refused before any pass: each row is one person (no ``--person``), and the
    groups' row counts are public (``--sizes-public``), since they set each group's subsets."""
    if args.value is None or args.bounds is None:
        raise CliError(
            "the general estimator needs --value and --bounds: the column to average and its "
            "public range L,U (e.g. --value hours --bounds 0,100)"
        )
    if args.person is not None:
        raise CliError(
            "the general estimator counts each row as one person, so --person cannot be "
            "honoured yet; leave it out if each row is one person, or release the mean"
        )
    if not args.sizes_public and args.strategy != "global_only":
        raise CliError(
            "the general estimator treats each group's row count as public (it sets the "
            "group's subsets, Covington et al. §2.2): pass --sizes-public, or --strategy "
            "global_only"
        )
    settings = gvdp_settings(args, pd.DataFrame())
    return settings, release_spec(args)


def budget_option(args: argparse.Namespace) -> str:
    return "--epsilon" if args.epsilon is not None else "--rho"


def release_spec(args: argparse.Namespace) -> GroupingSpec:
    """The groups, with the public shares of ``--shares``; refused before any pass over the
    data when private sizes would be given away: by shares from the data's counts, by groups
    read off the data, or by small groups merged or dropped by their sizes."""
    spec = grouping_spec(args)
    check_coinpress_sizes(args)
    if args.shares == NOISY_SHARES:
        if args.sizes_public:
            raise CliError(
                f"--shares {NOISY_SHARES} takes the shares from the noisy group counts a release "
                "with private sizes draws; leave out --sizes-public, or pass a shares file"
            )
        spec = dataclasses.replace(spec, share_source="noisy_counts")
        check_private_sizes_stay_private(args, spec)
        return spec
    if args.shares is not None:
        spec = dataclasses.replace(spec, share_source="table", share_table=read_shares(args.shares))
        check_private_sizes_stay_private(args, spec)
        return spec
    if not args.sizes_public and args.strategy != "global_only":
        raise CliError(
            "the group sizes are private (no --sizes-public), but without --shares the groups "
            "are recombined with the data's own counts, and each published share would give a "
            f"size away; pass public shares with --shares, or --shares {NOISY_SHARES}, or "
            "--sizes-public, or "
            "--strategy global_only"
        )
    return spec


def check_private_sizes_stay_private(args: argparse.Namespace, spec: GroupingSpec) -> None:
    """With private group sizes the groups must be a declared list (``--codebook``) kept
    whatever their sizes (``--small-groups keep``): groups read off the data, or merged by
    their exact sizes, would show the sizes (the library refuses such a plan; this says which
    option fixes it)."""
    if args.sizes_public or args.strategy == "global_only":
        return
    gaps = spec.private_sizes_gaps()  # "shares" is refused above, naming --shares
    if "list" in gaps:
        raise CliError(
            "the group sizes are private (no --sizes-public), but the list of groups would come "
            "from the data: a new category would appear in the release as soon as one person "
            "of it is added; declare each grouping column's categories with --codebook, or "
            "pass --sizes-public"
        )
    if "keep" in gaps:
        raise CliError(
            "the group sizes are private (no --sizes-public), but --small-groups "
            f"{spec.small_groups} would decide from their exact sizes which groups to "
            f"{spec.small_groups}; pass --small-groups keep, --shares noisy-counts (the "
            "release's own noisy counts then decide), or --sizes-public"
        )


def read_shares(path: str) -> tuple[tuple[str, float], ...]:
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
        return share_file_rows(table)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise CliError(f"cannot read the shares file {path}: {exc}") from None
    except ValueError as exc:
        raise CliError(f"the shares file {path}: {exc}") from None


def real_ledger(args: argparse.Namespace) -> Ledger:
    """The ledger a real release charges (opened once per command)."""
    if not hasattr(args, "opened_ledger"):
        args.opened_ledger = open_ledger(
            args.ledger or str(default_ledger_path()), args.ledger_name
        )
    return args.opened_ledger


def spend(plan, ledger: Ledger, covers_new_data: bool) -> ReleaseRecord:
    """The release drawn with OpenDP noise and charged once; a repeat prints the record. A
    ledger bound to other data refuses it unless ``covers_new_data`` (nothing is spent)."""
    try:
        record = release(plan, ledger, noise="secure", allow_other_dataset=covers_new_data)
    except OtherDatasetError as exc:
        raise CliError(exc.advice(f"pass {COVERS_FLAG}", start=START_ADVICE)) from None
    if not record.spent:
        print(
            "strata-lab: note: this plan was released before; the recorded release is printed "
            "and nothing was spent",
            file=sys.stderr,
        )
    return record


def dry_run(plan, ledger: Ledger | None, seed: int, covers_new_data: bool) -> ReleaseRecord:
    """The release drawn with seeded numpy noise against a throw-away ledger of exactly its
    cost; ``ledger``, if given, is only asked whether it would take the real one."""
    if ledger is not None:
        try:
            dataset = LedgerDataset(plan.header.dataset.fingerprint, plan.header.dataset.name)
            ledger.check_dataset(dataset, allow_other_dataset=covers_new_data)
            ledger.check_affordable(plan.cost)
        except OtherDatasetError as exc:
            note = exc.advice(f"pass {COVERS_FLAG}", start=START_ADVICE)
            print(f"strata-lab: note: the real release would fail: {note}", file=sys.stderr)
        except BudgetExceededError as exc:
            print(f"strata-lab: note: the real release would fail: {exc}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="strata-dry-run-") as folder:
        scratch = Ledger(Path(folder) / "ledger.sqlite", "dry run", plan.cost)
        return release(plan, scratch, noise="simulation", rng=seed)


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
