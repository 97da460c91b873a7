"""Which groups a per-group chart draws, and how, as the number of groups grows.

Up to :data:`MAX_SIDE_BY_SIDE` groups stand side by side along a chart's x axis. Past that
their labels overlap, so each group gets a row of its own; and past :data:`MAX_DRAWN` groups a
chart of every group is a grey smear, so it draws three sections instead: the smallest groups
(whose estimates the noise hits hardest), the groups with the largest errors, and the groups a
search matched; a sentence summarises the rest. No streamlit here: the choice is unit-tested on
its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

MAX_SIDE_BY_SIDE = 12
"""Up to this many groups, a chart may draw them side by side along its x axis (their labels,
on three or four short lines, fit a wide page)."""
MAX_DRAWN = 30
"""Up to this many groups, a chart draws every group."""
SMALLEST = 10
"""How many of the smallest groups a chart of many groups draws."""
WORST = 10
"""How many of the groups with the largest errors it draws."""
FOUND = 10
"""How many groups a search adds to it (the smallest that match first)."""


@dataclass(frozen=True)
class Section:
    """Groups drawn together under one title."""

    title: str
    groups: tuple[str, ...]


@dataclass(frozen=True)
class GroupSelection:
    """The sections a per-group chart draws, out of ``total`` groups; ``matches`` is how many
    groups the search matched (the chart draws at most :data:`FOUND` of them)."""

    sections: tuple[Section, ...]
    total: int
    matches: int = 0

    @property
    def complete(self) -> bool:
        """Whether every group is drawn."""
        return len(self.shown) == self.total

    @property
    def shown(self) -> tuple[str, ...]:
        """Every group drawn, once each, in the order of the sections."""
        return tuple(dict.fromkeys(g for section in self.sections for g in section.groups))


def search_terms(text: str) -> list[str]:
    """The words of a search, lower case (``"Female  asian"`` → ``["female", "asian"]``)."""
    return text.lower().split()


def matching(labels: pd.Index, text: str) -> pd.Index:
    """The labels that contain every word of ``text`` (case ignored), in their order."""
    terms = search_terms(text)
    if not terms:
        return labels[:0]
    lower = labels.astype(str).str.lower()
    keep = np.ones(len(labels), dtype=bool)
    for term in terms:
        keep &= np.asarray(lower.str.contains(term, regex=False), dtype=bool)
    return labels[keep]


def select_groups(sizes: pd.Series, errors: pd.Series, search: str = "") -> GroupSelection:
    """The groups a per-group chart draws.

    ``sizes`` and ``errors`` are indexed by group label; ``errors`` ranks the groups (larger is
    worse; each analysis says which error). Up to :data:`MAX_DRAWN` groups, one section holds
    them all, smallest first. Past it: the :data:`SMALLEST` smallest groups, the :data:`WORST`
    with the largest errors (largest first), and the :data:`FOUND` smallest groups whose labels
    contain every word of ``search``. A group may be in two sections (a small group is often
    among the worst too): each section stands on its own under its title. Ties go by label, so
    the choice does not depend on the order of the input.
    """
    by_size = _ranked(sizes, ascending=True)
    total = len(by_size)
    if total <= MAX_DRAWN:
        return GroupSelection((Section(f"All {total:,} groups", tuple(by_size)),), total)
    sections = [
        Section(f"The {SMALLEST} smallest of {total:,} groups", tuple(by_size[:SMALLEST])),
        Section(
            f"The {WORST} groups with the largest errors",
            tuple(_ranked(errors.reindex(by_size), ascending=False)[:WORST]),
        ),
    ]
    found = matching(pd.Index(by_size, dtype=object), search)
    if len(found):
        shown = min(len(found), FOUND)
        title = f"Groups matching “{search.strip()}”" + (
            f": the {shown} smallest of {len(found):,}" if len(found) > FOUND else ""
        )
        sections.append(Section(title, tuple(found[:FOUND])))
    return GroupSelection(tuple(sections), total, len(found))


def select_from_table(table: pd.DataFrame, search: str = "") -> GroupSelection:
    """:func:`select_groups` for a chart's tidy table: one row per series (``strategy``) and
    ``group``, with the group's ``size`` and its ``mean`` error. A group's error is the larger of
    its series' errors, so a group that any approach serves badly ranks among the worst."""
    worst = table.groupby("group", sort=False)["mean"].max()
    sizes = table.drop_duplicates("group").set_index("group")["size"]
    return select_groups(sizes, worst, search)


def _ranked(values: pd.Series, *, ascending: bool) -> list[str]:
    """The labels of ``values`` sorted by value (ties by label; missing values last)."""
    frame = pd.DataFrame({"value": values.to_numpy(), "label": values.index.astype(str)})
    frame = frame.sort_values(
        ["value", "label"], ascending=[ascending, True], na_position="last", kind="stable"
    )
    return frame["label"].tolist()
