"""The people behind the data: every ledger and dataset joined by releases, and what they lost.

A ledger is bound to the data of its releases; data released under several ledgers binds them
together (an old reset's archive and the ledger it came from, a ledger that took the data on
with a raise). A *population* is such a connected group of ledgers and datasets: the same
people, whose losses add up (sequential composition) whichever ledger charged them.

- Its **loss** is every release's cost, each in its own kind, added up by
  :func:`~dpcore.foundations.accounting.cumulative` (ε adds for pure DP; pure ε counts as
  ρ = ε²/2 beside zCDP; (ε, δ) add; ρ beside (ε, δ) is converted once at δ = 10⁻⁶).
- Its **total** is every amount granted to it, added up the same way: each ledger's starting
  total and every raise of it (a ledger takes on released data only with a recorded raise, so
  nothing is granted unrecorded).

Each ledger still refuses to overspend its own total, so the loss never passes the total.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict, deque
from dataclasses import dataclass

from dpcore.foundations.accounting import (
    Budget,
    budget_from_components,
    cumulative,
    exact_components,
)
from dpcore.foundations.ledger.refusals import LedgerDataset
from dpcore.foundations.ledger.store import decode_budget

__all__ = ["Population", "bound_datasets", "granted_total", "owners_of", "population_of"]


@dataclass(frozen=True)
class Population:
    """Ledgers and datasets about the same people (module doc).

    ``ledgers`` are in the order of their first record, ``datasets`` in the order they were
    first released on; ``granted`` are the starting totals and raises, ``costs`` the releases'
    costs, each in its own kind.
    """

    ledgers: tuple[str, ...]
    datasets: tuple[LedgerDataset, ...]
    granted: tuple[Budget, ...]
    costs: tuple[Budget, ...]

    @property
    def releases(self) -> int:
        return len(self.costs)

    @property
    def loss(self) -> Budget | None:
        """Everything its people have lost, or None before any release."""
        return cumulative(*self.costs) if self.costs else None

    @property
    def total(self) -> Budget | None:
        """Everything granted to its people, or None for a population of no ledger."""
        return cumulative(*self.granted) if self.granted else None

    def figure(self) -> dict | None:
        """The loss as a release records it: the budget's kind and components, the number of
        releases and the ledgers (None before any release). A loss in pure ε also states
        ``as_zcdp``: the sum of each release's ρ = ε²/2, as a zCDP ledger counts it (tighter
        than Σε for many small releases)."""
        loss = self.loss
        if loss is None:
            return None
        figure = {
            "kind": loss.kind, **loss.components(), "releases": self.releases,
            "ledgers": list(self.ledgers),
        }  # fmt: skip
        if loss.kind == "pure":
            figure["as_zcdp"] = float(sum(exact_components(c, "zcdp")["rho"] for c in self.costs))
        return figure


def bound_datasets(conn: sqlite3.Connection, ledger: str) -> list[LedgerDataset]:
    """The datasets ``ledger`` is bound to, in the order it took them on."""
    rows = conn.execute(
        "SELECT dataset, dataset_name, created_at FROM records WHERE id IN (SELECT min(id) "
        "FROM records WHERE ledger = ? AND dataset IS NOT NULL GROUP BY dataset) ORDER BY id",
        (ledger,),
    )
    return [LedgerDataset(*row) for row in rows]


def owners_of(conn: sqlite3.Connection, identity: str) -> list[str]:
    """The ledgers bound to the data ``identity``, the first to release on it first."""
    rows = conn.execute(
        "SELECT ledger FROM records WHERE dataset = ? GROUP BY ledger ORDER BY min(id)",
        (identity,),
    )
    return [ledger for (ledger,) in rows]


def population_of(
    conn: sqlite3.Connection, *, ledger: str | None = None, identity: str | None = None
) -> Population:
    """The population of ``ledger`` or of the data ``identity`` (exactly one of them): every
    ledger and dataset joined to it by the data of releases, raises and approvals."""
    if (ledger is None) == (identity is None):
        raise ValueError("give exactly one of `ledger` and `identity`")
    # Each binding's first record: the ledger, the data, its name then, and when.
    edges = conn.execute(
        "SELECT ledger, dataset, dataset_name, created_at FROM records WHERE id IN (SELECT "
        "min(id) FROM records WHERE dataset IS NOT NULL GROUP BY ledger, dataset) ORDER BY id"
    ).fetchall()
    ledgers_of, datasets_of = defaultdict(list), defaultdict(list)
    for owner, data, _, _ in edges:
        ledgers_of[data].append(owner)
        datasets_of[owner].append(data)
    start = ("ledger", ledger) if ledger is not None else ("dataset", identity)
    seen, queue = {start}, deque([start])
    while queue:
        side, name = queue.popleft()
        neighbours = (
            [("dataset", d) for d in datasets_of[name]] if side == "ledger"
            else [("ledger", owner) for owner in ledgers_of[name]]
        )  # fmt: skip
        for node in neighbours:
            if node not in seen:
                seen.add(node)
                queue.append(node)
    members = {name for side, name in seen if side == "ledger"}
    identities = {name for side, name in seen if side == "dataset"}
    datasets, named = [], set()
    for _, data, data_name, added in edges:
        if data in identities and data not in named:
            named.add(data)
            datasets.append(LedgerDataset(data, data_name, added))
    return _with_budgets(conn, members, tuple(datasets))


def _with_budgets(
    conn: sqlite3.Connection, members: set[str], datasets: tuple[LedgerDataset, ...]
) -> Population:
    if not members:
        return Population((), datasets, (), ())
    marks = ", ".join("?" * len(members))
    rows = conn.execute(
        f"SELECT ledger, entry, kind, cost FROM records WHERE ledger IN ({marks}) "
        "AND entry IN ('start', 'raise', 'release') ORDER BY id",
        tuple(members),
    ).fetchall()
    order = list(dict.fromkeys(owner for owner, *_ in rows))
    order += sorted(members - set(order))  # a ledger of no record (never, after migration)
    granted = tuple(decode_budget(k, c) for _, entry, k, c in rows if entry != "release")
    costs = tuple(decode_budget(k, c) for _, entry, k, c in rows if entry == "release")
    return Population(tuple(order), datasets, granted, costs)


def granted_total(conn: sqlite3.Connection, ledger: str, total: Budget) -> Budget:
    """``ledger``'s starting ``total`` and every raise since, exactly, in its kind."""
    kind = total.kind
    granted = exact_components(total, kind)
    rows = conn.execute(
        "SELECT kind, cost FROM records WHERE ledger = ? AND entry = 'raise' ORDER BY id",
        (ledger,),
    )
    for raised_kind, cost in rows:
        for k, v in exact_components(decode_budget(raised_kind, cost), kind).items():
            granted[k] += v
    return budget_from_components(kind, granted)
