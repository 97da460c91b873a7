"""Streamlit-side helpers for Strata Lab: UI constants, session state, sidebar, cached data.

Everything numeric lives in :mod:`dpcore`; this package only wires it to widgets.
"""
