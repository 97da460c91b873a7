"""The ``strata-lab`` command: argument parsing, dispatch to a subcommand, and error reporting.

Each subcommand is a module with ``add_parser(subcommands)``, which sets ``run``, and
``run(args) -> int``; another (``release``, issue 16) is one more entry in :data:`SUBCOMMANDS`,
sharing the data, budget and ledger arguments of :mod:`strata_cli.inputs`. Every error a user can
fix is one line on stderr starting ``strata-lab: error:``, never a traceback: exit status 2 for a
malformed command line, 1 for everything else (a file, a column, settings the library refuses).
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from strata_cli import frontier, ledger, plan, release
from strata_cli.inputs import CliError
from strata_cli.words import in_cli_words

__all__ = ["main"]

PROG = "strata-lab"
SUBCOMMANDS = (plan, frontier, release, ledger)


class Parser(argparse.ArgumentParser):
    """argparse with a usage error as one line (no usage block) pointing to the help."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{PROG}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> Parser:
    parser = Parser(
        prog=PROG,
        description="Strata Lab on the command line: plan the privacy budget of stratified "
        "means, compare stratifications, release through the ledger, and check the ledger.",
    )
    subcommands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for subcommand in SUBCOMMANDS:
        subcommand.add_parser(subcommands)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit_:  # --help (0) or a usage error (2), already printed
        return int(exit_.code or 0)
    try:
        return args.run(args)
    except (CliError, ValueError, OSError) as exc:
        print(f"{PROG}: error: {in_cli_words(' '.join(str(exc).split()))}", file=sys.stderr)
        return 1
