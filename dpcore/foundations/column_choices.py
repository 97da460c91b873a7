"""Per-column choices in frozen settings: a tuple of ``(column, value)`` pairs, hashable so that
settings can key caches and compare equal, in the order the columns were first given (a synthetic
column's bucket edges, a sampled column's declared categories). Pure Python."""

from __future__ import annotations

from typing import TypeVar

__all__ = ["choice_of", "with_choice"]

V = TypeVar("V")

ColumnChoices = tuple[tuple[str, V], ...]


def choice_of(choices: ColumnChoices[V], column: str) -> V | None:
    """``column``'s value in ``choices`` (None if it has none)."""
    return dict(choices).get(column)


def with_choice(choices: ColumnChoices[V], column: str, value: V | None) -> ColumnChoices[V]:
    """``choices`` with ``column`` set to ``value`` (removed with None), the others kept in
    their order."""
    pairs = {**dict(choices), column: value}
    return tuple((name, chosen) for name, chosen in pairs.items() if chosen is not None)
