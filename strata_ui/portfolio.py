"""A plan of several releases in the session: the Plan page lists them and splits what the
ledger has left among them (:func:`dpcore.planner.split_budget`); the Release page commits them
one by one at their planned budgets.

The plan is a frozen :class:`PlanOfReleases` kept like any settings (:func:`get_settings`).
Each :class:`PlanEntry` snapshots what a release depends on: its analysis and settings, the
Strata page's choices, the kind of budget and the target. The ledger stays the one record of
what was spent: a committed entry keeps only its ledger key, and the rest is rebalanced against
what the ledger has left now.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
from dataclasses import dataclass, fields
from functools import partial

import streamlit as st

from dpcore.analyses import get
from dpcore.foundations.accounting import SYMBOLS, ZCDP, Budget, PureDP, format_components
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.ledger import Ledger, LedgerUnavailableError
from dpcore.planner import AccuracyTarget, PlannedRelease, PortfolioSplit, split_budget
from strata_ui import constants, pipeline
from strata_ui.analyses import AnalysisUI
from strata_ui.planner import curator_reasons, error_model_for
from strata_ui.state import (
    GROUPING_FIELDS,
    PERSON_FIELDS,
    AppState,
    get_settings,
    get_state,
    open_ledger,
    reset_settings,
    update_settings,
)
from strata_ui.style import plain_number
from strata_ui.text import as_text, as_written
from strata_ui.widgets import show_error, stored_on_change

__all__ = [
    "PlanEntry",
    "PlanOfReleases",
    "add_current",
    "available_budget",
    "current_split",
    "mark_released",
    "matched_entry",
    "planned_budget",
    "render_plan_of_releases",
    "render_release_picker",
    "restore",
]

CHOICE_FIELDS = (*GROUPING_FIELDS, *PERSON_FIELDS, "budget_kind")
"""The session's choices a planned release depends on besides its analysis' settings: its
groups (the Strata page), who is one person (the Data page), and the kind of budget its error
model counts in."""
FLASH = "plan.portfolio.flash"  # shown once, after the rerun that changes the plan


@dataclass(frozen=True)
class PlanEntry:
    """One planned release: a snapshot of the choices it was added with, its target, its lock
    (a budget in its error model's unit, or None) and, once committed, its ledger key and the
    budget it ran at."""

    id: int
    label: str
    analysis: str
    settings: object
    choices: tuple[tuple[str, object], ...]
    spec: GroupingSpec
    dataset_fingerprint: str
    target: AccuracyTarget
    locked: Budget | None = None
    released_key: str | None = None
    released_budget: Budget | None = None

    @property
    def done(self) -> bool:
        return self.released_key is not None

    @property
    def budget_kind(self) -> str:
        return dict(self.choices)["budget_kind"]


@dataclass(frozen=True)
class PlanOfReleases:
    """The session's plan: its releases in the order they were added."""

    entries: tuple[PlanEntry, ...] = ()
    next_id: int = 1


def _choices(state: AppState) -> tuple[tuple[str, object], ...]:
    return tuple((name, copy.deepcopy(getattr(state, name))) for name in CHOICE_FIELDS)


def _snapshot_key(state: AppState, settings: object) -> tuple:
    """What makes two releases the same release (their budget aside)."""
    return (
        state.analysis, settings, state.dataset_fingerprint, pipeline.grouping_spec(state),
        state.budget_kind, tuple(getattr(state, name) for name in PERSON_FIELDS),
    )  # fmt: skip


def _entry_key(entry: PlanEntry) -> tuple:
    return (
        entry.analysis,
        entry.settings,
        entry.dataset_fingerprint,
        entry.spec,
        entry.budget_kind,
        tuple(dict(entry.choices)[name] for name in PERSON_FIELDS),
    )


def _replace_entry(entry_id: int, **changes: object) -> None:
    plan = get_settings(PlanOfReleases)
    entries = tuple(
        dataclasses.replace(e, **changes) if e.id == entry_id else e for e in plan.entries
    )
    update_settings(PlanOfReleases, entries=entries)


def add_current(ui: AnalysisUI, settings: object, target: AccuracyTarget) -> str:
    """Add the session's current release, with ``target``, to the plan; returns what happened,
    in the user's words (a release already in the plan is not added twice)."""
    state, plan = get_state(), get_settings(PlanOfReleases)
    key = _snapshot_key(state, settings)
    for number, entry in enumerate(plan.entries, start=1):
        if _entry_key(entry) == key:
            return (
                f"This release is already in your plan as release {number}, “{entry.label}”: "
                "change its target there, or change the choices first (e.g. the grouping)."
            )
    entry = PlanEntry(
        id=plan.next_id, label=_unique_label(_default_label(ui), plan), analysis=ui.name,
        settings=settings, choices=_choices(state), spec=pipeline.grouping_spec(state),
        dataset_fingerprint=state.dataset_fingerprint, target=target,
    )  # fmt: skip
    update_settings(PlanOfReleases, entries=(*plan.entries, entry), next_id=plan.next_id + 1)
    return f"Added “{entry.label}” to your plan."


def _default_label(ui: AnalysisUI) -> str:
    """The name the release would have on the Release page; the analysis and the groups when
    it cannot run at the Budget page's budget (e.g. a Gaussian mean at an ε budget)."""
    try:
        return ui.current_plan().header.label
    except (ValueError, TypeError):
        return f"{ui.analysis.title} by {' × '.join(get_state().strata_columns)}"


def _unique_label(label: str, plan: PlanOfReleases) -> str:
    taken = {entry.label for entry in plan.entries}
    number = 2
    unique = label
    while unique in taken:
        unique, number = f"{label} ({number})", number + 1
    return unique


def _planned(entry: PlanEntry) -> PlannedRelease:
    analysis = get(entry.analysis)
    model = error_model_for(analysis, entry.settings, entry.spec, entry.budget_kind)
    cost = partial(analysis.cost, entry.settings)
    return PlannedRelease(entry.label, model, entry.target, entry.locked, cost)


def available_budget(state: AppState) -> tuple[Budget | None, str]:
    """What the plan splits and a sentence saying where it comes from: what the ledger has left
    (None when it is used up), or in workshop mode, which charges no ledger, the ledger's total."""
    try:
        ledger = open_ledger()
    except LedgerUnavailableError as exc:
        if not state.workshop_mode:
            return None, f"The ledger cannot be read now, so the plan has no budget: {exc}"
        ledger = None
    if state.workshop_mode:
        total = constants.DEFAULT_LEDGER_TOTAL if ledger is None else ledger.total
        return total, (
            f"Workshop mode charges no ledger: the plan splits the Budget page's total, "
            f"{format_components(total.components())}, as if nothing had been spent."
        )
    left = ledger.remaining()
    unit, value = next(iter(left.items()))
    if value <= 0:
        return None, f"The ledger “{ledger.name}” is used up: start a new one on the Budget page."
    # One step below the ledger's float, which may round its exact remainder up: the last
    # planned release must still fit when the ledger checks it in exact decimal.
    value = math.nextafter(value, 0.0)
    budget = PureDP(value) if unit == "epsilon" else ZCDP(value)
    return budget, (
        f"The plan splits what the ledger “{ledger.name}” has left: "
        f"{format_components(budget.components())}."
    )


def _pending(plan: PlanOfReleases, fingerprint: str) -> list[PlanEntry]:
    return [e for e in plan.entries if not e.done and e.dataset_fingerprint == fingerprint]


def confidential_inputs() -> list[str]:
    """What confidential numbers the split of the releases still to commit reads: those of
    every unlocked release's answer (the common factor passes them on to every budget)."""
    pending = _pending(get_settings(PlanOfReleases), get_state().dataset_fingerprint)
    reasons: list[str] = []
    for entry in pending:
        if entry.locked is None:
            model = _planned(entry).model
            reasons += [r for r in curator_reasons(model, entry.target) if r not in reasons]
    return reasons


def current_split(available: Budget | None) -> tuple[PortfolioSplit | None, str | None]:
    """The pending releases' split of ``available``, or None and the reason it cannot be made."""
    pending = _pending(get_settings(PlanOfReleases), get_state().dataset_fingerprint)
    if not pending:
        return None, None
    if available is None:
        return None, "Nothing is left to split among the releases still to commit."
    try:
        return split_budget([_planned(e) for e in pending], available), None
    except (ValueError, TypeError) as exc:
        return None, str(exc)


def matched_entry(ui: AnalysisUI) -> tuple[int, PlanEntry] | None:
    """The plan's release (numbered from 1) that the session's current choices make, if any."""
    state = get_state()
    settings = get_settings(ui.analysis.settings_type)
    try:
        key = _snapshot_key(state, settings)
    except ValueError:  # no grouping chosen yet: no planned release matches
        return None
    plan = get_settings(PlanOfReleases)
    return next(((n, e) for n, e in enumerate(plan.entries, start=1) if _entry_key(e) == key), None)


def mark_released(entry_id: int, key: str, budget: Budget) -> None:
    """Record that the plan's release ``entry_id`` was committed as ledger record ``key``."""
    _replace_entry(entry_id, released_key=key, released_budget=budget, locked=None)


def restore(entry: PlanEntry) -> None:
    """Make ``entry``'s choices the session's: its analysis, settings, groups and budget kind."""
    state = get_state()
    state.analysis = entry.analysis
    for name, value in entry.choices:
        setattr(state, name, copy.deepcopy(value))
    values = {f.name: getattr(entry.settings, f.name) for f in fields(entry.settings)}
    reset_settings(type(entry.settings), **values)


# The Plan page's section


def render_plan_of_releases(ui: AnalysisUI, settings: object, target: AccuracyTarget) -> None:
    """Add the current release, then every planned release with its budget, accuracy, target,
    lock and remove button, and the total against what is available."""
    st.subheader("A plan of several releases")
    st.markdown(
        "List the releases you intend. The planner gives each the smallest budget that meets "
        "its target, then scales them all by one common factor so that together they use what "
        "is left: a factor of 1 or more means every target is met. Lock a release to keep its "
        "budget while the others are rebalanced."
    )
    if flash := st.session_state.pop(FLASH, None):
        st.info(flash, icon=":material/playlist_add_check:")
    if st.button("Add this release to the plan", key="plan.portfolio.add", icon=":material/add:"):
        st.session_state[FLASH] = add_current(ui, settings, target)
        st.rerun()
    plan = get_settings(PlanOfReleases)
    if not plan.entries:
        st.caption("No releases planned yet: choose one above and add it.")
        return
    state = get_state()
    available, source = available_budget(state)
    st.caption(source)
    split, problem = current_split(available)
    if problem:
        st.error(problem, icon=":material/error:")
    if split is not None and (reasons := confidential_inputs()):
        st.info(
            f"Curator preview, not differentially private: these budgets read {as_written(', '.join(reasons))}. "
            "A release publishes its budget, so committing one at these budgets reveals a "
            "little about them; to avoid it, lock each release: it then takes the Budget "
            "page's budget, which you chose.",
            icon=":material/visibility:",
        )
    shares = {} if split is None else {s.label: s for s in split.shares}
    ledger = None if state.workshop_mode else _ledger_or_none()
    for number, entry in enumerate(plan.entries, start=1):
        _entry_row(number, entry, shares.get(entry.label), ledger)
    if split is not None:
        _render_total(split)


def _ledger_or_none() -> Ledger | None:
    try:
        return open_ledger()
    except LedgerUnavailableError:
        return None


def _symbol(unit: str) -> str:
    return "ε" if unit == "epsilon" else "ρ"


def _entry_row(number: int, entry: PlanEntry, share, ledger: Ledger | None) -> None:
    with st.container(border=True):
        about, amount, lock, remove = st.columns([4.6, 2, 1.3, 1.6], vertical_alignment="center")
        with about:
            st.markdown(f"**{number}. {as_text(entry.label)}**")
            st.caption(_entry_status(entry, share, ledger))
        with amount:
            _target_input(entry)
        with lock:
            _lock_toggle(entry, share)
        with remove:
            if st.button(
                "Remove", key=f"plan.portfolio.remove.{entry.id}", icon=":material/delete:"
            ):
                plan = get_settings(PlanOfReleases)
                update_settings(
                    PlanOfReleases, entries=tuple(e for e in plan.entries if e.id != entry.id)
                )
                st.session_state[FLASH] = f"Removed “{entry.label}” from your plan."
                st.rerun()


def _entry_status(entry: PlanEntry, share, ledger: Ledger | None) -> str:
    if entry.done:
        record = None if ledger is None else ledger.get(entry.released_key)
        if record is None:
            return "Released (its record is in another ledger)."
        return f"Released: ledger record #{record.id}, {record.cost}."
    if entry.dataset_fingerprint != get_state().dataset_fingerprint:
        return "Planned on other data: load that data again to release it, or remove it."
    if share is None:
        return "No budget until the plan above is fixed."
    verdict = "meets its target" if share.meets else "**misses its target**"
    return (
        f"Budget {_three_digits(share.budget)} · expected error "
        f"±{plain_number(share.error, 3)} ({share.worst}) against ±{plain_number(share.target, 3)} · {verdict}"
        + (" · locked" if share.locked else "")
    )


def _three_digits(budget) -> str:
    """``ε = 0.0202``: a planned budget to three significant digits (the plan's exact value is
    what a release runs at; this is for reading)."""
    return ", ".join(
        f"{SYMBOLS[name]} = {plain_number(float(value), 3)}"
        for name, value in budget.components().items()
    )


def _target_input(entry: PlanEntry) -> None:
    """The entry's target half-width (a percentage when relative); a change replans."""
    target = entry.target
    shown = target.amount * 100 if target.relative else target.amount
    key = f"plan.portfolio.target.{entry.id}"
    value = st.number_input(
        "Target ± (%)" if target.relative else "Target ±", min_value=0.0, value=float(shown),
        step=1.0 if target.relative else 0.5, format="%.6g", disabled=entry.done, key=key,
        help=f"At probability {target.level:.0%}. Changing it rebalances the plan.",
        **stored_on_change(key, functools.partial(_store_target, entry)),
    )  # fmt: skip
    if value == shown:  # the callback has stored a usable change already
        return
    if (problem := _store_target(entry, value)) is not None:
        show_error(problem)
        return
    st.rerun()


def _store_target(entry: PlanEntry, value: float) -> ValueError | None:
    """Give ``entry`` the target typed for it (a percentage when relative); returns why the
    value is not a target, leaving the plan as it was."""
    target = entry.target
    try:
        changed = dataclasses.replace(target, amount=value / 100 if target.relative else value)
    except ValueError as exc:
        return exc
    _replace_entry(entry.id, target=changed)
    return None


def _lock_toggle(entry: PlanEntry, share) -> None:
    """Lock at the release's share of the plan; at the Budget page's budget instead while the
    plan has none (a target out of reach) or its budgets read confidential numbers, so that a
    locked budget never carries them."""
    key = f"plan.portfolio.lock.{entry.id}"
    store = functools.partial(_store_lock, entry, share)
    locked = st.toggle(
        "Lock", value=entry.locked is not None, disabled=entry.done, key=key,
        help="Keep this release's budget while the others are rebalanced: its share of the "
        "plan, or the Budget page's budget while the plan has none or reads confidential "
        "numbers.",
        **stored_on_change(key, store),
    )  # fmt: skip
    if locked == (entry.locked is not None):  # the callback has stored a change already
        return
    store(locked)
    st.rerun()


def _store_lock(entry: PlanEntry, share, locked: bool) -> None:
    """Lock ``entry`` at the budget its toggle described (``share``, the plan's split when
    the toggle was drawn), or unlock it."""
    chosen_by_user = share is None or confidential_inputs()
    budget = pipeline.page_budget(get_state()) if chosen_by_user else share.budget
    _replace_entry(entry.id, locked=budget if locked else None)


def _render_total(split: PortfolioSplit) -> None:
    symbol = _symbol(split.unit)
    # "locked" is the toggles' state, shown above; numbers to three significant digits (a
    # charge of ρ = 0.0002 read "0.000" to three decimals).
    table = split.table().drop(columns="locked")
    table = table.rename(columns={"worst estimate": "furthest from its target"})
    numbers = table.select_dtypes("number").columns
    st.dataframe(
        table.style.format(plain_number, subset=list(numbers)), hide_index=True, width="stretch",
        key="plan.portfolio.table",
    )  # fmt: skip
    available = next(iter(split.available.components().values()))
    st.markdown(
        f"Together the releases still to commit take **{symbol} = {plain_number(split.total, 4)}** of the "
        f"{symbol} = {plain_number(available, 4)} available."
        + (
            f" The common factor is {plain_number(split.factor, 3)}."
            if split.factor is not None
            else ""
        )
    )
    if split.short:
        st.warning(
            f"{len(split.short)} of {len(split.shares)} releases miss their target at these "
            "budgets: "
            + "; ".join(map(as_written, split.shortfall_lines()))
            + ". Loosen a target, remove a "
            "release, or lower a locked budget.",
            icon=":material/warning:",
        )
    elif split.left > 1e-9 * available:
        st.caption(
            f"{symbol} = {plain_number(split.left, 4)} stays unspent: every release is locked."
        )


# The Release page


def render_release_picker() -> None:
    """Offer the plan's releases still to commit; choosing one makes its choices the
    session's (analysis, settings, groups, budget kind)."""
    plan = get_settings(PlanOfReleases)
    pending = _pending(plan, get_state().dataset_fingerprint)
    if not pending:
        return
    numbers = {e.id: n for n, e in enumerate(plan.entries, start=1)}
    chosen = st.selectbox(
        "Release from your plan", [e.id for e in pending],
        format_func=lambda i: f"{numbers[i]}. {next(e.label for e in pending if e.id == i)}",
        key="release.portfolio.choice",
        help="Sets the analysis, the groups and the budget kind to those of the planned release.",
    )  # fmt: skip
    if st.button("Prepare this release", key="release.portfolio.prepare"):
        restore(next(e for e in pending if e.id == chosen))
        st.rerun()


def planned_budget(ui: AnalysisUI, ledger: Ledger) -> tuple[PlanEntry, Budget] | None:
    """The plan's release that the current choices make and the budget to release it at: its
    share of what the ledger has left now, or the budget it was released at. Says so on the
    page ("Release 2 of 3 in your plan"); None when the choices match no planned release."""
    match = matched_entry(ui)
    if match is None:
        return None
    number, entry = match
    total = len(get_settings(PlanOfReleases).entries)
    if entry.done:
        st.info(
            f"Release {number} of {total} in your plan, “{as_text(entry.label)}”: already released.",
            icon=":material/playlist_add_check:",
        )
        return entry, entry.released_budget
    split, problem = current_split(available_budget(get_state())[0])
    if split is None:
        st.warning(
            f"Release {number} of {total} in your plan, “{as_text(entry.label)}”, has no budget: "
            f"{as_written(problem)} Fix the plan on the Plan page; until then this release uses the Budget "
            "page's budget.",
            icon=":material/warning:",
        )
        return None
    share = next(s for s in split.shares if s.label == entry.label)
    if reasons := confidential_inputs():
        st.warning(
            f"This planned budget was computed from {as_written(', '.join(reasons))}, which are "
            "confidential: the release publishes its budget, so it reveals a little about "
            "them. To avoid it, lock every release of the plan on the Plan page: each then "
            "takes the Budget page's budget, which you chose.",
            icon=":material/visibility:",
        )
    charge = format_components({split.unit: share.charge})
    st.info(
        f"Release {number} of {total} in your plan, “{as_text(entry.label)}”: planned at "
        f"{_three_digits(share.budget)} (charged {charge}), its share of what "
        f"“{as_text(ledger.name)}” has left. {_expected_error(share.error, share.target)}",
        icon=":material/playlist_play:",
    )
    return entry, share.budget


def _expected_error(error: float, target: float) -> str:
    """The worst estimate's expected error against its target, in a sentence; unbounded where
    the release would withhold an estimate at its share (e.g. a GVDP group with too few
    subsets)."""
    if math.isinf(error):
        return (
            f"At this budget some estimates would be withheld (not published at all), so the "
            f"target of ±{plain_number(target, 3)} is not met."
        )
    return (
        f"Expected error ±{plain_number(error, 3)} against a target of ±{plain_number(target, 3)}."
    )
