"""Hypothesis settings shared by the property tests of pure computations."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# The shared autouse fixture in tests/conftest.py is function-scoped; it only isolates app state
# and does not interact with these pure computations, so Hypothesis may reuse it across examples.
HYPOTHESIS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
