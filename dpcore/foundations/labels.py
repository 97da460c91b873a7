"""Group labels and the wording of messages about them, shared by grouping and shares."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

LABEL_SEPARATOR = " × "
"""Joins the per-column parts of an intersectional group label, e.g. ``"White × Male"``."""

MISSING_LABEL = "(missing)"
"""Category given to a missing value in a grouping column."""

OTHER_LABEL = "Other (merged)"
"""Label of the group that collects groups smaller than ``min_group_size``."""

MAX_LISTED = 10  # group labels spelled out in one message before "and N more"


class CountedGroups:
    """What a table of groups knows from its ``labels`` and per-group ``sizes`` alone: how
    many groups, and how many values over all of them. Mixed into the frozen dataclasses that
    carry both (:class:`~dpcore.foundations.grouping.Grouping`, the mean's group values and
    sums); their ``sizes`` say what a value is (a row, or a row's weight under a person's
    bound)."""

    labels: Sequence[str]
    sizes: np.ndarray

    @property
    def k(self) -> int:
        """Number of groups."""
        return len(self.labels)

    @property
    def n(self) -> int:
        """Number of values over all groups: the sum of ``sizes``."""
        return int(self.sizes.sum())


def codebook_order(label: str) -> tuple[bool, bool, float, str]:
    """Sort key listing categories as a codebook would: numbers by value (2 before 10), then
    text alphabetically, and :data:`MISSING_LABEL` last."""
    try:
        number = float(label)
    except ValueError:
        number = math.nan
    is_text = math.isnan(number)
    return (label == MISSING_LABEL, is_text, 0.0 if is_text else number, label)


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``"1 row"``, ``"1,234 rows"``."""
    word = singular if count == 1 else (plural_form or singular + "s")
    return f"{count:,} {word}"


def list_labels(labels: Sequence[str]) -> str:
    """Quoted labels, the first :data:`MAX_LISTED` of them, then "and N more"."""
    shown = ", ".join(f"“{lab}”" for lab in labels[:MAX_LISTED])
    rest = len(labels) - MAX_LISTED
    return shown + (f" and {rest:,} more" if rest > 0 else "")


def labels_repr(labels: Sequence[str], shown: int = 5) -> str:
    """The first ``shown`` labels for a ``repr``, with ``...`` when there are more."""
    return f"{list(labels[:shown])!r}{' ...' if len(labels) > shown else ''}"


MAX_DECIMALS = 12
"""Decimals a plain number never exceeds (a budget of 1e-12 still reads as digits)."""


def plain_number(x: float, digits: int = 4) -> str:
    """``x`` to ``digits`` significant digits in plain notation with thousands separators, as
    people write numbers: 31,490.69 → ``31,491``, 5e+03 → ``5,000``, 0.0026 → ``0.0026``;
    never ``e+`` or ``e-`` notation, no trailing zeros."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    decimals = min(max(digits - 1 - math.floor(math.log10(abs(x))), 0), MAX_DECIMALS)
    text = f"{x:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
