"""Where ``release`` and ``plan`` read the data: the engine (``--engine``, ``--spark-master``,
``--memory-limit``) and the privacy unit (``--person``, ``--max-groups``, ``--max-rows``).

``pandas`` loads one file into memory as the app does; ``duckdb`` streams a file, a glob or a
folder of Parquet or CSV files far larger than memory; ``spark`` reads a table or files in a
Spark cluster. Nothing here computes a number: the engines do.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dpcore.engines import DuckDBEngine, Engine, PandasEngine, SparkEngine
from dpcore.engines.duckdb_engine import DEFAULT_MEMORY_LIMIT
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from strata_cli.inputs import CliError, read_data, whole_number

__all__ = ["ENGINES", "engine_arguments", "open_engine", "privacy_unit"]

ENGINES = ("pandas", "duckdb", "spark")


def engine_arguments(parser: argparse.ArgumentParser) -> None:
    """The engine's and the privacy unit's options."""
    engine = parser.add_argument_group("engine")
    engine.add_argument(
        "--engine",
        choices=ENGINES,
        help="pandas (in memory), duckdb (files on disk, any size) or spark (a cluster); "
        "default: spark for spark:TABLE, pandas for one file under 200 MB, duckdb otherwise",
    )
    engine.add_argument(
        "--spark-master", default="local[*]", metavar="URL",
        help="the Spark master, e.g. spark://host:7077 (default local[*], this machine)",
    )  # fmt: skip
    engine.add_argument(
        "--memory-limit",
        default=DEFAULT_MEMORY_LIMIT,
        metavar="SIZE",
        help=f"DuckDB's (default {DEFAULT_MEMORY_LIMIT})",
    )
    person = parser.add_argument_group("privacy unit")
    person.add_argument(
        "--person", metavar="COL", help="the column that identifies a person (default: a row)"
    )
    person.add_argument(
        "--max-groups", type=whole_number("max_groups_per_person"), default=1, metavar="G",
        help="with --person: a person's rows in at most G groups are kept (default 1)",
    )  # fmt: skip
    person.add_argument(
        "--max-rows", type=whole_number("max_rows_per_person"), default=1, metavar="M",
        help="with --person: at most M rows of a person per group are kept (default 1)",
    )  # fmt: skip


def privacy_unit(args: argparse.Namespace) -> PrivacyUnit:
    if args.person is None:
        if (args.max_groups, args.max_rows) != (1, 1):
            raise CliError("--max-groups and --max-rows bound a person's rows: give --person too")
        return ROW
    return PrivacyUnit(args.person, max_groups=args.max_groups, max_rows=args.max_rows)


def open_engine(args: argparse.Namespace) -> Engine:
    """The engine asked for; by default Spark for ``spark:TABLE``, pandas for one file under
    200 MB, DuckDB otherwise."""
    path = Path(args.data)
    kind = args.engine
    if kind is None and args.data.startswith("spark:"):
        kind = "spark"
    elif kind is None:
        small_file = path.is_file() and path.stat().st_size < 200 * 2**20
        kind = "pandas" if small_file else "duckdb"
    if kind == "pandas":
        if not path.is_file():
            raise CliError(
                f"the pandas engine reads one file, and {args.data} is not one; use "
                "--engine duckdb for a folder or a glob"
            )
        return PandasEngine(read_data(args.data, getattr(args, "decimal_comma", False)), path.name)
    if kind == "spark":
        return SparkEngine(args.data, master=args.spark_master)
    return DuckDBEngine(args.data, memory_limit=args.memory_limit)
