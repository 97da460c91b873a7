"""Widgets bound to a field of frozen settings: a stable key, the stored value as default, and
the new value stored back.

A widget drawn with :func:`bind` is keyed by :func:`strata_ui.state.widget_key`, so Streamlit
identifies it by that key whatever its default: a change is never undone on the next rerun, and
a widget that leaves the page (another page, a hidden branch) comes back with the stored value.

A change is stored by the widget's callback, which Streamlit calls before the next run starts,
and again after the widget is drawn. The callback keeps a change whose run never reaches the
widget: a bound entered and a sidebar link clicked while that run is still going start the new
page's run before the old page draws the box again, and Streamlit then forgets the value of a
widget the new page does not draw.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitDuplicateElementKey

from dpcore.foundations.errors import NeedsFixedShares, NotChosenYet
from dpcore.release import Progress
from strata_ui import constants
from strata_ui.group_selection import (
    FOUND,
    MAX_DRAWN,
    SMALLEST,
    WORST,
    GroupSelection,
    select_from_table,
)
from strata_ui.state import AppState, get_settings, get_state, update_settings, widget_key
from strata_ui.text import as_written

T = TypeVar("T")

_INDEXED = {"radio", "selectbox", "pills", "segmented_control"}
_CHOICES = {*_INDEXED, "select_slider"}
_RANGED = {"slider", "number_input"}
PROGRESS_AFTER_S = 0.3
"""Work that ends sooner shows no progress bar (work over a second always shows one)."""
PROGRESS_EVERY_S = 0.1
"""The shortest time between two redraws of a progress bar."""


def table_height(rows: int, limit: int = 600) -> int:
    """Pixels that show every row of a table, up to ``limit`` (Streamlit's default shows about
    ten, and hid the Release preview's last row, the population's, behind a scroll)."""
    return min(35 * (rows + 1) + 3, limit)


def _within(label: str, value, low, high):
    """A stored number inside its widget's range (Streamlit raises on one outside it, as a value
    from an old link or session can be), with a warning that says it was moved there."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    moved = max(value, low) if low is not None else value
    moved = min(moved, high) if high is not None else moved
    if moved != value:
        st.warning(
            f"{label}: {value:g} is outside what this setting takes ({low:g} to {high:g}); it "
            f"is set to {moved:g}. Change it if that is not what you meant.",
            icon=":material/warning:",
        )
    return type(value)(moved)


def bind(
    widget: Callable[..., T],
    label: str,
    cls: type,
    field_name: str,
    *,
    options: Sequence[Any] | None = None,
    labels: Mapping[Any, str] | None = None,
    captions: Mapping[Any, str] | None = None,
    caption: str | None = None,
    key_parts: Sequence[object] = (),
    store: Callable[[T], Any] | None = None,
    **kwargs: Any,
) -> T:
    """Draw ``widget`` (``st.radio``, ``st.number_input``, ``column.slider``, …) for
    ``field_name`` of the session's ``cls`` settings and store what it returns.

    ``options`` are passed on for choice widgets; the stored value selects the default (an
    index for radio and select boxes, a list for multiselect). ``labels`` maps each option to
    what the user reads (the options are its keys); ``captions`` maps the chosen option to a
    caption drawn under the widget, and ``caption`` is one drawn whatever the choice. ``store``
    turns the widget's value into the stored one (e.g. a list into a tuple); a select box with no
    choice (``None``) keeps the stored value, so an unusable stored choice stays visible with its
    error. A field with a :class:`~strata_ui.constants.Limit` in
    :data:`~strata_ui.constants.ADDRESS_LIMITS` offers its options or range unless the caller
    gives its own: the widget offers what a link may ask for. Returns the widget's value.
    """
    current = getattr(get_settings(cls), field_name)
    name = getattr(widget, "__name__", "")
    limit = constants.ADDRESS_LIMITS.get(widget_key(cls, field_name))
    if limit is not None and options is None and labels is None:
        if limit.options and name in _CHOICES:
            options = limit.options
        elif name in _RANGED:
            kwargs = limit.widget_range() | kwargs
    if labels is not None:
        options, kwargs["format_func"] = list(labels), labels.__getitem__
    if options is not None:
        options = list(options)
        kwargs["options"] = options
        if name in _INDEXED:
            kwargs["index"] = options.index(current) if current in options else _no_index(name)
        elif name == "multiselect":
            kwargs["default"] = [c for c in (current or ()) if c in options]
        else:  # select_slider
            kwargs["value"] = current if current in options else options[0]
    else:
        kwargs["value"] = _within(label, current, kwargs.get("min_value"), kwargs.get("max_value"))
    key = widget_key(cls, field_name, *key_parts)
    store_value = functools.partial(_store, cls=cls, field_name=field_name, name=name, store=store)
    value = widget(label, key=key, **stored_on_change(key, store_value), **kwargs)
    if captions is not None:
        st.caption(captions[value])
    if caption is not None:
        st.caption(caption)
    store_value(value)
    return value


