"""The ``strata-lab`` command: argument parsing, dispatch to a subcommand, and error reporting.

Each subcommand is a module with ``add_parser(subcommands)``, which sets ``run``, and
``run(args) -> int``, imported only when its command runs; another (``release``, issue 16) is
one more entry in :data:`SUBCOMMANDS`, sharing the data, budget and ledger arguments of
:mod:`strata_cli.inputs`. Every error a user can fix is one line on stderr starting
``strata-lab: error:``, never a traceback: exit status 2 for a malformed command line, 1 for
everything else (a file, a column, settings the library refuses).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn

from strata_cli.words import in_cli_words

__all__ = ["main"]

PROG = "strata-lab"
SUBCOMMANDS = {
    "plan": "the smallest budget that meets a target",
    "frontier": "score every stratification of --by's columns × strategy at one budget",
    "release": "release private means, calibration ratios, GVDP means, synthetic rows or a "
    "private sample through the ledger",
    "ledger": "check a ledger's history against its digests, or print a dataset's audit trail",
}
"""Each subcommand's module (``strata_cli.<name>``) and its line in ``--help``. A module is
imported only when its command runs (or its help is asked for): numpy, pandas, scipy and
dpcore take seconds to import, and ``strata-lab --help`` needs none of them."""


class Parser(argparse.ArgumentParser):
    """argparse with a usage error as one line (no usage block) pointing to the help."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{PROG}: error: {message} (see '{self.prog} --help')\n")


def build_parser(command: str | None = None) -> Parser:
    """The parser with every subcommand, ``command``'s in full (its module imported), the
    others by name and help line."""
    parser = Parser(
        prog=PROG,
        description="Strata Lab on the command line: plan the privacy budget of stratified "
        "means, compare stratifications, release through the ledger, and check the ledger.",
    )
    subcommands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for name, help_line in SUBCOMMANDS.items():
        if name == command:
            importlib.import_module(f"strata_cli.{name}").add_parser(subcommands)
        else:
            subcommands.add_parser(name, help=help_line)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    try:
        args = build_parser(command if command in SUBCOMMANDS else None).parse_args(argv)
    except SystemExit as exit_:  # --help (0) or a usage error (2), already printed
        return int(exit_.code or 0)
    try:
        return args.run(args)
    except Exception as exc:
        from strata_cli.inputs import CliError  # imported with the subcommand already

        if not isinstance(exc, CliError | ValueError | OSError):
            raise
        print(f"{PROG}: error: {in_cli_words(' '.join(str(exc).split()))}", file=sys.stderr)
        return 1
