"""The session's choices in the address bar, so that a refresh or a shared link restores them.

Written at the end of every run: the fields of :class:`~strata_ui.state.AppState` in
:data:`SHARED_FIELDS` and the current analysis' settings, each only when it differs from its
default (``?epsilon=2&strata_columns=["race"]&mean.clip_high=80``). Read once, when a browser
session starts. The address holds the user's own choices, which the pages show them, and which
dataset kind is in use with an uploaded file's name, the ledger's name when it is not the default,
and workshop mode (``?workshop=true``); never
a value, count, hash or fingerprint of the data (a shared link must not leak any).

An address is typed by anyone, so what it asks for is held to what the pages allow: every number
to its widget's bounds (:data:`~strata_ui.constants.ADDRESS_LIMITS`, the same constants the
widgets use) and to being finite, the ledger to one the user's role may use
(:mod:`strata_ui.allowances`), data in files or Spark to roles that open data, files to the data
root and Spark to its allowed masters (:mod:`strata_ui.files`, :mod:`strata_ui.spark`). What is
refused is named on the page with the reason, and left at its default.

An uploaded file is not kept by the server after a refresh (a new browser session). The app then
does not fall back to the demo data silently: every page says which file to upload again, and the
choices from the address wait for it (:func:`resume_after_upload`). Data read where it lies stays
there: the address holds what the user typed to open it (files on the machine that runs the app,
``?data=files&path=...``; a table in Spark, ``?data=spark&master=local[*]&table=...``) and a
refresh opens it again before applying the other choices.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
import types
import typing
from typing import Any

import streamlit as st

from dpcore.analyses import ANALYSES
from dpcore.foundations.ledger import LedgerUnavailableError, list_ledgers
from strata_ui import allowances, constants, pipeline, roles
from strata_ui.analyses import every
from strata_ui.engine_sources import EngineSource
from strata_ui.files import FilesSource
from strata_ui.spark import SparkSource
from strata_ui.state import (
    GROUPING_FIELDS,
    PERSON_FIELDS,
    AppState,
    get_settings,
    get_state,
    reset_settings,
    set_settings,
    widget_key,
)
from strata_ui.text import as_text, as_written
from strata_ui.uploads import open_source

__all__ = [
    "DATA_PARAM",
    "FILE_PARAM",
    "IDENTITY_PARAM",
    "LEDGER_PARAM",
    "MASTER_PARAM",
    "PATH_PARAM",
    "TABLE_PARAM",
    "SHARED_FIELDS",
    "render_notices",
    "restore_once",
    "resume_after_upload",
    "use_demo_instead",
    "write",
]

SHARED_FIELDS = (
    "analysis", *GROUPING_FIELDS, *PERSON_FIELDS, "budget_kind", "epsilon", "rho",
    "compare_epsilon", "compare_rho", "replicates", "seed", "release_level", "release_label",
)  # fmt: skip
"""What the address carries of :class:`AppState`: what the user chose on the pages (the
Compare page's own ε and ρ too, apart from the Budget page's). Not the data, its fingerprint
or notes. The ledger (:data:`LEDGER_PARAM`) and workshop mode
(:data:`~strata_ui.constants.WORKSHOP_QUERY_KEY`) have parameters of their own."""
LEDGER_PARAM = "ledger"
"""The ledger in use, by its name, when it is not the default: a refresh goes on charging the
ledger the user chose rather than switch to the default one. Taken only when a ledger of that
name exists (an address never starts one) and the user's role may use it
(:func:`strata_ui.allowances.may_use_ledger`), and said on the page when taken."""
DATA_PARAM = "data"
"""Which data the choices are for: absent for the demo, ``upload``, ``preset``, ``files`` or
``spark``."""
FILE_PARAM = "file"
"""An uploaded file's name, so the page can say which file to upload again."""
PATH_PARAM = "path"
"""The path of files on the machine that runs the app (:mod:`strata_ui.files`), as typed."""
MASTER_PARAM = "master"
TABLE_PARAM = "table"
IDENTITY_PARAM = "identity"
"""Spark's master URL, the table (or path) in it (:mod:`strata_ui.spark`) and the identity the
curator declared for it, as typed (words the curator chose, never computed from the data)."""
_RESTORED = "_strata_lab_url.restored"
_PENDING = "_strata_lab_url.pending"  # choices waiting for their file: {"file", "params"}
_IGNORED = "_strata_lab_url.ignored"  # parameters that could not be used, shown once
_UNOPENED = "_strata_lab_url.unopened"  # data of the address that could not be opened again
_LEDGER_TAKEN = "_strata_lab_url.ledger"  # the ledger the address named, once it is in use


