"""The foundations every engine and analysis stands on: privacy accounting and the ledger, noise
mechanisms, reading tables, the groups and their public shares, the privacy unit, validation,
errors, intervals and error metrics. Nothing here knows an engine or an analysis.

Pure Python/numpy/scipy; never imports streamlit or plotly.
"""
