"""Release: review the planned release, commit it once, download it, and keep the ledger."""

import streamlit as st

from dpcore.foundations.accounting import BudgetExceededError
from dpcore.foundations.ledger import (
    LedgerUnavailableError,
    OtherDatasetError,
    ReleasedElsewhereError,
)
from dpcore.release import ReleaseRecord, UnidentifiedDataError, plan_key, release
from strata_ui import (
    allowances,
    budget_language,
    constants,
    ledger_ui,
    pipeline,
    portfolio,
    release_ui,
    roles,
)
from strata_ui.analyses import current, stops_for_rows
from strata_ui.page_end import stop_page
from strata_ui.release_preview import render_preview
from strata_ui.state import get_state, open_ledger_or_stop
from strata_ui.text import as_text, as_written
from strata_ui.widgets import attribute_widget, progress_bar, show_error

st.title("Release")
if not roles.allows(roles.Action.PREVIEW):  # a viewer: the released results only
    st.markdown(
        "The releases committed so far: differentially private outputs, with what their "
        "curators declared public. Choose one to download it as a table, a JSON file, a report "
        "or the script that redoes it."
    )
    ledger = open_ledger_or_stop()
    ledger_ui.render_ledger_choice(ledger)
    st.subheader("Released results")
    release_ui.render_history(ledger)
    stop_page()
st.markdown(
    "Review the release planned on the previous pages, then commit it. Committing draws the noise "
    "with OpenDP's vetted samplers, spends the budget for real — once — and records the result "
    "in the ledger. Only differentially private outputs are shown and exported, with what you "
    "declared public (named before the commit)."
)
if stops_for_rows():
    stop_page()
state = get_state()
ledger = open_ledger_or_stop()
gauge_col, plan_col = st.columns([1, 2])
with gauge_col:
    release_ui.render_gauge(ledger)

with plan_col:
    st.subheader("Planned release")
    portfolio.render_release_picker()
    ui = current()
    ui.render_release_options()
    attribute_widget(
        st.text_input,
        "Name of the release",
        state,
        "release_label",
        placeholder="Leave empty for a name made from the statistic and the strata",
        key="release.label",
        help="Shown in the ledger and the downloads. Renaming plans a new release.",
    )
    if ui.has_intervals:
        attribute_widget(
            st.select_slider,
            "Interval level",
            state,
            "release_level",
            options=constants.RELEASE_LEVELS,
            format_func=lambda v: f"{v:.0%}",
            key="release.level",
        )

with plan_col:
    planned = portfolio.planned_budget(ui, ledger)  # None: not a release of the user's plan
try:
    plan = ui.current_plan(None if planned is None else planned[1])
except (ValueError, TypeError) as exc:
    show_error(exc, prefix="The release is not ready: ")
    stop_page()

key = plan_key(plan)
with plan_col:
    st.markdown("\n".join(f"- {line}" for line in plan.review_lines()))
    st.markdown("- **Noise:** OpenDP vetted samplers")
    release_ui.render_declared_public(plan)
    st.caption(
        "This review is the curator's view: row and group counts above come from the data "
        "without noise. Only the committed estimates and the files below are DP outputs."
    )
    try:
        uninformative = render_preview(plan, key)
    except (ValueError, TypeError) as exc:  # a simulated run refused the data: nothing to commit
        show_error(exc, prefix="The release is not ready: ")
        stop_page()
    existing = ledger.get(key)
    if existing is None:
        control = pipeline.release_budget(state, None if planned is None else planned[1])
        if (note := budget_language.charge_note(control, plan.cost)) is not None:
            st.markdown(note)
        for line in release_ui.cost_lines(plan.cost, ledger):
            st.markdown(line)
        if (warning := release_ui.large_budget_warning(plan.cost)) is not None:
            st.warning(warning, icon=":material/warning:")
    else:
        where = "" if existing.ledger == ledger.name else f" of ledger “{as_text(existing.ledger)}”"
        st.markdown(f"Cost: **{plan.cost}**, already paid by record #{existing.id}{where}.")

st.subheader("Commit")
if state.release_flash:  # set just before the rerun that follows a commit or a ledger reset
    st.success(state.release_flash, icon=":material/check_circle:")
    state.release_flash = None
