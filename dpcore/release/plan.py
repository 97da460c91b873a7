"""What every release plan shares: its header, its typed output rows, and the protocol
:func:`~dpcore.release.commit.release` relies on."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Literal, Protocol

import numpy as np
import pandas as pd

from dpcore.foundations.accounting import Budget, check_budget
from dpcore.foundations.dataset import DatasetRef, describe_identity, frame_identity, read_dataset
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.mechanisms import NoiseSource
from dpcore.foundations.shares import PublicShares
from dpcore.foundations.validation import instance_of, open_unit_interval

__all__ = [
    "CoverageNote",
    "DatasetRef",
    "PlanHeader",
    "Progress",
    "ReleaseOutput",
    "ReleasePlan",
    "ReleaseRow",
    "SyntheticRow",
    "frame_identity",
    "init_arguments",
    "read_dataset",
]


def init_arguments(obj: object) -> dict:
    """Constructor arguments of a frozen dataclass, as plain JSON-ready values."""
    return {f.name: _plain(getattr(obj, f.name)) for f in fields(obj) if f.init}


def _plain(value: object) -> object:
    if isinstance(value, tuple | list):
        return tuple(_plain(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True)
class PlanHeader:
    """What every release plan says about itself, whatever it releases.

    Attributes
    ----------
    dataset
        The data the plan was made from (name, identity, rows).
    spec
        How the groups and their public shares are built from that data.
    budget
        The budget the release is planned at (the Budget page's). Each plan states its exact
        cost separately (``plan.cost``), in the accounting of its mechanism.
    label
        A name for the release; part of its identity, so renaming plans a new release. Empty:
        each plan makes one from its statistic and groups (:meth:`named`).
    level
        Confidence level of the release's intervals (unused by releases without intervals).
    """

    dataset: DatasetRef
    spec: GroupingSpec
    budget: Budget
    label: str = ""
    level: float = 0.95

    def __post_init__(self) -> None:
        instance_of("dataset", self.dataset, DatasetRef)
        instance_of("spec", self.spec, GroupingSpec)
        check_budget("budget", self.budget)
        instance_of("label", self.label, str)
        object.__setattr__(self, "level", open_unit_interval("level", self.level))

    @property
    def by(self) -> str:
        """The grouping columns, joined for a sentence (``"race × sex"``)."""
        return " × ".join(self.spec.by)

    def named(self, default: str) -> PlanHeader:
        """This header, with ``default`` as its label when none was given."""
        return self if self.label.strip() else dataclasses.replace(self, label=default)

    def identity(self, *, kind: str, statistic: str) -> dict:
        """The JSON-ready part of a plan's parameters that every plan shares."""
        return {
            "kind": kind,
            "statistic": statistic,
            "label": self.label,
            "dataset": {
                "name": self.dataset.name,
                "identity": self.dataset.identity,
                "rows": self.dataset.rows,
                # Only when not the default, so that every other plan keeps its key.
                **({"decimal": self.dataset.decimal} if self.dataset.decimal != "." else {}),
            },
            "strata": self.spec.to_dict(),
            "budget": {"kind": self.budget.kind, **self.budget.components()},
            "level": self.level,
        }

    def data_line(self) -> str:
        """The review line about the data, with its identity (a curator's view: a hash of the
        confidential rows, shown on screen, never exported)."""
        identity = self.dataset.identity
        kind, _, digest = identity.partition(":")
        named = (
            f"identified by {describe_identity(identity)}: `{kind}:{digest[:12]}…`" if identity
            else "no identity yet: declare one before a release"
        )  # fmt: skip
        return f"**Data:** {self.dataset.name}, {self.dataset.rows:,} rows ({named})"

    def _groups_origin(self) -> Literal["found", "data", "prefilled", "declared"]:
        """Where the list of groups comes from: found privately (noisy counts above a
        threshold), read off the data, a list prefilled from the data, or a declared list."""
        if self.spec.selects:
            return "found"
        if not self.spec.declared:
            return "data"
        return "prefilled" if self.spec.categories_source == "data" else "declared"

    def strata_line(self, k: int, shares: PublicShares | None = None) -> str:
        """The review line about the groups (and where their shares come from)."""
        source = {
            "found": "found privately: noisy counts above a threshold, paid from the budget",
            "data": "from the data, treated as public",
            "prefilled": "a list prefilled from the data, treated as public",
            "declared": "a declared list",
        }[self._groups_origin()]
        line = f"**Strata:** {self.by} — {k} groups ({source})"
        return line if shares is None else f"{line}; shares: {shares.description.lower()}"

    def declared_groups(self) -> list[str]:
        """The list of groups as the release declares it public (none when it is found
        privately), for :meth:`ReleasePlan.declared_public`."""
        origin = self._groups_origin()
        if origin == "found":
            return []
        words = {
            "data": "every combination present in the data",
            "prefilled": "prefilled from the data and accepted as public on screen",
            "declared": "a declared list (a codebook)",
        }[origin]
        return [f"the list of groups of {self.by} ({words})"]

    def declared_shares(self) -> list[str]:
        """The groups' shares as declared public; none when they are the release's own noisy
        counts (DP outputs)."""
        return {
            "data": ["each group's exact share of the rows (the data's own counts)"],
            "table": ["each group's share, from the table of public shares supplied"],
            "holdout": ["each group's share of a public holdout split of the rows"],
            "noisy_counts": [],
        }[self.spec.share_source]

    def exact_shares(self) -> str | None:
        """What group rows publish as their public share when it is read exactly from the data
        (the Strata page's "the data's own group counts, declared public", or a
        holdout split): not differentially private, so said before a commit. None when the
        shares come from a public table or the release's own noisy counts."""
        if self.spec.share_source == "data":
            return "each group's share of the rows, exactly as in the data"
        if self.spec.share_source == "holdout":
            return "each group's share of a holdout split of the rows, exactly as in that split"
        return None

    def script(self, dataset: str = "dataset", prelude: str = "") -> str:
        """Python lines that rebuild this header, as ``header``, from the data a script's
        loader read (a frame named ``frame`` and its :class:`DatasetRef` named ``dataset``,
        identified as the app identified it); or, for data an engine reads, with ``prelude``
        (lines that may use ``spec``) and ``dataset`` (a Python expression of the reference)."""
        spec_arguments = ", ".join(
            f"{f.name}={getattr(self.spec, f.name)!r}" for f in fields(self.spec)
        )
        return (
            "from dpcore import ZCDP, ApproxDP, GroupingSpec, PlanHeader, PureDP\n\n"
            f"spec = GroupingSpec({spec_arguments})\n"
            f"{prelude}"
            "header = PlanHeader(\n"
            f"    dataset={dataset},\n"
            "    spec=spec,\n"
            f"    budget={self.budget!r},\n"
            f"    label={self.label!r},\n"
            f"    level={self.level!r},\n"
            ")\n"
        )


def _finite_or_none(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class ReleaseRow:
    """One released estimate: a group's (``level="group"``) or the population's.

    ``low`` and ``high`` are None where no interval is released; an undefined estimate is None.
    Analyses add their own fields in subclasses (:meth:`extra`). Non-finite numbers become None,
    so every row serialises to JSON.
    """

    level: Literal["group", "population"]
    group: str
    estimate: float | None
    low: float | None = None
    high: float | None = None

    def __post_init__(self) -> None:
        if self.level not in ("group", "population"):
            raise ValueError(f"`level` must be 'group' or 'population', got {self.level!r}")
        for name in ("estimate", "low", "high"):
            object.__setattr__(self, name, _finite_or_none(getattr(self, name)))

    def extra(self) -> dict:
        """The analysis' own columns, after the common ones."""
        return {}

    def to_dict(self) -> dict:
        """The row as stored in the ledger and exported."""
        return {
            "level": self.level,
            "group": self.group,
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            **self.extra(),
        }


@dataclass(frozen=True)
class CoverageNote:
    """Where a release's intervals cover less than their nominal ``level`` (issue 42): the
    estimates concerned (``where``), the coverage measured there for nominal 95% intervals
    (``measured``, e.g. "92–93%"; ``lowest``, its lower end as a number), why, and the
    measurement's source. Said on the Release page, in the release's metadata and in every
    export, beside the level."""

    level: float
    where: str
    measured: str
    lowest: float
    why: str
    source: str = "benchmarks/bench_coverage.py, issue 42"

    def sentence(self) -> str:
        """The whole statement, for the review, the metadata and the exports."""
        return (
            f"Nominal {self.level:.0%}, but {self.where} cover less: about {self.measured} for "
            f"nominal 95% intervals ({self.source}). {self.why}"
        )

    def to_dict(self) -> dict:
        return {"level": self.level, "where": self.where, "measured": self.measured,
                "lowest": self.lowest, "why": self.why, "source": self.source,
                "note": self.sentence()}  # fmt: skip


@dataclass(frozen=True)
class SyntheticRow:
    """One released synthetic record: its value in every released column, as text."""

    values: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, record: Mapping[str, object]) -> SyntheticRow:
        return cls(tuple((str(k), str(v)) for k, v in record.items()))

    def to_dict(self) -> dict:
        return dict(self.values)


ReleaseOutput = ReleaseRow | SyntheticRow

Progress = Callable[[int, int], None]
"""Called with (models fitted, models) while a slow plan runs (MST or AIM synthesis takes
minutes), for a progress bar."""


class ReleasePlan(Protocol):
    """What :func:`~dpcore.release.commit.release` needs from a plan (each analysis' plan).

    ``header`` is the plan's :class:`PlanHeader` (label, level, data, groups, budget);
    ``estimate`` draws the analysis' result with the noise source given and ``rng`` for any
    post-processing randomness, and ``run`` turns it into one typed row per released estimate
    (or synthetic record), calling ``progress`` as its models are fitted if it fits any (a plan
    that is done in a moment never calls it); ``preview`` is the curator's table of what a
    commit would publish per group (:func:`~dpcore.release.preview_frame`: expected error,
    interval half-width, withheld reason), drawn with seeded numpy noise where it simulates;
    ``parameters`` is
    the plan's JSON-ready identity (:meth:`PlanHeader.identity` plus the analysis' own
    ``estimator`` entry); ``script_body`` is Python that rebuilds the plan from a frame named
    ``frame``.
    """

    header: PlanHeader

    @property
    def cost(self) -> Budget: ...

    @property
    def interval_description(self) -> str: ...

    def parameters(self) -> dict: ...

    def review_lines(self) -> list[str]: ...

    def declared_public(self) -> list[str]:
        """Everything the release takes as public rather than protects, each as a phrase (the
        list of groups, bounds, shares or sizes declared public): said before the commit and
        first in every export."""
        ...

    # Plans may also have ``method_sentence()``: their method and its public settings in one sentence
    # for a reader (the HTML report's "Method"), where the recorded settings hold values that
    # do not apply (the mean's γ and R beside public bounds); without it, a report lists the
    # recorded settings.

    # Plans whose group rows publish shares also have ``shares_read_from_data``: what those
    # shares are when read exactly from the data (:meth:`PlanHeader.exact_shares`), else None.
    # Plans whose intervals cover less than their level somewhere also have ``coverage_note``:
    # a :class:`CoverageNote`, or None where the level holds.

    def estimate(self, noise: NoiseSource, rng: np.random.Generator) -> object: ...

    def run(
        self, noise: NoiseSource, rng: np.random.Generator, progress: Progress | None = None
    ) -> Sequence[ReleaseOutput]: ...

    def script_body(self) -> str: ...

    def preview(self) -> pd.DataFrame: ...
