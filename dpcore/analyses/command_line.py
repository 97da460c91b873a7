"""What every analysis gives the ``strata-lab`` command line, so that the command line never
branches on an analysis' name.

Each analysis ``<name>`` of the registry has a module ``dpcore.analyses.<name>.cli`` whose
``CLI`` is an :class:`AnalysisCli`: it adds the analysis' own options to a parser, turns the
parsed values into the analysis' frozen settings (refusing, with the option to change, what the
analysis cannot take), says in which kind of budget the planner answers, whether the rows must
be read into memory, and which groups a release publishes. The options every analysis shares
(the value column and its bounds, the estimator, the strategy, the group sizes) are declared
once by the command line and handed over as :class:`CommonChoices`.

Pure argparse and dpcore: no front end's module is imported here. A refusal is a
``ValueError`` whose message names the command-line options to change.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Generic, Literal, TypeVar, get_args

from dpcore.analyses.base import Analysis
from dpcore.analyses.mean.strategies import Strategy
from dpcore.foundations.accounting import Kind
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.private_bounds import BOUNDS_FRACTION
from dpcore.foundations.validation import bounds_problem, check_bucket_edges, positive_int

__all__ = [
    "AutoBounds",
    "NOISY_SHARES",
    "STRATEGIES",
    "AnalysisCli",
    "adapter_of",
    "CommonChoices",
    "Shares",
    "bounds",
    "bucket_edges",
    "column_list",
    "fraction",
    "in_sentence",
    "number_between",
    "positive_bound",
    "recombined_groups",
    "refuse_misplaced",
    "refuse_recombining",
    "whole_number",
]

SettingsT = TypeVar("SettingsT")

STRATEGIES: tuple[str, ...] = get_args(Strategy)
"""What ``--strategy`` offers: per group, for everyone, or both with a split budget."""

NOISY_SHARES = "noisy-counts"
"""The --shares value that takes the shares from the release's own noisy group counts."""


# --------------------------------------------------------------------------------------------
# Argument types: a malformed value is a usage error (status 2)
# --------------------------------------------------------------------------------------------


def column_list(text: str) -> tuple[str, ...]:
    columns = tuple(name.strip() for name in text.split(","))
    if not all(columns):
        raise argparse.ArgumentTypeError(f"expected column names separated by commas, got {text!r}")
    return columns


@dataclass(frozen=True)
class AutoBounds:
    """``--bounds auto`` or ``--bounds auto:F``: the release finds its bounds privately, paying
    the share F of its budget (:mod:`dpcore.foundations.private_bounds`)."""

    fraction: float = BOUNDS_FRACTION


def bounds(text: str) -> tuple[float, float] | AutoBounds:
    if text.strip().lower().startswith("auto"):
        head, _, share = text.strip().partition(":")
        if head.lower() != "auto":
            share = "?"
        try:
            return AutoBounds(fraction(share)) if share else AutoBounds()
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                "expected auto, or auto:F with F the share of the budget that finds the bounds "
                f"(strictly between 0 and 1, e.g. auto:0.2), got {text!r}"
            ) from None
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            "expected two numbers L,U (the value's public range, e.g. 0,100) or auto (found "
            f"privately), got {text!r}"
        ) from None
    problem = bounds_problem(low, high)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return low, high


def whole_number(parameter: str, *, zero: bool = False) -> Callable[[str], int]:
    """An argument type for the library's whole-number ``parameter``: checked against the same
    limits as the Python API (:func:`dpcore.foundations.validation.positive_int`) while the
    command line is read, before any data is; 0 is taken too where it means "none"
    (``zero``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if zero and value == 0:
            return 0
        try:
            return positive_int(parameter, value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc).replace(f"`{parameter}` ", "")) from None

    parse.__name__ = parameter  # argparse names the type in its messages
    return parse


def bucket_edges(text: str) -> tuple[str, tuple[float, ...]]:
    column, _, edges = text.partition("=")
    try:
        values = tuple(float(edge) for edge in edges.split(";"))
    except ValueError:
        values = ()
    if not column.strip() or not values:
        raise argparse.ArgumentTypeError(
            f"expected COL=E1;E2;... (public bucket edges of a numeric column), got {text!r}"
        )
    try:
        check_bucket_edges(column.strip(), values)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return column.strip(), values


def number_between(low: float, high: float, expected: str, name: str) -> Callable[[str], float]:
    """An argument type for a number strictly between ``low`` and ``high``; anything else
    (text, nan, a bound itself) is a usage error saying it ``expected`` that. ``name`` is the
    parser's name, which argparse shows in its own messages."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not low < value < high:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    parse.__name__ = name
    return parse


positive_bound = number_between(
    0, float("inf"), "a public upper bound: a finite number above 0", "positive_bound"
)
fraction = number_between(0, 1, "a number strictly between 0 and 1", "fraction")
tail_share = number_between(
    0, 0.5, "a share of the values strictly between 0 and 0.5 (e.g. 0.01)", "tail_share"
)
"""``--bounds-tail``: the share of the values a found bound leaves beyond it."""