if existing is None:
    release_ui.render_exact_shares_notice(plan)
    other_data = release_ui.other_data_choice(plan, ledger)  # None: the ledger's own data
    confirmed = st.checkbox(
        "I understand that committing spends this budget for good.", key="release.confirm"
    )
    can_afford = release_ui.affordable(plan.cost, ledger)
    if uninformative is not None:
        st.error(
            f"{as_written(uninformative)} Committing would spend {release_ui.charge_text(plan.cost)} for "
            "nothing, so Commit is off. Raise the budget on the Budget page, merge small groups "
            "on the Strata page, or loosen what the release needs on the Estimator page.",
            icon=":material/block:",
        )
    not_yours = release_ui.allowance_problem(plan.cost, ledger)
    if not_yours is not None:
        st.caption(f"Commit is off: {as_written(not_yours)}")
    if not can_afford:
        st.caption(
            f"Commit is off: “{as_text(ledger.name)}” cannot afford this plan. Lower the budget, or "
            "switch to or start another ledger, on the Budget page."
        )
    if other_data is False:
        st.caption(
            f"Commit is off: this plan's data is not the data of “{as_text(ledger.name)}” "
            "(see above)."
        )
    if st.button(
        "Commit release", type="primary",
        disabled=not (confirmed and can_afford) or other_data is False
        or bool(uninformative) or bool(not_yours),
        key="release.commit", icon=":material/lock:",
    ):  # fmt: skip
        progress, clear_progress = progress_bar("Fitting the models")  # slow plans only
        try:
            user = roles.current_user()
            with (
                st.spinner("Drawing the noise and recording the release…"),
                allowances.committing(ledger, user, plan.cost),
            ):
                record = release(
                    plan, ledger, noise="secure", progress=progress, actor=user.actor,
                    allow_other_dataset=bool(other_data) and roles.allows(
                        roles.Action.CONFIRM_OTHER_DATA, user
                    ),
                )  # fmt: skip
        except roles.NotAllowed as exc:  # the role or the allowance; nothing was spent
            st.error(f"{as_written(exc)} Nothing was spent.", icon=":material/block:")
        except BudgetExceededError as exc:
            st.error(
                f"Release refused: this ledger cannot afford it. {as_written(exc)}",
                icon=":material/block:",
            )
        except OtherDatasetError as exc:  # another session released on other data meanwhile
            st.error(
                exc.advice(
                    "say so with the box that now appears above the Commit button",
                    start="start a new ledger for it on the Budget page",
                ),
                icon=":material/block:",
            )
        except ReleasedElsewhereError as exc:  # another session released it elsewhere meanwhile
            st.error(
                exc.advice(
                    f"switch to ledger “{exc.owners[0]}” on the Budget page",
                    "a curator starts or raises a ledger for it on the Budget page",
                ),
                icon=":material/block:",
            )
        except (LedgerUnavailableError, UnidentifiedDataError) as exc:  # nothing was spent
            st.error(str(exc), icon=":material/block:")
        except ValueError as exc:  # e.g. a singular bootstrap resample; raised before the spend
            st.error(
                f"Release failed before anything was spent: {as_written(exc)} Try committing again.",
                icon=":material/error:",
            )
        except Exception as exc:  # OpenDP or storage failures: say what happened, keep the page
            st.error(
                f"The release could not be completed ({type(exc).__name__}: {as_written(exc)}). The ledger "
                "records a spend only together with its result, so check the history below "
                "before trying again.",
                icon=":material/error:",
            )
        else:
            if planned is not None and not planned[0].done:
                portfolio.mark_released(planned[0].id, key, planned[1])
            state.release_flash = (
                "Released and recorded: the budget was spent once. Committing this plan again "
                "shows this same release."
                if record.spent
                else "This plan had already been released; nothing more was spent."
            )
            st.rerun()  # redraw the gauge and the sidebar with the new balance
        finally:
            clear_progress()
    else:
        st.caption(
            "Nothing is spent until you commit. Preview the error of this plan on the Compare "
            "page first; previews never touch the budget."
        )
else:
    st.info(
        f"This plan was released on {existing.created_at[:19].replace('T', ' ')} UTC (record "
        f"#{existing.id} of ledger “{as_text(existing.ledger)}”). The same plan on the same data is one "
        "release, committed here, from the command line or by a script: committing it again "
        "would spend nothing. To release anew, change the plan or its name.",
        icon=":material/verified:",
    )
    release_ui.render_record(ReleaseRecord.from_ledger(existing), "release.current")

st.subheader("Release history")
release_ui.render_history(ledger)