class _Unusable(ValueError):
    """A parameter's text is not a value of its field's type."""


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def write() -> None:
    """Put the session's choices in the address (only the parameters that changed are sent).
    Nothing is written while choices from the address wait for their file: a second refresh
    must not lose them."""
    if _PENDING in st.session_state:
        return
    wanted = _params_of_session()
    current = st.query_params.to_dict()
    for name, text in wanted.items():
        if current.get(name) != text:
            st.query_params[name] = text
    for name in current:
        if name not in wanted and _is_ours(name):
            del st.query_params[name]


def _params_of_session() -> dict[str, str]:
    state = get_state()
    params = _changed_fields(state, AppState(), SHARED_FIELDS, AppState)
    if state.workshop_mode:
        params[constants.WORKSHOP_QUERY_KEY] = "true"
    if state.ledger_name != constants.DEFAULT_LEDGER_NAME:
        params[LEDGER_PARAM] = state.ledger_name
    if state.source is not None:
        params |= state.source.address()
    elif state.uploaded is not None:
        if state.dataset_fingerprint.startswith(constants.PRESET_FINGERPRINT_PREFIX):
            params[DATA_PARAM] = "preset"
        else:
            params[DATA_PARAM], params[FILE_PARAM] = "upload", state.dataset_name
    settings_type = _settings_type(state.analysis)
    if settings_type is not None:
        settings = get_settings(settings_type)
        names = [f.name for f in dataclasses.fields(settings_type)]
        params |= _changed_fields(settings, settings_type(), names, settings_type)
    for view_type, names in _views():
        params |= _changed_fields(get_settings(view_type), view_type(), names, view_type)
    return params


def _views() -> list[tuple[type, tuple[str, ...]]]:
    """Each analysis' view settings and the fields of them the address keeps."""
    return [ui.address_view for ui in every() if ui.address_view is not None]


def _changed_fields(chosen: object, default: object, names, cls: type) -> dict[str, str]:
    return {
        _param_name(cls, name): _encode(getattr(chosen, name))
        for name in names
        if getattr(chosen, name) != getattr(default, name)
    }


def _param_name(cls: type, field_name: str) -> str:
    """``epsilon`` for the shared state, ``mean.clip_low`` for an analysis' settings."""
    return field_name if cls is AppState else widget_key(cls, field_name)


def _is_ours(name: str) -> bool:
    """Whether this module writes the parameter ``name`` (one it does not know, such as a
    hand-edited link's, is left alone)."""
    owners = {
        widget_key(cls, fields[0].name).split(".", 1)[0]
        for cls in (*(a.settings_type for a in ANALYSES), *(view for view, _ in _views()))
        if (fields := dataclasses.fields(cls))
    }
    ours = (
        *SHARED_FIELDS, DATA_PARAM, FILE_PARAM, PATH_PARAM, MASTER_PARAM, TABLE_PARAM,
        IDENTITY_PARAM, LEDGER_PARAM, constants.WORKSHOP_QUERY_KEY,
    )  # fmt: skip
    return name in ours or name.split(".", 1)[0] in owners