# --------------------------------------------------------------------------------------------
# What the command line hands every analysis
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CommonChoices:
    """The options the command line declares once for every analysis: ``--value``,
    ``--bounds`` (a typed range, or :class:`AutoBounds`), ``--search-range``, ``--estimator``,
    ``--strategy``, ``--global-fraction``, ``--sizes-public`` (None where not given; a
    subcommand without ``--strategy`` leaves its default)."""

    value: str | None = None
    bounds: tuple[float, float] | AutoBounds | None = None
    estimator: str | None = None
    strategy: str = "stratified"
    global_fraction: float = 0.5
    sizes_public: bool = False
    search_range: tuple[float, float] | None = None

    def value_and_bounds(
        self, who: str, *, auto: bool = False
    ) -> tuple[str, tuple[float, float] | AutoBounds]:
        """``--value`` and ``--bounds``, which ``who`` (e.g. "the mean") needs; ``--bounds
        auto`` only where ``auto`` (the analysis finds bounds privately), and
        ``--search-range`` only with it."""
        missing = [option for option, given in (("--value", self.value), ("--bounds", self.bounds))
                   if given is None]  # fmt: skip
        if missing:
            raise ValueError(
                f"{who} needs {' and '.join(missing)}: the column to average and its public "
                "range L,U (e.g. --value hours --bounds 0,100), or --bounds auto to find the "
                "range privately where the analysis can"
            )
        found = isinstance(self.bounds, AutoBounds)
        if found and not auto:
            raise ValueError(
                f"{who} needs typed public bounds L,U: --bounds auto (bounds found privately) "
                "is for the mean so far"
            )
        if self.search_range is not None and not found:
            raise ValueError(
                "--search-range is where --bounds auto searches; with typed --bounds L,U "
                "leave it out"
            )
        return self.value, self.bounds

    def require_noise(self, noise: str, adder: str, chosen_by: str, *, because: str = "") -> None:
        """Refuse an ``--estimator`` other than ``noise`` ("laplace" or "gaussian"), the noise
        ``adder`` (e.g. "the general estimator") adds, as ``chosen_by`` (the option that chose
        it) says; ``because`` adds what follows from that noise."""
        if self.estimator != noise:
            raise ValueError(
                f"{adder} adds {noise.capitalize()} noise{because}: pass --estimator {noise} "
                f"with {chosen_by}"
            )

    def refuse_split_strategy(self, works: str) -> None:
        """Refuse ``--strategy global_and_groups`` for an analysis that ``works`` (e.g. "the
        general estimator publishes") per group or for everyone, with the whole budget."""
        if self.strategy == "global_and_groups":
            raise ValueError(
                f"{works} per group (stratified) or for everyone (global_only), not both with a "
                "split budget: choose one --strategy"
            )

    def refuse_value(self, owner: str, instead: str, *, estimator: bool = False) -> None:
        """Refuse ``--value`` and ``--bounds`` (and ``--estimator`` where ``estimator``): an
        analysis that does not average a column says they are for ``owner`` and what it takes
        ``instead`` (:func:`refuse_misplaced`)."""
        used = {"--value": self.value is not None, "--bounds": self.bounds is not None}
        if estimator:
            used["--estimator"] = self.estimator is not None
        refuse_misplaced(used, owner, instead)


@dataclass(frozen=True)
class Shares:
    """What ``--shares`` asks a release to recombine the groups with: the data's own counts
    (``"data"``, the default), a table of public shares, or the release's noisy counts."""

    source: Literal["data", "table", "noisy_counts"] = "data"
    table: tuple[tuple[str, float], ...] = ()

    def apply(self, spec: GroupingSpec) -> GroupingSpec:
        """``spec`` recombined with these shares."""
        if self.source == "data":
            return spec
        return dataclasses.replace(spec, share_source=self.source, share_table=self.table)


def refuse_misplaced(used: dict[str, bool], owner: str, instead: str) -> None:
    """Refuse the options of ``used`` that were given (True): they are for ``owner`` (e.g.
    "the mean"); ``instead`` says what this analysis takes."""
    given = [option for option, was_given in used.items() if was_given]
    if given:
        verb = "is" if len(given) == 1 else "are"
        raise ValueError(f"{' and '.join(given)} {verb} for {owner}; {instead}")


def refuse_recombining(shares: Shares, common: CommonChoices, owner: str, instead: str) -> None:
    """Refuse ``--shares`` and ``--strategy`` for an analysis that publishes its groups without
    recombining them into a population estimate: they are for ``owner``; ``instead`` says what
    it publishes (:func:`refuse_misplaced`)."""
    refuse_misplaced(
        {"--shares": shares.source != "data", "--strategy": common.strategy != "stratified"},
        owner, instead,
    )  # fmt: skip


