"""One identity for one dataset, whatever reads it: a CSV, the same CSV gzipped, a Parquet file
and a Parquet folder are each identified alike by an upload to the app
(:func:`strata_ui.uploads.handle_upload`), a path opened in the app (DuckDB), the command line's
pandas engine, the DuckDB engine and the Spark engine — and the CSV and its gzip are one
dataset. One Spark session for the module (it takes seconds to start)."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest
import streamlit as st

from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.engines import DuckDBEngine, SparkEngine, spark_session
from dpcore.foundations.grouping import GroupingSpec
from strata_cli.sources import DataSource, open_engine
from strata_ui import engine_sources, roles
from strata_ui.files import FilesSource, files_fingerprint
from strata_ui.state import AppState
from strata_ui.uploads import handle_upload

SPEC = GroupingSpec(by=("region",))


def people(rows: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame(
        {"region": rng.choice(["North", "South"], rows), "hours": rng.normal(38, 12, rows)}
    )


@pytest.fixture(scope="module")
def forms(tmp_path_factory) -> dict:
    """The same people as CSV, gzipped CSV, one Parquet file and a folder of Parquet parts."""
    folder = tmp_path_factory.mktemp("forms")
    frame = people()
    csv = frame.to_csv(index=False).encode()
    (folder / "people.csv").write_bytes(csv)
    (folder / "people.csv.gz").write_bytes(gzip.compress(csv))
    frame.to_parquet(folder / "people.parquet")
    parts = folder / "parts"
    parts.mkdir()
    frame.iloc[:150].to_parquet(parts / "part-0.parquet")
    frame.iloc[150:].to_parquet(parts / "part-1.parquet")
    (parts / "_SUCCESS").write_text("")
    return {
        "csv": folder / "people.csv", "csv.gz": folder / "people.csv.gz",
        "parquet": folder / "people.parquet", "folder": parts,
    }  # fmt: skip


@pytest.fixture(autouse=True)
def fresh_caches():
    """Fresh caches, used by the curator of single-user mode (uploads are a curator's)."""
    st.cache_data.clear()
    st.cache_resource.clear()
    st.session_state.clear()
    roles.set_current_user(roles.single_user())


def uploaded(path) -> str:
    state = AppState()
    assert handle_upload(state, path.read_bytes(), path.name) is None
    return state.dataset_identity


def opened_in_app(path) -> str:
    source = FilesSource(str(path))
    return engine_sources.opened(source, files_fingerprint(str(path))).identity


def cli_engine(path, engine: str):
    return open_engine(DataSource(str(path), engine, "local[2]", "1GB"))


def released_identity(engine) -> str:
    """The identity a release records: what the engine's pass puts in the plan's data."""
    return aggregate_mean(engine, SPEC, "hours", (0.0, 100.0)).dataset.identity


@pytest.mark.parametrize("form", ["csv", "csv.gz", "parquet"])
def test_a_file_is_one_dataset_uploaded_opened_and_read_by_the_command_line(forms, form):
    path = forms[form]
    identity = uploaded(path)
    assert identity.startswith("content:")
    assert opened_in_app(path) == identity
    assert released_identity(cli_engine(path, "pandas")) == identity
    assert released_identity(cli_engine(path, "duckdb")) == identity
    assert released_identity(DuckDBEngine(path)) == identity


def test_a_csv_and_its_gzip_are_one_dataset_a_parquet_file_another(forms):
    assert uploaded(forms["csv"]) == uploaded(forms["csv.gz"]) != uploaded(forms["parquet"])


def test_a_folder_is_one_dataset_opened_in_the_app_and_read_by_duckdb(forms):
    identity = opened_in_app(forms["folder"])
    assert released_identity(DuckDBEngine(forms["folder"])) == identity
    assert released_identity(cli_engine(forms["folder"], None)) == identity
    assert identity != uploaded(forms["parquet"])  # two parts are not one file


@pytest.mark.slow
def test_spark_identifies_each_form_as_the_other_engines_do(forms):
    session = spark_session("local[2]")
    for form in ("csv", "csv.gz", "parquet", "folder"):
        expected = released_identity(DuckDBEngine(forms[form]))
        engine = SparkEngine(str(forms[form]), session=session)
        assert released_identity(engine) == expected, form
