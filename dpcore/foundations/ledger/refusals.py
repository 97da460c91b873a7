"""The data a ledger may charge, and the refusals when it may not: nothing is spent by either.

A ledger is the budget of the people in the data it has released on. A release on other data
asks for a confirmation that it is about the same people (:class:`OtherDatasetError`); a release
on data that another ledger — live or archived — has released on is refused outright
(:class:`ReleasedElsewhereError`): a new ledger, or a reset, is no new budget for the same
people. Only a curator raises their total, with a recorded reason
(:meth:`~dpcore.foundations.ledger.Ledger.take_on`).
"""

from __future__ import annotations

from dataclasses import dataclass

from dpcore.foundations.accounting import Budget

__all__ = ["LedgerDataset", "OtherDatasetError", "ReleasedElsewhereError"]


@dataclass(frozen=True)
class LedgerDataset:
    """A dataset as a ledger knows it: its identity (:mod:`dpcore.foundations.dataset`, kept in
    the ledger only), the name it was released under, and when the ledger took it on (empty for
    a dataset that is only being asked about). ``aliases`` are other identities of the same
    data: the fingerprint an older version gave a frame (``legacy:…``), so that a ledger
    migrated from it knows the data again."""

    identity: str
    name: str
    added_at: str = ""
    aliases: tuple[str, ...] = ()


def _names(datasets: list[LedgerDataset]) -> str:
    return " and ".join(f"“{d.name}”" for d in datasets)


class OtherDatasetError(ValueError):
    """A release on data the ledger does not cover; nothing was spent.

    ``ledger`` is the ledger's name, ``covered`` the datasets it covers (its first release's
    first) and ``dataset`` the name of the release's data. :meth:`advice` words the message for
    the caller's way of confirming (a keyword, a command-line flag, a checkbox).
    """

    def __init__(self, ledger: str, covered: list[LedgerDataset], dataset: str) -> None:
        self.ledger, self.covered, self.dataset = ledger, covered, dataset
        super().__init__(self.advice("pass `allow_other_dataset=True`"))

    def advice(
        self, confirm: str, *, start: str = "start a new ledger for it", refused: bool = True
    ) -> str:
        """The situation and both ways on: ``start`` (a ledger for data about other people)
        and ``confirm`` (charge this one, for data about the same people). ``refused=False``
        words it as a notice before a release rather than a refusal."""
        other = f"“{self.dataset}”"
        same_name = [d for d in self.covered if d.name == self.dataset]
        if any(d.identity.startswith("legacy:") for d in same_name):
            other += (
                ", which an older version of Strata Lab identified otherwise (by its rows, not "
                "its file's bytes): the ledger cannot tell whether it is the same data"
            )
        elif same_name:
            other += " with other contents (its bytes changed)"
        situation = (
            f"ledger “{self.ledger}” is the budget of {_names(self.covered)} (the data of its "
            f"releases so far), and this release is on {other}."
        )
        lead = f"Release refused: {situation} Nothing was spent." if refused else situation
        return (
            f"{lead[0].upper()}{lead[1:]} If the new data is about other people, {start}. If it "
            "is about the same people (a corrected file, another extract of the same survey), "
            f"the releases must share one budget: to charge them to this ledger, {confirm}."
        )


class ReleasedElsewhereError(ValueError):
    """A release on data that other ledgers (live or archived) have released on; nothing was
    spent.

    ``ledger`` is the ledger asked to charge it, ``dataset`` the data's name, ``owners`` the
    ledgers that released on it, and ``loss`` what its people have lost in all (None if only
    spends on no data were charged). :meth:`advice` words the ways on for the caller.
    """

    def __init__(self, ledger: str, dataset: str, owners: list[str], loss: Budget | None) -> None:
        self.ledger, self.dataset, self.owners, self.loss = ledger, dataset, owners, loss
        super().__init__(
            self.advice(
                f"charge ledger “{owners[0]}” instead",
                "a curator raises their total with `Ledger.take_on(dataset, reason=..., "
                "actor=...)`",
            )
        )

    def advice(self, use: str, raise_how: str, *, refused: bool = True) -> str:
        """The situation, then ``use`` (charge the ledger that holds the data) or ``raise_how``
        (a curator raises the people's total, with a reason)."""
        owners = " and ".join(f"“{name}”" for name in self.owners)
        spent = "" if self.loss is None else f" {self.loss} has been spent on them in all."
        situation = (
            f"“{self.dataset}” was released on under ledger {owners}, so the budget of its "
            f"people is there: a new ledger, or a reset, is no new budget for the same people."
            f"{spent}"
        )
        lead = f"Release refused: {situation} Nothing was spent." if refused else situation
        return (
            f"{lead} To release on it, {use}; or, if the people's data owner agreed to a larger "
            f"budget, {raise_how}: the raise and its reason are recorded for good."
        )
