"""``strata-lab plan``: the smallest budget at which every published estimate meets an accuracy
target, and what a ledger's remaining budget would give instead (issue 17, item 4).

Every number comes from the library, through the analysis ``--analysis`` names (found through
the registry): its error model (:meth:`~dpcore.analyses.base.Analysis.error_model`; a simulated
one says on stderr how long it will take before it runs, and one too slow to offer is refused
with what to plan instead), the answer and the errors at it from
:func:`dpcore.planner.smallest_budget`, the check from simulated releases
(:meth:`~dpcore.analyses.base.Analysis.check_accuracy`), the shortfall from
:func:`dpcore.planner.shortfall`. An analysis the planner does not cover says so
(:class:`~dpcore.analyses.base.PlannerUnavailable`). A target that needs confidential numbers
(relative, or clipping bias included), confidential group sizes or a model that reads
confidential sums (the ratio's) makes the answer a curator preview; the sizes themselves are
printed only when declared public.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass

from dpcore.foundations.accounting import SYMBOLS, Budget, BudgetExceededError, as_zcdp
from dpcore.foundations.ledger import Ledger
from dpcore.planner import (
    AccuracyTarget,
    BudgetAnswer,
    ErrorModel,
    PlannerCost,
    duration_text,
    shortfall,
    smallest_budget,
)
from strata_cli.inputs import CliError, data_arguments, ledger_arguments, simulation_arguments
from strata_cli.output import emit, records, text_table
from strata_cli.request import (
    CliRequest,
    LedgerChoice,
    analysis_arguments,
    parse_request,
    strategy_arguments,
)
from strata_cli.sources import engine_arguments
from strata_cli.statistics import planned_statistics

__all__ = ["add_parser", "run"]


@dataclass(frozen=True)
class PlanOptions:
    """What ``plan`` asks besides the request: the target, its check and the ledger to compare
    the answer with."""

    target: AccuracyTarget
    check_replicates: int
    seed: int
    ledger: LedgerChoice


def add_parser(subcommands: argparse._SubParsersAction) -> None:
    parser = subcommands.add_parser(
        "plan", parents=[data_arguments(value_required=False)],
        help="the smallest budget that meets a target",
        description="Print the smallest privacy budget at which every published estimate "
        "meets an accuracy target, checked by simulated releases.",
    )  # fmt: skip
    target = parser.add_argument_group("target")
    amount = target.add_mutually_exclusive_group(required=True)
    amount.add_argument(
        "--target-abs",
        type=float,
        metavar="H",
        help="every estimate within ±H, in the value's units (the ratio's for --analysis ratio)",
    )
    amount.add_argument(
        "--target-rel",
        type=float,
        metavar="F",
        help="every estimate within ±F × its true value (a curator preview)",
    )
    target.add_argument("--level", type=float, default=0.95, help="confidence (default 0.95)")
    target.add_argument(
        "--include-bias",
        action="store_true",
        help="count the clipping bias in the error (a curator preview)",
    )
    analysis_arguments(parser)
    engine_arguments(parser)
    strategy_arguments(parser.add_argument_group("release"))
    simulation_arguments(
        parser.add_argument_group("check"), "--check-replicates", 1000,
        "simulated releases that check the answer; 0 skips", zero=True,
    )  # fmt: skip
    ledger_arguments(parser, "compare the answer with what it has left")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    target = AccuracyTarget(
        args.target_abs if args.target_rel is None else args.target_rel,
        relative=args.target_rel is not None, level=args.level, include_bias=args.include_bias,
    )  # fmt: skip
    request = parse_request(args)
    request.analysis.check_planned()
    request.adapter.check_target(target.relative)
    options = PlanOptions(target, args.check_replicates, args.seed, LedgerChoice.of(args))
    return plan(request, options)


def plan(request: CliRequest, options: PlanOptions) -> int:
    """Print the answer (and its check, and the ledger's comparison); status 1 when no budget
    meets the target."""
    analysis, settings = request.analysis, request.settings
    stats = planned_statistics(request)
    kind = request.adapter.budget_kind(settings)
    announce_cost(analysis.planner_cost(stats, settings, max(options.check_replicates, 1),
                                        budget_kind=kind))  # fmt: skip
    model = analysis.error_model(stats, settings, budget_kind=kind)
    answer = smallest_budget(model, options.target)
    document = answer_document(request, model, answer)
    if answer.budget is not None and options.check_replicates:
        document["check"] = simulation_check(request, stats, answer, options)
    if answer.budget is not None and kind == "zcdp" and model.unit == "epsilon":
        # MST and AIM are simulated at ε and run at ρ = ε²/2 (their release's cost).
        document["rho"] = as_zcdp(answer.budget, "The planner").rho
    if answer.budget is not None and options.ledger.path:
        cost = analysis.cost(settings, as_zcdp(answer.budget) if kind == "zcdp" else answer.budget)
        document.update(ledger_comparison(request, options.ledger, cost, model, answer))
    emit(document, request.output_format, render_text)
    if answer.budget is None:
        raise CliError(f"no budget meets the target: {'; '.join(answer.unreachable)}")
    return 0


def announce_cost(cost: PlannerCost) -> None:
    """Say on stderr how long a simulated model will take before it runs (nothing for a model
    with a formula)."""
    if cost.model_seconds > 0:
        print(
            f"strata-lab: simulating {cost.simulation}: {duration_text(cost.model_seconds)}, "
            f"then {duration_text(cost.check_seconds)} for the check of "
            f"{cost.check_releases} (--check-replicates 0 skips it)",
            file=sys.stderr,
        )


def estimate_columns(request: CliRequest, *columns: tuple[str, str]) -> dict[str, str]:
    """The library's table columns to print, renamed: the label, the size only when public."""
    size = {"size": "size"} if request.common.sizes_public else {}
    return {"estimate": "label", **size, **dict(columns)}


def answer_document(request: CliRequest, model: ErrorModel, answer: BudgetAnswer) -> dict:
    target = answer.target
    budget = None if answer.budget is None else answer.budget.components()[model.unit]
    needed = f"needed {SYMBOLS[model.unit]}"
    columns = estimate_columns(
        request, ("target", "target"), (needed, "needed"), ("error at budget", "expected_error")
    )
    release = {"strategy": request.common.strategy} if request.adapter.takes_strategy else {}
    return {
        "analysis": request.analysis.name,
        "estimator": request.common.estimator,
        **release,
        model.unit: budget,
        "binding_group": answer.binding,
        "target": dataclasses.asdict(target) | {"description": model.describe(target)},
        "groups": records(answer.table, columns),
        "unreachable": list(answer.unreachable),
        **split_document(model, answer),
        "notes": list(answer.notes),
        "assumptions": list(model.assumptions),
        "curator_preview": (
            target.relative or target.include_bias or not request.common.sizes_public
            or model.curator_preview
        ),
    }  # fmt: skip


def split_document(model: ErrorModel, answer: BudgetAnswer) -> dict:
    """How the answer's budget splits between the release's mechanisms, when the planner chose
    the split (e.g. finding the bounds, then the means), and the settings that run it."""
    if not answer.parts or answer.budget is None:
        return {}
    value = answer.budget.components()[model.unit]  # ε, or ρ: both add up under composition
    return {
        "split": [
            {"part": what, "share": share, model.unit: value * share}
            for what, share in answer.parts
        ],
        "settings": dict(answer.changes),
    }


def simulation_check(
    request: CliRequest, stats: object, answer: BudgetAnswer, options: PlanOptions
) -> list[dict]:
    """How often simulated releases at the answer (its split of the budget, if the planner
    chose one) meet the target, with the binomial band a calibrated level falls in (the binding
    estimate should sit in it, the others above)."""
    settings = dataclasses.replace(request.settings, **answer.changes)
    table = request.analysis.check_accuracy(
        stats, settings, answer.budget, answer.target,
        replicates=options.check_replicates, rng=options.seed,
    )  # fmt: skip
    columns = {"estimate": "label", "met": "met", "band_low": "band_low", "band_high": "band_high"}
    return records(table, columns)


def ledger_comparison(
    request: CliRequest,
    choice: LedgerChoice,
    cost: Budget,
    model: ErrorModel,
    answer: BudgetAnswer,
) -> dict:
    """What the ledger has left and whether a release at the answer, costing ``cost``, fits in
    it; if not, the shortfall."""
    ledger = choice.open()
    if cost.kind == "zcdp" and ledger.total.kind == "pure":
        raise CliError(
            f"the {request.common.estimator} {request.analysis.name} adds Gaussian noise, "
            f"charged in ρ-zCDP: it cannot run under the ε-DP budget of ledger {ledger.name!r}; "
            "it needs a ρ-zCDP ledger"
        )
    left = ledger.remaining()
    part: dict = {"ledger": {"name": ledger.name, "remaining": left, "affordable": True}}
    try:
        ledger.check_affordable(cost)
    except BudgetExceededError:
        part["ledger"]["affordable"] = False
        part["shortfall"] = shortfall_document(request, model, answer, ledger, left)
    return part


def shortfall_document(
    request: CliRequest,
    model: ErrorModel,
    answer: BudgetAnswer,
    ledger: Ledger,
    left: dict[str, float],
) -> dict:
    """Each estimate's error at what the ledger has ``left`` and the rows that would meet the
    target there, with a sentence saying so."""
    if not all(value > 0 for value in left.values()):
        message = f"The ledger {ledger.name!r} has no budget left: no release can be made from it."
        return {"available": left, "groups": [], "message": message}
    available = type(ledger.total)(**left)
    result = shortfall(model, answer.target, available)
    columns = estimate_columns(
        request, ("target", "target"), ("error at available budget", "error_at_available"),
        ("rows needed", "rows_needed"),
    )  # fmt: skip
    missed = f": {', '.join(result.short)}" if result.short else ""
    rows = (
        f"rows_needed is unknown: {result.rows_reason}" if result.rows_reason
        else "rows_needed is the size each group that misses would need to meet it there "
        "(null for those that meet it)"
    )  # fmt: skip
    message = (
        f"The ledger {ledger.name!r} has {available} left, less than the {answer.budget} this "
        f"target needs. At what is left, {len(result.short)} of {len(model.labels)} estimates "
        f"miss the target{missed}; {rows}."
    )
    return {"available": left, "groups": records(result.table, columns), "message": message}


def render_text(document: dict) -> str:
    unit = "epsilon" if "epsilon" in document else "rho"
    symbol, target = SYMBOLS[unit], document["target"]["description"]
    if document[unit] is None:
        lines = [f"No budget meets the target: {target}."]
    else:
        lines = [f"{symbol} = {document[unit]:.4g} meets the target: {target}."]
        lines.append(f"Binding: {document['binding_group']}.")
        if "split" in document:
            parts = ", ".join(f"{p['share']:.0%} {p['part']} ({symbol} = {p[unit]:.4g})"
                              for p in document["split"])  # fmt: skip
            lines.append(f"Split: {parts}.")
    headers = {"needed": f"needed {symbol}", "expected_error": f"error at {symbol}"}
    lines += ["", text_table(document["groups"], headers)]
    if "check" in document:
        lines += ["", "Check by simulated releases (fraction within the target):"]
        lines.append(text_table(document["check"]))
    shortfall_part = document.get("shortfall")
    if shortfall_part:
        lines += ["", shortfall_part["message"]]
        headers = {"error_at_available": "error at available", "rows_needed": "rows needed"}
        lines += [text_table(shortfall_part["groups"], headers)] if shortfall_part["groups"] else []
    lines += [f"Note: {note}" for note in document["notes"]]
    lines += ["", "Assumptions:", *(f"- {line}" for line in document["assumptions"])]
    if document["curator_preview"]:
        lines.append("Curator preview: this answer uses confidential numbers; do not publish it.")
    return "\n".join(lines)