def stored_on_change(key: str, store: Callable[[Any], object]) -> dict[str, Any]:
    """The keyword arguments that make the widget keyed ``key`` pass a change to ``store`` from
    its callback, before the next run, as well as where the code stores what the widget returns:
    a change whose run never reaches the widget is kept (see the module's docstring)."""
    return {"on_change": _store_from_session, "args": (key, store)}


def stored_in(key: str, owner: object, field_name: str) -> dict[str, Any]:
    """:func:`stored_on_change` for a widget whose value is the attribute ``field_name`` of a
    mutable ``owner`` (the session's AppState or a Learn page's settings)."""
    return stored_on_change(key, functools.partial(setattr, owner, field_name))


def attribute_widget(
    widget: Callable[..., T],
    label: str,
    owner: object,
    field_name: str,
    *,
    key: str,
    value: Any = None,
    **kwargs: Any,
) -> T:
    """``widget`` (a slider, select slider, number or text input) for the attribute
    ``field_name`` of a mutable ``owner`` (the session's AppState or a Learn page's settings):
    it starts at ``value`` (the stored value when None, e.g. the nearest option to it when
    given), stores the choice from its callback and once drawn, and returns it; ``key`` keeps it
    stable across reruns. :func:`bind` is the same for frozen settings."""
    shown = getattr(owner, field_name) if value is None else value
    chosen = widget(label, value=shown, key=key, **stored_in(key, owner, field_name), **kwargs)
    setattr(owner, field_name, chosen)
    return chosen


def _store_from_session(key: str, store: Callable[[Any], object]) -> None:
    store(st.session_state[key])


def _store(
    value: Any, *, cls: type, field_name: str, name: str, store: Callable[[Any], Any] | None
) -> None:
    """Store a bound widget's value in its settings field (a select box with no choice keeps
    the stored value)."""
    if value is None and name == "selectbox":
        return
    stored = value if store is None else store(value)
    if stored != getattr(get_settings(cls), field_name):
        update_settings(cls, **{field_name: stored})


def _no_index(name: str) -> int | None:
    """A select box may show no choice; a radio always shows one (the first)."""
    return None if name == "selectbox" else 0


def show_error(
    exc: Exception, *, icon: str = ":material/error:", prefix: str = "", suffix: str = ""
) -> None:
    """A failure as the user should read it: something not entered yet
    (:class:`~dpcore.foundations.errors.NotChosenYet`, a normal starting state) as a blue hint, anything
    else as a red error. ``prefix`` starts the message (e.g. "The release is not ready: ")."""
    if isinstance(exc, NotChosenYet):
        st.info(f"{prefix}{as_written(exc)}", icon=":material/info:")
    elif isinstance(exc, NeedsFixedShares):
        _offer_exact_counts(f"{prefix}{as_written(exc)}")
    else:
        st.error(f"{prefix}{as_written(exc)}{suffix}", icon=icon)


def _offer_exact_counts(message: str) -> None:
    """An estimator that treats group sizes as public, with the private default shares: say so,
    and offer the one-click choice the user may make, with what it publishes."""
    st.warning(message, icon=":material/lock_open:")
    try:
        clicked = st.button(
            "Declare the data's own group counts public (publishes each group's exact size)",
            key="shares.declare_exact_counts", icon=":material/public:",
        )  # fmt: skip
    except StreamlitDuplicateElementKey:  # the same refusal twice on a page: one button will do
        return
    if clicked:
        get_state().share_source = "data"
        st.rerun()


def show_problems(problems: Sequence[Any]) -> None:
    """Draw :class:`~dpcore.foundations.errors.Problem` s: errors in red, what is still to choose in blue."""
    for problem in problems:
        if problem.severity == "error":
            st.error(problem.message, icon=":material/error:")
        else:
            st.info(problem.message, icon=":material/info:")


def nearest(options: Sequence[float], value: float) -> float:
    """The option closest to ``value`` on a log scale (for log sliders)."""
    return min(options, key=lambda o: abs(o - value) / o)


def log_label(value: float) -> str:
    """How a log slider shows an option: a count with thousands separators (5,000), any other
    number short (0.05, 1e-06)."""
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def log_slider(
    label: str,
    owner: object,
    field_name: str,
    *,
    options: Sequence[float],
    key: str,
    format_func: Callable[[float], str] = log_label,
    caption: str | None = None,
    **kwargs: Any,
) -> float:
    """A select slider over log-spaced ``options`` for the attribute ``field_name`` of a mutable
    ``owner`` (the session's AppState or a Learn page's settings): it starts at the option
    nearest the stored value and stores the choice; ``key`` keeps it stable across reruns.
    ``caption``, like :func:`bind`'s, is drawn under the slider."""
    value = attribute_widget(
        st.select_slider, label, owner, field_name, key=key, options=options,
        value=nearest(options, getattr(owner, field_name)), format_func=format_func, **kwargs,
    )  # fmt: skip
    if caption is not None:
        st.caption(caption)
    return value


