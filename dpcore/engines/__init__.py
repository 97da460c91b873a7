"""Engines: the one pass over raw rows, on pandas (in memory), DuckDB (files on disk) or Spark.

See :mod:`dpcore.engines.base` for the boundary. Engines run generic queries (sums per cell and
per resample, clipped per row, with the person bound) and know no analysis: each analysis asks
for what it needs in its own ``aggregate`` module. Never imports streamlit or plotly.
"""

from dpcore.engines.base import *
from dpcore.engines.base import __all__ as _base_all
from dpcore.engines.duckdb_engine import DuckDBEngine
from dpcore.engines.pandas_engine import PandasEngine
from dpcore.engines.parts import data_files, location_identity
from dpcore.engines.spark_engine import SparkEngine, spark_session

__all__ = [
    *_base_all, "DuckDBEngine", "PandasEngine", "SparkEngine", "data_files", "location_identity",
    "spark_session",
]  # fmt: skip
