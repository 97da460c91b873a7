"""Where ``release`` and ``plan`` read the data: the engine (``--engine``, ``--spark-master``,
``--memory-limit``, ``--dataset-identity``) and the privacy unit (``--person``,
``--max-groups``, ``--max-rows``).

``pandas`` loads one file into memory as the app does; ``duckdb`` streams a file, a glob or a
folder of Parquet or CSV files far larger than memory; ``spark`` reads a table or files in a
Spark cluster. Every engine identifies the data as the app does (the bytes of its files, a
Spark table's snapshot, or what the curator declares), so that a release repeated from here is
the app's. Nothing here computes a number: the engines do.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from dpcore.analyses.command_line import whole_number
from dpcore.engines import DuckDBEngine, Engine, PandasEngine, SparkEngine
from dpcore.engines.duckdb_engine import DEFAULT_MEMORY_LIMIT
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from strata_cli.inputs import CliError, read_identified

__all__ = [
    "ENGINES",
    "DataSource",
    "data_source",
    "engine_arguments",
    "open_engine",
    "privacy_unit",
]

ENGINES = ("pandas", "duckdb", "spark")


@dataclass(frozen=True)
class DataSource:
    """Where a command reads its rows (DATA) and with which engine (None: chosen by
    :func:`open_engine`)."""

    location: str
    engine: str | None = None
    spark_master: str = "local[*]"
    memory_limit: str = DEFAULT_MEMORY_LIMIT
    declared_identity: str | None = None
    """What a Spark table is, for one whose catalog keeps no snapshot (--dataset-identity)."""
    decimal_comma: bool = False
    """Whether a CSV file's numbers are written with decimal commas (--decimal-comma)."""

    @property
    def is_one_file(self) -> bool:
        return Path(self.location).is_file()


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
        "--dataset-identity", metavar="TEXT",
        help="spark: what the table is (e.g. 'survey 2024, extract of 1 March'), for a table "
        "whose catalog keeps no snapshot (a view, a plain table): its identity in the ledger. "
        "Files are identified by their bytes, Delta and Iceberg tables by their snapshot",
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


def data_source(args: argparse.Namespace) -> DataSource:
    """DATA and the engine's options, for a subcommand that has them (``frontier`` reads one
    file into memory and has none)."""
    options = vars(args)
    return DataSource(
        args.data, options.get("engine"), options.get("spark_master", "local[*]"),
        options.get("memory_limit", DEFAULT_MEMORY_LIMIT), options.get("dataset_identity"),
        options.get("decimal_comma", False),
    )  # fmt: skip


def privacy_unit(args: argparse.Namespace) -> PrivacyUnit:
    if args.person is None:
        if (args.max_groups, args.max_rows) != (1, 1):
            raise CliError("--max-groups and --max-rows bound a person's rows: give --person too")
        return ROW
    return PrivacyUnit(args.person, max_groups=args.max_groups, max_rows=args.max_rows)


def open_engine(source: DataSource) -> Engine:
    """The engine asked for; by default Spark for ``spark:TABLE``, pandas for one file under
    200 MB, DuckDB otherwise."""
    path = Path(source.location)
    kind = source.engine
    if kind is None and source.location.startswith("spark:"):
        kind = "spark"
    elif kind is None:
        small_file = path.is_file() and path.stat().st_size < 200 * 2**20
        kind = "pandas" if small_file else "duckdb"
    if source.decimal_comma and kind != "pandas":
        raise CliError(
            f"--decimal-comma is read by the pandas engine only, and this is the {kind} engine, "
            "which reads numbers written with a decimal point: add --engine pandas (one file "
            "read into memory), or write the file's numbers with decimal points"
        )
    declared = source.declared_identity
    if declared is not None and kind != "spark":
        raise CliError(
            "--dataset-identity names a Spark table; the files the other engines read are "
            "identified by their bytes"
        )
    if kind == "pandas":
        if not path.is_file():
            raise CliError(
                f"the pandas engine reads one file, and {source.location} is not one; use "
                "--engine duckdb for a folder or a glob"
            )
        frame, dataset = read_identified(source.location, source.decimal_comma)
        return PandasEngine(frame, path.name, identity=dataset.identity)
    if kind == "spark":
        return SparkEngine(source.location, master=source.spark_master, declared_identity=declared)
    return DuckDBEngine(source.location, memory_limit=source.memory_limit)
