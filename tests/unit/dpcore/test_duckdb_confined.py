"""DuckDB reads the files it listed and nothing else: not another file of the machine, not an
extension from the network, and its settings cannot be loosened afterwards."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from dpcore.engines import DuckDBEngine


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("confined")
    (folder / "data").mkdir()
    pd.DataFrame({"g": ["a", "b"], "x": [1.0, 2.0]}).to_parquet(folder / "data" / "p.parquet")
    (folder / "secret.csv").write_text("token\nhunter2\n")
    return folder


@pytest.fixture(scope="module")
def engine(folder):
    engine = DuckDBEngine(folder / "data")
    yield engine
    engine.close()


def test_the_listed_files_are_read(engine):
    assert engine.row_count() == 2 and engine.column_kinds() == {"g": "text", "x": "decimal number"}


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM read_csv('{tmp}/secret.csv')",
        "SELECT * FROM glob('{tmp}/*')",
        "ATTACH '{tmp}/other.duckdb'",
        "INSTALL httpfs",
        "SET enable_external_access = true",
        "SET allowed_directories = ['/']",
    ],
)
def test_nothing_else_is_reachable_and_the_settings_are_locked(engine, folder, sql):
    with pytest.raises((duckdb.PermissionException, duckdb.InvalidInputException)):
        engine._con.execute(sql.format(tmp=folder))