def _encode(value: object) -> str:
    """Text as is (unless it would read as JSON: ``"null"`` stays a word); anything else JSON."""
    if isinstance(value, str) and not _reads_as_json(value):
        return value
    return json.dumps(value, ensure_ascii=False)


def _reads_as_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def restore_once() -> None:
    """On a browser session's first run, take the choices in the address (a refresh or a
    link). Parameters that are not values of their field are left at the default and named
    once on the page."""
    if _RESTORED in st.session_state:
        return
    st.session_state[_RESTORED] = True
    params = st.query_params.to_dict()
    get_state().workshop_mode = params.get(constants.WORKSHOP_QUERY_KEY, "").lower() == "true"
    _restore_ledger(params.get(LEDGER_PARAM))  # at once, even while the data waits for its file
    if params.get(DATA_PARAM) in ("upload", "preset"):
        # The file is gone with the old session: its choices wait for it (see the notice).
        st.session_state[_PENDING] = {"file": params.get(FILE_PARAM), "params": params}
        return
    source = _source_of(params)
    if source is not None and not roles.allows(roles.Action.OPEN_DATA):
        _name_unusable([f"`{DATA_PARAM}` (your role does not open data)"])
        source = None
    if source is not None:
        _reopen(source, params)
        return
    _apply(params)


def _restore_ledger(name: str | None) -> None:
    """Use the ledger the address names if one of that name exists; otherwise say the parameter
    could not be used (the default ledger stays)."""
    if name is None:
        return
    try:
        exists = name in {summary.name for summary in list_ledgers()}
    except (LedgerUnavailableError, sqlite3.Error):  # unreadable: each page then says why
        exists = False
    if not exists:
        _name_unusable([LEDGER_PARAM])
    elif not allowances.may_use_ledger(name, roles.current_user()):
        _name_unusable([f"`{LEDGER_PARAM}` (a ledger your role may not use)"])
    else:
        get_state().ledger_name = name
        st.session_state[_LEDGER_TAKEN] = name


def _name_unusable(params: list[str]) -> None:
    """Keep ``params`` (names, or already written as "`name` (why)") to be named once on the
    page as not used."""
    named = [param if param.startswith("`") else f"`{param}`" for param in params]
    st.session_state[_IGNORED] = [*st.session_state.get(_IGNORED, []), *named]


def _source_of(params: dict[str, str]) -> EngineSource | None:
    """The data read where it lies that the address names, if any."""
    if params.get(DATA_PARAM) == FilesSource.kind:
        return FilesSource(params.get(PATH_PARAM, "").strip())
    if params.get(DATA_PARAM) == SparkSource.kind:
        return SparkSource(
            params.get(MASTER_PARAM, "").strip(), params.get(TABLE_PARAM, "").strip(),
            params.get(IDENTITY_PARAM, "").strip(),
        )  # fmt: skip
    return None


def _reopen(source: EngineSource, params: dict[str, str]) -> None:
    """Open the data of the address again, then apply its choices to its columns; data that
    cannot be opened (moved, changed, unreadable, Spark not answering) leaves the demo data in
    use, and says so once."""
    error = open_source(get_state(), source)
    if error is not None:
        st.session_state[_UNOPENED] = (source.name, error)
        return
    _apply(params, columns=pipeline.column_kinds(get_state()))