def recombined_groups(spec: GroupingSpec, shares: Shares, common: CommonChoices) -> GroupingSpec:
    """The groups of a release that recombines its group estimates into a population one, with
    the public shares of ``--shares``; refused before any pass over the data when private sizes
    would be given away: by shares from the data's counts, by groups read off the data, or by
    small groups merged or dropped by their sizes."""
    private = not common.sizes_public and common.strategy != "global_only"
    if shares.source == "noisy_counts" and common.sizes_public:
        raise ValueError(
            f"--shares {NOISY_SHARES} takes the shares from the noisy group counts a release "
            "with private sizes draws; leave out --sizes-public, or pass a shares file"
        )
    if shares.source == "data" and private:
        raise ValueError(
            "the group sizes are private (no --sizes-public), but without --shares the groups "
            "are recombined with the data's own counts, and each published share would give a "
            f"size away; pass public shares with --shares, or --shares {NOISY_SHARES}, or "
            "--sizes-public, or --strategy global_only"
        )
    spec = shares.apply(spec)
    if private:
        _check_private_sizes_stay_private(spec)
    return spec


def _check_private_sizes_stay_private(spec: GroupingSpec) -> None:
    """With private group sizes the groups must be a declared list (``--codebook``) kept
    whatever their sizes (``--small-groups keep``): groups read off the data, or merged by
    their exact sizes, would show the sizes (the library refuses such a plan; this says which
    option fixes it)."""
    gaps = spec.private_sizes_gaps()  # "shares" is refused before, naming --shares
    if "list" in gaps:
        raise ValueError(
            "the group sizes are private (no --sizes-public), but the list of groups would come "
            "from the data: a new category would appear in the release as soon as one person "
            "of it is added; declare each grouping column's categories with --codebook, or "
            "pass --sizes-public"
        )
    if "keep" in gaps:
        raise ValueError(
            "the group sizes are private (no --sizes-public), but --small-groups "
            f"{spec.small_groups} would decide from their exact sizes which groups to "
            f"{spec.small_groups}; pass --small-groups keep, --shares noisy-counts (the "
            "release's own noisy counts then decide), or --sizes-public"
        )


# --------------------------------------------------------------------------------------------
# The interface
# --------------------------------------------------------------------------------------------


class AnalysisCli(ABC, Generic[SettingsT]):
    """One analysis on the command line (see the module docstring)."""

    analysis: ClassVar[Analysis]
    """The registered analysis these options drive."""
    described: ClassVar[str]
    """What a release of it publishes per group, for the help of ``--analysis``."""
    takes_strategy: ClassVar[bool] = True
    """Whether ``--strategy`` chooses what it publishes (and its plan says which)."""
    plans_on_engines: ClassVar[bool] = False
    """Whether its planner takes the statistics an engine computes (files of any size, a Spark
    table); False when it plans from the rows of one file read into memory."""
    plans_beyond_one_file: ClassVar[bool] = False
    """Whether a planner that reads one file's rows into memory also takes an engine's
    statistics where there is no one file to read (a folder of Parquet parts, a Spark table) or
    ``--engine`` or ``--person`` is given."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add the analysis' own options (none by default)."""

    @abstractmethod
    def settings(self, args: argparse.Namespace, common: CommonChoices) -> SettingsT:
        """The analysis' settings from its own options in ``args`` and the ``common`` ones;
        ``ValueError`` naming the options to change for what it cannot take."""

    def budget_kind(self, settings: SettingsT) -> Kind:
        """The kind of budget the planner's answer is counted in."""
        return "pure"

    def check_target(self, relative: bool) -> None:
        """Refuse a planner's target the analysis cannot measure (``relative``: a share of the
        true value) before any pass over the data."""

    def rows_needed(self, settings: SettingsT) -> str | None:
        """Why these settings need the rows of one file in memory, and what to do instead;
        None when an engine's passes give its statistics."""
        if self.analysis.runs_on_engines:
            return None
        return (
            f"the {in_sentence(self.analysis)} reads the rows themselves into memory: give one "
            "CSV or Parquet file (not a folder, a glob or spark:TABLE), with --engine pandas or "
            "no --engine"
        )

    def check_columns(self, settings: SettingsT, kinds: dict[str, str]) -> None:
        """Refuse, before any pass, settings that name a column the data (whose columns and
        their kinds are ``kinds``) does not have and the analysis would otherwise pass over."""

    def release_groups(
        self, spec: GroupingSpec, shares: Shares, common: CommonChoices
    ) -> GroupingSpec:
        """The groups a release publishes, with the shares it recombines them with; refuses
        the release options the analysis does not take, and group sizes it would give away.
        By default, an analysis that recombines its group estimates with the public shares of
        ``--shares`` (:func:`recombined_groups`)."""
        return recombined_groups(spec, shares, common)


def adapter_of(analysis: Analysis) -> AnalysisCli:
    """The command-line side of ``analysis``: the ``CLI`` of ``dpcore.analyses.<name>.cli``."""
    return importlib.import_module(f"dpcore.analyses.{analysis.name}.cli").CLI


def in_sentence(analysis: Analysis) -> str:
    """The analysis' title inside a sentence (:meth:`Analysis.title_in_sentence`)."""
    return analysis.title_in_sentence()
