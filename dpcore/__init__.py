"""Strata Lab numerics: privacy accounting, mechanisms, ledger and estimators.

Pure Python/numpy/scipy; never imports streamlit or plotly (a test asserts it).
"""

__version__ = "0.1.0"