def _apply(params: dict[str, str], columns: typing.Collection[str] | None = None) -> None:
    """Take the choices of ``params``; with ``columns``, onto data just loaded (an upload or
    files) whose choices were reset: the address holds the current analysis' settings as
    changes from their defaults (:func:`write`), so they are rebuilt from those defaults, not
    from the reset (bounds of 0 are in no address, and must not stay empty)."""
    ignored = []
    state_changes = _decoded(params, AppState, SHARED_FIELDS, ignored)
    if columns is not None and "strata_columns" in state_changes:
        kept = [c for c in state_changes["strata_columns"] if c in columns]
        if kept != state_changes["strata_columns"]:
            ignored.append("strata_columns")
        state_changes["strata_columns"] = kept
    if columns is not None and state_changes.get("person_column") not in (None, *columns):
        ignored.append("person_column")
        del state_changes["person_column"]
    state = get_state()
    for name, value in state_changes.items():
        setattr(state, name, value)
    for analysis in ANALYSES:
        cls = analysis.settings_type
        names = [f.name for f in dataclasses.fields(cls)]
        changes = _decoded(params, cls, names, ignored)
        if columns is not None and analysis.name == state.analysis:
            # Through reset_settings: the upload's reset left its widgets holding the reset
            # values (a value column of None), which they would show and write back.
            try:
                fresh = cls(**changes)
            except (ValueError, TypeError) as exc:  # choices the settings refuse together
                ignored.append(f"{', '.join(f'`{_param_name(cls, n)}`' for n in changes)} ({exc})")
                fresh = cls()
            reset_settings(cls, **{name: getattr(fresh, name) for name in names})
        elif changes:
            _set_checked(cls, changes, ignored)
    for view_type, names in _views():
        if changes := _decoded(params, view_type, names, ignored):
            _set_checked(view_type, changes, ignored)
    if ignored:
        _name_unusable(ignored)


def _set_checked(cls: type, changes: dict[str, Any], ignored: list[str]) -> None:
    """Apply ``changes`` to the session's ``cls`` settings if the settings accept them together
    (their own checks, e.g. a lower bound above the upper one); otherwise name them unused."""
    try:
        set_settings(dataclasses.replace(get_settings(cls), **changes))
    except (ValueError, TypeError) as exc:
        names = ", ".join(f"`{_param_name(cls, name)}`" for name in changes)
        ignored.append(f"{names} ({exc})")


def _decoded(params: dict[str, str], cls: type, names, ignored: list[str]) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    changes = {}
    for name in names:
        param = _param_name(cls, name)
        if param not in params:
            continue
        try:
            value = _decode(params[param], hints[name])
        except _Unusable:
            ignored.append(param)
            continue
        if (problem := _outside_limits(param, value)) is not None:
            ignored.append(f"`{param}` ({problem})")
            continue
        changes[name] = value
    if cls is AppState and "analysis" in changes and _settings_type(changes["analysis"]) is None:
        ignored.append("analysis")
        del changes["analysis"]
    return changes


def _outside_limits(param: str, value: object) -> str | None:
    """Why a number in ``value`` is not one its widget offers (None when every one is)."""
    limit = constants.ADDRESS_LIMITS.get(param)
    for number in numbers_in(value):
        if not math.isfinite(number):
            return f"{number} is not a finite number"
        if limit is not None and not limit.admits(number):
            shown = constants.plain_number(number)
            return f"{shown} is not offered by its control, which takes {limit}"
    return None


def numbers_in(value: object) -> typing.Iterator[float]:
    """Every number in ``value`` (a number, or one inside lists and mappings)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from numbers_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from numbers_in(item)


def _decode(text: str, hint: object) -> Any:
    """The value ``text`` stands for under the type ``hint``; plain text when the field takes
    text and the JSON reading does not fit (a column named ``1``)."""
    try:
        return _coerce(json.loads(text), hint)
    except (ValueError, _Unusable):
        if _accepts_text(hint):
            return _coerce(text, hint)
        raise _Unusable(text) from None


def _accepts_text(hint: object) -> bool:
    if hint is str:
        return True
    if typing.get_origin(hint) is typing.Literal:
        return any(isinstance(arg, str) for arg in typing.get_args(hint))
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(_accepts_text(arg) for arg in typing.get_args(hint))
    return False


def _coerce(value: object, hint: object) -> Any:
    """``value`` (as JSON reads it) as a value of ``hint``: lists become tuples where the field
    holds tuples, whole numbers become floats where it holds floats. Raises :class:`_Unusable`."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        if value in args and not isinstance(value, bool):
            return value
    elif origin in (typing.Union, types.UnionType):
        for arg in args:
            try:
                return _coerce(value, arg)
            except _Unusable:
                continue
    elif hint is type(None):
        if value is None:
            return None
    elif hint is bool or hint is str:
        if isinstance(value, hint):
            return value
    elif hint is int or hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            if hint is float or float(value).is_integer():
                return hint(value)
    elif origin in (list, tuple) and isinstance(value, list):
        return _coerce_sequence(value, origin, args)
    elif origin is dict and isinstance(value, dict):
        return {_coerce(k, args[0]): _coerce(v, args[1]) for k, v in value.items()}
    raise _Unusable(value)