SEED_HELP = "The same seed gives the same simulated noise, so results can be reproduced."


def seed_input(key: str, *, help: str = SEED_HELP) -> int:
    """The session's simulation seed (``AppState.seed``: the Compare pages and the previews
    share it), as a number input with a stable ``key``; returns it."""
    state = get_state()
    state.seed = int(
        st.number_input("Random seed", min_value=0, max_value=constants.SEED_MAX,
                        value=int(state.seed), step=1, key=key,
                        help=help, **stored_on_change(key, functools.partial(_set_seed, state)))
    )  # fmt: skip
    return state.seed


def _set_seed(state: AppState, seed: float) -> None:
    state.seed = int(seed)


def view_seed_input(cls: type) -> int:
    """The ``seed`` of an analysis' own view settings ``cls`` (the synthesizer's and the
    sample's): it seeds their previews' and Compare page's simulation noise, never a release's."""
    return bind(
        st.number_input, "Random seed", cls, "seed", step=1, store=int,
        help="Seeds the simulation noise of the previews and the Compare page.",
        caption="Previews only: a release draws fresh OpenDP noise.",
    )  # fmt: skip


def labelled_radio(
    label: str,
    owner: object,
    field_name: str,
    labels: Mapping[Any, str],
    *,
    key: str,
    default: Any = None,
    widget: Callable[..., Any] = st.radio,
    **kwargs: Any,
) -> Any:
    """A radio over ``labels``' keys (shown as its values) for the attribute ``field_name`` of a
    mutable ``owner`` (the session's AppState or a Learn page's settings); a stored choice that
    is no longer offered falls back to ``default`` (else the first option). Stores the choice.
    ``widget`` is ``st.radio`` or a column's ``radio``; pass a stable ``key``."""
    options = list(labels)
    current = getattr(owner, field_name)
    if current not in options:
        current = default if default in options else options[0]
    value = widget(
        label, options, index=options.index(current), format_func=labels.__getitem__, key=key,
        **stored_in(key, owner, field_name), **kwargs,
    )  # fmt: skip
    setattr(owner, field_name, value)
    return value


def progress_bar(label: str) -> tuple[Progress, Callable[[], None]]:
    """A progress callback for models being fitted, and a function that removes its bar.

    The bar shows at this place on the first call (``done`` of ``total`` models fitted), so a
    task that never reports progress shows none."""
    slot = st.empty()

    def update(done: int, total: int) -> None:
        slot.progress(done / max(total, 1), text=f"{label}: {done} of {total} models fitted")

    return update, slot.empty


@contextmanager
def quiet_progress(label: str) -> Iterator[Callable[[int, int, str], None]]:
    """A progress bar that shows only when the work takes a while.

    Yields ``update(done, total, text)``. The bar appears once :data:`PROGRESS_AFTER_S` have
    passed and then redraws at most every :data:`PROGRESS_EVERY_S`: each redraw is a message to
    the browser, and a loop of cached steps that drew its bar 32 times cost the Compare page's
    ε slider more than the steps themselves. The bar is removed when the block ends."""
    slot, started = st.empty(), time.perf_counter()
    drawn_at: list[float] = []

    def update(done: int, total: int, text: str) -> None:
        now = time.perf_counter()
        if now - started < PROGRESS_AFTER_S or (drawn_at and now - drawn_at[-1] < PROGRESS_EVERY_S):
            return
        slot.progress(done / max(total, 1), text=f"{label}: {text}")
        drawn_at.append(now)

    try:
        yield update
    finally:
        slot.empty()


def group_search(cls: type, field_name: str, table: pd.DataFrame) -> GroupSelection:
    """The groups a per-group chart draws (:func:`select_from_table` on ``table``): all of them
    up to :data:`MAX_DRAWN`; past it, says why the chart draws only some, offers a search box
    bound to ``field_name`` of the session's ``cls`` settings, and says when a search finds
    nothing or more than the chart draws."""
    if table["group"].nunique() <= MAX_DRAWN:
        return select_from_table(table)
    st.caption(
        f"{table['group'].nunique():,} groups are too many to draw one by one: the chart shows "
        f"the {SMALLEST} smallest and the {WORST} with the largest errors (under either "
        "approach). Find any other group by name to add it."
    )
    search = bind(
        st.text_input, "Find groups to add to the chart", cls, field_name,
        placeholder="e.g. Female Doctorate",
        help="Type words from group names (any order, upper or lower case): the smallest "
        f"{FOUND} groups whose names contain them all join the chart.",
    )  # fmt: skip
    selection = select_from_table(table, search)
    if search.strip() and not selection.matches:
        st.caption(
            f"No group's name contains every word of “{as_written(search.strip())}”. Check the "
            "spelling, or search for fewer words."
        )
    elif selection.matches > FOUND:
        st.caption(
            f"{selection.matches:,} groups match; the chart shows the {FOUND} smallest. Add a "
            "word to narrow the search."
        )
    return selection
