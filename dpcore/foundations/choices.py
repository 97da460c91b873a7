"""A setting that takes one of a few named options: the options (a ``Literal`` type, for type
checkers), the label a user reads for each, and the check that refuses any other value, declared
once as a :class:`Choices`. Pure Python.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import get_args

from dpcore.foundations.validation import shown

__all__ = ["Choices", "one_of"]


def one_of(name: str, value: object, options: Mapping[str, str]) -> str:
    """``value`` if it is one of ``options``' keys, else a ``ValueError`` that names them."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(
            f"`{name}` must be one of {', '.join(map(repr, options))}, got {shown(value)}"
        )
    return value


class Choices(Mapping[str, str]):
    """The options of a setting, in order, each mapped to its label.

    ``options`` is the setting's ``Literal`` type and ``labels`` gives a label for each of its
    values, in the same order: a label for an undeclared option, or an option without a label,
    is refused when the module is imported, so the type and the labels cannot drift apart. Reads
    as a read-only ``dict`` of labels (``STRATEGIES["stratified"]``, ``list(STRATEGIES)``);
    :meth:`check` refuses any other value.
    """

    def __init__(self, options: object, labels: Mapping[str, str]) -> None:
        declared = get_args(options)
        if not declared or tuple(labels) != declared:
            raise TypeError(
                f"the labels ({', '.join(map(repr, labels))}) must name the options of "
                f"{options!r}, in order"
            )
        self._labels = dict(labels)

    def check(self, name: str, value: object) -> str:
        """``value`` if it is one of the options, else a ``ValueError`` for setting ``name``."""
        return one_of(name, value, self._labels)

    def __getitem__(self, option: str) -> str:
        return self._labels[option]

    def __iter__(self) -> Iterator[str]:
        return iter(self._labels)

    def __len__(self) -> int:
        return len(self._labels)

    def __repr__(self) -> str:
        return f"Choices({self._labels!r})"