def _coerce_sequence(value: list, origin: type, args: tuple) -> list | tuple:
    if origin is list or (len(args) == 2 and args[1] is Ellipsis):
        return origin(_coerce(item, args[0]) for item in value)
    if len(args) != len(value):
        raise _Unusable(value)
    return tuple(_coerce(item, arg) for item, arg in zip(value, args, strict=True))


def _settings_type(analysis_name: str) -> type | None:
    return next((a.settings_type for a in ANALYSES if a.name == analysis_name), None)


# --------------------------------------------------------------------------------------------
# A file to upload again
# --------------------------------------------------------------------------------------------


def resume_after_upload(filename: str, columns: typing.Collection[str]) -> str | None:
    """After an upload, apply the choices that waited for a file of that name; say what
    happened (None when nothing waited)."""
    pending = st.session_state.pop(_PENDING, None)
    if pending is None:
        return None
    if pending["file"] != filename:
        return (
            f"The choices from the address were made for “{pending['file']}”, so they were not "
            f"applied to “{filename}”: this file starts from the usual defaults."
        )
    _apply(pending["params"], columns)
    return f"Your choices for “{filename}” are back, as they were before the refresh."


def use_demo_instead() -> None:
    """Forget the choices that waited for a file; the address then follows the demo data."""
    st.session_state.pop(_PENDING, None)


def render_notices() -> None:
    """At the top of every page: the file to upload again, and parameters of the address that
    could not be used (once)."""
    pending = st.session_state.get(_PENDING)
    if pending is not None and get_state().uploaded is not None:
        del st.session_state[_PENDING]  # a Learn preset's data came in: nothing waits any more
    elif pending is not None:
        _render_waiting(pending["file"])
    unopened = st.session_state.pop(_UNOPENED, None)
    if unopened is not None:
        name, error = unopened
        st.error(
            as_written(
                f"This page was refreshed, or opened from a link, with the data {name}, "
                f"which could not be opened again: {error} The pages show the demo data; open "
                "the data again on the Data page."
            ),
            icon=":material/folder_off:",
        )
    ledger = st.session_state.pop(_LEDGER_TAKEN, None)
    if ledger is not None:
        st.info(
            f"The ledger “{as_text(ledger)}” from the address is in use, as before the refresh. Switch "
            "ledgers on the Budget page.",
            icon=":material/account_balance:",
        )
    ignored = st.session_state.pop(_IGNORED, None)
    if ignored:
        st.warning(
            "Some choices in the address could not be used and were left at their defaults: "
            f"{', '.join(map(as_written, ignored))}. The address now shows what is in use.",
            icon=":material/link_off:",
        )


def _render_waiting(filename: str | None) -> None:
    if filename is None:
        what = (
            "a Learn preset's built-in data. Open the preset again on the Learn page to go on; "
            "until then the pages show the demo data."
        )
    else:
        what = (
            f"your file “{as_text(filename)}”, which the server does not keep after a refresh. Upload it "
            "again on the Data page: your grouping, analysis and budget from the address are "
            "then restored. Until then the pages show the demo data."
        )
    with st.container(border=True):
        st.warning(f"This page was refreshed, or opened from a link, while using {what}",
                   icon=":material/upload_file:")  # fmt: skip
        if st.button("Continue with the demo data instead", key="url_state.use_demo"):
            use_demo_instead()
            st.rerun()
