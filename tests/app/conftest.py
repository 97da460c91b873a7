"""Fixtures of the app tests: a team installation (tests.app.team)."""

from tests.app.team import team  # noqa: F401
