"""What a command was asked, parsed once: the only place that reads the parsed arguments.

:func:`parse_request` turns them into a frozen :class:`CliRequest`: where the rows are, who one
person is, the groups, the options every analysis shares, the analysis named by ``--analysis``
(found through the registry, :mod:`dpcore.analyses`) with its settings from its command-line
adapter (``dpcore.analyses.<name>.cli``, :mod:`dpcore.analyses.command_line`), and the output
format. Every option is checked here, before any ledger is opened or any row is read. The rest of
the command line takes these typed objects, never the parsed arguments.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from dpcore.analyses import ANALYSES, REGISTRY, Analysis, get
from dpcore.analyses.command_line import (
    STRATEGIES,
    AnalysisCli,
    CommonChoices,
    adapter_of,
    fraction,
    in_sentence,
)
from dpcore.foundations.accounting import ZCDP, Budget, PureDP, exact_components
from dpcore.foundations.errors import BudgetKindError
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.ledger import Ledger
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from strata_cli.inputs import CliError, grouping_spec, open_ledger
from strata_cli.sources import DataSource, data_source, privacy_unit

__all__ = [
    "CliRequest",
    "LedgerChoice",
    "analysis_arguments",
    "check_budget_kind",
    "check_ledger_kind",
    "parse_request",
    "requested_budget",
    "strategy_arguments",
]

BUDGET_KINDS = {"pure": "ε-DP", "approx": "(ε, δ)-DP", "zcdp": "ρ-zCDP"}


@dataclass(frozen=True)
class CliRequest:
    """A command's data, groups, analysis and output, as typed objects."""

    source: DataSource
    unit: PrivacyUnit
    groups: GroupingSpec
    common: CommonChoices
    analysis: Analysis
    adapter: AnalysisCli
    settings: object
    output_format: str


@dataclass(frozen=True)
class LedgerChoice:
    """``--ledger PATH --ledger-name NAME`` (``path`` None: none given)."""

    path: str | None
    name: str

    @classmethod
    def of(cls, args: argparse.Namespace) -> LedgerChoice:
        return cls(args.ledger, args.ledger_name)

    def open(self, default_path: str | None = None) -> Ledger:
        """The existing ledger chosen, at ``default_path`` when no ``--ledger`` was given."""
        return open_ledger(self.path or default_path, self.name)


def analysis_arguments(parser: argparse.ArgumentParser) -> None:
    """``--analysis`` (any registered analysis; the first is the default) and every analysis'
    own options."""
    adapters = [adapter_of(analysis) for analysis in ANALYSES]
    parser.add_argument(
        "--analysis", choices=tuple(REGISTRY), default=ANALYSES[0].name,
        help="what a release publishes per group: "
        + ", or ".join(adapter.described for adapter in adapters),
    )  # fmt: skip
    for adapter in adapters:
        adapter.add_arguments(parser)


def strategy_arguments(group: argparse._ArgumentGroup) -> None:
    """``--strategy`` and ``--global-fraction``: what a release publishes, for the analyses
    that take a strategy."""
    group.add_argument(
        "--strategy", choices=STRATEGIES, default="stratified",
        help="what the release publishes (default stratified)",
    )  # fmt: skip
    group.add_argument(
        "--global-fraction", type=fraction, default=0.5, metavar="F",
        help="the whole population's share of the budget with global_and_groups (default 0.5)",
    )  # fmt: skip


def parse_request(args: argparse.Namespace, analysis: Analysis | None = None) -> CliRequest:
    """The request of ``args``, for ``analysis`` (default: ``--analysis``'s); a subcommand
    without an option (``frontier`` has no ``--strategy`` or ``--person``) gets its default."""
    analysis = get(args.analysis) if analysis is None else analysis
    options = vars(args)
    common = CommonChoices(
        value=args.value, bounds=args.bounds, estimator=args.estimator,
        strategy=options.get("strategy", "stratified"),
        global_fraction=options.get("global_fraction", 0.5), sizes_public=args.sizes_public,
        search_range=options.get("search_range"),
    )  # fmt: skip
    unit = privacy_unit(args) if "person" in options else ROW
    if unit.column is not None and not analysis.honours_person_column:
        raise CliError(row_unit_refusal(analysis))
    adapter = adapter_of(analysis)
    settings = adapter.settings(args, common)
    return CliRequest(
        source=data_source(args), unit=unit, groups=analysis.grouping_for(grouping_spec(args), settings),
        common=common,
        analysis=analysis, adapter=adapter, settings=settings, output_format=args.format,
    )  # fmt: skip


def row_unit_refusal(analysis: Analysis) -> str:
    """Why ``analysis`` refuses ``--person``, and the analyses that take it."""
    bounding = [other.name for other in ANALYSES if other.honours_person_column]
    return (
        f"the {in_sentence(analysis)} counts each row as one person and cannot bound a "
        "person's rows yet; leave out --person (and --max-groups, --max-rows) if each row is "
        f"one person, or choose --analysis {' or '.join(bounding)}, which bound them"
    )


def requested_budget(args: argparse.Namespace, request: CliRequest) -> Budget:
    """``--epsilon E`` or ``--rho R``, refused when the request's analysis cannot run under
    a budget of its kind."""
    budget = PureDP(args.epsilon) if args.epsilon is not None else ZCDP(args.rho)
    check_budget_kind(request, budget, "--epsilon" if args.epsilon is not None else "--rho")
    return budget


def check_budget_kind(request: CliRequest, budget: Budget, source: str) -> None:
    """Raise a :class:`CliError` naming ``source`` (an option, a ledger) when the analysis
    cannot run under a budget of ``budget``'s kind (:meth:`Analysis.native_budget`)."""
    try:
        request.analysis.native_budget(request.settings, budget)
    except BudgetKindError as exc:
        needs = " or ".join(BUDGET_KINDS[kind] for kind in exc.needs)
        raise CliError(
            f"the {exc.mechanism.removeprefix('The ')} cannot run under the "
            f"{BUDGET_KINDS[exc.kind]} budget of {source}; it needs {needs}"
        ) from None


def check_ledger_kind(request: CliRequest, budget: Budget, ledger: Ledger) -> None:
    """Raise a :class:`CliError` when a release at ``budget`` is charged in a kind ``ledger``
    cannot count: Gaussian noise at an ε, run and charged at ρ = ε²/2 (one budget language,
    issue 37), against a ledger of pure ε-DP."""
    cost = request.analysis.cost(request.settings, budget)
    try:
        exact_components(cost, ledger.total.kind)
    except ValueError:
        raise CliError(
            f"the {request.common.estimator} {request.analysis.name} is charged {cost}, and "
            f"ledger {ledger.name!r} counts {BUDGET_KINDS[ledger.total.kind]} only: it needs a "
            f"{BUDGET_KINDS[cost.kind]} ledger"
        ) from None
