"""Engines: the one pass over raw rows, on pandas (in memory), DuckDB (files on disk) or Spark.

See :mod:`dpcore.engines.base` for the boundary. Never imports streamlit or plotly.
"""

from dpcore.analyses.gvdp.aggregate import AggregatedGvdp, aggregate_gvdp
from dpcore.analyses.ratio.aggregate import AggregatedRatio, aggregate_ratio, ratio_query
from dpcore.analyses.synth.aggregate import AggregatedSynth, aggregate_synth, synth_query
from dpcore.engines.base import *
from dpcore.engines.base import __all__ as _base_all
from dpcore.engines.duckdb_engine import DuckDBEngine, data_files
from dpcore.engines.pandas_engine import PandasEngine
from dpcore.engines.spark_engine import SparkEngine, spark_session

__all__ = [
    *_base_all, "AggregatedGvdp", "AggregatedRatio", "AggregatedSynth", "DuckDBEngine",
    "PandasEngine", "SparkEngine", "aggregate_gvdp", "aggregate_ratio", "aggregate_synth",
    "data_files", "ratio_query", "spark_session", "synth_query",
]  # fmt: skip
