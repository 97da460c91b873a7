"""Strata Lab's tests: unit/ mirrors dpcore/ and strata_ui/, app/ drives the pages with AppTest,
e2e/ drives the running app in a browser."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
"""The repository's root (where app.py is)."""
