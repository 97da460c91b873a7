"""``strata-lab ledger``: check a ledger's history, and print a dataset's audit trail.

- ``strata-lab ledger verify [FILE] [--ledger PATH]``: without ``FILE``, checks every record of
  the ledger file against its digest chain and names what was edited, deleted or reordered
  (:func:`~dpcore.foundations.ledger.verify_ledger_file`); with ``FILE`` (an audit trail
  downloaded from the Budget page or printed by ``ledger audit``, CSV or JSON), checks the
  trail's own chain (:func:`~dpcore.foundations.ledger.verify_audit`) and, with ``--ledger``,
  compares it field by field with the ledger. Exit status 0 when all is as recorded, 1
  otherwise; each problem is one line.
- ``strata-lab ledger audit``: the trail of a ledger's people (``--ledger-name``), or of the
  people of the data at a path (``--data``, identified by its files' bytes as a release
  identifies it), as CSV or JSON: the Budget page's download.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from dpcore.engines import EngineError, location_identity
from dpcore.foundations.ledger import (
    ChainReport,
    audit_trail,
    compare_with_ledger,
    default_ledger_path,
    list_ledgers,
    to_audit_csv,
    to_audit_json,
    upgrade,
    verify_audit,
    verify_ledger_file,
)
from strata_cli.inputs import CliError

__all__ = ["add_parser", "run_audit", "run_verify"]


def add_parser(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "ledger",
        help="check a ledger's history against its digests, or print a dataset's audit trail",
        description="Check a ledger file, or an audit trail downloaded from it, against its "
        "digest chain; or print the audit trail of a dataset's people.",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    verify = actions.add_parser(
        "verify",
        help="check a ledger file, or an audit trail downloaded from it",
        description="Without FILE, check every record of the ledger file against its digest "
        "chain. With FILE (an audit trail, CSV or JSON), check the trail's chain, and with "
        "--ledger compare it with the ledger field by field. Exit status 1 names each problem.",
    )
    verify.add_argument("file", nargs="?", metavar="FILE", help="an audit trail (CSV or JSON)")
    _ledger_path_argument(verify)
    verify.set_defaults(run=run_verify)
    audit = actions.add_parser(
        "audit",
        help="print the audit trail of a ledger's people, or of the data at a path",
        description="Every start, release, raise and approval of a dataset's people, in order, "
        "with who, when and what it cost, and a digest chain that 'ledger verify' checks.",
    )
    _ledger_path_argument(audit)
    whose = audit.add_mutually_exclusive_group(required=True)
    whose.add_argument("--ledger-name", metavar="NAME", help="the people of this ledger")
    whose.add_argument(
        "--data", metavar="PATH",
        help="the people of the data at PATH (a file, a folder or a glob, identified by its "
        "bytes)",
    )  # fmt: skip
    audit.add_argument("--format", choices=("csv", "json"), default="csv", help="(default csv)")
    audit.set_defaults(run=run_audit)


def _ledger_path_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ledger", metavar="PATH",
        help=f"the ledger file (default: the app's, {default_ledger_path()})",
    )  # fmt: skip


def _ledger_file(args: argparse.Namespace) -> Path:
    path = Path(args.ledger) if args.ledger else default_ledger_path()
    if not path.is_file():
        raise CliError(f"no ledger file at {path}")
    try:
        upgrade(path)  # a file of an older version is migrated first, as the app would
    except sqlite3.DatabaseError as exc:
        raise CliError(f"{path} is not a Strata Lab ledger file ({exc})") from None
    return path


def run_verify(args: argparse.Namespace) -> int:
    if args.file is None:
        path = _ledger_file(args)
        return _report(verify_ledger_file(path), f"the ledger file {path}", "records")
    try:
        text = Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read {args.file}: {exc}") from None
    report = verify_audit(text)
    if args.ledger:
        report = ChainReport(
            report.records, report.head,
            report.problems + compare_with_ledger(text, _ledger_file(args)),
        )  # fmt: skip
    return _report(report, f"the audit trail {args.file}", "entries")


def _report(report: ChainReport, what: str, unit: str) -> int:
    if report.ok:
        print(f"{what}: all {report.records} {unit} are as recorded (last digest {report.head})")
        return 0
    print(f"{what}: {len(report.problems)} problem(s) in {report.records} {unit}:")
    for problem in report.problems:
        print(f"- {problem}")
    return 1


def run_audit(args: argparse.Namespace) -> int:
    path = _ledger_file(args)
    if args.ledger_name is not None:
        names = [summary.name for summary in list_ledgers(path)]
        if args.ledger_name not in names:
            raise CliError(
                f"the ledger file {path} has no ledger named {args.ledger_name!r}; it has: "
                f"{', '.join(map(repr, names)) or 'none'}"
            )
        trail = audit_trail(path, ledger=args.ledger_name)
    else:
        try:
            identity = location_identity(args.data)
        except EngineError as exc:
            raise CliError(str(exc)) from None
        trail = audit_trail(path, identity=identity)
        if not trail.rows:
            print(f"strata-lab: note: no ledger in {path} released on {args.data}", file=sys.stderr)
    sys.stdout.write(to_audit_json(trail) + "\n" if args.format == "json" else to_audit_csv(trail))
    return 0
