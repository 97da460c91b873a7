"""The command starts fast: its help imports none of the numerics, and each subcommand's
module is imported only when that command runs (its line in the help stays its own)."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

from strata_cli.main import SUBCOMMANDS

HEAVY = ("numpy", "pandas", "scipy", "pyarrow", "duckdb", "pyspark", "dpcore")


def test_the_help_imports_none_of_the_numerics():
    listed = subprocess.run(
        [sys.executable, "-c",
         "import sys\nfrom strata_cli.main import main\nassert main(['--help']) == 0\n"
         f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()[-1]  # fmt: skip
    assert listed == "[]"


def test_each_command_s_help_line_is_the_one_its_module_gives():
    for name, line in SUBCOMMANDS.items():
        subcommands = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"strata_cli.{name}").add_parser(subcommands)
        (choice,) = subcommands._choices_actions
        assert (choice.dest, choice.help) == (name, line)
